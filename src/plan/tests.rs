use super::*;
use clap::Parser;

fn run_plan(args: &[&str]) -> Result<Plan> {
    let mut argv = vec!["iogauge", "run"];
    argv.extend_from_slice(args);
    let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
    match cli.command {
        crate::cli::Command::Run(a) => from_run(&a),
        _ => unreachable!(),
    }
}

fn suite_plan(args: &[&str]) -> Result<Plan> {
    let mut argv = vec!["iogauge", "suite"];
    argv.extend_from_slice(args);
    let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
    match cli.command {
        crate::cli::Command::Suite(a) => from_suite(&a),
        _ => unreachable!(),
    }
}

#[test]
fn a_run_is_a_suite_of_one_cell() {
    let p = run_plan(&[
        "--rw",
        "randrw",
        "--mix",
        "70",
        "--bs",
        "8k",
        "--threads",
        "2",
        "--iodepth",
        "16",
        "--data",
        "1g",
    ])
    .unwrap();
    assert_eq!(p.kind, Kind::Run);
    assert_eq!(p.cells.len(), 1);
    let c = &p.cells[0];
    assert_eq!(
        (c.op, c.read_pct, c.bs.bytes(), c.threads, c.iodepth),
        (Op::Randrw, 70, 8192, 2, 16)
    );
    assert_eq!(c.length, Length::Data(Amount::Bytes(1 << 30)));
    assert!(p.writes());
}

// Regression (issue 10, item 1): a suite's file size is for files it creates, never the
// range of an existing target.
#[test]
fn a_suites_size_is_only_for_created_files() {
    let p = suite_plan(&["quick"]).unwrap();
    assert_eq!(
        p.target.size, None,
        "no --size: existing targets are used whole"
    );
    assert_eq!(p.target.created_size, 1 << 30);
    let p = suite_plan(&["quick", "--size", "256m"]).unwrap();
    assert_eq!(p.target.size, Some(256 << 20));
}

// Regression (issue 12): `suite --file my.toml /data` was refused as a name and a file.
#[test]
fn with_a_suite_file_the_first_argument_is_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my.toml");
    std::fs::write(
            &file,
            "name = \"mine\"\ndescription = \"d\"\n[[group]]\ntitle = \"t\"\nrw = [\"randread\"]\nbs = [\"8k\"]\n",
        )
        .unwrap();
    let f = file.to_str().unwrap();
    let p = suite_plan(&["--file", f, "/data"]).unwrap();
    assert_eq!(p.target.path, Some(PathBuf::from("/data")));
    assert_eq!(
        p.suite.groups[0].layout,
        Layout::Plain,
        "layout defaults to plain"
    );
    let e = suite_plan(&["--file", f, "/a", "/b"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("one argument too many"), "{e}");
}

