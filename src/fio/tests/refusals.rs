//! Refusals: every option or value iogauge cannot honour is refused at its line, with its own
//! reason, and every blocker of a file at once.

use super::*;

#[test]
fn every_refusal_names_its_line_and_why() {
    refused_at(&[
        ("[a]\nbssplit=4k/50:64k/40\n", 2, "add up to 90, not 100"),
        ("[a]\nbssplit=4k/60:64k/60:8k\n", 2, "not 100"),
        ("[a]\nbsrange=4k\n", 2, "not a range"),
        ("[a]\nbs=4k,8k,16k,32k\n", 2, "at most read,write,trim"),
        ("[a]\n\nnrfiles=0\n", 3, "at least 1"),
        (
            "[a]\nfilename=/dev/nvme0n1\nnrfiles=4\n",
            3,
            "give directory=",
        ),
        (
            "[a]\nnrfiles=4\nfile_service_type=zipf:1.2\n",
            3,
            "skewed distribution",
        ),
        (
            "[a]\nfile_service_type=bogus\n",
            2,
            "roundrobin, sequential or random",
        ),
        ("[a]\nfile_service_type=random:0\n", 2, "IOs per file"),
        ("[a]\nnrfiles=4\n\nopenfiles=2\n", 4, "below nrfiles=4"),
        ("[a]\nverify=md5\nnrfiles=2\n", 2, "verify with nrfiles=2"),
        ("[a]\nnumjobs=2\noffset_increment=1g\n", 3, "needs size="),
        (
            "[a]\nsize=1g\noffset_increment=10%\n",
            3,
            "share of the file",
        ),
        ("[global]\nfrobnicate=1\n[a]\n", 2, "does not support"),
        ("[a]\nrw=randread:0\n", 2, "IOs per random offset"),
        ("[a]\nrw=read:-8x\n", 2, "rw=read:-8x"),
        (
            "[a]\nrw=randread:8\nrw_sequencer=identical\n",
            3,
            "one offset",
        ),
        ("[a]\nrw=trim\n", 2, "trims"),
        ("[a]\nsize=250%\n", 2, "1% to 100%"),
        ("[a]\nioengine=spdk\n", 2, "io_uring"),
        ("[a]\nrw=read\nfsync=1\n", 3, "follows writes"),
        (
            "[a]\nrw=read\nrandom_distribution=zipf:1.1\n",
            3,
            "sequential",
        ),
        (
            "[a]\nrw=randread\nrandom_distribution=zoned_abs:60/10g:40/90g\n",
            3,
            "absolute sizes",
        ),
        (
            "[a]\nrw=randread\nrandom_distribution=zoned:60/10:30/10\n",
            3,
            "add up to 90%",
        ),
        (
            "[a]\nrw=randread\nrandom_distribution=sequence:1,x\n",
            3,
            "give block indices",
        ),
        (
            "[a]\nrw=randread\nrandom_sequence_stride=1\n",
            3,
            "goes with random_distribution=sequence",
        ),
        (
            "[a]\nrw=randread\nbssplit=4k/50:8k/50\nrandom_distribution=sequence:1\n",
            4,
            "sequence with a block-size mix is not mapped",
        ),
        (
            "[a]\nrw=randread\nrandom_distribution=wobble:1\n",
            3,
            "not one of fio's distributions",
        ),
        (
            "[a]\nss=lat:5%\nrate_iops=10\n",
            2,
            "a paced job's rate is fixed",
        ),
        ("[a]\nss=clat:5%\n", 2, "lat and lat_slope"),
        ("[a]\nrandom_generator=mt\n", 2, "tausworthe, lfsr"),
        ("[a]\nbs=4k\nblockalign=8k\n", 3, "one block size"),
        (
            "[a]\nbssplit=4k/50:8k/50\nblockalign=1000\n",
            3,
            "multiple of 512",
        ),
        (
            "[a]\nbssplit=4k/50:8k/50\nnumber_ios=10\n",
            3,
            "give io_size=",
        ),
        ("[a]\nloops=0\n", 2, "at least 1"),
        ("[a]\nflow=1001\n", 2, "0 (no flow) to 1000"),
        ("[a]\nflow_sleep=10\n", 2, "goes with flow="),
        ("[a]\nflow_watermark=10\n", 2, "no longer reads it"),
        (
            "[a]\nexitall_on_error\n",
            2,
            "exitall_on_error) is not mapped",
        ),
        ("[a]\nexit_what=some\n", 2, "group, stonewall or all"),
        (
            "[a]\nthinktime_spin=20\n",
            2,
            "goes with thinktime, which is not set",
        ),
        ("[a]\nio_submit_mode=pool\n", 2, "inline or offload"),
        ("[a]\nrate_process=exponential\n", 2, "linear or poisson"),
        ("[a]\ncmdprio_percentage=10\n", 2, "io_uring or libaio only"),
        (
            "[a]\ncmdprio_bssplit=4k/10/1\n",
            2,
            "size/percentage/class/level",
        ),
        ("[a]\nzonemode=zbd\n", 2, "needs zonesize="),
        (
            "[a]\nverify_backlog=8\n",
            2,
            "its own header on every sector",
        ),
        (
            "[a]\ncontinue_on_error=everything\n",
            2,
            "give none, read, write",
        ),
        ("[a]\noffset=524z\n", 2, "zones (z)"),
        ("[a]\nsize=8z\n", 2, "size in zones (z)"),
        (
            "[a]\nfilename_format=f.$jobnum.$filenum\n",
            2,
            "names the files it creates itself",
        ),
        ("[a]\noffset=10%\n", 2, "share of the file"),
        ("[a]\nfilename=/a:/b\n", 2, "directory= and nrfiles="),
        ("[a]\nnumjobs=0\n", 2, "at least 1"),
        ("[a]\ndirect=1\nbuffered=1\n", 3, "contradicts"),
        ("[a]\nwait_for=b\n", 2, "no job before this one is named b"),
        ("[b]\nwait_for=a\n[a]\n", 2, "put the job waited for first"),
        ("[global]\nbs=4k\n", 0, "no job"),
    ]);
}

