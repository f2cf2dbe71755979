//! SNIA PTS steady state (issue 16): suites in rounds until the tracked cell is steady, with
//! ground truth from the kernel — a loop device whose cgroup v1 blkio throttle is lowered round
//! by round and then held. The test must find steady state only once the window holds rounds
//! after the last change, and not before. Needs root (loop devices, cgroups); says so otherwise.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common;
use common::*;

const SUITE: &str = r#"
name = "steady-test"
description = "one 4K random write cell, in rounds"

[rounds]
track_rw = "randwrite"
track_bs = "4k"
window = 5
max = 25

[[group]]
title = "4K random writes"
rw = ["randwrite"]
bs = ["4k"]
iodepth = [4]
time = "1s"
"#;

/// The blkio throttle of the rounds: lowered by more than the 20% the test allows for each of
/// the first five rounds, then held. Low enough that a machine whose CPUs are busy with other
/// work still reaches each one (with 800 and 600 under two CPU-bound loops, round 4 ran at 720
/// instead of 800, within 20% of the held rate, and the window began a round early).
const THROTTLE: [u32; 5] = [1000, 600, 360, 220, 130];

#[test]
fn steady_state_is_found_only_after_the_throttle_stops_changing() {
    needs_root!();
    let Some(cg) = Blkio::new("steady") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The image lives in RAM, so the throttle is the only limit: a busy disk beneath (another
    // test writing) would make its own noise, and the test is about the throttle.
    let ram = RamLoop::new(64 << 20);
    let dev = &ram.dev;
    let throttle = |iops: u32| cg.throttle(dev, "write", iops);
    throttle(THROTTLE[0]);
    let suite = dir.path().join("steady.toml");
    std::fs::write(&suite, SUITE).unwrap();
    // The shell joins the cgroup and then becomes iogauge, so every IO it issues is throttled.
    let script = cg.iogauge(&format!(
        "suite --file '{}' {} --allow-overwrite --json",
        suite.display(),
        dev.dev
    ));
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir.path())
        .env("IOGAUGE_DB", dir.path().join("results.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The JSON document is larger than a pipe holds: read it while stderr is followed.
    let mut stdout = child.stdout.take().unwrap();
    let json = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
        v
    });
    // Each finished round prints "[round k/25] …: N IOPS"; the next round's throttle is set
    // then, before most of that round has run.
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut log = String::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        log.push_str(&line);
        log.push('\n');
        if let Some(k) = line
            .strip_prefix("[round ")
            .and_then(|r| r.split('/').next())
            .and_then(|k| k.parse::<usize>().ok())
        {
            if line.ends_with("IOPS") && k < THROTTLE.len() {
                throttle(THROTTLE[k]);
            }
        }
    }
    let status = child.wait().unwrap();
    let stdout = json.join().unwrap();
    assert!(status.success(), "{log}");
    let doc: Value = serde_json::from_slice(&stdout).unwrap();
    let rounds = &doc["rounds"];
    let iops: Vec<f64> = rounds["iops_per_round"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    eprintln!("IOPS by round: {iops:?}\n{log}");
    let steady = rounds["steady_at_round"]
        .as_u64()
        .expect("steady state reached") as usize;
    // The last change is in round 5: the first window of unchanged rounds is 5–9.
    assert!(
        steady >= 9,
        "steady in round {steady}, before the throttle settled: {iops:?}"
    );
    // (No tighter upper bound: blk-throttle's start-up credit now and then lifts a round by a
    // few percent, and the SNIA test rightly waits for a window without such a trend.)
    // Ground truth: the measurement window ran at the held throttle. blk-throttle lets one or
    // two slices' worth of credit through when a cell starts (about 13 or 26 IOs over a
    // one-second cell here, at 130/s), so a cell measures up to ~40% above the limit.
    let held = f64::from(THROTTLE[4]);
    for v in &iops[steady - 5..steady] {
        assert!(
            (0.8..1.45).contains(&(v / held)),
            "{v} IOPS against {held}: {iops:?}"
        );
    }
    // The early rounds ran at their higher throttles, so the test had something to find.
    assert!(iops[0] > 2.0 * held, "{iops:?}");
    // The result is the window: five rounds folded as repeats.
    let r = &doc["results"][0];
    assert_eq!(r["repeats"].as_array().unwrap().len(), 5);
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["summary"].as_str().unwrap_or("").contains("SNIA PTS"))
        .expect("a steady-state finding");
    assert!(finding["summary"]
        .as_str()
        .unwrap()
        .contains(&format!("round {steady}")));
}

/// The built-in SNIA suites plan as the specification says, and run end to end on a test file.
#[test]
fn snia_suites_run_and_print_the_specifications_tables() {
    let dir = tempfile::tempdir().unwrap();
    let plan = iogauge(dir.path(), &["suite", "snia-iops", "--dry-run"]);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(text.contains("56 cells"), "{text}");
    assert!(text.contains("5 to 25 rounds"), "{text}");
    assert!(text.contains("preconditioning"), "{text}");
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "snia-throughput",
            "--size",
            "64m",
            "--cell-time",
            "200ms",
            "--max-rounds",
            "6",
            "--no-store",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "MiB/s · block",
        "100/0",
        "0/100",
        "Steady state (SNIA PTS)",
        "preconditioned",
    ] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
}

/// snia-latency end to end on a RAM loop device of 512-byte sectors (the suite reads and
/// writes 512 B blocks), with short cells and five rounds: it prints the specification's
/// tables, every cell ran at the specification's load (one thread, one IO in flight) in each
/// of the rounds, rounds were judged, and the range was preconditioned. (snia-iops's 280 cells
/// took 85 s at these lengths here, too long for this suite: its plan is checked above.)
#[test]
fn snia_latency_runs_end_to_end() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let ram = RamLoop::new(64 << 20);
    let dev = &ram.dev.dev;
    let args = [
        "suite",
        "snia-latency",
        dev,
        "--cell-time",
        "100ms",
        "--max-rounds",
        "5",
        "--allow-overwrite",
        "--no-store",
    ];
    let out = iogauge(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    // Columns are as wide as their numbers, which a busy machine makes shorter: the words are
    // matched with their spaces squeezed.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "IOPS · block 100/0 65/35 0/100",
        "mean latency · block",
        "max latency · block",
        "1 thread × 1 in flight",
        "Steady state (SNIA PTS)",
        "preconditioned",
    ] {
        assert!(words.contains(want), "{want}:\n{text}");
    }
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let doc = json_of(&iogauge(dir.path(), &with_json));
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 9);
    for r in results {
        assert_eq!(r["workload"]["threads"], 1, "{}", r["workload"]);
        assert_eq!(r["workload"]["iodepth"], 1, "{}", r["workload"]);
        assert_eq!(r["repeats"].as_array().unwrap().len(), 5);
    }
    let bs: std::collections::BTreeSet<u64> = results
        .iter()
        .map(|r| r["workload"]["bs"].as_u64().unwrap())
        .collect();
    assert_eq!(bs, [512, 4096, 8192].into());
    // Issue 37: five 100 ms rounds rarely settle, and a window that did not settle is drift,
    // said once by `steady`: none of its rounds is an outlier then.
    let kinds: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    if doc["rounds"]["steady_at_round"].is_null() {
        assert!(!kinds.contains(&"outlier"), "{kinds:?}");
        assert!(kinds.contains(&"steady"), "{kinds:?}");
    }
}
