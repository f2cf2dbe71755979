//! A workload: its patterns, limits and the checked [`Spec`] the runner runs. Specs are built
//! in one place, `exec::work::of`, from a plan's cell, so the runner can trust what it gets.

pub mod blocks;
mod content;
pub mod distribution;
pub mod errors;
pub mod files;
pub mod offsets;
pub mod sprandom;
pub mod zbd;
pub use errors::Tolerate;
pub use sprandom::Spr;
pub use zbd::Zbd;
mod placement;
pub use content::{Content, Repeats};
pub use placement::{list as placement_list, MemPolicy, Placement};

pub use blocks::BsMix;
pub use distribution::Distribution;

use crate::error::usage;
use iogauge_engine::{EngineKind, UringOptions};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Threads beyond this are refused: more threads than this measure the scheduler, not storage.
pub const MAX_THREADS: u32 = 1024;
/// In-flight IOs per thread beyond this are refused (io_uring rings hold at most 32768 entries;
/// no device benefits from more than a few thousand outstanding IOs).
pub const MAX_IODEPTH: u32 = 4096;
/// The smallest block direct IO can issue, a sector: under O_DIRECT a block size is a multiple
/// of it (and of the target's own logical block, checked against the target). Buffered IO
/// takes any size, as fio's does.
pub const MIN_BS: u64 = 512;
pub const MAX_BS: u64 = 64 << 20;

/// A block size iogauge can issue: from 1 byte to 64 MiB, and a multiple of 512 bytes under
/// direct IO ([`BlockSize::direct`]). The one place those rules are written: a block size is
/// made once from what was typed (`--bs`, a suite file, a suite's `--bs` override, a fio job)
/// and carried as it is through the plan's cells to the workers, which hand the engine its
/// bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockSize(u64);

impl BlockSize {
    /// `bytes` as a block size, or why it is none (to follow what was typed).
    pub fn new(bytes: u64) -> Result<BlockSize, &'static str> {
        if bytes == 0 {
            return Err("the block size must be at least 1 byte");
        }
        if bytes > MAX_BS {
            return Err("the block size must be at most 64MiB");
        }
        Ok(BlockSize(bytes))
    }

    /// A trim's block on fio's emulated zones: a whole zone (fio's rule), reset in memory. It
    /// moves no data and no buffer holds it, so it is not held to [`MAX_BS`]; `fio::zbd` keeps
    /// it to an IO's length.
    pub fn zone_reset(bytes: u64) -> BlockSize {
        BlockSize(bytes.max(1))
    }

    /// This block size for direct IO, or why it cannot be: O_DIRECT moves whole sectors.
    pub fn direct(self) -> Result<BlockSize, &'static str> {
        match self.0.is_multiple_of(MIN_BS) {
            true => Ok(self),
            false => Err("direct IO needs a multiple of 512 bytes (buffered IO takes any size)"),
        }
    }

    /// A block size written in the code, checked as it is compiled (a constant) or at once.
    // RangeInclusive::contains is not a const fn.
    #[allow(clippy::manual_range_contains)]
    pub const fn known(bytes: u64) -> BlockSize {
        assert!(bytes >= MIN_BS && bytes <= MAX_BS && bytes.is_multiple_of(MIN_BS));
        BlockSize(bytes)
    }

    pub const fn bytes(self) -> u64 {
        self.0
    }
}
/// Share of RAM the IO buffers may take.
pub const MAX_BUFFER_SHARE_OF_RAM: f64 = 0.25;

// `Rw::Rw` is fio's name for the sequential mix; users type it, so the variant keeps it.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
    /// Sequential mix of reads and writes (see --mix).
    Rw,
    /// Random mix of reads and writes (see --mix).
    Randrw,
    /// fio's trims, taken only with zonemode=zbd on a target that is not zoned: each resets a
    /// zone's write pointer in memory (zones in turn, or the nearest holding data to a random
    /// one), and nothing reaches the device, as in fio.
    Trim,
    Randtrim,
}

