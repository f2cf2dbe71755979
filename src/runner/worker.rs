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
//! for `CALIBRATION` (crate::workload), and waits for several only when that moved clearly more IOs; the result
//! says so.

use super::checks::judge_read;
use super::{IntervalMsg, Shared, Verifier, KEEP_FAILURES};
use crate::workload::{Limit, Spec, SyncKind};
use anyhow::anyhow;
use iogauge_engine::{Done, Engine, Io, Op};
use iogauge_verify::Expect;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

mod content;
mod flow;
mod out;
mod trial;
pub use out::WorkerOut;
use trial::Trial;
#[cfg(test)]
use trial::Way;

/// Length of a fine bin: stalls are timed to within this.
pub const FINE_BIN: Duration = Duration::from_millis(100);

/// Mixed into the seed of a Poisson schedule, so its gaps are not drawn from the numbers that
/// place the same thread's offsets.
const POISSON_SALT: u64 = 0x5851_F42D_4C95_7F2D;

/// Mixed into the seed of the per-IO priority draw, for the same reason.
const PRIO_SALT: u64 = 0x2545_F491_4F6C_DD1D;

pub struct WorkerCfg<'a> {
    pub id: u32,
    pub spec: &'a Spec,
    pub range_start: u64,
    pub range_bytes: u64,
    /// Bytes this worker transfers in a fixed-data run.
    pub data_budget: Option<u64>,
    pub verify: Option<&'a Verifier<'a>>,
    /// fio's zonemode=zbd: the write pointers the job's threads share.
    pub zones: Option<std::sync::Arc<crate::workload::zbd::ZoneTable>>,
}

/// Runs the loop over `files` files (the engine's; 1 but for fio's `nrfiles`); what it measured,
/// and the engine, whose ring an exact run may have moved (its setup is recorded after).
pub fn work<E: Engine>(
    eng: E,
    cfg: &WorkerCfg,
    files: usize,
    shared: &Shared,
    tx: &Sender<IntervalMsg>,
    origin: Instant,
) -> (WorkerOut, E) {
    let mut w = Worker::new(eng, cfg, files, origin);
    // The thread's own IO priority, before its first IO (every IO without one of its own, and
    // those io_uring's workers issue for it, carry it).
    let prio = match cfg.spec.prio.as_ref().and_then(|p| p.thread) {
        Some(v) => iogauge_engine::sys::set_thread_ioprio(v).map_err(|e| {
            anyhow!(
                "setting the IO priority {} failed: {e}",
                crate::workload::Prio::label(v)
            )
        }),
        None => Ok(()),
    };
    if let Err(e) = prio.and_then(|()| w.run(shared, tx)) {
        w.out.error = Some(e);
    }
    w.interval.finish(tx);
    (w.out, w.eng)
}

/// One worker's state for its run: the engine, where IOs go, the queue's slots, how it waits,
/// and what it measured so far. Everything is allocated here, before the first IO.
struct Worker<'a, E: Engine> {
    eng: E,
    cfg: &'a WorkerCfg<'a>,
    spec: &'a Spec,
    depth: usize,
    origin: Instant,
    measure_start: Instant,
    deadline: Option<Instant>,
    streams: Streams,
    /// The file of the latest write, which a sync (fsync=N) goes to.
    last_write_file: u16,
    sync_op: Option<(Op, u32)>,
    writes_since_sync: u32,
    sync_in_flight: bool,
    slots: Slots,
    pacer: Pacer,
    think: Option<Thinker>,
    /// With fio's flow: this thread's place among the threads of its flow.
    flow: Option<flow::Gate>,
    /// With compressible or repeated writes asked for: what fills each write.
    content: Option<content::Writer>,
    /// With shares of IOs that carry a priority of their own, the generator of the draws.
    prio_draw: Option<fastrand::Rng>,
    tracker: Option<&'a iogauge_verify::Tracker>,
    done: Vec<Done>,
    issuing: bool,
    /// A timed trimming job (fio's zbd trims) waits, rather than ends, while no zone holds data;
    /// `idle`: it found none on its last look.
    trims_wait: bool,
    idle: bool,
    issued_bytes: u64,
    /// Writes so far, for the header that makes every written block unique.
    seq: u64,
    submit_batch: usize,
    /// The engine waits for at most what is in flight.
    complete_batch: usize,
    trial: Option<Trial>,
    /// A ramp before a fixed amount of data: what it moves does not count against the amount.
    ramped: bool,
    interval: Interval,
    bin_ns: u128,
    out: WorkerOut,
}

