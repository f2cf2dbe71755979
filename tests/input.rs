//! Input that would do nothing, or something else than typed, is refused before anything runs:
//! one line on stderr, exit 2, nothing created (issue 23).

use crate::common;

use common::*;
use serde_json::Value;

fn refused(dir: &std::path::Path, args: &[&str], needle: &str) {
    let out = iogauge(dir, args);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {needle:?} in {err}");
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-test"))
        .collect();
    assert!(left.is_empty(), "{args:?} created a file");
}

#[test]
fn options_that_would_do_nothing_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(d, &["run", "--mix", "70"], "--mix 70 does nothing");
    refused(d, &["run", "--buffered", "--direct"], "cannot be used with");
    refused(
        d,
        &["suite", "quick", "--max-rounds", "3", "--dry-run"],
        "--max-rounds 3 does nothing",
    );
    refused(
        d,
        &["suite", "snia-iops", "--until-stable", "--dry-run"],
        "--until-stable does nothing",
    );
    refused(d, &["run", "--latency-target", "p99=2"], "with its unit");
    refused(d, &["run", "--distribution", "zipf"], "needs its parameter");
    refused(d, &["run", "--label", "2"], "run id");
    refused(d, &["run", "--label", "last"], "run id");
    refused(d, &["report", "last", "-o", "x.pdf"], "HTML");
    refused(
        d,
        &["run", "--engine", "null", "-o", "/proc/x.json"],
        "is under /proc",
    );
}

#[test]
fn near_misses_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in [
        &["run", "--rw", "randrw", "--mix", "70", "--dry-run"][..],
        &["run", "--buffered", "--dry-run"],
        &["run", "--latency-target", "p99=2ms", "--dry-run"],
        &["run", "--distribution", "zipf:1.2", "--dry-run"],
        &["run", "--label", "ssd-2", "--dry-run"],
        &["run", "--rate", "5k", "--dry-run"],
        &["suite", "snia-iops", "--max-rounds", "3", "--dry-run"],
        &["suite", "quick", "--until-stable", "--dry-run"],
    ] {
        let out = iogauge(d, args);
        assert!(out.status.success(), "{args:?}: {}", stderr_of(&out));
    }
}

/// fsync-check `write` with no listener leaves no file behind (issue 23: it left 256 MiB).
#[test]
fn fsync_check_write_without_a_listener_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = iogauge(
        dir.path(),
        &[
            "fsync-check",
            "write",
            "fc.img",
            "--to",
            &format!("127.0.0.1:{port}"),
        ],
    );
    assert!(!out.status.success(), "{}", stderr_of(&out));
    assert!(!dir.path().join("fc.img").exists(), "the file was left");
}

/// A `--latency-target` search of 200 ms steps on a small file: its document, its finding whose
/// summary starts with `answer`, and what it printed — all of one run (`-o` keeps the document
/// beside the screen's text).
fn latency_search(target: &str, answer: &str) -> (Value, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "data",
            "--size",
            "16m",
            "--time",
            "200ms",
            "--latency-target",
            target,
            "--no-store",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["summary"].as_str().unwrap_or("").starts_with(answer))
        .cloned()
        .unwrap_or_else(|| panic!("{:#}", doc["findings"]));
    (doc, f, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `--latency-target` judges paced runs only (issue 37: the unthrottled run's latency counts
/// from submission and hides the queueing, so an answer taken from it named a rate whose paced
/// p99 was 3.5× the target). Even a target the unthrottled run meets is searched at paced
/// rates, and the answer is one of them.
#[test]
fn a_latency_target_is_answered_from_paced_runs_only() {
    let (doc, f, text) = latency_search("p99=10s", "the highest rate");
    let results = doc["results"].as_array().unwrap();
    assert!(results.len() >= 2, "{}", results.len());
    assert!(
        results[0]["workload"]["rate_iops"].is_null(),
        "the bound first"
    );
    let best = f["evidence"]["best_iops"].as_f64().unwrap();
    let paced: Vec<f64> = results[1..]
        .iter()
        .map(|r| r["iops"].as_f64().unwrap())
        .collect();
    assert!(
        paced.contains(&best),
        "{best} is not one of the paced runs {paced:?}"
    );
    // On screen the search is one table, a row a step, the unthrottled one marked as the bound.
    assert!(text.contains("rate asked"), "{text}");
    let steps = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && l.contains("IOPS"))
        .count();
    assert_eq!(steps, results.len(), "{text}");
    assert!(text.contains("the bound (not judged)"), "{text}");
}

/// `--latency-target` that no rate meets names the lowest rate it really tried (issue 23:
/// "even at 19 IOPS" after trying 1,213 at the lowest), with evidence and advice.
#[test]
fn a_failed_latency_search_names_a_rate_it_tried() {
    // No IO through a system call completes in a nanosecond: every step misses.
    let (doc, f, _) = latency_search("p99=1ns", "no rate kept");
    let lowest = f["evidence"]["lowest_rate_iops"].as_f64().unwrap();
    let tried: Vec<f64> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["workload"]["rate_iops"].as_f64())
        .collect();
    assert!(
        tried.iter().any(|t| (t - lowest).abs() < 1e-6 * t.max(1.0)),
        "{lowest} not among the rates tried {tried:?}"
    );
    assert!(tried.iter().all(|t| *t >= lowest - 1e-6), "{tried:?}");
    assert!(!f["advice"].as_str().unwrap().is_empty());
}

