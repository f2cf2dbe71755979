//! The database timeline and the `checkpoint` finding against kernel-made ground truth (issue
//! 27): a pgbench run whose data directory sits on a slow device — a loop device whose IO goes
//! to a file on a second, blkio write-throttled loop device — with a small max_wal_size, so a
//! checkpoint starts mid-run and its writes fill the device's queue. The finding must fire
//! with its dip within 3 s of the checkpoint the server's own log records. The near miss: the
//! same stack unthrottled in RAM, where checkpoints happen and cost nothing, and nothing fires.
//!
//! Why two loop devices: blk-throttle holds a throttled cgroup's requests *above* the device it
//! throttles, so that device's counters never show the queue. Throttling the lower device makes
//! the upper one's requests wait in flight, as on a saturated disk, and the upper one is the
//! device under the data directory that iogauge watches.

use crate::common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// One database run at a time: two pgbench runs on two cores would make each other's dips.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The throttle under the checkpoint: WAL for ~1,000 TPS fits in it, a checkpoint's pages do
/// not.
const THROTTLE_BPS: u64 = 16_000_000;

/// A file system on a loop device (direct IO) whose image lies on a file system on a RAM-backed
/// loop device. Fields drop in order: the upper mount, its device, the lower mount, the RAM.
struct Stack {
    top: Mount,
    upper: LoopDev,
    _bottom: Mount,
    lower: RamLoop,
}

impl Stack {
    fn new(dir: &Path) -> Stack {
        let lower = RamLoop::new(1 << 30);
        sh("mkfs.ext4", &["-q", &lower.dev.dev]);
        let bottom = Mount::new(&lower.dev.dev, &dir.join("lower"), "defaults");
        let image = bottom.0.join("disk.img");
        sh("fallocate", &["-l", "800M", image.to_str().unwrap()]);
        let dev = losetup(&["-f", "--show", "--direct-io=on", image.to_str().unwrap()]);
        let upper = LoopDev {
            dev,
            file: std::fs::canonicalize(&image).unwrap(),
        };
        sh("mkfs.ext4", &["-q", &upper.dev]);
        let top = Mount::new(&upper.dev, &dir.join("top"), "defaults");
        Stack {
            top,
            upper,
            _bottom: bottom,
            lower,
        }
    }
}

/// Root, cgroup v1 blkio, PostgreSQL and mkfs.ext4, or a loud skip.
fn rig(tag: &str) -> Option<(tempfile::TempDir, Blkio)> {
    if !is_root() {
        skip("needs root");
        return None;
    }
    let Some(cg) = Blkio::new(tag) else {
        skip("needs cgroup v1 blkio");
        return None;
    };
    if !have("mkfs.ext4") {
        skip("needs mkfs.ext4");
        return None;
    }
    if !have_postgres() {
        return None;
    }
    Some((tempfile::tempdir().unwrap(), cg))
}

/// A 25 s pgbench run on the stack's file system, iogauge and so the server inside `cg`, the
/// lower device throttled to `throttle` bytes/s of writes once the data is loaded (loading
/// under the throttle would take minutes). Its JSON document and the server log it kept.
fn run(dir: &Path, cg: &Blkio, stack: &Stack, throttle: Option<u64>) -> (Value, String) {
    let target = stack.top.0.join("data");
    std::fs::create_dir(&target).unwrap();
    let args = [
        "db",
        "pgbench",
        target.to_str().unwrap(),
        "--scale",
        "10",
        "--clients",
        "4",
        "--time",
        "25s",
        "--no-storage",
        "--keep",
        "--json",
        // A checkpoint once ~60 MB of WAL are written: about 10–15 s into the throttled run.
        "--pg-setting",
        "max_wal_size=128MB",
        // Its pages written at once rather than spread: a burst the device cannot absorb.
        "--pg-setting",
        "checkpoint_completion_target=0.1",
    ];
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(cg.iogauge(&quoted.join(" ")))
        .current_dir(dir)
        .env("IOGAUGE_DB", dir.join("results.db"))
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir));
    let mut p = Spawned::start(cmd);
    p.wait_for("loaded ", WATCHDOG);
    if let Some(bps) = throttle {
        let majmin =
            std::fs::read_to_string(format!("/sys/block/{}/dev", stack.lower.dev.name())).unwrap();
        std::fs::write(
            cg.0.join("blkio.throttle.write_bps_device"),
            format!("{} {bps}", majmin.trim()),
        )
        .unwrap();
    }
    let out = p.finish(WATCHDOG);
    let doc = json_of(&out);
    let log = kept_log(&target);
    (doc, log)
}

/// The server log of the cluster kept (--keep) under `target`.
fn kept_log(target: &Path) -> String {
    let cluster: PathBuf = std::fs::read_dir(target)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("iogauge-pg-"))
        })
        .expect("the kept cluster");
    std::fs::read_to_string(cluster.join("server.log")).unwrap()
}

