//! The core numbers against something iogauge does not compute itself: a rate the kernel's
//! blkio throttle sets, a latency a device adds on purpose, the flushes the device counted, and
//! fio measuring the same workload on the same device in the same test. The other tests check
//! that iogauge's numbers agree with each other; these check that they are true.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// These tests measure rates: one at a time, so that neither tool's run shares the machine
/// with another test's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    hold(&ONE_AT_A_TIME)
}

/// A RAM loop device whose image holds random bytes, so that neither tool reads holes.
fn filled_ram_loop(size: u64) -> RamLoop {
    let ram = RamLoop::new(size);
    sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", ram.dev.dev),
            "bs=1M",
            &format!("count={}", size >> 20),
            "oflag=direct",
            "status=none",
        ],
    );
    ram
}

/// The one result of an iogauge run.
fn result(doc: &Value) -> &Value {
    &doc["results"][0]
}

/// iogauge's run of `args` on `target`, as JSON, not stored.
fn iogauge_run(dir: &Path, target: &str, args: &[&str]) -> Value {
    let mut all = vec!["run", target, "--json", "--no-store"];
    all.extend_from_slice(args);
    json_of(&iogauge(dir, &all))
}

/// fio's job as a thread of its one process (`--thread`), as iogauge runs its workers and as
/// bench/ runs fio: like for like. In fio's default, a forked process per job, write 8K +
/// fdatasync under a 2,000 IO/s throttle fell to 480-895 writes/s in 7 of 10 runs beside two
/// busy loops, against 998-1,002 in 10 of 10 as a thread and iogauge's 1,000 each time (and
/// 1,000 either way on a quiet machine); CI run 88 failed there (issue 57).
const FIO_LIKE_FOR_LIKE: &str = "--thread";

/// fio's run of `args` on `target` (one job, direct IO, for `secs` seconds), as its JSON job.
fn fio_run(target: &str, secs: u32, args: &[&str]) -> Value {
    let out = output_within(
        Command::new("fio")
            .args([
                FIO_LIKE_FOR_LIKE,
                "--name=truth",
                &format!("--filename={target}"),
                "--direct=1",
                "--time_based",
                &format!("--runtime={secs}"),
                "--output-format=json",
            ])
            .args(args),
        DEADLINE,
    );
    assert!(
        out.status.success(),
        "fio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("fio's JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    doc["jobs"][0].clone()
}

/// `a` against `b`: within `band` of each other either way (a factor of `band` at most).
fn within(what: &str, a: f64, b: f64, band: f64) {
    assert!(a > 0.0 && b > 0.0, "{what}: iogauge {a}, fio {b}");
    let r = a / b;
    assert!(
        (1.0 / band..=band).contains(&r),
        "{what}: iogauge {a:.0} against fio {b:.0} ({r:.2}×, the band is {:.2}–{band:.2}×)",
        1.0 / band
    );
}

/// IOPS and bandwidth as the kernel's blkio throttle sets them: random reads held at 1,000/s
/// and sequential 1 MiB reads at 32 MiB/s, each measured after a 1 s ramp (the throttle lets a
/// new reader start with a slice already allowed) and with more in flight than the throttle
/// lets through, so the throttle alone sets the rate. The kernel's rate, within what the
/// throttle itself can move in the 3 s measured: one of its 100 ms slices (blk-throttle's
/// `throtl_slice`, HZ/10), whose dispatch may fall either side of the window's edge — 3.3%.
/// (CI, 2026-11-27: 1,022 reads/s under 1,000, outside the 2% this test asked before.)
#[test]
fn iops_and_bandwidth_are_the_throttles() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let _turn = alone();
    let Some(cg) = Blkio::new("truth") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let ram = filled_ram_loop(64 << 20);
    let dev = &ram.dev;
    let run = |args: &str| {
        let out = Command::new("sh")
            .args([
                "-c",
                &cg.iogauge(&format!(
                    "run {} {args} --ramp 1s --time 3s --json --no-store",
                    dev.dev
                )),
            ])
            .current_dir(ram.dir.path())
            .output()
            .unwrap();
        json_of(&out)
    };
    cg.throttle(dev, "read", 1000);
    // One throttle slice's share of the 3 s window.
    let slice = 0.1 / 3.0;
    let doc = run("--rw randread --bs 4k --engine io_uring --iodepth 8");
    let iops = f(&result(&doc)["iops"]);
    assert!(
        (iops / 1000.0 - 1.0).abs() <= slice,
        "{iops} IOPS under a throttle of 1,000 reads/s"
    );
    std::fs::write(
        cg.0.join("blkio.throttle.read_iops_device"),
        format!("{} 0", majmin(dev)),
    )
    .unwrap();
    let bps = 32u64 << 20;
    std::fs::write(
        cg.0.join("blkio.throttle.read_bps_device"),
        format!("{} {bps}", majmin(dev)),
    )
    .unwrap();
    let doc = run("--rw read --bs 1m --engine io_uring --iodepth 4");
    let bw = f(&result(&doc)["bw_bytes"]);
    assert!(
        (bw / bps as f64 - 1.0).abs() <= slice,
        "{:.2} MiB/s under a throttle of 32 MiB/s",
        bw / f64::from(1 << 20)
    );
}

