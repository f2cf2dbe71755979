//! End-to-end tests of `iogauge run` through the binary, each in its own temp dir.

use serde_json::Value;
use std::process::Command;

use crate::common;
use common::*;

/// The JSON contract every result keeps, whatever the engine.
fn check_contract(doc: &Value) {
    assert_eq!(doc["schema"], "iogauge.run/1");
    assert!(doc["run_id"].is_string());
    assert!(doc["started_at"].as_str().unwrap().ends_with('Z'));
    assert!(doc["system"]["kernel"].is_string());
    assert!(doc["findings"].is_array());
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let bs = f(&r["workload"]["bs"]);
        let (iops, bw, ios, bytes, rt) = (
            f(&r["iops"]),
            f(&r["bw_bytes"]),
            f(&r["ios"]),
            f(&r["bytes"]),
            f(&r["runtime_s"]),
        );
        assert!(ios > 0.0, "some IO completed");
        assert!((iops * bs - bw).abs() <= bw * 1e-9, "iops × bs = bw_bytes");
        assert!(
            (ios / rt - iops).abs() <= iops * 1e-9,
            "ios / runtime_s = iops"
        );
        assert_eq!(bytes, ios * bs);
        let l = &r["lat_ns"];
        let order = ["min", "p50", "p90", "p99", "p999", "p9999", "max"];
        for w in order.windows(2) {
            assert!(f(&l[w[0]]) <= f(&l[w[1]]), "{} <= {}", w[0], w[1]);
        }
        assert!(f(&l["min"]) <= f(&l["mean"]) && f(&l["mean"]) <= f(&l["max"]));
        // The workers' CPU: some was spent, no more than their threads had in the run (plus
        // their start and stop), and per IO is the same figure divided.
        let threads = f(&r["workload"]["threads"]);
        let cpu = f(&r["cpu"]["user_s"]) + f(&r["cpu"]["sys_s"]);
        assert!(
            cpu > 0.0 && cpu <= threads * (rt + 1.0),
            "{cpu} CPU seconds for {threads} threads over {rt} s"
        );
        let per_io = f(&r["cpu"]["per_io_us"]);
        assert!(
            (per_io - cpu * 1e6 / ios).abs() <= per_io * 1e-6 + 1e-9,
            "per_io_us {per_io} for {cpu} s over {ios} IOs"
        );
        let ts = r["timeseries"].as_array().unwrap();
        assert!(!ts.is_empty());
        // The time series adds up to the whole run.
        let mut prev = 0.0;
        let mut sum = 0.0;
        for s in ts {
            let t = f(&s["t_s"]);
            sum += f(&s["iops"]) * (t - prev);
            prev = t;
        }
        assert!((prev - rt).abs() < 1e-6, "series ends at the runtime");
        assert!(
            (sum - ios).abs() <= ios * 1e-6 + 1.0,
            "series sums to ios: {sum} vs {ios}"
        );
        // The histogram holds every IO.
        let hist_count: f64 = r["lat_hist"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| f(&p[1]))
            .sum();
        assert_eq!(hist_count, ios);
        let fine: f64 = r["fine"]["ios"].as_array().unwrap().iter().map(f).sum();
        assert_eq!(fine, ios, "fine bins count every IO");
    }
}

#[test]
fn every_engine_runs_end_to_end() {
    for engine in ["null", "psync", "io_uring"] {
        let dir = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let out = iogauge(
            dir.path(),
            &[
                "run",
                "--engine",
                engine,
                "--size",
                "16m",
                "--time",
                "1s",
                "--iodepth",
                "4",
                "--threads",
                "2",
                "--json",
                "--no-store",
                "--interval",
                "250ms",
            ],
        );
        let lived = started.elapsed().as_secs_f64();
        let doc = json_of(&out);
        check_contract(&doc);
        let r = &doc["results"][0];
        assert_eq!(r["workload"]["engine"], engine);
        assert_eq!(r["workload"]["rw"], "randread");
        // Measured for the second asked, and not longer than the process lived.
        let rt = f(&r["runtime_s"]);
        assert!(
            rt >= 1.0 - 1e-9 && rt <= lived,
            "{engine}: runtime_s {rt} for --time 1s, in a process that lived {lived:.3} s"
        );
        assert_eq!(r["timeseries"].as_array().unwrap().len(), 4);
        // Messages go to stderr; the created test file is gone afterwards.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-test"))
            .collect();
        assert!(left.is_empty(), "{engine}: test file removed");
    }
}

