//! Findings: the problems iogauge names in its measurements, the ones the seed studies' authors
//! found by hand — ~10 s freezes and RAID5 write "gaps" ("One DVD per second"), a 65K IOPS ceiling that was a
//! file-system lock rather than the disks ("100K+ IOPS on semi-commodity hardware"), caches measured instead of disks (MySQL "Solid State Disk Benchmarking"
//! and "100K+ IOPS on semi-commodity hardware"), and runs judged before the device settled.
//!
//! Every check is a pure function over plain numbers returning `Vec<Finding>`; the main crate
//! converts its results into these inputs, sets [`Finding::result`] with
//! [`Finding::for_result`] and stores the findings with the run.
//!
//! | check | kind | what it names |
//! |---|---|---|
//! | [`stalls`] | `stall` | stretches of a run where (almost) no IO completed |
//! | [`ceiling`] | `ceiling` | IOPS or bandwidth that stops growing with outstanding IO, threads or block size |
//! | [`gaps`] | `gap` | cells of a block size × series matrix far below their neighbours' trend |
//! | [`outliers`] | `outlier` | repeats the statistics flagged, with the mean with and without them |
//! | [`cache`] | `cache` | buffered IO over a working set that fits in RAM; bandwidth beyond the device |
//! | [`sparse`] | `sparse` | read targets with holes or unwritten extents |
//! | [`steady`] | `steady` | the SNIA PTS steady-state test over the last intervals |
//! | [`regime`] | `regime` | a rate that moved to another level and stayed (burst credits, an SLC cache) |
//! | [`stragglers`] | `straggler` | one host of a run on many (MPI) far from the others |
//! | [`scaling`] | `scaling` | the member count after which one more member of an array adds little, and what limits it |
//! | [`checkpoint`] | `checkpoint` | a database's TPS dip lined up with a checkpoint (or InnoDB flushing) and a saturated device |
//!
//! # Thresholds
//!
//! All limits live in [`Thresholds`]; `Thresholds::default()` holds the defaults,
//! [`Thresholds::entries`] names each with its value and meaning (`iogauge report
//! --list-thresholds` prints them, and a thresholds file may use only those names), and
//! [`Thresholds::validate`] checks values a user typed.
//!
//! The steady-state window itself (5 intervals in SNIA PTS) is an argument of [`steady`], with
//! [`STEADY_WINDOW`] as its default.
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests

mod align;
mod cache;
mod ceiling;
mod checkpoint;
mod device;
mod finding;
mod fmt;
mod gaps;
mod knee;
mod memory;
mod outliers;
mod regime;
mod scaling;
mod short;
mod sparse;
mod stalls;
mod steady;
mod straggler;
mod thresholds;

pub use align::{misaligned, Placed, Stripe};
pub use cache::cache;
pub use ceiling::{ceiling, levels_off, CeilingPoint};
pub use checkpoint::{checkpoint, DeviceSeries, Flush};
pub use device::{
    chunk_split, device_findings, read_modify_write, slow_member, stripe_imbalance, Issued, Member,
    OthersSeen, ParityArray, Seen, MIN_IOS as MIN_DEVICE_IOS,
};
pub use finding::{Finding, Kind, Metric, Severity};
pub use fmt::signed_pct;
pub use gaps::{gaps, Matrix};
pub use knee::{cache_knee, Knee, Step};
pub use memory::on_memory;
pub use outliers::{latency_outliers, outliers, MIN_REPEATS as MIN_OUTLIER_REPEATS};
pub use regime::{best_shift, regime, settled, Change, CpuBins, MIN_HOLD_S, MIN_PART_S};
pub use scaling::{scaling, MemberPoint, ScalingEvidence};
pub use short::short;
pub use sparse::sparse;
pub use stalls::stalls;
pub use steady::{min_intervals, snia_window, steady, Window, STEADY_WINDOW};
pub use straggler::stragglers;
pub use thresholds::{Entry as ThresholdEntry, ThresholdError, Thresholds};
