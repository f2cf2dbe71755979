//! Runs one workload: starts the workers behind a barrier, gathers their per-interval samples,
//! shows progress, stops them on time, data or a signal, and merges what they measured.

mod checks;
mod merge;
mod sched;
mod together;
mod worker;

pub use checks::{kept, Earlier, Verifier};
use together::Together;
pub use together::{run_together, Stream};
pub use worker::FINE_BIN;

use crate::measure::{Hist, LatNs};
use crate::model::{CpuDoc, EngineDoc, FineDoc, OpDoc, Sample, SyncDoc};
use crate::units;
use crate::workload::{Limit, Spec};
use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_engine::{
    sys, Engine, EngineConfig, EngineKind, NullEngine, PsyncEngine, UringEngine, UringOptions,
    UringSetup,
};
use iogauge_verify::Tally;
use merge::{merge, Intervals};
use sched::Sched;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use worker::{WorkerCfg, WorkerOut};

/// One interval of one worker, sent when the worker moves past it.
pub struct IntervalMsg {
    pub idx: u64,
    pub ios: u64,
    pub bytes: u64,
    pub hist: Box<Hist>,
}

/// A worker's live IO count, on its own cache line so workers never share one.
#[repr(align(128))]
#[derive(Default)]
pub struct Live {
    pub ios: AtomicU64,
}

pub struct Shared {
    pub stop: AtomicBool,
    /// Workers that have returned, successfully or not.
    pub finished: AtomicUsize,
    pub progress: Vec<Live>,
}

/// Starts all workers at one instant, after each has built its engine. Unlike a Barrier it
/// needs no fixed count up front, so a thread that failed to spawn cannot hang the others.
#[derive(Default)]
pub struct StartGate {
    ready: AtomicUsize,
    origin: OnceLock<Instant>,
}

impl StartGate {
    fn arrive_and_wait(&self, stop: &AtomicBool) -> Instant {
        self.ready.fetch_add(1, Ordering::SeqCst);
        loop {
            if let Some(t) = self.origin.get() {
                // A stream that starts after the others waits for its own origin, and leaves
                // it as soon as the run is stopped.
                while !stop.load(Ordering::SeqCst) && Instant::now() < *t {
                    let left = t.saturating_duration_since(Instant::now());
                    std::thread::sleep(left.min(Duration::from_millis(20)));
                }
                return *t;
            }
            std::thread::yield_now();
        }
    }

    /// Opens once every worker has arrived or is gone: a worker cannot finish after arriving
    /// before the gate opens, so `finished` counts exactly those that never will arrive.
    fn open_when(
        &self,
        workers: usize,
        finished: &AtomicUsize,
        together: Option<(&Together, usize, Duration)>,
    ) -> Instant {
        while self.ready.load(Ordering::SeqCst) + finished.load(Ordering::SeqCst) < workers {
            std::thread::sleep(Duration::from_micros(200));
        }
        match together {
            Some((t, _, delay)) => {
                let at = t.meet() + delay;
                *self.origin.get_or_init(|| at)
            }
            None => *self.origin.get_or_init(Instant::now),
        }
    }
}

/// What a run measured, merged over its threads.
pub struct Measured {
    pub ios: u64,
    pub bytes: u64,
    pub runtime_s: f64,
    pub lat: LatNs,
    pub read: Option<OpDoc>,
    pub write: Option<OpDoc>,
    /// fio's trims on emulated zones (zone resets in memory), of a job that trims.
    pub trim: Option<OpDoc>,
    pub sync: Option<SyncDoc>,
    pub cpu: CpuDoc,
    pub timeseries: Vec<Sample>,
    /// Each interval's histogram, kept only under MPI (see `ResultDoc::interval_hists`).
    pub interval_hists: Vec<Vec<[u64; 2]>>,
    pub fine: FineDoc,
    pub engine: EngineDoc,
    /// The signal that cut the run short, if any.
    pub interrupted: Option<i32>,
    /// The whole-run histogram, for merging with other runs or hosts.
    pub hist: Hist,
    /// Whole-run histograms of reads, writes and syncs apart, so repeats fold exactly.
    pub read_hist: Hist,
    pub write_hist: Hist,
    pub trim_hist: Hist,
    pub sync_hist: Hist,
    /// With a rate: service times (from submission), beside latencies from planned starts.
    pub service_hist: Option<Hist>,
    /// An IO error that stopped the run early; the numbers cover the part before it.
    pub error: Option<anyhow::Error>,
    /// `Display::stop_when` ended the run before its limit.
    pub stopped_early: bool,
    /// With `--verify`: what the reads found as they went.
    pub verify: Option<Tally>,
    /// IO errors the workers counted and went on after (fio's continue_on_error).
    pub ignored: Option<crate::model::IgnoredDoc>,
}

