//! One worker thread's hot loop: issue up to the depth, submit, reap, account. Generic over the
//! engine so each engine gets its own monomorphised loop. Per IO it does no allocation, no
//! locking, no formatting and no logging: one histogram record, a few counters, and one clock
//! read per submission batch and one per completion batch.
//!
//! How completions are waited for is the one choice made while running. Waiting for each
//! completion times every IO exactly, but on a device that completes IOs faster than a thread
//! is woken (zram, where every read goes through an io_uring worker thread) each wake-up takes
//! the CPU the device's work needs, and the tool measures itself. So with the default
//! (`--complete-batch auto`) a worker first tries waiting for one, for half and for all in flight
//! for [`CALIBRATION`], and waits for several only when that moved clearly more IOs; the result
//! says so.

use super::{IntervalMsg, Shared, Verifier, KEEP_FAILURES};
use crate::measure::{self, Hist};
use crate::workload::files::FilePicker;
use crate::workload::offsets::Offsets;
use crate::workload::{Limit, Spec, SyncKind, CALIBRATION};
use anyhow::anyhow;
use iogauge_engine::{Done, Engine, Io, Op};
use iogauge_verify::{check, Expect, Tally, Ticket, Verdict, SECTOR};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// Length of a fine bin: stalls are timed to within this.
pub const FINE_BIN: Duration = Duration::from_millis(100);

/// Waiting for several at a time must move this much more than one at a time to be chosen:
/// exact per-IO timing is worth a small loss, and phases of 100 ms vary by a few percent.
const BATCH_GAIN: f64 = 1.10;

/// The ways an auto trial waits: for one completion, for half of those in flight, for all of
/// them. On zram with one thread, half kept the queue from running dry while its io_uring
/// worker read, and moved ~1.3× one at a time where all moved ~1.15×; with two threads all won.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    One = 0,
    Half = 1,
    All = 2,
}

impl Way {
    /// Completions waited for, and refills handed to the kernel at a time, at `depth` in
    /// flight: waiting for several refills as many, so they go to the kernel at once.
    fn batches(self, depth: usize, submit_batch: usize) -> (usize, usize) {
        match self {
            Way::One => (1, submit_batch),
            Way::Half => (depth.div_ceil(2), depth.div_ceil(2)),
            Way::All => (depth, depth),
        }
    }
}

/// An auto complete batch's trial: seven equal phases. The first warms up (threads, io_uring's
/// workers, the device) and is not counted; the other six wait for all, half, one, one, half,
/// all, so a steady drift of the machine weighs the same on every way.
struct Trial {
    start: Instant,
    phase: Duration,
    /// Completions reaped each way ([`Way`] order) in each half (phases 1–3 and 4–6).
    halves: [[u64; 3]; 2],
}

const TRIAL_PHASES: u32 = 7;
const TRIAL_ORDER: [Way; 6] = [Way::All, Way::Half, Way::One, Way::One, Way::Half, Way::All];

impl Trial {
    fn new(origin: Instant) -> Trial {
        Trial {
            start: origin,
            phase: CALIBRATION / TRIAL_PHASES,
            halves: [[0; 3]; 2],
        }
    }

    /// At `now`: the phase (0 the warm-up) and its way of waiting, or `None` once the trial is
    /// over.
    fn at(&self, now: Instant) -> Option<(u32, Way)> {
        let k = ((now - self.start).as_nanos() / self.phase.as_nanos()) as u32;
        (k < TRIAL_PHASES).then(|| (k, TRIAL_ORDER[k.saturating_sub(1) as usize]))
    }