impl Rw {
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Randread => "randread",
            Rw::Randwrite => "randwrite",
            Rw::Rw => "rw",
            Rw::Randrw => "randrw",
            Rw::Trim => "trim",
            Rw::Randtrim => "randtrim",
        }
    }

    pub fn random(self) -> bool {
        matches!(
            self,
            Rw::Randread | Rw::Randwrite | Rw::Randrw | Rw::Randtrim
        )
    }

    /// fio's zone resets (`trims`): they read nothing and, though nothing reaches the device,
    /// count as changing the target (the zones they reset are written again).
    pub fn trims(self) -> bool {
        matches!(self, Rw::Trim | Rw::Randtrim)
    }

    /// Percentage of reads this pattern issues, given the mix for the mixed patterns.
    pub fn read_pct(self, mix: u8) -> u8 {
        match self {
            Rw::Read | Rw::Randread => 100,
            Rw::Write | Rw::Randwrite | Rw::Trim | Rw::Randtrim => 0,
            Rw::Rw | Rw::Randrw => mix,
        }
    }

    pub fn writes(self, mix: u8) -> bool {
        self.read_pct(mix) < 100
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Time(Duration),
    /// Total bytes over all threads.
    Data(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncKind {
    Fsync,
    Fdatasync,
}

/// `--latency-target p99=2ms`: a percentile (0–100) and the latency it must stay under.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    pub percentile: f64,
    pub limit: Duration,
}

pub fn parse_latency_target(s: &str) -> Result<LatencyTarget, String> {
    let (p, d) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': write a percentile and a latency, e.g. p99=2ms"))?;
    let pct: f64 = p
        .trim_start_matches(['p', 'P'])
        .parse()
        .map_err(|_| format!("'{p}' is not a percentile like p99 or p99.9"))?;
    if !(pct > 0.0 && pct < 100.0) {
        return Err(format!("{p}: the percentile must be between p0 and p100"));
    }
    // A bare number would be seconds, as for every other duration, which no latency target
    // means: `p99=2` is refused rather than read as two seconds.
    if d.trim().parse::<f64>().is_ok() {
        return Err(format!(
            "'{s}': give the latency with its unit, e.g. p99=2ms or p99=500us"
        ));
    }
    let limit = crate::units::parse_duration(d)?;
    if limit.is_zero() {
        return Err("the latency target must be more than 0".into());
    }
    Ok(LatencyTarget {
        percentile: pct,
        limit,
    })
}

/// Bytes of IO buffers `threads` × `iodepth` blocks of `bs` take, when they take more than
/// [`MAX_BUFFER_SHARE_OF_RAM`] of `ram` bytes (0: unknown, anything goes).
pub fn buffers_over_share(threads: u32, iodepth: u32, bs: u64, ram: u64) -> Option<u64> {
    let buffers = u64::from(threads) * u64::from(iodepth) * bs;
    (ram > 0 && buffers as f64 > ram as f64 * MAX_BUFFER_SHARE_OF_RAM).then_some(buffers)
}

/// What a workload may add to one block size over one shared range — fio's block-size mixes,
/// `rw=…:N` and `offset_increment`. The default is none of them: the plain, fastest path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    /// Sizes per direction drawn per IO (fio's `bs=R,W`, `bsrange`, `bssplit`).
    pub mix: Option<BsMix>,
    /// Random patterns: IOs issued one after another before the next random offset (fio's
    /// `rw=randread:N`); 0 and 1 mean a random offset for every IO.
    pub seq_run: u32,
    /// Sequential patterns: bytes skipped after each IO (fio's `rw=read:N`); negative walks
    /// backwards (`rw=read:-8k` after 4 KiB IOs reads each block before the last).
    pub seq_skip: i64,
    /// Thread `i`'s region starts `i × stride` bytes into the range and each region is the
    /// range less `(threads − 1) × stride` (fio's `offset_increment`: a clone per region).
    pub stride: Option<u64>,
    /// fio's zonemode=strided: IO in one zone at a time (plain path only).
    pub zones: Option<Strided>,
    /// fio's zonemode=zbd on a target that is not zoned: writes at emulated write pointers
    /// (plain path only).
    pub zbd: Option<zbd::Zbd>,
    /// fio's sprandom: random writes in regions, a share of each written again in the next
    /// (plain path only, random writes).
    pub spr: Option<sprandom::Spr>,
    /// What each write carries; by default unique, incompressible bytes.
    pub content: Content,
}

