//! The command line, defined once: every option's name, unit, default and help live here, and
//! clap derives help, man pages and completions from it. Values are parsed into typed units
//! here; the checks that involve several options or the target are the plan builders' (`plan`,
//! `db::plan`), the last code that reads these types.

use crate::units;
use crate::workload::Rw;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// `--bandwidth-units`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BandwidthUnits {
    Iec,
    Si,
}

#[derive(Parser, Debug)]
#[command(
    name = "iogauge",
    version,
    about = "A storage benchmark workbench for database servers",
    long_about = "iogauge measures storage the way database people need it measured: direct IO by \
default, test files filled with incompressible data, and every number with its unit.\n\nSizes: \
4k = 4KiB = 4096 bytes (IEC). Bandwidth is MiB/s (IEC) unless --bandwidth-units si asks for \
MB/s (SI), everywhere: lines, tables, findings, charts."
)]
pub struct Cli {
    /// How bandwidth is written everywhere (lines, tables, findings, charts): iec is MiB/s
    /// (2^20 bytes a second), si is MB/s (10^6, as KDiskMark and disk makers write it); the
    /// stored JSON keeps bytes a second either way.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "iec",
        value_name = "iec|si"
    )]
    pub bandwidth_units: BandwidthUnits,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one workload against a file, directory or block device.
    Run(RunArgs),
    /// Run a named study (matrix, seq, fsync, seeks, mixes, quick, full) or a suite file.
    Suite(SuiteArgs),
    /// Run fio job files: each job becomes a cell, with what the job really measures told
    /// first; an option iogauge cannot honour is refused with its line (docs/fio.md).
    Fio(FioArgs),
    /// List the runs in the results database.
    List(ListArgs),
    /// Show one run: its results, system and findings.
    Show(ShowArgs),
    /// Compare runs workload by workload, with significance tests.
    Compare(CompareArgs),
    /// Write an HTML report with the studies' graphs.
    Report(ReportArgs),
    /// Probe the storage stack: `probe cache` finds the caches in it.
    #[command(subcommand)]
    Probe(ProbeCommand),
    /// Export a run as JSON or CSV, or runs as a bundle for another results database.
    Export(ExportArgs),
    /// Import runs from bundles (`export --bundle`) into the results database.
    Import(ImportArgs),
    /// Delete a run from the results database.
    Delete(DeleteArgs),
    /// Read back a target kept from a `--verify` run (`--keep` for a created file) and name
    /// every block that is not what that run wrote.
    Verify(VerifyArgs),
    /// Run a suite once per setting of device queue knobs (scheduler, read_ahead_kb, …) or per
    /// file system on a scratch device, one change at a time, restore everything, and say which
    /// setting won and whether the win is real.
    Sweep(SweepArgs),
    /// Print shell completions, e.g. `iogauge completions bash > /etc/bash_completion.d/iogauge`.
    Completions(CompletionsArgs),
    /// Print a man page (roff): `iogauge man > /usr/local/share/man/man1/iogauge.1`, one
    /// subcommand's with every option (`iogauge man db pgbench`), or all of them into a
    /// directory (`iogauge man --dir /usr/local/share/man/man1`).
    Man(ManArgs),
    /// Run a database with its data on the target: `db pgbench` runs PostgreSQL's pgbench,
    /// `db sysbench` sysbench's OLTP, `db tpcc` a TPC-C-derived load, on MariaDB (or
    /// PostgreSQL).
    #[command(subcommand)]
    Db(DbCommand),
    /// Does fsync survive a power cut? diskchecker.pl's test: `listen` on a second machine,
    /// `write` on the one under test, cut its power, reboot, `verify`.
    FsyncCheck(FsyncCheckArgs),
    /// Remove what killed iogauge runs left: test files, mounted scratch file systems and their
    /// signatures, database servers, clusters and cgroups (device knobs are put back by any
    /// command). Only what iogauge itself wrote down as made is touched.
    Clean(CleanArgs),
}

#[derive(Subcommand, Debug)]
pub enum ProbeCommand {
    /// 4 KiB random reads over growing working sets (16 MiB, doubling, up to the target) and
    /// the knee where they get slower: the size of a cache in the stack.
    Cache(ProbeCacheArgs),
}

#[derive(Args, Debug, Clone)]
pub struct ProbeCacheArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Random reads measured per working set (after one sequential pass that warms it).
    #[arg(long, value_name = "N", default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(100..=100_000_000))]
    pub ios: u64,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// A suite's name: any text (with --file it is the target), offered to shell completion and
/// help as the names iogauge knows.
#[derive(Clone)]
struct SuiteName;

impl clap::builder::TypedValueParser for SuiteName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = crate::suite::BUILTIN
            .iter()
            .map(|(n, _)| *n)
            .chain(["full"]);
        Some(Box::new(names.map(clap::builder::PossibleValue::new)))
    }
}

#[derive(Args, Debug, Clone)]
pub struct ManArgs {
    /// The subcommand whose page to print, e.g. `run` or `db pgbench` [default: iogauge's own]
    #[arg(value_name = "SUBCOMMAND")]
    pub command: Vec<String>,

