//! What verification costs per 4 KiB sector: `stamp` (writing) and `check` (reading), in memory
//! so only the CPU work is timed, on one core.
//!
//! `cargo run --release -p iogauge-verify --example cost [SECTORS] [FILE]`: with FILE, also
//! writes SECTORS stamped 4 KiB blocks there, verifies them with `verify_range` and removes it.
#![allow(clippy::disallowed_methods)] // a demo's own files; clippy.toml binds the program

use iogauge_verify::{check, stamp, verify_range, Expect, RunKey, Verdict, VerifyOptions, SECTOR};
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map_or(1 << 20, |s| s.parse().expect("SECTORS is a number"));
    let file = args.next();
    let run = RunKey {
        id: 7,
        seed: 0x1234_5678,
    };
    // 1 MiB of sectors, reused: large enough to leave L1/L2, small enough to stay in L3.
    const PER: usize = 256;
    let mut buf = vec![0u8; PER * SECTOR];

    let t = Instant::now();
    for i in 0..n / PER as u64 {
        for (j, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
            stamp(s, &run, (i * PER as u64 + j as u64) * SECTOR as u64, 1);
        }
        black_box(&buf);
    }
    let stamp_ns = t.elapsed().as_nanos() as f64 / n as f64;

    for (j, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
        stamp(s, &run, j as u64 * SECTOR as u64, 1);
    }
    let t = Instant::now();
    let mut bad = 0u64;
    for _ in 0..n / PER as u64 {
        for (j, s) in buf.chunks_exact(SECTOR).enumerate() {
            if check(black_box(s), &run, j as u64 * SECTOR as u64, Some(1))
                != (Verdict::Ok { generation: 1 })
            {
                bad += 1;
            }
        }
    }
    let check_ns = t.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(bad, 0);
    let gib_s = |ns: f64| SECTOR as f64 / ns / 1.073_741_824;
    println!("{n} sectors of 4 KiB, one core:");
    println!(
        "  stamp: {stamp_ns:.0} ns per 4 KiB ({:.2} GiB/s)",
        gib_s(stamp_ns)
    );
    println!(
        "  check: {check_ns:.0} ns per 4 KiB ({:.2} GiB/s)",
        gib_s(check_ns)
    );

    if let Some(path) = file {
        let f = std::fs::OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)
            .expect("create FILE (it must not exist)");
        let t = Instant::now();
        for i in 0..n / PER as u64 {
            let base = i * (PER * SECTOR) as u64;
            for (j, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
                stamp(s, &run, base + (j * SECTOR) as u64, 1);
            }
            f.write_all_at(&buf, base).expect("write");
        }
        f.sync_all().expect("fsync");
        let write_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let opts = VerifyOptions {
            block: SECTOR,
            ..Default::default()
        };
        let tally = verify_range(
            &f,
            0..n / PER as u64 * (PER * SECTOR) as u64,
            &run,
            &opts,
            |_| Expect::AtLeast(1),
        )
        .expect("verify");
        let verify_s = t.elapsed().as_secs_f64();
        std::fs::remove_file(&path).expect("remove FILE");
        println!(
            "  file {path}: wrote {} blocks in {write_s:.1} s, verified in {verify_s:.1} s: {} checked, {} failed",
            n / PER as u64 * PER as u64,
            tally.checked(),
            tally.failed()
        );
        assert!(tally.is_clean(), "{:?}", tally.first());
    }
}
