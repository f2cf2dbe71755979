//! A result's workload as its document records it: what was issued, how paced, and where.

use crate::units;
use crate::workload::{Rw, Spec, SyncKind};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkloadDoc {
    pub rw: Rw,
    /// Block size in bytes; with a mix (`bs_mix`), the mix's smallest size.
    pub bs: u64,
    /// The sizes and weights of a block-size mix (fio's `bssplit`, `bsrange`, `bs=R,W`), per
    /// direction; absent for one size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_mix: Option<crate::workload::BsMix>,
    /// Random patterns: IOs per random offset, the others following the last (fio's
    /// `rw=randread:N`); absent for a random offset every IO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_run: Option<u32>,
    /// Sequential patterns: bytes skipped after each IO (fio's `rw=read:N`), negative when
    /// the IOs walk backwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_skip: Option<i64>,
    /// Thread `i`'s region starts `i ×` this many bytes into the range (fio's
    /// `offset_increment`); absent when the threads share the range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_increment: Option<u64>,
    pub threads: u32,
    pub iodepth: u32,
    pub engine: String,
    pub direct: bool,
    pub mix_read_pct: u8,
    pub sync: Option<SyncKind>,
    pub sync_every: Option<u32>,
    pub odsync: bool,
    /// Every write carried RWF_ATOMIC (fio's atomic=1): stored whole or not at all, as the
    /// target promised.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub atomic: bool,
    pub seed: u64,
    /// Fixed time in seconds, or null for a fixed amount of data.
    pub time_s: Option<f64>,
    /// Fixed amount of data in bytes, or null for a fixed time.
    pub data_bytes: Option<u64>,
    pub ramp_s: f64,
    pub interval_s: f64,
    /// Target IOs per second over all threads (`--rate`), or null for as fast as possible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
    /// The schedule's arrivals: "poisson" (`--poisson`, fio's rate_process=poisson), absent
    /// for evenly spaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_process: Option<String>,
    /// Where random IOs landed: "uniform" unless --distribution said otherwise.
    #[serde(default = "uniform", skip_serializing_if = "is_uniform")]
    pub distribution: String,
    /// Pauses between bursts of IO (fio's thinktime), absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<ThinkDoc>,
    /// fio's strided zones (zonemode=strided), absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<ZonesDoc>,
    /// fio's zonemode=zbd on a target that is not zoned, absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zbd: Option<ZbdDoc>,
    /// fio's sprandom: its over-provisioning and regions, absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprandom: Option<SprDoc>,
    /// IO priorities (fio's prioclass, prio, cmdprio_*), absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prio: Option<PrioDoc>,
    /// fio's flow: this stream's weight among the streams of its flow, absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowDoc>,
    /// Where its threads ran (fio's cpus_allowed, numa_*), as its cell's name says it: "CPUs
    /// 0-3 one each · memory bind:0"; absent for the kernel's choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// What the writes carried when asked to be compressible or repeated (fio's
    /// buffer_compress_*, dedupe_*), absent for iogauge's unique, incompressible bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ContentDoc>,
}

/// What the writes carried: `compress_pct` of each chunk of `chunk_bytes` zeros after random
/// bytes, and `dedupe_pct` of writes repeating an earlier one — the thread's last unique write
/// (`repeats: "last"`) or one of a working set of the first unique writes, `working_set_pct`
/// of the range, of every thread that sets `global`, or the thread's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContentDoc {
    pub compress_pct: u8,
    pub chunk_bytes: u64,
    pub dedupe_pct: u8,
    pub repeats: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_set_pct: Option<u8>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
}

impl ContentDoc {
    fn of(c: &crate::workload::Content) -> Option<ContentDoc> {
        use crate::workload::Repeats;
        (!c.is_plain()).then(|| ContentDoc {
            compress_pct: c.compress,
            chunk_bytes: c.chunk_bytes() as u64,
            dedupe_pct: c.dedupe,
            repeats: match c.repeats {
                Repeats::Last => "last",
                Repeats::WorkingSet { .. } => "working_set",
            }
            .to_string(),
            working_set_pct: match c.repeats {
                Repeats::WorkingSet { pct, .. } => Some(pct),
                Repeats::Last => None,
            },
            global: matches!(c.repeats, Repeats::WorkingSet { global: true, .. }),
        })
    }
}

/// fio's flow as a result records it: each thread issued about `weight` IOs for each one of a
/// thread of weight 1 in flow `id` while they ran at once, sleeping `sleep_us` (after its IOs
/// in flight completed) whenever it was ahead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowDoc {
    pub id: u32,
    pub weight: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sleep_us: f64,
}

/// fio's strided zones as a result records them: each thread moved `size_bytes` in a zone of
/// `range_bytes`, then went `range_bytes + skip_bytes` on to the next (its region's start
/// again past its end).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZonesDoc {
    pub range_bytes: u64,
    pub size_bytes: u64,
    pub skip_bytes: u64,
}

/// fio's zonemode=zbd as a result records it: writes at write pointers iogauge kept in zones of
/// `zone_bytes` (every zone empty at the start, as fio emulates them), at most
/// `max_open_zones` written at once (0: no limit), and with a reset frequency one write in
/// every 1/frequency resetting its zone once the zones held the threshold's share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZbdDoc {
    pub zone_bytes: u64,
    pub max_open_zones: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_threshold: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_frequency: Option<f64>,
}

