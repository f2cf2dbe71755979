//! Runs one workload: starts the workers behind a barrier, gathers their per-interval samples,
//! shows progress, stops them on time, data or a signal, and merges what they measured.

mod worker;

pub use worker::FINE_BIN;

use crate::measure::{self, Hist, LatNs};
use crate::model::{CpuDoc, EngineDoc, FineDoc, OpDoc, Sample, SyncDoc, TrialDoc};
use crate::units;
use crate::workload::{Limit, Spec};
use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_engine::{
    sys, Engine, EngineConfig, EngineKind, NullEngine, PsyncEngine, UringEngine, UringSetup,
};
use iogauge_verify::{RunKey, Tally, Tracker};
use std::collections::BTreeMap;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
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
    fn arrive_and_wait(&self) -> Instant {
        self.ready.fetch_add(1, Ordering::SeqCst);
        loop {
            if let Some(t) = self.origin.get() {
                return *t;
            }
            std::thread::yield_now();
        }
    }

    /// Opens once every worker has arrived or is gone: a worker cannot finish after arriving
    /// before the gate opens, so `finished` counts exactly those that never will arrive.
    fn open_when(&self, workers: usize, finished: &AtomicUsize) -> Instant {
        while self.ready.load(Ordering::SeqCst) + finished.load(Ordering::SeqCst) < workers {
            std::thread::sleep(Duration::from_micros(200));
        }
        *self.origin.get_or_init(Instant::now)
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
    pub sync_hist: Hist,
    /// With a rate: service times (from submission), beside latencies from planned starts.
    pub service_hist: Option<Hist>,
    /// An IO error that stopped the run early; the numbers cover the part before it.
    pub error: Option<anyhow::Error>,
    /// `Display::stop_when` ended the run before its limit.
    pub stopped_early: bool,
    /// With `--verify`: what the reads found as they went.
    pub verify: Option<Tally>,
}

/// Failures kept with their offsets as evidence; the rest are only counted.
pub const KEEP_FAILURES: usize = 10;

/// What the workers do for `--verify`: stamp every write, check every read they can judge.
pub struct Verifier<'a> {
    pub key: RunKey,
    /// This cell's writes; `None` for a cell that only reads.
    pub tracker: Option<&'a Tracker>,
    /// The fill stamped every sector, so a block this cell did not write is still iogauge's
    /// and a read of it can be checked sector by sector.
    pub filled: bool,
}

/// Decides, from the IOPS of each ~100 ms tick completed so far (read from the workers' live
/// counters), that a run has measured enough (`suite --until-stable`). Called on the watching
/// thread, once per tick.
pub type StopWhen<'a> = &'a (dyn Fn(&[f64]) -> bool + Sync);