impl Measured {
    /// A copy for a second reader (a stream's own result beside its cell's sum); the error is
    /// kept as its text, which is all a result document keeps of it.
    pub fn copy(&self) -> Measured {
        Measured {
            ios: self.ios,
            bytes: self.bytes,
            runtime_s: self.runtime_s,
            lat: self.lat,
            read: self.read.clone(),
            write: self.write.clone(),
            trim: self.trim.clone(),
            sync: self.sync.clone(),
            cpu: self.cpu.clone(),
            timeseries: self.timeseries.clone(),
            interval_hists: self.interval_hists.clone(),
            fine: self.fine.clone(),
            engine: self.engine.clone(),
            interrupted: self.interrupted,
            hist: self.hist.clone(),
            read_hist: self.read_hist.clone(),
            write_hist: self.write_hist.clone(),
            trim_hist: self.trim_hist.clone(),
            sync_hist: self.sync_hist.clone(),
            service_hist: self.service_hist.clone(),
            error: self.error.as_ref().map(|e| anyhow!("{e:#}")),
            stopped_early: self.stopped_early,
            verify: self.verify.clone(),
            ignored: self.ignored.clone(),
        }
    }
}

/// Failures kept with their offsets as evidence; the rest are only counted.
pub const KEEP_FAILURES: usize = 10;

/// Decides, from the IOPS of each ~100 ms tick completed so far (read from the workers' live
/// counters), that a run has measured enough (`suite --until-stable`). Called on the watching
/// thread, once per tick.
pub type StopWhen<'a> = &'a (dyn Fn(&[f64]) -> bool + Sync);

/// How the run shows itself while it goes, when it may stop before its limit, and which device
/// it watches.
#[derive(Default)]
pub struct Display<'a> {
    /// A progress line on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
    /// Prefix of the progress line, e.g. the suite cell.
    pub prefix: String,
    pub stop_when: Option<StopWhen<'a>>,
    /// The target's block device, whose IOs in flight the run samples (`fine.in_flight`).
    pub device: Option<String>,
}

/// Opens the target for one worker: each worker has its own file description, as fio opens one
/// per job (buffered sequential streams would otherwise share one readahead state). A target of
/// several files (fio's `nrfiles`) gives them all, in the order IOs name them.
pub type Opener<'a> = &'a (dyn Fn() -> Result<Vec<File>> + Sync);

pub fn run(
    spec: &Spec,
    open: Opener,
    range_start: u64,
    range_bytes: u64,
    display: &Display,
    verify: Option<&Verifier>,
) -> Result<Measured> {
    run_gated(
        spec,
        open,
        (range_start, range_bytes),
        display,
        verify,
        None,
    )
}

