//! The job-file reader against fio's documented meanings.

use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

fn jobs(text: &str) -> Vec<Job> {
    parse(text, "t.fio", &no_env).unwrap_or_else(|e| panic!("{e}"))
}

fn refusal(text: &str) -> String {
    parse(text, "t.fio", &no_env).unwrap_err()
}

#[test]
fn global_is_inherited_and_jobs_override_it() {
    let j = jobs(
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\nruntime=1m\ntime_based\nsize=1g\n\
         [seq-read]\nrw=read\nbs=1m\niodepth=8\n[rand-write]\nreadwrite=randwrite\nnumjobs=4\n",
    );
    assert_eq!(j.len(), 2);
    assert_eq!(
        (j[0].name.as_str(), j[0].rw, j[0].bs, j[0].iodepth),
        ("seq-read", Rw::Read, 1 << 20, 8)
    );
    assert_eq!((j[1].rw, j[1].bs, j[1].numjobs), (Rw::Randwrite, 4096, 4));
    for job in &j {
        assert!(job.direct && job.time_based);
        assert_eq!(job.engine, Engine::Libaio);
        assert_eq!(job.runtime, Some(Duration::from_secs(60)));
        assert_eq!(job.size, Some(1 << 30));
    }
    assert_eq!(j[0].at("bs").line, 10, "the job's own bs, not global's");
    assert_eq!(j[1].at("bs").line, 4, "global's bs");
}

#[test]
fn fio_defaults_are_buffered_psync_read_4k() {
    let j = &jobs("[a]\n")[0];
    assert_eq!((j.rw, j.bs, j.iodepth, j.numjobs), (Rw::Read, 4096, 1, 1));
    assert!(!j.direct, "fio's default is buffered");
    assert_eq!(j.engine, Engine::Sync);
    assert_eq!(j.seed, Some(1), "randrepeat=1 is fio's default");
}