    /// Write every page (iogauge.1, iogauge-run.1, …) into DIR instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Run several workloads at the same time on the target, each `NAME: FLAGS` with its own
    /// workload flags (--rw, --bs, --threads, --iodepth, --mix, --fsync/--fdatasync,
    /// --sync-mode, --rate/--rate-bw/--rate-per-thread, --time/--data), e.g. --stream 'wal:
    /// --rw write --bs 8k --fdatasync 1' --stream 'data: --rw randread --bs 8k --threads 8'.
    /// Each stream is reported alone and their sum as one more; --time/--data before the
    /// streams is every stream's that gives none.
    #[arg(long, value_name = "NAME: FLAGS", allow_hyphen_values = true)]
    pub stream: Vec<String>,
    #[command(flatten)]
    pub repeat: RepeatArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct SuiteArgs {
    /// Suite name: quick, matrix, seq, fsync, seeks, mixes, commit, full, or the SNIA PTS tests
    /// snia-iops, snia-latency and snia-throughput.
    #[arg(value_name = "NAME", required_unless_present = "file", value_parser = SuiteName)]
    pub name: Option<String>,

    /// Run the suite defined in this TOML file instead of a named one (docs/suite-format.md);
    /// the first argument is then the target: `iogauge suite --file my.toml /data`.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,

    #[command(flatten)]
    pub target: TargetArgs,

    /// Time per cell (matrix, mixes; the upper bound with --until-stable; per cell and round
    /// in the SNIA suites, where the specification uses 1m).
    #[arg(long, alias = "round-cell-time", value_name = "DURATION", allow_hyphen_values = true, value_parser = units::parse_duration)]
    pub cell_time: Option<Duration>,

    /// Run each cell this long first and leave it out of the cell's results (as `run --ramp`).
    #[arg(long, value_name = "DURATION", default_value = "0s", allow_hyphen_values = true, value_parser = units::parse_duration)]
    pub ramp: Duration,

    /// Run each cell until the 95% confidence interval of its per-second IOPS is within ±3%
    /// (at least 1 s, at most --cell-time).
    #[arg(long)]
    pub until_stable: bool,

    /// Block sizes, e.g. 4k,64k,1m (matrix, seq).
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,

    /// Thread counts, e.g. 1,10,40 (matrix).
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,

    /// Read percentages, e.g. 100,90,80,50 (mixes).
    #[arg(long, value_name = "LIST")]
    pub read_pct: Option<String>,

    /// Outstanding IOs, e.g. 1,2,4,8,16,32,64 (mixes).
    #[arg(long, value_name = "LIST")]
    pub qd: Option<String>,

    /// Number of files for the seeks suite.
    #[arg(long, value_name = "N")]
    pub files: Option<u32>,

    /// Seed of the random offsets and data.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// Most rounds of a suite that runs until steady state (snia-iops; the specification's 25).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_rounds: Option<u32>,

    /// Run the suite's stream NAME (each of its cells, alone or beside others) on a target
    /// of its own, e.g. --stream-target wal=/dev/nvme1n1 (checked like the suite's target).
    #[arg(long, value_name = "NAME=PATH")]
    pub stream_target: Vec<String>,

    #[command(flatten)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct FioArgs {
    /// fio job files; their jobs run one after another. The target is each job's filename
    /// or directory (a test file of iogauge's own in the current directory when neither is
    /// given).
    #[arg(value_name = "JOB.fio", required_unless_present = "options")]
    pub jobs: Vec<PathBuf>,

    /// Instead of job files, a job as fio's command line writes it, after `--`:
    /// `iogauge fio --dry-run -- --name=seq --rw=read --bs=1m …` (options before the first
    /// --name are every job's).
    #[arg(last = true, value_name = "FIO OPTIONS")]
    pub options: Vec<String>,

    /// Allow writes to an existing file or block device a job names (its contents are
    /// destroyed).
    #[arg(long)]
    pub allow_overwrite: bool,

    /// Keep a test file iogauge created instead of removing it after the run.
    #[arg(long)]
    pub keep: bool,

    #[command(flatten)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Repeats, for statistics.
#[derive(Args, Debug, Clone)]
pub struct RepeatArgs {
    /// Run each workload or suite cell N times and report mean, spread, 95% CI and outliers
    /// [default: 1; 3 for each setting of a sweep].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,

    /// Before measuring, write the whole range twice in 128 KiB sequential writes (SNIA PTS's
    /// workload-independent preconditioning), so a fresh SSD is measured as a used one.
    #[arg(long)]
    pub precondition: bool,

    /// Drop the page cache between repeats (needs root; says so when it cannot).
    #[arg(long)]
    pub drop_caches: bool,

    /// A run parameter for scaling comparisons, e.g. --param disks=4 (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub param: Vec<String>,

    /// Run each workload or cell until its rate moves to another level and holds there (a
    /// burst bucket emptying, an SLC cache filling), for at most DURATION: the way to measure
    /// the bucket's or the cache's size. Instead of --time (run) or --cell-time (suite).
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration)]
    pub until_change: Option<Duration>,
}

/// Where the results database is.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// Results database [default: $XDG_DATA_HOME/iogauge/results.db or
    /// ~/.local/share/iogauge/results.db]
    #[arg(long, value_name = "PATH", env = "IOGAUGE_DB")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database file named on the command line (or by IOGAUGE_DB), if any.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.db.as_deref()
    }
}

#[derive(Args, Debug, Clone)]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Show at most this many runs, newest first.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: u32,
}