/// fio's strided zones: a thread's IO stays in a zone of `range` bytes (sequential IO wraps in
/// it, random IO lands in it) until `size` bytes have moved, then the next zone starts `range +
/// skip` bytes further on, back at the region's start past its end. All whole blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strided {
    pub range: u64,
    pub size: u64,
    pub skip: u64,
}

impl Shape {
    pub fn is_plain(&self) -> bool {
        self.mix.is_none() && self.seq_run <= 1 && self.seq_skip == 0 && self.stride.is_none()
    }
}

/// How a job that spreads its IO over several files picks the file of each IO (fio's
/// `file_service_type`). Each file keeps its own offsets either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileService {
    /// The next file after this many IOs (fio's default, `roundrobin:1`).
    RoundRobin(u32),
    /// A file's pass (its region's worth of IOs), then the next file.
    Sequential,
    /// A uniformly random file, kept for this many IOs.
    Random(u32),
}

impl Default for FileService {
    fn default() -> FileService {
        FileService::RoundRobin(1)
    }
}

impl std::fmt::Display for FileService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileService::RoundRobin(1) => write!(f, "roundrobin"),
            FileService::RoundRobin(n) => write!(f, "roundrobin:{n}"),
            FileService::Sequential => write!(f, "sequential"),
            FileService::Random(1) => write!(f, "random"),
            FileService::Random(n) => write!(f, "random:{n}"),
        }
    }
}

/// A checked workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub rw: Rw,
    /// Block size; with a mix ([`Shape::mix`]) the mix's *smallest* size, which the data
    /// budgets and the block counts of checks are in.
    pub bs: BlockSize,
    pub threads: u32,
    pub iodepth: u32,
    pub engine: EngineKind,
    pub direct: bool,
    pub mix_read_pct: u8,
    /// Sync after every N writes.
    pub sync: Option<(SyncKind, u32)>,
    pub odsync: bool,
    pub seed: u64,
    pub limit: Limit,
    pub ramp: Duration,
    pub interval: Duration,
    pub uring: UringOptions,
    /// Queued IOs handed to the kernel at a time (see `--submit-batch`).
    pub submit_batch: u32,
    /// Completions waited for at a time (see `--complete-batch`); 0 is auto: the worker first
    /// tries waiting for one, for half and for all in flight ([`CALIBRATION`]) and keeps the
    /// fastest.
    pub complete_batch: u32,
    /// Where random IOs land.
    pub distribution: Distribution,
    /// IOs per second per thread on a schedule (`--rate`), or as fast as possible.
    pub rate_per_thread: Option<f64>,
    /// The schedule's gaps drawn from an exponential distribution of mean 1/rate (arrivals as
    /// a Poisson process, fio's `rate_process=poisson`), not all equal.
    pub rate_poisson: bool,
    /// Pauses between bursts of IO (fio's thinktime), or none.
    pub think: Option<Think>,
    /// IO priorities (fio's prioclass/prio and cmdprio_*), or the kernel's default.
    pub prio: Option<Prio>,
    /// A share of the IOs of the streams in one flow (fio's flow), or a pace of its own.
    pub flow: Option<Flow>,
    /// Where its threads run and take memory from (fio's cpus_allowed, numa_*), or anywhere.
    pub placement: Option<Placement>,
    /// Block-size mix, `:N` and per-thread regions; the default for most workloads.
    pub shape: Shape,
    /// Which file each IO goes to when the target is several files (fio's `nrfiles`).
    pub file_service: FileService,
    /// Each interval's histogram kept (see `plan::Env::interval_hists`).
    pub interval_hists: bool,
    /// The IO errors it counts and goes on after (fio's continue_on_error); none stops it.
    pub tolerate: Option<Tolerate>,
    /// fio's `atomic=1`: every write carries RWF_ATOMIC, stored whole or not at all.
    pub atomic: bool,
}