fn run_gated(
    spec: &Spec,
    open: Opener,
    (range_start, range_bytes): (u64, u64),
    display: &Display,
    verify: Option<&Verifier>,
    together: Option<(&Together, usize, Duration)>,
) -> Result<Measured> {
    let threads = spec.threads as usize;
    let shared = Shared {
        stop: AtomicBool::new(false),
        finished: AtomicUsize::new(0),
        progress: (0..threads).map(|_| Live::default()).collect(),
    };
    let start = StartGate::default();
    let setup: Mutex<Option<UringSetup>> = Mutex::new(None);
    let backing: Mutex<Option<String>> = Mutex::new(None);
    let (tx, rx) = channel::<IntervalMsg>();
    let budgets = spec.data_budgets();
    let zones = spec
        .shape
        .zbd
        .map(|z| crate::workload::zbd::table_for(z, range_start, range_bytes, spec.bs.bytes()));

    let mut agg = Intervals::default();
    let (outs, watched) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        for id in 0..spec.threads {
            let tx = tx.clone();
            let (shared, start, setup, backing) = (&shared, &start, &setup, &backing);
            let cfg = WorkerCfg {
                id,
                spec,
                range_start,
                range_bytes,
                data_budget: budgets.as_ref().map(|b| b[id as usize]),
                verify,
                zones: zones.clone(),
            };
            let h = std::thread::Builder::new()
                .name(format!("iogauge-w{id}"))
                .spawn_scoped(s, move || {
                    // A panic (a bug) must still count the worker as finished, or the main
                    // thread would wait for it forever; it becomes the run's error instead.
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_worker(&cfg, open, shared, start, (setup, backing), &tx)
                    }))
                    .unwrap_or_else(|p| {
                        let what = p
                            .downcast_ref::<&str>()
                            .copied()
                            .or_else(|| p.downcast_ref::<String>().map(String::as_str))
                            .unwrap_or("panic");
                        Err(anyhow!(
                            "a worker thread panicked: {what} (a bug in iogauge)"
                        ))
                    });
                    if r.is_err() {
                        shared.stop.store(true, Ordering::SeqCst);
                    }
                    shared.finished.fetch_add(1, Ordering::SeqCst);
                    r
                })
                .map_err(|e| anyhow!("cannot start worker thread: {e}"));
            handles.push(h);
        }
        drop(tx);
        let spawned = handles.iter().filter(|h| h.is_ok()).count();
        if spawned < threads {
            // Workers that did start are released below and stop at once.
            shared.stop.store(true, Ordering::SeqCst);
            shared
                .finished
                .fetch_add(threads - spawned, Ordering::SeqCst);
        }
        let t0 = start.open_when(threads, &shared.finished, together);
        let gate = (t0, together.map(|(t, i, _)| (t, i)));
        let watched = watch(spec, &shared, &rx, &mut agg, gate, display, threads);
        let outs: Vec<Result<WorkerOut>> = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    Err(anyhow!("a worker thread panicked (a bug in iogauge)"))
                }),
                Err(e) => Err(e),
            })
            .collect();
        (outs, watched)
    });

    // Intervals still in the channel were sent at the very end.
    agg.drain(&rx);
    // A worker that could not start fails the run; one that failed mid-run keeps what it
    // measured, and the run reports the first such error after its results.
    let mut workers = Vec::with_capacity(threads);
    for o in outs {
        workers.push(o?);
    }
    let error = workers.iter_mut().find_map(|w| w.error.take());
    // An error before the measurement began leaves nothing measured: say where it came.
    let measured_any = workers.iter().any(|w| w.reads + w.writes + w.syncs > 0);
    let error = error.map(
        |e| match (measured_any, before_measuring(spec, watched.ended)) {
            (false, Some(when)) => e.context(format!("before the measurement began, {when}")),
            _ => e,
        },
    );
    let checked = verify.map(|_| {
        let mut all = Tally::new(KEEP_FAILURES);
        for w in &workers {
            all.merge(&w.verify);
        }
        all
    });
    let interrupted = crate::interrupt::requested();
    let runtime = match (spec.limit, interrupted, &error) {
        (Limit::Time(t), None, None) if !watched.stopped_early => t,
        _ => workers
            .iter()
            .map(|w| w.last_completion)
            .max()
            .unwrap_or_default()
            .max(watched.until.min(Duration::from_millis(1))),
    };
    let setup = setup.into_inner().unwrap_or_else(|e| e.into_inner());
    let ignored = merge::ignored(&workers);
    let mut measured = merge(spec, workers, agg, runtime, watched.cpu, setup, interrupted);
    watched.sched.fill(&mut measured.fine, FINE_BIN);
    measured.verify = checked;
    measured.ignored = ignored;
    measured.engine.buffers = backing
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_default();
    measured.error = error;
    measured.stopped_early = watched.stopped_early;
    measured.fine.rule = watched.ticks;
    Ok(measured)
}