#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// A run id, a label (its newest run), or `last`.
    #[arg(value_name = "RUN", default_value = "last")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// Print the run's JSON document.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Runs to compare (ids, labels, `last`, or `sweep:ID` for every run of a sweep); the first
    /// is the baseline.
    #[arg(value_name = "RUN", num_args = 1.., required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Relative change below which a difference is called noise.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.02)]
    pub noise: f64,
    /// Where a result's rate fell to another level and stayed (a `regime` finding: burst
    /// credits, an SLC cache), compare its later level — what the device sustains — instead of
    /// the average over both.
    #[arg(long)]
    pub baseline: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Runs to report on (ids, labels, `last`, or `sweep:ID`).
    #[arg(
        value_name = "RUN",
        required_unless_present_any = ["from_json", "list_thresholds"]
    )]
    pub runs: Vec<String>,
    /// Also report on the run document in this file, as `run --json` or `export` wrote it
    /// (repeatable).
    #[arg(long, value_name = "FILE")]
    pub from_json: Vec<PathBuf>,
    /// Recompute the findings with these thresholds: a TOML file naming the ones it changes,
    /// e.g. `gap_frac = 0.3`; an unknown name is refused (the names: --list-thresholds).
    #[arg(long, value_name = "FILE")]
    pub thresholds: Option<PathBuf>,
    /// Print every threshold the findings use, with its default and meaning: the names a
    /// --thresholds file may set. Writes no report.
    // Not `exclusive`: IOGAUGE_DB in the environment counts as an argument given.
    #[arg(long, conflicts_with_all = ["runs", "from_json", "thresholds", "charts"])]
    pub list_thresholds: bool,
    #[command(flatten)]
    pub db: DbArgs,
    /// Output HTML file.
    #[arg(short, long, value_name = "PATH", default_value = "report.html")]
    pub output: PathBuf,
    /// Also write each chart as its own SVG file into this directory.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// Run ids, labels (each its newest run), `last`, or `sweep:ID` for every run of a sweep:
    /// JSON gives one document (several: an array), CSV one header over all their rows.
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// Write the runs, whole (results, histograms, timelines, system, findings), to FILE as a
    /// bundle that `iogauge import` reads into another results database.
    #[arg(long, value_name = "FILE", conflicts_with = "format")]
    pub bundle: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Bundles written by `iogauge export RUN… --bundle FILE`.
    #[arg(value_name = "FILE", required = true)]
    pub bundles: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Json,
    Csv,
    /// The human summary.
    Text,
    /// fio's JSON (`--output-format=json`), the part fio-plot, PerfKitBenchmarker and kubestr
    /// read (docs/fio.md).
    FioJson,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Json,
    Csv,
    /// fio's JSON, as `--format fio-json` writes it.
    FioJson,
}

#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,

    /// A queue setting and its values, e.g. scheduler=none,mq-deadline,bfq or
    /// read_ahead_kb=128,4096: any attribute under /sys/block/DEV/queue, set on every device of
    /// the target's stack that has it, or on one with DEV:NAME=… (repeatable; one knob changes
    /// at a time, the others keep their original value).
    #[arg(long, value_name = "[DEV:]NAME=V1,V2")]
    pub knob: Vec<String>,

    /// Every combination of the knobs' values instead of one knob at a time.
    #[arg(long)]
    pub grid: bool,

    #[command(flatten)]
    pub build: BuildArgs,
}

/// What a sweep, or a database load, builds on blank devices to measure in: file systems on
/// one, or arrays from several, optionally degraded or rebuilding (the same options and rules
/// for both).
#[derive(Args, Debug, Clone, Default)]
pub struct BuildArgs {
    /// Levels of use to fill the file system holding the target to, e.g. 40%,80% (used/size
    /// as df shows it, 1–95%): once what is measured is in place (a suite's test file, a
    /// database's load), a file of iogauge's own beside it is written with incompressible
    /// data up to each level, the workload measured, the file removed. A sweep measures the
    /// file system as found first and again last.
    #[arg(long, value_name = "LEVEL[,LEVEL…]")]
    pub fill: Option<String>,

    /// Block devices with no signature at all: for --fs, one, on which each file system is
    /// made, mounted privately, measured and wiped again; for --layout, the array's members
    /// (DEV1,DEV2,…), left blank again after each array.
    #[arg(long, value_name = "DEV[,DEV…]")]
    pub scratch: Option<String>,

    /// Arrays to build from the --scratch devices and compare:
    /// md:raid0,raid1,raid10,raid10-far,raid10-offset,raid5,raid6 (mdadm), lvm:stripe (lvm2), btrfs:raid0,raid1,raid10,raid5,raid6,raid1c3 (mkfs.btrfs),
    /// or single; a plain single device is the baseline (repeatable).
    #[arg(long, value_name = "KIND:LEVEL[,LEVEL…]", requires = "scratch")]
    pub layout: Vec<String>,

    /// Stripe units (chunk sizes) to try for the layouts that take one, e.g. 64k,512k
    /// [default: the tool's own].
    #[arg(long, value_name = "SIZE[,SIZE…]", requires = "layout")]
    pub chunk: Option<String>,

    /// How many of the --scratch devices each array is built from, e.g. 2,4,8 (the first N
    /// named) [default: all of them].
    #[arg(long, value_name = "N[,N…]", requires = "layout")]
    pub members: Option<String>,

    /// Build redundant md arrays without their initial resync (mdadm --assume-clean) instead of
    /// waiting for it before measuring.
    #[arg(long, requires = "layout")]
    pub assume_clean: bool,

    /// Measure each redundant layout a second time with its last member missing (md raid1,
    /// raid10, raid5, raid6: failed and removed; btrfs raid1, raid10, raid5, raid6, raid1c3:
    /// mounted degraded without it): what the database sees while a disk is missing.
    #[arg(long, requires = "layout")]
    pub degraded: bool,

    /// Measure each redundant md layout again while it rebuilds: its last member failed,
    /// removed and added back as the measurement starts (after a database's load), md's
    /// recovery rate kept second by second beside the workload's, and the rebuild timed to
    /// its end.
    #[arg(long, requires = "layout")]
    pub rebuild: bool,

    /// md's recovery limits for --rebuild, per second, e.g. 10m,50m (sync_speed_min and
    /// sync_speed_max of the array iogauge built) [default: the system's].
    #[arg(long, value_name = "MIN,MAX", requires = "rebuild")]
    pub rebuild_speed: Option<String>,