#[test]
fn human_output_has_units() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "300ms",
            "--size",
            "8m",
            "--no-store",
        ],
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in ["IOPS", "MiB/s", "µs", "p99.99", "per IO"] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Filling") && err.contains("MiB/s"),
        "fill progress on stderr: {err}"
    );
    // One bandwidth convention, everywhere: IEC by default, SI when asked, never both.
    assert!(
        !text.contains(" MB/s") && !err.contains(" MB/s"),
        "{text}{err}"
    );
    let si = iogauge(
        dir.path(),
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "300ms",
            "--size",
            "8m",
            "--no-store",
            "--bandwidth-units",
            "si",
        ],
    );
    assert!(si.status.success());
    let (text, err) = (
        String::from_utf8_lossy(&si.stdout),
        String::from_utf8_lossy(&si.stderr),
    );
    assert!(
        text.contains(" MB/s") && err.contains(" MB/s"),
        "{text}{err}"
    );
    assert!(
        !text.contains("MiB/s") && !err.contains("MiB/s"),
        "{text}{err}"
    );
}

#[test]
fn fixed_data_transfers_exactly_that_much() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--data",
            "8m",
            "--size",
            "4m",
            "--threads",
            "2",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    check_contract(&doc);
    let r = &doc["results"][0];
    assert_eq!(f(&r["bytes"]), (8 << 20) as f64);
    assert!(r["workload"]["time_s"].is_null());
}

#[test]
fn written_data_is_really_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    // One sequential pass over 4 MiB: every 4 KiB block is written exactly once.
    let out = iogauge(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "4m",
            "--data",
            "4m",
            "--keep",
            "--json",
            "--no-store",
        ],
    );
    json_of(&out);
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len(), 4 << 20);
    let mut seqs = Vec::new();
    for (i, block) in bytes.chunks(4096).enumerate() {
        let off = u64::from_le_bytes(block[..8].try_into().unwrap());
        assert_eq!(off, i as u64 * 4096, "block {i} carries its own offset");
        seqs.push(u64::from_le_bytes(block[8..16].try_into().unwrap()));
    }
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), 1024, "every block came from its own write");
    // The payload after each sector's header is not zeros or a repeated pattern.
    let zeros: usize = bytes[..4096]
        .chunks(512)
        .map(|s| s[16..].iter().filter(|&&b| b == 0).count())
        .sum();
    assert!(zeros < 64, "{zeros} zero bytes");
}

/// Large writes are unique in every sector, not only in their first: 64 KiB writes at QD 4 over
/// a 4 MiB file, twice over, leave no two 512-byte sectors alike (each slot's buffer was the
/// same random bytes past its first 16 each time it wrote: storage that dedupes in 4 KiB chunks
/// would have kept 15 of every 16 once), each carrying its own place.
#[test]
fn every_sector_of_a_large_write_is_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    let out = iogauge(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "64k",
            "--iodepth",
            "4",
            "--size",
            "4m",
            "--data",
            "8m",
            "--keep",
            "--json",
            "--no-store",
        ],
    );
    json_of(&out);
    let bytes = std::fs::read(&file).unwrap();
    let distinct: std::collections::HashSet<&[u8]> = bytes.chunks(512).collect();
    assert_eq!(distinct.len(), bytes.len() / 512, "no two sectors alike");
    for (i, sector) in bytes.chunks(512).enumerate() {
        let at = u64::from_le_bytes(sector[..8].try_into().unwrap());
        assert_eq!(at, i as u64 * 512, "sector {i} carries its own place");
    }
}

