//! Checkpoints: why a database's throughput dipped mid-run. A server that writes out its dirty
//! pages all at once (a PostgreSQL checkpoint, a burst of InnoDB page flushing) can fill the
//! device's queue, and the commits that wait behind those writes are the transactions that go
//! missing — the PostgreSQL run held at 12–14k TPS by a 269 s checkpoint against ~20k later.
//!
//! Rule: a dip is a run of steps whose TPS is at least `checkpoint_dip_frac` below the run's
//! median step, lasting `checkpoint_min_s` or more. It is named a checkpoint's when it overlaps
//! a flush interval (widened by one step each side: the server logs a checkpoint's end when its
//! last fsync returns, and a step's transactions are counted when they end) and some device was
//! saturated through at least half of it: busy at least `checkpoint_util` of the time, or
//! `checkpoint_queue` requests queued on average, in half its steps or more. A dip with no flush
//! beside it, with an idle device, or one that outlasts the device's saturation by more than it
//! lasted (a 0.7 s checkpoint at the start of a 3 s dip on a RAM disk, the rest of which other
//! work on the CPUs made: a CI run beside other tests) is left to `stall` and `regime`; a flush
//! that caused no dip is silent.
//!
//! The median, not the mean, is the reference so that the dips themselves do not lower it.

use crate::fmt::{count, pct, rate};
use crate::{Finding, Kind, Severity, Thresholds};

/// A stretch of server flushing on the run's time axis, in seconds — or of an array's rebuild,
/// whose copying fills the members' queues the same way.
#[derive(Clone, Debug, PartialEq)]
pub struct Flush {
    /// How the summary names it: "checkpoint 2", "page flushing 1", "the rebuild of /dev/vdc
    /// into md100".
    pub label: String,
    pub start_s: f64,
    pub end_s: f64,
    /// An array's rebuild rather than the server's flushing: the finding is a `rebuild` one,
    /// with a rebuild's advice.
    pub rebuild: bool,
}

/// One device's numbers per step, aligned with the TPS.
#[derive(Clone, Copy, Debug)]
pub struct DeviceSeries<'a> {
    pub name: &'a str,
    /// Share of each step the device was busy, 0–1.
    pub util: &'a [f64],
    /// Mean requests queued in each step.
    pub queue: &'a [f64],
    pub write_bytes_s: &'a [f64],
}

const ADVICE: &str = "The commits waited behind the flush's writes. Spread checkpoints \
(checkpoint_completion_target, a larger max_wal_size or checkpoint_timeout; for InnoDB \
innodb_io_capacity and innodb_log_file_size), put the WAL on a device of its own (--wal-dir), \
or give the data a device that absorbs the burst.";

const REBUILD_ADVICE: &str = "The transactions waited behind md's copy onto the new member. A \
lower sync_speed_max (--rebuild-speed) costs them less for longer; the window in which a \
second failure loses data grows with it.";

/// Finds TPS dips that line up with a flush and a saturated device. `tps` holds one value per
/// step of `step_s` seconds, the first step starting at 0 s; `flushes` and each device's series
/// are on the same axis.
///
/// Evidence: `start_s`, `end_s` (the dip), `flush_start_s`, `flush_end_s`, `median_tps`,
/// `dip_tps` (the mean TPS of the dip's steps), `fall` (1 − dip / median), `util`, `queue`
/// and `write_bytes_s` of the busiest device in the dip (the one with the deepest queue).
pub fn checkpoint(
    step_s: f64,
    tps: &[f64],
    flushes: &[Flush],
    devices: &[DeviceSeries],
    th: &Thresholds,
) -> Vec<Finding> {
    if tps.len() < 3 || !(step_s.is_finite() && step_s > 0.0) {
        return Vec::new();
    }
    let mut sorted = tps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    if median <= 0.0 {
        return Vec::new();
    }
    let floor = median * (1.0 - th.checkpoint_dip_frac);
    let min_steps = (th.checkpoint_min_s / step_s).ceil().max(1.0) as usize;
    let mut found = Vec::new();
    let mut k = 0;
    while k < tps.len() {
        if tps[k] > floor {
            k += 1;
            continue;
        }
        let a = k;
        while k < tps.len() && tps[k] <= floor {
            k += 1;
        }
        if k - a < min_steps {
            continue;
        }
        if let Some(f) = judge(step_s, tps, (a, k), median, flushes, devices, th) {
            found.push(f);
        }
    }
    found
}

