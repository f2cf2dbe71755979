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
        let results: Vec<(&Input, &ResultDoc)> = runs
            .iter()
            .enumerate()
            .filter_map(|(n, input)| {
                at.get(&(n, k.clone()))
                    .map(|&i| (input, &input.doc.results[i]))
            })
            .collect();
        // Latency in the unit its values read best in: 54.5 µs, never 0.0545 ms.
        let slowest = results
            .iter()
            .map(|(_, r)| r.lat_ns.p99 as f64)
            .fold(0.0, f64::max);
        let (lat_axis, lat_scale, lat_fmt): (&str, f64, fn(f64) -> String) = match slowest {
            ns if ns < 1e6 => ("p99 latency (µs)", 1e-3, |v| format!("{} µs", sig3(v))),
            ns if ns < 1e9 => ("p99 latency (ms)", 1e-6, |v| format!("{} ms", sig3(v))),
            _ => ("p99 latency (s)", 1e-9, |v| format!("{} s", sig3(v))),
        };
        // A database's rate is its transactions per second, not IOs.
        let rate = match results.iter().all(|(_, r)| r.is_db()) {
            true => "TPS",
            false => "IOPS",
        };
        // A number a warning takes the meaning from carries its mark in the legend.
        let mut used = Vec::new();
        let names: Vec<String> = results
            .iter()
            .map(|(input, r)| {
                let i = input
                    .doc
                    .results
                    .iter()
                    .position(|x| std::ptr::eq(x, *r))
                    .unwrap_or(0);
                let c = crate::model::caveats::of_result(&input.doc, i);
                used.extend(c.iter().copied());
                format!("{}{}", input.name, crate::model::caveats::marks(&c))
            })
            .collect();
        let legend = crate::model::caveats::legend(used).join("; ");
        for (metric, title, axis, scale, fmt) in [
            ("iops", rate, rate, 1.0, iops as fn(f64) -> String),
            ("lat_p99_ns", "p99 latency", lat_axis, lat_scale, lat_fmt),
        ] {
            let chart_title = format!("{title}: {k}");
            let mut chart = BarChart::new(chart_title.clone())
                .groups([k.clone()])
                .x_title("Workload")
                .y_axis(Axis::linear(axis).format(fmt))
                .values_on_bars();
            let mut clipped = false;
            for ((_, r), name) in results.iter().zip(&names) {
                let (b, cut) = bar(r, metric, scale);
                clipped |= cut;
                chart = chart.series(BarSeries::new(name.clone(), [b]));
            }
            let mut caption = match clipped {
                false => "one bar per run, its value written on it; whiskers: 95% confidence interval of the mean over repeats".to_string(),
                true => "one bar per run, its value written on it; whiskers: 95% confidence interval of the mean over repeats, cut at zero where it reaches below (few repeats of a spread-out value; no rate or latency is negative)".to_string(),
            };
            if !legend.is_empty() {
                caption.push_str(&format!("; marks beside a run: {legend}"));
            }
            out.push(Chart::new(
                Kind::Compare,
                None,
                chart_title,
                chart.to_svg(),
                &caption,
            ));
        }
    }
    out
}

/// IOPS on an axis and a bar: "52,341".
fn iops(v: f64) -> String {
    crate::units::count(v)
}

/// Three significant digits: 54.5, 1.20, 812.
fn sig3(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}

/// A run's bar: the mean of its repeats with their 95% interval, cut at zero (and says so), or
/// its one value.
fn bar(r: &ResultDoc, metric: &str, scale: f64) -> (Bar, bool) {
    let headline = match metric {
        "iops" => r.iops,
        _ => r.lat_ns.p99 as f64,
    };
    match r.stats.get(metric) {
        // The whisker is around the mean of the repeats, so the bar must be that mean too.
        Some(s) if s.n >= 2 => (
            Bar::new(s.mean * scale).ci(s.ci95[0].max(0.0) * scale, s.ci95[1] * scale),
            s.ci95[0] < 0.0,
        ),
        _ => (Bar::new(headline * scale), false),
    }
}

