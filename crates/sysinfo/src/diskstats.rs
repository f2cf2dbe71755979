//! What the block layer counted: a device's `/sys/class/block/NAME/stat` (the kernel's
//! Documentation/block/stat.rst), read before and after a measurement and every interval in
//! between, so a run can be held against what the device really saw — request sizes after
//! splitting and merging, queue depth, utilisation — the check fio leaves to the reader.
//!
//! Sectors in this file are always 512 bytes, whatever the device's logical block size.
//! Counters that cannot be read are `None`, never guessed.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

/// One reading of a device's counters (cumulative since boot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStat {
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub read_ticks_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    /// Flush requests completed (field 16, Linux 5.5+; 0 where the kernel has no such field).
    /// An empty flush from fsync/fdatasync is also counted once in `writes` with no sectors,
    /// so `writes - flushes` is the least number of data writes the device saw.
    #[serde(default)]
    pub flushes: u64,
}

impl DiskStat {
    /// Parses the stat file's text (11 or more fields).
    pub fn parse(text: &str) -> Option<DiskStat> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|v| v.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        if f.len() < 11 {
            return None;
        }
        Some(DiskStat {
            reads: f[0],
            reads_merged: f[1],
            sectors_read: f[2],
            read_ticks_ms: f[3],
            writes: f[4],
            writes_merged: f[5],
            sectors_written: f[6],
            write_ticks_ms: f[7],
            in_flight: f[8],
            io_ticks_ms: f[9],
            time_in_queue_ms: f[10],
            flushes: f.get(15).copied().unwrap_or(0),
        })
    }

    /// The counters of device `name` (a disk or a partition) now.
    pub fn read(name: &str) -> Option<DiskStat> {
        let text = std::fs::read_to_string(format!("/sys/class/block/{name}/stat")).ok()?;
        DiskStat::parse(&text)
    }

    /// What happened between `earlier` and `self` (in_flight is the later reading's).
    pub fn since(&self, earlier: &DiskStat) -> DiskStat {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        DiskStat {
            reads: d(self.reads, earlier.reads),
            reads_merged: d(self.reads_merged, earlier.reads_merged),
            sectors_read: d(self.sectors_read, earlier.sectors_read),
            read_ticks_ms: d(self.read_ticks_ms, earlier.read_ticks_ms),
            writes: d(self.writes, earlier.writes),
            writes_merged: d(self.writes_merged, earlier.writes_merged),
            sectors_written: d(self.sectors_written, earlier.sectors_written),
            write_ticks_ms: d(self.write_ticks_ms, earlier.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: d(self.io_ticks_ms, earlier.io_ticks_ms),
            time_in_queue_ms: d(self.time_in_queue_ms, earlier.time_in_queue_ms),
            flushes: d(self.flushes, earlier.flushes),
        }
    }

    /// Adds another window's counts (repeats of one workload).
    pub fn add(&mut self, o: &DiskStat) {
        self.reads += o.reads;
        self.reads_merged += o.reads_merged;
        self.sectors_read += o.sectors_read;
        self.read_ticks_ms += o.read_ticks_ms;
        self.writes += o.writes;
        self.writes_merged += o.writes_merged;
        self.sectors_written += o.sectors_written;
        self.write_ticks_ms += o.write_ticks_ms;
        self.io_ticks_ms += o.io_ticks_ms;
        self.time_in_queue_ms += o.time_in_queue_ms;
        self.flushes += o.flushes;
    }
}

/// The queue limits that decide how a request is split and how many wait, from
/// `/sys/class/block/NAME/queue` (a partition's are its disk's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueLimits {
    pub max_sectors_kb: Option<u64>,
    pub max_segments: Option<u64>,
    pub max_segment_size: Option<u64>,
    pub nr_requests: Option<u64>,
    pub scheduler: Option<String>,
}

