//! Rank 0's reduction of a run under MPI: every rank's document in, one run out — the
//! aggregate first, then each host's own result.
//!
//! Exact, never averaged: the latency histograms (one fixed layout everywhere, `measure`) are
//! summed bucket by bucket, so the aggregate's p99 is the p99 of every IO of every host; the
//! per-interval histograms are summed the same way, interval by interval on rank 0's clock,
//! for the cluster's percentiles over time. The aggregate rate counts only the IOs completed
//! in the window in which every rank was measuring (from the 100 ms completion bins), so a rank
//! that started late or stopped early does not dilute or inflate it.

use crate::measure::{self, LatNs};
use crate::model::{FleetDoc, HostDoc, ResultDoc, RunDoc, Sample};
use anyhow::{anyhow, Result};
use iogauge_analyze::Finding;

/// One rank's part: its document, when it passed the barrier before the cell (its clock), and
/// its clock's offset to rank 0's with the round trip it was measured with.
pub struct Part {
    pub rank: u32,
    pub host: String,
    pub started_ns: i64,
    pub offset_ns: i64,
    pub rtt_ns: u64,
    pub doc: RunDoc,
}

/// The run of all ranks: rank 0's document with the aggregate and the hosts' results.
pub fn combine(mut parts: Vec<Part>) -> Result<RunDoc> {
    parts.sort_by_key(|p| p.rank);
    let first = parts.first().ok_or_else(|| anyhow!("no rank reported"))?;
    if let Some(p) = parts.iter().find(|p| p.doc.results.is_empty()) {
        return Err(anyhow!("{} (rank {}) measured nothing", p.host, p.rank));
    }
    // Each rank's start on rank 0's clock, in seconds after rank 0's.
    let zero = first.started_ns - first.offset_ns;
    let start: Vec<f64> = parts
        .iter()
        .map(|p| (p.started_ns - p.offset_ns - zero) as f64 / 1e9)
        .collect();
    let end: Vec<f64> = parts
        .iter()
        .zip(&start)
        .map(|(p, s)| s + p.doc.results[0].runtime_s)
        .collect();
    let lo = start.iter().copied().fold(f64::MIN, f64::max);
    let hi = end.iter().copied().fold(f64::MAX, f64::min);
    let first_done = end.iter().copied().fold(f64::MAX, f64::min);
    let last_done = end.iter().copied().fold(f64::MIN, f64::max);

    let results: Vec<&ResultDoc> = parts.iter().map(|p| &p.doc.results[0]).collect();
    let mut agg = results[0].clone();
    let n = parts.len();
    let hosts: std::collections::BTreeSet<&str> = parts.iter().map(|p| p.host.as_str()).collect();
    agg.name = Some(format!(
        "all {n} ranks ({} host{})",
        hosts.len(),
        crate::units::plural(hosts.len())
    ));
    let total_ios: u64 = results.iter().map(|r| r.ios).sum();
    let total_bytes: u64 = results.iter().map(|r| r.bytes).sum();
    agg.ios = total_ios;
    agg.bytes = total_bytes;

    count_window(&mut agg, &results, &start, (lo, hi));
    merge_latency_and_cpu(&mut agg, &results, n);
    over_time(&mut agg, &results, &start);
    completion_bins(&mut agg, &results, &start);

    let mut doc = first.doc.clone();
    let mut findings: Vec<Finding> = Vec::new();
    let system = doc.system.clone();
    let th = iogauge_analyze::Thresholds::default();
    for mut f in crate::analysis::result_findings(&agg, &system, None, &th) {
        f.result = Some(0);
        agg.findings.push(f.clone());
        findings.push(f);
    }
    // Ranks on one host share its devices: each sees the others' IO there, which is the run,
    // not another process.
    let shared = |host: &str| parts.iter().filter(|p| p.host == host).count() > 1;
    let judged =
        |f: &Finding, host: &str| !(f.kind == iogauge_analyze::Kind::OtherIo && shared(host));
    if parts.iter().any(|p| shared(&p.host)) {
        doc.notes.push(
            "several ranks ran on one host: its devices counted all of them, so `other-io` is not judged for those ranks".into(),
        );
    }
    let out = hosts_results(agg, &parts, &results, &mut findings, &judged);
    let names: Vec<String> = out[1..].iter().filter_map(|r| r.name.clone()).collect();
    let iops: Vec<f64> = out[1..].iter().map(|r| r.iops).collect();
    let flagged = straggling(&iops);
    for f in iogauge_analyze::stragglers(&names, &iops, &flagged) {
        let i = 1 + f.evidence.get("rank").copied().unwrap_or(0.0) as usize;
        findings.push(f.for_result(i));
    }
    let worst_rtt = parts.iter().map(|p| p.rtt_ns).max().unwrap_or(0);
    doc.notes.push(format!(
        "{n} ranks on {} host{}: each started after one barrier; clocks were aligned to rank 0's by ping-pong over MPI (offsets known to within {}); the aggregate counts the IOs completed from {:.2} s to {:.2} s, while every rank was measuring, and its latency percentiles come from all ranks' histograms summed",
        hosts.len(),
        crate::units::plural(hosts.len()),
        crate::units::latency(worst_rtt as f64 / 2.0),
        lo.max(0.0),
        hi.max(0.0)
    ));
    let stonewall = match (results[0].workload.data_bytes, stopped_by_peer(&parts)) {
        (Some(_), true) => "first",
        (Some(_), false) => "data",
        (None, _) => "time",
    };
    doc.fleet = Some(FleetDoc {
        hosts: parts
            .iter()
            .zip(&start)
            .map(|(p, s)| HostDoc {
                rank: p.rank,
                host: p.host.clone(),
                target: p.doc.results[0].target.path.clone(),
                kernel: p.doc.system.kernel.clone().unwrap_or_default(),
                clock_offset_ns: p.offset_ns,
                rtt_ns: p.rtt_ns,
                start_s: *s,
                barrier_wait_ms: 0.0,
            })
            .collect(),
        stonewall: stonewall.into(),
        window_s: [lo, hi],
        first_done_s: first_done,
        last_done_s: last_done,
        exchange_ms: Default::default(),
        total_ios,
        total_bytes,
    });
    doc.interrupted = parts.iter().any(|p| p.doc.interrupted);
    doc.results = out;
    doc.findings = findings;
    Ok(doc)
}

