//! Changes of regime against kernel-made ground truth (issue 28): a blkio throttle changed by
//! the test at a moment it picks while iogauge runs, with the device's own read counter telling
//! exactly how many IOs came before the change. Both levels are throttles, so what the machine's
//! CPUs are busy with does not move them. (The other way round, a fall that other work on
//! iogauge's CPU made, is tests/cpu_contention.rs: its busy loop would disturb these.)

use crate::common;

use common::*;
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};

/// IOs of `which` ("read" or "write") completed on `dev` so far (the kernel's counter).
fn ios(dev: &LoopDev, which: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
    let field = if which == "read" { 0 } else { 4 };
    stat.split_whitespace().nth(field).unwrap().parse().unwrap()
}

fn reads(dev: &LoopDev) -> u64 {
    ios(dev, "read")
}

/// Waits until `dev` has completed `n` more IOs of `which` than `from`; the count then.
fn wait_ios(dev: &LoopDev, which: &str, from: u64, n: u64) -> u64 {
    wait_until("the device's counter", WATCHDOG, || {
        ios(dev, which) >= from + n
    });
    ios(dev, which)
}

fn wait_reads(dev: &LoopDev, from: u64, n: u64) -> u64 {
    wait_ios(dev, "read", from, n)
}

/// One run under a changed throttle: `which` ("read" or "write") limited to `first` IOPS, and
/// once `at` IOs of it have completed, `change` runs (the moment is the test's).
struct Change<'a> {
    which: &'a str,
    /// iogauge's arguments after the device.
    args: &'a str,
    first: u32,
    at: u64,
}

/// Runs `iogauge run DEV ARGS --json` in `cg`; returns the run's document and the IOs
/// completed before the change.
fn run_changed(cg: &Blkio, ram: &RamLoop, c: &Change, change: &dyn Fn()) -> (Value, u64) {
    cg.throttle(&ram.dev, c.which, c.first);
    let start = ios(&ram.dev, c.which);
    let mut child = Command::new("sh")
        .args([
            "-c",
            &cg.iogauge(&format!("run {} {} --json --no-store", ram.dev.dev, c.args)),
        ])
        .current_dir(ram.dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(ram.dir.path()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let before = wait_ios(&ram.dev, c.which, start, c.at) - start;
    change();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    (serde_json::from_str(&out).unwrap(), before)
}

/// A 6-second random read of `dev` with the throttle at `first` IOPS and `change` after `at`
/// reads.
fn run_with_change(
    cg: &Blkio,
    ram: &RamLoop,
    first: u32,
    at: u64,
    change: &dyn Fn(),
) -> (Value, u64) {
    let c = Change {
        which: "read",
        args: "--rw randread --iodepth 4 --time 6s",
        first,
        at,
    };
    run_changed(cg, ram, &c, change)
}

fn regimes(doc: &Value) -> Vec<Value> {
    findings_of(doc, "regime")
}

/// A burst bucket running out: 4,000 IOPS until 8,000 reads, then 1,000. The finding's time,
/// levels and amount above the later rate against the truth.
#[test]
fn a_lowered_throttle_is_a_regime_with_its_size() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("regime-fall") else {
        return;
    };
    let (doc, before) = run_with_change(&cg, &ram, 4000, 8000, &|| {
        cg.throttle(&ram.dev, "read", 1000)
    });
    let found = regimes(&doc);
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    let f = &found[0];
    eprintln!("user sees: {}", f["summary"]);
    let e = &f["evidence"];
    let (at, hi, lo) = (
        e["change_s"].as_f64().unwrap(),
        e["before_iops"].as_f64().unwrap(),
        e["after_iops"].as_f64().unwrap(),
    );
    // The truth: the reads the kernel counted before the change, at the first throttle's rate.
    let truth_at = before as f64 / 4000.0;
    eprintln!("truth: {before} reads before the change, at {truth_at:.2} s; 4,000 then 1,000 IOPS");
    assert!(
        (at - truth_at).abs() <= 0.5,
        "change at {at} s, truth {truth_at:.2} s"
    );
    assert!((hi / 4000.0 - 1.0).abs() <= 0.05, "before {hi}");
    assert!((lo / 1000.0 - 1.0).abs() <= 0.05, "after {lo}");
    assert!(f["summary"].as_str().unwrap().contains("fell from"));
    if on_a_saturated_machine(f) {
        return;
    }
    let above = e["ios_above_later"].as_f64().unwrap();
    let truth_above = before as f64 - 1000.0 * truth_at;
    assert!(
        (above / truth_above - 1.0).abs() <= 0.1,
        "{above} IOs above the later rate, truth {truth_above}"
    );
    // The near miss of the CPU's fall below: the threads slept on the throttle, not waited.
    assert!(!f["summary"].as_str().unwrap().contains("CPU"), "{f:#}");
}

/// A throttle lifted: 1,000 IOPS, then 4,000 — named as a rise.
#[test]
fn a_raised_throttle_is_a_rise() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("regime-rise") else {
        return;
    };
    let (doc, before) = run_with_change(&cg, &ram, 1000, 2500, &|| {
        cg.throttle(&ram.dev, "read", 4000)
    });
    let found = regimes(&doc);
    // The IOs of each 100 ms, beside the findings: a run that names no rise shows where the
    // change fell in it (CI run 80 named none, and printed only the empty findings).
    let fine = &doc["results"][0]["fine"];
    assert_eq!(
        found.len(),
        1,
        "{:#}\n{before} reads before the change; ios per bin {}\ncpu run {}\ncpu wait {}",
        doc["findings"],
        fine["ios"],
        fine["cpu_run"],
        fine["cpu_wait"]
    );
    assert!(found[0]["summary"].as_str().unwrap().contains("rose"));
}

