//! The seed studies' figures of one run, drawn from its document: which results feed which chart,
//! and when the data is too thin to draw one. The SVG itself comes from `crates/charts`.

use super::{Chart, Input, Kind};
use crate::analysis::{groups, Dim, Key};
use crate::model::{ResultDoc, RunDoc};
use crate::units;
use iogauge_charts::{format_bytes, Axis, Band, Bar, BarChart, BarSeries, LineChart, Mark, Series};
use std::collections::{BTreeMap, BTreeSet};

/// Lines per latency-percentile chart; more turn into a tangle.
pub(super) const LAT_LINES: usize = 6;
/// Latency-percentile charts per run at most (a 42-cell matrix would otherwise get seven).
pub(super) const LAT_CHARTS: usize = 2;
/// Time series are drawn for every result of a run this small, else only for results with stalls.
pub(super) const TS_ALL_UP_TO: usize = 4;
/// Fine bins drawn per time series at most; longer runs are summed into wider bins.
const TS_MAX_BINS: usize = 1500;

/// What the charts of one run left out, for the line saying which charts are absent and why.
#[derive(Default)]
pub(super) struct Omitted {
    pub latency: usize,
    pub timeseries: usize,
}

/// The charts of one run: block-size tables, Orion sweeps, latency percentiles, time series.
pub(super) fn run_charts(run: usize, input: &Input, prefix: &str) -> (Vec<Chart>, Omitted) {
    let doc = &input.doc;
    let mut charts = Vec::new();
    let mut omitted = Omitted::default();
    let measured: Vec<usize> = (0..doc.results.len())
        .filter(|&i| doc.results[i].ios > 0)
        .collect();
    let covered = block_size_charts(doc, &measured, run, prefix, &mut charts);
    let rest: Vec<usize> = measured
        .iter()
        .copied()
        .filter(|i| !covered.contains(i))
        .collect();
    orion_charts(doc, &rest, run, prefix, &mut charts);
    omitted.latency = latency_charts(doc, &measured, run, prefix, &mut charts);
    omitted.timeseries = timeseries_charts(doc, run, prefix, &mut charts);
    super::db::db_timeline_charts(doc, run, prefix, &mut charts);
    super::db::buffer_charts(doc, run, prefix, &mut charts);
    convergence_chart(doc, run, prefix, &mut charts);
    hosts_chart(doc, run, prefix, &mut charts);
    device_charts(doc, run, prefix, &mut charts);
    cache_probe_chart(doc, run, prefix, &mut charts);
    commit_chart(doc, run, prefix, &mut charts);
    (charts, omitted)
}

/// Streams that sync (a database's commits) alone and beside the others of their cells: their
/// syncs' p50 and p99 side by side per case, the studies' WAL question in one picture.
fn commit_chart(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) {
    let cases = crate::analysis::streams::commit_cases(&doc.results);
    if !cases.iter().any(|(_, beside, _)| beside != "alone") {
        return;
    }
    let title = format!("{prefix}Commit latency alone and beside other streams");
    let ms = |v: u64| v as f64 / 1e6;
    let chart = BarChart::new(title.clone())
        .groups(
            cases
                .iter()
                .map(|(stream, beside, _)| format!("{stream}: {beside}")),
        )
        .x_title("stream: what it ran beside")
        .y_axis(Axis::linear("sync latency (ms)").from_zero())
        .values_on_bars()
        .series(BarSeries::new(
            "p50",
            cases
                .iter()
                .map(|(_, _, r)| Bar::new(ms(r.sync.as_ref().map_or(0, |s| s.lat_ns.p50)))),
        ))
        .series(BarSeries::new(
            "p99",
            cases
                .iter()
                .map(|(_, _, r)| Bar::new(ms(r.sync.as_ref().map_or(0, |s| s.lat_ns.p99)))),
        ));
    out.push(Chart::new(
        Kind::Latency,
        Some(run),
        title,
        chart.to_svg(),
        "each syncing stream's fsync/fdatasync latency, alone and beside the streams it ran with",
    ));
}