impl QueueLimits {
    pub fn read(name: &str) -> QueueLimits {
        let base = Path::new("/sys/class/block").join(name);
        let dir = if base.join("queue").is_dir() {
            base.join("queue")
        } else {
            base.join("../queue")
        };
        let num = |f: &str| {
            std::fs::read_to_string(dir.join(f))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        let scheduler = std::fs::read_to_string(dir.join("scheduler"))
            .ok()
            .and_then(|s| {
                s.split_whitespace()
                    .find(|w| w.starts_with('['))
                    .map(|w| w.trim_matches(['[', ']']).to_string())
            });
        QueueLimits {
            max_sectors_kb: num("max_sectors_kb"),
            max_segments: num("max_segments"),
            max_segment_size: num("max_segment_size"),
            nr_requests: num("nr_requests"),
            scheduler,
        }
    }
}

/// How early a window after a lead-in opens: a thread's wake-up on a loaded machine is late by
/// milliseconds, and 50 ms of the lead's IO is a few percent of a one-second cell's.
pub const EARLY: Duration = Duration::from_millis(50);

/// Samples devices every `interval` in a thread of its own (no work in the IO threads) until
/// stopped; the result is the whole window's counts and each interval's.
pub struct DeviceWatch {
    names: Vec<String>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<Watched>>,
    /// The window's start when no thread watches (no devices).
    start: Vec<Option<DiskStat>>,
    begun: Instant,
}

/// What the watching thread saw: the counts the window starts from, when, and each interval.
struct Watched {
    start: Vec<Option<DiskStat>>,
    begun: Instant,
    intervals: Vec<Vec<Option<DiskStat>>>,
}

/// One device over one window.
#[derive(Clone, Debug)]
pub struct DeviceWindow {
    pub name: String,
    /// The counts over the window; `None` when the counters could not be read.
    pub total: Option<DiskStat>,
    pub elapsed: Duration,
    /// Counts per interval, in order (the last may be shorter).
    pub intervals: Vec<Option<DiskStat>>,
    pub interval: Duration,
}

impl DeviceWatch {
    pub fn start(names: &[String], interval: Duration) -> DeviceWatch {
        DeviceWatch::after(names, interval, Duration::ZERO)
    }

    /// A window that opens `lead` from now, where the measurement starts after a lead-in
    /// (a ramp, a trial of ways to wait) whose IO runs at another rate and is not iogauge's
    /// measured IO: counted in, the device's rate was the two phases' average (a 0.7 s trial
    /// at four times a busy machine's measured rate read as 2.2× the IO issued, `other-io`).
    /// The window opens [`EARLY`] before the lead ends, so that a watcher woken late still
    /// holds every measured IO. Stopped within the lead, the window is the whole time watched.
    pub fn after(names: &[String], interval: Duration, lead: Duration) -> DeviceWatch {
        let lead = lead.saturating_sub(EARLY);
        let names: Vec<String> = names.to_vec();
        let start: Vec<Option<DiskStat>> = names.iter().map(|n| DiskStat::read(n)).collect();
        let begun = Instant::now();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = (!names.is_empty()).then(|| {
            let (names, stop, mut start) = (names.clone(), stop.clone(), start.clone());
            std::thread::spawn(move || {
                let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
                let opens = begun + lead;
                let mut begun = begun;
                if !lead.is_zero() {
                    while !stopped() && Instant::now() < opens {
                        let left = opens.saturating_duration_since(Instant::now());
                        std::thread::sleep(left.min(Duration::from_millis(20)));
                    }
                    if !stopped() {
                        start = names.iter().map(|n| DiskStat::read(n)).collect();
                        begun = Instant::now();
                    }
                }
                let mut prev = start.clone();
                let mut out: Vec<Vec<Option<DiskStat>>> = vec![Vec::new(); names.len()];
                let mut next = begun + interval;
                while !stopped() {
                    let now = Instant::now();
                    if now < next {
                        std::thread::sleep((next - now).min(Duration::from_millis(20)));
                        continue;
                    }
                    next += interval;
                    for (i, n) in names.iter().enumerate() {
                        let s = DiskStat::read(n);
                        out[i].push(match (&s, &prev[i]) {
                            (Some(a), Some(b)) => Some(a.since(b)),
                            _ => None,
                        });
                        prev[i] = s;
                    }
                }
                // A window shorter than one interval is one sample of its own length (a 1 s
                // run stopped just before its first second had none, and its device document
                // no time series). Longer windows keep whole intervals only.
                if out.iter().all(Vec::is_empty) {
                    for (i, n) in names.iter().enumerate() {
                        out[i].push(match (&DiskStat::read(n), &prev[i]) {
                            (Some(a), Some(b)) => Some(a.since(b)),
                            _ => None,
                        });
                    }
                }
                Watched {
                    start,
                    begun,
                    intervals: out,
                }
            })
        });
        DeviceWatch {
            names,
            stop,
            thread,
            start,
            begun,
        }
    }