fn run_worker(
    cfg: &WorkerCfg,
    open: Opener,
    shared: &Shared,
    start: &StartGate,
    (setup, backing): (&Mutex<Option<UringSetup>>, &Mutex<Option<String>>),
    tx: &Sender<IntervalMsg>,
) -> Result<WorkerOut> {
    let spec = cfg.spec;
    // Where the thread runs and takes its memory from, before its engine and buffers are made
    // (they are placed too); then its own descriptor. Either failing ends the run like an
    // engine that fails.
    let placed = spec.placement.as_ref().map_or(Ok(()), |p| {
        p.apply(cfg.id)
            .map_err(|e| anyhow!("placing worker {} ({p}) failed: {e}", cfg.id))
    });
    let files = match placed.and_then(|()| open()) {
        Ok(f) => f,
        Err(e) => {
            shared.stop.store(true, Ordering::SeqCst);
            start.arrive_and_wait(&shared.stop);
            return Err(e);
        }
    };
    let ecfg = EngineConfig {
        files: &files,
        depth: spec.iodepth,
        // A trim moves no data (fio's on emulated zones: a reset in memory).
        buf_size: if spec.rw.trims() {
            4096
        } else {
            spec.max_bs() as usize
        },
        align: 4096,
        seed: crate::workload::offsets::thread_seed(spec.seed, cfg.id) ^ 0xA5A5,
        uring: UringOptions {
            look: spec.complete_batch == 1 && no_cpu_spare(spec.threads),
            ..spec.uring
        },
        write_flags: if spec.atomic {
            iogauge_engine::RWF_ATOMIC
        } else {
            0
        },
    };
    // Build the engine before the start gate so setup cost is not measured; pass the gate
    // either way so one failing worker cannot hang the others.
    enum Built {
        // Boxed: the ring is large, and the enum only lives until the worker starts.
        Uring(Box<UringEngine>),
        Psync(PsyncEngine),
        Null(NullEngine),
    }
    // fio's trims on emulated zones reach no device: their IOs complete at once, as the null
    // engine's do, whatever engine the job names.
    let kind = match spec.rw.trims() {
        true => EngineKind::Null,
        false => spec.engine,
    };
    let built = match kind {
        EngineKind::IoUring => UringEngine::new(&ecfg).map(|e| {
            if cfg.id == 0 {
                *setup.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.setup().clone());
            }
            Built::Uring(Box::new(e))
        }),
        EngineKind::Psync => PsyncEngine::new(&ecfg).map(Built::Psync),
        EngineKind::Null => NullEngine::new(&ecfg).map(Built::Null),
    };
    if built.is_err() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    // Lets tests check that a bug in a worker ends the run cleanly; debug builds only, and
    // outside the IO loop.
    #[cfg(debug_assertions)]
    if cfg.id == 0 && std::env::var_os("IOGAUGE_DEBUG_PANIC").is_some_and(|v| v == "worker") {
        panic!("IOGAUGE_DEBUG_PANIC=worker");
    }
    if cfg.id == 0 {
        let what = match &built {
            Ok(Built::Uring(e)) => Some(e.backing()),
            Ok(Built::Psync(e)) => Some(e.backing()),
            Ok(Built::Null(e)) => Some(e.backing()),
            Err(_) => None,
        };
        *backing.lock().unwrap_or_else(|e| e.into_inner()) = what.map(|b| b.describe());
    }
    let t0 = start.arrive_and_wait(&shared.stop);
    let built = built.map_err(|e| engine_error(spec.engine, e))?;
    let out = match built {
        Built::Uring(e) => {
            let (out, e) = worker::work(*e, cfg, files.len(), shared, tx, t0);
            // What the ring became: an exact ring may have moved after its probe.
            if cfg.id == 0 {
                *setup.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.setup().clone());
            }
            out
        }
        Built::Psync(e) => worker::work(e, cfg, files.len(), shared, tx, t0).0,
        Built::Null(e) => worker::work(e, cfg, files.len(), shared, tx, t0).0,
    };
    if out.error.is_some() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    Ok(out)
}

