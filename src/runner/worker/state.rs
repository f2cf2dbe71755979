//! A worker's small parts, each allocated once before the first IO: the queue's slots, the
//! streams of offsets (one per file), the pacing of a rate, the pauses of a thinktime, and the
//! interval being counted.

use super::super::IntervalMsg;
use super::WorkerCfg;
use crate::measure::{self, Hist};
use crate::workload::files::FilePicker;
use crate::workload::offsets::Offsets;
use crate::workload::Think;
use anyhow::anyhow;
use iogauge_engine::{Io, Op};
use iogauge_verify::Ticket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// The queue's slots: which are free, which were queued since the last hand-over, and for each
/// the IO in it with what its completion needs.
pub(super) struct Slots {
    pub free: Vec<u32>,
    pub fresh: Vec<u32>,
    pub io: Vec<Io>,
    /// When each IO was handed to the kernel.
    pub t: Vec<Instant>,
    /// Each IO's own size (a block-size mix draws one per IO), counted when it completes whole.
    pub len: Vec<u32>,
    /// With a rate, each IO's planned start: latency counts from it, so an IO that could not
    /// start on time (the device stalled, the queue was full) shows the wait it would have
    /// cost a database.
    pub planned: Vec<Instant>,
    /// With --verify: the block's offset as first queued (a short transfer moves `io.offset`),
    /// the write's ticket, and the tracker's word when a read was queued.
    pub block: Vec<u64>,
    pub ticket: Vec<Ticket>,
    pub seen: Vec<u64>,
}

impl Slots {
    pub fn new(depth: usize, origin: Instant) -> Slots {
        let idle = Io {
            slot: 0,
            file: 0,
            op: Op::Read,
            offset: 0,
            len: 0,
            buf_off: 0,
            prio: 0,
        };
        Slots {
            free: (0..depth as u32).rev().collect(),
            fresh: Vec::with_capacity(depth),
            io: vec![idle; depth],
            t: vec![origin; depth],
            len: vec![0; depth],
            planned: vec![origin; depth],
            block: vec![0; depth],
            ticket: vec![Ticket::default(); depth],
            seen: vec![0; depth],
        }
    }

    /// Every IO queued since the last hand-over goes to the kernel at `t`.
    #[inline]
    pub fn handed_over(&mut self, t: Instant) {
        for s in self.fresh.drain(..) {
            self.t[s as usize] = t;
        }
    }
}

/// Where IOs go: one stream of offsets per file, each with its own positions (as fio keeps an
/// offset per file), and a picker only when there are several, so a one-file job takes its
/// stream after one branch.
pub(super) struct Streams {
    first: Offsets,
    more: Vec<Offsets>,
    picker: Option<FilePicker>,
}

impl Streams {
    pub fn of(cfg: &WorkerCfg, files: usize) -> Streams {
        let spec = cfg.spec;
        let files = files.clamp(1, usize::from(u16::MAX) + 1);
        let first = Offsets::of(spec, cfg.id, cfg.range_start, cfg.range_bytes);
        // One file only: fio's zbd is refused with nrfiles (fio::fixup).
        let first = match &cfg.zones {
            Some(t) => first.at_write_pointers(t.clone(), spec.rw.trims()),
            None => first,
        };
        let more = (1..files as u32)
            .map(|f| Offsets::of_file(spec, cfg.id, f, cfg.range_start, cfg.range_bytes))
            .collect();
        let picker = (files > 1).then(|| {
            FilePicker::new(
                spec.file_service,
                files as u32,
                first.pass(),
                spec.seed,
                cfg.id,
            )
        });
        Streams {
            first,
            more,
            picker,
        }
    }

    /// The file of the next IO and its stream.
    #[inline]
    pub fn next(&mut self) -> (u16, &mut Offsets) {
        match self.picker.as_mut() {
            None => (0, &mut self.first),
            Some(p) => match p.next() {
                0 => (0, &mut self.first),
                f => (f as u16, &mut self.more[f - 1]),
            },
        }
    }
}

/// With a rate, IOs start on a fixed schedule, which never skips ahead to hide a backlog.
pub(super) struct Pacer {
    pub period: Option<Duration>,
    pub next_due: Instant,
    /// Draws each gap from an exponential distribution of mean `period` (a Poisson process),
    /// seeded per thread; `None` spaces the IOs evenly.
    pub poisson: Option<fastrand::Rng>,
}

impl Pacer {
    /// The next IO's planned start, or `None` while it is not due; without a rate, `origin`
    /// (never read).
    #[inline]
    pub fn next(&mut self, origin: Instant) -> Option<Instant> {
        let Some(p) = self.period else {
            return Some(origin);
        };
        if Instant::now() < self.next_due {
            return None;
        }
        let planned = self.next_due;
        self.next_due += match &mut self.poisson {
            // 1 − U is in (0, 1]: its logarithm is finite.
            Some(rng) => p.mul_f64(-(1.0 - rng.f64()).ln()),
            None => p,
        };
        Some(planned)
    }

    /// Sleeps until the next IO is due or the run ends, at most 50 ms (a stop request is
    /// looked at after).
    pub fn wait(&self, deadline: Option<Instant>) {
        let now = Instant::now();
        let until = deadline.map_or(self.next_due, |d| d.min(self.next_due));
        if now < until {
            std::thread::sleep((until - now).min(Duration::from_millis(50)));
        }
    }
}