    /// File systems to compare on --scratch, e.g. ext4,xfs,btrfs, or one with mkfs options:
    /// 'ext4:-b 1024' (repeatable).
    #[arg(long, value_name = "FS[:MKFS OPTIONS]", requires = "scratch")]
    pub fs: Vec<String>,

    /// Mount options for each --fs, e.g. noatime or noatime,nodiratime (repeatable: each is
    /// one setting).
    #[arg(long, value_name = "OPTIONS", requires = "fs")]
    pub mount_opts: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// The file or block device a `--verify` run wrote.
    pub target: PathBuf,
    /// Which run wrote it [default: the newest `--verify` run on this target].
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    #[command(flatten)]
    pub sample: VerifySample,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Args, Debug, Clone)]
pub struct DeleteArgs {
    /// A run id, a label (its newest run), or `last`.
    #[arg(value_name = "RUN")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Where IO goes, and what iogauge may do to it.
#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// File, directory or block device. A missing file is created, filled with random data and
    /// removed afterwards; a directory gets a test file of iogauge's own. Default: a test file
    /// in the current directory.
    pub target: Option<PathBuf>,

    /// Size of a created test file, or the range used of an existing file or device
    /// [default: 1GiB for created files, the whole file or device otherwise]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = units::parse_size)]
    pub size: Option<u64>,

    /// Start of the range used on the target, e.g. 1GiB (a multiple of 4KiB).
    #[arg(long, value_name = "SIZE", default_value = "0", allow_hyphen_values = true, value_parser = units::parse_size)]
    pub offset: u64,

    /// Keep a test file iogauge created instead of removing it after the run.
    #[arg(long)]
    pub keep: bool,

    /// Allow writes to an existing file or block device (its contents are destroyed).
    #[arg(long)]
    pub allow_overwrite: bool,

    /// Stamp every 4 KiB sector written with a checksummed header, check every read, and read
    /// back what each cell wrote after it: corrupt, misdirected, lost, torn and unwritten blocks
    /// are named, and the run fails (exit 1). Costs CPU per IO (docs/verify.md).
    #[arg(long)]
    pub verify: bool,

    #[command(flatten)]
    pub sample: VerifySample,

    /// IO engine.
    #[arg(long, value_enum, default_value_t = EngineArg::IoUring)]
    pub engine: EngineArg,

    /// Go through the page cache (O_DIRECT is the default, so the device is measured).
    #[arg(long, conflicts_with = "direct")]
    pub buffered: bool,

    /// Bypass the page cache with O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,

    /// io_uring: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    #[arg(long)]
    pub sqpoll: bool,

    /// io_uring: busy-poll for completions (IORING_SETUP_IOPOLL); needs a device with poll queues.
    #[arg(long)]
    pub hipri: bool,

    /// io_uring: do not register buffers and the file with the kernel.
    #[arg(long)]
    pub no_register: bool,

    /// io_uring: hand queued IOs to the kernel every N, rather than all the freed slots in one
    /// burst (1 = each as it is queued, as fio does; larger costs fewer system calls).
    #[arg(long, value_name = "N", default_value_t = iogauge_engine::DEFAULT_SUBMIT_BATCH,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub submit_batch: u32,

    /// io_uring: wait for N completions at a time (fio's iodepth_batch_complete_min): fewer
    /// wake-ups, more IOPS on a fast device, but an IO that completes early in a group is timed
    /// when the group is reaped — its latency may be late by up to N−1 completions. auto (at
    /// --iodepth 8 or more, for a time, without --rate or syncs): in 0.7 s before the
    /// measurement, warm up, then try 1, half and all in flight in turn, and wait for several
    /// only if that moved 10% more IOs (the result says so); elsewhere 1.
    #[arg(long, value_name = "N|auto", default_value = "auto", value_parser = parse_complete_batch)]
    pub complete_batch: u32,
}

/// How much of what was written a verify pass reads back.
#[derive(Args, Debug, Clone)]
pub struct VerifySample {
    /// Read back only this fraction of the written blocks after each cell (implies --verify for
    /// `run` and `suite`), e.g. 0.01 on a huge target; the same blocks every time for a run.
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub verify_sample: Option<f64>,
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!(
            "'{s}' is not a fraction in (0, 1]; give e.g. 0.1 for a tenth of the blocks"
        )),
    }
}

/// One `--stream` of `run` after its name: the workload flags, read as `run` reads them.
#[derive(Parser, Debug)]
#[command(
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct StreamArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// The stream's own target (a file, directory or block device), under the same checks
    /// as the run's: e.g. the WAL on its own device beside the data.
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,
    /// Named by the workload flags' conflicts; a stream cannot hold streams.
    #[arg(long, hide = true)]
    pub stream: Vec<String>,
}