fn majmin(dev: &LoopDev) -> String {
    std::fs::read_to_string(format!("/sys/block/{}/dev", dev.name()))
        .unwrap()
        .trim()
        .to_string()
}

/// Latency against a device that adds a known delay: the fake disk answers every read 5 ms
/// after it arrives. One read at a time can never be faster than that, and fio's mean on the
/// same file is iogauge's.
#[test]
fn latency_is_the_delay_the_device_adds() {
    let _quiet = quiet_turn(module_path!());
    if !can_mount_fakedisk() {
        return;
    }
    let _turn = alone();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("mnt")).unwrap();
    let disk = FakeDisk::mount(
        &d.join("backing.img"),
        &d.join("mnt"),
        16 << 20,
        &["--read-latency", "5"],
    );
    let target = disk.target();
    let target = target.to_str().unwrap();
    // Each tool twice, in turn, and each judged by its lower mean. FUSE's own threads add to
    // the 5 ms, alike for both tools, but beside busy loops some reads wait ~3 ms more for a
    // CPU (5.1 ms and 8–9.9 ms, two modes), and the median fell on either side of the gap:
    // iogauge's 7.9 ms against fio's 5.3 ms, and iogauge's 5.4 ms the next run. The mean moves
    // with the share of slow reads rather than jumping across the gap.
    let (mut ours, mut theirs) = (f64::MAX, f64::MAX);
    for _ in 0..2 {
        let doc = iogauge_run(
            d,
            target,
            &[
                "--rw", "randread", "--bs", "4k", "--engine", "psync", "--time", "2s",
            ],
        );
        let lat = &result(&doc)["lat_ns"];
        // The device's law: no read in under 5 ms.
        let min = f(&lat["min"]);
        assert!(
            min >= 5e6,
            "a read in {min} ns from a device that takes 5 ms"
        );
        ours = ours.min(f(&lat["mean"]));
        let fio = fio_run(
            target,
            2,
            &[
                "--rw=randread",
                "--bs=4k",
                "--ioengine=psync",
                "--iodepth=1",
            ],
        );
        let read = &fio["read"];
        assert!(f(&read["lat_ns"]["min"]) >= 5e6, "fio: {read}");
        theirs = theirs.min(f(&read["clat_ns"]["mean"]));
    }
    eprintln!("lower mean: iogauge {ours} ns, fio {theirs}");
    within(
        "mean read latency (ns), psync, one at a time, 5 ms device",
        ours,
        theirs,
        // Wide enough for a busy machine (1.20× was seen beside two busy loops), narrow enough
        // for a clock or a unit off by a factor of two.
        1.5,
    );
}

/// The syncs iogauge counts are the flushes the device received: on a loop device with a
/// write-back cache each fdatasync of the raw device sends one flush, counted by the kernel in
/// the device's own statistics (/sys/block/DEV/stat, the 16th field). iogauge may send a few
/// of its own before and after the measurement, never fewer than it counts.
#[test]
fn syncs_counted_are_the_flushes_the_device_saw() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let _turn = alone();
    let ram = RamLoop::new(64 << 20);
    let dev = &ram.dev;
    let stat = format!("/sys/block/{}/stat", dev.name());
    let cache =
        std::fs::read_to_string(format!("/sys/block/{}/queue/write_cache", dev.name())).unwrap();
    assert_eq!(
        cache.trim(),
        "write back",
        "a loop device flushes only with a cache"
    );
    let flushes = || -> u64 {
        let s = std::fs::read_to_string(&stat).unwrap();
        s.split_whitespace()
            .nth(15)
            .expect("the kernel counts flushes (Linux 5.5 and later)")
            .parse()
            .unwrap()
    };
    let before = flushes();
    let doc = iogauge_run(
        ram.dir.path(),
        &dev.dev,
        &[
            "--rw",
            "write",
            "--bs",
            "8k",
            "--fdatasync",
            "1",
            "--time",
            "1s",
            "--allow-overwrite",
        ],
    );
    let seen = flushes() - before;
    let counted = result(&doc)["sync"]["count"].as_u64().unwrap();
    assert!(counted > 100, "{counted} syncs in 1 s on a RAM device");
    assert!(
        (counted..=counted + 8).contains(&seen),
        "iogauge counted {counted} fdatasyncs, the device saw {seen} flushes"
    );
}