#[test]
fn created_file_is_filled_with_incompressible_data() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("filled");
    let out = iogauge(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--engine",
            "null",
            "--size",
            "8m",
            "--time",
            "100ms",
            "--keep",
            "--no-store",
        ],
    );
    assert!(out.status.success());
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len(), 8 << 20);
    let distinct: std::collections::HashSet<&[u8]> = bytes.chunks(4096).collect();
    assert_eq!(distinct.len(), 2048, "no two 4 KiB blocks alike");
    let zeros = bytes.iter().filter(|&&b| b == 0).count() as f64 / bytes.len() as f64;
    assert!(
        zeros < 0.01,
        "about 1/256 of random bytes are zero, got {zeros}"
    );
    // And it is not sparse: every block is allocated.
    use std::os::unix::fs::MetadataExt;
    assert!(std::fs::metadata(&file).unwrap().blocks() * 512 >= 8 << 20);
}

#[test]
fn fsync_after_every_write_like_sysbench() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--rw",
            "write",
            "--engine",
            "psync",
            "--fsync",
            "1",
            "--size",
            "4m",
            "--time",
            "1s",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    check_contract(&doc);
    let r = &doc["results"][0];
    let ios = f(&r["ios"]);
    let syncs = f(&r["sync"]["count"]);
    assert!(
        (syncs - ios).abs() <= 1.0,
        "one fsync per write: {syncs} syncs, {ios} writes"
    );
    assert!(f(&r["sync"]["lat_ns"]["p50"]) > 0.0);
}

/// The same seed draws the same IOs: two runs of a fixed amount of data split into exactly the
/// same reads and writes (each IO's direction is drawn from the seed), at the 70% asked.
#[test]
fn same_seed_same_result_order_and_mix_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let split = || {
        let doc = json_of(&iogauge(
            dir.path(),
            &[
                "run",
                "--rw",
                "randrw",
                "--mix",
                "70",
                "--engine",
                "null",
                "--size",
                "8m",
                "--data",
                "40m",
                "--seed",
                "42",
                "--json",
                "--no-store",
            ],
        ));
        let r = &doc["results"][0];
        (f(&r["read"]["ios"]), f(&r["write"]["ios"]))
    };
    let (reads, writes) = split();
    let share = reads / (reads + writes);
    assert!((share - 0.7).abs() < 0.02, "70% reads, got {share}");
    assert_eq!(split(), (reads, writes), "the same seed drew other IOs");
}

#[test]
fn existing_file_is_never_written_without_consent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("precious");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--time",
            "200ms",
            "--no-store",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-overwrite"), "{err}");
    assert!(
        std::fs::read(&file).unwrap().iter().all(|&b| b == 7),
        "untouched"
    );
    // Reads are fine, and leave it as it was.
    let out = iogauge(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--rw",
            "randread",
            "--time",
            "200ms",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    assert_eq!(doc["results"][0]["target"]["created"], false);
    assert!(std::fs::read(&file).unwrap().iter().all(|&b| b == 7));
    assert!(file.exists(), "an existing file is never removed");
}

#[test]
fn directory_target_gets_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            sub.to_str().unwrap(),
            "--size",
            "8m",
            "--time",
            "200ms",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    let path = doc["results"][0]["target"]["path"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(path.starts_with(sub.to_str().unwrap()));
    assert_eq!(
        std::fs::read_dir(&sub).unwrap().count(),
        0,
        "removed afterwards"
    );
}