/// How the run shows itself while it goes, and when it may stop before its limit.
#[derive(Default)]
pub struct Display<'a> {
    /// A progress line on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
    /// Prefix of the progress line, e.g. the suite cell.
    pub prefix: String,
    pub stop_when: Option<StopWhen<'a>>,
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
    let budgets = data_budgets(spec);

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
        let t0 = start.open_when(threads, &shared.finished);
        let watched = watch(spec, &shared, &rx, &mut agg, t0, display, threads);
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
    let mut measured = merge(spec, workers, agg, runtime, watched.cpu, setup, interrupted);
    (
        measured.fine.cpu_run,
        measured.fine.cpu_wait,
        measured.fine.cpu_others,
    ) = watched.sched.per_bin(FINE_BIN, measured.fine.ios.len());
    measured.verify = checked;
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
    // This worker's own descriptor; an open that fails ends the run like an engine that does.
    let files = match open() {
        Ok(f) => f,
        Err(e) => {
            shared.stop.store(true, Ordering::SeqCst);
            start.arrive_and_wait();
            return Err(e);
        }
    };
    let ecfg = EngineConfig {
        files: &files,
        depth: spec.iodepth,
        buf_size: spec.max_bs() as usize,
        align: 4096,
        seed: crate::workload::offsets::thread_seed(spec.seed, cfg.id) ^ 0xA5A5,
        uring: spec.uring,
    };
    // Build the engine before the start gate so setup cost is not measured; pass the gate
    // either way so one failing worker cannot hang the others.
    enum Built {
        // Boxed: the ring is large, and the enum only lives until the worker starts.
        Uring(Box<UringEngine>),
        Psync(PsyncEngine),
        Null(NullEngine),
    }
    let built = match spec.engine {
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
    let t0 = start.arrive_and_wait();
    let built = built.map_err(|e| engine_error(spec.engine, e))?;
    let out = match built {
        Built::Uring(e) => worker::work(*e, cfg, files.len(), shared, tx, t0),
        Built::Psync(e) => worker::work(e, cfg, files.len(), shared, tx, t0),
        Built::Null(e) => worker::work(e, cfg, files.len(), shared, tx, t0),
    };
    if out.error.is_some() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    Ok(out)
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

/// Per-thread shares of a fixed amount of data, in whole blocks.
fn data_budgets(spec: &Spec) -> Option<Vec<u64>> {
    let Limit::Data(total) = spec.limit else {
        return None;
    };
    let blocks = total.div_ceil(spec.bs);
    let n = u64::from(spec.threads);
    Some(
        (0..n)
            .map(|i| (blocks / n + u64::from(i < blocks % n)) * spec.bs)
            .collect(),
    )
}

/// The main thread while the workers run: aggregate intervals, draw progress, pass on a stop
/// request, and measure the process's CPU time over the measured window.
fn watch(
    spec: &Spec,
    shared: &Shared,
    rx: &Receiver<IntervalMsg>,
    agg: &mut Intervals,
    t0: Instant,
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
    let mut sched = Sched::default();
    let mut last_ios = 0u64;
    let mut last_t = Instant::now();
    let mut rate = 0.0;
    if spec.lead_in().is_zero() {
        // The measurement starts now: its CPU time too (the first tick is 100 ms away).
        cpu_start = Some(sys::process_cpu());
        sched.start(measure_start);
    }
    loop {
        // Wake at least every 100 ms, and right at the end of the ramp.
        let tick = Duration::from_millis(100);
        let now = Instant::now();
        let wait = if cpu_start.is_none() && now < measure_start {
            (measure_start - now).min(tick)
        } else {
            tick
        };
        std::thread::sleep(wait);
        if cpu_start.is_none() && Instant::now() >= measure_start {
            cpu_start = Some(sys::process_cpu());
            sched.start(measure_start);
        }
        sched.sample();
        if crate::interrupt::requested().is_some() {
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
                units::mib_s(rate * spec.mean_bs())
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

/// The process's threads' time on a CPU and time runnable but waiting for one (the first two
/// fields of each thread's schedstat), summed over every thread it has had (the workers, and
/// io_uring's own workers that the kernel starts inside the process), at moments of the
/// measured window: read by the main thread every tick, never on the IO path.
#[derive(Default)]
struct Sched {
    origin: Option<Instant>,
    /// Each thread's last reading, by thread id: a thread that has ended counts what it had.
    threads: Vec<(u32, [u64; 2])>,
    /// What threads whose id was taken again by a new thread had counted.
    retired: [u64; 2],
    /// (seconds since the measurement started, [on-CPU ns, waiting ns] summed, and the whole
    /// machine's busy CPU ns from /proc/stat).
    samples: Vec<(f64, [u64; 3])>,
}

impl Sched {
    fn start(&mut self, origin: Instant) {
        self.origin = Some(origin);
        self.sample();
    }

    fn sample(&mut self) {
        let Some(origin) = self.origin else {
            return;
        };
        // A kernel without schedstat leaves the run without these series, nothing more.
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return;
        };
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Some(now) = read_schedstat(&e.path().join("schedstat")) else {
                continue;
            };
            match self.threads.iter_mut().find(|(t, _)| *t == tid) {
                Some((_, last)) => {
                    // A reading below the last is a new thread with an ended one's id: what
                    // the ended one counted stays counted.
                    if now[0] < last[0] || now[1] < last[1] {
                        self.retired[0] += last[0];
                        self.retired[1] += last[1];
                    }
                    *last = now;
                }
                None => self.threads.push((tid, now)),
            }
        }
        if self.threads.is_empty() {
            return;
        }
        let sum = |i: usize| self.retired[i] + self.threads.iter().map(|(_, v)| v[i]).sum::<u64>();
        let at = origin.elapsed().as_secs_f64();
        // Without /proc/stat the machine's series is left out (zero throughout).
        let busy = machine_busy_ns().unwrap_or(0);
        self.samples.push((at, [sum(0), sum(1), busy]));
    }

    /// CPU seconds per second on a CPU, and waiting for one, in each of `bins` bins of `bin`
    /// from the measurement's start (empty without two samples); and the CPUs' worth of the
    /// machine's work that was not iogauge's threads (other processes, and kernel threads —
    /// the loop device's or a file system's that serve iogauge's IO among them), empty without
    /// /proc/stat.
    fn per_bin(&self, bin: Duration, bins: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let of = |i: usize| {
            let s: Vec<(f64, u64)> = self.samples.iter().map(|(t, v)| (*t, v[i])).collect();
            rate_per_bin(&s, bin.as_secs_f64(), bins)
        };
        let run = of(0);
        let others = match self.samples.iter().all(|(_, v)| v[2] > 0) {
            true => of(2)
                .iter()
                .zip(&run)
                .map(|(busy, own)| (busy - own).max(0.0))
                .collect(),
            false => Vec::new(),
        };
        (run, of(1), others)
    }
}

/// /proc/stat's clock ticks per second (USER_HZ: 100 on every Linux ABI, whatever HZ the
/// kernel was built with).
const USER_HZ: u64 = 100;

/// The whole machine's CPU time busy so far, in nanoseconds: /proc/stat's first line, all but
/// idle and iowait (guest time is inside user already).
fn machine_busy_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().next()?.strip_prefix("cpu ")?;
    let f: Vec<u64> = line
        .split_ascii_whitespace()
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal
    let busy = f
        .get(..8)?
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .map(|(_, v)| v)
        .sum::<u64>();
    Some(busy * (1_000_000_000 / USER_HZ))
}

/// A counter of nanoseconds, sampled at `samples` (seconds, value), as seconds per second in
/// each of `bins` bins of `bin_s`: linear between samples; bins past the last sample repeat
/// the last bin's rate. Empty without two samples.
fn rate_per_bin(samples: &[(f64, u64)], bin_s: f64, bins: usize) -> Vec<f32> {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return Vec::new();
    };
    if last.0 <= first.0 || bin_s <= 0.0 {
        return Vec::new();
    }
    let at = |t: f64| -> f64 {
        let t = t.clamp(first.0, last.0);
        let i = samples
            .partition_point(|s| s.0 < t)
            .clamp(1, samples.len() - 1);
        let ((t0, v0), (t1, v1)) = (samples[i - 1], samples[i]);
        let (v0, v1) = (v0 as f64, v1.max(v0) as f64);
        match t1 > t0 {
            true => v0 + (v1 - v0) * (t - t0) / (t1 - t0),
            false => v1,
        }
    };
    let mut out: Vec<f32> = Vec::with_capacity(bins);
    for j in 0..bins {
        let (a, b) = (j as f64 * bin_s, (j + 1) as f64 * bin_s);
        let rate = match out.last() {
            Some(&prev) if b > last.0 + 1e-9 => prev,
            _ => ((at(b) - at(a)) / 1e9 / bin_s) as f32,
        };
        out.push(rate);
    }
    out
}