/// A stream's place among the streams of its cell (fio's `startdelay`, `new_group` and
/// `exitall`): how long after the cell's start it starts, its reporting group, and what its end
/// ends. The default is the others' start and an end of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Beside {
    pub delay: Duration,
    /// fio's reporting group (a new one at each `stonewall` or `new_group`).
    pub group: u32,
    pub ends: Ends,
}

/// What a stream's end ends (fio's `exitall` with `exit_what`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ends {
    /// Only itself.
    #[default]
    Own,
    /// The streams of its reporting group (`exit_what=group`, fio's default).
    Group,
    /// Every stream of its cell (`exit_what=stonewall`).
    Cell,
    /// Every stream of its cell and every cell after it (`exit_what=all`): they never start.
    Later,
}

/// fio's thinktime: a thread issues at most `blocks` IOs (or IO for `iotime`, if that comes
/// first), lets every IO in flight complete, then spins for `spin` and sleeps the rest of
/// `pause`: an application that does work between its bursts of IO. The pause counts in the
/// measured time (as in fio), not in any IO's latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Think {
    pub pause: Duration,
    pub spin: Duration,
    pub blocks: u32,
    pub iotime: Option<Duration>,
}

/// fio's flow: the threads of every stream running at once with the same `id` share their IOs
/// by `weight` (a thread of weight 8 issues about 8 IOs for each one of a thread of weight 1 in
/// its flow). A thread ahead of its share issues nothing until the others catch up; with
/// `sleep`, it first lets its IOs in flight complete, then sleeps that long (fio's flow_sleep).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flow {
    pub id: u32,
    pub weight: u32,
    pub sleep: Duration,
}

/// IO priorities as Linux takes them (ioprio values: class << 13 | hint << 3 | level): the
/// threads' own, which every IO without one of its own carries (fio's prioclass and prio), and
/// for reads and for writes the shares of IOs, drawn per IO, that carry a value of their own
/// (fio's cmdprio_percentage or cmdprio_bssplit; io_uring's per-IO priority).
#[derive(Clone, Debug, PartialEq)]
pub struct Prio {
    pub thread: Option<u16>,
    pub per_io: [Vec<CmdPrio>; 2],
}

/// A share (percent) of the IOs of one size (`bs`), or of any, with a priority of their own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CmdPrio {
    pub bs: Option<u64>,
    pub pct: u8,
    pub value: u16,
}

impl Prio {
    pub const RT: u8 = 1;
    pub const BE: u8 = 2;
    pub const IDLE: u8 = 3;

    pub fn value(class: u8, level: u8) -> u16 {
        (u16::from(class) << 13) | u16::from(level)
    }

    /// The priority of an IO of its own (0: the thread's), given a draw `u` in 0..100: the
    /// shares of its direction that match its size, in order.
    #[inline]
    pub fn draw(&self, read: bool, len: u32, u: u8) -> u16 {
        let mut below = 0u16;
        for e in &self.per_io[usize::from(!read)] {
            if e.bs.is_none_or(|b| b == u64::from(len)) {
                below += u16::from(e.pct);
                if u16::from(u) < below {
                    return e.value;
                }
            }
        }
        0
    }

    pub fn any_per_io(&self) -> bool {
        self.per_io.iter().any(|d| !d.is_empty())
    }

    /// `rt/0`, `be/4`, `idle` (whose level means nothing), as ionice names them, and a hint
    /// after `+` when there is one.
    pub fn label(value: u16) -> String {
        let level = value & 7;
        let class = match (value >> 13) as u8 {
            Prio::RT => format!("rt/{level}"),
            Prio::BE => format!("be/{level}"),
            Prio::IDLE => "idle".to_string(),
            _ => "none".to_string(),
        };
        match (value >> 3) & 0x3ff {
            0 => class,
            hint => format!("{class}+hint {hint}"),
        }
    }