/// The finding for the dip over steps `a..b`, if a flush and a saturated device explain it.
fn judge(
    step_s: f64,
    tps: &[f64],
    (a, b): (usize, usize),
    median: f64,
    flushes: &[Flush],
    devices: &[DeviceSeries],
    th: &Thresholds,
) -> Option<Finding> {
    let (start_s, end_s) = (a as f64 * step_s, b as f64 * step_s);
    let flush = flushes
        .iter()
        .filter(|f| f.start_s <= end_s + step_s && f.end_s >= start_s - step_s)
        .max_by(|x, y| overlap(x, start_s, end_s).total_cmp(&overlap(y, start_s, end_s)))?;
    let busiest = |d: &DeviceSeries| {
        (a..b)
            .filter_map(|i| Some((i, *d.util.get(i)?, *d.queue.get(i)?)))
            .max_by(|x, y| x.2.total_cmp(&y.2).then(x.1.total_cmp(&y.1)))
    };
    let saturated = |d: &DeviceSeries, i: usize| {
        d.util.get(i).is_some_and(|&u| u >= th.checkpoint_util)
            || d.queue.get(i).is_some_and(|&q| q >= th.checkpoint_queue)
    };
    let (dev, step, util, queue) = devices
        .iter()
        .filter(|d| 2 * (a..b).filter(|&i| saturated(d, i)).count() >= b - a)
        .filter_map(|d| busiest(d).map(|(i, u, q)| (d, i, u, q)))
        .filter(|&(d, i, _, _)| saturated(d, i))
        .max_by(|x, y| x.3.total_cmp(&y.3))?;
    let dip = tps[a..b].iter().sum::<f64>() / (b - a) as f64;
    let fall = 1.0 - dip / median;
    let written = dev.write_bytes_s.get(step).copied().unwrap_or(0.0);
    let summary = format!(
        "TPS fell {} ({} → {}) during {} ({}–{} s) while {} wrote {} with {} requests queued ({} busy)",
        pct(fall),
        count(median.round()),
        count(dip.round()),
        flush.label,
        count(flush.start_s.round()),
        count(flush.end_s.round()),
        dev.name,
        rate(written),
        count(queue.round()),
        pct(util)
    );
    let (kind, advice) = match flush.rebuild {
        true => (Kind::Rebuild, REBUILD_ADVICE),
        false => (Kind::Checkpoint, ADVICE),
    };
    Some(
        Finding::new(kind, Severity::Warning, summary, advice)
            .with("start_s", start_s)
            .with("end_s", end_s)
            .with("flush_start_s", flush.start_s)
            .with("flush_end_s", flush.end_s)
            .with("median_tps", median)
            .with("dip_tps", dip)
            .with("fall", fall)
            .with("util", util)
            .with("queue", queue)
            .with("write_bytes_s", written),
    )
}

