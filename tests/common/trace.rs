//! What the kernel sent a block device, from the `block:block_rq_issue` tracepoint, in a trace
//! instance of the test's own filtered to that device: each request's place, size and IO
//! priority, ground truth for what iogauge asked.

use super::skip;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const TRACING: &str = "/sys/kernel/tracing";

/// A trace instance of the test's own recording the requests issued to one block device.
pub struct Issued(PathBuf);

impl Issued {
    pub fn on(dev: &str) -> Option<Issued> {
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
        // One instance per use: tests of one binary run at once.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = root
            .join("instances")
            .join(format!("iogauge-test-{}-{n}", std::process::id()));
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
    pub fn take(&self) -> BTreeMap<String, u64> {
        self.take_by(false)
    }

    /// The same, with each request's size in bytes before its priority (`4096 rt,0`).
    pub fn take_by(&self, sized: bool) -> BTreeMap<String, u64> {
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

impl Issued {
    /// The requests issued since the last take, in order: (first byte, bytes); the trace is
    /// emptied.
    pub fn places(&self) -> Vec<(u64, u64)> {
        self.places_of(|_| true)
    }

    /// [`Issued::places`] of the writes only (the request's flags, "W", "WS", "WFS", hold a W).
    pub fn writes(&self) -> Vec<(u64, u64)> {
        self.places_of(|rwbs| rwbs.contains('W'))
    }

    fn places_of(&self, keep: impl Fn(&str) -> bool) -> Vec<(u64, u64)> {
        self.flagged()
            .into_iter()
            .filter(|(flags, _, _)| keep(flags))
            .map(|(_, at, len)| (at, len))
            .collect()
    }

    /// Every request issued since the last take, in order: (its flags, e.g. "WS" or "D" for a
    /// discard, first byte, bytes); the trace is emptied.
    pub fn flagged(&self) -> Vec<(String, u64, u64)> {
        self.timed()
            .into_iter()
            .map(|(_, flags, at, len)| (flags, at, len))
            .collect()
    }

    /// [`Issued::flagged`], each request with the kernel's time of its issue first (seconds
    /// on the trace clock).
    pub fn timed(&self) -> Vec<(f64, String, u64, u64)> {
        let text = std::fs::read_to_string(self.0.join("trace")).unwrap();
        std::fs::write(self.0.join("trace"), "").unwrap();
        text.lines()
            .filter(|l| l.contains("block_rq_issue:"))
            .map(|line| {
                // "iogauge-w0-123 [001] ..... 38349.569514: block_rq_issue: 7,0 WS 65536 () 0 +
                // 128 [iogauge-w0]": the time ends in a colon before the event, the flags
                // follow the device.
                let (head, event) = line.split_once("block_rq_issue:").unwrap();
                let at: f64 = head
                    .split_whitespace()
                    .last()
                    .and_then(|t| t.trim_end_matches(':').parse().ok())
                    .unwrap();
                let flags = event.split_whitespace().nth(1).unwrap_or("").to_string();
                let words: Vec<&str> = line.split_whitespace().collect();
                let plus = words.iter().position(|w| *w == "+").unwrap();
                let sector: u64 = words[plus - 1].parse().unwrap();
                let sectors: u64 = words[plus + 1].parse().unwrap();
                (at, flags, sector * 512, sectors * 512)
            })
            .collect()
    }
}

impl Drop for Issued {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("events/block/block_rq_issue/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}