/// Each bad input: exit 2, one line on stderr naming the fix, no panic.
#[test]
fn bad_input_is_one_clean_line() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("tiny");
    std::fs::write(&existing, [1u8; 100]).unwrap();
    let tiny = existing.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["run", "--rw", "sideways"],
        &["run", "--engine", "libfoo"],
        &["run", "--bs", "0"],
        &["run", "--bs", "abc"],
        &["run", "--bs", "1000"],
        &["run", "--threads", "0"],
        &["run", "--threads", "100000"],
        &["run", "--iodepth", "0"],
        &["run", "--iodepth", "999999"],
        &["run", "--time", "-5s"],
        &["run", "--time", "ten"],
        &["run", "--ramp", "-1"],
        &["run", "/no/such/dir/file"],
        &["run", tiny],
        &["run", "--size", "1k"],
        &["run", "--rw", "read", "--fsync", "1"],
        &["run", "--data", "0"],
        &["run", "/proc/self/status"],
        &[
            "run",
            "--threads",
            "1024",
            "--iodepth",
            "4096",
            "--bs",
            "64m",
        ],
    ];
    for args in cases {
        let out = iogauge(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: exit 2, stderr: {err}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{args:?}: {err}"
        );
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        // clap adds a "For more information, try '--help'." line to its own errors.
        let own: Vec<&&str> = lines
            .iter()
            .filter(|l| !l.starts_with("For more information"))
            .collect();
        assert_eq!(own.len(), 1, "{args:?}: one line, got:\n{err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    assert!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().starts_with("iogauge-test")),
        "no test file left"
    );
}

/// More than the file system holds is refused before any file is made (the free-space check).
#[test]
fn more_than_the_disk_holds_is_refused_before_any_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &["run", "--size", "1000TiB", "--time", "1s", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("free"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-test"))
            .count(),
        0
    );
}

/// The file system fills while the test file is being filled (the free-space check passed):
/// the fill fails with the file system's own words and the partial file is removed. The fill
/// runs in a blkio group held to 8 MiB/s, so it is still writing when the test, told by
/// iogauge's "Filling" line, takes all the space but 1 MiB with fallocate.
#[test]
fn no_space_while_filling_removes_the_partial_file() {
    needs_root!();
    needs_tool!("fallocate");
    let Some(cg) = Blkio::new("fill") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let ram = RamLoop::new(128 << 20);
    // No blocks reserved for root: what statvfs says is free is what root can take.
    sh("mkfs.ext4", &["-q", "-m", "0", &ram.dev.dev]);
    // Not under /dev/shm: iogauge refuses a directory under /dev.
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    let _m = Mount::new(&ram.dev.dev, &mnt, "rw");
    let majmin = std::fs::read_to_string(format!("/sys/block/{}/dev", ram.dev.name())).unwrap();
    std::fs::write(
        cg.0.join("blkio.throttle.write_bps_device"),
        format!("{} {}", majmin.trim(), 8u64 << 20),
    )
    .unwrap();
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        &cg.iogauge(&format!(
            "run {} --size 64m --time 1s --no-store",
            mnt.display()
        )),
    ])
    .current_dir(dir.path());
    let mut run = Spawned::start(cmd);
    run.wait_for("Filling", DEADLINE);
    // A hog takes all but 1 MiB of what is free. The fill keeps writing meanwhile (8 MB/s),
    // so on a busy machine the space can shrink between the look and the fallocate: look
    // again and take what is left then, in a file of its own (what a failed try kept stays
    // taken). Only fallocate's ENOSPC is retried.
    let took = (0..20).any(|i| {
        let free = sh("stat", &["-f", "-c", "%a %S", mnt.to_str().unwrap()]);
        let mut w = free.split_whitespace().map(|v| v.parse::<u64>().unwrap());
        let free = w.next().unwrap() * w.next().unwrap();
        if free <= 1 << 20 {
            // The fill took the rest itself.
            return true;
        }
        let out = Command::new("fallocate")
            .args(["-l", &(free - (1 << 20)).to_string()])
            .arg(mnt.join(format!("hog{i}")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || err.contains("No space left"),
            "fallocate: {err}"
        );
        out.status.success()
    });
    assert!(took, "fallocate found no room for the hog 20 times");
    let out = run.finish(DEADLINE);
    let err = stderr_of(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("no space left") && err.contains("the partial file was removed"),
        "{err}"
    );
    let left: Vec<String> = std::fs::read_dir(&mnt)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("iogauge-test"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn sigint_stops_the_run_keeps_results_and_removes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = Spawned::iogauge(
        dir.path(),
        &[
            "run",
            "--engine",
            "psync",
            "--size",
            "8m",
            "--time",
            "30s",
            "--json",
            "--no-store",
        ],
    );
    // The fill is over, then the kernel counts the run's own reads: the measurement is on.
    run.wait_for("done in", WATCHDOG);
    let before = syscalls_of(run.pid());
    wait_until("the run's first reads", WATCHDOG, || {
        syscalls_of(run.pid()) > before + 100
    });
    run.signal("INT");
    let out = run.finish(WATCHDOG);
    assert_eq!(out.status.code(), Some(130), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("partial results as JSON");
    assert_eq!(doc["interrupted"], true);
    let r = &doc["results"][0];
    // Stopped by the signal, not by --time: what iogauge measured ended well before 30 s.
    assert!(f(&r["ios"]) > 0.0 && f(&r["runtime_s"]) < 30.0, "{r}");
    assert_eq!(r["interrupted"], true);
    assert!(std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().starts_with("iogauge-test")));
}

#[test]
fn progress_line_on_a_terminal_and_none_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    // In a pipe (as here): no progress line, no carriage returns.
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--engine",
            "null",
            "--size",
            "8m",
            "--time",
            "1s",
            "--no-store",
        ],
    );
    assert!(out.status.success());
    let err = stderr_of(&out);
    assert!(!err.contains("ETA") && !err.contains('\r'), "{err}");
    // On a terminal (script(1) gives it a pseudo-terminal): elapsed, ETA and live IOPS.
    if Command::new("script").arg("--version").output().is_err() {
        skip("needs script(1)");
        return;
    }
    let cmd = format!(
        "{} run --engine null --size 8m --time 2s --no-store",
        common::BIN
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(dir.path())
        .env("IOGAUGE_DB", dir.path().join("results.db"))
        .output()
        .unwrap();
    let all = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("ETA") && all.contains("IOPS ·") && all.contains("[00:00:0"),
        "{all}"
    );
}

