//! What the user asked for, checked and resolved into one [`Plan`] before anything is touched:
//! the target and what iogauge may do to it, the cells to run, how often, and where the results
//! go. Every command that measures builds a plan here and hands it to `exec`; `run` is a suite
//! of one cell, so a workload typed as flags and a workload written in a suite file go down the
//! same path and obey the same rules (as ripgrep turns low-level flags into high-level
//! arguments once, and fio checks its options in one `fixup_options`).
//!
//! Checks that need only what was typed are made here; checks that need the target (its size,
//! its logical block) are made by `exec` right after the target is looked at and before a byte
//! is written.

use crate::cli::{
    FioArgs, OutputArgs, OutputFormat, RepeatArgs, RunArgs, SuiteArgs, SyncMode, TargetArgs,
};
use crate::error::usage;
use crate::fio::{self, Engine, Job};
use crate::suite::cells::{self, Cell, Overrides};
use crate::suite::{self as suites, Amount, Group, Layout, Length, Op, Suite};
use crate::units;
use crate::workload::{buffers_over_share, BlockSize, Rw, SyncKind, MAX_IODEPTH, MAX_THREADS};
use anyhow::Result;
use iogauge_engine::{EngineKind, UringOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub mod axes;
mod fio_files;
mod fio_jobs;
mod parts;
mod probe;
mod rank;
mod sizes;
mod storage;
mod streams;
mod suite;
mod sweep;
#[cfg(test)]
mod tests;

pub use fio_jobs::from_fio;
use parts::{env, target, EngineChoice, Place};
pub use probe::from_probe_cache;
pub use rank::{from_run_rank, launch, Launch};
pub(crate) use sizes::check_bs;
use sizes::{direct_block_sizes, typed};
pub use storage::storage_cells;
pub use suite::{from_suite, from_suite_with};
pub use sweep::{built, from_sweep};

/// Samples of a suite's time series: one a second, as `--until-stable` reads them.
pub const SUITE_INTERVAL: Duration = Duration::from_secs(1);
/// A run without --time or --data runs this long (bm-flash's 10 s).
pub const DEFAULT_RUN_TIME: Duration = Duration::from_secs(10);

/// Where a run's document goes and how it is said (--json, --label, --no-store, --dry-run,
/// --baseline, --db).
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// stdout is for a machine: a JSON document, no progress, every message on stderr.
    pub json: bool,
    /// That document is fio's JSON (`--format fio-json` without `--output`), not iogauge's.
    pub fio_json: bool,
    pub label: Option<String>,
    pub no_store: bool,
    pub dry_run: bool,
    pub baseline: bool,
    /// The results database named (else the XDG default).
    pub db: Option<PathBuf>,
}

impl Output {
    pub fn of(o: &OutputArgs) -> Output {
        let fio_json = o.output.is_none() && o.format() == Some(OutputFormat::FioJson);
        Output {
            json: o.json || fio_json,
            fio_json,
            label: o.label.clone(),
            no_store: o.no_store,
            dry_run: o.dry_run,
            baseline: o.baseline,
            db: o.db.db.clone(),
        }
    }
}

/// The format of `--output FILE` and of `export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
    Text,
    FioJson,
}

impl From<OutputFormat> for Format {
    fn from(f: OutputFormat) -> Format {
        match f {
            OutputFormat::Json => Format::Json,
            OutputFormat::Csv => Format::Csv,
            OutputFormat::Text => Format::Text,
            OutputFormat::FioJson => Format::FioJson,
        }
    }
}

impl From<crate::cli::ExportFormat> for Format {
    fn from(f: crate::cli::ExportFormat) -> Format {
        match f {
            crate::cli::ExportFormat::Json => Format::Json,
            crate::cli::ExportFormat::Csv => Format::Csv,
            crate::cli::ExportFormat::FioJson => Format::FioJson,
        }
    }
}

