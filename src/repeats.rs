//! Statistics over the repeats of one workload (`--repeat N`): each metric summarized by
//! `iogauge_stats::summarize` (mean, median, stddev, CV, 95% Student-t interval, outliers by the
//! modified z-score of Iglewicz and Hoaglin, |z| > 3.5) and put into the JSON model, and the
//! outlier repeats put into words as findings.

use crate::model::{RepeatDoc, StatsDoc};
use std::collections::BTreeMap;

/// Reads one metric from a repeat; `None` when the repeat does not have it.
type Getter = fn(&RepeatDoc) -> Option<f64>;

/// The metrics summarized, with how to read each from a repeat. `syncs_per_s` only counts when
/// every repeat has it (sync workloads).
fn metrics() -> [(&'static str, Getter); 6] {
    [
        ("iops", |r| Some(r.iops)),
        ("bw_bytes", |r| Some(r.bw_bytes)),
        ("lat_mean_ns", |r| Some(r.lat_ns.mean)),
        ("lat_p50_ns", |r| Some(r.lat_ns.p50 as f64)),
        ("lat_p99_ns", |r| Some(r.lat_ns.p99 as f64)),
        ("syncs_per_s", |r| r.syncs_per_s),
    ]
}

/// Per metric (`iops`, `bw_bytes`, `lat_mean_ns`, `lat_p50_ns`, `lat_p99_ns`, and `syncs_per_s`
/// for sync workloads), the statistics over `repeats`. Empty for no repeats; a metric with a
/// non-finite value is left out rather than summarized wrongly.
pub fn stats_for(repeats: &[RepeatDoc]) -> BTreeMap<String, StatsDoc> {
    let mut out = BTreeMap::new();
    if repeats.is_empty() {
        return out;
    }
    for (name, get) in metrics() {
        let Some(values) = repeats.iter().map(get).collect::<Option<Vec<f64>>>() else {
            continue;
        };
        if let Some(s) = iogauge_stats::summarize(&values) {
            out.insert(name.to_string(), to_doc(s));
        }
    }
    out
}

pub(crate) fn to_doc(s: iogauge_stats::Summary) -> StatsDoc {
    StatsDoc {
        n: s.n,
        values: s.values,
        mean: s.mean,
        median: s.median,
        stddev: s.stddev,
        // The CV is undefined only for a zero mean, which for these non-negative metrics means
        // every repeat was 0: no variation.
        cv: s.cv.unwrap_or(0.0),
        // Every metric here is a rate or a latency, never below 0: the t interval cut at 0
        // still holds the true mean as often (nothing below 0 could be it), and a latency
        // "−102 µs … 208 µs" said nothing true in its lower half.
        ci95: [s.ci95.0.max(0.0), s.ci95.1],
        min: s.min,
        max: s.max,
        outliers: s.outliers,
        mean_without_outliers: s.mean_without_outliers,
    }
}

/// Findings (kind "outlier") for the outlier repeats of result `result_index`, with the metric,
/// the repeat's index and value, and the mean with and without it. Only IOPS, p99 latency and
/// syncs/s are reported: bandwidth is IOPS times the block size and the mean latency follows
/// IOPS at a fixed queue depth, so they would repeat the same finding.
pub fn outlier_findings(
    result_index: usize,
    stats: &BTreeMap<String, StatsDoc>,
) -> Vec<iogauge_analyze::Finding> {
    let mut out = Vec::new();
    for (key, label) in [
        ("iops", "IOPS"),
        ("lat_p99_ns", "p99 latency"),
        ("syncs_per_s", "syncs/s"),
    ] {
        let Some(s) = stats.get(key) else { continue };
        let found = match key {
            "lat_p99_ns" => iogauge_analyze::latency_outliers(label, &s.values, &s.outliers),
            _ => iogauge_analyze::outliers(label, &s.values, &s.outliers),
        };
        for mut f in found {
            f.metric = Some(key.to_string());
            out.push(f.for_result(result_index));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeat(iops: f64, p99: u64) -> RepeatDoc {
        let mut r = RepeatDoc {
            iops,
            bw_bytes: iops * 4096.0,
            ..Default::default()
        };
        r.lat_ns.p99 = p99;
        r.lat_ns.p50 = p99 / 2;
        r.lat_ns.mean = p99 as f64 / 2.0;
        r
    }

    /// "PostgreSQL Server Benchmarks — Disks"'s hardware RAID fsync rates: one run at 3170/s against about 7600/s for the rest.
    /// By hand: median 7606.69, absolute deviations 4436.12, 0, 773.14, 20.94, 83.55, so MAD =
    /// 83.55 and z = 0.6745 · dev / MAD = 35.8 for 3170.57 and 6.24 for 8379.83 — both beyond
    /// 3.5 (the study removed only the first by eye). The mean of all five is 6861.572, of the
    /// other three 7585.82.
    #[test]
    fn seed_001_outliers_are_flagged_and_become_findings() {
        let values = [3170.57, 7606.69, 8379.83, 7627.63, 7523.14];
        let repeats: Vec<RepeatDoc> = values.iter().map(|&v| repeat(v, 1000)).collect();
        let stats = stats_for(&repeats);
        let iops = &stats["iops"];
        assert_eq!(iops.n, 5);
        assert_eq!(iops.values, values);
        assert!((iops.mean - 6861.572).abs() < 1e-9);
        assert_eq!(iops.median, 7606.69);
        assert_eq!(iops.outliers, vec![0, 2]);
        assert!((iops.mean_without_outliers - 22757.46 / 3.0).abs() < 1e-9);
        assert!(iops.ci95[0] < iops.mean && iops.mean < iops.ci95[1]);
        assert!((iops.cv - iops.stddev / iops.mean).abs() < 1e-12);
        // Bandwidth is proportional, so it carries the same outliers; latency does not vary.
        assert_eq!(stats["bw_bytes"].outliers, vec![0, 2]);
        assert!(stats["lat_p99_ns"].outliers.is_empty());
        assert!(!stats.contains_key("syncs_per_s"));

        let findings = outlier_findings(2, &stats);
        assert_eq!(findings.len(), 2, "{findings:?}");
        for (f, (repeat, value)) in findings.iter().zip([(0.0, 3170.57), (2.0, 8379.83)]) {
            assert_eq!(f.kind, iogauge_analyze::Kind::Outlier);
            assert_eq!(f.metric.as_deref(), Some("iops"));
            assert_eq!(f.result, Some(2));
            assert_eq!(f.evidence["repeat"], repeat);
            assert_eq!(f.evidence["value"], value);
            assert!((f.evidence["mean"] - 6861.572).abs() < 1e-9);
            assert!((f.evidence["mean_without"] - 22757.46 / 3.0).abs() < 1e-9);
        }
    }

    #[test]
    fn textbook_summary_of_three_values() {
        // 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653, half width 4.302653/√3 = 2.484138.
        let stats = stats_for(&[repeat(1.0, 10), repeat(2.0, 10), repeat(3.0, 10)]);
        // 11, 12, 13: the same spread away from 0 keeps its whole interval.
        let far = stats_for(&[repeat(11.0, 10), repeat(12.0, 10), repeat(13.0, 10)]);
        assert!((far["iops"].ci95[0] - (12.0 - 2.484138)).abs() < 1e-5);
        let s = &stats["iops"];
        assert_eq!(
            (s.mean, s.median, s.stddev, s.min, s.max),
            (2.0, 2.0, 1.0, 1.0, 3.0)
        );
        // 2 − 2.484138 is below 0, which no rate can be: the interval starts at 0.
        assert_eq!(s.ci95[0], 0.0, "{:?}", s.ci95);
        assert!((s.ci95[1] - (2.0 + 2.484138)).abs() < 1e-5, "{:?}", s.ci95);
        assert!((s.cv - 0.5).abs() < 1e-12);
    }

    #[test]
    fn sync_rate_only_when_every_repeat_has_it() {
        let mut a = repeat(100.0, 10);
        let mut b = repeat(110.0, 10);
        a.syncs_per_s = Some(50.0);
        assert!(!stats_for(&[a.clone(), b.clone()]).contains_key("syncs_per_s"));
        b.syncs_per_s = Some(60.0);
        assert_eq!(stats_for(&[a, b])["syncs_per_s"].mean, 55.0);
        assert!(stats_for(&[]).is_empty());
    }
}
