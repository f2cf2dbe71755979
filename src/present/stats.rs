//! The statistics over a result's repeats (mean, 95% CI, median, spread, outliers), as `run`,
//! `suite` and `show` print them.

use super::table::table;
use crate::model::{ResultDoc, StatsDoc};
use crate::units::{self, interval_tells, TOO_FEW};
use std::fmt::Write;

/// A value of a stats metric with its unit.
pub fn metric_value(metric: &str, v: f64) -> String {
    match metric {
        "iops" => format!("{} IOPS", units::count(v)),
        "tps" => format!("{} TPS", units::count(v)),
        "nopm" => format!("{} new orders/min", units::count(v)),
        "bw_bytes" => units::bw(v),
        "syncs_per_s" => format!("{} syncs/s", units::count(v)),
        m if m.starts_with("lat_") => units::latency(v),
        _ => format!("{v}"),
    }
}

pub fn metric_label(metric: &str) -> &str {
    match metric {
        "iops" => "IOPS",
        "tps" => "TPS",
        "nopm" => "NOPM",
        "bw_bytes" => "bandwidth",
        "lat_mean_ns" => "latency mean",
        "lat_p50_ns" => "latency p50",
        "lat_p99_ns" => "latency p99",
        "syncs_per_s" => "syncs/s",
        m => m,
    }
}

/// The interval "lo … hi", or [`TOO_FEW`].
fn range(st: &StatsDoc, v: impl Fn(f64) -> String) -> String {
    match interval_tells(st.mean, st.ci95) {
        true => format!("{} … {}", v(st.ci95[0]), v(st.ci95[1])),
        false => TOO_FEW.to_string(),
    }
}

const STATS_ORDER: [&str; 6] = [
    "iops",
    "bw_bytes",
    "syncs_per_s",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p99_ns",
];

pub fn text(index: usize, r: &ResultDoc) -> String {
    let n = r.stats.values().map(|s| s.n).max().unwrap_or(0);
    let name = r.display_name();
    let mut s = format!(
        "statistics over {n} repeats of result {} ({name})\n",
        index + 1
    );
    let mut rows = vec![[
        "", "mean", "95% CI", "median", "stddev", "CV", "min", "max", "outliers",
    ]
    .map(String::from)
    .to_vec()];
    // Throughput first, then latency, whatever the map's alphabetical order.
    let rank = |m: &str| {
        STATS_ORDER
            .iter()
            .position(|k| *k == m)
            .unwrap_or(STATS_ORDER.len())
    };
    let mut metrics: Vec<(&String, &StatsDoc)> = r.stats.iter().collect();
    metrics.sort_by_key(|(m, _)| rank(m));
    for (metric, st) in metrics {
        rows.push(stats_row(metric, st));
    }
    for line in table(
        &rows,
        &[false, true, true, true, true, true, true, true, false],
    )
    .lines()
    {
        let _ = writeln!(s, "  {line}");
    }
    s
}

fn stats_row(metric: &str, st: &StatsDoc) -> Vec<String> {
    let v = |x: f64| metric_value(metric, x);
    let outliers = if st.outliers.is_empty() {
        "none".to_string()
    } else {
        let which: Vec<String> = st.outliers.iter().map(|i| format!("#{}", i + 1)).collect();
        format!(
            "{} (mean without: {})",
            which.join(", "),
            v(st.mean_without_outliers)
        )
    };
    vec![
        metric_label(metric).to_string(),
        v(st.mean),
        range(st, v),
        v(st.median),
        v(st.stddev),
        format!("{:.1}%", st.cv * 100.0),
        v(st.min),
        v(st.max),
        outliers,
    ]
}

