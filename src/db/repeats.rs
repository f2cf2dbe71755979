//! `--repeat` for the loads that do not repeat themselves (`db sysbench`, `db tpcc`): the same
//! measurement again on the same loaded database, the repeats joined into one result as
//! pgbench joins its own.

use crate::model::ResultDoc;

/// A load's repeats on one server as one result, as pgbench joins its own: the latency
/// histograms merged exactly, time series, timelines and device windows end to end, counts
/// added, the rate over the repeats' whole time; each repeat kept for the statistics, and a
/// TPC-C repeat's new orders a minute beside it. `None` when nothing was measured.
pub fn repeated(runs: Vec<ResultDoc>) -> Option<ResultDoc> {
    use crate::measure;
    use crate::model::{CpuDoc, RepeatDoc, Sample};
    if runs.len() < 2 {
        return runs.into_iter().next();
    }
    let mut hist = measure::run_hist();
    let mut repeats = Vec::new();
    for r in &runs {
        measure::merge(&mut hist, &measure::from_buckets(&r.lat_hist));
        repeats.push(RepeatDoc {
            iops: r.iops,
            bw_bytes: 0.0,
            ios: r.ios,
            bytes: 0,
            runtime_s: r.runtime_s,
            lat_ns: r.lat_ns,
            syncs_per_s: None,
            cpu: r.cpu.clone(),
            complete_batch: None,
            complete_trial: None,
        });
    }
    let mut runs = runs.into_iter();
    let mut doc = runs.next()?;
    if let Some(t) = doc.tpcc.as_mut() {
        t.nopm_repeats = vec![t.nopm];
    }
    for r in runs {
        let offset = doc.timeseries.last().map_or(0.0, |s| s.t_s);
        doc.timeseries.extend(r.timeseries.iter().map(|s| Sample {
            t_s: s.t_s + offset,
            ..*s
        }));
        if let (Some(into), Some(more)) = (doc.timeline.as_mut(), r.timeline) {
            super::timeline::append(into, *more);
        }
        for d in &mut doc.devices {
            match r.devices.iter().find(|n| n.name == d.name) {
                Some(n) => d.then(n),
                None => d.then(&crate::model::DeviceDoc::default()),
            }
        }
        doc.ios += r.ios;
        doc.runtime_s += r.runtime_s;
        doc.cpu = CpuDoc::new(
            doc.cpu.user_s + r.cpu.user_s,
            doc.cpu.sys_s + r.cpu.sys_s,
            doc.ios,
        );
        if let (Some(t), Some(n)) = (doc.tpcc.as_mut(), r.tpcc.as_ref()) {
            t.nopm_repeats.push(n.nopm);
            // Rates a minute over both windows, weighted by their lengths.
            let (a, b) = (t.window_s, n.window_s);
            let per = |x: f64, y: f64| (x * a + y * b) / (a + b).max(1e-9);
            t.driver_nopm = per(t.driver_nopm, n.driver_nopm);
            t.tpm = per(t.tpm, n.tpm);
            t.driver_tpm = per(t.driver_tpm, n.driver_tpm);
            t.window_s += b;
            t.rollbacks += n.rollbacks;
            t.retries += n.retries;
            t.db_bytes_end = n.db_bytes_end;
            t.driver_cpu_s += n.driver_cpu_s;
            t.server_cpu_s += n.server_cpu_s;
            for (k, m) in t.kinds.iter_mut().zip(&n.kinds) {
                k.count += m.count;
            }
            let total: u64 = t.kinds.iter().map(|k| k.count).sum();
            for k in &mut t.kinds {
                k.share_pct = 100.0 * k.count as f64 / total.max(1) as f64;
            }
            t.driver_cpu_us_per_txn = t.driver_cpu_s * 1e6 / total.max(1) as f64;
        }
        if let (Some(a), Some(b)) = (doc.sysbench.as_mut(), r.sysbench.as_ref()) {
            let offset = a.seconds.last().map_or(0.0, |s| s[0]);
            a.seconds.extend(
                b.seconds
                    .iter()
                    .map(|s| [s[0] + offset, s[1], s[2], s[3], s[4], s[5]]),
            );
            a.transactions += b.transactions;
            a.queries += b.queries;
            a.reads += b.reads;
            a.writes += b.writes;
            a.other += b.other;
            a.errors += b.errors;
            a.reconnects += b.reconnects;
            a.total_time_s += b.total_time_s;
            a.sysbench_tps = a.transactions as f64 / a.total_time_s.max(1e-9);
            a.qps = a.queries as f64 / a.total_time_s.max(1e-9);
            for (k, v) in &b.status {
                *a.status.entry(k.clone()).or_default() += v;
            }
        }
        doc.findings.extend(r.findings);
    }
    doc.iops = doc.ios as f64 / doc.runtime_s.max(1e-9);
    doc.tps = Some(doc.iops);
    doc.lat_ns = measure::LatNs::of(&hist);
    doc.lat_hist = measure::buckets(&hist);
    if let Some(t) = doc.tpcc.as_mut() {
        t.nopm = t.nopm_repeats.iter().sum::<f64>() / t.nopm_repeats.len() as f64;
    }
    doc.stats = crate::repeats::stats_for(&repeats);
    doc.repeats = repeats;
    Some(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A load's result of `tps` for 10 s with `nopm` new orders a minute and one device that
    /// read `reads` at `util` busy.
    fn load(tps: f64, nopm: f64, reads: u64, util: f64) -> ResultDoc {
        let mut r = crate::analysis::tests::result(crate::workload::Rw::Randrw, 8192, 4, 1, tps);
        r.runtime_s = 10.0;
        r.ios = (tps * 10.0) as u64;
        let mut h = crate::measure::run_hist();
        h.record_n((1e9 / tps) as u64, r.ios).unwrap();
        r.lat_hist = crate::measure::buckets(&h);
        r.tpcc = Some(Box::new(crate::model::TpccDoc {
            nopm,
            window_s: 10.0,
            ..Default::default()
        }));
        r.devices = vec![crate::model::DeviceDoc {
            name: "vda".into(),
            elapsed_s: 10.0,
            reads: Some(reads),
            util: Some(util),
            ..Default::default()
        }];
        r
    }

    #[test]
    fn repeats_join_into_one_result_with_each_kept() {
        assert!(repeated(Vec::new()).is_none());
        let one = repeated(vec![load(100.0, 60.0, 10, 0.5)]).unwrap();
        assert!(one.repeats.is_empty() && one.stats.is_empty());
        let r = repeated(vec![
            load(100.0, 60.0, 10, 0.5),
            load(300.0, 120.0, 30, 1.0),
        ])
        .unwrap();
        // The rate over the whole time, every transaction in the histogram.
        assert_eq!((r.ios, r.runtime_s, r.iops), (4_000, 20.0, 200.0));
        let in_hist: u64 = r.lat_hist.iter().map(|b| b[1]).sum();
        assert_eq!(in_hist, 4_000);
        assert_eq!(r.repeats.len(), 2);
        assert_eq!(r.stats["iops"].n, 2);
        assert_eq!(r.stats["iops"].values, [100.0, 300.0]);
        let t = r.tpcc.as_deref().unwrap();
        assert_eq!(
            (t.nopm_repeats.clone(), t.nopm, t.window_s),
            (vec![60.0, 120.0], 90.0, 20.0)
        );
        // The device over both windows: counts added, busy time weighted by each window.
        let d = &r.devices[0];
        assert_eq!((d.reads, d.elapsed_s, d.util), (Some(40), 20.0, Some(0.75)));
    }
}