/// `probe cache`: the random reads' mean and median latency against the working set, the
/// fitted cache size marked.
fn cache_probe_chart(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) {
    if doc.suite.as_deref() != Some("probe-cache") {
        return;
    }
    let probes: Vec<(f64, &crate::model::ResultDoc)> = doc
        .results
        .iter()
        .filter(|r| r.workload.rw == crate::workload::Rw::Randread && r.ios > 0)
        .map(|r| (r.target.range_bytes as f64, r))
        .collect();
    if probes.len() < 2 {
        return;
    }
    let us = |ns: f64| ns / 1e3;
    let mean: Vec<(f64, f64)> = probes
        .iter()
        .map(|(w, r)| (*w, us(r.lat_ns.mean)))
        .collect();
    let p50: Vec<(f64, f64)> = probes
        .iter()
        .map(|(w, r)| (*w, us(r.lat_ns.p50 as f64)))
        .collect();
    let title = format!("{prefix}Cache map: latency by working set");
    let mut chart = LineChart::new(title.clone())
        .x_axis(Axis::log2("Working set").format(iogauge_charts::format_bytes))
        .y_axis(Axis::log10("4 KiB random read latency (µs)"))
        .series(Series::new("mean", mean).markers(true))
        .series(Series::new("median", p50).markers(true));
    let knee = doc.findings.iter().find_map(|f| {
        (f.kind == iogauge_analyze::Kind::Cache && f.result.is_none())
            .then(|| f.evidence.get("cache_bytes").copied())
            .flatten()
    });
    if let (Some(c), Some((_, r))) = (knee, probes.first()) {
        chart = chart.mark(Mark::new(c, us(r.lat_ns.mean), "fitted cache size"));
    }
    out.push(Chart::new(
        Kind::Latency,
        Some(run),
        title,
        chart.to_svg(),
        "mean and median latency of 4 KiB random reads over each working set (read through once first); marked: the cache size fitted to the means",
    ));
}

/// Results whose device charts are drawn per run; the table has every one.
const DEVICE_CHARTS: usize = 4;

/// The top device's request size (left axis) and queue depth (right axis) over time, for the
/// first results of a run: where splitting, merging or a shallow queue set in.
fn device_charts(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) {
    let with: Vec<&crate::model::ResultDoc> = doc
        .results
        .iter()
        .filter(|r| r.devices.first().is_some_and(|d| d.intervals.len() >= 2))
        .take(DEVICE_CHARTS)
        .collect();
    for r in with {
        let d = &r.devices[0];
        let size: Vec<(f64, f64)> = d
            .intervals
            .iter()
            .filter_map(|s| {
                let n = (s.reads + s.writes) as f64;
                let bytes = s.avg_read_request_bytes.unwrap_or(0.0) * s.reads as f64
                    + s.avg_write_request_bytes.unwrap_or(0.0) * s.writes as f64;
                (n > 0.0).then(|| (s.t_s, bytes / n / 1024.0))
            })
            .collect();
        let depth: Vec<(f64, f64)> = d
            .intervals
            .iter()
            .map(|s| (s.t_s, s.avg_queue_depth))
            .collect();
        let title = format!("{prefix}{}: what {} saw", label(r), d.name);
        let chart = LineChart::new(title.clone())
            .x_axis(Axis::linear("Time (s)"))
            .y_axis(Axis::linear("Request size (KiB)").from_zero())
            .y2_axis(Axis::linear("Queue depth").from_zero())
            .series(Series::new("request size", size))
            .series(Series::new("queue depth", depth).right_axis());
        out.push(Chart::new(
            Kind::TimeSeries,
            Some(run),
            title,
            chart.to_svg(),
            "the device's average request size and queue depth per interval, from its own counters (/sys/block/DEV/stat)",
        ));
    }
}