/// What the workload does.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Access pattern.
    #[arg(long, value_enum, default_value_t = RwArg::Randread, conflicts_with = "stream")]
    pub rw: RwArg,

    /// Block size of each IO, up to 64m (4k = 4096 bytes): a multiple of 512 under direct IO, any size with --buffered.
    #[arg(long, value_name = "SIZE", default_value = "4k", allow_hyphen_values = true, value_parser = units::parse_size, conflicts_with = "stream")]
    pub bs: u64,

    /// Worker threads, each with its own file descriptor and ring.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "stream")]
    pub threads: u32,

    /// IOs in flight per thread.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "stream")]
    pub iodepth: u32,

    /// Percentage of reads in rw and randrw [default: 50].
    #[arg(long, value_name = "READ%", value_parser = clap::value_parser!(u8).range(0..=100), conflicts_with = "stream")]
    pub mix: Option<u8>,

    /// Run for a fixed time (like bm-flash) [default: 10s unless --data is given]
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = units::parse_duration, conflicts_with = "data")]
    pub time: Option<Duration>,

    /// Run until this much data has been transferred (like xdd), e.g. 4GiB.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = units::parse_size)]
    pub data: Option<u64>,

    /// Under MPI, with --data: `first` stops every rank when the first has moved its data
    /// (elbencho's "first done"); without it each rank moves all of it (IOR's wear-out).
    #[arg(long, value_enum, value_name = "MODE")]
    pub stonewall: Option<Stonewall>,

    /// Run this long first and leave it out of the results.
    #[arg(long, value_name = "DURATION", default_value = "0s", allow_hyphen_values = true, value_parser = units::parse_duration)]
    pub ramp: Duration,

    /// fsync(2) after every N writes (N=1 is sysbench's fsync test).
    #[arg(long, value_name = "N", conflicts_with_all = ["fdatasync", "stream"])]
    pub fsync: Option<u32>,

    /// fdatasync(2) after every N writes.
    #[arg(long, value_name = "N", conflicts_with = "stream")]
    pub fdatasync: Option<u32>,

    /// Open the target with O_DSYNC: every write returns only once it is durable.
    #[arg(long, value_enum, default_value_t = SyncMode::None, conflicts_with = "stream")]
    pub sync_mode: SyncMode,

    /// Issue IOs on a schedule at this many per second (all threads together), as a database
    /// does, instead of as fast as possible. Latency then counts from each IO's planned start,
    /// so a stall that delays the schedule shows (coordinated omission, as wrk2 corrects it).
    #[arg(long, value_name = "IOPS", conflicts_with_all = ["rate_bw", "stream"], value_parser = units::parse_rate)]
    pub rate: Option<f64>,

    /// Like --rate, as bandwidth per second, e.g. 200MiB.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = units::parse_size, conflicts_with = "stream")]
    pub rate_bw: Option<u64>,

    /// Find the highest rate whose latency percentile stays under a target, e.g. p99=2ms: the
    /// rate is raised step by step (a binary search below the unthrottled IOPS) and the curve
    /// reported — Orion's knee and fio's latency_target in one command.
    #[arg(long, value_name = "pNN=DURATION", conflicts_with_all = ["rate", "rate_bw"],
          value_parser = crate::workload::parse_latency_target)]
    pub latency_target: Option<crate::workload::LatencyTarget>,

    /// --rate and --rate-bw are per thread rather than in total.
    #[arg(long, conflicts_with = "stream")]
    pub rate_per_thread: bool,

    /// With --rate or --rate-bw: IOs arrive as a Poisson process (the gaps drawn from an
    /// exponential distribution of mean 1/rate, fio's rate_process=poisson), as a server's many
    /// independent clients send them, rather than evenly spaced.
    #[arg(long, conflicts_with = "stream")]
    pub poisson: bool,

    /// Where random IOs land: uniform, zipf:THETA, pareto:H, normal:STDDEV%, hot:DATA%/IO%
    /// (e.g. hot:10%/90%, a database's hot pages) or zoned:IO%/SIZE%:… (zones in order from the
    /// start, e.g. zoned:60/10:30/20:10/70), as fio's random_distribution.
    #[arg(long, value_name = "DIST", default_value = "uniform",
          value_parser = crate::workload::Distribution::parse)]
    pub distribution: crate::workload::Distribution,

    /// Seed of the random offsets and data, so a run can be repeated exactly.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// Length of each sample in the time series.
    #[arg(long, value_name = "DURATION", default_value = "1s", allow_hyphen_values = true, value_parser = units::parse_duration)]
    pub interval: Duration,
}

/// What is printed and kept.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print JSON on stdout (schema in docs/json-schema.md); every message goes to stderr.
    #[arg(long)]
    pub json: bool,

    /// A name for this run (not a number and not `last`, which name runs by id).
    #[arg(long, value_name = "TEXT", value_parser = units::parse_label)]
    pub label: Option<String>,

    /// Do not keep this run in the results database.
    #[arg(long)]
    pub no_store: bool,

    /// Also write the run to FILE: .json (the document, as --json prints it), .csv (a row per
    /// result) or .txt (the summary); the terminal still gets the summary.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Format of --output [default: from the file's extension]; `--format fio-json` without
    /// --output prints fio's JSON on stdout, as `fio --output-format=json` does
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,

    /// fio's spelling of `--format fio-json`, so a fio command line's `--output-format=json`
    /// works as it does in fio.
    #[arg(long = "output-format", value_name = "json", value_parser = ["json"], hide = true, conflicts_with = "format")]
    pub fio_output_format: Option<String>,

    /// Print the plan (cells, target, working set, estimated time) and exit without writing
    /// or measuring anything.
    #[arg(long)]
    pub dry_run: bool,

    /// In the summary and tables, give a result whose rate fell to another level and stayed
    /// (a `regime` finding) at that later level — what the device sustains — instead of the
    /// average over both; the stored run keeps both.
    #[arg(long)]
    pub baseline: bool,

    #[command(flatten)]
    pub db: DbArgs,
}

impl OutputArgs {
    /// `--format`, or fio's `--output-format=json` as `fio-json`.
    pub fn format(&self) -> Option<OutputFormat> {
        self.format.or(self
            .fio_output_format
            .as_ref()
            .map(|_| OutputFormat::FioJson))
    }
}

/// How the ranks of a run under MPI stop (`--stonewall`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stonewall {
    /// Every rank stops when the first has moved its --data.
    First,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineArg {
    #[value(name = "io_uring", alias = "iouring", alias = "io-uring")]
    IoUring,
    Psync,
    /// Completes IO without doing it: measures iogauge itself.
    Null,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    None,
    /// Open with O_DSYNC.
    Odsync,
}