/// Near misses: a steady throttle, and a dip that comes back (a stall's shape), name no
/// regime.
#[test]
fn steady_runs_and_dips_name_no_regime() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("regime-none") else {
        return;
    };
    let (doc, _) = run_with_change(&cg, &ram, 2000, 4000, &|| {});
    assert!(regimes(&doc).is_empty(), "{:#}", doc["findings"]);
    let (doc, _) = run_with_change(&cg, &ram, 2000, 4000, &|| {
        cg.throttle(&ram.dev, "read", 100);
        let from = reads(&ram.dev);
        // A dip of about 1.5 s (150 reads at 100 IOPS), then back to the level before.
        wait_reads(&ram.dev, from, 150);
        cg.throttle(&ram.dev, "read", 2000);
    });
    assert!(regimes(&doc).is_empty(), "{:#}", doc["findings"]);
}

/// The finding's time and levels against the truth: `before` IOs at `hi` IOPS, then `lo`.
fn check_against_truth(f: &Value, before: u64, hi_truth: f64, lo_truth: f64) {
    let e = &f["evidence"];
    let (at, hi, lo) = (
        e["change_s"].as_f64().unwrap(),
        e["before_iops"].as_f64().unwrap(),
        e["after_iops"].as_f64().unwrap(),
    );
    let truth_at = before as f64 / hi_truth;
    eprintln!("truth: {before} IOs before the change, at {truth_at:.2} s; {hi_truth} then {lo_truth} IOPS");
    assert!(
        (at - truth_at).abs() <= 0.5,
        "change at {at} s, truth {truth_at:.2} s"
    );
    assert!((hi / hi_truth - 1.0).abs() <= 0.05, "before {hi}");
    assert!((lo / lo_truth - 1.0).abs() <= 0.05, "after {lo}");
}

/// Whether the regime `f` was named on a machine with no idle CPU, checked against its own
/// evidence: the product's promise there is the change's time and levels, with the CPU named
/// as a cause as likely as the device — and no size of a burst (issue 36: with two busy loops
/// beside the tests, the kernel threads serving a RAM loop's IO wait for a CPU too). On a quiet
/// machine, as in CI's quiet tests, it is false and the size is checked against the truth.
fn on_a_saturated_machine(f: &Value) -> bool {
    let e = &f["evidence"];
    let Some(others) = e["others_cpus_before"].as_f64() else {
        return false;
    };
    let summary = f["summary"].as_str().unwrap();
    assert!(others >= 0.5 && summary.contains("no idle CPU"), "{f:#}");
    assert!(e.get("ios_above_later").is_none(), "{f:#}");
    true
}

/// Runs `c` from 4,000 IOPS and lowers its throttle to 1,000 at the change: the document, its
/// one regime (checked against the truth) and the IOs the kernel counted before the change.
fn falls_to_1000(cg: &Blkio, ram: &RamLoop, c: &Change) -> (Value, Value, u64) {
    let (doc, before) = run_changed(cg, ram, c, &|| cg.throttle(&ram.dev, c.which, 1000));
    let found = regimes(&doc);
    // What the threads ran and waited each interval, printed first: a fall put down to the
    // CPU under load says what it was judged on (CI run 79 printed only the summary).
    let fine = &doc["results"][0]["fine"];
    eprintln!("cpu run {}\ncpu wait {}", fine["cpu_run"], fine["cpu_wait"]);
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    eprintln!("user sees: {}", found[0]["summary"]);
    check_against_truth(&found[0], before, 4000.0, 1000.0);
    let f = found[0].clone();
    (doc, f, before)
}

