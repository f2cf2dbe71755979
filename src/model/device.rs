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

impl DeviceDoc {
    /// This device's document over its window and then `next`'s (a later repeat of the same
    /// measurement): counts added, their averages taken anew over both, intervals end to end.
    /// A count either window lacks is unknown for both.
    pub fn then(&mut self, next: &DeviceDoc) {
        let add = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        // An average weighted by what it is an average of (requests, or seconds).
        let weigh = |a: Option<f64>, wa: f64, b: Option<f64>, wb: f64| {
            let (a, b) = (a?, b?);
            Some(match wa + wb > 0.0 {
                true => (a * wa + b * wb) / (wa + wb),
                false => 0.0,
            })
        };
        let n = |x: Option<u64>| x.unwrap_or(0) as f64;
        let offset = self.elapsed_s;
        self.avg_queue_depth = weigh(
            self.avg_queue_depth,
            offset,
            next.avg_queue_depth,
            next.elapsed_s,
        );
        self.util = weigh(self.util, offset, next.util, next.elapsed_s);
        self.read_ms_per_io = weigh(
            self.read_ms_per_io,
            n(self.reads),
            next.read_ms_per_io,
            n(next.reads),
        );
        self.write_ms_per_io = weigh(
            self.write_ms_per_io,
            n(self.writes),
            next.write_ms_per_io,
            n(next.writes),
        );
        self.reads = add(self.reads, next.reads);
        self.writes = add(self.writes, next.writes);
        self.read_bytes = add(self.read_bytes, next.read_bytes);
        self.write_bytes = add(self.write_bytes, next.write_bytes);
        self.read_merges = add(self.read_merges, next.read_merges);
        self.write_merges = add(self.write_merges, next.write_merges);
        self.flushes = add(self.flushes, next.flushes);
        let per = |v: Option<u64>, n: Option<u64>| Some(v? as f64 / n.filter(|n| *n > 0)? as f64);
        self.avg_read_request_bytes = per(self.read_bytes, self.reads);
        self.avg_write_request_bytes = per(self.write_bytes, self.writes);
        self.elapsed_s += next.elapsed_s;
        self.intervals
            .extend(next.intervals.iter().map(|s| DeviceSample {
                t_s: s.t_s + offset,
                ..s.clone()
            }));
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