    /// Each share of IOs with a priority of its own, e.g. `20% of reads rt/0`, `25% of 64K
    /// writes rt/1`.
    pub fn shares(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (d, name) in [(0, "reads"), (1, "writes")] {
            for e in &self.per_io[d] {
                let of = match e.bs {
                    Some(b) => format!("{} {name}", crate::units::bs_label(b)),
                    None => name.to_string(),
                };
                out.push(format!("{}% of {of} {}", e.pct, Prio::label(e.value)));
            }
        }
        out
    }
}

/// A target rate of IOs per second, for all threads together or for each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub iops: f64,
    pub per_thread: bool,
    /// Planned starts a Poisson process (fio's rate_process=poisson), not evenly spaced.
    pub poisson: bool,
}

impl Rate {
    /// Each of `threads` threads' share.
    pub fn per_thread(self, threads: u32) -> f64 {
        match self.per_thread {
            true => self.iops,
            false => self.iops / f64::from(threads.max(1)),
        }
    }
}

/// The shortest measurement iogauge takes: one bin of its fine time series. Anything shorter
/// measures start-up alone (`--time 1ms` reported 0 IOPS and a stall "during the whole run").
pub const MIN_TIME: Duration = Duration::from_millis(100);

/// Why a cell of length `t` cannot be measured, if it cannot: the tail of a message after the
/// flag or key that gave it.
pub fn too_short(t: Duration) -> Option<String> {
    (t < MIN_TIME).then(|| {
        format!(
            "is shorter than one {} bin of iogauge's time series, too short to measure anything; give at least {0} (seconds for numbers to quote)",
            crate::units::duration(MIN_TIME)
        )
    })
}

/// How long an auto `--complete-batch` warms up and tries its three ways of waiting, before the
/// ramp (see `runner::worker`).
pub const CALIBRATION: Duration = Duration::from_millis(700);

impl Spec {
    /// Time from the start to the measurement: the calibration of an auto complete batch, then
    /// the ramp.
    pub fn lead_in(&self) -> Duration {
        let calibration = if self.complete_batch == 0 {
            CALIBRATION
        } else {
            Duration::ZERO
        };
        calibration + self.ramp
    }

    pub fn writes(&self) -> bool {
        self.mix_read_pct < 100
    }

    /// Per-thread shares of a fixed amount of data, in whole blocks; `None` for a timed one.
    pub fn data_budgets(&self) -> Option<Vec<u64>> {
        let Limit::Data(total) = self.limit else {
            return None;
        };
        let blocks = total.div_ceil(self.bs.bytes());
        let n = u64::from(self.threads);
        Some(
            (0..n)
                .map(|i| (blocks / n + u64::from(i < blocks % n)) * self.bs.bytes())
                .collect(),
        )
    }

    /// The largest IO this workload issues: what each buffer holds.
    pub fn max_bs(&self) -> u64 {
        self.shape
            .mix
            .as_ref()
            .map_or(self.bs.bytes(), |m| m.max().max(self.bs.bytes()))
    }

    /// The mean IO size (bytes per IO, for progress and pacing).
    pub fn mean_bs(&self) -> f64 {
        self.shape
            .mix
            .as_ref()
            .map_or(self.bs.bytes() as f64, |m| m.mean(self.mix_read_pct))
    }

    /// Bytes of each thread's region: the range, less the strides of `offset_increment`.
    pub fn region_bytes(&self, range_bytes: u64) -> u64 {
        match self.shape.stride {
            Some(s) => range_bytes.saturating_sub(s * u64::from(self.threads.saturating_sub(1))),
            None => range_bytes,
        }
    }