/// Whether `threads` take every CPU of the machine, and the process may use them all: where
/// looking for completions was measured to pay (two threads on two CPUs, nothing pinned). With
/// a CPU spare asking moved more at less CPU; a run pinned to fewer CPUs shares them with
/// io_uring's workers, and a look would hold the CPU the worker needs (docs/performance.md).
fn no_cpu_spare(threads: u32) -> bool {
    let cpus = sys::online_cpus();
    let usable = std::thread::available_parallelism().map_or(0, |n| n.get() as u64);
    usable >= cpus && u64::from(threads) >= cpus
}

fn engine_error(kind: EngineKind, e: std::io::Error) -> anyhow::Error {
    match (kind, e.raw_os_error()) {
        (EngineKind::IoUring, Some(libc::ENOSYS | libc::EPERM)) => crate::error::usage(format!(
            "io_uring is not available here ({e}); it needs Linux 5.10+ and may be disabled by kernel.io_uring_disabled or a seccomp profile; use --engine psync"
        )),
        _ => anyhow!("cannot set up the {} engine: {e}", kind.name()),
    }
}

/// Where in the lead-in a run that ended `ended` after its start was, for an error that came
/// then: `None` once the measurement had begun.
fn before_measuring(spec: &Spec, ended: Duration) -> Option<String> {
    let trial = spec.lead_in().saturating_sub(spec.ramp);
    if ended < trial {
        Some(format!(
            "in the {} trial of ways to wait for completions (--complete-batch 1 measures from the start)",
            units::duration(trial)
        ))
    } else if ended < spec.lead_in() {
        Some(format!("in the {} ramp", units::duration(spec.ramp)))
    } else {
        None
    }
}