/// The checkpoints the server log records as (start, end) in seconds since the Unix epoch:
/// the ground truth, read here without iogauge's parser.
fn logged_checkpoints(log: &str) -> Vec<(f64, Option<f64>)> {
    let epoch = |line: &str| -> f64 {
        // "2026-11-22 21:22:38.846 UTC [123] LOG:  checkpoint starting: wal"
        let out = Command::new("date")
            .args(["-u", "-d", &line[..27], "+%s.%N"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    let mut out: Vec<(f64, Option<f64>)> = Vec::new();
    for line in log.lines() {
        if line.contains("checkpoint starting:") {
            out.push((epoch(line), None));
        } else if line.contains("checkpoint complete:") {
            if let Some(last) = out.last_mut() {
                last.1 = Some(epoch(line));
            }
        }
    }
    out
}

fn of_kind<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

#[test]
fn a_checkpoint_on_a_saturated_device_is_named_at_the_time_the_server_logged() {
    let _quiet = quiet_turn(module_path!());
    let Some((dir, cg)) = rig("timeline-ckpt") else {
        return;
    };
    let _one = hold(&ONE_AT_A_TIME);
    let stack = Stack::new(dir.path());
    let (doc, log) = run(dir.path(), &cg, &stack, Some(THROTTLE_BPS));
    let t = &doc["results"][0]["timeline"];
    let zero = f(&t["started_unix_s"]);
    assert_eq!(t["rows"].as_array().unwrap().len(), 25, "{t}");
    assert!(
        t["devices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == stack.upper.name()),
        "{}",
        t["devices"]
    );
    // Checkpoints that began while pgbench ran, by the server's own clock.
    let during: Vec<(f64, Option<f64>)> = logged_checkpoints(&log)
        .into_iter()
        .filter(|(s, _)| *s >= zero && *s < zero + 25.0)
        .map(|(s, e)| (s - zero, e.map(|e| e - zero)))
        .collect();
    assert!(!during.is_empty(), "no checkpoint during the run:\n{log}");
    let found = of_kind(&doc, "checkpoint");
    assert!(
        !found.is_empty(),
        "no checkpoint finding; logged {during:?}; findings {}",
        doc["findings"]
    );
    let f0 = found[0];
    let (dip_start, dip_end) = (f(&f0["evidence"]["start_s"]), f(&f0["evidence"]["end_s"]));
    let near = during.iter().any(|&(s, e)| {
        (dip_start - s).abs() <= 3.0 || e.is_some_and(|e| (dip_end - e).abs() <= 3.0)
    });
    assert!(
        near,
        "dip {dip_start}–{dip_end} s is not within 3 s of a logged checkpoint {during:?}: {}",
        f0["summary"]
    );
    assert!(f(&f0["evidence"]["fall"]) >= 0.3, "{f0}");
    // The same dip is not named again as a stall: once, with its cause.
    for s in of_kind(&doc, "stall") {
        let (a, d) = (
            f(&s["evidence"]["start_s"]),
            f(&s["evidence"]["duration_s"]),
        );
        assert!(
            a + d < dip_start - 1.0 || a > dip_end + 1.0,
            "a stall inside the checkpoint's dip: {s}"
        );
    }
    let summary = f0["summary"].as_str().unwrap();
    assert!(
        summary.contains("during checkpoint") && summary.contains(stack.upper.name()),
        "{summary}"
    );
    // show: the text timeline, one line per second, the checkpoint marked.
    let shown = iogauge(dir.path(), &["show", "last"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{}", stderr_of(&shown));
    assert!(text.contains("timeline of pgbench"), "{text}");
    assert!(text.contains("ckpt "), "{text}");
    assert!(
        text.contains(&format!("{} wr MiB/s", stack.upper.name())),
        "{text}"
    );
    eprintln!("{text}\nserver log checkpoints (s from the first transaction): {during:?}");
}

#[test]
fn checkpoints_on_a_fast_device_cost_no_transactions_and_name_nothing() {
    let _quiet = quiet_turn(module_path!());
    let Some((dir, cg)) = rig("timeline-none") else {
        return;
    };
    let _one = hold(&ONE_AT_A_TIME);
    let stack = Stack::new(dir.path());
    let (doc, log) = run(dir.path(), &cg, &stack, None);
    let t = &doc["results"][0]["timeline"];
    let zero = f(&t["started_unix_s"]);
    let during = logged_checkpoints(&log)
        .into_iter()
        .filter(|(s, _)| *s >= zero && *s < zero + 25.0)
        .count();
    assert!(during > 0, "the near miss needs checkpoints:\n{log}");
    assert!(
        !t["flushes"].as_array().unwrap().is_empty(),
        "the timeline lost the logged checkpoints: {t}"
    );
    assert!(
        of_kind(&doc, "checkpoint").is_empty(),
        "{}",
        doc["findings"]
    );
    let tps: Vec<f64> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| f(&r["tps"]))
        .collect();
    eprintln!(
        "{during} checkpoints logged; TPS per second from {:.0} to {:.0}",
        tps.iter().cloned().fold(f64::INFINITY, f64::min),
        tps.iter().cloned().fold(0.0, f64::max)
    );
}
