//! Outliers: repeats that the statistics (computed elsewhere) flagged, put into words with the mean
//! with and without them — "PostgreSQL Server Benchmarks — Disks" ran each test five times and had to explain one odd run.

use std::collections::BTreeSet;

use crate::fmt::{count, latency, pct};
use crate::{Finding, Kind, Severity};

const ADVICE: &str = "Check what else ran during that repeat (cron jobs, backups, a RAID scrub or \
rebuild, TRIM, SSD garbage collection), make sure caches are dropped before every repeat, and add \
repeats rather than dropping this one silently; report the mean both ways, as the study “PostgreSQL Server Benchmarks — Disks” did.";

/// The fewest repeats an outlier may be judged among: with three, the median absolute
/// deviation comes from two values and any spread flags one of them.
pub const MIN_REPEATS: usize = 5;

const BETTER_ADVICE: &str = "This repeat did better than the rest: a cache still warm, a device that was idle or had credits then. The others are the figure to quote; add repeats to see which is typical.";

/// One finding per index in `outlier_indices` that points at a finite value of `values` (the
/// repeats of one measurement of `metric`, e.g. "read IOPS"). Indices out of range or repeated
/// are ignored, as are non-finite values, which count towards neither mean.
///
/// Evidence: `repeat` (index), `value`, `mean` (all finite repeats), `mean_without` (without any
/// flagged repeat; left out when nothing remains) and `shift_frac` = mean / mean_without − 1.
pub fn outliers(metric: &str, values: &[f64], outlier_indices: &[usize]) -> Vec<Finding> {
    find(values, outlier_indices, true, &|v| {
        format!("{} {metric}", count(v))
    })
}

/// [`outliers`] of a latency in nanoseconds, e.g. `metric` "p99 latency": the values are
/// written in µs, ms or s like every other latency ("1.77 ms p99 latency").
pub fn latency_outliers(
    metric: &str,
    values_ns: &[f64],
    outlier_indices: &[usize],
) -> Vec<Finding> {
    find(values_ns, outlier_indices, false, &|v| {
        format!("{} {metric}", latency(v / 1e9))
    })
}