/// Everything one invocation will do.
#[derive(Clone, Debug)]
pub struct Plan {
    pub kind: Kind,
    /// The suite the cells came from; `run` makes a suite of one group.
    pub suite: Suite,
    pub cells: Vec<Cell>,
    pub env: Env,
    pub target: TargetPlan,
    pub repeat: Repeat,
    /// When a timed cell may stop before its time is up.
    pub until: Until,
    /// Write the range twice in 128 KiB sequential writes before measuring.
    pub precondition: bool,
    /// `--max-rounds`, for suites that run in rounds.
    pub max_rounds: Option<u32>,
    pub params: BTreeMap<String, String>,
    pub output: Output,
    /// `--output FILE` and its format, checked before anything runs.
    pub file: Option<(PathBuf, Format)>,
    /// Notes decided while planning (e.g. how psync keeps the in-flight IOs).
    pub notes: Vec<String>,
    /// `probe cache`: fit a cache size to the probe cells' latencies at the end.
    pub probe: bool,
    /// `--latency-target`: search the highest rate that keeps it.
    pub latency_target: Option<crate::workload::LatencyTarget>,
}

/// When a timed cell may stop before its time is up; the time is then the most it runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Until {
    /// At its time or data, as planned.
    #[default]
    Limit,
    /// `--until-stable`: once its IOPS are known well enough.
    Stable,
    /// `--until-change`: once its rate moved to another level and held there.
    Change,
}

/// How the results are presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `iogauge run`: one workload, its summary.
    Run,
    /// `iogauge suite`: the study's tables.
    Suite,
}

/// What every cell of a plan shares, from the command line.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    pub uring: UringOptions,
    /// `--submit-batch`.
    pub submit_batch: u32,
    /// `--complete-batch`.
    pub complete_batch: u32,
    /// Total RAM in bytes, 0 when unknown.
    pub ram: u64,
    pub ramp: Duration,
    /// Length of a sample of the time series.
    pub interval: Duration,
    /// Where random IOs land (`--distribution`).
    pub distribution: crate::workload::Distribution,
    /// `--rate`/`--rate-bw`: IOs issued on a schedule.
    pub rate: Option<Rate>,
    /// `--verify`: the share of written blocks the pass after each cell reads back.
    pub verify: Option<f64>,
    /// With verify, a cell stops at its first block that comes back wrong (fio's
    /// verify_fatal), and so does the pass after it.
    pub verify_fatal: bool,
    /// Which file each IO goes to when the target is several files (fio's
    /// `file_service_type`).
    pub file_service: crate::workload::FileService,
    /// fio's `invalidate=1` (its default): a buffered cell starts with the target's pages
    /// dropped from the page cache, so it does not measure what an earlier cell cached.
    pub invalidate: bool,
    /// Each interval's histogram kept with the result: a rank of a run under MPI, whose
    /// intervals rank 0 merges into the cluster's percentiles over time.
    pub interval_hists: bool,
}

pub use crate::workload::Rate;

/// The target as asked for; `target::resolve` looks at it without writing.
#[derive(Clone, Debug)]
pub struct TargetPlan {
    pub path: Option<PathBuf>,
    /// `--size`: the range used of an existing target, or the size of a created file.
    pub size: Option<u64>,
    /// Size of a file iogauge creates when --size is not given.
    pub created_size: u64,
    /// `--offset`: where the range starts.
    pub offset: u64,
    pub keep: bool,
    pub allow_overwrite: bool,
    /// Test files to create, each of `size` (fio's `nrfiles`); 1 but for fio jobs.
    pub files: u32,
    /// Under MPI, "HOST.RANK", carried by the names of created test files (see
    /// `target::Request::name_tag`).
    pub name_tag: Option<String>,
    /// Targets of their own for streams (`--stream 'wal: … --target PATH'`), in the order
    /// typed; a cell's `target` indexes this. Each passes the same gate as `path`.
    pub streams: Vec<StreamTarget>,
}

/// A stream's own target: its path, and its size when it is not the run's (a fio job's file).
#[derive(Clone, Debug)]
pub struct StreamTarget {
    pub path: PathBuf,
    pub size: Option<u64>,
}

