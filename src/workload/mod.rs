//! A workload as the user typed it, resolved into a checked [`Spec`]: every cross-option rule
//! lives here (fio's `fixup_options`), so the runner can trust what it gets.

pub mod offsets;

use crate::cli::{EngineArg, RunArgs, SyncMode};
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

impl From<EngineArg> for EngineKind {
    fn from(a: EngineArg) -> EngineKind {
        match a {
            EngineArg::IoUring => EngineKind::IoUring,
            EngineArg::Psync => EngineKind::Psync,
            EngineArg::Null => EngineKind::Null,
        }
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
}

impl Spec {
    /// Checks everything that does not depend on the target.
    pub fn resolve(args: &RunArgs) -> anyhow::Result<(Spec, Vec<String>)> {
        let w = &args.workload;
        let t = &args.target;
        let mut notes = Vec::new();
        if w.bs == 0 {
            return Err(usage(
                "--bs 0: the block size must be at least 512 bytes, e.g. --bs 4k",
            ));
        }
        if w.bs < MIN_BS || w.bs > MAX_BS || !w.bs.is_multiple_of(MIN_BS) {
            return Err(usage(format!(
                "--bs {}: the block size must be a multiple of 512 bytes between 512 and 64MiB, e.g. 4k or 1m",
                w.bs
            )));
        }
        check_count("--threads", w.threads, MAX_THREADS)?;
        check_count("--iodepth", w.iodepth, MAX_IODEPTH)?;
        let engine = EngineKind::from(t.engine);
        let mut iodepth = w.iodepth;
        if engine == EngineKind::Psync && iodepth > 1 {
            notes.push(format!(
                "psync keeps one IO in flight per thread; --iodepth {iodepth} is ignored (use --threads {} or --engine io_uring)",
                w.threads * iodepth
            ));
            iodepth = 1;
        }
        let sync =
            match (w.fsync, w.fdatasync) {
                (Some(0), _) | (_, Some(0)) => return Err(usage(
                    "--fsync/--fdatasync 0: give how many writes go between syncs, e.g. --fsync 1",
                )),
                (Some(n), _) => Some((SyncKind::Fsync, n)),
                (_, Some(n)) => Some((SyncKind::Fdatasync, n)),
                _ => None,
            };
        let rw = w.rw;
        if sync.is_some() && !rw.writes(w.mix) {
            return Err(usage(format!(
                "--fsync/--fdatasync with --rw {} does nothing: syncs follow writes; use --rw write or randwrite",
                rw.name()
            )));
        }
        let limit = match (w.time, w.data) {
            (_, Some(0)) => {
                return Err(usage("--data 0: give an amount of data, e.g. --data 4GiB"))
            }
            (_, Some(d)) if d < w.bs => {
                return Err(usage(format!(
                    "--data {d} is less than one block (--bs {}); give more data",
                    w.bs
                )))
            }
            (_, Some(d)) => Limit::Data(d),
            (Some(t), None) if t.is_zero() => {
                return Err(usage("--time 0: give a duration, e.g. --time 10s"))
            }
            (Some(t), None) => Limit::Time(t),
            (None, None) => Limit::Time(Duration::from_secs(10)),
        };
        if w.interval < Duration::from_millis(100) {
            return Err(usage(
                "--interval is shorter than 100ms; give e.g. --interval 1s",
            ));
        }
        let direct = !t.buffered;
        let buffers = u64::from(w.threads) * u64::from(iodepth) * w.bs;
        let ram = iogauge_engine::sys::total_memory();
        if ram > 0 && buffers as f64 > ram as f64 * MAX_BUFFER_SHARE_OF_RAM {
            return Err(usage(format!(
                "the IO buffers would take {} ({} threads × {} in flight × {}), more than a quarter of RAM ({}); lower --threads, --iodepth or --bs",
                crate::units::iec(buffers),
                w.threads,
                iodepth,
                crate::units::iec(w.bs),
                crate::units::iec(ram)
            )));
        }
        let spec = Spec {
            rw,
            bs: w.bs,
            threads: w.threads,
            iodepth,
            engine,
            direct,
            mix_read_pct: rw.read_pct(w.mix),
            sync,
            odsync: w.sync_mode == SyncMode::Odsync,
            seed: w.seed,
            limit,
            ramp: w.ramp,
            interval: w.interval,
            uring: UringOptions {
                sqpoll: t.sqpoll,
                hipri: t.hipri,
                no_register: t.no_register,
            },
            submit_batch: t.submit_batch,
        };
        Ok((spec, notes))
    }

    pub fn writes(&self) -> bool {
        self.mix_read_pct < 100
    }

    /// Checks what depends on the target: the block size against its logical block size under
    /// O_DIRECT, and that every thread's stream has at least one block.
    pub fn check_target(&self, range_bytes: u64, logical_block: u32) -> anyhow::Result<()> {
        if range_bytes < self.bs {
            return Err(usage(format!(
                "the target range is {} bytes, smaller than one block (--bs {}); use a larger --size or a smaller --bs",
                range_bytes, self.bs
            )));
        }
        if self.direct && !self.bs.is_multiple_of(u64::from(logical_block)) {
            return Err(usage(format!(
                "--bs {} is not a multiple of the device's logical block size ({} bytes), which O_DIRECT requires; use --bs {} or --buffered",
                self.bs,
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

fn check_count(flag: &str, v: u32, max: u32) -> anyhow::Result<()> {
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
