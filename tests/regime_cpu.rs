//! A change of regime that other work on iogauge's CPU made, named as the CPU's (issue 28's
//! near miss the other way round): a busy loop the test starts on iogauge's CPU. In a file of
//! its own, so no other test's run shares a CPU with the busy loop (test files run one at a
//! time).

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::process::Command;

/// iogauge's CPU seconds so far (utime + stime of /proc/PID/stat, in clock ticks of 10 ms).
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    // Fields 14 and 15 of the line; the 12th and 13th after the name.
    let ticks: u64 = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// Other work taking iogauge's CPU: iogauge pinned to CPU 0 reads a zram device of the test's
/// own as fast as that CPU lets it (zram does its work in the process's own io_uring worker,
/// on the same CPU); once iogauge has run 2 CPU seconds, a busy loop pinned to CPU 0 takes
/// about half of it. The kernel's schedstat shows the threads waiting for the CPU, so the fall
/// is named as the CPU's, with no burst size, not as the device's.
#[test]
fn a_fall_that_other_work_on_the_cpu_made_is_the_cpus() {
    needs_root!();
    needs_tool!("taskset");
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("taskset");
    cmd.args(["-c", "0", BIN, "run", &zram.dev()])
        .args(["--rw", "randread", "--iodepth", "4", "--time", "6s"])
        .args(["--json", "--no-store"])
        .current_dir(dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()));
    let run = Spawned::start(cmd);
    let pid = run.pid();
    wait_until("iogauge to run 2 CPU seconds", WATCHDOG, || {
        cpu_secs(pid) >= 2.0
    });
    let hog = Helper::shell("exec taskset -c 0 sh -c 'while :; do :; done'");
    let out = run.finish(WATCHDOG);
    drop(hog);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = findings_of(&doc, "regime");
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    let (f, e) = (&found[0], &found[0]["evidence"]);
    eprintln!("user sees: {}", f["summary"]);
    let summary = f["summary"].as_str().unwrap();
    assert!(
        summary.contains("fell from") && summary.contains("waited for a CPU"),
        "{summary}"
    );
    assert!(e.get("ios_above_later").is_none(), "{e:#}");
    let (before, after) = (
        e["cpu_wait_before"].as_f64().unwrap(),
        e["cpu_wait_after"].as_f64().unwrap(),
    );
    assert!(after - before >= 0.1, "waited {before} then {after}");
    // The series it was judged on are in the result, bin for bin with the IOs.
    let fine = &doc["results"][0]["fine"];
    let bins = fine["ios"].as_array().unwrap().len();
    assert_eq!(fine["cpu_wait"].as_array().unwrap().len(), bins);
    assert_eq!(fine["cpu_run"].as_array().unwrap().len(), bins);
}