/// iogauge and fio, the same workload on the same device in the same test, taking turns:
/// random 4 KiB reads one at a time with psync, 32 in flight with io_uring, sequential 1 MiB
/// reads with 4 in flight, and 8 KiB writes each followed by fdatasync. The device is a RAM
/// loop device that the kernel's blkio throttle holds at a rate either tool reaches with room
/// to spare even on a busy machine (and even as a debug build), so both must measure that
/// rate: within 1.25× of each other, which a count off by a factor of two, a rate over the
/// wrong time or a unit slip fails. Unthrottled, on a RAM device, both measure the CPU more
/// than the device, and a busy machine moved the two tools' rates apart by up to 6× here.
#[test]
fn iogauge_and_fio_agree_on_the_same_device() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    needs_tool!("fio");
    let _turn = alone();
    let Some(cg) = Blkio::new("truth-fio") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let ram = filled_ram_loop(256 << 20);
    let dev = &ram.dev;
    let dir = ram.dir.path();
    struct Case {
        what: &'static str,
        ours: &'static str,
        theirs: &'static str,
        /// The throttle: its file and its limit.
        throttle: (&'static str, u64),
        /// Bandwidth rather than IOPS.
        bw: bool,
    }
    let cases = [
        Case {
            what: "randread 4K, psync, QD1, 2,000 reads/s",
            ours: "--rw randread --bs 4k --engine psync",
            theirs: "--rw=randread --bs=4k --ioengine=psync",
            throttle: ("read_iops", 2000),
            bw: false,
        },
        Case {
            what: "randread 4K, io_uring, QD32, 10,000 reads/s",
            ours: "--rw randread --bs 4k --engine io_uring --iodepth 32",
            theirs: "--rw=randread --bs=4k --ioengine=io_uring --iodepth=32",
            throttle: ("read_iops", 10_000),
            bw: false,
        },
        Case {
            // Not 1 MiB: under a bandwidth throttle fio's 1 MiB reads measured 53 and 107 MB/s
            // by turns here, iogauge's 100 MiB/s each time (iops_and_bandwidth_are_the_throttles
            // holds those to the kernel's rate).
            what: "read 128K, io_uring, QD4, 100 MiB/s",
            ours: "--rw read --bs 128k --engine io_uring --iodepth 4",
            theirs: "--rw=read --bs=128k --ioengine=io_uring --iodepth=4",
            throttle: ("read_bps", 100 << 20),
            bw: true,
        },
        Case {
            // The throttle counts each flush as a write: about 1,000 writes/s.
            what: "write 8K + fdatasync, psync, 2,000 writes and flushes/s",
            ours: "--rw write --bs 8k --engine psync --fdatasync 1 --allow-overwrite",
            theirs: "--rw=write --bs=8k --ioengine=psync --fdatasync=1",
            throttle: ("write_iops", 2000),
            bw: false,
        },
    ];
    let in_group = |line: String| {
        let out = output_within(
            Command::new("sh")
                .args(["-c", &line])
                .current_dir(dir)
                .env("IOGAUGE_RUN_DIR", own_run_dir(dir)),
            DEADLINE,
        );
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    for c in &cases {
        let limit = |v: u64| {
            std::fs::write(
                cg.0.join(format!("blkio.throttle.{}_device", c.throttle.0)),
                format!("{} {v}", majmin(dev)),
            )
            .unwrap()
        };
        limit(c.throttle.1);
        // The throttle lets a new reader start with a slice already allowed: both ramp 1 s.
        let doc = in_group(cg.iogauge(&format!(
            "run {} {} --ramp 1s --time 2s --json --no-store",
            dev.dev, c.ours
        )));
        let r = result(&doc);
        let ours = f(if c.bw { &r["bw_bytes"] } else { &r["iops"] });
        let doc = in_group(format!(
            "echo $$ > {}/cgroup.procs && exec fio {FIO_LIKE_FOR_LIKE} --name=truth --filename={} \
             --direct=1 --time_based --ramp_time=1 --runtime=2 --output-format=json {}",
            cg.0.display(),
            dev.dev,
            c.theirs
        ));
        let j = &doc["jobs"][0];
        let side = if c.theirs.starts_with("--rw=write") {
            &j["write"]
        } else {
            &j["read"]
        };
        let theirs = f(if c.bw {
            &side["bw_bytes"]
        } else {
            &side["iops"]
        });
        limit(0);
        eprintln!("{}: iogauge {ours:.0}, fio {theirs:.0}", c.what);
        within(c.what, ours, theirs, 1.25);
    }
}