/// On-CPU and waiting nanoseconds from a schedstat file: "<on cpu> <run delay> <timeslices>".
fn read_schedstat(path: &std::path::Path) -> Option<[u64; 2]> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut f = text.split_ascii_whitespace().map(|v| v.parse::<u64>().ok());
    Some([f.next()??, f.next()??])
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

/// Per-interval aggregation over workers.
#[derive(Default)]
struct Intervals {
    by_idx: BTreeMap<u64, (u64, u64, Hist)>,
}

impl Intervals {
    fn add(&mut self, m: IntervalMsg) {
        let e = self
            .by_idx
            .entry(m.idx)
            .or_insert_with(|| (0, 0, measure::interval_hist()));
        e.0 += m.ios;
        e.1 += m.bytes;
        measure::merge(&mut e.2, &m.hist);
    }

    fn drain(&mut self, rx: &Receiver<IntervalMsg>) {
        while let Ok(m) = rx.try_recv() {
            self.add(m);
        }
    }

    /// Each interval's histogram as buckets, aligned with [`Intervals::samples`].
    fn hists(&self, interval: Duration, runtime: Duration) -> Vec<Vec<[u64; 2]>> {
        let n = (runtime.as_secs_f64() / interval.as_secs_f64() - 1e-9)
            .ceil()
            .max(0.0) as u64;
        (0..n)
            .map(|i| match self.by_idx.get(&i) {
                Some((_, _, h)) => measure::buckets(h),
                None => Vec::new(),
            })
            .collect()
    }

    /// One sample per interval from 0 to the end of the run, zeros where nothing completed.
    fn samples(&self, interval: Duration, runtime: Duration) -> Vec<Sample> {
        let step = interval.as_secs_f64();
        let end = runtime.as_secs_f64();
        let n = (end / step - 1e-9).ceil().max(0.0) as u64;
        (0..n)
            .map(|i| {
                let t_start = i as f64 * step;
                let t_end = ((i + 1) as f64 * step).min(end);
                let len = (t_end - t_start).max(1e-9);
                match self.by_idx.get(&i) {
                    Some((ios, bytes, h)) => Sample {
                        t_s: t_end,
                        iops: *ios as f64 / len,
                        bw_bytes: *bytes as f64 / len,
                        lat_p50_ns: h.value_at_quantile(0.5),
                        lat_p99_ns: h.value_at_quantile(0.99),
                    },
                    None => Sample {
                        t_s: t_end,
                        ..Sample::default()
                    },
                }
            })
            .collect()
    }
}