    /// Completions reaped each way over the trial.
    fn ios(&self) -> [u64; 3] {
        let [a, b] = self.halves;
        [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
    }

    /// The way to measure with: of half and all, those that moved more than [`BATCH_GAIN`]
    /// times one at a time in each half of the trial (a throttle that hands out its budget in
    /// slices, or a burst of other work, can favour one phase but not both halves), the one
    /// that moved more; one at a time if neither did.
    fn choice(&self) -> Way {
        let wins = |w: Way| {
            self.halves
                .iter()
                .all(|h| h[w as usize] as f64 > h[Way::One as usize] as f64 * BATCH_GAIN)
        };
        let ios = self.ios();
        [Way::Half, Way::All]
            .into_iter()
            .filter(|&w| wins(w))
            .max_by_key(|&w| ios[w as usize])
            .unwrap_or(Way::One)
    }
}

/// What a worker measured.
pub struct WorkerOut {
    pub read: Hist,
    pub write: Hist,
    pub sync: Hist,
    /// With a rate: reads' and writes' time from submission, beside the latency from their
    /// planned start that `read` and `write` hold.
    pub service: Hist,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub syncs: u64,
    /// Completed IOs per fine bin since the measurement started.
    pub fine: Vec<u32>,
    /// Time of the last counted completion since the measurement started.
    pub last_completion: Duration,
    /// What stopped this worker early; what it measured until then is kept.
    pub error: Option<anyhow::Error>,
    /// With `--verify`: the verdicts of the reads this worker could judge.
    pub verify: Tally,
    /// Completions waited for at a time while measuring (an auto batch's choice).
    pub complete_batch: u32,
    /// An auto batch's trial: completions reaped waiting for one, for half and for all in
    /// flight.
    pub trial: [u64; 3],
}

pub struct WorkerCfg<'a> {
    pub id: u32,
    pub spec: &'a Spec,
    pub range_start: u64,
    pub range_bytes: u64,
    /// Bytes this worker transfers in a fixed-data run.
    pub data_budget: Option<u64>,
    pub verify: Option<&'a Verifier<'a>>,
}

