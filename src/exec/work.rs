//! A cell turned into the workloads it runs on the plan's one target, and their measurements
//! into one [`Measured`]. This is the only place a [`Spec`] is built, so the rules on block
//! size, memory and psync's depth are written once for `run` and every suite. Most cells are
//! one workload over the target's range; three kinds need more:
//! - a cell with a `range` uses only the start of the target (sysbench's 16 KiB fsync file);
//! - `copy` runs a sequential read of the first half and a sequential write of the second half
//!   at the same time, as `cp` reads one file while writing another, and reports them as one
//!   result whose bytes are both streams' (its copy rate is half its bandwidth);
//! - `--files N` reads N separate files in turn, an equal slice of the cell's time each, and
//!   merges the slices (sysbench picks a file per IO; the runner reads one file per run).

use crate::measure::{self, LatNs};
use crate::model::{CpuDoc, FineDoc, Sample};
use crate::plan::Env;
use crate::runner::{self, Display, Measured, StopWhen, Verifier};
use crate::suite::cells::{self, Cell};
use crate::suite::Length;
use crate::target::Target;
use crate::units;
use crate::workload::{buffers_over_share, Limit, Rw, Spec, MAX_THREADS};
use anyhow::Result;
use iogauge_engine::EngineKind;
use iogauge_sysinfo::diskstats::DeviceWatch;
use iogauge_sysinfo::procio::{self, Stack};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod joined;
mod streams;
use joined::{concurrent, sequential};
pub use streams::together;

/// Shortest slice of a `--files` cell: shorter runs would measure thread start-up.
pub const MIN_SLICE: Duration = Duration::from_millis(100);

/// How a cell runs.
// One per cell, built once before it runs: boxing the copy's two specs would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Work {
    /// One workload over `[start, start + len)` of the target.
    One { spec: Spec, start: u64, len: u64 },
    /// A read stream over `[0, half)` and a write stream over `[half, 2·half)` at once.
    Copy { read: Spec, write: Spec, half: u64 },
    /// One workload over each of the cell's files in turn, `slice` each.
    Files { spec: Spec, files: u32 },
}

impl Work {
    /// The workloads a plan runs (for notes and the target's consent check).
    pub fn specs(&self) -> Vec<&Spec> {
        match self {
            Work::One { spec, .. } | Work::Files { spec, .. } => vec![spec],
            Work::Copy { read, write, .. } => vec![read, write],
        }
    }

    /// The same work waiting for `batch` completions where it would choose (`--complete-batch
    /// auto`): a cell's repeats are measured the way its first repeat chose, so their latencies
    /// compare (a batched wait makes an IO's time late by up to the batch).
    pub fn holding(&self, batch: u32) -> Work {
        let hold = |s: &Spec| Spec {
            complete_batch: match s.complete_batch {
                0 => batch.max(1),
                b => b,
            },
            ..s.clone()
        };
        match self {
            Work::One { spec, start, len } => Work::One {
                spec: hold(spec),
                start: *start,
                len: *len,
            },
            Work::Files { spec, files } => Work::Files {
                spec: hold(spec),
                files: *files,
            },
            Work::Copy { read, write, half } => Work::Copy {
                read: hold(read),
                write: hold(write),
                half: *half,
            },
        }
    }
}

