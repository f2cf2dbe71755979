//! The documents iogauge produces: one [`RunDoc`] per invocation of `run` or `suite`, holding
//! one [`ResultDoc`] per workload or suite cell. This is the JSON contract (schema
//! `iogauge.run/1`, documented in docs/json-schema.md) and what the results store keeps. Rates
//! per second, bandwidth bytes/s, latencies ns. A database run's own documents are `db`'s; what
//! the devices and other processes did, `device`'s; which warnings void a number, `caveats`'s.

mod advice;
pub mod caveats;
mod cpu;
mod db;
mod device;
mod together;
mod workload;
pub use advice::*;
pub use cpu::*;
pub use db::*;
pub use device::*;
pub use together::*;
pub use workload::*;

use crate::measure::LatNs;
use crate::workload::SyncKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "iogauge.run/1";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunDoc {
    pub schema: String,
    pub run_id: String,
    pub label: Option<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// The command line as typed.
    pub command: Vec<String>,
    /// The suite's name, for `iogauge suite`.
    pub suite: Option<String>,
    /// The machine and the target's file system and device stack ("100K+ IOPS on semi-commodity hardware": "document all
    /// involved settings for each and every test run").
    pub system: iogauge_sysinfo::SystemInfo,
    pub results: Vec<ResultDoc>,
    pub findings: Vec<iogauge_analyze::Finding>,
    /// True when a signal or an error cut the run short; `results` hold what was measured.
    pub interrupted: bool,
    /// Things the user should know about how the numbers were made.
    pub notes: Vec<String>,
    /// Run parameters given with --param KEY=VALUE, for scaling comparisons.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// For a suite run in rounds until steady state (SNIA PTS): the convergence record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsDoc>,
    /// With `--verify`: how the blocks were stamped, so `iogauge verify` can check the target
    /// again later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<RunVerifyDoc>,
    /// A run on many hosts at once (under MPI): who took part and how their clocks and
    /// windows line up. Its results are the aggregate first, then one per host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetDoc>,
    /// A suite measured while an md array rebuilt a member (`sweep --rebuild`): the rebuild
    /// second by second, on the same clock as the cells' windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<RebuildDoc>,
    /// `db advise`: the settings derived from this run's measurements (the proof's outcome is
    /// in the proof's own runs and in `--json`, not here: it comes after this run is stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<AdviceDoc>,
}

/// An md array's recovery of one member while the suite ran, from md's own sysfs files.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RebuildDoc {
    /// The array ("md100") and the member it recovered.
    pub array: String,
    pub member: String,
    /// md's limits while it ran (`sync_speed_min`, `sync_speed_max`), KiB/s, and whether
    /// `--rebuild-speed` set them (otherwise they were the system's).
    pub speed_min_kib: u64,
    pub speed_max_kib: u64,
    pub speed_set: bool,
    /// Seconds from the member's re-adding to the array being whole again; `None` when it was
    /// not whole when sampling stopped (a cut run).
    pub finished_s: Option<f64>,
    /// Each cell's window, seconds on the same clock; `name` where the windows and the results
    /// pair one to one.
    pub cells: Vec<RebuildWindow>,
    pub samples: Vec<RebuildSample>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RebuildWindow {
    pub name: Option<String>,
    pub from_s: f64,
    pub to_s: f64,
}

/// One reading of md's sysfs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RebuildSample {
    /// Seconds since the member was added back.
    pub t_s: f64,
    /// `sync_action`: "recover" while it rebuilds, "idle" after.
    pub action: String,
    /// `sync_completed` as a fraction; `None` where md says "none" (not syncing).
    pub done: Option<f64>,
    /// `sync_speed`, KiB/s, md's own average over its last few seconds.
    pub speed_kib: Option<u64>,
    /// `degraded`: members missing; 0 once whole.
    pub degraded: u32,
}

