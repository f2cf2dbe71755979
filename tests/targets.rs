//! Real targets, measured right (issue 10): raw block devices used whole by `run` and every
//! suite, back-to-back writes on one device, 4Kn and 512-byte sectors, every check made before
//! the fill, and a closed pipe that ends the run cleanly. Tests that need root (loop devices,
//! mounts) skip through `common::skip` otherwise.

use serde_json::Value;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common;
use common::*;

const MIB: u64 = 1 << 20;

fn ranges(doc: &Value) -> Vec<u64> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["target"]["range_bytes"].as_u64().unwrap())
        .collect()
}

fn test_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("iogauge-test") || n.starts_with("iogauge-seeks"))
        .collect()
}

// Item 1: no --size was given, so the whole device is used, by every suite as by `run`.
#[test]
fn a_suite_uses_the_whole_device_without_size() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let dev = blank_loop(dir.path(), "d.img", 256 * MIB, 512);
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "quick",
            &dev.dev,
            "--allow-overwrite",
            "--cell-time",
            "300ms",
            "--json",
        ],
    );
    let doc = json_of(&out);
    let r = ranges(&doc);
    assert!(!r.is_empty());
    // The fsync cell uses its own small range (sysbench's 16 KiB file); the rest use it all.
    assert!(
        r.iter().filter(|&&b| b == 256 * MIB).count() >= r.len() - 1,
        "{r:?}"
    );
    let run = json_of(&iogauge(
        dir.path(),
        &["run", &dev.dev, "--time", "300ms", "--json", "--no-store"],
    ));
    assert_eq!(ranges(&run), [256 * MIB]);
}

// Item 1: an existing big file is used whole by the seeks suite as by `run`.
#[test]
fn seeks_on_an_existing_file_use_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.dat");
    // Holes are fine for this check: the notes say so, and no byte is written.
    File::create(&big).unwrap().set_len(2048 * MIB).unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "seeks",
            big.to_str().unwrap(),
            "--cell-time",
            "200ms",
            "--buffered",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    assert_eq!(ranges(&doc), [2048 * MIB]);
    let text = stderr_of(&iogauge(
        dir.path(),
        &[
            "suite",
            "seeks",
            big.to_str().unwrap(),
            "--cell-time",
            "200ms",
            "--buffered",
            "--no-store",
        ],
    ));
    assert!(!text.contains("error"), "{text}");
}

// Item 2: cells and consecutive runs never trip over iogauge's own claim on the device.
#[test]
fn write_cells_and_runs_back_to_back_on_one_device() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let dev = blank_loop(dir.path(), "d.img", 256 * MIB, 512);
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "matrix",
            &dev.dev,
            "--allow-overwrite",
            "--size",
            "256m",
            "--sizes",
            "4k,16k",
            "--threads",
            "1,4,16",
            "--cell-time",
            "300ms",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 12, "every cell ran");
    assert!(results.iter().all(|r| r["error"].is_null()));
    for i in 0..5 {
        let out = iogauge(
            dir.path(),
            &[
                "run",
                &dev.dev,
                "--rw",
                "randwrite",
                "--allow-overwrite",
                "--iodepth",
                "8",
                "--time",
                "200ms",
                "--no-store",
            ],
        );
        assert!(out.status.success(), "run {i}: {}", stderr_of(&out));
    }
}

// Sector sizes: a 4Kn device refuses 512-byte direct IO before anything is written, a suite
// names the cell it skips, and a 512-byte device takes it.
#[test]
fn four_k_native_and_512_byte_sectors() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let native = blank_loop(dir.path(), "4kn.img", 64 * MIB, 4096);
    let out = iogauge(
        dir.path(),
        &[
            "run",
            &native.dev,
            "--bs",
            "512",
            "--time",
            "200ms",
            "--no-store",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("logical block size (4096 bytes)"),
        "{}",
        stderr_of(&out)
    );
    let doc = json_of(&iogauge(
        dir.path(),
        &[
            "suite",
            "matrix",
            &native.dev,
            "--allow-overwrite",
            "--sizes",
            "512,4k",
            "--threads",
            "1",
            "--cell-time",
            "200ms",
            "--json",
            "--no-store",
        ],
    ));
    let bs: Vec<u64> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workload"]["bs"].as_u64().unwrap())
        .collect();
    assert!(bs.iter().all(|&b| b == 4096), "{bs:?}");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("skipped randread 512B"), "{notes}");
    let small = blank_loop(dir.path(), "512.img", 64 * MIB, 512);
    let doc = json_of(&iogauge(
        dir.path(),
        &[
            "run",
            &small.dev,
            "--bs",
            "512",
            "--time",
            "200ms",
            "--json",
            "--no-store",
        ],
    ));
    assert_eq!(doc["results"][0]["target"]["logical_block_size"], 512);
    assert!(doc["results"][0]["ios"].as_u64().unwrap() > 0);
}