    pub fn stop(mut self) -> Vec<DeviceWindow> {
        let stopped = Instant::now();
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let watched = self.thread.take().and_then(|t| t.join().ok());
        let Watched {
            start,
            begun,
            intervals,
        } = watched.unwrap_or(Watched {
            start: self.start,
            begun: self.begun,
            intervals: Vec::new(),
        });
        let elapsed = stopped.saturating_duration_since(begun);
        let interval_of = intervals.first().map_or(0, Vec::len);
        self.names
            .iter()
            .enumerate()
            .map(|(i, n)| DeviceWindow {
                name: n.clone(),
                total: match (DiskStat::read(n), &start[i]) {
                    (Some(a), Some(b)) => Some(a.since(b)),
                    _ => None,
                },
                elapsed,
                intervals: intervals.get(i).cloned().unwrap_or_default(),
                interval: if interval_of > 0 {
                    elapsed / interval_of as u32
                } else {
                    elapsed
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernels_stat_line_and_takes_differences() {
        let a = DiskStat::parse("  100 5 8000 40 20 1 160 10 0 50 60 0 0 0 0 0 0").unwrap();
        let b = DiskStat::parse("  300 9 48000 140 20 1 160 10 2 150 260 0 0 0 0 0 0").unwrap();
        let d = b.since(&a);
        assert_eq!((d.reads, d.sectors_read, d.reads_merged), (200, 40000, 4));
        assert_eq!(
            (d.writes, d.io_ticks_ms, d.time_in_queue_ms, d.in_flight),
            (0, 100, 200, 2)
        );
        assert!(DiskStat::parse("1 2 3").is_none(), "too few fields");
        assert!(DiskStat::parse("1 2 x 4 5 6 7 8 9 10 11").is_none());
    }

    #[test]
    fn a_missing_device_is_none_not_zero() {
        assert!(DiskStat::read("no-such-device-iogauge").is_none());
        let w = DeviceWatch::start(
            &["no-such-device-iogauge".into()],
            Duration::from_millis(10),
        );
        std::thread::sleep(Duration::from_millis(30));
        let out = w.stop();
        assert!(out[0].total.is_none());
        assert!(out[0].intervals.iter().all(Option::is_none));
    }

    #[test]
    fn a_window_shorter_than_an_interval_is_one_sample() {
        // Any device the kernel counts will do: the window is only read, never written.
        let stats = std::fs::read_to_string("/proc/diskstats").unwrap();
        let name = stats
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .nth(2)
            .unwrap();
        let w = DeviceWatch::start(&[name.to_string()], Duration::from_secs(3600));
        let out = w.stop();
        assert_eq!(out[0].intervals.len(), 1, "{:?}", out[0]);
        assert!(out[0].intervals[0].is_some());
        assert_eq!(out[0].interval, out[0].elapsed);
    }
}
