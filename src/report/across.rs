//! Figures across runs: the runs compared workload by workload, and scaling with a run
//! parameter such as the number of disks ("SSD Performance"'s "no longer scales after 4 disks").

use super::figures::label;
use super::{Chart, Input, Kind};
use crate::model::ResultDoc;
use iogauge_charts::{Axis, Bar, BarChart, BarSeries, LineChart, Mark, Series};
use std::collections::{BTreeMap, BTreeSet};

/// Workloads compared in charts (two charts each); the rest are in `compare`'s table.
const COMPARE_WORKLOADS: usize = 12;
/// Workloads per scaling chart.
const SCALING_SERIES: usize = 6;

/// Runs compared workload by workload: for each shared workload a small chart of IOPS and one
/// of p99 latency, one bar per run with its value written on it and the 95% confidence interval
/// over repeats as whiskers. Each workload gets its own axis, so a 1M cell beside a 4K cell
/// (100× fewer IOPS) is as readable as the 4K one.
pub(super) fn compare_charts(runs: &[Input]) -> Vec<Chart> {
    let (keys, at) = matched(runs);
    let mut out = Vec::new();
    for k in keys.iter().take(COMPARE_WORKLOADS) {
        for (metric, title, axis, scale) in [
            ("iops", "IOPS", "IOPS", 1.0),
            ("lat_p99_ns", "p99 latency", "p99 latency (ms)", 1e-6),
        ] {
            let chart_title = format!("{title}: {k}");
            let mut chart = BarChart::new(chart_title.clone())
                .groups([k.clone()])
                .x_title("Workload")
                .y_axis(Axis::linear(axis))
                .values_on_bars();
            for (n, input) in runs.iter().enumerate() {
                if let Some(&i) = at.get(&(n, k.clone())) {
                    chart = chart.series(BarSeries::new(
                        input.name.clone(),
                        [bar(&input.doc.results[i], metric, scale)],
                    ));
                }
            }
            out.push(Chart::new(
                Kind::Compare,
                None,
                chart_title,
                chart.to_svg(),
                "one bar per run, its value written on it; whiskers: 95% confidence interval of the mean over repeats",
            ));
        }
    }
    out
}

fn bar(r: &ResultDoc, metric: &str, scale: f64) -> Bar {
    let headline = match metric {
        "iops" => r.iops,
        _ => r.lat_ns.p99 as f64,
    };
    match r.stats.get(metric) {
        // The whisker is around the mean of the repeats, so the bar must be that mean too.
        Some(s) if s.n >= 2 => Bar::new(s.mean * scale).ci(s.ci95[0] * scale, s.ci95[1] * scale),
        _ => Bar::new(headline * scale),
    }
}

/// Every run parameter (`--param disks=4`) with numbers in two or more runs that differ: IOPS of
/// each shared workload against it, the point where it levels off marked.
pub(super) fn scaling_charts(runs: &[Input]) -> Vec<Chart> {
    let (keys, at) = matched(runs);
    let params: BTreeSet<&String> = runs.iter().flat_map(|r| r.doc.params.keys()).collect();
    let mut out = Vec::new();
    for p in params {
        let xs: Vec<(usize, f64)> = runs
            .iter()
            .enumerate()
            .filter_map(|(n, r)| {
                let v: f64 = r.doc.params.get(p)?.trim().parse().ok()?;
                v.is_finite().then_some((n, v))
            })
            .collect();
        let distinct: BTreeSet<u64> = xs.iter().map(|(_, v)| v.to_bits()).collect();
        if distinct.len() < 2 {
            continue;
        }
        let title = format!("IOPS by {p}");
        let mut chart = LineChart::new(title.clone())
            .x_axis(Axis::linear(p.clone()))
            .y_axis(Axis::linear("IOPS").from_zero());
        let mut drawn = 0;
        for k in &keys {
            let mut pts: Vec<(f64, f64)> = xs
                .iter()
                .filter_map(|&(n, x)| {
                    at.get(&(n, k.clone()))
                        .map(|&i| (x, runs[n].doc.results[i].iops))
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts.dedup_by(|b, a| a.0 == b.0);
            if pts.len() < 2 || drawn == SCALING_SERIES {
                continue;
            }
            let (px, py): (Vec<f64>, Vec<f64>) = pts.iter().copied().unzip();
            // The ceiling finding's rule, as `compare` uses it.
            let gain = iogauge_analyze::Thresholds::default().ceiling_gain;
            let positive = px.iter().all(|&x| x > 0.0);
            if let Some(j) = positive
                .then(|| iogauge_analyze::levels_off(&px, &py, gain))
                .flatten()
            {
                chart = chart.mark(Mark::new(
                    px[j],
                    py[j],
                    format!("levels off at {p} = {}", px[j]),
                ));
            }
            chart = chart.series(Series::new(k.clone(), pts));
            drawn += 1;
        }
        if drawn == 0 {
            continue;
        }
        out.push(Chart::new(
            Kind::Scaling,
            None,
            title,
            chart.to_svg(),
            &format!("IOPS of each workload the runs share, against the run parameter {p}; ringed: where growth falls under 5% per doubling"),
        ));
    }
    out
}

/// Workloads across runs, by the one rule `compare` uses (`crate::matching`): a key per result
/// of the first run that another run shares, and where each run has it.
type Matched = (Vec<String>, BTreeMap<(usize, String), usize>);

fn matched(runs: &[Input]) -> Matched {
    let mut keys: Vec<String> = Vec::new();
    let mut at = BTreeMap::new();
    let Some(base) = runs.first() else {
        return (keys, at);
    };
    for (i, br) in base.doc.results.iter().enumerate() {
        if br.ios == 0 {
            continue;
        }
        let k = label(br);
        if keys.contains(&k) {
            continue;
        }
        let mut found = vec![(0, i)];
        for (n, input) in runs.iter().enumerate().skip(1) {
            if let Some(j) = crate::matching::counterpart(&base.doc, br, &input.doc) {
                if input.doc.results[j].ios > 0 {
                    found.push((n, j));
                }
            }
        }
        if found.len() >= 2 {
            keys.push(k.clone());
            for (n, j) in found {
                at.insert((n, k.clone()), j);
            }
        }
    }
    (keys, at)
}
