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
//! | [`checkpoint`] | `checkpoint` | a database's TPS dip lined up with a checkpoint (or InnoDB flushing) and a saturated device |
//!
//! # Thresholds
//!
//! All limits live in [`Thresholds`]; `Thresholds::default()` holds the values below and
//! [`Thresholds::validate`] checks values a user typed.
//!
//! | name | default | meaning |
//! |---|---|---|
//! | `stall_frac` | 0.1 | a bin is stalled when its rate is below this fraction of the run's median rate (or zero) |
//! | `stall_min_s` | 0.5 | shortest stall reported, in seconds |
//! | `stall_min_count` | 10 | IOs a bin must hold at the median rate; slower runs are judged on wider bins so that Poisson gaps are not called stalls |
//! | `ceiling_gain` | 0.05 | growth per doubling of x below which IOPS or bandwidth counts as flat |
//! | `ceiling_min_doublings` | 2.0 | how many doublings of x the flat stretch must span to be a ceiling |
//! | `ceiling_lat_elasticity` | 0.5 | latency growing at least as x^this across the ceiling means a saturated fixed limit; below it, concurrency is not reaching the device |
//! | `gap_frac` | 0.5 | a matrix cell below this fraction of its neighbours' trend is a gap |
//! | `cache_ram_factor` | 2.0 | buffered IO needs a working set above this many times RAM to measure the disk |
//! | `cache_bw_margin` | 1.1 | read bandwidth above the device's maximum times this was served by a cache |
//! | `sparse_frac` | 0.01 | a read target with more than this fraction in holes or unwritten extents is sparse |
//! | `steady_excursion` | 0.2 | steady state: max − min over the window at most this fraction of its mean (SNIA PTS) |
//! | `steady_slope` | 0.1 | steady state: slope × (window − 1) at most this fraction of the mean (SNIA PTS) |
//! | `regime_frac` | 0.3 | a change of regime moves the rate by at least this fraction of the higher level |
//! | `checkpoint_dip_frac` | 0.3 | a database dip: TPS at least this fraction below the run's median |
//! | `checkpoint_min_s` | 2.0 | shortest database dip judged, in seconds |
//! | `checkpoint_util` | 0.9 | a device at least this busy during a dip was saturated |
//! | `checkpoint_queue` | 4.0 | … or one with at least this many requests queued on average |
//!
//! The steady-state window itself (5 intervals in SNIA PTS) is an argument of [`steady`], with
//! [`STEADY_WINDOW`] as its default.

mod cache;
mod ceiling;
mod checkpoint;
mod device;
mod finding;
mod fmt;
mod gaps;
mod knee;
mod outliers;
mod regime;
mod sparse;
mod stalls;
mod steady;
mod straggler;
mod thresholds;

pub use cache::cache;
pub use ceiling::{ceiling, levels_off, CeilingPoint};
pub use checkpoint::{checkpoint, DeviceSeries, Flush};
pub use device::{
    device_findings, read_modify_write, slow_member, stripe_imbalance, Issued, Member, OthersSeen,
    ParityArray, Seen, MIN_IOS as MIN_DEVICE_IOS,
};
pub use finding::{Finding, Kind, Metric, Severity};
pub use gaps::{gaps, Matrix};
pub use knee::{cache_knee, Knee, Step};
pub use outliers::{latency_outliers, outliers, MIN_REPEATS as MIN_OUTLIER_REPEATS};
pub use regime::{best_shift, regime, settled, Change, CpuBins, MIN_HOLD_S, MIN_PART_S};
pub use sparse::sparse;
pub use stalls::stalls;
pub use steady::{min_intervals, snia_window, steady, Window, STEADY_WINDOW};
pub use straggler::stragglers;
pub use thresholds::{ThresholdError, Thresholds};