/// The aggregate's rate over the window in which every rank was measuring (`lo`..`hi` on rank
/// 0's clock), counted from the completion bins of each rank moved onto rank 0's clock; a
/// window too short to hold a bin falls back to the whole runs.
fn count_window(agg: &mut ResultDoc, results: &[&ResultDoc], start: &[f64], (lo, hi): (f64, f64)) {
    let bin = results[0].fine.bin_s.max(1e-3);
    let (mut win_ios, mut win_bytes) = (0.0, 0.0);
    for (r, s) in results.iter().zip(start) {
        let per_io = if r.ios > 0 {
            r.bytes as f64 / r.ios as f64
        } else {
            0.0
        };
        let ios: f64 = r
            .fine
            .ios
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let t = s + *i as f64 * bin;
                t >= lo - 1e-9 && t + bin <= hi + 1e-9
            })
            .map(|(_, &v)| f64::from(v))
            .sum();
        win_ios += ios;
        win_bytes += ios * per_io;
    }
    let counted = ((hi - lo) / bin).floor() * bin;
    if counted >= bin && win_ios > 0.0 {
        // The aggregate keeps its own arithmetic (iops = ios / runtime_s) over the window; the
        // ranks' totals are in `fleet`.
        agg.iops = win_ios / counted;
        agg.bw_bytes = win_bytes / counted;
        agg.runtime_s = counted;
        agg.ios = win_ios.round() as u64;
        agg.bytes = win_bytes.round() as u64;
    } else {
        agg.iops = results.iter().map(|r| r.iops).sum();
        agg.bw_bytes = results.iter().map(|r| r.bw_bytes).sum();
    }
}