#[test]
fn units_follow_fio_kb_base() {
    assert_eq!(size("4k", 1024), Ok(4096));
    assert_eq!(size("4K", 1024), Ok(4096));
    assert_eq!(size("4KB", 1024), Ok(4096));
    // fio's compatibility mode: the IEC spelling is the decimal one.
    assert_eq!(size("4KiB", 1024), Ok(4000));
    assert_eq!(size("1g", 1024), Ok(1 << 30));
    assert_eq!(size("512", 1024), Ok(512));
    assert_eq!(size("4k", 1000), Ok(4000));
    assert_eq!(size("4KiB", 1000), Ok(4096));
    assert!(size("4x", 1024).is_err());
    let j = &jobs("[a]\nkb_base=1000\nbs=8k\n")[0];
    assert_eq!(j.bs, 8000);
    assert_eq!(time("60"), Ok(Duration::from_secs(60)));
    assert_eq!(time("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(time("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(time("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(time("250us"), Ok(Duration::from_micros(250)));
    assert!(time("10 fortnights").is_err());
}

#[test]
fn mixes_engines_syncs_and_distributions() {
    let j = &jobs("[a]\nrw=randrw\nrwmixread=70\n")[0];
    assert_eq!((j.rw, j.read_pct), (Rw::Randrw, 70));
    let j = &jobs("[a]\nrw=rw\nrwmixwrite=30\n")[0];
    assert_eq!(j.read_pct, 70);
    assert_eq!(
        jobs("[a]\nrw=randrw\n")[0].read_pct,
        50,
        "fio's default mix"
    );
    for (e, want) in [
        ("io_uring", Engine::IoUring),
        ("libaio", Engine::Libaio),
        ("psync", Engine::Sync),
        ("sync", Engine::Sync),
        ("pvsync", Engine::Sync),
        ("null", Engine::Null),
    ] {
        assert_eq!(jobs(&format!("[a]\nioengine={e}\n"))[0].engine, want);
    }
    assert!(jobs("[a]\nrw=write\nsync=dsync\n")[0].odsync);
    assert!(!jobs("[a]\nrw=write\nsync=none\n")[0].odsync);
    assert!(refusal("[a]\nrw=write\nsync=1\n").contains("O_SYNC is not mapped"));
    let j = &jobs("[a]\nrw=write\nfdatasync=8\n")[0];
    assert_eq!(j.sync, Some((SyncKind::Fdatasync, 8)));
    let j = &jobs("[a]\nrw=randread\nrandom_distribution=zipf:1.2\n")[0];
    assert_eq!(j.distribution, Distribution::Zipf(1.2));
    let j = &jobs("[a]\nrw=randread\nrandom_distribution=pareto:0.9\n")[0];
    assert_eq!(j.distribution, Distribution::Pareto(0.9));
    let j = &jobs("[a]\nrw=randread\nrandom_distribution=normal:5\n")[0];
    assert_eq!(j.distribution, Distribution::Normal(0.05));
    let j = &jobs("[a]\nrate_iops=500\nrandrepeat=0\nbuffered=0\nstonewall\n")[0];
    assert_eq!(j.rate_iops, Some(500.0));
    assert_eq!(j.seed, None);
    assert!(j.direct && j.stonewall);
    assert_eq!(jobs("[a]\nrandseed=42\n")[0].seed, Some(42));
    let j = &jobs("[a]\niodepth=64\niodepth_batch_submit=64\niodepth_batch_complete_max=64\n")[0];
    assert_eq!(j.submit_batch, Some(64));
    let j = &jobs("[a]\niodepth=32\niodepth_batch_complete=8\n")[0];
    assert_eq!(j.complete_batch, Some(8));
    assert!(refusal("[a]\niodepth_batch_complete_min=0\n").contains("at least one"));
    assert!(refusal("[a]\niodepth=64\niodepth_batch_complete_max=8\n").contains("below iodepth"));
}

#[test]
fn filename_and_directory_make_the_target() {
    let j = &jobs("[a]\ndirectory=/mnt/x\nfilename=t.dat\n")[0];
    assert_eq!(j.path, Some(PathBuf::from("/mnt/x/t.dat")));
    let j = &jobs("[a]\nfilename=/dev/nvme0n1\nname=real\n")[0];
    assert_eq!(j.path, Some(PathBuf::from("/dev/nvme0n1")));
    assert_eq!(j.name, "real", "name= renames the job");
}

#[test]
fn every_refusal_names_its_line_and_why() {
    for (text, line, why) in [
        ("[a]\nbssplit=4k/50:64k/50\n", 2, "one block size per job"),
        ("[a]\n\nnrfiles=4\n", 3, "one file"),
        ("[global]\nfrobnicate=1\n[a]\n", 2, "does not support"),
        ("[a]\nrw=randread:8\n", 2, "':N' suffix"),
        ("[a]\nrw=trim\n", 2, "trims"),
        ("[a]\nbs=4k,64k\n", 2, "per direction"),
        ("[a]\nsize=250%\n", 2, "1% to 100%"),
        ("[a]\nioengine=spdk\n", 2, "io_uring"),
        ("[a]\nrw=read\nfsync=1\n", 3, "follows writes"),
        (
            "[a]\nrw=read\nrandom_distribution=zipf:1.1\n",
            3,
            "sequential",
        ),
        ("[a]\nrandom_distribution=zoned:60/10:40/90\n", 2, "zoned"),
        ("[a]\nfilename=/a:/b\n", 2, "several files"),
        ("[a]\nnumjobs=0\n", 2, "at least 1"),
        ("[a]\ndirect=1\nbuffered=1\n", 3, "contradicts"),
        ("[a]\nwait_for=b\n", 2, "one after another"),
        ("[global]\nbs=4k\n", 0, "no job"),
    ] {
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

#[test]
fn the_command_line_form_is_global_then_one_job_per_name() {
    let args: Vec<String> = [
        "--ioengine=libaio",
        "--direct=1",
        "--name=a",
        "--rw=randread",
        "--bs=4k",
        "--name=b",
        "--rw=write",
        "--bs=1m",
        "--time_based",
        "--runtime=5",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let j = parse_args(&args, &no_env).unwrap();
    assert_eq!(j.len(), 2);
    assert_eq!(
        (j[0].name.as_str(), j[0].rw, j[0].bs),
        ("a", Rw::Randread, 4096)
    );
    assert_eq!(
        (j[1].name.as_str(), j[1].rw, j[1].bs),
        ("b", Rw::Write, 1 << 20)
    );
    assert!(j.iter().all(|j| j.direct && j.engine == Engine::Libaio));
    assert!(j[1].time_based && !j[0].time_based);
    let refuse = |a: &[&str]| {
        let v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        parse_args(&v, &no_env).unwrap_err()
    };
    let e = refuse(&["--name=a", "--nrfiles=2"]);
    assert!(e.starts_with("fio option 2: nrfiles"), "{e}");
    let e = refuse(&["--name=a", "--allow-overwrite"]);
    assert!(e.contains("put it before"), "{e}");
    let e = refuse(&["--name=a", "job.fio"]);
    assert!(e.contains("fio's --option=value options only"), "{e}");
    let e = refuse(&["--output-format=json", "--name=a"]);
    assert!(e.contains("--format fio-json"), "{e}");
}

#[test]
fn rate_verify_and_latency_target_map_to_iogauges_own() {
    let j = &jobs("[a]\nbs=4k\nrate=100m\n")[0];
    assert_eq!(j.rate_iops, Some(25_600.0));
    assert!(refusal("[a]\nrate=1m\nrate_iops=10\n").contains("give one"));
    assert!(refusal("[a]\nrate=1m,2m\n").contains("per direction"));
    assert!(jobs("[a]\nverify=md5\n")[0].verify);
    assert!(!jobs("[a]\nverify=md5\ndo_verify=0\n")[0].verify);
    assert!(!jobs("[a]\nverify=0\n")[0].verify);
    let t = jobs("[a]\nlatency_target=10000\nlatency_percentile=99\nlatency_window=5s\n")[0]
        .latency_target
        .unwrap();
    assert_eq!((t.percentile, t.limit), (99.0, Duration::from_millis(10)));
    let t = jobs("[a]\nlatency_target=2ms\n")[0].latency_target.unwrap();
    assert_eq!((t.percentile, t.limit), (100.0, Duration::from_millis(2)));
    assert!(refusal("[a]\nlatency_percentile=99\n").contains("latency_target"));
}

#[test]
fn size_as_a_share_is_kept_for_the_plan() {
    assert_eq!(jobs("[a]\nsize=50%\n")[0].size_pct, Some(50.0));
    assert!(refusal("[a]\nsize=0%\n").contains("1% to 100%"));
    assert!(refusal("[a]\nsize=150%\n").contains("1% to 100%"));
}

#[test]
fn steady_state_options_map_to_until_stable() {
    assert!(jobs("[a]\nss=iops:10%\nss_dur=30\nss_ramp=5\n")[0].steady);
    assert!(refusal("[a]\nss=latency:10%\n").contains("iops, iops_slope"));
    assert!(refusal("[a]\nss_dur=30\n").contains("goes with ss="));
}