/// Two buffered repeats of reading an 8 MiB file once each: what `--drop-caches` is tried on.
const BUFFERED_TWICE: [&str; 11] = [
    "--buffered",
    "--rw",
    "read",
    "--bs",
    "64k",
    "--size",
    "8m",
    "--data",
    "8m",
    "--repeat",
    "2",
];

/// What `--drop-caches` promises, seen by the device: two buffered repeats of an 8 MiB read
/// each read the file from the device (its read counter grows by twice the file), where
/// without it the second repeat is served by the page cache (the near miss: once).
#[test]
fn dropped_caches_make_each_repeat_read_the_device() {
    needs_root!();
    let _cache = dropping_the_page_cache();
    let ram = RamLoop::new(64 << 20);
    sh("mkfs.ext4", &["-q", &ram.dev.dev]);
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    let _m = Mount::new(&ram.dev.dev, &mnt, "rw");
    let stat = format!("/sys/block/{}/stat", ram.dev.name());
    let read = || -> u64 {
        let s = std::fs::read_to_string(&stat).unwrap();
        s.split_whitespace().nth(2).unwrap().parse::<u64>().unwrap() * 512
    };
    let file = mnt.join("data");
    let file = file.to_str().unwrap();
    let moved = |drop: bool| {
        let mut args = vec!["run", file];
        args.extend(BUFFERED_TWICE);
        args.extend(["--keep", "--json", "--no-store"]);
        if drop {
            args.push("--drop-caches");
        }
        // The file is made (O_DIRECT, not cached) on the first run and kept for the second.
        let before = read();
        json_of(&iogauge(dir.path(), &args));
        read() - before
    };
    let mib = 1u64 << 20;
    let with = moved(true);
    assert!(
        with >= 16 * mib,
        "{with} bytes read from the device with --drop-caches"
    );
    let without = moved(false);
    assert!(
        without < 12 * mib,
        "{without} bytes read from the device without it"
    );
}