/// Every IO's latency (the ranks' histograms summed bucket by bucket), the CPU summed, and what
/// only one rank's result can say (its devices, read and write apart) left out.
fn merge_latency_and_cpu(agg: &mut ResultDoc, results: &[&ResultDoc], n: usize) {
    let mut all = measure::run_hist();
    for r in results {
        measure::merge(&mut all, &measure::from_buckets(&r.lat_hist));
    }
    agg.lat_ns = LatNs::of(&all);
    agg.lat_hist = measure::buckets(&all);
    agg.read = None;
    agg.write = None;
    agg.cpu.user_s = results.iter().map(|r| r.cpu.user_s).sum();
    agg.cpu.sys_s = results.iter().map(|r| r.cpu.sys_s).sum();
    agg.cpu.per_io_us = match agg.ios {
        0 => 0.0,
        ios => (agg.cpu.user_s + agg.cpu.sys_s) * 1e6 / ios as f64,
    };
    agg.devices = Vec::new();
    agg.findings = Vec::new();
    agg.interrupted = results.iter().any(|r| r.interrupted);
    agg.error = results.iter().find_map(|r| r.error.clone());
    agg.target.path = format!("{n} targets");
    agg.target.absolute_path = None;
    agg.target.device = None;
}

/// The cluster over time: interval k of every rank, moved by its start onto rank 0's clock,
/// rates summed and histograms merged.
fn over_time(agg: &mut ResultDoc, results: &[&ResultDoc], start: &[f64]) {
    let interval = results[0].workload.interval_s.max(1e-3);
    let shift: Vec<i64> = start
        .iter()
        .map(|s| (s / interval).round() as i64)
        .collect();
    let last = results
        .iter()
        .zip(&shift)
        .map(|(r, &d)| r.timeseries.len() as i64 + d)
        .max()
        .unwrap_or(0)
        .max(0);
    agg.timeseries = Vec::new();
    agg.interval_hists = Vec::new();
    for k in 0..last {
        let mut h = measure::interval_hist();
        let (mut iops, mut bw) = (0.0, 0.0);
        for (r, &d) in results.iter().zip(&shift) {
            let Ok(i) = usize::try_from(k - d) else {
                continue;
            };
            if let Some(s) = r.timeseries.get(i) {
                iops += s.iops;
                bw += s.bw_bytes;
            }
            if let Some(b) = r.interval_hists.get(i) {
                measure::merge(&mut h, &measure::interval_from_buckets(b));
            }
        }
        agg.timeseries.push(Sample {
            t_s: (k + 1) as f64 * interval,
            iops,
            bw_bytes: bw,
            lat_p50_ns: h.value_at_quantile(0.5),
            lat_p99_ns: h.value_at_quantile(0.99),
        });
        agg.interval_hists.push(measure::buckets(&h));
    }
}