impl<'a, E: Engine> Worker<'a, E> {
    fn new(eng: E, cfg: &'a WorkerCfg<'a>, files: usize, origin: Instant) -> Worker<'a, E> {
        let spec = cfg.spec;
        let depth = spec.iodepth as usize;
        let measure_start = origin + spec.lead_in();
        let deadline = match spec.limit {
            Limit::Time(t) => Some(measure_start + t),
            Limit::Data(_) => None,
        };
        let sync_op = spec.sync.map(|(k, n)| {
            let op = match k {
                SyncKind::Fsync => Op::Fsync,
                SyncKind::Fdatasync => Op::Fdatasync,
            };
            (op, n)
        });
        let pacer = Pacer {
            period: spec
                .rate_per_thread
                .map(|r| Duration::from_secs_f64(1.0 / r.max(1e-9))),
            next_due: origin,
            poisson: spec.rate_poisson.then(|| {
                fastrand::Rng::with_seed(crate::workload::offsets::thread_seed(
                    spec.seed ^ POISSON_SALT,
                    cfg.id,
                ))
            }),
        };
        if pacer.period.is_some() {
            iogauge_engine::sys::set_timer_slack_ns(1_000);
        }
        Worker {
            eng,
            cfg,
            spec,
            depth,
            origin,
            measure_start,
            deadline,
            streams: Streams::of(cfg, files),
            last_write_file: 0,
            sync_op,
            writes_since_sync: 0,
            sync_in_flight: false,
            slots: Slots::new(depth, origin),
            pacer,
            think: spec.think.map(|t| Thinker::new(t, origin)),
            flow: spec.flow.map(flow::Gate::join),
            content: (!spec.shape.content.is_plain()).then(|| {
                content::Writer::new(
                    spec.shape.content,
                    spec.seed,
                    cfg.range_bytes,
                    spec.bs.bytes(),
                )
            }),
            prio_draw: spec.prio.as_ref().filter(|p| p.any_per_io()).map(|_| {
                let seed = crate::workload::offsets::thread_seed(spec.seed ^ PRIO_SALT, cfg.id);
                fastrand::Rng::with_seed(seed)
            }),
            tracker: cfg.verify.and_then(|v| v.tracker),
            done: Vec::with_capacity(depth * 2),
            issuing: true,
            trims_wait: cfg.spec.rw.trims()
                && matches!(cfg.spec.limit, crate::workload::Limit::Time(_)),
            idle: false,
            issued_bytes: 0,
            seq: 0,
            submit_batch: spec.submit_batch.max(1) as usize,
            complete_batch: spec.complete_batch.max(1) as usize,
            trial: (spec.complete_batch == 0).then(|| Trial::new(origin, depth)),
            ramped: !spec.lead_in().is_zero() && cfg.data_budget.is_some(),
            interval: Interval::new(spec.interval),
            bin_ns: FINE_BIN.as_nanos(),
            out: WorkerOut::new(cfg, deadline),
        }
    }

    /// Issue, submit, reap, account, until the limit, a stop request or an error.
    fn run(&mut self, shared: &Shared, tx: &Sender<IntervalMsg>) -> anyhow::Result<()> {
        loop {
            if self.issuing {
                self.issue()?;
            }
            if let Some(t) = self.think.as_mut().filter(|t| t.due) {
                if self.issuing && self.eng.in_flight() == 0 && self.slots.fresh.is_empty() {
                    // Every IO before the pause has completed: the application's work.
                    t.pause(self.deadline, &shared.stop);
                    if self.deadline.is_some_and(|d| Instant::now() >= d)
                        || shared.stop.load(Ordering::Relaxed)
                    {
                        self.issuing = false;
                    }
                    continue;
                }
            }
            if let Some(f) = self.flow.as_mut().filter(|f| f.held) {
                // Ahead of its share of the flow: wait for the others (after its IOs in flight
                // completed, with a sleep), then look again.
                let idle = self.eng.in_flight() == 0 && self.slots.fresh.is_empty();
                if idle {
                    f.hold(self.deadline, &shared.stop);
                    if self.deadline.is_some_and(|d| Instant::now() >= d)
                        || shared.stop.load(Ordering::Relaxed)
                    {
                        self.issuing = false;
                    }
                    continue;
                }
                if f.may_wait(idle) {
                    f.held = false;
                }
            }
            if self.pacer.period.is_some()
                && self.issuing
                && self.eng.in_flight() == 0
                && self.slots.fresh.is_empty()
            {
                // Nothing in flight and the next IO not due yet: wait for its planned start
                // (or the end of the run, or a stop request, whichever comes first).
                self.pacer.wait(self.deadline);
                if self.deadline.is_some_and(|d| Instant::now() >= d)
                    || shared.stop.load(Ordering::Relaxed)
                {
                    self.issuing = false;
                }
                continue;
            }
            if self.eng.in_flight() == 0 {
                if !self.issuing {
                    return Ok(());
                }
                if self.slots.free.len() == self.depth && self.slots.fresh.is_empty() && !self.idle
                {
                    // Nothing could be issued (a sync was due with nothing in flight is handled
                    // in `issue`), so there is nothing left to do.
                    return Ok(());
                }
            }
            self.slots.handed_over(Instant::now());
            self.eng
                .submit_and_reap(self.complete_batch, &mut self.done)
                .map_err(|e| anyhow!("submitting IO failed: {e}"))?;
            let now = Instant::now();
            self.try_ways(now);
            let counting = now >= self.measure_start && self.deadline.is_none_or(|d| now <= d);
            let since = now.saturating_duration_since(self.measure_start);
            if counting {
                self.interval.roll(since, tx);
            }
            let batch_ios = self.complete(now, counting)?;
            if let Some(t) = &mut self.think {
                t.tick(now);
            }
            if batch_ios > 0 {
                let bin = (since.as_nanos() / self.bin_ns) as usize;
                let out = &mut self.out;
                if out.fine.len() <= bin {
                    out.fine.resize(bin + 1, 0);
                }
                out.fine[bin] += batch_ios;
                out.last_completion = since;
                shared.progress[self.cfg.id as usize]
                    .ios
                    .store(out.reads + out.writes + out.trims, Ordering::Relaxed);
            }
            if self.issuing
                && (self.deadline.is_some_and(|d| now >= d) || shared.stop.load(Ordering::Relaxed))
            {
                self.issuing = false;
            }
        }
    }

    /// Fills free slots: a sync when one is due (alone, once every write before it has
    /// completed, as sysbench does), else the next IO of its stream, handed to the kernel in
    /// small groups.
    fn issue(&mut self) -> anyhow::Result<()> {
        self.idle = false;
        while let Some(&slot) = self.slots.free.last() {
            if self.think.as_ref().is_some_and(|t| t.due) {
                return Ok(());
            }
            if let Some((op, every)) = self.sync_op {
                if self.writes_since_sync >= every {
                    if self.eng.in_flight() == 0 && !self.sync_in_flight {
                        self.queue_sync(slot, op)?;
                    }
                    return Ok(());
                }
            }
            if self
                .cfg
                .data_budget
                .is_some_and(|budget| self.issued_bytes >= budget)
            {
                self.issuing = false;
                return Ok(());
            }
            if self.flow.as_ref().is_some_and(|f| f.held)
                || self.flow.as_mut().is_some_and(flow::Gate::ahead)
            {
                return Ok(());
            }
            let Some(planned) = self.pacer.next(self.origin) else {
                return Ok(());
            };
            let len = self.queue_next(slot, planned)?;
            if len == 0 && self.trims_wait {
                // No zone holds data to trim: a timed job waits for the writers, as fio's
                // time_based trimmer starts its pass again (no trim is counted meanwhile).
                // It is counted up to its share of its flow (fio counts each pass of the flow
                // check, not the IO after it): else a writer ahead of its share waits for trims
                // that wait for its writes, and neither moves (a writer of weight 1 beside a
                // trimmer of 8 wrote once in 1 s; fio's, 13,981 times).
                if let Some(f) = &mut self.flow {
                    f.caught_up();
                }
                self.idle = true;
                std::thread::yield_now();
                return Ok(());
            }
            if len == 0 {
                // The stream's sequence has ended (fio's sprandom), or no zone holds data to
                // trim: the job is done.
                self.issuing = false;
                return Ok(());
            }
            if let Some(f) = &mut self.flow {
                f.issued();
            }
            // A fixed amount of data is measured data: what the ramp moves does not count
            // against it (the clock read is one per IO only in ramped, fixed-data runs).
            if !self.ramped || Instant::now() >= self.measure_start {
                self.issued_bytes += u64::from(len);
            }
            // Refilling every freed slot in one burst makes the device see bursts, and each IO
            // waits behind its burst; hand them over in small groups instead.
            if self.slots.fresh.len() >= self.submit_batch && !self.slots.free.is_empty() {
                self.slots.handed_over(Instant::now());
                self.eng
                    .submit()
                    .map_err(|e| anyhow!("submitting IO failed: {e}"))?;
            }
        }
        Ok(())
    }

    fn queue_sync(&mut self, slot: u32, op: Op) -> anyhow::Result<()> {
        let io = Io {
            slot,
            file: self.last_write_file,
            op,
            offset: 0,
            len: 0,
            buf_off: 0,
            prio: 0,
        };
        self.eng
            .queue(io)
            .map_err(|e| anyhow!("queueing a sync failed: {e}"))?;
        self.slots.io[slot as usize] = io;
        self.slots.free.pop();
        self.slots.fresh.push(slot);
        self.sync_in_flight = true;
        Ok(())
    }

    /// Queues the next read or write of its stream in `slot`; its length.
    fn queue_next(&mut self, slot: u32, planned: Instant) -> anyhow::Result<u32> {
        let (file, stream) = self.streams.next();
        // Only mixes spend a random number on the direction.
        let read = match self.spec.mix_read_pct {
            100 => true,
            0 => false,
            pct => stream.coin(pct),
        };
        let (offset, len) = stream.next_io(!read);
        if len == 0 {
            return Ok(0);
        }
        let s = slot as usize;
        self.slots.block[s] = offset;
        self.slots.len[s] = len;
        let op = match read {
            true => {
                if let Some(t) = self.tracker {
                    self.slots.seen[s] = t.read_begin(offset);
                }
                Op::Read
            }
            // A trim (fio's on emulated zones) reset its zone when its offset was drawn; the
            // null engine completes it at once (`runner::run_worker`), its buffer untouched.
            false if self.spec.rw.trims() => Op::Write,
            false => {
                self.fill_write(slot, offset, len);
                self.writes_since_sync += 1;
                self.last_write_file = file;
                Op::Write
            }
        };
        // The share of IOs with a priority of their own, drawn per IO (fio's cmdprio_percentage).
        let prio = match (&mut self.prio_draw, &self.spec.prio) {
            (Some(rng), Some(p)) => p.draw(read, len, rng.u8(0..100)),
            _ => 0,
        };
        let io = Io {
            slot,
            file,
            op,
            offset,
            len,
            buf_off: 0,
            prio,
        };
        self.eng
            .queue(io)
            .map_err(|e| anyhow!("queueing IO failed: {e}"))?;
        self.slots.io[s] = io;
        self.slots.planned[s] = planned;
        self.slots.free.pop();
        self.slots.fresh.push(slot);
        if let Some(t) = &mut self.think {
            t.issued();
        }
        Ok(len)
    }

    /// What a write carries: with --verify every sector says what it is, so the reads and the
    /// verify pass can name a block that came back wrong; the content asked for (compressible,
    /// repeated); else a header that makes every block unique (no dedup).
    fn fill_write(&mut self, slot: u32, offset: u64, len: u32) {
        match (self.cfg.verify, self.eng.buffer_mut(slot)) {
            (Some(v), Some(buf)) => {
                let ticket = v.tracker.map(|t| t.write_begin(offset)).unwrap_or_default();
                iogauge_verify::stamp(&mut buf[..len as usize], &v.key, offset, ticket.generation);
                self.slots.ticket[slot as usize] = ticket;
            }
            (None, Some(buf)) => match &mut self.content {
                Some(c) => c.fill(&mut buf[..len as usize]),
                None => {
                    self.seq += 1;
                    stamp_sectors(&mut buf[..len as usize], offset, self.seq);
                }
            },
            _ => {}
        }
    }

    /// An auto complete batch's trial: the completions just reaped count for the way they
    /// were waited for, and the next wait is the phase's way, or the choice once it is over.
    fn try_ways(&mut self, now: Instant) {
        let Some(t) = &mut self.trial else {
            return;
        };
        let way = match t.waited(now, self.done.len() as u64) {
            Some(w) => w,
            None => {
                (self.out.trial, self.out.trial_time) = t.ios();
                let w = t.choice();
                self.trial = None;
                w
            }
        };
        (self.complete_batch, self.submit_batch) =
            way.batches(self.depth, self.spec.submit_batch.max(1) as usize);
        self.out.complete_batch = self.complete_batch as u32;
    }

    /// Each completion reaped: retried when the kernel asks, finished when short, judged with
    /// --verify, and counted while measuring. How many reads and writes it counted.
    fn complete(&mut self, now: Instant, counting: bool) -> anyhow::Result<u32> {
        let mut batch_ios = 0u32;
        // Taken and put back, so the loop may call on `self`: no allocation either way.
        let mut done = std::mem::take(&mut self.done);
        let result = (|| {
            for d in done.drain(..) {
                let slot = d.slot as usize;
                let io = self.slots.io[slot];
                if d.res < 0 {
                    let errno = -d.res;
                    if errno == libc::EAGAIN || errno == libc::EINTR {
                        // Same IO, same start time.
                        self.eng
                            .queue(io)
                            .map_err(|e| anyhow!("requeueing IO failed: {e}"))?;
                        continue;
                    }
                    let write = io.op == Op::Write;
                    let goes_on = self
                        .spec
                        .tolerate
                        .is_some_and(|t| t.lets_go_on(write, errno));
                    if goes_on && matches!(io.op, Op::Read | Op::Write) {
                        // Counted and left out of the numbers, as fio leaves it.
                        self.out.ignored += 1;
                        self.out.first_ignored.get_or_insert((io, errno));
                        self.slots.free.push(d.slot);
                        continue;
                    }
                    return Err(io_error(errno, &io));
                }
                match io.op {
                    Op::Read | Op::Write => {
                        let n = d.res as u32;
                        if n < io.len {
                            self.rest_of(slot, io, n)?;
                            continue;
                        }
                        self.verify(d.slot, io)?;
                        if counting {
                            self.count(slot, io.op, now);
                            batch_ios += 1;
                        }
                    }
                    Op::Fsync | Op::Fdatasync => {
                        if counting {
                            let lat = now.duration_since(self.slots.t[slot]).as_nanos() as u64;
                            self.out.sync.saturating_record(lat);
                            self.out.syncs += 1;
                        }
                        self.sync_in_flight = false;
                        self.writes_since_sync = 0;
                    }
                }
                self.slots.free.push(d.slot);
            }
            Ok(batch_ios)
        })();
        done.clear();
        self.done = done;
        result
    }

    /// A short transfer: the rest resubmitted from the same buffer (none at all: the target
    /// shrank).
    fn rest_of(&mut self, slot: usize, io: Io, n: u32) -> anyhow::Result<()> {
        if n == 0 {
            return Err(anyhow!(
                "{} at offset {} returned 0 bytes: the target shrank during the run",
                op_name(io.op),
                io.offset
            ));
        }
        let rest = Io {
            offset: io.offset + u64::from(n),
            len: io.len - n,
            buf_off: io.buf_off + n,
            ..io
        };
        self.slots.io[slot] = rest;
        self.eng
            .queue(rest)
            .map_err(|e| anyhow!("requeueing a short IO failed: {e}"))
    }

    /// With --verify: a write's end told to the tracker, a read's block judged. A block
    /// found wrong stops the worker under verify_fatal.
    fn verify(&mut self, slot: u32, io: Io) -> anyhow::Result<()> {
        let Some(v) = self.cfg.verify else {
            return Ok(());
        };
        let s = slot as usize;
        let at = self.slots.block[s];
        match io.op {
            Op::Write => {
                if let Some(t) = v.tracker {
                    t.write_end(at, self.slots.ticket[s]);
                }
            }
            _ => {
                let expect = match v.tracker {
                    Some(t) => t.read_expect(at, self.slots.seen[s]),
                    None => Some(Expect::Skip),
                };
                if let Some(buf) = self.eng.buffer(slot) {
                    let whole = &buf[..self.slots.len[s] as usize];
                    let wrong = judge_read(&mut self.out.verify, v, whole, at, expect);
                    if let Some(class) = wrong.filter(|_| v.fatal) {
                        return Err(anyhow!(
                            "verify_fatal: the block of {} bytes at offset {at} came back {}: {}",
                            whole.len(),
                            class.name(),
                            class.meaning()
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// A whole read or write completed while measuring: its latency (from its planned start
    /// with a rate, its time from submission beside it) and its bytes.
    fn count(&mut self, slot: usize, op: Op, now: Instant) {
        let out = &mut self.out;
        let lat = match self.pacer.period {
            Some(_) => {
                let service = now.duration_since(self.slots.t[slot]).as_nanos() as u64;
                out.service.saturating_record(service);
                now.duration_since(self.slots.planned[slot]).as_nanos() as u64
            }
            None => now.duration_since(self.slots.t[slot]).as_nanos() as u64,
        };
        let len = u64::from(self.slots.len[slot]);
        if op == Op::Read {
            out.read.saturating_record(lat);
            out.reads += 1;
            out.read_bytes += len;
        } else if self.spec.rw.trims() {
            out.trim.saturating_record(lat);
            out.trims += 1;
            out.trim_bytes += len;
        } else {
            out.write.saturating_record(lat);
            out.writes += 1;
            out.write_bytes += len;
        }
        self.interval.record(lat, len);
    }
}

mod state;
use state::{io_error, op_name, stamp_sectors, Interval, Pacer, Slots, Streams, Thinker};

#[cfg(test)]
mod tests;