/// The hosts of a run under MPI, on rank 0's clock.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FleetDoc {
    /// One per MPI rank, in rank order; result `1 + rank` is its own.
    pub hosts: Vec<HostDoc>,
    /// How the ranks stopped: "time" (all at the same time), "first" (all when the first had
    /// moved its --data), "data" (each after its own --data).
    pub stonewall: String,
    /// Seconds from rank 0's start: the window in which every rank was measuring, over which
    /// the aggregate's IOPS and bandwidth are counted.
    pub window_s: [f64; 2],
    /// Seconds from rank 0's start at which the first and the last rank finished.
    pub first_done_s: f64,
    pub last_done_s: f64,
    /// What the exchanges between the ranks took on rank 0, in ms: the clock ping-pong, the
    /// gathering of the documents, the reduction.
    #[serde(default)]
    pub exchange_ms: BTreeMap<String, f64>,
    /// Every rank's IOs and bytes over its whole run (the aggregate result counts the common
    /// window's).
    #[serde(default)]
    pub total_ios: u64,
    #[serde(default)]
    pub total_bytes: u64,
}

/// One rank of a run under MPI.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostDoc {
    pub rank: u32,
    pub host: String,
    pub target: String,
    pub kernel: String,
    /// This rank's clock minus rank 0's, from the ping-pong with the smallest round trip, and
    /// that round trip: the offset is known to within half of it.
    pub clock_offset_ns: i64,
    pub rtt_ns: u64,
    /// When this rank started measuring, seconds after rank 0 did (on rank 0's clock).
    pub start_s: f64,
    /// How long this rank waited at the barrier before the cell (for the last to arrive, ~0).
    #[serde(default)]
    pub barrier_wait_ms: f64,
}

/// The key to a run's stamped blocks (`--verify`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunVerifyDoc {
    /// The run's id in every sector header (below 2^53, so JSON readers keep it exact).
    pub key: u64,
    /// The seed the payloads derive from.
    pub seed: u64,
    /// The fill stamped every sector of the file, so all of it is checked later.
    pub filled: bool,
    pub path: String,
    pub offset: u64,
    pub range_bytes: u64,
    /// Block size of the generations kept in the results database (0: none kept; then a later
    /// check cannot tell a lost write from the version before it).
    pub map_block: u64,
}

/// What verification found in one result: the reads' checks during the run and the pass that
/// read back the written blocks after it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct VerifyDoc {
    /// Reads checked while the workload ran.
    pub read_checks: u64,
    /// Blocks the cell wrote.
    pub written_blocks: u64,
    /// Blocks the pass after the cell read back.
    pub pass_checks: u64,
    /// The share of written blocks the pass read (`--verify-sample`).
    pub sample: f64,
    /// Blocks that failed, by class (corrupt, misdirected, lost, torn, unwritten).
    pub failed: BTreeMap<String, u64>,
    /// The first failures, with their offsets.
    pub first: Vec<FailureDoc>,
}