/// Completion bins summed on rank 0's clock, for stalls and regimes of the whole, and the
/// CPU series summed where every rank has them.
fn completion_bins(agg: &mut ResultDoc, results: &[&ResultDoc], start: &[f64]) {
    let bin = results[0].fine.bin_s.max(1e-3);
    let fshift: Vec<i64> = start.iter().map(|s| (s / bin).round() as i64).collect();
    let flen = results
        .iter()
        .zip(&fshift)
        .map(|(r, &d)| r.fine.ios.len() as i64 + d)
        .max()
        .unwrap_or(0)
        .max(0) as usize;
    let mut fine = vec![0u32; flen];
    for (r, &d) in results.iter().zip(&fshift) {
        for (i, &v) in r.fine.ios.iter().enumerate() {
            if let Ok(j) = usize::try_from(i as i64 + d) {
                if let Some(slot) = fine.get_mut(j) {
                    *slot = slot.saturating_add(v);
                }
            }
        }
    }
    // The whole's CPU time, on a CPU and waiting, is the ranks' summed, when every rank has it.
    let whole = results.iter().all(|r| r.fine.cpu_cover());
    let summed = |of: fn(&ResultDoc) -> &Vec<f32>| {
        let mut sum = vec![0.0f32; if whole { flen } else { 0 }];
        for (r, &d) in results.iter().zip(&fshift).filter(|_| whole) {
            for (i, &v) in of(r).iter().enumerate() {
                if let Some(s) = usize::try_from(i as i64 + d)
                    .ok()
                    .and_then(|j| sum.get_mut(j))
                {
                    *s += v;
                }
            }
        }
        sum
    };
    agg.fine.cpu_run = summed(|r| &r.fine.cpu_run);
    agg.fine.cpu_wait = summed(|r| &r.fine.cpu_wait);
    // Each host's other work is its own machine's, judged against its own CPUs: a sum over
    // hosts means nothing, so the combined result has none.
    agg.fine.cpu_others = Vec::new();
    // Each host's device is its own too.
    agg.fine.in_flight = Vec::new();
    agg.fine.ios = fine;
}

/// The aggregate first, then each rank's own result named by host and rank (its interval
/// histograms dropped, its findings moved to its place); rank 0's view of each rank's
/// findings joins `findings`.
fn hosts_results(
    agg: ResultDoc,
    parts: &[Part],
    results: &[&ResultDoc],
    findings: &mut Vec<Finding>,
    judged: &dyn Fn(&Finding, &str) -> bool,
) -> Vec<ResultDoc> {
    let mut out = vec![agg];
    for (p, r) in parts.iter().zip(results) {
        let i = out.len();
        let mut mine = (*r).clone();
        let who = format!("{} (rank {})", p.host, p.rank);
        mine.name = Some(who.clone());
        mine.interval_hists = Vec::new();
        mine.findings.retain(|f| judged(f, &p.host));
        for f in &mut mine.findings {
            name_host(f, &who, i);
        }
        for f in &p.doc.findings {
            if f.result == Some(0) && judged(f, &p.host) {
                let mut f = f.clone();
                name_host(&mut f, &who, i);
                findings.push(f);
            }
        }
        out.push(mine);
    }
    out
}

/// The hosts whose IOPS are outliers by the repeats' rule (modified z-score above 3.5 and at
/// least 10% from the others' median). That rule needs many hosts to see one: with three, two
/// healthy hosts 40% apart (one sharing its CPUs with other work) make the spread it measures
/// against, and a host at under 1% of them goes unnamed. So when that rule names no host, at
/// any number of hosts, a host is one when it is 10% from the others' median and its distance
/// to the nearest other host, as a ratio, is more than twice the whole spread of the others (the ratio of their highest to their lowest): a gap no
/// host among the others comes near. Where the others agree exactly, any material gap is one.
fn straggling(iops: &[f64]) -> Vec<usize> {
    let rule = iogauge_stats::OutlierRule::default();
    let flagged = iogauge_stats::material_outliers(iops, rule).unwrap_or_default();
    if !flagged.is_empty() || iops.len() < 3 {
        return flagged;
    }
    (0..iops.len())
        .filter(|&i| {
            let others: Vec<f64> = (0..iops.len())
                .filter(|&j| j != i)
                .map(|j| iops[j])
                .collect();
            let (lo, hi) = others
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
            if !(lo > 0.0 && hi.is_finite() && iops[i].is_finite() && iops[i] >= 0.0) {
                return false;
            }
            let mut sorted = others.clone();
            sorted.sort_by(f64::total_cmp);
            let n = sorted.len();
            let median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0;
            let material = (iops[i] / median - 1.0).abs() >= rule.min_shift;
            // ln of the gap to the nearest other host, against ln of the others' spread.
            let gap = match iops[i] {
                v if v < lo => (lo / v).ln(),
                v if v > hi => (v / hi).ln(),
                _ => 0.0,
            };
            material && gap > 2.0 * (hi / lo).ln()
        })
        .collect()
}