/// `--rw`: the command line's names for [`Rw`], fio's.
// `RwArg::Rw` is fio's name for the sequential mix; users type it, so the variant keeps it.
#[allow(clippy::enum_variant_names)]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwArg {
    Read,
    Write,
    Randread,
    Randwrite,
    /// Sequential mix of reads and writes (see --mix).
    Rw,
    /// Random mix of reads and writes (see --mix).
    Randrw,
}

impl From<RwArg> for Rw {
    fn from(a: RwArg) -> Rw {
        match a {
            RwArg::Read => Rw::Read,
            RwArg::Write => Rw::Write,
            RwArg::Randread => Rw::Randread,
            RwArg::Randwrite => Rw::Randwrite,
            RwArg::Rw => Rw::Rw,
            RwArg::Randrw => Rw::Randrw,
        }
    }
}

impl From<EngineArg> for iogauge_engine::EngineKind {
    fn from(a: EngineArg) -> iogauge_engine::EngineKind {
        match a {
            EngineArg::IoUring => iogauge_engine::EngineKind::IoUring,
            EngineArg::Psync => iogauge_engine::EngineKind::Psync,
            EngineArg::Null => iogauge_engine::EngineKind::Null,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// A throwaway PostgreSQL cluster in TARGET_DIR, loaded and driven by pgbench: TPS and
    /// transaction latency, next to the WAL sync rate and 8 KiB random reads of the same
    /// directory (docs/db.md).
    Pgbench(PgbenchArgs),
    /// A throwaway MariaDB server (or PostgreSQL cluster: --server postgres) in TARGET_DIR,
    /// loaded and driven by sysbench's OLTP scripts: TPS, QPS and transaction latency, with the
    /// server's own counters and CPU, next to the storage cells of its commit and page reads
    /// (docs/db.md).
    Sysbench(SysbenchArgs),
    /// A throwaway MariaDB server (or PostgreSQL cluster: --server postgres) in TARGET_DIR,
    /// loaded and driven by iogauge's TPC-C-derived load (warehouses, five transactions in the
    /// standard mix, one connection per terminal): new orders per minute, transactions per
    /// minute as the server counts them, each transaction's latencies, the consistency
    /// conditions checked, beside the storage cells (docs/db.md).
    Tpcc(TpccArgs),
    /// The TPC-C consistency conditions (clause 3.3.2.1 to 3.3.2.4) checked again on the
    /// database of a server `db tpcc --keep` left: the server is started on it as it was left,
    /// asked, and stopped. Exit 1 when a condition fails.
    TpccCheck(TpccCheckArgs),
    /// The server's IO settings from measurements of the storage where its data would live
    /// (random against sequential page reads, the queue depth where reads stop scaling, each
    /// WAL sync method, sustained random writes), each with the measurement and the rule it
    /// comes from; `--prove` runs the load with the defaults and with the advice, alternating,
    /// and says whether the advice made a significant difference (docs/db.md).
    Advise(AdviseArgs),
}

/// `db advise`: the server, the storage, how long each measurement runs, the snippet, the proof.
#[derive(Args, Debug, Clone)]
pub struct AdviseArgs {
    /// The server the settings are for.
    #[arg(long, value_enum)]
    pub server: SysbenchServer,

    /// Where the database's data would live, and how much of it is used (as `suite` takes them).
    #[command(flatten)]
    pub target: TargetArgs,

    /// Length of each measurement.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = units::parse_duration)]
    pub cell_time: Duration,

    /// Where the WAL (PostgreSQL) or the redo log (InnoDB) would live, when not with the data:
    /// a directory, file or block device; the commits are measured there (64 MiB of it), and
    /// --prove puts the servers' WAL or redo log there.
    #[arg(long, value_name = "PATH")]
    pub wal: Option<PathBuf>,

    /// Write the changed settings as the server reads them: a postgresql.conf include
    /// (`include 'FILE'`) or a my.cnf section ([mariadbd]).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Then run the load on throwaway servers in TARGET (a directory) with the defaults and
    /// with the advice, alternating, and compare them with significance.
    #[arg(long)]
    pub prove: bool,

    /// The load --prove runs [default: tpcc].
    #[arg(long, value_enum, requires = "prove")]
    pub load: Option<ProveLoad>,

    /// Length of each measured window of --prove [default: 30s].
    #[arg(long, value_name = "DURATION", requires = "prove", value_parser = units::parse_duration)]
    pub prove_time: Option<Duration>,

    /// Runs of each side of --prove, alternating [default: 3].
    #[arg(long, value_name = "N", requires = "prove", value_parser = clap::value_parser!(u32).range(2..=20))]
    pub prove_repeat: Option<u32>,

    /// Where PostgreSQL's programs are [default: pg_ctl's installation on PATH, else the newest
    /// /usr/lib/postgresql/*/bin]
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// Print JSON on stdout (the measurement run, its advice and any proof).
    #[arg(long)]
    pub json: bool,

    /// A name for the measurement run.
    #[arg(long, value_name = "TEXT", value_parser = units::parse_label)]
    pub label: Option<String>,

    /// Do not keep the runs in the results database.
    #[arg(long)]
    pub no_store: bool,

    /// Print the plan and exit without writing or measuring anything.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub db: DbArgs,
}

/// The load `db advise --prove` runs.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProveLoad {
    /// iogauge's TPC-C-derived load (both servers).
    Tpcc,
    /// pgbench's TPC-B-like script (PostgreSQL).
    Pgbench,
    /// sysbench's oltp_read_write (both servers).
    Sysbench,
}

#[derive(Args, Debug, Clone)]
pub struct TpccCheckArgs {
    /// The server's directory `db tpcc --keep` left, e.g. /data/iogauge-pg-1234.
    #[arg(value_name = "KEPT_DIR")]
    pub dir: PathBuf,