fn merge(
    spec: &Spec,
    workers: Vec<WorkerOut>,
    agg: Intervals,
    runtime: Duration,
    cpu_window: Option<(sys::CpuTimes, sys::CpuTimes)>,
    setup: Option<UringSetup>,
    interrupted: Option<i32>,
) -> Measured {
    let mut read = measure::run_hist();
    let mut write = measure::run_hist();
    let mut sync = measure::run_hist();
    let mut service = measure::run_hist();
    let (mut reads, mut writes, mut rb, mut wb, mut syncs) = (0, 0, 0, 0, 0);
    let mut fine: Vec<u32> = Vec::new();
    for w in &workers {
        measure::merge(&mut read, &w.read);
        measure::merge(&mut write, &w.write);
        measure::merge(&mut sync, &w.sync);
        measure::merge(&mut service, &w.service);
        reads += w.reads;
        writes += w.writes;
        rb += w.read_bytes;
        wb += w.write_bytes;
        syncs += w.syncs;
        if fine.len() < w.fine.len() {
            fine.resize(w.fine.len(), 0);
        }
        for (a, b) in fine.iter_mut().zip(&w.fine) {
            *a += b;
        }
    }
    let secs = runtime.as_secs_f64().max(1e-9);
    // Bins that end after the runtime hold completions beyond it only by rounding; the time
    // series covers whole bins up to the runtime.
    let bins = (secs / FINE_BIN.as_secs_f64()).ceil() as usize;
    fine.resize(bins.max(fine.len().min(bins)), 0);
    let op = |ios: u64, bytes: u64, h: &Hist| OpDoc {
        ios,
        bytes,
        iops: ios as f64 / secs,
        bw_bytes: bytes as f64 / secs,
        lat_ns: LatNs::of(h),
    };
    let mut all = measure::run_hist();
    measure::merge(&mut all, &read);
    measure::merge(&mut all, &write);
    let ios = reads + writes;
    let cpu = match cpu_window {
        Some((a, b)) => {
            let used = b.since(a);
            CpuDoc::new(used.user.as_secs_f64(), used.sys.as_secs_f64(), ios)
        }
        None => CpuDoc::default(),
    };
    let engine = match setup {
        Some(s) => EngineDoc {
            name: spec.engine.name().into(),
            flags: s.flags.iter().map(|f| f.to_string()).collect(),
            refused: s.refused.iter().map(|f| f.to_string()).collect(),
            registered_buffers: s.registered_buffers,
            registered_files: s.registered_files,
            buffers: String::new(),
            complete_batch: workers.iter().map(|w| w.complete_batch).max().unwrap_or(1),
            complete_trial: (spec.complete_batch == 0).then(|| {
                let sum = |i: usize| workers.iter().map(|w| w.trial[i]).sum();
                TrialDoc {
                    one: sum(0),
                    half: sum(1),
                    all: sum(2),
                }
            }),
        },
        None => EngineDoc {
            name: spec.engine.name().into(),
            ..EngineDoc::default()
        },
    };
    Measured {
        ios,
        bytes: rb + wb,
        runtime_s: secs,
        lat: LatNs::of(&all),
        read: (spec.mix_read_pct > 0).then(|| op(reads, rb, &read)),
        write: (spec.mix_read_pct < 100).then(|| op(writes, wb, &write)),
        sync: spec.sync.map(|(k, _)| SyncDoc {
            kind: Some(k),
            count: syncs,
            per_s: syncs as f64 / secs,
            lat_ns: LatNs::of(&sync),
        }),
        cpu,
        timeseries: agg.samples(spec.interval, runtime),
        interval_hists: match spec.interval_hists {
            true => agg.hists(spec.interval, runtime),
            false => Vec::new(),
        },
        fine: FineDoc {
            bin_s: FINE_BIN.as_secs_f64(),
            ios: fine,
            // Filled by `run` from the watch thread's samples.
            cpu_run: Vec::new(),
            cpu_wait: Vec::new(),
            cpu_others: Vec::new(),
            ..FineDoc::default()
        },
        engine,
        interrupted,
        hist: all,
        read_hist: read,
        write_hist: write,
        sync_hist: sync,
        service_hist: spec.rate_per_thread.map(|_| service),
        error: None,
        stopped_early: false,
        verify: None,
    }
}

#[cfg(test)]
mod tests;