/// `--drop-caches` between repeats: done as root; as another user the run goes on and says
/// the cache was not dropped (seed 001 dropped caches by hand before each of five runs).
#[test]
fn drop_caches_between_repeats_or_say_why_not() {
    let _cache = dropping_the_page_cache();
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["run"];
    args.extend(BUFFERED_TWICE);
    args.extend(["--drop-caches", "--json", "--no-store"]);
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    let out = iogauge(dir.path(), &args);
    let doc = json_of(&out);
    assert_eq!(doc["results"][0]["repeats"].as_array().unwrap().len(), 2);
    let said = |doc: &Value| {
        doc["notes"].as_array().unwrap().iter().any(|n| {
            n.as_str()
                .unwrap()
                .contains("--drop-caches: the page cache was not dropped")
        })
    };
    assert_eq!(said(&doc), !root, "notes: {}", doc["notes"]);
    if !root || Command::new("setpriv").arg("--version").output().is_err() {
        skip("the unprivileged half needs root and setpriv");
        return;
    }
    // The same run as an unprivileged user: not dropped, and said so.
    let nobody = |extra: &[&str]| {
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                common::BIN,
            ])
            .args(extra)
            .current_dir(dir.path())
            .output()
    };
    if !nobody(&["--version"]).is_ok_and(|o| o.status.success()) {
        skip(&format!(
            "the unprivileged half: user 65534 cannot run {}",
            common::BIN
        ));
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            common::BIN,
        ])
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let doc = json_of(&out);
    assert!(said(&doc), "notes: {}", doc["notes"]);
    assert!(stderr_of(&out).contains("needs root"));
}

/// Errors echo what the user typed (issue 12).
#[test]
fn errors_echo_the_values_as_typed() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (&["run", "--bs", "1000"][..], "--bs 1000:"),
        (
            &["run", "--bs=100k", "--data", "1k"][..],
            "--data 1k is less than one block (--bs 100k)",
        ),
        (
            &["run", "--time", "-1s"][..],
            "a duration cannot be negative",
        ),
    ] {
        let out = iogauge(dir.path(), args);
        assert_eq!(out.status.code(), Some(2));
        let err = stderr_of(&out);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// `--output FILE` writes the run in the format its extension names, and the terminal still
/// gets the summary; a file that cannot be written is refused before anything runs (issue 12).
#[test]
fn output_file_in_the_format_of_its_extension() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "run",
        "--engine",
        "null",
        "--size",
        "16m",
        "--time",
        "200ms",
        "--no-store",
    ];
    for (file, extra, check) in [
        ("r.json", &[][..], "\"schema\": \"iogauge.run/1\""),
        ("r.csv", &[][..], "run_id,label"),
        ("r.txt", &[][..], "IOPS"),
        ("r.out", &["--format", "csv"][..], "run_id,label"),
    ] {
        let mut args = base.to_vec();
        args.extend(["--output", file]);
        args.extend(extra);
        let out = iogauge(dir.path(), &args);
        assert!(out.status.success(), "{file}: {}", stderr_of(&out));
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(text.contains(check), "{file}: {text}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("IOPS"),
            "the terminal still gets the summary"
        );
    }
    for bad in [
        &["--output", "r.xls"][..],
        &["--output", "no/such/dir/r.json"][..],
    ] {
        let mut args = base.to_vec();
        args.extend(bad);
        let out = iogauge(dir.path(), &args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert!(
            err.contains("--output") && !err.contains("Filling"),
            "{err}"
        );
    }
}

/// Stored targets carry their absolute path and device, so runs on /data and /data2 can be
/// told apart (issue 12).
#[test]
fn targets_carry_their_absolute_path_and_device() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--size",
            "16m",
            "--time",
            "100ms",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    let t = &doc["results"][0]["target"];
    let abs = t["absolute_path"].as_str().unwrap();
    assert!(abs.starts_with('/'), "{abs}");
    let real = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        abs.starts_with(dir.path().to_str().unwrap()) || abs.starts_with(real.to_str().unwrap()),
        "{abs}"
    );
    // Where sysfs names the device under the file system, the result says which.
    let stack = &doc["system"]["target"]["devices"];
    if let Some(top) = stack.get(0) {
        assert_eq!(t["device"], top["name"]);
    }
}