/// The plan's estimate counts ramps and a latency search's steps (issue 23: `--ramp 5s --time
/// 1s` was estimated at 1.7 s, a 14.7 s search at 4.7 s).
#[test]
fn estimates_count_ramps_and_search_steps() {
    let dir = tempfile::tempdir().unwrap();
    let seconds = |args: &[&str]| -> Vec<f64> {
        let out = iogauge(dir.path(), args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find(|l| l.contains("estimated time"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string();
        line.split_whitespace()
            .filter_map(|w| w.parse::<f64>().ok())
            .collect()
    };
    let ramp = seconds(&[
        "run",
        "--ramp",
        "5s",
        "--time",
        "1s",
        "--size",
        "16m",
        "--dry-run",
    ]);
    assert!(ramp[0] >= 6.0, "{ramp:?}");
    let search = seconds(&[
        "run",
        "--latency-target",
        "p99=2ms",
        "--time",
        "2s",
        "--size",
        "16m",
        "--dry-run",
    ]);
    // Every step runs (only paced steps are judged, so none stops the search early): the
    // unthrottled bound and 6 paced steps of 2 s.
    assert!(search[0] >= 14.0, "{search:?}");
}

/// A results database on a read-only file system is named as such (issue 23: it was "could
/// not be read as an SQLite database").
#[test]
fn a_read_only_results_database_says_so() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("ro");
    std::fs::create_dir(&mnt).unwrap();
    sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=8m",
            "tmpfs",
            mnt.to_str().unwrap(),
        ],
    );
    let _m = Mount(mnt.clone());
    let db = mnt.join("results.db");
    let run = |args: &[&str]| {
        std::process::Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .env("IOGAUGE_DB", &db)
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
            .output()
            .unwrap()
    };
    let out = run(&["run", "--engine", "null", "--time", "100ms"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    sh("mount", &["-o", "remount,ro", mnt.to_str().unwrap()]);
    let out = run(&["run", "--engine", "null", "--time", "100ms"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("read-only file system"), "{err}");
}

/// `--hipri` on a device without poll queues (a loop device, and ext4 on one) is refused after
/// the target is looked at and before a file is made or filled (issue 23: it filled the file,
/// printed 0 IOPS and exited 1). The kernel's own word is the ground truth: `queue/io_poll` 0.
#[test]
fn hipri_without_poll_queues_is_refused_before_the_fill() {
    needs_root!();
    needs_tool!("mkfs.ext4");
    let ram = RamLoop::new(64 << 20);
    let dev = ram.dev.name().to_string();
    let poll = std::fs::read_to_string(format!("/sys/block/{dev}/queue/io_poll")).unwrap();
    assert_eq!(poll.trim(), "0", "a loop device has no poll queues");
    sh("mkfs.ext4", &["-q", &ram.dev.dev]);
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    let _m = Mount::new(&ram.dev.dev, &mnt, "rw");
    let in_mnt = || -> Vec<String> {
        std::fs::read_dir(&mnt)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "lost+found")
            .collect()
    };
    let why = format!("--hipri needs a device with poll queues, and {dev} (under ");
    let m = mnt.to_str().unwrap();
    for args in [
        &[
            "run", m, "--hipri", "--rw", "write", "--size", "16m", "--time", "1s",
        ][..],
        &[
            "run",
            m,
            "--hipri",
            "--size",
            "16m",
            "--time",
            "1s",
            "--dry-run",
        ],
        &[
            "run",
            &ram.dev.dev,
            "--hipri",
            "--size",
            "16m",
            "--time",
            "1s",
        ],
    ] {
        let out = iogauge(dir.path(), args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(&why), "{args:?}: {err}");
        assert!(err.contains("drop --hipri"), "{args:?}: {err}");
        assert!(in_mnt().is_empty(), "{args:?} left {:?}", in_mnt());
    }
    // Flags that make --hipri mean nothing are refused from what was typed alone.
    refused(
        dir.path(),
        &["run", m, "--hipri", "--engine", "psync", "--dry-run"],
        "--hipri is an io_uring mode",
    );
    refused(
        dir.path(),
        &["run", m, "--hipri", "--buffered", "--dry-run"],
        "--hipri polls for direct IO only",
    );
    // The near miss: the same run without --hipri runs, and leaves no file either.
    let out = iogauge(
        dir.path(),
        &[
            "run", m, "--rw", "write", "--size", "16m", "--time", "200ms",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(in_mnt().is_empty(), "left {:?}", in_mnt());
}

/// A directory the user may not write to, or one on a read-only file system, is named as such
/// with what to do (issue 23: it was reported as a file that does not exist, or by the made-up
/// name of a test file that never existed). The kernel decides: a root-owned directory for an
/// unprivileged user (setpriv), and an ext4 remounted read-only.
#[test]
fn an_unwritable_directory_is_named_as_not_writable() {
    needs_root!();
    needs_tool!("setpriv");
    needs_tool!("mkfs.ext4");
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    mode(dir.path(), 0o755);
    let locked = dir.path().join("locked");
    let open = dir.path().join("open");
    std::fs::create_dir(&locked).unwrap();
    std::fs::create_dir(&open).unwrap();
    mode(&locked, 0o755);
    mode(&open, 0o777);
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
            .args(args)
            .current_dir(&open)
            .env("IOGAUGE_DB", open.join("results.db"))
            .env("IOGAUGE_RUN_DIR", open.join("run"))
            .output()
            .unwrap()
    };
    if !as_nobody(&["--version"]).status.success() {
        skip(&format!("user 65534 cannot run {BIN}"));
        return;
    }
    let one_line = |out: &std::process::Output, want: &str| {
        let err = stderr_of(out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{want:?} in {err}");
        assert!(!err.contains("does not exist"), "{err}");
        assert!(!err.contains("iogauge-test"), "names a made-up file: {err}");
    };
    let l = locked.to_str().unwrap();
    let run = [
        "run", l, "--rw", "write", "--size", "16m", "--time", "200ms",
    ];
    one_line(
        &as_nobody(&run),
        &format!(
            "cannot create the test file in {l}: permission denied (uid 65534 may not write there"
        ),
    );
    let db = locked.join("results.db");
    let o = open.to_str().unwrap();
    one_line(
        &as_nobody(&[
            "run",
            o,
            "--size",
            "16m",
            "--time",
            "200ms",
            "--db",
            db.to_str().unwrap(),
        ]),
        &format!("cannot create the results database in {l}: permission denied"),
    );
    assert_eq!(std::fs::read_dir(&locked).unwrap().count(), 0);
    // The near miss: the same user in a directory it may write to runs.
    let out = as_nobody(&[
        "run", o, "--rw", "write", "--size", "16m", "--time", "200ms",
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));

    // A read-only mount, even for root.
    let ram = RamLoop::new(32 << 20);
    sh("mkfs.ext4", &["-q", &ram.dev.dev]);
    let mnt = dir.path().join("mnt");
    let _m = Mount::new(&ram.dev.dev, &mnt, "rw");
    let sub = mnt.join("sub");
    std::fs::create_dir(&sub).unwrap();
    sh("mount", &["-o", "remount,ro", mnt.to_str().unwrap()]);
    let s = sub.to_str().unwrap();
    let out = iogauge(
        dir.path(),
        &["run", s, "--rw", "write", "--size", "4m", "--time", "200ms"],
    );
    one_line(
        &out,
        &format!("cannot create the test file in {s}: it is on a read-only file system"),
    );
    let db = mnt.join("results.db");
    let out = iogauge(
        dir.path(),
        &[
            "run",
            o,
            "--size",
            "4m",
            "--time",
            "200ms",
            "--db",
            db.to_str().unwrap(),
        ],
    );
    one_line(
        &out,
        &format!("{} is on a read-only file system", mnt.display()),
    );
}

/// Issue 37, item 8: `run --time 1ms` exited 0 with `IOPS 0`, a latency of 0 ns and a stall
/// "during the whole run". A length shorter than one bin of the time series is refused, for a
/// run, a suite's cells and a suite file; one bin long is taken.
#[test]
fn a_cell_shorter_than_one_bin_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["run", "--engine", "null", "--time", "1ms"],
        vec!["suite", "quick", "--engine", "null", "--cell-time", "50ms"],
    ] {
        let out = iogauge(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains("is shorter than one 100 ms bin"),
            "{}",
            stderr_of(&out)
        );
    }
    let ok = iogauge(dir.path(), &["run", "--engine", "null", "--time", "100ms"]);
    assert!(ok.status.success(), "{}", stderr_of(&ok));
}

/// The tests' deadline holds: a command that would outlive it is killed and the test fails
/// naming it, at once rather than after the command's own 30 s.
#[test]
#[should_panic(expected = "was still running after")]
fn a_hung_command_fails_its_test_at_the_deadline() {
    output_within(
        std::process::Command::new("sleep").arg("30"),
        std::time::Duration::from_millis(300),
    );
}

/// Issue 43, item 1: a misspelled suite name is answered with the one meant, as clap answers a
/// misspelled command; a suite's name typed as the command is answered with `iogauge suite`.
#[test]
fn a_misspelled_suite_names_the_one_meant() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(d, &["suite", "qiuck", "--dry-run"], "did you mean quick?");
    refused(
        d,
        &["suite", "snia-iosp", "--dry-run"],
        "did you mean snia-iops?",
    );
    refused(d, &["qiuck"], "did you mean `iogauge suite quick`?");
    refused(d, &["matrix", "."], "did you mean `iogauge suite matrix`?");
    // clap's own suggestion for a command stays; nothing is offered for what is like nothing.
    refused(d, &["suit", "quick"], "'suite'");
    let out = iogauge(d, &["suite", "bogus"]);
    assert!(
        !stderr_of(&out).contains("did you mean"),
        "{}",
        stderr_of(&out)
    );
}

/// Issue 43, item 4: README's `/data`, typed where there is no /data, made a 1 GiB test file
/// named /data at the root. A missing target directly under / is refused alike by run, suite
/// and the database commands, before anything is written; one deeper down is still created.
#[test]
fn a_missing_target_at_the_root_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = format!("/iogauge-absent-{}", std::process::id());
    assert!(!std::path::Path::new(&root).exists());
    let fix = "give a directory on the file system to test";
    for args in [
        vec!["run", root.as_str(), "--dry-run"],
        vec!["run", root.as_str(), "--engine", "null", "--time", "200ms"],
        vec!["suite", "matrix", root.as_str(), "--dry-run"],
        vec!["db", "pgbench", root.as_str()],
        vec!["db", "sysbench", root.as_str()],
    ] {
        refused(d, &args, fix);
        assert!(
            !std::path::Path::new(&root).exists(),
            "{args:?} made {root}"
        );
    }
    let deeper = d.join("new");
    let out = iogauge(d, &["run", deeper.to_str().unwrap(), "--dry-run"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
}