/// The cell's plan on a target of `range` bytes and `logical_block`, or why it cannot run
/// there (the reason is told to the user, and the suite goes on without the cell).
pub fn of(cell: &Cell, env: &Env, range: u64, logical_block: u32) -> Result<Work, String> {
    let (mut threads, mut iodepth) = (cell.threads, cell.iodepth);
    // A fio job's own engine, else the run's.
    let engine = cell.engine.unwrap_or(env.engine);
    if engine == EngineKind::Psync && iodepth > 1 {
        // psync keeps one IO in flight per thread: keep the outstanding IOs with threads.
        threads = threads.saturating_mul(iodepth);
        iodepth = 1;
        if threads > MAX_THREADS {
            return Err(format!(
                "{} IOs in flight need {threads} psync threads, more than {MAX_THREADS}; use --engine io_uring",
                cell.threads * cell.iodepth
            ));
        }
    }
    let largest = cell
        .shape
        .mix
        .as_ref()
        .map_or(cell.bs.bytes(), |m| m.max().max(cell.bs.bytes()));
    if let Some(buffers) = buffers_over_share(threads, iodepth, largest, env.ram) {
        return Err(format!(
            "its IO buffers would take {}, more than a quarter of RAM ({})",
            units::iec(buffers),
            units::iec(env.ram)
        ));
    }
    let len = cell.range.map_or(range, |r| r.min(range));
    let base = Spec {
        rw: Rw::Read,
        bs: cell.bs,
        threads,
        iodepth,
        engine,
        direct: cell.direct.unwrap_or(env.direct),
        mix_read_pct: 100,
        sync: cell.sync,
        odsync: cell.odsync,
        seed: env.seed,
        limit: Limit::Time(Duration::from_secs(1)),
        ramp: env.ramp,
        interval: env.interval,
        uring: env.uring,
        submit_batch: env.submit_batch,
        complete_batch: complete_batch(env, cell, iodepth),
        distribution: cell.distribution.unwrap_or(env.distribution),
        rate_per_thread: cell.rate.or(env.rate).map(|r| r.per_thread(threads)),
        rate_poisson: cell.rate.or(env.rate).is_some_and(|r| r.poisson),
        think: cell.think,
        prio: cell.prio.clone(),
        flow: cell.flow,
        placement: cell.placement.clone(),
        shape: cell.shape.clone(),
        file_service: env.file_service,
        interval_hists: env.interval_hists,
        tolerate: cell.tolerate,
        atomic: cell.atomic,
    };
    let limit = |span: u64, share: u64| match cell.length {
        Length::Time(t) => Limit::Time(t),
        Length::Data(a) => {
            let bytes = cells::data_bytes(a, span) / share;
            Limit::Data(bytes.max(cell.bs.bytes()).next_multiple_of(cell.bs.bytes()))
        }
    };
    let checked = |spec: Spec, span: u64| {
        spec.check_target(span, logical_block)
            .map_err(|e| e.to_string())?;
        Ok::<Spec, String>(spec)
    };
    match cell.op.rw() {
        Some(rw) if cell.files > 1 => {
            // A slice per file is too short to spend a calibration on.
            let base = Spec {
                complete_batch: base.complete_batch.max(1),
                ..base
            };
            let per = file_size(range, cell.files);
            let limit = match cell.length {
                Length::Time(t) => Limit::Time((t / cell.files).max(MIN_SLICE)),
                Length::Data(a) => {
                    let bytes = cells::data_bytes(a, per);
                    Limit::Data(bytes.max(cell.bs.bytes()).next_multiple_of(cell.bs.bytes()))
                }
            };
            let spec = Spec {
                rw,
                mix_read_pct: rw.read_pct(cell.read_pct),
                limit,
                ..base
            };
            Ok(Work::Files {
                spec: checked(spec, per)?,
                files: cell.files,
            })
        }
        Some(rw) => {
            let spec = Spec {
                rw,
                mix_read_pct: rw.read_pct(cell.read_pct),
                limit: limit(len, 1),
                ..base
            };
            Ok(Work::One {
                spec: checked(spec, len)?,
                start: 0,
                len,
            })
        }
        None => {
            let half = len / 2 / cell.bs.bytes() * cell.bs.bytes();
            let read = Spec {
                rw: Rw::Read,
                mix_read_pct: 100,
                limit: limit(2 * half, 2),
                complete_batch: base.complete_batch.max(1),
                ..base
            };
            let write = Spec {
                rw: Rw::Write,
                mix_read_pct: 0,
                ..read.clone()
            };
            Ok(Work::Copy {
                read: checked(read, half)?,
                write: checked(write, half)?,
                half,
            })
        }
    }
}

/// Fewest IOs in flight per thread for which an auto complete batch tries waiting for all of
/// them: below, a wake-up per completion costs little and batches would be small.
pub const AUTO_MIN_DEPTH: u32 = 8;

/// `--complete-batch` for a cell: what the user gave, or for auto (0) a trial where it can tell
/// anything (io_uring keeping [`AUTO_MIN_DEPTH`] in flight for a time, without a rate or syncs,
/// which set the pace themselves) and one completion at a time elsewhere.
fn complete_batch(env: &Env, cell: &Cell, iodepth: u32) -> u32 {
    let trial = cell.engine.unwrap_or(env.engine) == EngineKind::IoUring
        && iodepth >= AUTO_MIN_DEPTH
        && cell.rate.or(env.rate).is_none()
        && cell.sync.is_none()
        // Streams run at once start measuring at once: none of them spends a lead-in alone.
        && cell.together.is_none()
        && matches!(cell.length, Length::Time(_));
    match env.complete_batch {
        0 if trial => 0,
        0 => 1,
        n => n,
    }
}

