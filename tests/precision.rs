//! The precision suite (issue 23): built-in suites on clean targets give no warning. A warning
//! is only worth reading if a clean run on a clean device never shows one; each target here is
//! RAM-backed, so no other test's disk traffic is in its counters:
//! a loop device with direct IO over /dev/shm, zram (this machine's stand-in for NVMe), and a
//! file on ext4 and on xfs over such loop devices.
//!
//! `suite quick`, `suite fsync` and `suite mixes` run 1 s cells, long enough for the device
//! findings' minimum evidence (1,000 IOs, 0.5 s), so split, merged, absorbed, other-io and queue
//! are judged here, not skipped; `suite quick` and a matrix run at their own cell lengths, where
//! steady state is judged too, and one `suite quick` runs at its own cell length beside two busy
//! loops.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The tests take turns: each keeps both CPUs busy, and a worker thread starved of CPU for
/// half a second reaps nothing, which reads as a stall of the device. The two with 1 s cells
/// now pass side by side (4 runs of 4, 124-125 s for both against 246 s in turn; before iogauge
/// read the device's IOs in flight they failed 4 of 4 on xfs with a loop device's worker
/// waiting for a CPU, tests/stall.rs). Given a shared turn (a read lock; the other two a write
/// lock) they did not overlap in a fresh-clone CI (run 98): a test waiting for its turn alone
/// was queued between them, file systems from 0 to 128 s and raw devices from 357 to 455 s of
/// the file's time, and nothing was gained. So they take turns with the others, as before.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Warnings (and errors) of a run's document about the device, as "kind: summary" lines. A
/// stall or a change of regime the run names as the CPU's (other work took it: true on a busy
/// test machine, and tested against a busy loop the test makes in tests/cpu_contention.rs and
/// below), or as possibly the CPU's on a machine with no idle CPU, is not about the device.
fn warnings(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .filter(|f| {
            let cpus = f["evidence"].get("cpu_wait").is_some()
                || f["evidence"].get("cpu_wait_after").is_some()
                || f["evidence"].get("others_cpus_after").is_some()
                || f["evidence"].get("others_cpus").is_some();
            if cpus {
                eprintln!("named as the CPU's: {}: {}", f["kind"], f["summary"]);
            }
            !cpus
        })
        // The evidence too: what a failure on another machine needs to be understood.
        .map(|f| format!("{}: {} {}", f["kind"], f["summary"], f["evidence"]))
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
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let _turn = hold(&ONE_AT_A_TIME);
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
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let _turn = hold(&ONE_AT_A_TIME);
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

/// The precision suite at the cells' own lengths (issue 37), where the one-second cells above
/// judge no steady state (it takes ten intervals): `suite quick` as README runs it (5 s cells)
/// on a raw RAM loop device, and a matrix of four 10 s cells on zram and on xfs over a
/// 512-byte-sector RAM loop device: random reads and writes of 4 KiB and 1 MiB, eight threads
/// each, the cells whose CPU contention moves a rate most (the one-thread cells of the same
/// matrix ran here too until issue 57: 80 s more of a quiet machine). None names a warning:
/// nothing but iogauge and the file system touched the device. On these devices a rate that moves is the CPU's (its `regime` and
/// `steady` are infos, docs/findings.md); before that, `write 8K + fdatasync` on the raw RAM
/// loop rose 49% mid-cell on a quiet machine in CI and was named a cache, and `randread 64K` on
/// xfs "still drifting" −20%.
#[test]
fn suites_at_their_own_cell_lengths_give_no_warning() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let _turn = hold(&ONE_AT_A_TIME);
    let matrix = "[defaults]\ntime = \"10s\"\nsize = \"1GiB\"\n\n[[group]]\ntitle = \"m\"\n\
                  layout = \"matrix\"\nrw = [\"randread\", \"randwrite\"]\n\
                  bs = [\"4k\", \"1m\"]\nthreads = [8]\niodepth = [1]\n\
                  options = [\"sizes\"]\n";
    // (target, sector size of its RAM loop device, suite, its cells); zram has no loop device.
    let plan = [
        ("raw", 512, "quick", 0),
        ("zram", 4096, "matrix", 4),
        ("xfs", 512, "matrix", 4),
    ];
    for (kind, sector, name, want) in plan {
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        let (_img, dev, _zram, _mount);
        let target = match kind {
            "raw" => {
                (_img, dev) = ram_loop(2 << 30, sector);
                dev.dev.clone()
            }
            "zram" => {
                let Some(z) = Zram::new("2G") else { return };
                let d = z.dev();
                _zram = z;
                d
            }
            fs => {
                if !have(&format!("mkfs.{fs}")) {
                    skip(&format!("needs mkfs.{fs}"));
                    return;
                }
                (_img, dev) = ram_loop(2 << 30, sector);
                sh(&format!("mkfs.{fs}"), &["-q", "-f", &dev.dev]);
                _mount = Mount::new(&dev.dev, &mnt, "rw");
                mnt.to_str().unwrap().to_string()
            }
        };
        let file = suite_file(dir.path(), matrix);
        let mut args = vec!["suite"];
        match name {
            "matrix" => args.extend(["--file", file.as_str()]),
            _ => args.push(name),
        }
        args.extend([target.as_str(), "--repeat", "1", "--json", "--no-store"]);
        if matches!(kind, "raw" | "zram") {
            args.push("--allow-overwrite");
        }
        let doc = json_of(&iogauge(dir.path(), &args));
        let cells = doc["results"].as_array().map_or(0, Vec::len);
        assert!(
            cells > 0 && (want == 0 || cells == want),
            "suite {name} on {kind}: {cells} cells"
        );
        let w = warnings(&doc);
        assert!(w.is_empty(), "suite {name} on {kind}:\n{}", w.join("\n"));
    }
}

/// A RAM-backed loop device with direct IO and `sector`-byte logical blocks (512 or 4,096: a
/// 4Kn disk), detached on drop. Its image is written whole (zeros) first: over a sparse one,
/// each first write to a page allocates it — a thin-provisioned device whose writes speed up
/// as it fills (`suite quick` rose 152% and 48% there, true of such a device, and no clean
/// one); over an image fallocate had reserved, a write cell still rose 172%.
fn ram_loop(size: u64, sector: u32) -> (tempfile::TempDir, LoopDev) {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let dev = blank_loop(dir.path(), "d.img", size, sector);
    let of = format!("of={}", dev.file.display());
    let count = format!("count={}", size >> 20);
    sh(
        "dd",
        &[
            "if=/dev/zero",
            &of,
            "bs=1M",
            &count,
            "conv=notrunc",
            "status=none",
        ],
    );
    (dir, dev)
}

/// `suite quick` on a RAM loop device while two busy loops keep both CPUs taken (issue 37):
/// whatever is named is named as the CPU's — a stall or a change of rate that iogauge's own
/// threads' waiting explains, or one on a machine with no idle CPU, where the loop device's
/// kernel workers waited unseen (cells there rose by up to 5× a second or two in, as the
/// scheduler came round to them) — never as the device's. The test keeps the quiet machine but
/// runs at the usual priority, as iogauge and busy loops do on a user's machine (`at_usual_priority`).
#[test]
fn a_busy_machine_gets_only_findings_that_name_the_cpu() {
    let _quiet = quiet_turn(module_path!()).at_usual_priority();
    needs_root!();
    let _turn = hold(&ONE_AT_A_TIME);
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