    /// Where PostgreSQL's programs are [default: pg_ctl's installation on PATH, else the newest
    /// /usr/lib/postgresql/*/bin]
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,
}

/// pgbench's built-in scripts (`--builtin`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgbenchScript {
    /// TPC-B (sort of): three updates, a select and an insert per transaction.
    TpcbLike,
    /// The TPC-B transaction without the updates of tellers and branches (less contention).
    SimpleUpdate,
    /// One primary-key select per transaction: reads only.
    SelectOnly,
}

/// The server `db sysbench` and `db tpcc` drive.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysbenchServer {
    /// MariaDB's InnoDB (mariadbd); sysbench drives it with --db-driver=mysql.
    Mariadb,
    /// PostgreSQL (the cluster db pgbench uses); sysbench drives it with --db-driver=pgsql.
    Postgres,
}

/// sysbench's OLTP scripts.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysbenchScript {
    /// Point selects, range queries, updates, a delete and an insert per transaction.
    #[value(name = "oltp_read_write")]
    ReadWrite,
    /// The selects of oltp_read_write only.
    #[value(name = "oltp_read_only")]
    ReadOnly,
    /// The updates, delete and insert of oltp_read_write only.
    #[value(name = "oltp_write_only")]
    WriteOnly,
    /// One primary-key select per transaction.
    #[value(name = "oltp_point_select")]
    PointSelect,
}

#[derive(Args, Debug, Clone)]
pub struct SysbenchArgs {
    /// The directory under test; the server lives in a directory of its own inside it and is
    /// removed afterwards
    /// (or --scratch).
    #[arg(value_name = "TARGET_DIR", required_unless_present = "scratch")]
    pub target: Option<PathBuf>,

    /// sysbench's OLTP script.
    #[arg(long, value_enum, default_value_t = SysbenchScript::ReadWrite)]
    pub script: SysbenchScript,

    /// Tables sysbench prepares (sbtest1..N).
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub tables: u32,

    /// Rows per table (about 250 bytes each in InnoDB) [default: 100000]
    #[arg(long, value_name = "N", conflicts_with = "data",
          value_parser = clap::value_parser!(u64).range(1..=10_000_000_000))]
    pub table_size: Option<u64>,

    /// The data's size instead of --table-size, e.g. 10GiB (rows of about 250 bytes, spread
    /// over --tables).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    pub data: Option<u64>,

    /// Client threads (sysbench --threads).
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub threads: u32,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `db tpcc`: the TPC-C-derived load of iogauge's own driver.
#[derive(Args, Debug, Clone)]
pub struct TpccArgs {
    /// The directory under test; the server lives in a directory of its own inside it and is
    /// removed afterwards
    /// (or --scratch).
    #[arg(value_name = "TARGET_DIR", required_unless_present = "scratch")]
    pub target: Option<PathBuf>,

    /// Warehouses loaded (about 100 MB of data each) [default: 1]
    #[arg(long, value_name = "N", conflicts_with = "data",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub warehouses: Option<u32>,

    /// The data's size instead of --warehouses, e.g. 2GB (whole warehouses of about 100 MB).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    pub data: Option<u64>,

    /// Terminals, each one connection running the transaction mix against its home warehouse
    /// and district [default: 4; with --keying-times, 10 per warehouse as the specification has]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub terminals: Option<u32>,

    /// Keying and think times as the TPC-C specification gives them (a New-Order keyed for 18 s,
    /// then thought over for 12 s on average): a terminal becomes a person, and throughput
    /// cannot pass 12.86 new orders per minute per warehouse. Off: each terminal runs its next
    /// transaction at once, and the storage sets the pace.
    #[arg(long)]
    pub keying_times: bool,

    /// The longest ramp-up: the measurement starts once the transactions per second have
    /// settled (the last 5 seconds within 20% of their mean, SNIA's steady-state test), or after
    /// this long, which the result then says.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = units::parse_duration)]
    pub max_ramp: Duration,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `db sysbench` and `db tpcc`: which server, its settings and where its log goes; and what
/// every database run shares.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// The database server the load drives.
    #[arg(long, value_enum, default_value_t = SysbenchServer::Mariadb)]
    pub server: SysbenchServer,

    /// A server setting: to mariadbd as --KEY=VALUE (e.g. innodb_flush_log_at_trx_commit=2),
    /// to PostgreSQL as KEY = 'VALUE' (e.g. synchronous_commit=off) (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub db_setting: Vec<String>,

    /// With --server mariadb: put InnoDB's redo log in a directory of its own under DIR
    /// (innodb_log_group_home_dir), e.g. another disk.
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,

    #[command(flatten)]
    pub run: DbRunArgs,
}

/// What every database run shares, whichever load and server: the measurement's length, the
/// buffer shares, the memory limit, PostgreSQL's programs and WAL, the storage cells, --keep.
#[derive(Args, Debug, Clone)]
pub struct DbRunArgs {
    /// Where PostgreSQL's programs are (db pgbench, --server postgres) [default: pg_ctl's
    /// installation on PATH, else the newest /usr/lib/postgresql/*/bin]
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// Length of each measurement.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = units::parse_duration)]
    pub time: Duration,

    /// The buffer as shares of the data, one run each after a restart, e.g. 0.25,1 or
    /// 25%,14%,9%,4.5%: shared_buffers for PostgreSQL, innodb_buffer_pool_size for MariaDB (the
    /// buffer-pool sweep of the "Solid State Disk Benchmarking" study).
    #[arg(long, value_name = "LIST")]
    pub buffer_ratio: Option<String>,