/// A run on many hosts (MPI): every host's IOPS per interval as a row of shades, on rank 0's
/// clock — a slow host is a light row, a stall on one host a light patch in its row.
fn hosts_chart(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) {
    if doc.fleet.is_none() || doc.results.len() < 2 {
        return;
    }
    let hosts = &doc.results[1..];
    let step = hosts[0].workload.interval_s;
    let title = format!("{prefix}IOPS per host over time");
    let mut map = iogauge_charts::HeatMap::new(&title, "s", "IOPS", step);
    for r in hosts {
        map = map.row(iogauge_charts::HeatRow::new(
            r.name.clone().unwrap_or_default(),
            r.timeseries.iter().map(|s| s.iops),
        ));
    }
    out.push(Chart::new(
        Kind::Hosts,
        Some(run),
        title,
        map.to_svg(),
        "each host's IOPS per interval, one row per MPI rank; the cluster's own time series (its p50 and p99 from all hosts' histograms merged) is the aggregate's chart",
    ));
}

/// A suite in rounds (SNIA PTS): the tracked cell's IOPS per round, the measurement window
/// shaded, the round where steady state was reached marked.
fn convergence_chart(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) {
    let Some(r) = &doc.rounds else { return };
    if r.iops_per_round.is_empty() {
        return;
    }
    let n = r.iops_per_round.len();
    let pts: Vec<(f64, f64)> = r
        .iops_per_round
        .iter()
        .enumerate()
        .map(|(i, &v)| ((i + 1) as f64, v))
        .collect();
    let title = format!("{prefix}Steady state by round: {}", r.tracked);
    let from = n.saturating_sub(r.window) + 1;
    let mut chart = LineChart::new(title.clone())
        .x_axis(Axis::linear("Round"))
        .y_axis(Axis::linear("IOPS").from_zero())
        .series(Series::new(r.tracked.clone(), pts).markers(true))
        .band(Band::new(
            from as f64 - 0.5,
            n as f64 + 0.5,
            "measurement window",
        ));
    if let Some(k) = r.steady_at_round {
        let y = r.iops_per_round[(k as usize).saturating_sub(1).min(n - 1)];
        chart = chart.mark(Mark::new(k as f64, y, format!("steady in round {k}")));
    }
    out.push(Chart::new(
        Kind::Convergence,
        Some(run),
        title,
        chart.to_svg(),
        "the tracked cell's IOPS in each round; shaded: the window the SNIA PTS steady-state test judged (max − min within 20% of its mean, trend within 10%)",
    ));
}

/// IOPS and bandwidth against block size, one line per thread count ("One DVD per second"'s bm-flash
/// tables), for each group of workloads measured at two or more block sizes. Returns the
/// results drawn.
fn block_size_charts(
    doc: &RunDoc,
    among: &[usize],
    run: usize,
    prefix: &str,
    out: &mut Vec<Chart>,
) -> BTreeSet<usize> {
    let mut covered = BTreeSet::new();
    let mut tables: Vec<(Key, Vec<usize>)> = groups(doc, among, &[Dim::Bs, Dim::Threads])
        .into_iter()
        .filter(|(_, members)| distinct(doc, members, Dim::Bs).len() >= 2)
        .collect();
    // By name, so that randread comes before randwrite as in bm-flash's tables.
    tables.sort_by_cached_key(|(key, _)| key.describe());
    for (key, members) in tables {
        covered.extend(members.iter().copied());
        let by_threads = split(doc, &members, Dim::Threads);
        let series = |value: fn(&ResultDoc) -> f64| {
            by_threads.iter().map(move |(t, idx)| {
                let label = format!("{t} thread{}", crate::units::plural(*t as usize));
                Series::new(
                    label,
                    idx.iter()
                        .map(|&i| (doc.results[i].workload.bs as f64, value(&doc.results[i]))),
                )
            })
        };
        let what = key.describe();
        let x = || Axis::log2("Block size").format(format_bytes);
        let iops_title = format!("{prefix}{what}: IOPS by block size");
        let bw_title = format!("{prefix}{what}: bandwidth by block size");
        let mut iops = LineChart::new(iops_title.clone())
            .x_axis(x())
            .y_axis(Axis::linear("IOPS").from_zero());
        for s in series(|r| r.iops) {
            iops = iops.series(s);
        }
        for (i, f) in findings_on(doc, iogauge_analyze::Kind::Gap, &members) {
            let r = &doc.results[i];
            let label = format!("gap: {} of trend", pct(f.evidence.get("ratio").copied()));
            iops = iops.mark(Mark::new(r.workload.bs as f64, r.iops, label));
        }
        let mut bw = LineChart::new(bw_title.clone())
            .x_axis(x())
            .y_axis(Axis::linear(format!("Bandwidth ({})", crate::units::bw_unit())).from_zero());
        for s in series(|r| crate::units::bw_value(r.bw_bytes)) {
            bw = bw.series(s);
        }
        let caption = format!("{what}; one line per thread count, block size on a log2 axis");
        out.push(Chart::new(
            Kind::BsIops,
            Some(run),
            iops_title,
            iops.to_svg(),
            &caption,
        ));
        out.push(Chart::new(
            Kind::BsBw,
            Some(run),
            bw_title,
            bw.to_svg(),
            &caption,
        ));
    }
    covered
}