/// A suite's repeats in one table: per result, the mean IOPS (or syncs/s for a sync cell), its
/// 95% confidence interval, the coefficient of variation and the outlier repeats. Empty when
/// nothing was repeated.
/// `first_round`: in a suite of SNIA PTS rounds, the round its window starts at, so the columns
/// and the outliers are numbered as the rounds are.
pub fn suite_table(results: &[ResultDoc], first_round: Option<usize>) -> String {
    let mut rows = vec![["", "n", "mean", "95% CI", "CV", "outliers"]
        .map(String::from)
        .to_vec()];
    for r in results {
        let Some((metric, st)) = ["syncs_per_s", "iops"]
            .iter()
            .find_map(|m| r.stats.get(*m).map(|st| (*m, st)))
        else {
            continue;
        };
        let v = |x: f64| metric_value(metric, x);
        rows.push(vec![
            r.name
                .clone()
                .unwrap_or_else(|| crate::present::summary::workload_line(r)),
            st.n.to_string(),
            v(st.mean),
            range(st, v),
            format!("{:.1}%", st.cv * 100.0),
            match st.outliers.is_empty() {
                true => "none".into(),
                false => st
                    .outliers
                    .iter()
                    .map(|i| match first_round {
                        Some(f) => format!("round {}", f + i),
                        None => format!("#{}", i + 1),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            },
        ]);
    }
    if rows.len() == 1 {
        return String::new();
    }
    let mut s = match first_round {
        Some(f) => {
            let last = f + rows
                .get(1)
                .and_then(|r| r[1].parse::<usize>().ok())
                .unwrap_or(1)
                - 1;
            format!(
                "The window, rounds {f}–{last} (n: rounds; mean and 95% confidence interval over them)\n\n"
            )
        }
        None => String::from("Repeats (mean and 95% confidence interval over the repeats)\n\n"),
    };
    for line in table(&rows, &[false, true, true, true, true, false]).lines() {
        let _ = writeln!(s, "  {line}");
    }
    s.push('\n');
    s
}

/// With `--repeat`: the load's rate over its repeats, its interval, and each repeat's, on one
/// line ("  over 3 repeats: 1,234 TPS ±56 (1,200 · 1,250 · 1,252)"); and TPC-C's NOPM the same.
/// Empty for one run.
pub fn load_repeats_line(r: &ResultDoc) -> String {
    use crate::units::plus_minus;
    let Some(st) = r.stats.get("iops").filter(|st| st.n >= 2) else {
        return String::new();
    };
    let each = |v: &[f64]| {
        v.iter()
            .map(|x| units::count(*x))
            .collect::<Vec<_>>()
            .join(" · ")
    };
    let pm = |mean: f64, ci: [f64; 2]| {
        plus_minus(mean, ci, units::count).unwrap_or_else(|| format!(" ({TOO_FEW})"))
    };
    let mut line = format!(
        "  over {} repeats: {} TPS{} ({})",
        st.n,
        units::count(st.mean),
        pm(st.mean, st.ci95),
        each(&st.values)
    );
    if let Some(v) = r
        .tpcc
        .as_ref()
        .map(|t| &t.nopm_repeats)
        .filter(|v| v.len() >= 2)
    {
        if let Some(n) = iogauge_stats::summarize(v) {
            let _ = write!(
                line,
                " · {} NOPM{} ({})",
                units::count(n.mean),
                pm(n.mean, [n.ci95.0.max(0.0), n.ci95.1]),
                each(v)
            );
        }
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::plus_minus;

    /// The statistics of `values` as a run stores them (the interval cut at zero).
    fn stats(values: &[f64]) -> StatsDoc {
        crate::repeats::to_doc(iogauge_stats::summarize(values).expect("values"))
    }

    #[test]
    fn an_interval_that_reaches_zero_is_too_few_repeats_and_a_tight_one_is_shown() {
        // Two repeats far apart: Student's t with one degree of freedom, an interval of ±3×
        // the mean, cut at zero.
        let wide = stats(&[10_000.0, 99_630.0]);
        assert_eq!(wide.ci95[0], 0.0, "{:?}", wide.ci95);
        assert_eq!(plus_minus(wide.mean, wide.ci95, units::count), None);
        assert_eq!(stats_row("iops", &wide)[2], TOO_FEW);
        // Five close repeats: an interval a reader can use.
        let tight = stats(&[1_000.0, 1_010.0, 990.0, 1_005.0, 995.0]);
        let pm = plus_minus(tight.mean, tight.ci95, units::count).expect("shown");
        assert!(pm.starts_with(" ±") && pm.len() > 2, "{pm}");
        assert!(
            stats_row("iops", &tight)[2].contains(" … "),
            "{:?}",
            tight.ci95
        );
        // Every repeat 0: nothing varied, and 0 … 0 is the truth.
        assert!(interval_tells(0.0, [0.0, 0.0]));
    }
}