/// Size of each of `files` files sharing a target's worth of space, in whole 4 KiB blocks.
pub fn file_size(range: u64, files: u32) -> u64 {
    (range / u64::from(files.max(1))) / 4096 * 4096
}

/// A work's measurement, and what it measured: the workload as reported (a copy's two
/// streams as one `rw` workload), its range relative to the target's, and the path when it is
/// not the target's (a `--files` cell).
pub struct Ran {
    pub spec: Spec,
    pub start: u64,
    pub len: u64,
    pub path: Option<String>,
    pub m: Measured,
    /// What the target's devices counted meanwhile (one window per measurement).
    pub devices: Vec<iogauge_sysinfo::diskstats::DeviceWindow>,
    /// What other processes read and wrote meanwhile (when there are devices to judge).
    pub others: Option<iogauge_sysinfo::procio::Others>,
    /// The md arrays' kernel threads' share of the time on a CPU meanwhile.
    pub kernel_threads: Vec<(String, f64)>,
    /// A cell of several streams: each stream's own measurement, in the cell's order (this
    /// measurement is then their sum, with the devices' window over all of them).
    pub streams: Vec<Ran>,
}

/// The target's devices, and every other process's storage IO, over one measurement: the
/// device's counters alone cannot tell another process's IO from the kernel's own on iogauge's
/// behalf. Both are read at the edges of the measurement only, never during it, and both from
/// the end of the lead-in (`DeviceWatch::after`): the trial's and the ramp's IO is not measured.
struct Watch {
    devices: DeviceWatch,
    kthreads: iogauge_sysinfo::kthreads::KThreads,
    others: Option<std::thread::JoinHandle<(Stack, procio::Snapshot)>>,
    stop: Arc<AtomicBool>,
}

impl Watch {
    fn start(target: &Target, interval: Duration, lead: Duration) -> Watch {
        Watch::start_on(&[target], interval, lead)
    }

    /// The watch over every device under `targets` (streams on targets of their own), each
    /// device once: the sum's counters are what all of them saw.
    fn start_on(targets: &[&Target], interval: Duration, lead: Duration) -> Watch {
        let mut devices: Vec<String> = Vec::new();
        for d in targets.iter().flat_map(|t| &t.devices) {
            if !devices.contains(d) {
                devices.push(d.clone());
            }
        }
        let path = &targets[0].path;
        let stop = Arc::new(AtomicBool::new(false));
        // Taken first and read last, so the processes' window covers the devices'.
        let others = (!devices.is_empty()).then(|| {
            let stack = Stack::of(&devices, Some(path));
            let lead = lead.saturating_sub(iogauge_sysinfo::diskstats::EARLY);
            let (stop, opens) = (stop.clone(), Instant::now() + lead);
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) && Instant::now() < opens {
                    let left = opens.saturating_duration_since(Instant::now());
                    std::thread::sleep(left.min(Duration::from_millis(20)));
                }
                let snap = procio::Snapshot::take(&[std::process::id()], &stack);
                (stack, snap)
            })
        });
        Watch {
            devices: DeviceWatch::after(&devices, interval, lead),
            kthreads: iogauge_sysinfo::kthreads::KThreads::start(&devices),
            others,
            stop,
        }
    }

    /// What the devices counted, other processes moved and the arrays' threads spent, for a
    /// [`Ran`] of `spec` over `len` bytes from `start` that measured `m`.
    fn stop(self, spec: Spec, start: u64, len: u64, m: Measured) -> Ran {
        let kernel_threads = self.kthreads.stop();
        self.stop.store(true, Ordering::SeqCst);
        let devices = self.devices.stop();
        let others = self
            .others
            .and_then(|t| t.join().ok())
            .map(|(stack, start)| {
                procio::Snapshot::take(&[std::process::id()], &stack).since(&start)
            });
        Ran {
            spec,
            start,
            len,
            path: None,
            m,
            devices,
            others,
            kernel_threads,
            streams: Vec::new(),
        }
    }
}

