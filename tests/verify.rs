//! `--verify` and `iogauge verify` against ground truth: a target edited after the run the way
//! failing storage would have left it (one fault of each class, at known offsets), a FUSE disk
//! that damages writes during the run, and a clean run of a million blocks.

use crate::common;
use common::*;

use iogauge_verify::{stamp, RunKey, SECTOR};
use serde_json::Value;
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BLOCK: u64 = 16384;

fn read_block(path: &Path, offset: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK as usize];
    OpenOptions::new()
        .read(true)
        .open(path)
        .unwrap()
        .read_exact_at(&mut b, offset)
        .unwrap();
    b
}

fn write_at(path: &Path, offset: u64, data: &[u8]) {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, offset).unwrap();
    f.sync_all().unwrap();
}

/// The generation in a block's first sector header.
fn generation(block: &[u8]) -> u64 {
    u64::from_le_bytes(block[24..32].try_into().unwrap())
}

fn key_of(run: &Value) -> RunKey {
    RunKey {
        id: run["verify"]["key"]
            .as_u64()
            .expect("the run keeps its verify key"),
        seed: run["verify"]["seed"].as_u64().unwrap(),
    }
}

#[test]
fn each_kind_of_damage_is_named_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.dat");
    let t = target.to_str().unwrap();
    // One writer, one IO in flight: every write is ordered after the one before, so each
    // block's last generation is certain and an older one is a lost write.
    let run = json_of(&iogauge(
        dir.path(),
        &[
            "run",
            t,
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--size",
            "16m",
            "--data",
            "32m",
            "--iodepth",
            "1",
            "--threads",
            "1",
            "--verify",
            "--keep",
            "--json",
        ],
    ));
    let r = &run["results"][0]["verify"];
    assert_eq!(r["failed"], serde_json::json!({}), "a clean run: {r}");
    assert!(f(&r["written_blocks"]) > 500.0, "{r}");
    assert_eq!(r["pass_checks"], r["written_blocks"]);

    let out = iogauge(dir.path(), &["verify", t]);
    assert!(out.status.success(), "untouched: {}", stderr_of(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("intact"));

    // Blocks this run wrote (generation above the fill's 0), in order.
    let key = key_of(&run);
    let written: Vec<u64> = (0..1024)
        .map(|i| i * BLOCK)
        .filter(|&o| generation(&read_block(&target, o)) > 0)
        .collect();
    assert!(written.len() >= 6);
    let [corrupt, misdirected, source, lost, torn, unwritten] =
        [0, 1, 2, 3, 4, 5].map(|i| written[i * written.len() / 6]);

    let mut b = read_block(&target, corrupt);
    b[2 * SECTOR + 1000] ^= 0x10;
    write_at(&target, corrupt, &b);

    write_at(&target, misdirected, &read_block(&target, source));

    let older = generation(&read_block(&target, lost)) - 1;
    let mut b = vec![0u8; BLOCK as usize];
    stamp(&mut b, &key, lost, older);
    write_at(&target, lost, &b);

    let g = generation(&read_block(&target, torn));
    let mut half = vec![0u8; BLOCK as usize / 2];
    stamp(&mut half, &key, torn + BLOCK / 2, g - 1);
    write_at(&target, torn + BLOCK / 2, &half);

    write_at(&target, unwritten, &vec![0u8; BLOCK as usize]);

    let out = iogauge(dir.path(), &["verify", t]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr_of(&out));
    // Shown with --nocapture, for the record of what a user sees.
    println!("{text}{}", stderr_of(&out));
    for (class, offset) in [
        ("corrupt", corrupt),
        ("misdirected", misdirected),
        ("lost", lost),
        ("torn", torn),
        ("unwritten", unwritten),
    ] {
        let words = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let line = text
            .lines()
            .find(|l| words(l)[..].starts_with(&["offset".to_string(), offset.to_string()]))
            .unwrap_or_else(|| panic!("no failure listed at offset {offset}:\n{text}"));
        assert!(
            words(line)[2].starts_with(class),
            "offset {offset} should be {class}: {line}"
        );
        assert!(
            text.lines()
                .any(|l| words(l)[..].starts_with(&[class.to_string(), "1".to_string()])),
            "one {class} block counted:\n{text}"
        );
    }
    assert!(
        text.contains(&format!("holds the block written at offset {source}")),
        "{text}"
    );
    assert!(
        stderr_of(&out).contains("5 of 1,024 blocks"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn a_read_back_of_a_million_blocks_finds_nothing_wrong() {
    needs_root!();
    // A loop device over RAM: a million 4 KiB blocks without touching the disk, or as many as
    // half the memory free in /dev/shm and in RAM allows (the image is written whole).
    let free = shm_free().min(mem_available());
    let blocks: u64 = (free / 2 / 4096).min(1_000_000) / 1000 * 1000;
    if blocks < 100_000 {
        skip(&format!(
            "needs 800 MiB free in /dev/shm and RAM, has {} MiB",
            free >> 20
        ));
        return;
    }
    let ram = RamLoop::new(blocks * 4096);
    let dir = tempfile::tempdir().unwrap();
    let size = (blocks * 4096).to_string();
    let run = json_of(&iogauge(
        dir.path(),
        &[
            "run",
            &ram.dev.dev,
            "--allow-overwrite",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "--data",
            &size,
            "--verify",
            "--json",
        ],
    ));
    let v = &run["results"][0]["verify"];
    assert_eq!(f(&v["written_blocks"]) as u64, blocks, "{v}");
    assert_eq!(f(&v["pass_checks"]) as u64, blocks, "{v}");
    assert_eq!(v["failed"], serde_json::json!({}), "{v}");
    // And again later, from what the store kept.
    let out = iogauge(dir.path(), &["verify", &ram.dev.dev]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let thousands = |n: u64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    assert!(
        text.contains(&format!("checked {} blocks of 4K", thousands(blocks))),
        "{text}"
    );
}

/// Bytes free for files in /dev/shm.
fn shm_free() -> u64 {
    let out = sh("stat", &["-f", "-c", "%a %S", "/dev/shm"]);
    let v: Vec<u64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    v[0] * v[1]
}

/// MemAvailable from /proc/meminfo, in bytes.
fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn verify_refuses_what_it_cannot_check_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.dat");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    // A results database with a run in it, but none with --verify on this file.
    json_of(&iogauge(
        dir.path(),
        &[
            "run",
            "other.dat",
            "--size",
            "1m",
            "--time",
            "100ms",
            "--json",
        ],
    ));
    let out = iogauge(dir.path(), &["verify", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("no --verify run on"),
        "{}",
        stderr_of(&out)
    );
    // A write block size the stamp cannot cover is a usage error before anything is written.
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "new.dat",
            "--rw",
            "randwrite",
            "--bs",
            "512",
            "--size",
            "1m",
            "--verify",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("multiple of 4k"),
        "{}",
        stderr_of(&out)
    );
    assert!(!dir.path().join("new.dat").exists());
}

#[test]
fn a_disk_that_damages_writes_fails_the_run_and_the_store_keeps_why() {
    // One write has a bit flipped on its way, another is acknowledged and dropped.
    let (flip, drop) = (5 * BLOCK + 777, 9 * BLOCK);
    if !can_mount_fakedisk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("mnt")).unwrap();
    let disk = FakeDisk::mount(
        &dir.path().join("backing.img"),
        &dir.path().join("mnt"),
        64 * BLOCK,
        &[
            "--flip-at",
            &flip.to_string(),
            "--drop-at",
            &drop.to_string(),
        ],
    );
    let out = iogauge(
        dir.path(),
        &[
            "run",
            disk.target().to_str().unwrap(),
            "--allow-overwrite",
            "--rw",
            "write",
            "--bs",
            "16k",
            "--data",
            &(64 * BLOCK).to_string(),
            "--verify",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("verify failed: 2 blocks"),
        "{}",
        stderr_of(&out)
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &run["results"][0]["verify"];
    assert_eq!(v["failed"]["corrupt"], 1, "{v}");
    assert_eq!(v["failed"]["unwritten"], 1, "{v}");
    let at = |class: &str| {
        v["first"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["class"] == class)
            .map(|x| x["offset"].as_u64().unwrap())
    };
    assert_eq!(at("corrupt"), Some(5 * BLOCK));
    assert_eq!(at("unwritten"), Some(drop));
    // Stored with the run, findings and all.
    let shown = json_of(&iogauge(dir.path(), &["show", "last", "--json"]));
    let kinds: Vec<&str> = shown["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "integrity" && f["severity"] == "error")
        .map(|f| f["summary"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    assert!(kinds
        .iter()
        .any(|s| s.contains("corrupt") && s.contains(&(5 * BLOCK).to_string())));
    assert!(kinds
        .iter()
        .any(|s| s.contains("unwritten") && s.contains(&drop.to_string())));
}

#[test]
fn a_sample_reads_back_that_share_of_the_written_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let run = json_of(&iogauge(
        dir.path(),
        &[
            "run",
            "s.dat",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--size",
            "16m",
            "--data",
            "64m",
            "--verify-sample",
            "0.25",
            "--no-store",
            "--json",
        ],
    ));
    let v = &run["results"][0]["verify"];
    let (written, read) = (f(&v["written_blocks"]), f(&v["pass_checks"]));
    assert_eq!(f(&v["sample"]), 0.25);
    // 4096 blocks, nearly all written; a quarter of them chosen by a hash: far from the edges.
    assert!(written > 3000.0, "{v}");
    assert!(read > 0.18 * written && read < 0.32 * written, "{v}");
}

#[test]
fn a_suite_of_writes_and_reads_at_several_block_sizes_verifies_clean() {
    // Reads after writes of another block size see blocks whose sectors come from different
    // writes: legal, and never to be called torn.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        r#"
name = "verify-mix"
description = "writes and reads of different block sizes"
[defaults]
time = "300ms"
size = "16MiB"
[[group]]
title = "writes"
rw = ["randwrite", "write"]
bs = ["4k", "16k"]
iodepth = [4]
[[group]]
title = "reads and a mix"
rw = ["randrw"]
read_pct = [100, 70]
bs = ["8k", "64k"]
iodepth = [4]
"#,
    )
    .unwrap();
    let run = json_of(&iogauge(
        dir.path(),
        &["suite", "--file", "s.toml", "s.dat", "--verify", "--json"],
    ));
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    let mut reads_checked = 0.0;
    for r in results {
        let v = &r["verify"];
        assert_eq!(v["failed"], serde_json::json!({}), "{}: {v}", r["name"]);
        reads_checked += f(&v["read_checks"]);
        if r["workload"]["mix_read_pct"].as_u64() != Some(100) {
            assert!(f(&v["pass_checks"]) > 0.0, "{}: {v}", r["name"]);
        }
    }
    assert!(reads_checked > 0.0, "reads were checked as they went");
    assert!(
        run["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("different block sizes")),
        "{}",
        run["notes"]
    );
}

/// fio's surface scan (its examples/surface-scan.fio): a job writes with verify and
/// do_verify=0, so nothing is read back after it; a later job only reads, and its reads check
/// what the writer left. A fake disk flips a bit of one write: the reader names that block,
/// the writer (which read nothing back) none.
#[test]
fn a_later_reading_job_checks_what_an_unread_writing_job_left() {
    let flip = 5 * BLOCK + 777;
    if !can_mount_fakedisk() {
        return;
    }
    let scan = |args: &[&str], global: &str| -> (Option<i32>, Value) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("mnt")).unwrap();
        let disk = FakeDisk::mount(
            &dir.path().join("backing.img"),
            &dir.path().join("mnt"),
            64 * BLOCK,
            args,
        );
        let job = format!(
            "[global]\nfilename={}\nbs=16k\nsize={}\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n{global}\n[write-phase]\nrw=write\ndo_verify=0\n\n[verify-phase]\nstonewall\nrw=read\n",
            disk.target().display(),
            64 * BLOCK
        );
        std::fs::write(dir.path().join("scan.fio"), job).unwrap();
        let out = iogauge(
            dir.path(),
            &[
                "fio",
                "scan.fio",
                "--allow-overwrite",
                "--no-store",
                "--json",
            ],
        );
        let doc =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr_of(&out)));
        (out.status.code(), doc)
    };
    let flipped = ["--flip-at".to_string(), flip.to_string()];
    let flipped: Vec<&str> = flipped.iter().map(String::as_str).collect();
    let (code, doc) = scan(&flipped, "");
    assert_eq!(code, Some(1), "{doc:#}");
    let (w, r) = (&doc["results"][0]["verify"], &doc["results"][1]["verify"]);
    // The writer stamped its 64 blocks and read none back.
    assert_eq!(w["written_blocks"], 64, "{w}");
    assert_eq!(w["pass_checks"], 0, "{w}");
    assert!(w["failed"].as_object().is_none_or(|m| m.is_empty()), "{w}");
    // The reader checked each block it read, and found the flipped one where it was flipped.
    assert_eq!(r["read_checks"], 64, "{r}");
    assert_eq!(r["failed"]["corrupt"], 1, "{r}");
    assert_eq!(r["first"][0]["offset"], 5 * BLOCK, "{r}");
    // The near miss: the same scan of a disk that keeps every write passes, every read checked.
    let (code, doc) = scan(&[], "");
    let r = &doc["results"][1]["verify"];
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(r["read_checks"], 64, "{r}");
    assert!(r["failed"].as_object().is_none_or(|m| m.is_empty()), "{r}");
    // verify_fatal=1: the reader stops at the flipped block, the sixth it reads, and says so.
    let (code, doc) = scan(&flipped, "verify_fatal=1\n");
    let reader = &doc["results"][1];
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(reader["verify"]["read_checks"], 6, "{reader:#}");
    assert_eq!(reader["verify"]["failed"]["corrupt"], 1, "{reader:#}");
    let error = reader["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("verify_fatal") && error.contains(&format!("offset {}", 5 * BLOCK)),
        "{error}"
    );
}

/// fill_device=1 writes what the file system has free (less the 1% iogauge keeps), as statvfs
/// counts it before the run: less by what another file took (the near miss), and the test file
/// is gone after.
#[test]
fn fill_device_writes_the_free_space_of_the_file_system() {
    if !is_root() {
        skip("needs root to make and mount a small ext4");
        return;
    }
    let fs = Fs::ext4(96 << 20, "");
    let dir = tempfile::tempdir().unwrap();
    let free = || {
        let out = std::process::Command::new("stat")
            .args(["-f", "-c", "%a %S", fs.path().to_str().unwrap()])
            .output()
            .unwrap();
        let s = String::from_utf8(out.stdout).unwrap();
        let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
        v[0] * v[1]
    };
    let job = format!(
        "[global]\nfilename={}/datafile.tmp\nbs=64k\nverify=meta\n\n[write-phase]\nrw=write\nfill_device=1\ndo_verify=0\n\n[verify-phase]\nstonewall\nrw=read\n",
        fs.path().display()
    );
    std::fs::write(dir.path().join("fill.fio"), job).unwrap();
    let written = || {
        let before = free();
        let out = iogauge(dir.path(), &["fio", "fill.fio", "--no-store", "--json"]);
        assert!(out.status.success(), "{}", stderr_of(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let w = doc["results"][0]["write"]["bytes"].as_u64().unwrap();
        let want = (before - (before / 100).max(1 << 20)) / (64 << 10) * (64 << 10);
        assert_eq!(w, want, "free before: {before}");
        // Every block the writer left was read and checked by the reader.
        let r = &doc["results"][1]["verify"];
        assert_eq!(r["read_checks"].as_u64(), Some(w / (64 << 10)), "{r}");
        assert!(r["failed"].as_object().is_none_or(|m| m.is_empty()), "{r}");
        assert!(!fs.path().join("datafile.tmp").exists());
        w
    };
    let whole = written();
    // Another file takes 16 MiB: the fill writes that much less.
    std::fs::write(fs.path().join("other"), vec![7u8; 16 << 20]).unwrap();
    std::process::Command::new("sync").status().unwrap();
    let less = written();
    let gone = whole - less;
    assert!((15 << 20..=17 << 20).contains(&gone), "{whole} then {less}");
}