#[test]
fn typed_values_are_echoed_in_errors() {
    let e = run_plan(&["--bs", "1000"]).unwrap_err().to_string();
    assert!(e.contains("--bs 1000"), "{e}");
    let e = run_plan(&["--rw", "read", "--fsync", "1"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("syncs follow writes"), "{e}");
    let e = run_plan(&["--offset", "1000"]).unwrap_err().to_string();
    assert!(e.contains("--offset"), "{e}");
}

fn fio_plan(options: &[&str]) -> Result<Plan> {
    let mut argv = vec!["iogauge", "fio", "--"];
    argv.extend_from_slice(options);
    let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
    match cli.command {
        crate::cli::Command::Fio(a) => from_fio(&a),
        _ => unreachable!(),
    }
}

// io_size with loops: the bytes moved, over the region of size=; clones of a job without size=
// each go over the whole range.
#[test]
fn fio_io_size_and_loops_are_the_bytes_moved_and_clones_pass_the_range() {
    let p = fio_plan(&[
        "--name=a",
        "--size=64m",
        "--io_size=16m",
        "--loops=3",
        "--numjobs=2",
    ])
    .unwrap();
    assert_eq!(p.target.size, Some(64 << 20));
    assert_eq!(p.cells[0].length, Length::Data(Amount::Bytes(96 << 20)));
    let p = fio_plan(&[
        "--name=a",
        "--numjobs=4",
        "--loops=2",
        "--filename=f",
        "--rw=randwrite",
    ])
    .unwrap();
    assert_eq!(p.cells[0].length, Length::Data(Amount::Ranges(8)));
}

// fio's nrfiles: the target is that many created files of size / nrfiles each, and the job
// moves size bytes over all of them.
#[test]
fn nrfiles_makes_a_target_of_several_files_and_moves_the_jobs_size() {
    let p = fio_plan(&[
        "--name=a",
        "--nrfiles=4",
        "--size=1g",
        "--rw=randwrite",
        "--file_service_type=random:2",
    ])
    .unwrap();
    assert_eq!((p.target.files, p.target.size), (4, Some(256 << 20)));
    assert_eq!(p.env.file_service, crate::workload::FileService::Random(2));
    assert_eq!(p.cells[0].length, Length::Data(Amount::Bytes(1 << 30)));
    let one = fio_plan(&["--name=a", "--size=1g", "--rw=randwrite"]).unwrap();
    assert_eq!((one.target.files, one.target.size), (1, Some(1 << 30)));
    let e = fio_plan(&["--name=a", "--nrfiles=4", "--size=8k"]).unwrap_err();
    assert!(e.to_string().contains("less than one 4KiB block"), "{e}");
    let e = fio_plan(&[
        "--name=a",
        "--nrfiles=2",
        "--size=1m",
        "--name=b",
        "--nrfiles=3",
    ])
    .unwrap_err();
    assert!(e.to_string().contains("one nrfiles per run"), "{e}");
}

// fio's run groups: jobs with no stonewall between them are one cell of streams; stonewall,
// wait_for_previous and wait_for start the next group; new_group only starts a reporting
// group, so its job still runs with the one before.
#[test]
fn fio_jobs_without_stonewall_run_together() {
    let p = fio_plan(&[
        "--size=8m",
        "--name=a",
        "--name=b",
        "--new_group",
        "--name=c",
        "--name=d",
        "--stonewall",
        "--name=e",
        "--wait_for_previous",
        "--name=f",
        "--wait_for=e",
    ])
    .unwrap();
    let together: Vec<Option<usize>> = p.cells.iter().map(|c| c.together).collect();
    assert_eq!(
        together,
        [Some(0), Some(0), Some(0), None, None, None],
        "a, b and c at once; b's new_group changes only the reports"
    );
    assert!(
        p.suite.description.contains("in 4 run groups"),
        "{}",
        p.suite.description
    );
    let alone = fio_plan(&["--size=8m", "--name=a", "--name=b", "--stonewall"]).unwrap();
    assert!(alone.cells.iter().all(|c| c.together.is_none()));
    assert!(alone.suite.description.ends_with("one after another"));
}

// What iogauge runs once per job cannot be asked of jobs that run at once: refused at the
// line, with the way out; the same option on a job that runs alone is taken.
#[test]
fn what_one_job_at_a_time_needs_is_refused_for_jobs_run_together() {
    for (opt, what) in [
        ("--startdelay=2-4", "startdelay="),
        ("--ss=iops:5%", "ss="),
        ("--verify=crc32c", "verify="),
    ] {
        let e = fio_plan(&["--size=8m", "--name=a", opt, "--name=b", opt])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(what) && e.contains("add stonewall to the job to run it alone"),
            "{opt}: {e}"
        );
        let alone = fio_plan(&["--size=8m", "--name=a", opt, "--name=b", "--stonewall", opt]);
        assert!(alone.is_ok(), "{opt}: {:?}", alone.err());
    }
}