/// IOPS and mean latency against outstanding IO (threads × iodepth), one pair of lines per read
/// percentage: Orion's figure (MySQL "Solid State Disk Benchmarking").
fn orion_charts(doc: &RunDoc, among: &[usize], run: usize, prefix: &str, out: &mut Vec<Chart>) {
    let outstanding = |i: usize| {
        let w = &doc.results[i].workload;
        u64::from(w.threads) * u64::from(w.iodepth)
    };
    for (key, members) in groups(doc, among, &[Dim::Threads, Dim::Iodepth, Dim::ReadPct]) {
        let by_mix = split(doc, &members, Dim::ReadPct);
        let sweeps = by_mix.values().any(|idx| {
            idx.iter()
                .map(|&i| outstanding(i))
                .collect::<BTreeSet<_>>()
                .len()
                >= 2
        });
        if !sweeps {
            continue;
        }
        let xs: Vec<u64> = members.iter().map(|&i| outstanding(i)).collect();
        let (lo, hi) = (
            xs.iter().copied().min().unwrap_or(1),
            xs.iter().copied().max().unwrap_or(1),
        );
        let x = if lo > 0 && hi >= 8 * lo {
            Axis::log2("Outstanding IO (threads × iodepth)")
        } else {
            Axis::linear("Outstanding IO (threads × iodepth)")
        };
        let what = key.describe();
        let title = format!("{prefix}{what}: IOPS and latency by outstanding IO");
        let mut chart = LineChart::new(title.clone())
            .x_axis(x)
            .y_axis(Axis::linear("IOPS").from_zero())
            .y2_axis(Axis::linear("Mean latency (ms, dashed)").from_zero());
        // Highest read share first, as Orion lists 100, 90, 80, 50 % reads.
        for (pct, idx) in by_mix.iter().rev() {
            let pts = |f: fn(&ResultDoc) -> f64| {
                idx.iter()
                    .map(|&i| (outstanding(i) as f64, f(&doc.results[i])))
                    .collect::<Vec<_>>()
            };
            chart = chart.series(Series::new(format!("{pct}% reads"), pts(|r| r.iops)));
        }
        for (pct, idx) in by_mix.iter().rev() {
            let pts: Vec<(f64, f64)> = idx
                .iter()
                .map(|&i| (outstanding(i) as f64, doc.results[i].lat_ns.mean / 1e6))
                .collect();
            chart = chart.series(Series::new(format!("{pct}% reads, latency"), pts).right_axis());
        }
        for (n, (i, _)) in findings_on(doc, iogauge_analyze::Kind::Ceiling, &members)
            .into_iter()
            .enumerate()
        {
            // One label says it; more would be drawn on top of each other at the same x.
            let label = if n == 0 { "ceiling from here" } else { "" };
            chart = chart.mark(Mark::new(outstanding(i) as f64, doc.results[i].iops, label));
        }
        let caption = format!(
            "{what}; IOPS solid on the left axis, mean latency dashed on the right (Orion's view)"
        );
        out.push(Chart::new(
            Kind::Orion,
            Some(run),
            title,
            chart.to_svg(),
            &caption,
        ));
    }
}