    /// Checks what depends on the target: the block size against its logical block size under
    /// O_DIRECT, and that every thread's stream has at least one block.
    pub fn check_target(&self, range_bytes: u64, logical_block: u32) -> anyhow::Result<()> {
        if self.direct
            && !self
                .shape
                .seq_skip
                .unsigned_abs()
                .is_multiple_of(u64::from(logical_block))
        {
            return Err(usage(format!(
                "a skip of {} bytes between sequential IOs is not a multiple of the device's logical block size ({} bytes), which O_DIRECT requires",
                self.shape.seq_skip, logical_block
            )));
        }
        if let Some(s) = self.shape.spr {
            // fio's region_write_count: at least one write in each region.
            if range_bytes / self.bs.bytes().max(1) < u64::from(s.regions) {
                return Err(usage(format!(
                    "sprandom's {} regions need at least a block each, and the range holds {} blocks of {}; give a larger size or fewer regions (spr_num_regions)",
                    s.regions,
                    range_bytes / self.bs.bytes().max(1),
                    crate::units::bs_label(self.bs.bytes())
                )));
            }
        }
        if let (Distribution::Sequence(s), true) = (&self.distribution, self.rw.random()) {
            let blocks = range_bytes / self.bs.bytes().max(1);
            if s.needs() > blocks {
                return Err(usage(format!(
                    "the sequence reaches block {}, past the range's last ({} blocks of {}); give a larger size or smaller indices",
                    s.needs() - 1,
                    blocks,
                    crate::units::bs_label(self.bs.bytes())
                )));
            }
        }
        let slice = range_bytes / u64::from(self.threads.max(1));
        if self.shape.seq_skip < 0 && self.shape.seq_skip.unsigned_abs() > slice {
            return Err(usage(format!(
                "a backwards skip of {} bytes is longer than each thread's part of the range ({} bytes); give a smaller skip or a larger size",
                self.shape.seq_skip.unsigned_abs(),
                slice
            )));
        }
        if let Some(m) = &self.shape.mix {
            // Each thread's own region: the range (random), its slice (sequential), or its
            // offset_increment region; each must hold the largest size.
            // (A sequential slice is whole units of the smallest size, as `Offsets::of` cuts it.)
            let region = match (self.rw.random(), self.shape.stride) {
                (false, None) => {
                    let unit = m.min().max(1);
                    range_bytes / unit / u64::from(self.threads.max(1)) * unit
                }
                _ => self.region_bytes(range_bytes),
            };
            if region < m.max() {
                return Err(usage(format!(
                    "each thread's region ({}) is smaller than the mix's largest block ({}); use a larger size",
                    crate::units::iec(region),
                    crate::units::bs_label(m.max())
                )));
            }
            if self.direct {
                if let Some(b) = m
                    .all()
                    .find(|w| !w.bs.is_multiple_of(u64::from(logical_block)))
                {
                    return Err(usage(format!(
                        "block size {} of the mix is not a multiple of the device's logical block size ({} bytes), which O_DIRECT requires",
                        crate::units::bs_label(b.bs),
                        logical_block
                    )));
                }
            }
            return Ok(());
        }
        if let Some(s) = self.shape.stride {
            let region = self.region_bytes(range_bytes);
            if region < self.bs.bytes()
                || s * u64::from(self.threads.saturating_sub(1)) >= range_bytes
            {
                return Err(usage(format!(
                    "{} threads {} apart leave each a region of {}, less than one block of {}",
                    self.threads,
                    crate::units::iec(s),
                    crate::units::iec(region),
                    crate::units::bs_label(self.bs.bytes())
                )));
            }
        }
        if range_bytes < self.bs.bytes() {
            return Err(usage(format!(
                "the target range is {}, smaller than one block (--bs {}); use a larger --size or a smaller --bs",
                crate::units::iec(range_bytes),
                crate::units::bs_label(self.bs.bytes())
            )));
        }
        if self.direct && !self.bs.bytes().is_multiple_of(u64::from(logical_block)) {
            return Err(usage(format!(
                "--bs {} is not a multiple of the device's logical block size ({} bytes), which O_DIRECT requires; use --bs {} or --buffered",
                crate::units::bs_label(self.bs.bytes()),
                logical_block,
                crate::units::bs_label(self.bs.bytes().next_multiple_of(u64::from(logical_block)))
            )));
        }
        if !self.rw.random()
            && self.shape.stride.is_none()
            && range_bytes / self.bs.bytes() < u64::from(self.threads)
        {
            return Err(usage(format!(
                "{} threads need at least {} blocks of {} for their sequential streams, the range has {}; use fewer --threads or a larger --size",
                self.threads,
                self.threads,
                crate::units::iec(self.bs.bytes()),
                range_bytes / self.bs.bytes()
            )));
        }
        Ok(())
    }
}