/// fio's sprandom as a result records it: the over-provisioning (`spr_op`) and the regions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprDoc {
    pub op: f64,
    pub regions: u32,
}

/// IO priorities as a result records them, as ionice names them (`rt/0`, `be/4`, `idle`): the
/// threads' own, and each share of IOs that carried one of their own (`20% of reads rt/0`,
/// `25% of 64K writes rt/1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrioDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_io: Vec<String>,
}

impl PrioDoc {
    fn of(p: &crate::workload::Prio) -> PrioDoc {
        PrioDoc {
            thread: p.thread.map(crate::workload::Prio::label),
            per_io: p.shares(),
        }
    }
}

/// fio's thinktime as a result records it: each thread paused `pause_us` (spinning `spin_us`
/// of it) once every IO in flight had completed, after every `blocks` IOs issued or `iotime_s`
/// of IO, whichever came first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThinkDoc {
    pub pause_us: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spin_us: f64,
    /// Absent when only `iotime_s` bounds the IO between pauses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iotime_s: Option<f64>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl ThinkDoc {
    fn of(t: &crate::workload::Think) -> ThinkDoc {
        ThinkDoc {
            pause_us: t.pause.as_secs_f64() * 1e6,
            spin_us: t.spin.as_secs_f64() * 1e6,
            blocks: Some(t.blocks).filter(|b| *b != u32::MAX),
            iotime_s: t.iotime.map(|d| d.as_secs_f64()),
        }
    }
}

fn uniform() -> String {
    "uniform".into()
}

fn is_uniform(s: &String) -> bool {
    s == "uniform"
}

impl WorkloadDoc {
    /// The workload in a few words, e.g. `randread 4K 1×32 io_uring`: how `list`, `compare`
    /// and a sweep name a result that has no name of its own.
    pub fn short(&self) -> String {
        let w = self;
        let mut s = w.rw.name().to_string();
        if matches!(s.as_str(), "rw" | "randrw") {
            let _ = write!(s, " {}%r", w.mix_read_pct);
        }
        let _ = write!(
            s,
            " {} {}×{} {}",
            units::bs_label(w.bs),
            w.threads,
            w.iodepth,
            w.engine
        );
        if !w.direct {
            s.push_str(" buffered");
        }
        if let (Some(_), Some(n)) = (w.sync, w.sync_every) {
            let _ = write!(s, " sync/{n}");
        }
        if w.odsync {
            s.push_str(" O_DSYNC");
        }
        if w.atomic {
            s.push_str(" atomic");
        }
        if let Some(t) = &w.think {
            let _ = write!(
                s,
                " think {}",
                units::duration(std::time::Duration::from_secs_f64(t.pause_us / 1e6))
            );
            if let Some(b) = t.blocks.filter(|b| *b > 1) {
                let _ = write!(s, "/{b}");
            }
        }
        s
    }

    pub fn of(spec: &Spec) -> WorkloadDoc {
        use crate::workload::Limit;
        let (time_s, data_bytes) = match spec.limit {
            Limit::Time(t) => (Some(t.as_secs_f64()), None),
            Limit::Data(d) => (None, Some(d)),
        };
        WorkloadDoc {
            rw: spec.rw,
            bs: spec.bs.bytes(),
            bs_mix: spec.shape.mix.clone(),
            seq_run: Some(spec.shape.seq_run).filter(|n| *n > 1 && spec.rw.random()),
            seq_skip: Some(spec.shape.seq_skip).filter(|n| *n != 0 && !spec.rw.random()),
            offset_increment: spec.shape.stride,
            threads: spec.threads,
            iodepth: spec.iodepth,
            engine: spec.engine.name().to_string(),
            direct: spec.direct,
            mix_read_pct: spec.mix_read_pct,
            sync: spec.sync.map(|s| s.0),
            sync_every: spec.sync.map(|s| s.1),
            odsync: spec.odsync,
            atomic: spec.atomic,
            seed: spec.seed,
            time_s,
            data_bytes,
            ramp_s: spec.ramp.as_secs_f64(),
            interval_s: spec.interval.as_secs_f64(),
            distribution: spec.distribution.to_string(),
            rate_iops: spec.rate_per_thread.map(|r| r * f64::from(spec.threads)),
            rate_process: (spec.rate_poisson && spec.rate_per_thread.is_some())
                .then(|| "poisson".to_string()),
            think: spec.think.as_ref().map(ThinkDoc::of),
            prio: spec.prio.as_ref().map(PrioDoc::of),
            flow: spec.flow.map(|f| FlowDoc {
                id: f.id,
                weight: f.weight,
                sleep_us: f.sleep.as_secs_f64() * 1e6,
            }),
            zones: spec.shape.zones.map(|z| ZonesDoc {
                range_bytes: z.range,
                size_bytes: z.size,
                skip_bytes: z.skip,
            }),
            zbd: spec.shape.zbd.map(|z| ZbdDoc {
                zone_bytes: z.zone,
                max_open_zones: z.max_open,
                reset_threshold: z.reset.map(|r| r.0),
                reset_frequency: z.reset.map(|r| r.1),
            }),
            sprandom: spec.shape.spr.map(|s| SprDoc {
                op: s.op,
                regions: s.regions,
            }),
            content: ContentDoc::of(&spec.shape.content),
            placement: spec.placement.as_ref().map(ToString::to_string),
        }
    }
}
