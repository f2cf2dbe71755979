//! What fio's writes carry (issue 60): compressible chunks (`buffer_compress_percentage`) and
//! writes that repeat earlier ones (`dedupe_percentage`, `dedupe-global.fio`). Ground truth from
//! the kernel and the bytes: zram compresses every page it stores and says how small they got
//! (`mm_stat`), and what was written is read back and its distinct 4 KiB blocks counted, for
//! iogauge and for fio itself on the same device. iogauge's own writes (no such option) are
//! the near miss: incompressible, and no block alike.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use crate::common;
use common::*;

/// What a job wrote to a fresh zram device, by iogauge (`fio` = false) or fio: zram's stored
/// (compressed) bytes over the bytes written, and the share of the 4 KiB blocks written that
/// are distinct.
fn written(job: &str, fio: bool) -> (f64, f64) {
    let zram = Zram::new("64M").expect("zram");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("content.fio");
    std::fs::write(
        &file,
        format!(
            "[w]\nfilename={}\ndirect=1\nrw=write\nsize=32m\n{job}\n",
            zram.dev()
        ),
    )
    .unwrap();
    let out = if fio {
        Command::new("fio")
            .args(["--output-format=terse", file.to_str().unwrap()])
            .current_dir(Path::new(dir.path()))
            .output()
            .unwrap()
    } else {
        iogauge(
            dir.path(),
            &[
                "fio",
                "--no-store",
                "--allow-overwrite",
                file.to_str().unwrap(),
            ],
        )
    };
    assert!(out.status.success(), "{}", stderr_of(&out));
    // mm_stat: orig_data_size compr_data_size mem_used_total …
    let stat = std::fs::read_to_string(zram.sys().join("mm_stat")).unwrap();
    let n: Vec<f64> = stat
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    // zram keeps pages of one repeated byte (zeros) apart, uncounted in orig_data_size.
    let same = n[5] * 4096.0;
    let ratio = n[1] / (n[0] + same);
    let mut blocks = HashSet::new();
    let mut dev = std::fs::File::open(zram.dev()).unwrap();
    let mut buf = vec![0u8; 4096];
    for _ in 0..(32 << 20) / 4096 {
        dev.read_exact(&mut buf).unwrap();
        blocks.insert(buf.clone());
    }
    (ratio, blocks.len() as f64 / f64::from((32 << 20) / 4096))
}

/// Half of every 512-byte chunk zeros: zram stores about half, as it stores fio's; with 90%
/// about a tenth; iogauge's own writes are stored whole.
#[test]
fn compressible_writes_shrink_in_zram_as_fios_do() {
    needs_root!();
    needs_tool!("fio");
    for pct in [50, 90] {
        let job = format!("bs=64k\nbuffer_compress_percentage={pct}");
        let (ours, _) = written(&job, false);
        let (theirs, _) = written(&job, true);
        let want = f64::from(100 - pct) / 100.0;
        assert!(
            (ours - want).abs() < 0.1 && (ours - theirs).abs() < 0.02,
            "{pct}% compressible: zram stored {ours:.3} of iogauge's bytes, {theirs:.3} of fio's"
        );
    }
    let (plain, distinct) = written("bs=64k", false);
    assert!(
        plain > 0.98,
        "iogauge's own writes compressed to {plain:.3}"
    );
    assert_eq!(distinct, 1.0, "iogauge's own writes: every block its own");
}

/// 40% of 4 KiB writes repeating one of the first writes (a working set of 10% of the range):
/// 60% of the blocks written are distinct, as fio's are; with `repeat` each repeat is the last
/// unique write again, and the same share is distinct.
#[test]
fn repeated_writes_are_the_share_asked_as_fios_are() {
    needs_root!();
    needs_tool!("fio");
    for mode in [
        "dedupe_mode=working_set\ndedupe_working_set_percentage=10",
        "dedupe_mode=repeat",
    ] {
        let job = format!("bs=4k\nioengine=psync\ndedupe_percentage=40\n{mode}");
        let (_, ours) = written(&job, false);
        let (_, theirs) = written(&job, true);
        assert!(
            (0.57..0.63).contains(&ours) && (ours - theirs).abs() < 0.03,
            "{mode}: {ours:.3} of iogauge's blocks distinct, {theirs:.3} of fio's"
        );
    }
}

/// The rules before anything is written: a job that writes nothing, or verifies, with content.
#[test]
fn content_without_writes_or_with_verify_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (job, why) in [
        ("rw=read\nbuffer_compress_percentage=50", "writes nothing"),
        (
            "rw=write\nverify=md5\ndedupe_percentage=50",
            "stamps every sector",
        ),
        ("rw=write\ndedupe_global=1", "which is not set"),
    ] {
        let file = dir.path().join("bad.fio");
        std::fs::write(&file, format!("[w]\nsize=1m\n{job}\n")).unwrap();
        let out = iogauge(dir.path(), &["fio", "--dry-run", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{job}: {}", stderr_of(&out));
        let e = stderr_of(&out);
        assert!(e.contains(why) && e.lines().count() == 1, "{job}: {e}");
    }
    assert!(
        std::fs::read_dir(dir.path()).unwrap().count() == 1,
        "nothing but the job file"
    );
}