/// Runs the loop over `files` files (the engine's; 1 but for fio's `nrfiles`).
pub fn work<E: Engine>(
    mut eng: E,
    cfg: &WorkerCfg,
    files: usize,
    shared: &Shared,
    tx: &Sender<IntervalMsg>,
    origin: Instant,
) -> WorkerOut {
    let spec = cfg.spec;
    let depth = spec.iodepth as usize;
    let measure_start = origin + spec.lead_in();
    let deadline = match spec.limit {
        Limit::Time(t) => Some(measure_start + t),
        Limit::Data(_) => None,
    };
    // One stream per file, each with its own positions (as fio keeps an offset per file): the
    // first file's stream as a one-file job has it, the others' beside it, and a picker only
    // when there are several, so a one-file job takes its stream after one branch, as before.
    let files = files.clamp(1, usize::from(u16::MAX) + 1);
    let mut offsets = Offsets::of(spec, cfg.id, cfg.range_start, cfg.range_bytes);
    let mut more_offsets: Vec<Offsets> = (1..files as u32)
        .map(|f| Offsets::of_file(spec, cfg.id, f, cfg.range_start, cfg.range_bytes))
        .collect();
    let mut picker = (files > 1).then(|| {
        FilePicker::new(
            spec.file_service,
            files as u32,
            offsets.pass(),
            spec.seed,
            cfg.id,
        )
    });
    // The file of the latest write, which a sync (fsync=N) goes to.
    let mut last_write_file = 0u16;
    let sync_op = spec.sync.map(|(k, n)| {
        let op = match k {
            SyncKind::Fsync => Op::Fsync,
            SyncKind::Fdatasync => Op::Fdatasync,
        };
        (op, n)
    });
    let idle = Io {
        slot: 0,
        file: 0,
        op: Op::Read,
        offset: 0,
        len: 0,
        buf_off: 0,
    };

    let mut out = WorkerOut {
        read: measure::run_hist(),
        write: measure::run_hist(),
        sync: measure::run_hist(),
        service: measure::run_hist(),
        reads: 0,
        writes: 0,
        read_bytes: 0,
        write_bytes: 0,
        syncs: 0,
        fine: Vec::with_capacity(match deadline {
            // At most a day's bins up front (7 MB); a longer run grows the vector a few times.
            Some(_) => ((expected_secs(spec) / FINE_BIN.as_secs_f64()) as usize).min(864_000) + 2,
            None => 1024,
        }),
        last_completion: Duration::ZERO,
        error: None,
        verify: Tally::new(if cfg.verify.is_some() {
            KEEP_FAILURES
        } else {
            0
        }),
        complete_batch: spec.complete_batch.max(1),
        trial: [0; 3],
    };
    let mut interval = measure::interval_hist();
    let mut interval_idx: u64 = 0;
    let mut interval_ios: u64 = 0;
    let mut interval_bytes: u64 = 0;
    let interval_ns = spec.interval.as_nanos();
    let bin_ns = FINE_BIN.as_nanos();

    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut slot_io = vec![idle; depth];
    let mut slot_t = vec![origin; depth];
    // Each IO's own size (a block-size mix draws one per IO), counted when it completes whole.
    let mut slot_len = vec![0u32; depth];
    // With a rate, each IO has a planned start on a fixed schedule; latency counts from it, so
    // an IO that could not start on time (the device stalled, the queue was full) shows the
    // wait it would have cost a database. The schedule never skips ahead to hide a backlog.
    let period = spec
        .rate_per_thread
        .map(|r| Duration::from_secs_f64(1.0 / r.max(1e-9)));
    let mut slot_planned = vec![origin; depth];
    // With --verify: per slot, the block's offset as first queued (a short transfer moves
    // `io.offset`), the write's ticket, and the tracker's word when a read was queued.
    let mut slot_block = vec![0u64; depth];
    let mut slot_ticket = vec![Ticket::default(); depth];
    let mut slot_seen = vec![0u64; depth];
    let tracker = cfg.verify.and_then(|v| v.tracker);
    let mut next_due = origin;
    if period.is_some() {
        iogauge_engine::sys::set_timer_slack_ns(1_000);
    }
    let mut fresh: Vec<u32> = Vec::with_capacity(depth);
    let mut done: Vec<Done> = Vec::with_capacity(depth * 2);
    let mut issuing = true;
    let mut writes_since_sync = 0u32;
    let mut sync_in_flight = false;
    let mut issued_bytes = 0u64;
    let mut seq = 0u64;
    let mut submit_batch = spec.submit_batch.max(1) as usize;
    // The engine waits for at most what is in flight.
    let mut complete_batch = spec.complete_batch.max(1) as usize;
    let mut trial = (spec.complete_batch == 0).then(|| Trial::new(origin));
    let mut way = Way::One;
    // The trial's phase the last wait belonged to (none in the warm-up).
    let mut counted: Option<u32> = None;
    let ramped = !spec.lead_in().is_zero() && cfg.data_budget.is_some();

    'run: loop {
        if issuing {
            while let Some(&slot) = free.last() {
                if let Some((op, every)) = sync_op {
                    if writes_since_sync >= every {
                        // Sync once every write before it has completed, as sysbench does:
                        // stop issuing, let the writes drain, then sync alone.
                        if eng.in_flight() == 0 && !sync_in_flight {
                            let io = Io {
                                slot,
                                file: last_write_file,
                                op,
                                offset: 0,
                                len: 0,
                                buf_off: 0,
                            };
                            if let Err(e) = eng.queue(io) {
                                out.error = Some(anyhow!("queueing a sync failed: {e}"));
                                break 'run;
                            }
                            slot_io[slot as usize] = io;
                            free.pop();
                            fresh.push(slot);
                            sync_in_flight = true;
                        }
                        break;
                    }
                }
                if let Some(budget) = cfg.data_budget {
                    if issued_bytes >= budget {
                        issuing = false;
                        break;
                    }
                }
                let mut planned = origin;
                if let Some(p) = period {
                    if Instant::now() < next_due {
                        break;
                    }
                    planned = next_due;
                    next_due += p;
                }
                let (file, stream) = match picker.as_mut() {
                    None => (0, &mut offsets),
                    Some(p) => match p.next() {
                        0 => (0, &mut offsets),
                        f => (f, &mut more_offsets[f - 1]),
                    },
                };
                // Only mixes spend a random number on the direction.
                let read = match spec.mix_read_pct {
                    100 => true,
                    0 => false,
                    pct => stream.coin(pct),
                };
                let (offset, len) = stream.next_io(!read);
                let file = file as u16;
                slot_block[slot as usize] = offset;
                slot_len[slot as usize] = len;
                let op = if read {
                    if let Some(t) = tracker {
                        slot_seen[slot as usize] = t.read_begin(offset);
                    }
                    Op::Read
                } else {
                    match (cfg.verify, eng.buffer_mut(slot)) {
                        (Some(v), Some(buf)) => {
                            // Every sector says what it is, so the reads and the verify pass
                            // can name a block that came back wrong.
                            let ticket =
                                v.tracker.map(|t| t.write_begin(offset)).unwrap_or_default();
                            iogauge_verify::stamp(
                                &mut buf[..len as usize],
                                &v.key,
                                offset,
                                ticket.generation,
                            );
                            slot_ticket[slot as usize] = ticket;
                        }
                        (None, Some(buf)) => {
                            // A header per write makes every block unique (no dedup).
                            seq += 1;
                            buf[..8].copy_from_slice(&offset.to_le_bytes());
                            buf[8..16].copy_from_slice(&seq.to_le_bytes());
                        }
                        _ => {}
                    }
                    writes_since_sync += 1;
                    last_write_file = file;
                    Op::Write
                };
                let io = Io {
                    slot,
                    file,
                    op,
                    offset,
                    len,
                    buf_off: 0,
                };
                if let Err(e) = eng.queue(io) {
                    out.error = Some(anyhow!("queueing IO failed: {e}"));
                    break 'run;
                }
                slot_io[slot as usize] = io;
                slot_planned[slot as usize] = planned;
                free.pop();
                fresh.push(slot);
                // A fixed amount of data is measured data: what the ramp moves does not count
                // against it (the clock read is one per IO only in ramped, fixed-data runs).
                if !ramped || Instant::now() >= measure_start {
                    issued_bytes += u64::from(len);
                }
                // Refilling every freed slot in one burst makes the device see bursts, and
                // each IO waits behind its burst; hand them over in small groups instead.
                if fresh.len() >= submit_batch && !free.is_empty() {
                    let t = Instant::now();
                    for s in fresh.drain(..) {
                        slot_t[s as usize] = t;
                    }
                    if let Err(e) = eng.submit() {
                        out.error = Some(anyhow!("submitting IO failed: {e}"));
                        break 'run;
                    }
                }
            }
        }
        if period.is_some() && issuing && eng.in_flight() == 0 && fresh.is_empty() {
            // Nothing in flight and the next IO not due yet: wait for its planned start (or
            // the end of the run, or a stop request, whichever comes first).
            let now = Instant::now();
            let until = deadline.map_or(next_due, |d| d.min(next_due));
            if now < until {
                std::thread::sleep((until - now).min(Duration::from_millis(50)));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) || shared.stop.load(Ordering::Relaxed)
            {
                issuing = false;
            }
            continue 'run;
        }
        if eng.in_flight() == 0 {
            if !issuing {
                break;
            }
            if free.len() == depth && fresh.is_empty() {
                // Nothing could be issued (a sync was due with nothing in flight is handled
                // above), so there is nothing left to do.
                break;
            }
        }
        let submitted_at = Instant::now();
        for s in fresh.drain(..) {
            slot_t[s as usize] = submitted_at;
        }
        if let Err(e) = eng.submit_and_reap(complete_batch, &mut done) {
            out.error = Some(anyhow!("submitting IO failed: {e}"));
            break 'run;
        }
        let now = Instant::now();
        if let Some(t) = &mut trial {
            // These completions count for the way they were waited for (not in the warm-up).
            if let Some(k) = counted {
                t.halves[usize::from(k > 3)][way as usize] += done.len() as u64;
            }
            way = match t.at(now) {
                Some((k, w)) => {
                    counted = (k > 0).then_some(k);
                    w
                }
                None => {
                    out.trial = t.ios();
                    let w = t.choice();
                    trial = None;
                    w
                }
            };
            (complete_batch, submit_batch) = way.batches(depth, spec.submit_batch.max(1) as usize);
            out.complete_batch = complete_batch as u32;
        }

        let counting = now >= measure_start && deadline.is_none_or(|d| now <= d);
        let since = now.saturating_duration_since(measure_start);
        if counting {
            let idx = (since.as_nanos() / interval_ns) as u64;
            if idx != interval_idx {
                if interval_ios > 0 {
                    let h = std::mem::replace(&mut interval, measure::interval_hist());
                    let _ = tx.send(IntervalMsg {
                        idx: interval_idx,
                        ios: interval_ios,
                        bytes: interval_bytes,
                        hist: Box::new(h),
                    });
                }
                interval_idx = idx;
                interval_ios = 0;
                interval_bytes = 0;
            }
        }
        let bin = (since.as_nanos() / bin_ns) as usize;
        let mut batch_ios = 0u32;

        for d in done.drain(..) {
            let slot = d.slot as usize;
            let io = slot_io[slot];
            if d.res < 0 {
                let errno = -d.res;
                if errno == libc::EAGAIN || errno == libc::EINTR {
                    // Same IO, same start time.
                    if let Err(e) = eng.queue(io) {
                        out.error = Some(anyhow!("requeueing IO failed: {e}"));
                        break 'run;
                    }
                    continue;
                }
                out.error = Some(io_error(errno, &io));
                break 'run;
            }
            match io.op {
                Op::Read | Op::Write => {
                    let n = d.res as u32;
                    if n < io.len {
                        if n == 0 {
                            out.error = Some(anyhow!(
                                "{} at offset {} returned 0 bytes: the target shrank during the run",
                                op_name(io.op),
                                io.offset
                            ));
                            break 'run;
                        }
                        // A short transfer: resubmit the rest from the same buffer.
                        let rest = Io {
                            offset: io.offset + u64::from(n),
                            len: io.len - n,
                            buf_off: io.buf_off + n,
                            ..io
                        };
                        slot_io[slot] = rest;
                        if let Err(e) = eng.queue(rest) {
                            out.error = Some(anyhow!("requeueing a short IO failed: {e}"));
                            break 'run;
                        }
                        continue;
                    }
                    if let Some(v) = cfg.verify {
                        let at = slot_block[slot];
                        match io.op {
                            Op::Write => {
                                if let Some(t) = v.tracker {
                                    t.write_end(at, slot_ticket[slot]);
                                }
                            }
                            _ => {
                                let expect = match v.tracker {
                                    Some(t) => t.read_expect(at, slot_seen[slot]),
                                    None => Some(Expect::Skip),
                                };
                                if let Some(buf) = eng.buffer(d.slot) {
                                    let whole = &buf[..slot_len[slot] as usize];
                                    judge_read(&mut out.verify, v, whole, at, expect);
                                }
                            }
                        }
                    }
                    if counting {
                        let lat = match period {
                            Some(_) => {
                                let service = now.duration_since(slot_t[slot]).as_nanos() as u64;
                                out.service.saturating_record(service);
                                now.duration_since(slot_planned[slot]).as_nanos() as u64
                            }
                            None => now.duration_since(slot_t[slot]).as_nanos() as u64,
                        };
                        let len = u64::from(slot_len[slot]);
                        if io.op == Op::Read {
                            out.read.saturating_record(lat);
                            out.reads += 1;
                            out.read_bytes += len;
                        } else {
                            out.write.saturating_record(lat);
                            out.writes += 1;
                            out.write_bytes += len;
                        }
                        interval.saturating_record(lat);
                        interval_ios += 1;
                        interval_bytes += len;
                        batch_ios += 1;
                    }
                }
                Op::Fsync | Op::Fdatasync => {
                    if counting {
                        let lat = now.duration_since(slot_t[slot]).as_nanos() as u64;
                        out.sync.saturating_record(lat);
                        out.syncs += 1;
                    }
                    sync_in_flight = false;
                    writes_since_sync = 0;
                }
            }
            free.push(d.slot);
        }
        if batch_ios > 0 {
            if out.fine.len() <= bin {
                out.fine.resize(bin + 1, 0);
            }
            out.fine[bin] += batch_ios;
            out.last_completion = since;
            shared.progress[cfg.id as usize]
                .ios
                .store(out.reads + out.writes, Ordering::Relaxed);
        }
        if issuing && (deadline.is_some_and(|d| now >= d) || shared.stop.load(Ordering::Relaxed)) {
            issuing = false;
        }
    }
    if interval_ios > 0 {
        let _ = tx.send(IntervalMsg {
            idx: interval_idx,
            ios: interval_ios,
            bytes: interval_bytes,
            hist: Box::new(interval),
        });
    }
    out
}

