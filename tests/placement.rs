//! Where iogauge's IO lands and how it is handed to the kernel, seen from outside iogauge:
//! `--offset` and `--size` by the reads a fake disk logged and the bytes left on a device,
//! `--precondition` by the bytes the device counted written, `--submit-batch` by the
//! io_uring_enter calls strace counted.

use crate::common;

use common::*;
use std::process::Command;

/// Reads stay inside `--offset`..`--offset + --size`: every read the fake disk was asked for
/// (its own log, "OFFSET LENGTH" a line) lies in 4–8 MiB of its 16 MiB, and they reach both
/// quarters of that range, so the range is used, not just respected.
#[test]
fn reads_stay_inside_offset_and_size() {
    if !can_mount_fakedisk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("mnt")).unwrap();
    let log = d.join("reads.log");
    let disk = FakeDisk::mount(
        &d.join("backing.img"),
        &d.join("mnt"),
        16 << 20,
        &["--log-reads", log.to_str().unwrap()],
    );
    let target = disk.target();
    let doc = json_of(&iogauge(
        d,
        &[
            "run",
            target.to_str().unwrap(),
            "--rw",
            "randread",
            "--offset",
            "4m",
            "--size",
            "4m",
            "--time",
            "500ms",
            "--json",
            "--no-store",
        ],
    ));
    let ios = doc["results"][0]["ios"].as_u64().unwrap();
    drop(disk);
    let reads: Vec<(u64, u64)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace().map(|v| v.parse::<u64>().unwrap());
            (w.next().unwrap(), w.next().unwrap())
        })
        .collect();
    assert!(
        reads.len() as u64 >= ios,
        "{} reads logged for {ios} measured",
        reads.len()
    );
    let (lo, hi) = (4u64 << 20, 8u64 << 20);
    for &(at, len) in &reads {
        assert!(
            at >= lo && at + len <= hi,
            "a read of {len} bytes at {at}, outside {lo}..{hi}"
        );
    }
    let mid = (lo + hi) / 2;
    assert!(reads.iter().any(|&(at, _)| at < mid) && reads.iter().any(|&(at, _)| at >= mid));
}

/// `--precondition` writes the range twice and nothing else: the device counted exactly twice
/// the 16 MiB range written during a read run, the range then holds no 4 KiB block of zeros
/// (the data is iogauge's random bytes), and the device's zeros before and after the range are
/// untouched.
#[test]
fn preconditioning_writes_the_range_twice_and_nothing_else() {
    needs_root!();
    let ram = RamLoop::new(64 << 20);
    let dev = &ram.dev;
    let written = || -> u64 {
        let s = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
        let sectors: u64 = s.split_whitespace().nth(6).unwrap().parse().unwrap();
        sectors * 512
    };
    let before = written();
    let doc = json_of(&iogauge(
        ram.dir.path(),
        &[
            "run",
            &dev.dev,
            "--offset",
            "16m",
            "--size",
            "16m",
            "--precondition",
            "--rw",
            "randread",
            "--time",
            "500ms",
            "--allow-overwrite",
            "--json",
            "--no-store",
        ],
    ));
    assert!(doc["results"][0]["ios"].as_u64().unwrap() > 0);
    let mib = 1u64 << 20;
    assert_eq!(
        written() - before,
        2 * 16 * mib,
        "bytes the device counted written"
    );
    let data = std::fs::read(&dev.file).unwrap();
    let zeros = |r: std::ops::Range<usize>| data[r].iter().all(|&b| b == 0);
    let m = mib as usize;
    assert!(zeros(0..16 * m), "bytes before the range were written");
    assert!(zeros(32 * m..64 * m), "bytes after the range were written");
    let blank = data[16 * m..32 * m]
        .chunks(4096)
        .filter(|b| b.iter().all(|&x| x == 0))
        .count();
    assert_eq!(blank, 0, "4 KiB blocks of zeros left inside the range");
}

/// `--submit-batch 1` hands each IO to the kernel on its own (an io_uring_enter call per IO,
/// as fio does), `--submit-batch 16` sixteen at a time: counted by strace, outside iogauge.
#[test]
fn submit_batch_sets_the_system_calls_per_io() {
    needs_root!();
    needs_tool!("strace");
    let dir = tempfile::tempdir().unwrap();
    let ram = RamLoop::new(64 << 20);
    let per_io = |batch: &str| -> f64 {
        let trace = dir.path().join(format!("strace.{batch}"));
        let out = output_within(
            Command::new("strace")
                .args(["-f", "-c", "-e", "trace=io_uring_enter", "-o"])
                .arg(&trace)
                .arg(BIN)
                .args([
                    "run",
                    &ram.dev.dev,
                    "--rw",
                    "randread",
                    "--engine",
                    "io_uring",
                    "--iodepth",
                    "16",
                    "--submit-batch",
                    batch,
                    "--complete-batch",
                    "16",
                    "--time",
                    "500ms",
                    "--json",
                    "--no-store",
                ])
                .current_dir(dir.path())
                .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path())),
            DEADLINE,
        );
        let doc = json_of(&out);
        let ios = doc["results"][0]["ios"].as_u64().unwrap() as f64;
        let summary = std::fs::read_to_string(&trace).unwrap();
        let calls: f64 = summary
            .lines()
            .find(|l| l.trim_end().ends_with("io_uring_enter"))
            .and_then(|l| l.split_whitespace().nth(3))
            .unwrap_or_else(|| panic!("no io_uring_enter in strace's summary:\n{summary}"))
            .parse()
            .unwrap();
        eprintln!("--submit-batch {batch}: {calls} io_uring_enter calls for {ios} IOs");
        calls / ios
    };
    let one = per_io("1");
    assert!(one >= 0.9, "{one:.3} calls per IO with --submit-batch 1");
    let sixteen = per_io("16");
    assert!(
        sixteen <= 0.2,
        "{sixteen:.3} calls per IO with --submit-batch 16"
    );
}

/// A new test file with `--offset` is written from the offset on: the bytes before it are a
/// hole, which the file system allocated nothing for and which reads back as zeros, and the
/// range holds iogauge's data. (fio's `offset=524z` on a scratch file would otherwise need
/// the 131 GiB before its 2 GiB.) Near miss: the same file without an offset is written whole.
#[test]
fn a_new_file_is_written_from_its_offset_on() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let mib = 1u64 << 20;
    let made = |name: &str, offset: &str| {
        let out = iogauge(
            dir.path(),
            &[
                "run",
                name,
                "--offset",
                offset,
                "--size",
                "8m",
                "--rw",
                "randread",
                "--time",
                "200ms",
                "--keep",
                "--no-store",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = dir.path().join(name);
        let md = std::fs::metadata(&path).unwrap();
        (std::fs::read(&path).unwrap(), md.len(), md.blocks() * 512)
    };
    let (data, len, allocated) = made("holed.dat", "64m");
    assert_eq!(len, 72 * mib);
    assert!(
        allocated <= 9 * mib,
        "{allocated} bytes allocated for 8 MiB written after a 64 MiB hole"
    );
    let m = mib as usize;
    assert!(
        data[..64 * m].iter().all(|&b| b == 0),
        "bytes before the offset were written"
    );
    let blank = data[64 * m..]
        .chunks(4096)
        .filter(|b| b.iter().all(|&x| x == 0))
        .count();
    assert_eq!(blank, 0, "4 KiB blocks of zeros left inside the range");
    let (_, len, allocated) = made("whole.dat", "0");
    assert_eq!(len, 8 * mib);
    assert!(
        allocated >= 8 * mib,
        "{allocated} bytes allocated for 8 MiB"
    );
}