/// Runs a work. `files` are the cell's own files for [`Work::Files`]; `prefix` heads the
/// progress line; `stop_when` may end a one-workload cell early (`--until-stable`).
pub fn run(
    work: &Work,
    target: &Target,
    files: &[Target],
    prefix: &str,
    progress: bool,
    stop_when: Option<StopWhen>,
    verify: Option<&Verifier>,
) -> Result<Ran> {
    match work {
        Work::One { spec, start, len } => {
            let display = Display {
                progress,
                prefix: format!("{prefix} "),
                stop_when,
                device: target.device.clone(),
            };
            let watch = Watch::start(target, spec.interval, spec.lead_in());
            let m = measure(spec, target, *start, *len, &display, verify)?;
            Ok(watch.stop(spec.clone(), *start, *len, m))
        }
        Work::Copy { read, write, half } => {
            let watch = Watch::start(target, read.interval, read.lead_in().min(write.lead_in()));
            let open_r = || target.open_all(read.writes(), read.direct, read.odsync);
            let open_w = || target.open_all(write.writes(), write.direct, write.odsync);
            let streams = [
                runner::Stream {
                    spec: read,
                    open: &open_r,
                    range_start: target.offset,
                    range_bytes: *half,
                    beside: Default::default(),
                },
                runner::Stream {
                    spec: write,
                    open: &open_w,
                    range_start: target.offset + half,
                    range_bytes: *half,
                    beside: Default::default(),
                },
            ];
            let display = Display {
                progress,
                prefix: format!("{prefix} "),
                stop_when: None,
                device: target.device.clone(),
            };
            let m = concurrent(runner::run_together(&streams, &display)?);
            let both = Spec {
                rw: Rw::Rw,
                mix_read_pct: 50,
                threads: read.threads + write.threads,
                limit: match read.limit {
                    Limit::Data(d) => Limit::Data(2 * d),
                    t => t,
                },
                ..read.clone()
            };
            Ok(watch.stop(both, 0, 2 * half, m))
        }
        Work::Files { spec, .. } => {
            let mut parts = Vec::with_capacity(files.len());
            for f in files {
                if crate::interrupt::requested().is_some() {
                    break;
                }
                parts.push(region(spec, f, 0, f.range_bytes, prefix, progress)?);
            }
            let total: u64 = files.iter().map(|f| f.range_bytes).sum();
            Ok(Ran {
                spec: spec.clone(),
                start: 0,
                len: total,
                path: Some(format!(
                    "{} and {} more files",
                    files[0].path.display(),
                    files.len() - 1
                )),
                m: sequential(parts),
                // Several files in turn: their devices are the target's, watched per file.
                devices: Vec::new(),
                others: None,
                kernel_threads: Vec::new(),
                streams: Vec::new(),
            })
        }
    }
}

fn region(
    spec: &Spec,
    target: &Target,
    start: u64,
    len: u64,
    prefix: &str,
    progress: bool,
) -> Result<Measured> {
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix} ")
    };
    let display = Display {
        progress,
        prefix,
        stop_when: None,
        device: target.device.clone(),
    };
    measure(spec, target, start, len, &display, None)
}