// Item 6: what can be checked before the fill is checked before the fill.
#[test]
fn a_bad_block_size_for_the_file_system_is_told_before_the_fill() {
    needs_root!();
    needs_tool!("mkfs.ext4");
    let dir = tempfile::tempdir().unwrap();
    let native = blank_loop(dir.path(), "4kn.img", 128 * MIB, 4096);
    sh("mkfs.ext4", &["-q", "-F", &native.dev]);
    let _mount = Mount::new(&native.dev, &dir.path().join("mnt"), "rw");
    let mnt = dir.path().join("mnt");
    let out = iogauge(
        dir.path(),
        &[
            "run",
            mnt.to_str().unwrap(),
            "--bs",
            "512",
            "--size",
            "64m",
            "--no-store",
        ],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("logical block size"), "{err}");
    assert!(!err.contains("Filling"), "told before the fill: {err}");
    assert!(test_files(&mnt).is_empty());
}

#[test]
fn a_file_system_without_o_direct_is_told_before_the_fill() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    // ramfs has no direct IO at all (tmpfs has had it since Linux 6.6).
    let mnt = dir.path().join("ramfs");
    std::fs::create_dir_all(&mnt).unwrap();
    sh("mount", &["-t", "ramfs", "ramfs", mnt.to_str().unwrap()]);
    let _mount = Mount(mnt.clone());
    let out = iogauge(
        dir.path(),
        &["run", mnt.to_str().unwrap(), "--size", "64m", "--no-store"],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("O_DIRECT") && err.contains("--buffered"),
        "{err}"
    );
    assert!(!err.contains("Filling"), "told before the fill: {err}");
    assert!(test_files(&mnt).is_empty(), "no test file left");
}

#[test]
fn a_results_database_that_cannot_be_made_is_told_before_the_fill() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let db = blocker.join("sub/results.db");
    let out = Command::new(BIN)
        .args(["run", "--size", "64m", "--time", "200ms"])
        .current_dir(dir.path())
        .env("IOGAUGE_DB", &db)
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--db") && err.contains("--no-store"), "{err}");
    assert!(!err.contains("Filling"), "told before the fill: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(test_files(dir.path()).is_empty());
}

// Item 5: stderr (and stdout) closed early: the run stops, stores what it measured, removes
// its test file and exits as SIGPIPE would have it.
fn suite_into_head(dir: &Path, lines: u32) -> i32 {
    let script = format!(
        "'{}' suite quick --size 64m --cell-time 300ms 2>&1 | head -{lines} >/dev/null; echo ${{PIPESTATUS[0]}}",
        BIN
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir)
        .env("IOGAUGE_DB", dir.join("results.db"))
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn a_closed_pipe_ends_the_suite_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let runs = |dir: &Path| {
        let list = json_of(&iogauge(dir, &["list", "--json"]));
        list["runs"].as_array().unwrap().clone()
    };
    // Closed while the plan is printed: nothing measured, nothing stored, no file left.
    assert_eq!(suite_into_head(dir.path(), 2), 128 + 13, "exit as SIGPIPE");
    assert!(test_files(dir.path()).is_empty(), "test file removed");
    assert!(runs(dir.path()).is_empty(), "an empty run is not stored");

    // Closed a few lines after the plan (which lists the cells): some cells measured.
    let planned = iogauge(
        dir.path(),
        &["suite", "quick", "--size", "64m", "--dry-run"],
    );
    let plan_lines = String::from_utf8_lossy(&planned.stdout).lines().count() as u32;
    assert_eq!(
        suite_into_head(dir.path(), plan_lines + 4),
        128 + 13,
        "exit as SIGPIPE"
    );
    assert!(test_files(dir.path()).is_empty(), "test file removed");
    let stored = runs(dir.path());
    assert_eq!(stored.len(), 1, "the run was stored");
    assert_eq!(stored[0]["interrupted"], true);
    let results = stored[0]["results"].as_array().unwrap().len();
    assert!((2..12).contains(&results), "{results} results kept");
}

// The plan before a long suite, and --dry-run that prints only that (issue 12).
#[test]
fn dry_run_prints_the_plan_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "matrix",
            "--sizes",
            "4k,1m",
            "--cell-time",
            "5s",
            "--dry-run",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    // 2 sizes × 3 thread counts × read and write.
    assert!(
        text.contains("plan: suite matrix — 12 cells × 5.0 s"),
        "{text}"
    );
    assert!(text.contains("estimated time: about 1 min"), "{text}");
    assert!(text.contains("a test file of 1 GiB"), "{text}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(
        left.is_empty(),
        "nothing created, not even the database: {left:?}"
    );
}

// README's `iogauge suite mixes /dev/nvme0n1` works as written: without consent the cells that
// write are skipped and named, the reads run (issue 12).
#[test]
fn a_suite_without_consent_runs_its_reads_on_a_device() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let dev = blank_loop(dir.path(), "d.img", 128 * MIB, 512);
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "mixes",
            &dev.dev,
            "--qd",
            "1,4",
            "--cell-time",
            "200ms",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert!(
        results.iter().all(|r| r["workload"]["mix_read_pct"] == 100),
        "only reads ran"
    );
    let notes = doc["notes"].to_string();
    assert!(notes.contains("--allow-overwrite"), "{notes}");
    // Only-writing suites and `run` are still refused.
    let out = iogauge(
        dir.path(),
        &["run", &dev.dev, "--rw", "randwrite", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(2));
}