/// Whether a rank's cell ended before its data (`--stonewall first` stopped it): it moved less
/// than it was given.
fn stopped_by_peer(parts: &[Part]) -> bool {
    parts.iter().any(|p| {
        let r = &p.doc.results[0];
        r.workload
            .data_bytes
            .is_some_and(|d| r.bytes + r.workload.bs < d)
    })
}

/// A host's finding in the run of all: its summary starts with the host, and it points at the
/// host's result.
fn name_host(f: &mut Finding, who: &str, result: usize) {
    f.summary = format!("{who}: {}", f.summary);
    f.result = Some(result);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank's document: `iops` for `secs` in 100 ms bins and 1 s intervals, every IO at
    /// `lat_ns`.
    fn part(rank: u32, iops: f64, lat_ns: u64, started_ns: i64, offset_ns: i64) -> Part {
        let secs = 4.0;
        let mut r = crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 4, iops);
        let ios = (iops * secs) as u64;
        r.ios = ios;
        r.bytes = ios * 4096;
        r.runtime_s = secs;
        r.bw_bytes = iops * 4096.0;
        r.fine.bin_s = 0.1;
        r.fine.ios = vec![(iops * 0.1) as u32; 40];
        r.workload.interval_s = 1.0;
        let mut h = measure::run_hist();
        h.record_n(lat_ns, ios).unwrap();
        r.lat_hist = measure::buckets(&h);
        let mut ih = measure::interval_hist();
        ih.record_n(lat_ns, (iops) as u64).unwrap();
        r.timeseries = (1..=4)
            .map(|k| Sample {
                t_s: k as f64,
                iops,
                bw_bytes: iops * 4096.0,
                lat_p50_ns: lat_ns,
                lat_p99_ns: lat_ns,
            })
            .collect();
        r.interval_hists = vec![measure::buckets(&ih); 4];
        let mut doc = crate::analysis::tests::doc(vec![r]);
        doc.system.kernel = Some("6.1".into());
        Part {
            rank,
            host: format!("h{rank}"),
            started_ns,
            offset_ns,
            rtt_ns: 20_000,
            doc,
        }
    }

    #[test]
    fn the_aggregate_is_the_sum_and_the_percentiles_those_of_all_ios() {
        // Three ranks, the third slow and slow to answer; clocks offset but starts aligned.
        let parts = vec![
            part(0, 4000.0, 100_000, 1_000_000_000, 0),
            part(1, 4000.0, 100_000, 1_500_000_000, 500_000_000),
            part(2, 1000.0, 4_000_000, 900_000_000, -100_000_000),
        ];
        let doc = combine(parts).unwrap();
        let agg = &doc.results[0];
        assert_eq!(doc.results.len(), 4);
        assert!((agg.iops - 9000.0).abs() < 1.0, "{}", agg.iops);
        assert_eq!(doc.fleet.as_ref().unwrap().total_ios, 36_000);
        assert!((agg.ios as f64 / agg.runtime_s - agg.iops).abs() < 1.0);
        // 4,000 of 36,000 IOs at 4 ms: the p99 is 4 ms, the p50 100 µs.
        assert!(
            (agg.lat_ns.p99 as f64 / 4e6 - 1.0).abs() < 0.01,
            "{:?}",
            agg.lat_ns
        );
        assert!(
            (agg.lat_ns.p50 as f64 / 1e5 - 1.0).abs() < 0.01,
            "{:?}",
            agg.lat_ns
        );
        // Over time too: each second holds 9,000 IOs, 1,000 of them at 4 ms.
        assert_eq!(agg.timeseries.len(), 4);
        assert!((agg.timeseries[1].iops - 9000.0).abs() < 1.0);
        assert!((agg.timeseries[1].lat_p99_ns as f64 / 4e6 - 1.0).abs() < 0.02);
        let f = doc
            .findings
            .iter()
            .find(|f| f.kind == iogauge_analyze::Kind::Straggler)
            .expect("a straggler");
        assert_eq!(f.result, Some(3));
        assert!(f.summary.starts_with("h2 (rank 2)"));
        let fleet = doc.fleet.as_ref().unwrap();
        assert_eq!(fleet.hosts.len(), 3);
        assert!(fleet.hosts.iter().all(|h| h.start_s.abs() < 1e-9));
    }

    /// The rank held to 1,000 IOPS is named beside two healthy ranks 40% apart (one sharing
    /// its CPUs with other work), as in a three-rank run on a busy machine; near misses: three
    /// ranks evenly spread, a gap no wider than the others' spread, and a gap under 10%.
    #[test]
    fn a_far_rank_among_three_is_named_even_when_the_others_differ() {
        assert_eq!(straggling(&[232_000.0, 1_000.0, 140_000.0]), vec![1]);
        assert_eq!(straggling(&[232_000.0, 140_000.0, 1_000.0]), vec![2]);
        assert_eq!(straggling(&[4000.0, 1000.0, 4000.0]), vec![1]);
        assert!(straggling(&[100.0, 150.0, 220.0]).is_empty());
        assert!(straggling(&[1000.0, 1500.0, 2500.0]).is_empty());
        assert!(straggling(&[1000.0, 1001.0, 1050.0]).is_empty());
        assert!(straggling(&[1000.0, 1001.0]).is_empty());
    }

    /// The aggregate's CPU series are the ranks' summed bin for bin, and absent when a rank has
    /// none (it cannot be judged by part of the fleet).
    #[test]
    fn the_aggregates_cpu_is_the_ranks_summed() {
        let with_cpu = |rank, run: f32, wait: f32| {
            let mut p = part(rank, 1000.0, 100_000, 0, 0);
            let r = &mut p.doc.results[0];
            r.fine.cpu_run = vec![run; r.fine.ios.len()];
            r.fine.cpu_wait = vec![wait; r.fine.ios.len()];
            p
        };
        let doc = combine(vec![with_cpu(0, 0.5, 0.1), with_cpu(1, 0.25, 0.3)]).unwrap();
        let fine = &doc.results[0].fine;
        assert!(fine.cpu_cover(), "{fine:?}");
        assert!(fine.cpu_run.iter().all(|&v| (v - 0.75).abs() < 1e-6));
        assert!(fine.cpu_wait.iter().all(|&v| (v - 0.4).abs() < 1e-6));
        let doc = combine(vec![with_cpu(0, 0.5, 0.1), part(1, 1000.0, 100_000, 0, 0)]).unwrap();
        assert!(doc.results[0].fine.cpu_run.is_empty());
    }

    #[test]
    fn a_rank_that_starts_late_counts_only_in_the_common_window() {
        // Rank 1 starts 1 s after rank 0 (same clock): the window is 1–4 s.
        let parts = vec![
            part(0, 1000.0, 100_000, 0, 0),
            part(1, 1000.0, 100_000, 1_000_000_000, 0),
        ];
        let doc = combine(parts).unwrap();
        let fleet = doc.fleet.as_ref().unwrap();
        assert!((fleet.window_s[0] - 1.0).abs() < 1e-9 && (fleet.window_s[1] - 4.0).abs() < 1e-9);
        assert!(
            (doc.results[0].iops - 2000.0).abs() < 1.0,
            "{}",
            doc.results[0].iops
        );
        assert!((fleet.last_done_s - 5.0).abs() < 1e-9);
        assert!(doc
            .findings
            .iter()
            .all(|f| f.kind != iogauge_analyze::Kind::Straggler));
    }
}