/// `higher_is_better`: IOPS and syncs/s; latency is better lower. A repeat flagged on the better
/// side is said to be better (an `info`), never sent to look for cron jobs.
fn find(
    values: &[f64],
    outlier_indices: &[usize],
    higher_is_better: bool,
    show: &dyn Fn(f64) -> String,
) -> Vec<Finding> {
    let flagged: BTreeSet<usize> = outlier_indices
        .iter()
        .copied()
        .filter(|&i| values.get(i).is_some_and(|v| v.is_finite()))
        .collect();
    let finite = |i: &usize| values[*i].is_finite();
    let all: Vec<usize> = (0..values.len()).filter(finite).collect();
    let kept: Vec<usize> = all
        .iter()
        .copied()
        .filter(|i| !flagged.contains(i))
        .collect();
    let mean_of = |idx: &[usize]| {
        (!idx.is_empty()).then(|| idx.iter().map(|&i| values[i]).sum::<f64>() / idx.len() as f64)
    };
    if all.len() < MIN_REPEATS {
        return Vec::new();
    }
    let Some(mean) = mean_of(&all) else {
        return Vec::new();
    };
    let without = mean_of(&kept);

    flagged
        .into_iter()
        .map(|i| {
            let value = values[i];
            let better = without.is_some_and(|w| (value > w) == higher_is_better);
            let summary = match without {
                Some(w) => format!(
                    "repeat {} of {}: {}, {} {} the mean of the others ({}; {} with it)",
                    i + 1,
                    values.len(),
                    show(value),
                    pct(((value - w) / w).abs()),
                    match better {
                        true => "better than",
                        false => "off",
                    },
                    show(w),
                    show(mean)
                ),
                None => format!(
                    "repeat {} of {}: {}, and every repeat was flagged (mean {})",
                    i + 1,
                    values.len(),
                    show(value),
                    show(mean)
                ),
            };
            let (severity, advice) = match better {
                true => (Severity::Info, BETTER_ADVICE),
                false => (Severity::Warning, ADVICE),
            };
            let mut f = Finding::new(Kind::Outlier, severity, summary, advice)
                .with("repeat", i as f64)
                .with("value", value)
                .with("mean", mean);
            if let Some(w) = without {
                f = f.with("mean_without", w).with("shift_frac", mean / w - 1.0);
            }
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outlier_with_both_means() {
        let values = [100.0, 102.0, 98.0, 40.0, 100.0];
        let found = outliers("fsync/s", &values, &[3]);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.kind, Kind::Outlier);
        assert_eq!(f.evidence["repeat"], 3.0);
        assert_eq!(f.evidence["value"], 40.0);
        assert!((f.evidence["mean"] - 88.0).abs() < 1e-12);
        assert!((f.evidence["mean_without"] - 100.0).abs() < 1e-12);
        assert!((f.evidence["shift_frac"] - (-0.12)).abs() < 1e-12);
        assert!(f.summary.contains("repeat 4 of 5"), "{}", f.summary);
        assert!(f.summary.contains("fsync/s"));
    }

    // Regression (issue 12): findings gave latency as "1,765,375 ns p99 latency".
    #[test]
    fn latencies_are_written_in_readable_units() {
        let values = [250_000.0, 251_000.0, 1_765_375.0, 249_000.0, 250_500.0];
        let found = latency_outliers("p99 latency", &values, &[2]);
        assert_eq!(found.len(), 1);
        let s = &found[0].summary;
        assert!(s.contains("1.77 ms p99 latency"), "{s}");
        assert!(!s.contains(" ns"), "{s}");
    }

    #[test]
    fn mean_without_leaves_out_every_flagged_repeat() {
        let values = [10.0, 50.0, 10.0, 90.0, 10.0];
        let found = outliers("IOPS", &values, &[3, 1, 3]);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].evidence["repeat"], 1.0);
        assert_eq!(found[1].evidence["repeat"], 3.0);
        for f in &found {
            assert_eq!(f.evidence["mean_without"], 10.0);
            assert_eq!(f.evidence["mean"], 34.0);
        }
    }

    #[test]
    fn bad_indices_and_values_are_skipped() {
        assert!(outliers("IOPS", &[], &[0]).is_empty());
        assert!(outliers("IOPS", &[1.0, 2.0], &[]).is_empty());
        assert!(outliers("IOPS", &[1.0, f64::NAN], &[1, 7]).is_empty());
        let all = outliers("IOPS", &[1.0, 3.0, 1.0, 3.0, 2.0], &[0, 1, 2, 3, 4]);
        assert_eq!(all.len(), 5);
        assert!(!all[0].evidence.contains_key("mean_without"));
        assert_eq!(all[0].evidence["mean"], 2.0);
    }

    /// Three repeats are too few to judge; of five, the fastest one flagged is said to be
    /// better (info), the slow one a warning (issue 37: "2.41 ms p99 latency, 27% off" flagged
    /// the best repeat and sent the user to look for cron jobs).
    #[test]
    fn few_repeats_judge_nothing_and_a_better_repeat_says_so() {
        assert!(latency_outliers("p99 latency", &[3.2e6, 2.41e6, 3.3e6], &[1]).is_empty());
        let best = latency_outliers("p99 latency", &[3.2e6, 2.41e6, 3.3e6, 3.25e6, 3.3e6], &[1]);
        assert_eq!(best[0].severity, Severity::Info);
        assert!(
            best[0].summary.contains("better than the mean"),
            "{}",
            best[0].summary
        );
        let slow = outliers("IOPS", &[100.0, 40.0, 101.0, 99.0, 100.0], &[1]);
        assert_eq!(slow[0].severity, Severity::Warning);
        assert!(
            slow[0].summary.contains("off the mean"),
            "{}",
            slow[0].summary
        );
    }
}