// fio's startdelay and exitall beside other jobs: a stream that starts that long after the
// others and one whose end ends them (runner::together): by default its reporting group (a new
// one at new_group), with exit_what=stonewall its cell, with exit_what=all every later job too;
// on a job alone, a delay and an end of its group change nothing.
#[test]
fn a_later_start_and_an_end_for_all_go_to_the_streams() {
    use crate::workload::{Beside, Ends};
    let p = fio_plan(&[
        "--size=8m",
        "--name=a",
        "--name=b",
        "--startdelay=2",
        "--exitall",
    ])
    .unwrap();
    let beside: Vec<_> = p.cells.iter().map(|c| c.beside).collect();
    assert_eq!(beside[0], Beside::default());
    assert_eq!(beside[1].delay, std::time::Duration::from_secs(2));
    assert_eq!((beside[1].ends, beside[1].group), (Ends::Group, 0));
    let alone = fio_plan(&["--size=8m", "--name=a", "--startdelay=2", "--exitall"]).unwrap();
    assert_eq!(alone.cells[0].beside, Beside::default());
    // exitwhat.fio's shape: a sync job in a group of its own beside libaio ones, each with its
    // own engine; then one whose end ends every later job.
    let p = fio_plan(&[
        "--size=8m",
        "--exitall",
        "--name=slow",
        "--new_group",
        "--exit_what=stonewall",
        "--name=fast",
        "--new_group",
        "--ioengine=libaio",
        "--iodepth=8",
        "--name=last",
        "--stonewall",
        "--exit_what=all",
        "--name=never",
        "--stonewall",
    ])
    .unwrap();
    let ends: Vec<_> = p
        .cells
        .iter()
        .map(|c| (c.beside.ends, c.beside.group))
        .collect();
    assert_eq!(
        ends,
        [
            (Ends::Cell, 0),
            (Ends::Group, 1),
            (Ends::Later, 0),
            (Ends::Own, 0)
        ]
    );
    let engines: Vec<_> = p.cells.iter().map(|c| c.engine).collect();
    use iogauge_engine::EngineKind::{IoUring, Psync};
    assert_eq!(
        engines,
        [Some(Psync), Some(IoUring), Some(Psync), Some(Psync)]
    );
    assert_eq!((p.cells[0].iodepth, p.cells[1].iodepth), (1, 8));
}

// fio's own --output-format and --output after --, as iogauge's output: json is fio's JSON on
// stdout (or in the file), normal iogauge's text; a format iogauge does not write is refused
// with the one to give, and so is a second output file.
#[test]
fn fios_output_options_on_its_command_line_are_honoured() {
    let p = fio_plan(&["--output-format=json", "--name=a", "--size=8m"]).unwrap();
    assert!(p.output.fio_json && p.output.json);
    assert_eq!(p.cells.len(), 1, "the option is no job's");
    let p = fio_plan(&[
        "--output-format=json",
        "--output=out.json",
        "--name=a",
        "--size=8m",
    ])
    .unwrap();
    let (file, format) = p.file.expect("an output file");
    assert_eq!((file.to_str(), format), (Some("out.json"), Format::FioJson));
    assert!(!p.output.fio_json, "with a file, stdout keeps the summary");
    let p = fio_plan(&["--output-format=normal", "--name=a", "--size=8m"]).unwrap();
    assert!(!p.output.json);
    for (format, says) in [
        ("terse", "terse is not written"),
        ("json+", "json+ is not written"),
    ] {
        let e = fio_plan(&[&format!("--output-format={format}"), "--name=a"]).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
}

// What judges or paces one workload at a time is refused for streams that run at once, not
// left undone: the built-in commit suite with --until-stable or --verify; the same suite alone
// is planned.
#[test]
fn one_workload_rules_are_refused_for_streams_run_together() {
    assert!(suite_plan(&["commit", "/data"]).is_ok());
    for flag in ["--until-stable", "--verify"] {
        let e = suite_plan(&["commit", "/data", flag])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("{flag} judges one workload at a time"))
                && e.contains("runs beside other streams"),
            "{flag}: {e}"
        );
    }
}