impl VerifyDoc {
    pub fn failures(&self) -> u64 {
        self.failed.values().sum()
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FailureDoc {
    pub offset: u64,
    pub class: String,
    /// What was found, e.g. "a block written for offset 1048576".
    pub detail: String,
}

/// How a suite run in rounds converged (SNIA SSS PTS steady state). The results of such a run
/// are the last `window` rounds of each cell, folded as repeats.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RoundsDoc {
    /// The cell whose IOPS decide steady state, e.g. "randrw 0/100 4K × 2 threads · QD 16".
    pub tracked: String,
    /// The tracked cell's IOPS in each round, in order.
    pub iops_per_round: Vec<f64>,
    /// Rounds in the measurement window.
    pub window: usize,
    pub max_rounds: u32,
    /// The round at which the window first passed the test; `None` if it never did.
    pub steady_at_round: Option<u32>,
    /// The last window's numbers, as fractions of its mean (limits 0.2 and 0.1).
    pub excursion_frac: Option<f64>,
    pub slope_excursion_frac: Option<f64>,
    /// Workload-independent preconditioning before the first round, in seconds.
    pub precondition_s: Option<f64>,
}

impl RoundsDoc {
    /// The round (from 1) the measurement window starts at: the results are the last `window`
    /// rounds of each cell (fewer when the run stopped sooner).
    pub fn first_in_window(&self) -> usize {
        self.iops_per_round.len().saturating_sub(self.window) + 1
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetDoc {
    /// The path as typed (or iogauge's test file).
    pub path: String,
    /// The same path made absolute, so runs in /data and /data2 can be told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absolute_path: Option<String>,
    /// The block device at the top of the target's stack (e.g. `nvme0n1p2`, `loop3`), so runs
    /// on /data and /data2 can be told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// "file" or "block_device".
    pub kind: String,
    /// iogauge created (and filled) this file for the run.
    pub created: bool,
    /// Offset and length of the byte range the IO used (in each file, with `files`).
    pub offset_bytes: u64,
    pub range_bytes: u64,
    pub logical_block_size: u32,
    /// Files the IO was spread over (fio's `nrfiles`), each `range_bytes` long and named as
    /// `path` with `.1`, `.2` … appended; absent for one.
    #[serde(default = "one_file", skip_serializing_if = "is_one_file")]
    pub files: u32,
}

impl TargetDoc {
    /// The bytes the IO could touch: the range of every file.
    pub fn all_bytes(&self) -> u64 {
        self.range_bytes
            .saturating_mul(u64::from(self.files.max(1)))
    }
}

fn one_file() -> u32 {
    1
}

fn is_one_file(n: &u32) -> bool {
    *n == 1
}

/// One direction (reads or writes) of a result.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpDoc {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatNs,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SyncDoc {
    pub kind: Option<SyncKind>,
    pub count: u64,
    pub per_s: f64,
    pub lat_ns: LatNs,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Sample {
    /// End of the interval, seconds since the measurement started.
    pub t_s: f64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
}

/// IO completions counted in short bins, to time stalls closer than the sample interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FineDoc {
    pub bin_s: f64,
    pub ios: Vec<u32>,
    /// CPU seconds per second iogauge's threads ran in each bin, bin for bin with `ios`, and
    /// (`cpu_wait`) spent runnable but waiting for a CPU (the kernel's schedstat run delay);
    /// empty where not measured (no schedstat, or results that cannot be merged bin for bin).
    /// They tell a change of level that the CPU made from one that the device made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_run: Vec<f32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_wait: Vec<f32>,
    /// CPUs' worth of the machine's work in each bin that was not iogauge's threads (other
    /// processes, and kernel threads — a loop device's, a file system's), from /proc/stat less
    /// `cpu_run`; empty where not measured. With the CPU count, it tells a machine whose CPUs
    /// were all taken, where the kernel threads serving iogauge's IO waited where iogauge's
    /// own schedstat cannot see them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_others: Vec<f32>,
    /// The CPUs iogauge could run on when fewer than the machine's (taskset, a cpuset):
    /// `cpu_others` is then the other work on those CPUs alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// The IOs in flight at the target's block device (the top of its stack) in each bin, as
    /// the kernel counted them at the watching thread's last look in it (`inflight` in sysfs);
    /// empty where not measured. IO held above the device (a frozen file system) is not in it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_flight: Vec<f32>,
    /// With a stopping rule (`--until-stable`): the rates (IOs per second) the rule judged
    /// live, one per watch tick of about a bin, so the result's steadiness is told from the
    /// very samples that stopped the cell (the bins above, counted by completion time, can
    /// tell another story when a device hands out IOs in bursts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rule: Vec<f64>,
}

impl FineDoc {
    /// Two stretches of bins one after the other; the CPU wait and the device's IOs in flight
    /// only when both have them whole.
    pub fn then(self, next: FineDoc) -> FineDoc {
        let whole = |f: &FineDoc| f.cpu_cover();
        let others = self.cpu_others.len() == self.ios.len()
            && next.cpu_others.len() == next.ios.len()
            && self.cpus == next.cpus
            && whole(&self)
            && whole(&next);
        let both = whole(&self) && whole(&next);
        let cpu_others = match others {
            true => [self.cpu_others, next.cpu_others].concat(),
            false => Vec::new(),
        };
        let (cpu_run, cpu_wait) = match both {
            true => (
                [self.cpu_run, next.cpu_run].concat(),
                [self.cpu_wait, next.cpu_wait].concat(),
            ),
            false => Default::default(),
        };
        let in_flight = match self.in_flight.len() == self.ios.len()
            && next.in_flight.len() == next.ios.len()
        {
            true => [self.in_flight, next.in_flight].concat(),
            false => Vec::new(),
        };
        FineDoc {
            bin_s: self.bin_s,
            ios: [self.ios, next.ios].concat(),
            cpu_run,
            cpu_wait,
            cpu_others,
            cpus: self.cpus.filter(|_| others),
            in_flight,
            rule: [self.rule, next.rule].concat(),
        }
    }

