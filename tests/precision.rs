//! The precision suite (issue 23): built-in suites on clean targets give no warning. A warning
//! is only worth reading if a clean run on a clean device never shows one; each target here is
//! RAM-backed, so no other test's disk traffic is in its counters:
//! a loop device with direct IO over /dev/shm, zram (this machine's stand-in for NVMe), and a
//! file on ext4 and on xfs over such loop devices.
//!
//! Cells run 1 s each, long enough for the device findings' minimum evidence (1,000 IOs, 0.5 s),
//! so split, merged, absorbed, other-io and queue are judged here, not skipped.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The two tests take turns: each keeps both CPUs busy, and a worker thread starved of CPU
/// for half a second reaps nothing, which reads as a stall of the device.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Warnings (and errors) of a run's document about the device, as "kind: summary" lines. A
/// stall or a change of regime the run names as the CPU's (other work took it: true on a busy
/// test machine, and tested against a busy loop the test makes in tests/cpu_contention.rs) is
/// not about the device.
fn warnings(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .filter(|f| {
            let cpus = f["evidence"].get("cpu_wait").is_some()
                || f["evidence"].get("cpu_wait_after").is_some();
            if cpus {
                eprintln!("named as the CPU's: {}: {}", f["kind"], f["summary"]);
            }
            !cpus
        })
        .map(|f| format!("{}: {}", f["kind"], f["summary"]))
        .collect()
}

fn suite(dir: &Path, name: &str, target: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "suite",
        name,
        target,
        "--cell-time",
        "1s",
        "--repeat",
        "1",
        "--json",
        "--no-store",
    ];
    args.extend_from_slice(extra);
    json_of(&iogauge(dir, &args))
}

#[test]
fn suites_on_raw_ram_devices_give_no_warning() {
    needs_root!();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let ram = RamLoop::new(256 << 20);
    // A zram device of the test's own: a zram0 someone else uses is left alone.
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    let zdev = zram.dev();
    for target in [ram.dev.dev.as_str(), zdev.as_str()] {
        for name in ["quick", "fsync", "mixes"] {
            let doc = suite(dir.path(), name, target, &["--allow-overwrite"]);
            let w = warnings(&doc);
            assert!(w.is_empty(), "suite {name} on {target}:\n{}", w.join("\n"));
        }
    }
}

#[test]
fn suites_on_file_systems_give_no_warning() {
    needs_root!();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for fs in ["ext4", "xfs"] {
        if !have(&format!("mkfs.{fs}")) {
            skip(&format!("needs mkfs.{fs}"));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        // xfs needs 300 MiB at least.
        let ram = RamLoop::new(512 << 20);
        sh(&format!("mkfs.{fs}"), &["-q", &ram.dev.dev]);
        let mnt = dir.path().join("mnt");
        let _m = Mount::new(&ram.dev.dev, &mnt, "rw");
        for name in ["quick", "fsync", "mixes"] {
            let doc = suite(dir.path(), name, mnt.to_str().unwrap(), &["--size", "128m"]);
            let w = warnings(&doc);
            assert!(w.is_empty(), "suite {name} on {fs}:\n{}", w.join("\n"));
        }
    }
}

/// A RAM-backed loop device with direct IO and `sector`-byte logical blocks (512 or 4,096: a
/// 4Kn disk), detached on drop.
fn ram_loop(size: u64, sector: u32) -> (tempfile::TempDir, LoopDev) {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let img = dir.path().join("d.img");
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let dev = sh(
        "losetup",
        &[
            "-f",
            "--show",
            "--direct-io=on",
            "--sector-size",
            &sector.to_string(),
            img.to_str().unwrap(),
        ],
    );
    let file = std::fs::canonicalize(&img).unwrap();
    (dir, LoopDev { dev, file })
}

/// Runs `suite quick` (14 cells of 5 s) and a dozen cells of `suite matrix` at its own 10 s a
/// cell — long enough for steady state to be judged, which one-second cells never are — on
/// `target`, and returns the warnings of both, each with its suite.
fn at_real_length(dir: &Path, target: &str, extra: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for suite in [
        vec!["suite", "quick", target],
        vec![
            "suite",
            "matrix",
            target,
            "--sizes",
            "4k,64k,1m",
            "--threads",
            "1,10",
        ],
    ] {
        let mut args = suite.clone();
        args.extend_from_slice(&["--repeat", "1", "--json", "--no-store"]);
        args.extend_from_slice(extra);
        let doc = json_of(&iogauge(dir, &args));
        assert!(
            doc["results"].as_array().is_some_and(|r| r.len() >= 12),
            "{}: {doc:#}",
            suite[1]
        );
        out.extend(
            warnings(&doc)
                .into_iter()
                .map(|w| format!("{}: {w}", suite[1])),
        );
    }
    out
}

/// The precision suite at real length (issue 37): the built-in suites at their own cell
/// lengths, on raw RAM loop devices of 4,096- and 512-byte sectors, zram, and files on ext4,
/// xfs and btrfs (over 512-byte, 4Kn and 4Kn devices): no warning.
#[test]
fn suites_at_their_own_length_give_no_warning() {
    needs_root!();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for fs in ["ext4", "xfs", "btrfs"] {
        if !have(&format!("mkfs.{fs}")) {
            skip(&format!("needs mkfs.{fs}"));
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut found = Vec::new();
    for sector in [4096, 512] {
        let (_img, dev) = ram_loop(512 << 20, sector);
        for w in at_real_length(dir.path(), &dev.dev, &["--allow-overwrite"]) {
            found.push(format!("raw {sector}-byte sectors: {w}"));
        }
    }
    let Some(zram) = Zram::new("512M") else {
        return;
    };
    for w in at_real_length(dir.path(), &zram.dev(), &["--allow-overwrite"]) {
        found.push(format!("zram: {w}"));
    }
    for (fs, sector) in [("ext4", 512), ("xfs", 4096), ("btrfs", 4096)] {
        let (_img, dev) = ram_loop(1 << 30, sector);
        let force = if fs == "ext4" { "-F" } else { "-f" };
        sh(&format!("mkfs.{fs}"), &["-q", force, &dev.dev]);
        let mnt = dir.path().join(format!("mnt-{fs}"));
        let _m = Mount::new(&dev.dev, &mnt, "rw");
        for w in at_real_length(dir.path(), mnt.to_str().unwrap(), &["--size", "256m"]) {
            found.push(format!("{fs} ({sector}-byte sectors): {w}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// `suite quick` on a RAM loop device while two busy loops keep both CPUs taken: whatever is
/// named is named as the CPU's (a stall or a fall in rate the threads' own waiting for a CPU
/// explains), never as the device's.
#[test]
fn a_busy_machine_gets_only_findings_that_name_the_cpu() {
    needs_root!();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (_img, dev) = ram_loop(512 << 20, 4096);
    let hogs: Vec<Spawned> = (0..2)
        .map(|_| {
            let mut cmd = std::process::Command::new("sh");
            cmd.args(["-c", "echo busy >&2; while :; do :; done"]);
            let mut hog = Spawned::start(cmd);
            hog.wait_for("busy", DEADLINE);
            hog
        })
        .collect();
    let doc = json_of(&iogauge(
        dir.path(),
        &[
            "suite",
            "quick",
            &dev.dev,
            "--allow-overwrite",
            "--repeat",
            "1",
            "--json",
            "--no-store",
        ],
    ));
    drop(hogs);
    let w = warnings(&doc);
    assert!(w.is_empty(), "{}", w.join("\n"));
}