/// fio's zbd-rand-write-trim-gc.fio, smaller: a warm-up, then a writer and a trimmer that both
/// wait for it and so run together. The jobs of one file share one table of zones for the run,
/// counted in the writers' block (the trimmer's blocks are whole zones). Jobs of one file that
/// disagree on the zones, or a trimmer with no writer, are refused; a zbd job beside a job
/// without zones runs.
#[test]
fn zbd_jobs_of_a_file_share_one_table_and_trims_reset_it() {
    let global = [
        "--zonemode=zbd",
        "--zonesize=1m",
        "--size=8m",
        "--time_based",
        "--runtime=1",
    ];
    let warmup = ["--name=warmup", "--rw=randwrite", "--bs=64k"];
    let wjob = [
        "--name=wjob",
        "--wait_for=warmup",
        "--rw=randwrite",
        "--bs=64k",
        "--flow=8",
    ];
    let trim = [
        "--name=trimjob",
        "--wait_for=warmup",
        "--rw=randtrim",
        "--bs=1m",
        "--flow=1",
    ];
    let plan = |wbs: &str, extra: &[&str]| {
        let mut a = global.to_vec();
        a.extend(warmup);
        a.extend(wjob.map(|o| if o == "--bs=64k" { wbs } else { o }));
        a.extend(trim);
        a.extend(extra);
        fio_plan(&a)
    };
    let p = plan("--bs=64k", &[]).unwrap();
    let zbd: Vec<_> = p.cells.iter().map(|c| c.shape.zbd.unwrap()).collect();
    assert!(
        zbd.iter().all(|z| z.table == 1 && z.unit == 64 << 10),
        "{zbd:?}"
    );
    assert_eq!(p.cells[2].bs.bytes(), 1 << 20);
    assert!(p.cells[0].together.is_none());
    assert!(p.cells[1].together.is_some() && p.cells[1].together == p.cells[2].together);
    let w2 = ["--name=w2", "--rw=randwrite", "--bs=64k", "--zonesize=2m"];
    for (wbs, extra, why) in [
        ("--bs=128k", &[][..], "different bs"),
        ("--bs=64k", &w2[..], "different zonesize"),
    ] {
        let e = plan(wbs, extra).unwrap_err().to_string();
        assert!(e.contains(why), "{why}: {e}");
    }
    let mut alone = global.to_vec();
    alone.extend(["--name=trimjob", "--rw=randtrim", "--bs=1m"]);
    let e = fio_plan(&alone).unwrap_err().to_string();
    assert!(e.contains("with no job writing its file"), "{e}");
    let mut one = vec!["--name=a"];
    one.extend([
        "--zonemode=zbd",
        "--zonesize=1m",
        "--rw=randwrite",
        "--size=8m",
    ]);
    one.extend(["--name=b", "--stonewall", "--rw=randread", "--size=8m"]);
    fio_plan(&one).unwrap();
}

/// fio's sprandom ends by itself; its amount bounds it at a little more than the range and the
/// over-provisioning, whatever io_size says (fio sets io_size itself).
#[test]
fn a_sprandom_job_moves_the_range_and_its_over_provisioning() {
    let p = fio_plan(&[
        "--name=p",
        "--rw=randwrite",
        "--size=16m",
        "--io_size=1m",
        "--sprandom=1",
        "--spr_op=0.2",
    ])
    .unwrap();
    assert_eq!(p.cells[0].length, Length::Data(Amount::Permille(1201)));
}