/// Latency percentiles p50 … p99.99 on a "nines" axis, a line per result, in charts of
/// [`LAT_LINES`]. Returns how many results were left out by the [`LAT_CHARTS`] cap.
fn latency_charts(
    doc: &RunDoc,
    among: &[usize],
    run: usize,
    prefix: &str,
    out: &mut Vec<Chart>,
) -> usize {
    let with: Vec<(usize, Vec<(f64, f64)>)> = among
        .iter()
        .map(|&i| (i, percentiles(&doc.results[i])))
        .filter(|(_, p)| p.len() >= 2)
        .collect();
    let n = with.len().div_ceil(LAT_LINES);
    for (c, chunk) in with.chunks(LAT_LINES).take(LAT_CHARTS).enumerate() {
        let part = if n > 1 {
            format!(" ({}/{})", c + 1, n.min(LAT_CHARTS))
        } else {
            String::new()
        };
        let title = format!("{prefix}Latency percentiles{part}");
        let mut chart = latency_chart(title.clone());
        for (i, pts) in chunk.iter() {
            chart = chart.series(Series::new(label(&doc.results[*i]), pts.clone()));
        }
        out.push(Chart::new(
            Kind::Latency,
            Some(run),
            title,
            chart.to_svg(),
            "completion latency at each percentile; both axes stretch the tail",
        ));
    }
    with.len().saturating_sub(LAT_LINES * LAT_CHARTS)
}

fn latency_chart(title: String) -> LineChart {
    LineChart::new(title)
        .x_axis(Axis::nines("Percentile"))
        .y_axis(Axis::log10("Latency").format(units::latency))
}

/// IOPS per interval and per 100 ms bin over the run, stalls shaded. Returns how many results
/// with samples were left out (no stall, in a run of more than [`TS_ALL_UP_TO`] results).
fn timeseries_charts(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) -> usize {
    let mut left_out = 0;
    for r in &doc.results {
        if r.timeseries.is_empty() && r.fine.ios.is_empty() {
            continue;
        }
        // A database result's transactions per second are drawn on its timeline, with the
        // devices; without one they are drawn here, as TPS.
        if r.is_db() && r.timeline.as_deref().is_some_and(|t| !t.rows.is_empty()) {
            continue;
        }
        let rate = if r.is_db() { "TPS" } else { "IOPS" };
        let bands = stall_bands(r);
        if bands.is_empty() && doc.results.len() > TS_ALL_UP_TO {
            left_out += 1;
            continue;
        }
        let name = label(r);
        let title = format!("{prefix}{name}: {rate} over time");
        let mut chart = LineChart::new(title.clone())
            .x_axis(Axis::linear("Time since the measurement started (s)").from_zero())
            .y_axis(Axis::linear(rate).from_zero());
        let mut prev = 0.0;
        let per_interval: Vec<(f64, f64)> = r
            .timeseries
            .iter()
            .map(|s| {
                let mid = (prev + s.t_s) / 2.0;
                prev = s.t_s;
                (mid, s.iops)
            })
            .collect();
        if !per_interval.is_empty() {
            let len = units::duration(std::time::Duration::from_secs_f64(
                r.workload.interval_s.max(0.0),
            ));
            chart = chart.series(Series::new(format!("per {len} interval"), per_interval));
        }
        let fine = fine_rates(&r.fine.ios, r.fine.bin_s);
        if let Some((width, pts)) = fine {
            let len = units::duration(std::time::Duration::from_secs_f64(width));
            chart = chart.series(Series::new(format!("per {len}"), pts).markers(false));
        }
        for b in &bands {
            chart = chart.band(b.clone());
        }
        let caption = if bands.is_empty() {
            format!("{name}; no stalls found")
        } else {
            format!("{name}; shaded: stalls found in the 100 ms completion counts")
        };
        out.push(Chart::new(
            Kind::TimeSeries,
            Some(run),
            title,
            chart.to_svg(),
            &caption,
        ));
    }
    left_out
}

/// Bands for the stall findings of a result.
fn stall_bands(r: &ResultDoc) -> Vec<Band> {
    r.findings
        .iter()
        .filter(|f| f.kind == iogauge_analyze::Kind::Stall)
        .filter_map(|f| {
            let start = *f.evidence.get("start_s")?;
            let dur = *f.evidence.get("duration_s")?;
            Some(Band::new(start, start + dur, format!("stall {dur:.1} s")))
        })
        .collect()
}