/// Every run parameter (`--param disks=4`) with numbers in two or more runs that differ: IOPS of
/// each shared workload against it, the point where it levels off marked.
pub(super) fn scaling_charts(runs: &[Input]) -> Vec<Chart> {
    let (keys, at) = matched(runs);
    // A layout sweep's member count is drawn per layout (`layout_charts`): across layouts it
    // would join points of different arrays.
    let params: BTreeSet<&String> = runs
        .iter()
        .flat_map(|r| r.doc.params.keys())
        .filter(|p| !p.starts_with(super::LAYOUT))
        .collect();
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
        let mut labelled: BTreeSet<u64> = BTreeSet::new();
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
                // Several workloads levelling off at one setting: each ringed, the setting
                // said once.
                let text = match labelled.insert(px[j].to_bits()) {
                    true => format!("levels off at {p} = {}", px[j]),
                    false => String::new(),
                };
                chart = chart.mark(Mark::new(px[j], py[j], text));
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

/// A layout sweep's figures ("One DVD per second" drew RAID0 and RAID5 throughput against 1 to
/// 12 SSDs): for each shared workload, IOPS against the member count with one line per layout
/// (and chunk), when some layout was built at two or more counts; and IOPS by layout with one
/// bar per chunk, when two or more chunks were tried.
pub(super) fn layout_charts(runs: &[Input]) -> Vec<Chart> {
    use super::{CHUNK, LAYOUT, MEMBERS};
    let (keys, at) = matched(runs);
    let param = |n: usize, p: &str| runs[n].doc.params.get(p).cloned();
    let arrays: Vec<usize> = (0..runs.len())
        .filter(|&n| param(n, LAYOUT).is_some())
        .collect();
    let chunks: BTreeSet<String> = arrays.iter().filter_map(|&n| param(n, CHUNK)).collect();
    // Each line: a layout at one chunk, by member count.
    let mut lines: BTreeMap<String, Vec<(usize, f64)>> = BTreeMap::new();
    for &n in &arrays {
        let Some(members) = param(n, MEMBERS).and_then(|m| m.parse::<f64>().ok()) else {
            continue;
        };
        let name = match param(n, CHUNK) {
            Some(c) => format!("{} · chunk {c}", param(n, LAYOUT).unwrap_or_default()),
            None => param(n, LAYOUT).unwrap_or_default(),
        };
        lines.entry(name).or_default().push((n, members));
    }
    let mut out = Vec::new();
    let scaled = lines.values().any(|pts| {
        pts.iter()
            .map(|p| p.1.to_bits())
            .collect::<BTreeSet<_>>()
            .len()
            >= 2
    });
    for k in keys.iter().take(SCALING_SERIES) {
        let iops_of = |n: usize| {
            at.get(&(n, k.clone()))
                .map(|&i| runs[n].doc.results[i].iops)
        };
        if scaled {
            let title = format!("IOPS by members: {k}");
            let mut chart = LineChart::new(title.clone())
                .x_axis(Axis::linear("members"))
                .y_axis(Axis::linear("IOPS").from_zero());
            let mut drawn = 0;
            for (name, pts) in &lines {
                let mut xy: Vec<(f64, f64)> = pts
                    .iter()
                    .filter_map(|&(n, m)| Some((m, iops_of(n)?)))
                    .collect();
                xy.sort_by(|a, b| a.0.total_cmp(&b.0));
                xy.dedup_by(|b, a| a.0 == b.0);
                if xy.len() >= 2 {
                    chart = chart.series(Series::new(name.clone(), xy));
                    drawn += 1;
                }
            }
            if drawn > 0 {
                out.push(Chart::new(
                    Kind::Layouts,
                    None,
                    title,
                    chart.to_svg(),
                    "IOPS of the workload against the number of members each array was built from, one line per layout (and chunk)",
                ));
            }
        }
        if chunks.len() >= 2 {
            let layouts: Vec<String> = arrays
                .iter()
                .filter(|&&n| param(n, CHUNK).is_some())
                .filter_map(|&n| param(n, LAYOUT))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let title = format!("IOPS by layout and chunk: {k}");
            let mut chart = BarChart::new(title.clone())
                .groups(layouts.clone())
                .x_title("Layout")
                .y_axis(Axis::linear("IOPS").format(iops))
                .values_on_bars();
            for c in &chunks {
                // The most members each layout was built from at this chunk.
                let bars: Vec<f64> = layouts
                    .iter()
                    .map(|l| {
                        arrays
                            .iter()
                            .filter(|&&n| {
                                param(n, LAYOUT).as_ref() == Some(l)
                                    && param(n, CHUNK).as_ref() == Some(c)
                            })
                            .max_by_key(|&&n| param(n, MEMBERS).and_then(|m| m.parse::<u32>().ok()))
                            .and_then(|&n| iops_of(n))
                            .unwrap_or(f64::NAN)
                    })
                    .collect();
                chart = chart.series(BarSeries::new(format!("chunk {c}"), bars));
            }
            out.push(Chart::new(
                Kind::Layouts,
                None,
                title,
                chart.to_svg(),
                "IOPS of the workload on each layout, one bar per chunk (each layout at the most members it was built from)",
            ));
        }
    }
    out
}
