//! A workload: its patterns, limits and the checked [`Spec`] the runner runs. Specs are built
//! in one place, `exec::work::of`, from a plan's cell, so the runner can trust what it gets.

pub mod distribution;
pub mod offsets;

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
pub const MIN_BS: u64 = 512;
pub const MAX_BS: u64 = 64 << 20;
/// Share of RAM the IO buffers may take.
pub const MAX_BUFFER_SHARE_OF_RAM: f64 = 0.25;

// `Rw::Rw` is fio's name for the sequential mix; users type it, so the variant keeps it.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
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
        }
    }

    pub fn random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite | Rw::Randrw)
    }

    /// Percentage of reads this pattern issues, given the mix for the mixed patterns.
    pub fn read_pct(self, mix: u8) -> u8 {
        match self {
            Rw::Read | Rw::Randread => 100,
            Rw::Write | Rw::Randwrite => 0,
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

/// A checked workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub rw: Rw,
    pub bs: u64,
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
    /// Completions waited for at a time (see `--complete-batch`).
    pub complete_batch: u32,
    /// Where random IOs land.
    pub distribution: Distribution,
    /// IOs per second per thread on a schedule (`--rate`), or as fast as possible.
    pub rate_per_thread: Option<f64>,
}

impl Spec {
    pub fn writes(&self) -> bool {
        self.mix_read_pct < 100
    }

    /// Checks what depends on the target: the block size against its logical block size under
    /// O_DIRECT, and that every thread's stream has at least one block.
    pub fn check_target(&self, range_bytes: u64, logical_block: u32) -> anyhow::Result<()> {
        if range_bytes < self.bs {
            return Err(usage(format!(
                "the target range is {}, smaller than one block (--bs {}); use a larger --size or a smaller --bs",
                crate::units::iec(range_bytes),
                crate::units::bs_label(self.bs)
            )));
        }
        if self.direct && !self.bs.is_multiple_of(u64::from(logical_block)) {
            return Err(usage(format!(
                "--bs {} is not a multiple of the device's logical block size ({} bytes), which O_DIRECT requires; use --bs {} or --buffered",
                crate::units::bs_label(self.bs),
                logical_block,
                crate::units::bs_label(self.bs.next_multiple_of(u64::from(logical_block)))
            )));
        }
        if !self.rw.random() && range_bytes / self.bs < u64::from(self.threads) {
            return Err(usage(format!(
                "{} threads need at least {} blocks of {} for their sequential streams, the range has {}; use fewer --threads or a larger --size",
                self.threads,
                self.threads,
                crate::units::iec(self.bs),
                range_bytes / self.bs
            )));
        }
        Ok(())
    }
}