/// An SLC write cache filling: random 4 KiB writes at 4,000 IOPS until 32 MiB were written
/// (8,192 writes the device counted), then 1,000. The finding says how many bytes went in
/// above the later rate: the cache's size, against the truth.
#[test]
fn a_write_cache_filling_after_known_bytes_is_a_regime_with_its_size() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("regime-write") else {
        return;
    };
    let c = Change {
        which: "write",
        args: "--rw randwrite --bs 4k --iodepth 4 --time 6s --allow-overwrite",
        first: 4000,
        at: 8192,
    };
    let (_, f, before) = falls_to_1000(&cg, &ram, &c);
    if on_a_saturated_machine(&f) {
        return;
    }
    let truth_bytes = (before as f64 - 1000.0 * before as f64 / 4000.0) * 4096.0;
    let bytes = f["evidence"]["bytes_above_later"]
        .as_f64()
        .unwrap_or_else(|| panic!("a fall the throttle made, named without its size: {f:#}"));
    assert!(
        (bytes / truth_bytes - 1.0).abs() <= 0.1,
        "{bytes} bytes above the later rate, truth {truth_bytes}"
    );
}

/// `--until-change`: the run stops once the lowered level has held, well before its limit,
/// with the regime found; the plan said it may take up to the limit.
#[test]
fn until_change_stops_once_the_later_level_holds() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("regime-until") else {
        return;
    };
    let c = Change {
        which: "read",
        args: "--rw randread --iodepth 4 --until-change 60s",
        first: 4000,
        at: 8000,
    };
    let (doc, _, _) = falls_to_1000(&cg, &ram, &c);
    let r = &doc["results"][0];
    let measured = r["runtime_s"].as_f64().unwrap();
    // Stopped by the rule: the change at ~2 s, then at least 5 s at the later level; not at
    // the 60 s limit.
    assert!(measured < 30.0, "ran {measured} s of 60 s");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("--until-change"), "{notes}");
}

/// A near miss for `--until-change`: a steady run goes on to its limit, with no regime.
#[test]
fn until_change_runs_a_steady_device_to_its_limit() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("regime-until-steady") else {
        return;
    };
    let c = Change {
        which: "read",
        args: "--rw randread --iodepth 4 --until-change 4s",
        first: 2000,
        at: 1000,
    };
    let (doc, _) = run_changed(&cg, &ram, &c, &|| {});
    assert!(regimes(&doc).is_empty(), "{:#}", doc["findings"]);
    let measured = doc["results"][0]["runtime_s"].as_f64().unwrap();
    assert!((measured - 4.0).abs() < 0.5, "ran {measured} s of 4 s");
}

