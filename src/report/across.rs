//! Figures across runs: the runs compared workload by workload, and scaling with a run
//! parameter such as the number of disks ("SSD Performance"'s "no longer scales after 4 disks").

use super::figures::label;
use super::{Chart, Input, Kind};
use crate::model::ResultDoc;
use iogauge_charts::{Axis, Bar, BarChart, BarSeries, LineChart, Mark, Series};
use std::collections::{BTreeMap, BTreeSet};

/// Workloads per comparison chart.
const COMPARE_GROUPS: usize = 10;
/// Workloads per scaling chart.
const SCALING_SERIES: usize = 6;
/// Growth below which a scaling series has levelled off (as `iogauge_stats::plateau` takes it).
const SCALING_GAIN: f64 = 0.05;

/// Runs compared workload by workload: grouped bars of IOPS and of p99 latency, with the 95%
/// confidence interval over repeats as whiskers where there were repeats.
pub(super) fn compare_charts(runs: &[Input]) -> Vec<Chart> {
    let (keys, at) = matched(runs);
    let shared: Vec<&String> = keys
        .iter()
        .filter(|k| {
            runs.iter()
                .enumerate()
                .filter(|(n, _)| at.contains_key(&(*n, (*k).clone())))
                .count()
                >= 2
        })
        .collect();
    let mut out = Vec::new();
    let chunks: Vec<&[&String]> = shared.chunks(COMPARE_GROUPS).collect();
    let n = chunks.len();
    for (c, chunk) in chunks.iter().enumerate() {
        let part = if n > 1 {
            format!(" ({}/{n})", c + 1)
        } else {
            String::new()
        };
        for (metric, title, axis, scale) in [
            ("iops", "IOPS", "IOPS", 1.0),
            ("lat_p99_ns", "p99 latency", "p99 latency (ms)", 1e-6),
        ] {
            let chart_title = format!("{title} by run{part}");
            let mut chart = BarChart::new(chart_title.clone())
                .groups(chunk.iter().map(|k| (*k).clone()))
                .x_title("Workload")
                .y_axis(Axis::linear(axis));
            for (n, input) in runs.iter().enumerate() {
                if !chunk.iter().any(|k| at.contains_key(&(n, (*k).clone()))) {
                    continue;
                }
                let bars = chunk.iter().map(|k| match at.get(&(n, (*k).clone())) {
                    Some(&i) => bar(&input.doc.results[i], metric, scale),
                    None => Bar::new(f64::NAN),
                });
                chart = chart.series(BarSeries::new(input.name.clone(), bars));
            }
            out.push(Chart::new(
                Kind::Compare,
                None,
                chart_title,
                chart.to_svg(),
                "one bar per run; whiskers: 95% confidence interval of the mean over repeats",
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
            if let Some(j) = iogauge_stats::plateau(&px, &py, SCALING_GAIN) {
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
            &format!("IOPS of each workload the runs share, against the run parameter {p}; ringed: where growth falls under 5%"),
        ));
    }
    out
}

/// Workloads across runs: the keys in order of first appearance, and where each run has each
/// (its first result of that workload). Results match by name, else by workload.
type Matched = (Vec<String>, BTreeMap<(usize, String), usize>);

fn matched(runs: &[Input]) -> Matched {
    let mut keys: Vec<String> = Vec::new();
    let mut at = BTreeMap::new();
    for (n, input) in runs.iter().enumerate() {
        for (i, r) in input.doc.results.iter().enumerate() {
            if r.ios == 0 {
                continue;
            }
            let k = label(r);
            if !keys.contains(&k) {
                keys.push(k.clone());
            }
            at.entry((n, k)).or_insert(i);
        }
    }
    (keys, at)
}