    /// Whether the CPU series cover every bin.
    pub fn cpu_cover(&self) -> bool {
        self.cpu_run.len() == self.ios.len() && self.cpu_wait.len() == self.ios.len()
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EngineDoc {
    pub name: String,
    /// io_uring setup flags in use, and those asked for that the kernel refused.
    pub flags: Vec<String>,
    pub refused: Vec<String>,
    pub registered_buffers: bool,
    pub registered_files: bool,
    /// Waits looked at the completion queue: io_uring's workers did the IO (`UringSetup`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub looked: bool,
    /// What backs the IO buffers, as the kernel reported it: huge pages keep a large IO in one
    /// piece (one device request), 4 KiB pages may split it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub buffers: String,
    /// `--complete-batch`: completions waited for at a time, when more than one (each IO of a
    /// group is timed when the group is reaped).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub complete_batch: u32,
    /// The complete batch was iogauge's choice (`--complete-batch auto`, the default): the IOs
    /// its trial moved each way, before the measurement (they are not in the results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_trial: Option<TrialDoc>,
}

impl EngineDoc {
    /// Every IO buffer was on huge pages, as `buffers` says it (the engine's
    /// `Backing::describe`: hugetlb, or transparent huge pages for the whole pool).
    pub fn buffers_on_huge_pages(&self) -> bool {
        self.buffers.starts_with("2 MiB huge pages")
            || (self.buffers.starts_with("transparent huge pages (")
                && !self.buffers.contains(" of "))
    }
}

/// A kernel thread's share of a measurement's time on a CPU (0–1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelThreadDoc {
    pub name: String,
    pub cpu: f64,
}

/// An auto complete batch's trial: completions reaped waiting for each completion, for half
/// and for all in flight, and the seconds each way's waits took (summed over the threads).
/// Results stored before the seconds were kept have none: their phases had equal time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialDoc {
    pub one: u64,
    #[serde(default)]
    pub half: u64,
    pub all: u64,
    #[serde(default)]
    pub one_s: f64,
    #[serde(default)]
    pub half_s: f64,
    #[serde(default)]
    pub all_s: f64,
}

impl TrialDoc {
    /// How many times the rate of waiting for each completion waiting for all (`all`) or for
    /// half of those in flight moved.
    pub fn gain(&self, all: bool) -> f64 {
        let (n, t) = if all {
            (self.all, self.all_s)
        } else {
            (self.half, self.half_s)
        };
        let timed = t > 0.0 && self.one_s > 0.0;
        let (t, one_t) = if timed { (t, self.one_s) } else { (1.0, 1.0) };
        (n as f64 / t) / (self.one.max(1) as f64 / one_t)
    }
}

fn one() -> u32 {
    1
}

/// One completion at a time is the default and says nothing (0 where no engine waited).
fn is_one(n: &u32) -> bool {
    *n <= 1
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultDoc {
    /// Name of the suite cell, e.g. "randread 4K × 10 threads".
    pub name: Option<String>,
    pub workload: WorkloadDoc,
    pub target: TargetDoc,
    /// IOs per second; for a database result, its transactions per second (as `tps` says).
    pub iops: f64,
    /// A database result's transactions per second, the rate its `iops` holds for the readers
    /// of every result; absent for IO results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    pub bw_bytes: f64,
    pub ios: u64,
    pub bytes: u64,
    pub runtime_s: f64,
    pub lat_ns: LatNs,
    /// The whole latency histogram (ns) as [value, count] pairs of its non-empty buckets, in
    /// iogauge's fixed layout, so results from threads, repeats and hosts merge exactly.
    #[serde(default)]
    pub lat_hist: Vec<[u64; 2]>,
    pub read: Option<OpDoc>,
    pub write: Option<OpDoc>,
    /// fio's trims on emulated zones (zone resets in memory: nothing reached the device), of a
    /// job that trims; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpDoc>,
    pub sync: Option<SyncDoc>,
    /// With `--rate`: latency from submission to completion (the device's service time), while
    /// `lat_ns` counts from each IO's planned start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_lat_ns: Option<LatNs>,
    pub cpu: CpuDoc,
    pub timeseries: Vec<Sample>,
    /// Under MPI: each interval's latency histogram as [value, count] pairs (the per-interval
    /// layout), so rank 0 merges the hosts' intervals exactly into the cluster's percentiles
    /// over time. Empty (and left out) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interval_hists: Vec<Vec<[u64; 2]>>,
    pub fine: FineDoc,
    pub engine: EngineDoc,
    pub interrupted: bool,
    /// The error that cut this result short (an IO error, a full disk, a vanished target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the data came from: "direct" (O_DIRECT), "buffered" (through the page cache).
    pub io_path: String,
    pub findings: Vec<iogauge_analyze::Finding>,
    /// One entry per repeat when the workload ran more than once (`--repeat N`); the headline
    /// numbers above then cover all repeats together (ios / runtime_s over their sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatDoc>,
    /// What each device of the target's stack saw during the result (top device first),
    /// from the block layer's own counters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceDoc>,
    /// What other processes (not iogauge, not the kernel's threads) read and wrote to storage
    /// while the devices were watched, from the kernel's per-process accounting: tells another
    /// process's IO (`other-io`) from the file system's own on iogauge's behalf
    /// (`amplification`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others: Option<OthersDoc>,
    /// The md arrays' own kernel threads under the target (`md100_raid5`, …), each with its
    /// share of the measurement's time on a CPU (the mean over the repeats): raid5's thread
    /// handles every stripe on one CPU, a limit the members' counters do not show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_threads: Vec<KernelThreadDoc>,
    /// Statistics over the repeats, per metric: iops, bw_bytes, lat_mean_ns, lat_p50_ns,
    /// lat_p99_ns (and syncs_per_s for sync workloads).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, StatsDoc>,
    /// For a `db pgbench` result: the database run behind it. Its `iops` are then
    /// transactions per second and its latencies those of whole transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg: Option<PgDoc>,
    /// For a `db sysbench` result: the database run behind it. Its `iops` are then
    /// transactions per second and its latencies those of whole transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysbench: Option<Box<SysbenchDoc>>,
    /// For a `db tpcc` result: the TPC-C-derived run behind it. Its `iops` are then
    /// transactions per second of all five kinds, its latencies those of whole transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<Box<TpccDoc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyDoc>,
    /// For a database result: the database and its storage second by second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Box<TimelineDoc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<TogetherDoc>,
    /// `db … --fill`: the level of use the file system holding the database was filled to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<FillDoc>,
    /// IO errors the workload counted and went on after (fio's continue_on_error): the
    /// numbers above leave those IOs out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_errors: Option<IgnoredDoc>,
}

/// One repeat of a workload.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RepeatDoc {
    pub iops: f64,
    pub bw_bytes: f64,
    pub ios: u64,
    pub bytes: u64,
    pub runtime_s: f64,
    pub lat_ns: LatNs,
    pub syncs_per_s: Option<f64>,
    pub cpu: CpuDoc,
    /// Completions waited for at once (io_uring): the way this repeat's IOs were timed. A
    /// cell's repeats wait as its first repeat's trial chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_batch: Option<u32>,
    /// The trial that chose it, on the repeat that ran one (the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_trial: Option<TrialDoc>,
}

/// Statistics of one metric over repeats (see crates/stats for the methods).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StatsDoc {
    pub n: usize,
    pub values: Vec<f64>,
    pub mean: f64,
    pub median: f64,
    pub stddev: f64,
    /// Coefficient of variation: stddev / mean.
    pub cv: f64,
    /// 95% confidence interval of the mean (Student t).
    pub ci95: [f64; 2],
    pub min: f64,
    pub max: f64,
    /// Indices of outlier repeats: modified z-score |z| > 3.5 and at least 10% from the
    /// median of the other repeats (crates/stats `material_outliers`).
    pub outliers: Vec<usize>,
    pub mean_without_outliers: f64,
}

/// IO errors a workload went on after: how many, and the first one's IO and error.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IgnoredDoc {
    pub count: u64,
    /// The first one's error number (fio's first_error).
    pub errno: i32,
    /// e.g. "write of 8192 bytes at offset 40960: ENOSPC (No space left on device)".
    pub first: String,
}

impl IgnoredDoc {
    /// Two parts' errors as one (the first part's first error).
    pub fn sum(a: Option<IgnoredDoc>, b: Option<IgnoredDoc>) -> Option<IgnoredDoc> {
        match (a, b) {
            (Some(mut x), Some(y)) => {
                x.count += y.count;
                Some(x)
            }
            (x, y) => x.or(y),
        }
    }
}