impl StreamTarget {
    /// Targets of the run's size.
    pub fn sized_as_run(paths: Vec<PathBuf>) -> Vec<StreamTarget> {
        paths
            .into_iter()
            .map(|path| StreamTarget { path, size: None })
            .collect()
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Repeat {
    pub n: u32,
    pub drop_caches: bool,
}

impl Plan {
    /// Whether any cell writes (the target then needs consent).
    pub fn writes(&self) -> bool {
        self.precondition || self.cells.iter().any(Cell::writes)
    }
}

/// `iogauge run`: a suite of one cell, from the workload flags.
pub fn from_run(args: &RunArgs) -> Result<Plan> {
    of_run(args, false)
}

/// `iogauge run` as it is planned alone or (`ranked`) as one rank of a run under MPI.
fn of_run(args: &RunArgs, ranked: bool) -> Result<Plan> {
    let w = &args.workload;
    if w.stonewall.is_some() {
        if !ranked {
            return Err(usage(
                "--stonewall first stops the ranks of a run under MPI together; without mpirun there is one rank: drop it",
            ));
        }
        if w.data.is_none() {
            return Err(usage(
                "--stonewall first stops every rank when the first has moved its --data; give --data SIZE (with --time all ranks stop together anyway)",
            ));
        }
    }
    let streams = streams::of(args)?;
    if !streams.is_empty() {
        streams::refuse_with(args)?;
        if ranked {
            return Err(usage(
                "--stream under MPI: each rank runs one workload at a time; run the streams on one host",
            ));
        }
    }
    if let Some(d) = until_change(&args.repeat)? {
        if w.time.is_some() || w.data.is_some() {
            return Err(usage(format!(
                "--until-change {} is already how long the run may take; drop --time/--data",
                units::duration(d)
            )));
        }
        if w.latency_target.is_some() {
            return Err(usage(
                "--until-change does not go with --latency-target, whose search runs the workload at several rates; run them apart",
            ));
        }
    }
    if w.interval < Duration::from_millis(100) {
        return Err(usage(
            "--interval is shorter than 100ms; give e.g. --interval 1s",
        ));
    }
    let mut env = env(EngineChoice::of(&args.target), w.seed, w.ramp, w.interval);
    let workloads: Vec<(Option<String>, &crate::cli::WorkloadArgs)> = match streams.is_empty() {
        true => vec![(None, w)],
        false => streams
            .iter()
            .map(|s| (Some(s.name.clone()), &s.workload))
            .collect(),
    };
    let together = (workloads.len() > 1).then_some(0);
    let mut groups = Vec::with_capacity(workloads.len());
    for (name, one) in workloads {
        let at = |e: anyhow::Error| match &name {
            Some(n) => usage(format!("stream {n}: {e}")),
            None => e,
        };
        let mut g = workload(one, &env, args.repeat.until_change).map_err(at)?;
        (g.origin, g.together) = (name.clone(), together);
        groups.push(g);
    }
    // One workload paces the run; each stream paces itself.
    if streams.is_empty() {
        env.rate = groups[0].rate.take();
    }
    if w.distribution != crate::workload::Distribution::Uniform
        && !groups
            .iter()
            .any(|g| g.ops.iter().any(|o| o.rw().is_some_and(Rw::random)))
    {
        return Err(usage(format!(
            "--distribution {} shapes random offsets; --rw {} is sequential: use randread, randwrite or randrw",
            w.distribution,
            Rw::from(w.rw).name()
        )));
    }
    env.distribution = w.distribution;
    let suite = Suite {
        name: "run".into(),
        description: match groups.len() {
            1 => "one workload".into(),
            n => format!("{n} streams at the same time"),
        },
        size: None,
        groups,
        rounds: None,
    };
    let mut cells = cells::expand(&suite, &Overrides::default()).map_err(usage)?;
    let own_targets = streams::targets(&streams, args, &mut cells)?;
    checked(Plan {
        kind: Kind::Run,
        cells,
        suite,
        env,
        target: TargetPlan {
            streams: StreamTarget::sized_as_run(own_targets),
            ..target(Place::of(&args.target), None)?
        },
        repeat: repeat(&args.repeat),
        until: match args.repeat.until_change {
            Some(_) => Until::Change,
            None => Until::Limit,
        },
        precondition: args.repeat.precondition,
        max_rounds: None,
        params: params(&args.repeat.param)?,
        file: output_file(&args.output)?,
        output: Output::of(&args.output),
        notes: Vec::new(),
        probe: false,
        latency_target: w.latency_target,
    })
}

/// One workload typed as flags (the run's, or a stream's) as a group of one cell, its pace in
/// the group; `env` is the run's engine and memory.
fn workload(
    w: &crate::cli::WorkloadArgs,
    env: &Env,
    until_change: Option<Duration>,
) -> Result<Group> {
    let rw = Rw::from(w.rw);
    let bs = check_bs("--bs", w.bs, env.direct)?;
    check_count("--threads", w.threads, MAX_THREADS)?;
    check_count("--iodepth", w.iodepth, MAX_IODEPTH)?;
    // An option the workload ignores is refused, not silently dropped.
    let mix = match (w.mix, rw) {
        (Some(m), Rw::Rw | Rw::Randrw) => m,
        (Some(m), rw) => {
            return Err(usage(format!(
                "--mix {m} does nothing with --rw {}: it sets the reads of a mix; use --rw randrw (or rw) --mix {m}",
                rw.name()
            )))
        }
        (None, _) => 50,
    };
    let sync = match (w.fsync, w.fdatasync) {
        (Some(0), _) | (_, Some(0)) => {
            return Err(usage(
                "--fsync/--fdatasync 0: give how many writes go between syncs, e.g. --fsync 1",
            ))
        }
        (Some(n), _) => Some((SyncKind::Fsync, n)),
        (_, Some(n)) => Some((SyncKind::Fdatasync, n)),
        _ => None,
    };
    if sync.is_some() && !rw.writes(mix) {
        return Err(usage(format!(
            "--fsync/--fdatasync with --rw {} does nothing: syncs follow writes; use --rw write or randwrite",
            rw.name()
        )));
    }
    let length = match (until_change.or(w.time), w.data) {
        (_, Some(0)) => return Err(usage("--data 0: give an amount of data, e.g. --data 4GiB")),
        (_, Some(d)) if d < bs.bytes() => {
            return Err(usage(format!(
                "--data {} is less than one block (--bs {}); give more data",
                typed("--data", units::iec(d)),
                typed("--bs", units::bs_label(bs.bytes()))
            )))
        }
        (_, Some(d)) => Length::Data(Amount::Bytes(d)),
        (Some(t), None) if t.is_zero() => {
            return Err(usage("--time 0: give a duration, e.g. --time 10s"))
        }
        (Some(t), None) if crate::workload::too_short(t).is_some() => {
            return Err(usage(format!(
                "--time {} {}",
                units::duration(t),
                crate::workload::too_short(t).unwrap_or_default()
            )))
        }
        (Some(t), None) => Length::Time(t),
        (None, None) => Length::Time(DEFAULT_RUN_TIME),
    };
    match env.complete_batch {
        0 | 1 => {}
        n if env.engine == EngineKind::Psync => {
            return Err(usage(format!(
                "--complete-batch {n} groups io_uring completions; psync has none to group: drop it, or use --engine io_uring"
            )))
        }
        n if n > w.iodepth => {
            return Err(usage(format!(
                "--complete-batch {n} waits for more IOs than --iodepth {} keeps in flight; give at most {}",
                w.iodepth, w.iodepth
            )))
        }
        _ => {}
    }
    let rate =
        match (w.rate, w.rate_bw) {
            (Some(r), _) if !(r > 0.0 && r.is_finite()) => {
                return Err(usage(format!(
                    "--rate {r}: give a positive number of IOs per second, e.g. --rate 5000"
                )))
            }
            (Some(r), _) => Some(Rate {
                iops: r,
                per_thread: w.rate_per_thread,
                poisson: w.poisson,
            }),
            (None, Some(0)) => return Err(usage("--rate-bw 0: give e.g. --rate-bw 100MiB")),
            (None, Some(b)) => Some(Rate {
                iops: b as f64 / bs.bytes() as f64,
                per_thread: w.rate_per_thread,
                poisson: w.poisson,
            }),
            (None, None) if w.rate_per_thread => return Err(usage(
                "--rate-per-thread needs --rate or --rate-bw, e.g. --rate 1000 --rate-per-thread",
            )),
            (None, None) if w.poisson => return Err(usage(
                "--poisson spaces the IOs of a schedule, and there is none: give --rate or --rate-bw, e.g. --rate 1000 --poisson",
            )),
            (None, None) => None,
        };
    // The rule `exec` applies to every cell, told here in the flags the user typed.
    let depth = if env.engine == EngineKind::Psync {
        1
    } else {
        w.iodepth
    };
    let threads = w.threads.saturating_mul(w.iodepth / depth);
    if let Some(buffers) = buffers_over_share(threads, depth, bs.bytes(), env.ram) {
        return Err(usage(format!(
            "the IO buffers would take {} ({} threads × {} in flight × {}), more than a quarter of RAM ({}); lower --threads, --iodepth or --bs",
            units::iec(buffers),
            w.threads,
            w.iodepth,
            units::bs_label(bs.bytes()),
            units::iec(env.ram)
        )));
    }
    Ok(Group {
        title: rw.name().into(),
        layout: Layout::Plain,
        origin: None,
        ops: vec![Op::from(rw)],
        read_pct: vec![rw.read_pct(mix)],
        bs: vec![bs],
        threads: vec![w.threads],
        iodepth: vec![w.iodepth],
        sync,
        odsync: w.sync_mode == SyncMode::Odsync,
        direct: None,
        length,
        range: None,
        options: Vec::new(),
        shape: Default::default(),
        together: None,
        rate,
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
    })
}

/// What `--hipri` and `--verify` need of a plan, checked before anything is written. Whether
/// the target's device has poll queues is asked of the kernel once the target is looked at
/// (`target::check_poll_queues`).
fn checked(plan: Plan) -> Result<Plan> {
    if plan.env.uring.hipri && plan.env.engine != EngineKind::IoUring {
        return Err(usage(
            "--hipri is an io_uring mode (IORING_SETUP_IOPOLL); drop it or use --engine io_uring",
        ));
    }
    // The kernel polls only direct IO; a buffered read or write with --hipri fails at once.
    if plan.env.uring.hipri && !plan.env.direct {
        return Err(usage(
            "--hipri polls for direct IO only, and --buffered goes through the page cache; drop one of them",
        ));
    }
    direct_block_sizes(&plan)?;
    streams::together_alone(&plan)?;
    if plan.env.verify.is_none() {
        return Ok(plan);
    }
    if plan.target.files > 1 {
        return Err(usage(format!(
            "--verify tracks the blocks of one file, and this run spreads its IO over {} files; verify a run of one file",
            plan.target.files
        )));
    }
    if plan.suite.rounds.is_some() || plan.latency_target.is_some() {
        return Err(usage(
            "--verify checks cells that run once each; it does not go with SNIA rounds or --latency-target",
        ));
    }
    if let Some(c) = plan
        .cells
        .iter()
        .find(|c| c.writes() && !c.bs.bytes().is_multiple_of(iogauge_verify::SECTOR as u64))
    {
        return Err(usage(format!(
            "--verify stamps whole 4 KiB sectors, and {} writes {} blocks; use a block size that is a multiple of 4k",
            c.name(),
            units::bs_label(c.bs.bytes())
        )));
    }
    Ok(plan)
}

/// `--output FILE` with its format from `--format` or the file's extension; its directory must
/// exist, so the results of a long run are never lost to a typo at the end.
pub fn output_file(o: &OutputArgs) -> Result<Option<(PathBuf, Format)>> {
    if o.baseline && o.json {
        return Err(usage(
            "--baseline changes the summary people read; the JSON keeps the measured averages and both levels in the regime finding (before_iops, after_iops): drop one of them",
        ));
    }
    let Some(path) = &o.output else {
        return match (o.format(), o.json) {
            (None, _) => Ok(None),
            (Some(OutputFormat::FioJson), false) => Ok(None),
            (Some(OutputFormat::FioJson), true) => Err(usage(
                "--json prints iogauge's document and --format fio-json fio's on stdout: give one (or -o FILE for the other)",
            )),
            (Some(_), _) => Err(usage(
                "--format json|csv|text says --output's format: give -o FILE too (--json prints the document on stdout)",
            )),
        };
    };
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let format = match (o.format(), ext.as_deref()) {
        (Some(f), _) => Format::from(f),
        (None, Some("json")) => Format::Json,
        (None, Some("csv")) => Format::Csv,
        (None, Some("txt" | "text")) => Format::Text,
        (None, _) => {
            return Err(usage(format!(
                "--output {}: name a .json, .csv or .txt file, or say which with --format json|csv|text",
                path.display()
            )))
        }
    };
    writable_output(
        path,
        "give a file path on a file system (stdout has the same text without --output)",
    )?;
    Ok(Some((path.clone(), format)))
}

/// An `--output` file checked before anything runs: through the gate, in a directory that
/// exists and may be written, so what a long run measured is never lost to a typo at its end.
pub fn writable_output(path: &std::path::Path, fix: &str) -> Result<()> {
    crate::target::gate::output_file("--output", path, fix)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(usage(format!(
            "--output {}: the directory {} does not exist; create it first",
            path.display(),
            dir.display()
        )));
    }
    // Tried now, so a directory that cannot be written (permissions, a read-only file system)
    // is told before the run rather than after it: a file is made and removed beside it, the way
    // the output will be written (`files::replace`); nothing at the path is touched.
    if let Err(e) = crate::target::files::can_create_beside(path) {
        return Err(usage(format!(
            "--output {}: cannot be written ({e}); give a path in a directory you may write to",
            path.display()
        )));
    }
    Ok(())
}

/// `--until-change DURATION`, refused at zero (it would run nothing).
fn until_change(r: &RepeatArgs) -> Result<Option<Duration>> {
    match r.until_change {
        Some(d) if d.is_zero() => Err(usage(
            "--until-change 0 runs nothing; give the most the run may take, e.g. --until-change 30m",
        )),
        d => Ok(d),
    }
}

fn repeat(r: &RepeatArgs) -> Repeat {
    Repeat {
        n: r.repeat.unwrap_or(1).max(1),
        drop_caches: r.drop_caches,
    }
}

/// `--param KEY=VALUE` pairs.
pub fn params(raw: &[String]) -> Result<BTreeMap<String, String>> {
    raw.iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(usage(format!(
                "--param '{p}' is not KEY=VALUE; write e.g. --param disks=4"
            ))),
        })
        .collect()
}

fn check_count(flag: &str, v: u32, max: u32) -> Result<()> {
    if v == 0 {
        return Err(usage(format!("{flag} 0: it must be at least 1")));
    }
    if v > max {
        return Err(usage(format!(
            "{flag} {v} is more than {max}, which measures iogauge's scheduling rather than storage; use at most {max}"
        )));
    }
    Ok(())
}

/// `--files` creates its files next to iogauge's own test file, never inside a user's file.
fn check_files_target(t: &TargetArgs) -> Result<()> {
    match t.target.as_deref().is_some_and(crate::target::holds_data) {
        false => Ok(()),
        true => Err(usage(
            "--files N creates N test files of iogauge's own; give a directory as TARGET (or none for the current one)",
        )),
    }
}
