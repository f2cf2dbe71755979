//! Changes of regime against kernel-made ground truth (issue 28): a blkio throttle changed by
//! the test at a moment it picks while iogauge runs, with the device's own read counter telling
//! exactly how many IOs came before the change. Both levels are throttles, so what the machine's
//! CPUs are busy with does not move them.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};

/// Reads completed on `dev` so far (the kernel's counter).
fn reads(dev: &LoopDev) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

/// Waits until `dev` has completed `n` more reads than `from`; the count then.
fn wait_reads(dev: &LoopDev, from: u64, n: u64) -> u64 {
    wait_until("the device's reads", WATCHDOG, || reads(dev) >= from + n);
    reads(dev)
}

/// Runs a 6-second random read of `dev` in `cg` with the throttle at `first` IOPS; once `at`
/// reads have completed, `change` sets the throttle (the moment is the test's); returns the
/// run's document and the reads completed before the change.
fn run_with_change(
    cg: &Blkio,
    ram: &RamLoop,
    first: u32,
    at: u64,
    change: &dyn Fn(),
) -> (Value, u64) {
    cg.throttle(&ram.dev, "read", first);
    let start = reads(&ram.dev);
    let mut child = Command::new("sh")
        .args([
            "-c",
            &cg.iogauge(&format!(
                "run {} --rw randread --iodepth 4 --time 6s --json --no-store",
                ram.dev.dev
            )),
        ])
        .current_dir(ram.dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(ram.dir.path()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let before = wait_reads(&ram.dev, start, at) - start;
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

fn regimes(doc: &Value) -> Vec<Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "regime")
        .cloned()
        .collect()
}

fn rig(tag: &str) -> Option<(Blkio, RamLoop)> {
    if !is_root() {
        skip("needs root");
        return None;
    }
    let Some(cg) = Blkio::new(tag) else {
        skip("needs cgroup v1 blkio");
        return None;
    };
    Some((cg, RamLoop::new(64 << 20)))
}

/// A burst bucket running out: 4,000 IOPS until 8,000 reads, then 1,000. The finding's time,
/// levels and amount above the later rate against the truth.
#[test]
fn a_lowered_throttle_is_a_regime_with_its_size() {
    let Some((cg, ram)) = rig("regime-fall") else {
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
    let above = e["ios_above_later"].as_f64().unwrap();
    let truth_above = before as f64 - 1000.0 * truth_at;
    assert!(
        (above / truth_above - 1.0).abs() <= 0.1,
        "{above} IOs above the later rate, truth {truth_above}"
    );
    assert!(f["summary"].as_str().unwrap().contains("fell from"));
}

/// A throttle lifted: 1,000 IOPS, then 4,000 — named as a rise.
#[test]
fn a_raised_throttle_is_a_rise() {
    let Some((cg, ram)) = rig("regime-rise") else {
        return;
    };
    let (doc, _) = run_with_change(&cg, &ram, 1000, 2500, &|| {
        cg.throttle(&ram.dev, "read", 4000)
    });
    let found = regimes(&doc);
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    assert!(found[0]["summary"].as_str().unwrap().contains("rose"));
}

/// Near misses: a steady throttle, and a dip that comes back (a stall's shape), name no
/// regime.
#[test]
fn steady_runs_and_dips_name_no_regime() {
    let Some((cg, ram)) = rig("regime-none") else {
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