/// fio's thinktime as a thread runs it: IOs issued towards the next pause, and whether it is
/// due (then the thread issues nothing until what is in flight has completed and it paused).
pub(super) struct Thinker {
    think: Think,
    count: u32,
    pub due: bool,
    /// When the IO since the last pause began (for `iotime`).
    since: Instant,
}

impl Thinker {
    pub fn new(think: Think, origin: Instant) -> Thinker {
        Thinker {
            think,
            count: 0,
            due: false,
            since: origin,
        }
    }

    /// At most `blocks` IOs are issued between two pauses (fio: "no more than [thinktime_blocks]
    /// IO will be queued before we have to complete it and do our thinktime").
    #[inline]
    pub fn issued(&mut self) {
        self.count += 1;
        if self.count >= self.think.blocks {
            self.due = true;
        }
    }

    /// With `iotime`, the pause is due once that much time of IO has passed.
    #[inline]
    pub fn tick(&mut self, now: Instant) {
        if self
            .think
            .iotime
            .is_some_and(|t| now.saturating_duration_since(self.since) >= t)
        {
            self.due = true;
        }
    }

    /// Spins for the pause's spin, then sleeps the rest of it, ending at the run's end or at a
    /// stop request (looked at every 50 ms) if they come first.
    pub fn pause(&mut self, deadline: Option<Instant>, stop: &AtomicBool) {
        let start = Instant::now();
        let end = |d: Duration| deadline.map_or(start + d, |dl| dl.min(start + d));
        let spun = end(self.think.spin);
        while Instant::now() < spun {
            std::hint::spin_loop();
        }
        sleep_until(end(self.think.pause), stop);
        self.count = 0;
        self.due = false;
        self.since = Instant::now();
    }
}

/// Sleeps until `end`, or until a stop request (looked at every 50 ms) if it comes first: a
/// thread's pause (thinktime) or its wait behind its flow.
pub(super) fn sleep_until(end: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= end || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

/// The interval being counted, sent to the runner's main thread when the next one begins.
pub(super) struct Interval {
    hist: Hist,
    idx: u64,
    ios: u64,
    bytes: u64,
    ns: u128,
}

impl Interval {
    pub fn new(length: Duration) -> Interval {
        Interval {
            hist: measure::interval_hist(),
            idx: 0,
            ios: 0,
            bytes: 0,
            ns: length.as_nanos(),
        }
    }

    /// Moves to the interval `since` (the measurement's start) falls in; the one that ended is
    /// sent when it saw any IO.
    #[inline]
    pub fn roll(&mut self, since: Duration, tx: &Sender<IntervalMsg>) {
        let idx = (since.as_nanos() / self.ns) as u64;
        if idx != self.idx {
            if self.ios > 0 {
                let h = std::mem::replace(&mut self.hist, measure::interval_hist());
                self.send(h, tx);
            }
            self.idx = idx;
            self.ios = 0;
            self.bytes = 0;
        }
    }

    #[inline]
    pub fn record(&mut self, lat: u64, len: u64) {
        self.hist.saturating_record(lat);
        self.ios += 1;
        self.bytes += len;
    }

    /// The last interval, sent when it saw any IO.
    pub fn finish(&mut self, tx: &Sender<IntervalMsg>) {
        if self.ios > 0 {
            let h = std::mem::replace(&mut self.hist, measure::interval_hist());
            self.send(h, tx);
        }
    }

    fn send(&self, hist: Hist, tx: &Sender<IntervalMsg>) {
        let _ = tx.send(IntervalMsg {
            idx: self.idx,
            ios: self.ios,
            bytes: self.bytes,
            hist: Box::new(hist),
        });
    }
}

/// Every 512-byte sector of a write made its own: its place and the write's number in its
/// first 16 bytes (as fio's scramble_buffers does). A slot's buffer is otherwise the same random
/// bytes each time it writes, which storage that dedupes in 4 KiB chunks (VDO, ZFS) would keep
/// once: a 64 KiB write's 15 later chunks, every time.
#[inline]
pub(super) fn stamp_sectors(buf: &mut [u8], offset: u64, seq: u64) {
    for (k, sector) in buf.chunks_mut(512).enumerate() {
        let mut head = [0u8; 16];
        head[..8].copy_from_slice(&(offset + k as u64 * 512).to_le_bytes());
        head[8..].copy_from_slice(&seq.to_le_bytes());
        let n = sector.len().min(16);
        sector[..n].copy_from_slice(&head[..n]);
    }
}

pub(super) fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Fsync => "fsync",
        Op::Fdatasync => "fdatasync",
    }
}

pub(super) fn io_error(errno: i32, io: &Io) -> anyhow::Error {
    let e = std::io::Error::from_raw_os_error(errno);
    let hint = match errno {
        libc::EINVAL if matches!(io.op, Op::Read | Op::Write) => {
            "; the block size or alignment may not suit O_DIRECT on this target (try a multiple of 4k, or --buffered)"
        }
        libc::ENOSPC => "; the file system is full",
        libc::EOPNOTSUPP => "; this target does not support the requested mode (e.g. --hipri without poll queues)",
        _ => "",
    };
    anyhow!(
        "{} of {} bytes at offset {} failed: {e}{hint}",
        op_name(io.op),
        io.len,
        io.offset
    )
}
