//! What the storage under a result did while it ran: each block device's counters (and their
//! per-interval samples), and the other processes' IO over the same windows.

use serde::{Deserialize, Serialize};

/// One block device's view of a result (`/sys/class/block/DEV/stat` over the measurement),
/// for reads and writes apart. Counters that could not be read are null, never guessed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceDoc {
    pub name: String,
    /// Seconds the counters were watched (the measurement with its start-up).
    pub elapsed_s: f64,
    pub reads: Option<u64>,
    pub writes: Option<u64>,
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
    pub read_merges: Option<u64>,
    pub write_merges: Option<u64>,
    /// Flush requests (fsync, fdatasync, FUA emulation), counted apart from data writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushes: Option<u64>,
    pub avg_read_request_bytes: Option<f64>,
    pub avg_write_request_bytes: Option<f64>,
    /// time_in_queue / elapsed: the IOs the device held on average.
    pub avg_queue_depth: Option<f64>,
    /// io_ticks / elapsed, 0–1: the share of time the device was busy.
    pub util: Option<f64>,
    /// Mean device time per request (ticks / requests), ms.
    pub read_ms_per_io: Option<f64>,
    pub write_ms_per_io: Option<f64>,
    pub limits: iogauge_sysinfo::diskstats::QueueLimits,
    /// Per interval: request sizes, queue depth and utilisation over time.
    #[serde(default)]
    pub intervals: Vec<DeviceSample>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceSample {
    /// End of the interval, seconds since the watch started.
    pub t_s: f64,
    pub reads: u64,
    pub writes: u64,
    pub avg_read_request_bytes: Option<f64>,
    pub avg_write_request_bytes: Option<f64>,
    pub avg_queue_depth: f64,
    pub util: f64,
}

impl DeviceDoc {
    /// The document of one device over a window of `elapsed_s` seconds.
    pub fn of(
        name: &str,
        total: Option<&iogauge_sysinfo::diskstats::DiskStat>,
        elapsed_s: f64,
        intervals: &[(f64, Option<iogauge_sysinfo::diskstats::DiskStat>)],
        limits: iogauge_sysinfo::diskstats::QueueLimits,
    ) -> DeviceDoc {
        let per = |n: u64, v: u64| (n > 0).then(|| v as f64 / n as f64);
        let secs = elapsed_s.max(1e-9);
        let samples = intervals
            .iter()
            .filter_map(|(t, s)| {
                let s = s.as_ref()?;
                let step = intervals.first().map_or(1.0, |f| f.0).max(1e-3);
                Some(DeviceSample {
                    t_s: *t,
                    reads: s.reads,
                    writes: s.writes,
                    avg_read_request_bytes: per(s.reads, s.sectors_read * 512),
                    avg_write_request_bytes: per(s.writes, s.sectors_written * 512),
                    avg_queue_depth: s.time_in_queue_ms as f64 / 1e3 / step,
                    util: (s.io_ticks_ms as f64 / 1e3 / step).min(1.0),
                })
            })
            .collect();
        match total {
            None => DeviceDoc {
                name: name.into(),
                elapsed_s,
                limits,
                intervals: samples,
                ..DeviceDoc::default()
            },
            Some(t) => DeviceDoc {
                name: name.into(),
                elapsed_s,
                reads: Some(t.reads),
                writes: Some(t.writes),
                read_bytes: Some(t.sectors_read * 512),
                write_bytes: Some(t.sectors_written * 512),
                read_merges: Some(t.reads_merged),
                write_merges: Some(t.writes_merged),
                flushes: Some(t.flushes),
                avg_read_request_bytes: per(t.reads, t.sectors_read * 512),
                avg_write_request_bytes: per(t.writes, t.sectors_written * 512),
                avg_queue_depth: Some(t.time_in_queue_ms as f64 / 1e3 / secs),
                util: Some((t.io_ticks_ms as f64 / 1e3 / secs).min(1.0)),
                read_ms_per_io: per(t.reads, t.read_ticks_ms),
                write_ms_per_io: per(t.writes, t.write_ticks_ms),
                limits,
                intervals: samples,
            },
        }
    }
}

/// Other processes' storage IO over a result's device windows (see `ResultDoc::others`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OthersDoc {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Processes whose counters could not be read (another user's, without root).
    pub unreadable: u32,
    /// The busiest few, most bytes first.
    pub top: Vec<OtherDoc>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OtherDoc {
    pub pid: u32,
    pub command: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// What it moved is what its children that ended in the window moved: it held nothing on
    /// the stack itself (a shell running a loop of short `dd`s).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub through_children: bool,
}

impl OthersDoc {
    /// How many processes a document keeps by name.
    const KEPT: usize = 5;

    pub fn of(o: &iogauge_sysinfo::procio::Others) -> OthersDoc {
        OthersDoc {
            read_bytes: o.read_bytes,
            write_bytes: o.write_bytes,
            unreadable: o.unreadable,
            top: o
                .top
                .iter()
                .take(Self::KEPT)
                .map(|p| OtherDoc {
                    pid: p.pid,
                    command: p.command.clone(),
                    read_bytes: p.read_bytes,
                    write_bytes: p.write_bytes,
                    through_children: p.through_children,
                })
                .collect(),
        }
    }

    /// Two windows (repeats of one cell) as one: their sums; the busiest of both.
    pub fn add(&mut self, o: &OthersDoc) {
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.unreadable = self.unreadable.max(o.unreadable);
        for p in &o.top {
            match self
                .top
                .iter_mut()
                .find(|q| q.pid == p.pid && q.command == p.command)
            {
                Some(q) => {
                    q.read_bytes += p.read_bytes;
                    q.write_bytes += p.write_bytes;
                }
                None => self.top.push(p.clone()),
            }
        }
        self.top
            .sort_by_key(|p| std::cmp::Reverse(p.read_bytes + p.write_bytes));
        self.top.truncate(Self::KEPT);
    }
}