/// The main thread while the workers run: aggregate intervals, draw progress, pass on a stop
/// request, and measure the process's CPU time over the measured window.
fn watch(
    spec: &Spec,
    shared: &Shared,
    rx: &Receiver<IntervalMsg>,
    agg: &mut Intervals,
    (t0, together): (Instant, Option<(&Together, usize)>),
    display: &Display,
    threads: usize,
) -> Watched {
    let measure_start = t0 + spec.lead_in();
    let mut stopped_early = false;
    let mut ticks: Vec<f64> = Vec::new();
    let mut tick_from: Option<(Instant, u64)> = None;
    let total = match spec.limit {
        Limit::Time(t) => spec.lead_in() + t,
        Limit::Data(_) => Duration::ZERO,
    };
    let bar = progress_bar(spec, display, total);
    let mut cpu_start = None;
    let mut sched = Sched::with_device(display.device.as_deref());
    let mut last_ios = 0u64;
    let mut last_t = Instant::now();
    let mut rate = 0.0;
    if spec.lead_in().is_zero() {
        // The measurement starts now: its CPU time too (the first tick is 100 ms away).
        cpu_start = Some(sys::process_cpu());
        sched.start(measure_start);
    }
    // A worker's thread leaves /proc/self/task when it ends, taking the CPU time it spent since
    // the last sample with it: a timed run is sampled once more just before its end, or its
    // last bin reads as if the threads had stopped a bin early (0.04 CPUs in every repeat's
    // last bin of a CPU-bound cell, against 1.0 in the others).
    let last_look = match spec.limit {
        Limit::Time(t) => Some(measure_start + t.saturating_sub(Duration::from_millis(2))),
        Limit::Data(_) => None,
    };
    loop {
        // Wake at least every 100 ms, right at the end of the ramp and just before the end.
        let tick = Duration::from_millis(100);
        let now = Instant::now();
        let wait = if cpu_start.is_none() && now < measure_start {
            (measure_start - now).min(tick)
        } else {
            match last_look {
                Some(l) if now < l => (l - now).min(tick),
                _ => tick,
            }
        };
        // Cut short when the last worker ends: the look below then finds them all finished
        // and leaves, where sleeping out the tick ended a timed cell up to 100 ms late.
        nap(rx, agg, wait);
        if cpu_start.is_none() && Instant::now() >= measure_start {
            cpu_start = Some(sys::process_cpu());
            sched.start(measure_start);
        }
        sched.sample();
        if crate::interrupt::requested().is_some() {
            shared.stop.store(true, Ordering::SeqCst);
        }
        if together.is_some_and(|(t, i)| t.ended(i)) && !stopped_early {
            // Another stream's end ended the cell (fio's exitall): measured until now.
            stopped_early = true;
            shared.stop.store(true, Ordering::SeqCst);
        }
        // Workers end by themselves (time, data or stop); they hold the only senders.
        let ios: u64 = shared
            .progress
            .iter()
            .map(|l| l.ios.load(Ordering::Relaxed))
            .sum();
        let dt = last_t.elapsed().as_secs_f64();
        if dt >= 0.5 {
            rate = (ios - last_ios.min(ios)) as f64 / dt;
            last_ios = ios;
            last_t = Instant::now();
        }
        if let Some(bar) = &bar {
            let elapsed = t0.elapsed();
            match spec.limit {
                Limit::Time(_) => {
                    bar.set_position(elapsed.as_millis().min(total.as_millis()) as u64)
                }
                Limit::Data(_) => bar.set_position((ios as f64 * spec.mean_bs()) as u64),
            }
            let trial = spec.lead_in() - spec.ramp;
            let phase = if elapsed < trial {
                "trying completion batches · "
            } else if elapsed < spec.lead_in() {
                "ramp · "
            } else {
                ""
            };
            bar.set_message(format!(
                "{phase}{} IOPS · {}",
                units::count(rate),
                units::bw(rate * spec.mean_bs())
            ));
        }
        agg.drain(rx);
        if let Some(stop_when) = display.stop_when {
            // Every tick after the measurement started: its rate from the workers' live
            // counters, so the stopping rule sees 100 ms samples as they happen.
            let now = Instant::now();
            if now >= measure_start && !stopped_early {
                match tick_from {
                    None => tick_from = Some((now, ios)),
                    Some((t, n)) => {
                        let dt = now.duration_since(t).as_secs_f64();
                        if dt >= 0.05 {
                            ticks.push((ios - n.min(ios)) as f64 / dt);
                            tick_from = Some((now, ios));
                            if stop_when(&ticks) {
                                stopped_early = true;
                                shared.stop.store(true, Ordering::SeqCst);
                            }
                        }
                    }
                }
            }
        }
        if shared.finished.load(Ordering::SeqCst) == threads {
            break;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let end = sys::process_cpu();
    sched.sample();
    Watched {
        cpu: cpu_start.map(|s| (s, end)),
        sched,
        until: measure_start.elapsed(),
        ended: t0.elapsed(),
        stopped_early,
        ticks,
    }
}

/// Waits `wait`, taking in the workers' intervals as they come, or less once every worker has
/// ended. Each worker holds a sender of `rx` until its thread ends, after it is counted as
/// finished, so the channel's disconnection is that moment, with no polling.
fn nap(rx: &Receiver<IntervalMsg>, agg: &mut Intervals, wait: Duration) {
    let until = Instant::now() + wait;
    loop {
        match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(m) => agg.add(m),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
        }
    }
}

struct Watched {
    /// Process CPU times at the start and end of the measured window.
    cpu: Option<(sys::CpuTimes, sys::CpuTimes)>,
    /// The process's CPU time and time waiting for a CPU over the measured window.
    sched: Sched,
    /// How long after the measurement start the workers were all done.
    until: Duration,
    /// How long after the workers' start they were all done.
    ended: Duration,
    stopped_early: bool,
    /// The rates the stopping rule judged (empty without one).
    ticks: Vec<f64>,
}

fn progress_bar(spec: &Spec, display: &Display, total: Duration) -> Option<ProgressBar> {
    if !display.progress {
        return None;
    }
    let target = ProgressDrawTarget::stderr_with_hz(4);
    if target.is_hidden() {
        return None;
    }
    let (len, tmpl) = match spec.limit {
        Limit::Time(_) => (
            total.as_millis() as u64,
            "{prefix}[{elapsed_precise}] {wide_bar} ETA {eta} · {msg}",
        ),
        Limit::Data(d) => (
            d,
            "{prefix}[{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ETA {eta} · {msg}",
        ),
    };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    bar.set_style(
        ProgressStyle::with_template(tmpl).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(display.prefix.clone());
    Some(bar)
}

#[cfg(test)]
mod tests;