fn overlap(f: &Flush, a: f64, b: f64) -> f64 {
    (f.end_s.min(b) - f.start_s.max(a)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flush(a: f64, b: f64) -> Flush {
        Flush {
            label: "checkpoint 2".into(),
            start_s: a,
            end_s: b,
            rebuild: false,
        }
    }

    /// 20 steps at 3,400 TPS with a dip to 1,290 in steps 10–13; the device saturated there.
    fn run() -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut tps = vec![3400.0; 20];
        let mut util = vec![0.3; 20];
        let mut queue = vec![0.5; 20];
        let mut w = vec![8e6; 20];
        for i in 10..14 {
            tps[i] = 1290.0;
            util[i] = 1.0;
            queue[i] = 31.0;
            w[i] = 180.0 * 1048576.0;
        }
        (tps, util, queue, w)
    }

    #[test]
    fn a_dip_during_a_checkpoint_on_a_saturated_device_is_named_with_its_numbers() {
        let (tps, util, queue, w) = run();
        let d = DeviceSeries {
            name: "loop1",
            util: &util,
            queue: &queue,
            write_bytes_s: &w,
        };
        let f = checkpoint(1.0, &tps, &[flush(9.2, 14.5)], &[d], &Thresholds::default());
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            f[0].summary,
            "TPS fell 62% (3,400 → 1,290) during checkpoint 2 (9–15 s) while loop1 wrote 180.0 MiB/s with 31 requests queued (100% busy)"
        );
        assert_eq!(
            (f[0].evidence["start_s"], f[0].evidence["end_s"]),
            (10.0, 14.0)
        );
        assert_eq!(f[0].kind, Kind::Checkpoint);
    }

    #[test]
    fn silent_without_a_flush_beside_the_dip_an_idle_device_or_a_dip() {
        let (tps, util, queue, w) = run();
        let d = DeviceSeries {
            name: "loop1",
            util: &util,
            queue: &queue,
            write_bytes_s: &w,
        };
        let th = Thresholds::default();
        // The checkpoint ended two steps before the dip.
        assert!(checkpoint(1.0, &tps, &[flush(2.0, 8.0)], &[d], &th).is_empty());
        // The device was idle during the dip.
        let idle = vec![0.2; 20];
        let calm = DeviceSeries {
            util: &idle,
            queue: &idle,
            ..d
        };
        assert!(checkpoint(1.0, &tps, &[flush(9.0, 14.0)], &[calm], &th).is_empty());
        // A checkpoint on a saturated device with no dip.
        let flat = vec![3400.0; 20];
        assert!(checkpoint(1.0, &flat, &[flush(9.0, 14.0)], &[d], &th).is_empty());
        // A one-step dip is too short.
        let mut short = flat.clone();
        short[11] = 100.0;
        assert!(checkpoint(1.0, &short, &[flush(9.0, 14.0)], &[d], &th).is_empty());
    }

    /// A short checkpoint at the start of a longer dip (CI: 0.7 s of 4 requests queued on a RAM
    /// disk, then two more seconds of low TPS that other work on the CPUs made) is not the dip's
    /// cause; saturated through half the dip, it is.
    #[test]
    fn a_dip_that_outlasts_the_saturation_is_not_the_flushs() {
        let (tps, _, _, w) = run();
        let th = Thresholds::default();
        let named = |busy_steps: std::ops::Range<usize>| {
            let mut util = vec![0.3; 20];
            let mut queue = vec![0.5; 20];
            for i in busy_steps {
                (util[i], queue[i]) = (0.56, 4.3);
            }
            let d = DeviceSeries {
                name: "loop1",
                util: &util,
                queue: &queue,
                write_bytes_s: &w,
            };
            checkpoint(1.0, &tps, &[flush(9.7, 10.4)], &[d], &th).len()
        };
        // The dip is steps 10–13: one saturated step of four, then two.
        assert_eq!(named(10..11), 0);
        assert_eq!(named(10..12), 1);
    }

    /// The same dip beside an array's rebuild instead of a checkpoint is the rebuild's, with
    /// its own kind and advice; the near miss: a rebuild that ended before the dip names
    /// nothing.
    #[test]
    fn a_dip_during_a_rebuild_is_the_rebuilds() {
        let (tps, util, queue, w) = run();
        let d = DeviceSeries {
            name: "vda",
            util: &util,
            queue: &queue,
            write_bytes_s: &w,
        };
        let rebuild = |a: f64, b: f64| Flush {
            label: "the rebuild of /dev/vdc into md100".into(),
            start_s: a,
            end_s: b,
            rebuild: true,
        };
        let th = Thresholds::default();
        let f = checkpoint(1.0, &tps, &[rebuild(0.0, 14.0)], &[d], &th);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::Rebuild);
        assert!(
            f[0].summary.starts_with(
                "TPS fell 62% (3,400 → 1,290) during the rebuild of /dev/vdc into md100 (0–14 s)"
            ),
            "{}",
            f[0].summary
        );
        assert!(f[0].advice.contains("--rebuild-speed"), "{}", f[0].advice);
        assert!(checkpoint(1.0, &tps, &[rebuild(0.0, 7.0)], &[d], &th).is_empty());
    }
}
