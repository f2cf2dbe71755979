//! fio's IO priorities (issue 60): `prioclass`/`prio` give every IO of a job's threads a
//! class, and `cmdprio_percentage` with `cmdprio_class` gives a share of its IOs a class of
//! their own (io_uring's per-IO priority), as `cmdprio-percentage.fio` asks. Ground truth: the
//! kernel's `block:block_rq_issue` tracepoint, which prints the priority of every request the
//! device was sent, read from a trace instance of the test's own filtered to one loop device.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::common;
use common::*;

const TRACING: &str = "/sys/kernel/tracing";

/// A trace instance of the test's own recording the requests issued to one block device.
struct Issued(PathBuf);

impl Issued {
    fn on(dev: &str) -> Option<Issued> {
        let root = Path::new(TRACING);
        if !root.join("instances").exists() {
            // A machine that has not mounted tracefs yet (the test runs as root).
            let _ = std::process::Command::new("mount")
                .args(["-t", "tracefs", "nodev", TRACING])
                .status();
        }
        if !root.join("instances").exists() {
            skip("needs tracefs (/sys/kernel/tracing)");
            return None;
        }
        let dir = root
            .join("instances")
            .join(format!("iogauge-prio-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        let issued = Issued(dir);
        // The kernel's dev_t in a tracepoint: major << 20 | minor.
        let rdev = std::fs::metadata(dev).unwrap().rdev();
        let (major, minor) = (
            (rdev >> 8) & 0xfff,
            (rdev & 0xff) | ((rdev >> 12) & 0xfff00),
        );
        let event = issued.0.join("events/block/block_rq_issue");
        std::fs::write(issued.0.join("buffer_size_kb"), "16384").unwrap();
        std::fs::write(
            event.join("filter"),
            format!("dev == {}", (major << 20) | minor),
        )
        .unwrap();
        std::fs::write(event.join("enable"), "1").unwrap();
        Some(issued)
    }

    /// Requests issued since the last call, by class and level (`rt,0`, `idle,0`, `be,7`); the
    /// trace is emptied.
    fn take(&self) -> BTreeMap<String, u64> {
        self.take_by(false)
    }

    /// The same, with each request's size in bytes before its priority (`4096 rt,0`).
    fn take_by(&self, sized: bool) -> BTreeMap<String, u64> {
        let text = std::fs::read_to_string(self.0.join("trace")).unwrap();
        std::fs::write(self.0.join("trace"), "").unwrap();
        let mut by = BTreeMap::new();
        for line in text.lines().filter(|l| l.contains("block_rq_issue:")) {
            // "... block_rq_issue: 7,0 R 4096 () 2048 + 8 be,0,7 [iogauge-w0]": class, hint,
            // level.
            let words: Vec<&str> = line.split_whitespace().collect();
            let plus = words.iter().position(|w| *w == "+").unwrap();
            let prio: Vec<&str> = words[plus + 2].split(',').collect();
            let key = format!("{},{}", prio[0], prio[2]);
            let key = match sized {
                // The bytes are the word before "()".
                true => format!(
                    "{} {key}",
                    words[words.iter().position(|w| *w == "()").unwrap() - 1]
                ),
                false => key,
            };
            *by.entry(key).or_insert(0) += 1;
        }
        by
    }
}

impl Drop for Issued {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("events/block/block_rq_issue/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn run(dir: &Path, text: &str) {
    let file = dir.join("prio.fio");
    std::fs::write(&file, text).unwrap();
    let out = iogauge(dir, &["fio", "--no-store", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// cmdprio-percentage.fio's shape: threads idle, a fifth of the IOs real-time. 4,000 reads (2 s
/// at 2,000/s): about 800 real-time (±25, one standard deviation), the rest idle, none other.
/// Then a sync engine's threads at best effort level 7: every request be,7; and a priority per
/// block size: every 4 KiB request real-time, every 8 KiB one idle.
#[test]
fn a_share_of_ios_carries_its_own_priority_and_the_rest_the_threads() {
    if !is_root() {
        skip("needs root (a loop device, the tracepoint, the real-time class)");
        return;
    }
    let ram = RamLoop::new(64 << 20);
    let Some(issued) = Issued::on(&ram.dev.dev) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let head = format!(
        "[global]\nfilename={}\ndirect=1\nsize=64m\nruntime=2\ntime_based\nrw=randread\nbs=4k\n",
        ram.dev.dev
    );
    issued.take();
    run(
        dir.path(),
        &format!("{head}[a]\nioengine=libaio\niodepth=4\nrate_iops=2000\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\n"),
    );
    let by = issued.take();
    let (rt, idle) = (
        by.get("rt,0").copied().unwrap_or(0),
        by.get("idle,0").copied().unwrap_or(0),
    );
    let all: u64 = by.values().sum();
    assert_eq!(rt + idle, all, "{by:?}");
    assert!(all >= 3_600, "{by:?}");
    let share = rt as f64 / all as f64;
    assert!((0.16..=0.24).contains(&share), "{share} real-time: {by:?}");

    run(
        dir.path(),
        &format!("{head}[b]\nioengine=psync\nrate_iops=500\nprioclass=2\nprio=7\n"),
    );
    let by = issued.take();
    let all: u64 = by.values().sum();
    assert!(all >= 900 && by.get("be,7") == Some(&all), "{by:?}");

    // cmdprio-bssplit.fio's form: every 4 KiB read real-time, no 8 KiB one (one IO at a time,
    // so no request merges two).
    run(
        dir.path(),
        &format!("{head}[c]\nioengine=io_uring\nrate_iops=1000\nprioclass=3\nbssplit=4k/50:8k/50\ncmdprio_bssplit=4k/100/1/0:8k/0\n"),
    );
    let by = issued.take_by(true);
    let (small, large) = (
        by.get("4096 rt,0").copied().unwrap_or(0),
        by.get("8192 idle,0").copied().unwrap_or(0),
    );
    assert!(
        small >= 600 && large >= 600 && small + large == by.values().sum::<u64>(),
        "{by:?}"
    );

    // The near miss: no priority asked, none given (the kernel's default).
    run(
        dir.path(),
        &format!("{head}[c]\nioengine=psync\nrate_iops=500\n"),
    );
    let by = issued.take();
    assert!(
        !by.is_empty()
            && !by.contains_key("rt,0")
            && !by.contains_key("idle,0")
            && !by.contains_key("be,7"),
        "{by:?}"
    );
}