/// fill_device=1: as much as the device or the file system's free space holds, less what
/// iogauge keeps free; a size beside it, a job that only reads, or a file that exists refused.
#[test]
fn fill_device_writes_the_free_space_and_its_misuses_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new").display().to_string();
    let free = std::fs::File::open(dir.path())
        .and_then(|d| iogauge_engine::sys::free_bytes(&d))
        .unwrap();
    let p = fio_plan(&[
        "--name=w",
        "--rw=write",
        "--bs=64k",
        "--fill_device=1",
        &format!("--filename={new}"),
    ])
    .unwrap();
    let want = (free - (free / 100).max(1 << 20)) >> 16 << 16;
    let got = p.target.size.unwrap();
    // The directory's free space may move a little between the two reads (other tests).
    assert!(got.abs_diff(want) <= 64 << 20, "{got} against {want}");
    assert_eq!(p.cells[0].length, Length::Data(Amount::Bytes(got)));
    let refused = |extra: &[&str]| {
        let mut a = vec!["--name=w", "--bs=64k", "--fill_device=1"];
        a.extend_from_slice(extra);
        fio_plan(&a).unwrap_err().to_string()
    };
    let f = format!("--filename={new}");
    assert!(refused(&["--rw=write", "--size=1m", &f]).contains("leave one out"));
    assert!(refused(&["--rw=read", &f]).contains("only reads"));
    let old = dir.path().join("old");
    std::fs::write(&old, b"user data").unwrap();
    let e = refused(&["--rw=write", &format!("--filename={}", old.display())]);
    assert!(e.contains("removes no file it did not create"), "{e}");
}

/// do_verify=0 on a writing job: its cell is not read back after it, the reader's cell is.
#[test]
fn a_writer_with_do_verify_0_is_not_read_back() {
    let p = fio_plan(&[
        "--name=w",
        "--rw=write",
        "--size=8m",
        "--verify=meta",
        "--do_verify=0",
        "--name=r",
        "--stonewall",
        "--rw=read",
        "--size=8m",
        "--verify=meta",
    ])
    .unwrap();
    assert_eq!(p.env.verify, Some(1.0));
    assert!(p.cells[0].no_readback);
    assert!(!p.cells[1].no_readback);
}

/// Jobs on files of their own: the first job's file is the run's target, each other file a
/// stream target as large as its largest job, each job's cell pointed at its file.
#[test]
fn jobs_on_other_files_run_on_targets_of_their_own() {
    let p = fio_plan(&[
        "--name=wal",
        "--filename=/tmp/iogauge-t-wal",
        "--rw=write",
        "--size=8m",
        "--name=data",
        "--filename=/tmp/iogauge-t-data",
        "--rw=randread",
        "--size=32m",
        "--name=more",
        "--filename=/tmp/iogauge-t-data",
        "--rw=randread",
        "--size=16m",
        "--name=again",
        "--filename=/tmp/iogauge-t-wal",
        "--rw=randread",
        "--size=4m",
        // Another spelling of a file not made yet is the same file.
        "--name=same",
        "--filename=/tmp/./iogauge-t-data",
        "--rw=randread",
        "--size=4m",
    ])
    .unwrap();
    assert_eq!(
        p.target.path.as_deref(),
        Some(std::path::Path::new("/tmp/iogauge-t-wal"))
    );
    assert_eq!(p.target.size, Some(8 << 20));
    assert_eq!(p.target.streams.len(), 1);
    assert_eq!(p.target.streams[0].size, Some(32 << 20));
    let on: Vec<Option<usize>> = p.cells.iter().map(|c| c.target).collect();
    assert_eq!(on, [None, Some(0), Some(0), None, Some(0)]);
    // A job smaller than its file uses its own range of it.
    assert_eq!(p.cells[2].range, Some(16 << 20));
    // Near misses: one file named by one job and none by the other; verify with two files.
    let e = fio_plan(&[
        "--name=a",
        "--filename=/tmp/iogauge-t-wal",
        "--size=8m",
        "--name=b",
        "--size=8m",
    ])
    .unwrap_err()
    .to_string();
    assert!(e.contains("sets filename differently"), "{e}");
    let e = fio_plan(&[
        "--verify=crc32c",
        "--rw=write",
        "--size=8m",
        "--name=a",
        "--filename=/tmp/iogauge-t-wal",
        "--name=b",
        "--filename=/tmp/iogauge-t-data",
        "--stonewall",
    ])
    .unwrap_err()
    .to_string();
    assert!(e.contains("one file per run"), "{e}");
}