/// `--until-change` and `--baseline` where they would do nothing, or contradict another
/// option, are refused before anything runs; where they apply, the plan says how long.
#[test]
fn until_change_and_baseline_are_refused_where_they_do_nothing() {
    let _quiet = quiet_turn(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (args, needle) in [
        (
            &["run", "--until-change", "1m", "--time", "5s"][..],
            "drop --time",
        ),
        (&["run", "--until-change", "0"], "runs nothing"),
        (
            &["run", "--until-change", "1m", "--latency-target", "p99=2ms"],
            "--latency-target",
        ),
        (
            &["suite", "snia-iops", "--until-change", "1m", "--dry-run"],
            "rounds decide",
        ),
        (
            &["suite", "quick", "--until-change", "1m", "--until-stable"],
            "give one",
        ),
        (
            &[
                "suite",
                "quick",
                "--until-change",
                "1m",
                "--cell-time",
                "5s",
            ],
            "drop --cell-time",
        ),
        (&["run", "--baseline", "--json"], "--baseline"),
    ] {
        let out = iogauge(d, args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {needle:?} in {err}");
    }
    let out = iogauge(
        d,
        &[
            "run",
            "--engine",
            "null",
            "--until-change",
            "10m",
            "--dry-run",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let plan = String::from_utf8_lossy(&out.stdout).to_string() + &stderr_of(&out);
    assert!(plan.contains("up to 10 min"), "{plan}");
}

/// `--baseline` on a run whose rate changed regime gives the later level in the summary and
/// says so; the stored document keeps the average.
#[test]
fn baseline_summary_gives_the_later_level() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("regime-baseline") else {
        return;
    };
    cg.throttle(&ram.dev, "read", 4000);
    let start = reads(&ram.dev);
    let db = ram.dir.path().join("r.db");
    let mut child = Command::new("sh")
        .args([
            "-c",
            &cg.iogauge(&format!(
                "run {} --rw randread --iodepth 4 --time 6s --baseline --db {}",
                ram.dev.dev,
                db.display()
            )),
        ])
        .current_dir(ram.dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(ram.dir.path()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_reads(&ram.dev, start, 8000);
    cg.throttle(&ram.dev, "read", 1000);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let shown = iogauge(
        ram.dir.path(),
        &["show", "last", "--json", "--db", db.to_str().unwrap()],
    );
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let found = regimes(&doc);
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    if on_a_saturated_machine(&found[0]) {
        // A change the CPU may have made is no level the device held: the averages stand.
        assert!(
            out.contains("--baseline: no result fell to a later level the device held"),
            "{out}"
        );
        return;
    }
    assert!(
        out.contains("--baseline: IOPS and bandwidth are the later level"),
        "{out}"
    );
    let iops = doc["results"][0]["iops"].as_f64().unwrap();
    // The stored average is between the two levels; the summary's line is the later one.
    assert!(iops > 1100.0, "stored {iops}");
    let shown: f64 = out
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("IOPS"))
        .and_then(|l| l.split_whitespace().next())
        .map(|n| n.replace(',', "").parse().unwrap())
        .unwrap_or_else(|| panic!("no IOPS line in {out}"));
    assert!(
        (shown / 1000.0 - 1.0).abs() <= 0.05,
        "summary says {shown} IOPS"
    );
}

/// The one steady finding of `doc`'s result: its severity, and its evidence.
fn steady_of(doc: &Value) -> (String, Value) {
    let found = findings_of(doc, "steady");
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    eprintln!("user sees: {}", found[0]["summary"]);
    (
        found[0]["severity"].as_str().unwrap().to_owned(),
        found[0]["evidence"].clone(),
    )
}

/// Steady state against the kernel (issue 37): a throttle the test lowers by 150 reads/s for
/// each second's worth of reads, from 2,000 to 650: the rate really drifts, and the last five
/// seconds sit far below the five before — "still drifting", a warning. (Steps of 100, to
/// 1,100, left the two windows 3.4 standard errors apart in CI beside other tests, under the
/// rule's 4.0: the throttle's own grain is a few tens of reads a second whatever the step.) The near miss: a
/// throttle swinging between 2,000 and 1,400 every two seconds around one level. Its one-second
/// intervals span more than SNIA's 20% (the rule for whole rounds, which alone called every RAM
/// device's cells drifting), but the level held: an info, no warning.
#[test]
fn a_falling_throttle_is_drift_and_a_swinging_one_is_not() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("steady-drift") else {
        return;
    };
    let c = Change {
        which: "read",
        args: "--rw randread --iodepth 4 --time 12s",
        first: 2000,
        at: 2000,
    };
    // Nine steps of one second's reads each (11 s in all); then 650 IOPS until the run's end.
    let (doc, _) = run_changed(&cg, &ram, &c, &|| {
        for k in 1..=9u32 {
            let rate = 2000 - 150 * k;
            cg.throttle(&ram.dev, "read", rate);
            wait_reads(&ram.dev, reads(&ram.dev), u64::from(rate));
        }
    });
    let (severity, e) = steady_of(&doc);
    assert_eq!(severity, "warning", "{e:#}");
    let (before, after) = (
        e["before_mean_iops"].as_f64().unwrap(),
        e["window_mean_iops"].as_f64().unwrap(),
    );
    assert!(after < 0.9 * before, "{after} IOPS after {before}");

    // Two seconds at 2,000, two at 1,400, three times over (12 s); then 1,400 until the end.
    let c = Change {
        args: "--rw randread --iodepth 4 --time 14s",
        at: 4000,
        ..c
    };
    let (doc, _) = run_changed(&cg, &ram, &c, &|| {
        for k in 1..=5u32 {
            let rate = if k % 2 == 1 { 1400 } else { 2000 };
            cg.throttle(&ram.dev, "read", rate);
            wait_reads(&ram.dev, reads(&ram.dev), 2 * u64::from(rate));
        }
    });
    let (severity, e) = steady_of(&doc);
    assert!(
        e["excursion_frac"].as_f64().unwrap() > 0.2,
        "the near miss must fail SNIA's range at one-second grain: {e:#}"
    );
    assert_eq!(severity, "info", "{e:#}");
}