/// Each text refused at its line (0: the file), with its reason, on one line.
pub(super) fn refused_at(cases: &[(&str, usize, &str)]) {
    for &(text, line, why) in cases {
        let e = refusal(text);
        let want = match line {
            0 => "t.fio: ".to_string(),
            n => format!("t.fio:{n}: "),
        };
        assert!(e.starts_with(&want), "{text:?} gave {e}");
        assert!(e.contains(why), "{text:?} gave {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

/// Every blocker of a file in one run, in the order of its lines (issue 40: `1mbs_clients.fio`
/// took 34 runs to learn what blocks it, refused alphabetically).
#[test]
fn every_blocker_is_named_at_once_in_file_order() {
    let e = refusal("[a]\nfsync_on_close=1\nrw=trimwrite\nbs=4k\nflow_watermark=1\n");
    assert!(e.starts_with("t.fio:2: "), "{e}");
    assert!(e.contains("; 2 more: t.fio:3:"), "{e}");
    let (two, three, five) = (
        e.find("t.fio:2:").unwrap(),
        e.find("t.fio:3:").unwrap(),
        e.find("t.fio:5:").unwrap(),
    );
    assert!(two < three && three < five, "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}

/// Across jobs too: every job's blockers in one line, in the file's order, a [global] option
/// that each job refuses said once (numa.fio and flow.fio named theirs job by job, the global
/// one again for each).
#[test]
fn the_blockers_of_every_job_are_one_list_in_file_order() {
    let e = refusal(
        "[global]\nflow_watermark=100\n[a]\nrw=read\nfilename_format=x\n[b]\nrw=write\nfsync_on_close=1\nsize=1m\n",
    );
    let at = |l: &str| {
        e.find(&format!("t.fio:{l}:"))
            .unwrap_or_else(|| panic!("no line {l}: {e}"))
    };
    assert!(e.starts_with("t.fio:2: flow_watermark"), "{e}");
    assert!(at("2") < at("5") && at("5") < at("8"), "{e}");
    assert_eq!(
        e.matches("flow_watermark").count(),
        1,
        "the global option once: {e}"
    );
    assert!(e.contains("; 2 more: "), "{e}");
}

/// Options fio's own examples use that iogauge cannot honour are refused for a reason of their
/// own (each said only "does not support this fio option"); the file-creation switches run.
#[test]
fn the_examples_options_are_refused_for_their_own_reason_or_run() {
    for (opt, why) in [
        ("atomic=1", "only writes are atomic"),
        ("error_dump=1", "names the first error"),
        ("random_sequence_stride=1", "random_distribution=sequence"),
        ("max_open_zones=4", "goes with zonemode=zbd"),
        ("read_beyond_wp=1", "goes with zonemode=zbd"),
        ("sprandom=1", "random writes (rw=randwrite)"),
        ("spr_op=0.15", "goes with sprandom=1"),
    ] {
        let e = refusal(&format!("[a]\n{opt}\n"));
        assert!(e.starts_with("t.fio:2: ") && e.contains(why), "{opt}: {e}");
        assert!(!e.contains("does not support"), "{opt}: {e}");
    }
    let j = jobs("[a]\nrw=write\nsize=1m\nfallocate=none\ncreate_on_open=1\ncreate_serialize=0\n");
    let n = super::measures::notes(&j, 0, &|_| None, &|_| true);
    for key in ["fallocate", "create_on_open", "create_serialize"] {
        assert!(
            n.iter()
                .any(|x| x.contains(key) && x.contains("changes nothing measured")),
            "{key}: {n:?}"
        );
    }
}

/// atomic=1 is a direct write of one power-of-two size at a multiple of it (RWF_ATOMIC's
/// rules): each way out of them is refused at its line, for its own reason; within them the
/// job is taken, and verify_write_sequence is refused without verify and noted with it.
#[test]
fn atomic_writes_keep_the_kernels_rules() {
    refused_at(&[
        ("[a]\nrw=randread\natomic=1\n", 3, "only writes are atomic"),
        (
            "[a]\nrw=randwrite\nioengine=null\natomic=1\n",
            4,
            "writes nothing",
        ),
        (
            "[a]\nrw=randwrite\ndirect=0\natomic=1\n",
            4,
            "give direct=1",
        ),
        (
            "[a]\nrw=randwrite\ndirect=1\nbs=12k\natomic=1\n",
            5,
            "power of two",
        ),
        (
            "[a]\nrw=randwrite\ndirect=1\nbssplit=4k/50:16k/50\natomic=1\n",
            5,
            "one bs",
        ),
        (
            "[a]\nrw=randwrite\ndirect=1\nbs=16k\noffset=8k\natomic=1\n",
            6,
            "offset (8192 bytes)",
        ),
        (
            "[a]\nrw=write:4k\ndirect=1\nbs=16k\natomic=1\n",
            5,
            "the skip of rw=",
        ),
        (
            "[a]\nrw=randwrite\nverify_write_sequence=0\n",
            3,
            "without verify",
        ),
    ]);
    let j = jobs("[a]\nrw=randwrite\ndirect=1\nbs=16k\noffset=64k\nsize=1m\natomic=1\n");
    assert!(j[0].atomic);
    let j = jobs("[a]\nrw=randwrite\ndirect=1\nsize=1m\nverify=crc64\nverify_write_sequence=0\n");
    assert!(!j[0].atomic);
    let n = super::measures::notes(&j, 0, &|_| None, &|_| true);
    assert!(
        n.iter()
            .any(|x| x.starts_with("t.fio:6: verify_write_sequence=0")
                && x.contains("either may land last")),
        "{n:?}"
    );
}