/// One workload on `[start, start + len)` of the target's range.
fn measure(
    spec: &Spec,
    target: &Target,
    start: u64,
    len: u64,
    display: &Display,
    verify: Option<&Verifier>,
) -> Result<Measured> {
    let open = || target.open_all(spec.writes(), spec.direct, spec.odsync);
    runner::run(spec, &open, target.offset + start, len, display, verify)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Layout, Op};
    use crate::workload::BlockSize;
    use iogauge_engine::UringOptions;

    fn env(engine: EngineKind) -> Env {
        Env {
            engine,
            direct: true,
            seed: 1,
            uring: UringOptions::default(),
            submit_batch: 2,
            complete_batch: 1,
            ram: 8 << 30,
            ramp: Duration::ZERO,
            interval: Duration::from_secs(1),
            distribution: Default::default(),
            file_service: Default::default(),
            invalidate: false,
            interval_hists: false,
            rate: None,
            verify: None,
            verify_fatal: false,
        }
    }

    fn cell(op: Op, bs: u64) -> Cell {
        Cell {
            group: 0,
            layout: Layout::Plain,
            op,
            read_pct: if op.writes(100) { 0 } else { 100 },
            bs: BlockSize::known(bs),
            threads: 1,
            iodepth: 1,
            sync: None,
            odsync: false,
            direct: None,
            length: Length::Time(Duration::from_secs(2)),
            range: None,
            files: 1,
            origin: None,
            shape: Default::default(),
            together: None,
            target: None,
            rate: None,
            think: None,
            prio: None,
            flow: None,
            placement: None,
            engine: None,
            distribution: None,
            beside: Default::default(),
            no_readback: false,
            tolerate: None,
            atomic: false,
        }
    }

    #[test]
    fn a_cell_becomes_its_workload() {
        let c = Cell {
            threads: 4,
            iodepth: 8,
            ..cell(Op::Randread, 8192)
        };
        let Ok(Work::One { spec, start, len }) = of(&c, &env(EngineKind::IoUring), 1 << 30, 512)
        else {
            panic!("one workload")
        };
        assert_eq!((start, len), (0, 1 << 30));
        assert_eq!(
            (spec.rw, spec.bs.bytes(), spec.threads, spec.iodepth),
            (Rw::Randread, 8192, 4, 8)
        );
        assert_eq!(spec.limit, Limit::Time(Duration::from_secs(2)));
        assert!(spec.direct && !spec.writes());
    }

    #[test]
    fn psync_keeps_the_outstanding_ios_with_threads() {
        let c = Cell {
            threads: 2,
            iodepth: 16,
            ..cell(Op::Randread, 8192)
        };
        let Ok(Work::One { spec, .. }) = of(&c, &env(EngineKind::Psync), 1 << 30, 512) else {
            panic!()
        };
        assert_eq!((spec.threads, spec.iodepth), (32, 1));
    }

    #[test]
    fn a_block_the_target_refuses_is_a_reason_not_an_error() {
        let c = cell(Op::Randread, 512);
        let e = of(&c, &env(EngineKind::IoUring), 1 << 30, 4096).unwrap_err();
        assert!(e.contains("logical block size"), "{e}");
        // Buffered IO takes any multiple of 512.
        let buffered = Env {
            direct: false,
            ..env(EngineKind::IoUring)
        };
        assert!(of(&c, &buffered, 1 << 30, 4096).is_ok());
    }

    #[test]
    fn a_range_and_one_pass_of_data() {
        let c = Cell {
            range: Some(16 << 10),
            length: Length::Data(crate::suite::Amount::Range),
            ..cell(Op::Write, 4096)
        };
        let Ok(Work::One { spec, len, .. }) = of(&c, &env(EngineKind::IoUring), 1 << 30, 512)
        else {
            panic!()
        };
        assert_eq!(len, 16 << 10);
        assert_eq!(spec.limit, Limit::Data(16 << 10));
    }

    #[test]
    fn copy_reads_one_half_while_writing_the_other() {
        let c = Cell {
            length: Length::Data(crate::suite::Amount::Range),
            ..cell(Op::Copy, 1 << 20)
        };
        let range = (64 << 20) + 4096;
        let Ok(Work::Copy { read, write, half }) = of(&c, &env(EngineKind::IoUring), range, 512)
        else {
            panic!()
        };
        assert_eq!(half, 32 << 20, "whole blocks, equal halves");
        assert_eq!((read.rw, write.rw), (Rw::Read, Rw::Write));
        // One pass over the range in all: each stream moves one half.
        assert_eq!(read.limit, Limit::Data(32 << 20));
        assert_eq!(write.limit, Limit::Data(32 << 20));
    }

    #[test]
    fn files_share_the_time_and_the_space() {
        let c = Cell {
            files: 4,
            ..cell(Op::Randread, 8192)
        };
        let Ok(Work::Files { spec, files }) = of(&c, &env(EngineKind::IoUring), 1 << 30, 512)
        else {
            panic!()
        };
        assert_eq!(files, 4);
        assert_eq!(spec.limit, Limit::Time(Duration::from_millis(500)));
        assert_eq!(file_size(1 << 30, 4), 1 << 28);
        assert_eq!(file_size(10_000, 2) % 4096, 0);
    }

    #[test]
    fn buffers_beyond_a_quarter_of_ram_skip_the_cell() {
        let c = Cell {
            threads: 40,
            ..cell(Op::Randread, 64 << 20)
        };
        let small = Env {
            ram: 4 << 30,
            ..env(EngineKind::IoUring)
        };
        let e = of(&c, &small, 1 << 40, 512).unwrap_err();
        assert!(e.contains("quarter of RAM"), "{e}");
    }
}