/// Checks a block a read brought back, if the tracker says it can be judged: a block this cell
/// wrote as a whole (torn and lost need its generation), one it did not write sector by sector
/// (only when the fill stamped them: then every sector is iogauge's own).
fn judge_read(tally: &mut Tally, v: &Verifier, buf: &[u8], at: u64, expect: Option<Expect>) {
    match expect {
        None => {}
        Some(Expect::Skip) if v.filled => {
            let worst = buf
                .chunks_exact(SECTOR)
                .enumerate()
                .map(|(i, s)| check(s, &v.key, at + (i * SECTOR) as u64, None))
                .find(|v| v.class().is_some())
                .unwrap_or(Verdict::Ok { generation: 0 });
            tally.record(at, worst);
        }
        Some(Expect::Skip) => {}
        Some(Expect::Written) => {
            tally.record(at, check(buf, &v.key, at, None));
        }
        Some(Expect::AtLeast(g)) => {
            tally.record(at, check(buf, &v.key, at, Some(g)));
        }
    }
}

fn expected_secs(spec: &Spec) -> f64 {
    match spec.limit {
        Limit::Time(t) => t.as_secs_f64(),
        Limit::Data(_) => 10.0,
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Fsync => "fsync",
        Op::Fdatasync => "fdatasync",
    }
}

fn io_error(errno: i32, io: &Io) -> anyhow::Error {
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

#[cfg(test)]
mod tests;