    /// Run the server in a memory cgroup of this size (needs root), so the page cache cannot
    /// hold the data, e.g. 512MiB.
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    pub memory_limit: Option<u64>,

    /// With PostgreSQL: put the WAL in a directory of its own under DIR (initdb --waldir), e.g.
    /// another disk.
    #[arg(long, value_name = "DIR")]
    pub wal_dir: Option<PathBuf>,

    /// Length of each storage cell (the commit's writes + syncs, the page's random reads).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = units::parse_duration)]
    pub storage_time: Duration,

    /// Skip the storage cells.
    #[arg(long)]
    pub no_storage: bool,

    /// Keep the server's directory (the server is stopped all the same).
    #[arg(long)]
    pub keep: bool,

    /// Run each measurement N times on the same loaded database, settled again before each
    /// (vacuum or analyze), so compare and a sweep can judge significance.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// Instead of TARGET_DIR: the server in each file system (--fs) or array (--layout) built
    /// on these blank devices, one run each, as `iogauge sweep` builds them.
    #[command(flatten)]
    pub build: BuildArgs,
}

#[derive(Args, Debug, Clone)]
pub struct PgbenchArgs {
    /// The directory under test; the cluster lives in a directory of its own inside it and is
    /// removed afterwards
    /// (or --scratch).
    #[arg(value_name = "TARGET_DIR", required_unless_present = "scratch")]
    pub target: Option<PathBuf>,

    /// pgbench's scale factor (100,000 accounts, about 15 MiB, each).
    #[arg(long, value_name = "N", conflicts_with = "data",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub scale: Option<u32>,

    /// The database's size instead of --scale, e.g. 10GiB (the scale that gives about this).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    pub data: Option<u64>,

    /// Client connections (pgbench -c).
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub clients: u32,

    /// pgbench worker threads (pgbench -j) [default: the clients, at most one per CPU]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub jobs: Option<u32>,

    /// pgbench's built-in transaction.
    #[arg(long, value_enum, default_value_t = PgbenchScript::TpcbLike)]
    pub script: PgbenchScript,

    /// A server setting, e.g. --pg-setting synchronous_commit=off (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub pg_setting: Vec<String>,

    /// Length of each sample of the TPS time series.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = units::parse_duration)]
    pub interval: Duration,

    #[command(flatten)]
    pub run: DbRunArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct FsyncCheckArgs {
    #[command(subcommand)]
    pub command: FsyncCheckCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum FsyncCheckCommand {
    /// Record what the machine under test says it wrote; run it on a machine that keeps power.
    Listen(FsyncListenArgs),
    /// Write random blocks with a sync after each and tell the listener before and after;
    /// runs until the power is cut (or --count / --time).
    Write(FsyncWriteArgs),
    /// After the reboot: read back every block the listener knows was synced.
    Verify(FsyncVerifyArgs),
}

/// Where the listener is, as the machine under test reaches it.
pub const FSYNC_CHECK_ADDR: &str = "127.0.0.1:5400";

#[derive(Args, Debug, Clone)]
pub struct FsyncListenArgs {
    /// Address and port to listen on, e.g. 0.0.0.0:5400 to hear another machine (port 0 picks
    /// a free one and prints it).
    #[arg(value_name = "ADDR", default_value = FSYNC_CHECK_ADDR)]
    pub addr: String,

    /// Directory for the records, one file per target; a restarted listener reads them back.
    #[arg(long, value_name = "DIR", default_value = "fsync-check-records")]
    pub records: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct FsyncWriteArgs {
    /// The file to write: created if missing. An existing file is used only if fsync-check
    /// created it, or with --overwrite.
    pub target: PathBuf,

    /// The listener's address (`iogauge fsync-check listen` on another machine).
    #[arg(long, value_name = "ADDR")]
    pub to: String,

    /// How each write is made durable.
    #[arg(long, value_enum, default_value_t = FsyncSync::Fsync)]
    pub sync: FsyncSync,

    /// Block size, a multiple of 4KiB (diskchecker.pl writes 16 KiB).
    #[arg(long, value_name = "SIZE", default_value = "16k", allow_hyphen_values = true, value_parser = units::parse_size)]
    pub block: u64,

    /// Size of the file; blocks are written at random places in it.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", allow_hyphen_values = true, value_parser = units::parse_size)]
    pub size: u64,

    /// Stop after this many acknowledged writes instead of running until the power is cut.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,

    /// Stop after this long instead of running until the power is cut.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = units::parse_duration)]
    pub time: Option<Duration>,

    /// Write into an existing file fsync-check did not create (its contents are destroyed).
    #[arg(long, alias = "overwrite")]
    pub allow_overwrite: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsyncSync {
    /// fsync(2) after each write.
    Fsync,
    /// fdatasync(2) after each write.
    Fdatasync,
    /// Open with O_DSYNC: each write returns once durable.
    Odsync,
}

#[derive(Args, Debug, Clone)]
pub struct FsyncVerifyArgs {
    /// The file `fsync-check write` wrote.
    pub target: PathBuf,

    /// The listener's address.
    #[arg(long, value_name = "ADDR")]
    pub to: String,
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// Only list what would be removed.
    #[arg(long)]
    pub dry_run: bool,
}

/// `--complete-batch`: `auto` (0) or a number of completions from 1 to 4096.
fn parse_complete_batch(s: &str) -> Result<u32, String> {
    if s == "auto" {
        return Ok(0);
    }
    s.parse::<u32>()
        .ok()
        .filter(|n| (1..=4096).contains(n))
        .ok_or_else(|| format!("{s} is not auto or a number of completions from 1 to 4096"))
}