/// The fine bins as rates at their midpoints, summed into wider bins so that at most
/// [`TS_MAX_BINS`] remain; `None` without bins.
fn fine_rates(ios: &[u32], bin_s: f64) -> Option<(f64, Vec<(f64, f64)>)> {
    if ios.is_empty() || !(bin_s.is_finite() && bin_s > 0.0) {
        return None;
    }
    let k = ios.len().div_ceil(TS_MAX_BINS).max(1);
    let width = bin_s * k as f64;
    let pts = ios
        .chunks(k)
        .enumerate()
        .map(|(j, c)| {
            let sum: u64 = c.iter().map(|&v| u64::from(v)).sum();
            let w = bin_s * c.len() as f64;
            (j as f64 * width + w / 2.0, sum as f64 / w)
        })
        .collect();
    Some((width, pts))
}

/// A result's name, or its workload in a few words.
pub(super) fn label(r: &ResultDoc) -> String {
    r.name.clone().unwrap_or_else(|| {
        let mut k = Key::of(r, &[]);
        k.target.clear();
        k.describe()
    })
}

/// Latency at percentiles from the result's histogram (or its summary when the histogram is
/// missing), as `(percent, ns)`. A percentile is kept only when at least one IO lies beyond it,
/// since p99.99 of 500 IOs is just the maximum.
pub(crate) fn percentiles(r: &ResultDoc) -> Vec<(f64, f64)> {
    const PCTS: [f64; 9] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];
    // The epsilon keeps 1000 × (1 − 0.999) = 0.99999… from dropping p99.9 of 1000 IOs.
    let supported = |total: u64, p: f64| total as f64 * (1.0 - p / 100.0) >= 1.0 - 1e-9;
    let total: u64 = r.lat_hist.iter().map(|b| b[1]).sum();
    if total > 0 {
        let mut buckets = r.lat_hist.clone();
        buckets.sort_by_key(|b| b[0]);
        return PCTS
            .iter()
            .filter(|&&p| supported(total, p))
            .filter_map(|&p| {
                // In integers (p in hundredths of a percent), since 0.999 × 1000 is 999.0000001
                // in floating point and would round up to the next rank.
                let hundredths = (p * 100.0).round() as u128;
                let rank = ((hundredths * u128::from(total)).div_ceil(10_000) as u64).max(1);
                let mut seen = 0;
                buckets.iter().find_map(|b| {
                    seen += b[1];
                    (seen >= rank).then_some((p, b[0] as f64))
                })
            })
            .collect();
    }
    let l = &r.lat_ns;
    [
        (50.0, l.p50),
        (90.0, l.p90),
        (99.0, l.p99),
        (99.9, l.p999),
        (99.99, l.p9999),
    ]
    .into_iter()
    .filter(|&(p, v)| v > 0 && supported(r.ios, p))
    .map(|(p, v)| (p, v as f64))
    .collect()
}

/// The run's findings of `kind` that point at one of `members`, with that result's index.
fn findings_on<'a>(
    doc: &'a RunDoc,
    kind: iogauge_analyze::Kind,
    members: &[usize],
) -> Vec<(usize, &'a iogauge_analyze::Finding)> {
    doc.findings
        .iter()
        .filter(|f| f.kind == kind)
        .filter_map(|f| {
            let i = f.result?;
            members.contains(&i).then_some((i, f))
        })
        .collect()
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.0}%", x * 100.0))
        .unwrap_or_else(|| "?".into())
}

/// The values of `dim` among `members`.
fn distinct(doc: &RunDoc, members: &[usize], dim: Dim) -> BTreeSet<u64> {
    members
        .iter()
        .map(|&i| dim.of(&doc.results[i].workload))
        .collect()
}

/// `members` split by their value of `dim`, each part in the order of the other swept value.
fn split(doc: &RunDoc, members: &[usize], dim: Dim) -> BTreeMap<u64, Vec<usize>> {
    let mut out: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for &i in members {
        out.entry(dim.of(&doc.results[i].workload))
            .or_default()
            .push(i);
    }
    out
}