/// One stream rule for run and suite: results and findings on stdout, progress and errors on
/// stderr (issue 12; `run` printed its findings on stderr).
#[test]
fn findings_go_to_stdout_for_run_and_suite() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &[
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--time",
            "1s",
            "--interval",
            "100ms",
            "--no-store",
        ][..],
        &[
            "suite",
            "quick",
            "--engine",
            "null",
            "--size",
            "16m",
            "--cell-time",
            "600ms",
            // Buffered IO over a working set in RAM: a finding every time (a short cell's
            // steady state is not judged, so it gives none).
            "--buffered",
            "--no-store",
        ][..],
    ] {
        let out = iogauge(dir.path(), args);
        assert!(out.status.success(), "{args:?}: {}", stderr_of(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = stderr_of(&out);
        assert!(
            stdout.contains("findings:"),
            "{args:?}: findings on stdout:\n{stdout}"
        );
        assert!(
            !stderr.contains("findings:"),
            "{args:?}: none on stderr:\n{stderr}"
        );
        assert!(stderr.contains("Filling"), "progress on stderr");
    }
}

/// `--distribution` (issue 16): recorded with the run, refused for sequential patterns and
/// for values it does not know.
#[test]
fn distributions_are_recorded_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json_of(&iogauge(
        dir.path(),
        &[
            "run",
            "--size",
            "16m",
            "--time",
            "200ms",
            "--distribution",
            "hot:10%/90%",
            "--json",
            "--no-store",
        ],
    ));
    assert_eq!(doc["results"][0]["workload"]["distribution"], "hot:10%/90%");
    for bad in [
        &["run", "--rw", "read", "--distribution", "zipf:1.2"][..],
        &["run", "--distribution", "zipf:1"][..],
        &["run", "--distribution", "gauss"][..],
    ] {
        let out = iogauge(dir.path(), bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr_of(&out));
    }
}

/// The offsets iogauge issues under `--distribution zipf:1.2`, as the fake disk received them
/// (not only the sampler): the block of rank k is read with probability k^-1.2 / H(N, 1.2).
/// The seed is fixed and `--data` fixes the number of reads, so the sample is the same every
/// time; the bounds are several standard errors of a sample of that size wide.
#[test]
fn zipf_offsets_reach_the_disk_as_zipf() {
    if !can_mount_fakedisk() {
        return;
    }
    const BLOCKS: usize = 4096;
    const READS: usize = 8192;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("mnt")).unwrap();
    let log = d.join("reads.log");
    let disk = FakeDisk::mount(
        &d.join("backing.img"),
        &d.join("mnt"),
        (BLOCKS * 4096) as u64,
        &["--log-reads", log.to_str().unwrap()],
    );
    let doc = json_of(&iogauge(
        d,
        &[
            "run",
            disk.target().to_str().unwrap(),
            "--engine",
            "psync",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--distribution",
            "zipf:1.2",
            "--data",
            &format!("{}k", READS * 4),
            "--json",
            "--no-store",
        ],
    ));
    assert_eq!(doc["results"][0]["ios"].as_u64(), Some(READS as u64));
    drop(disk);
    let mut hits = vec![0usize; BLOCKS];
    let mut reads = 0;
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let (offset, len) = line.split_once(' ').unwrap();
        let (offset, len): (usize, usize) = (offset.parse().unwrap(), len.parse().unwrap());
        assert_eq!((offset % 4096, len), (0, 4096), "{line}");
        hits[offset / 4096] += 1;
        reads += 1;
    }
    // Every read iogauge counted reached the disk, and nothing else did.
    assert_eq!(reads, READS);
    hits.sort_unstable_by(|a, b| b.cmp(a));
    let h = |n: usize| (1..=n).map(|k| (k as f64).powf(-1.2)).sum::<f64>();
    for top in [1, BLOCKS / 100, BLOCKS / 10] {
        let expected = h(top) / h(BLOCKS);
        let seen = hits[..top].iter().sum::<usize>() as f64 / READS as f64;
        eprintln!("top {top} blocks: {seen:.3} of the reads (zipf:1.2: {expected:.3})");
        // Sorting the sample's counts can only raise the top share a little above the true
        // ranks' share; 0.03 is over six standard errors of 8,192 reads.
        assert!(
            (seen - expected).abs() < 0.03,
            "the {top} most read blocks took {seen:.3} of the reads, zipf:1.2 gives {expected:.3}"
        );
    }
    // Against uniform: the top 1% of blocks would take about 1% of the reads.
    assert!(hits[..BLOCKS / 100].iter().sum::<usize>() > READS / 2);
}

/// `--complete-batch N` reaches the engine and the result says it (with what it costs the
/// latency); where it can do nothing it is refused.
#[test]
fn complete_batch_is_kept_and_said_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = [
        "run",
        "--engine",
        "io_uring",
        "--iodepth",
        "8",
        "--complete-batch",
        "4",
        "--size",
        "16m",
        "--time",
        "300ms",
        "--no-store",
    ];
    let out = iogauge(d, &[&args[..], &["--json"]].concat());
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["engine"]["complete_batch"], 4);
    let out = iogauge(d, &args);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("completions reaped up to 4 at a time"),
        "{text}"
    );
    // The default waits for one and says nothing.
    let out = iogauge(
        d,
        &[
            "run",
            "--size",
            "16m",
            "--time",
            "300ms",
            "--no-store",
            "--json",
        ],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["results"][0]["engine"].get("complete_batch").is_none());
    for (args, needle) in [
        (
            &["run", "--engine", "psync", "--complete-batch", "4"][..],
            "psync",
        ),
        (
            &["run", "--iodepth", "2", "--complete-batch", "4"],
            "at most 2",
        ),
    ] {
        let out = iogauge(d, args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle) && err.lines().count() == 1, "{err}");
    }
}

/// `short` (issue 37: `suite seq --size 256m` measured `write 1M` over 61 ms and said nothing):
/// 4 MiB moved in milliseconds is said to be short; the near miss, 2 MiB paced at 400 IOs a
/// second (1.28 s), is not, and neither is a timed run.
#[test]
fn a_fixed_amount_moved_in_a_moment_is_short() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["run", "data", "--size", "16m", "--json", "--no-store"];
        all.extend_from_slice(args);
        let doc = json_of(&iogauge(dir.path(), &all));
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    let quick = kinds(&["--data", "4m", "--bs", "1m", "--rw", "read"]);
    assert!(quick.contains(&"short".to_string()), "{quick:?}");
    let paced = kinds(&[
        "--data", "2m", "--bs", "4k", "--rw", "randread", "--rate", "400",
    ]);
    assert!(!paced.contains(&"short".to_string()), "{paced:?}");
    let timed = kinds(&["--time", "300ms", "--rw", "randread"]);
    assert!(!timed.contains(&"short".to_string()), "{timed:?}");
}

/// Issue 60: buffered IO takes any block size, as fio's does (a job line pasted from a
/// published check: bs=1000 with direct=0); direct IO keeps whole sectors.
#[test]
fn buffered_io_takes_any_block_size_and_direct_io_whole_sectors() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--buffered",
            "--bs",
            "1000",
            "--rw",
            "randread",
            "--size",
            "8m",
            "--time",
            "1s",
            "--no-store",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc = json_of(&out);
    let r = &doc["results"][0];
    assert_eq!(r["workload"]["bs"], 1000, "{r}");
    let (ios, bytes) = (r["ios"].as_u64().unwrap(), r["bytes"].as_u64().unwrap());
    assert!(ios > 0, "{r}");
    assert_eq!(bytes, ios * 1000);
    // fio's job line as pasted: planned buffered, refused direct at its option.
    let fio = |direct: &str| {
        let direct = format!("--direct={direct}");
        iogauge(
            dir.path(),
            &[
                "fio",
                "--dry-run",
                "--",
                "--name=odd",
                "--rw=read",
                "--bs=1000",
                "--size=1m",
                &direct,
            ],
        )
    };
    let out = fio("0");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = fio("1");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("direct IO needs a multiple of 512 bytes"),
        "{err}"
    );
}
