//! A cell's measurements as one result document: its repeats folded into headline numbers over
//! all of them together, every latency from the merged histograms (never the mean or median of
//! per-repeat percentiles), each repeat kept in `repeats` and their statistics in `stats`.

use super::work::Ran;
use crate::measure::{self, LatNs};
use crate::model::{
    CpuDoc, DeviceDoc, IgnoredDoc, KernelThreadDoc, OpDoc, OthersDoc, RepeatDoc, ResultDoc, Sample,
    TargetDoc, WorkloadDoc,
};
use crate::runner::Measured;
use crate::target::Target;
use iogauge_sysinfo::diskstats::QueueLimits;

/// One result from the repeats of one cell (at least one).
pub fn result(mut ran: Vec<Ran>, target: &Target, name: Option<String>) -> ResultDoc {
    let repeats: Vec<RepeatDoc> = if ran.len() > 1 {
        ran.iter().map(|r| repeat_doc(&r.m)).collect()
    } else {
        Vec::new()
    };
    let devices = devices(&ran);
    // Other processes' IO over every repeat's window; unknown if any repeat did not count it.
    let others = ran.iter().try_fold(None::<OthersDoc>, |acc, r| {
        let o = OthersDoc::of(r.others.as_ref()?);
        Some(Some(match acc {
            Some(mut a) => {
                a.add(&o);
                a
            }
            None => o,
        }))
    });
    // Each thread's share over the repeats that saw it, their mean.
    let mut kernel_threads: Vec<(String, f64, u32)> = Vec::new();
    for (name, cpu) in ran.iter().flat_map(|r| &r.kernel_threads) {
        match kernel_threads.iter_mut().find(|k| &k.0 == name) {
            Some(k) => (k.1, k.2) = (k.1 + cpu, k.2 + 1),
            None => kernel_threads.push((name.clone(), *cpu, 1)),
        }
    }
    let first = ran.remove(0);
    let mut m = first.m;
    for r in ran {
        m = append(m, r.m);
    }
    let mut doc = ResultDoc {
        name,
        workload: WorkloadDoc::of(&first.spec),
        target: TargetDoc {
            path: first
                .path
                .unwrap_or_else(|| target.path.display().to_string()),
            absolute_path: std::path::absolute(&target.path)
                .map(|p| p.display().to_string())
                .ok(),
            device: target.device.clone(),
            kind: target.kind.name().into(),
            created: target.created,
            offset_bytes: target.offset + first.start,
            range_bytes: first.len,
            logical_block_size: target.logical_block,
            files: target.files(),
        },
        iops: m.ios as f64 / m.runtime_s,
        bw_bytes: m.bytes as f64 / m.runtime_s,
        ios: m.ios,
        bytes: m.bytes,
        runtime_s: m.runtime_s,
        lat_ns: m.lat,
        lat_hist: measure::buckets(&m.hist),
        read: m.read,
        write: m.write,
        trim: m.trim,
        sync: m.sync,
        service_lat_ns: m.service_hist.as_ref().map(LatNs::of),
        cpu: m.cpu,
        timeseries: m.timeseries,
        interval_hists: m.interval_hists,
        fine: m.fine,
        engine: m.engine,
        interrupted: m.interrupted.is_some() || m.error.is_some(),
        error: m
            .error
            .as_ref()
            .map(|e| format!("{}: {e:#}", target.path.display())),
        io_path: if first.spec.direct {
            "direct"
        } else {
            "buffered"
        }
        .into(),
        findings: Vec::new(),
        repeats: Vec::new(),
        devices,
        others: others.flatten(),
        kernel_threads: kernel_threads
            .into_iter()
            .map(|(name, sum, n)| KernelThreadDoc {
                name,
                cpu: sum / f64::from(n),
            })
            .collect(),
        stats: Default::default(),
        pg: None,
        sysbench: None,
        tpcc: None,
        tps: None,
        verify: None,
        timeline: None,
        together: None,
        fill: None,
        ignored_errors: m.ignored,
    };
    if !repeats.is_empty() {
        doc.stats = crate::repeats::stats_for(&repeats);
        doc.repeats = repeats;
    }
    doc
}

/// Each device's counts summed over the repeats (unknown if any repeat could not read them),
/// its intervals end to end.
fn devices(ran: &[Ran]) -> Vec<DeviceDoc> {
    let Some(first) = ran.first() else {
        return Vec::new();
    };
    first
        .devices
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut total = d.total;
            let mut elapsed = 0.0;
            let mut intervals = Vec::new();
            for r in ran {
                let Some(w) = r.devices.get(i) else {
                    total = None;
                    continue;
                };
                let step = w.interval.as_secs_f64();
                intervals.extend(
                    w.intervals
                        .iter()
                        .enumerate()
                        .map(|(k, s)| (elapsed + (k + 1) as f64 * step, *s)),
                );
                elapsed += w.elapsed.as_secs_f64();
                if !std::ptr::eq(r, first) {
                    match (total.as_mut(), w.total) {
                        (Some(t), Some(x)) => t.add(&x),
                        _ => total = None,
                    }
                }
            }
            DeviceDoc::of(
                &d.name,
                total.as_ref(),
                elapsed,
                &intervals,
                QueueLimits::read(&d.name),
            )
        })
        .collect()
}

fn repeat_doc(m: &Measured) -> RepeatDoc {
    RepeatDoc {
        iops: m.ios as f64 / m.runtime_s,
        bw_bytes: m.bytes as f64 / m.runtime_s,
        ios: m.ios,
        bytes: m.bytes,
        runtime_s: m.runtime_s,
        lat_ns: m.lat,
        syncs_per_s: m.sync.as_ref().map(|s| s.per_s),
        cpu: m.cpu.clone(),
        complete_batch: Some(m.engine.complete_batch).filter(|b| *b > 0),
        complete_trial: m.engine.complete_trial,
    }
}

/// Two measurements of the same workload one after the other, as one: counts and times add
/// up, histograms merge exactly, the time series run end to end.
fn append(mut a: Measured, b: Measured) -> Measured {
    let offset = a.runtime_s;
    measure::merge(&mut a.hist, &b.hist);
    measure::merge(&mut a.read_hist, &b.read_hist);
    measure::merge(&mut a.write_hist, &b.write_hist);
    measure::merge(&mut a.trim_hist, &b.trim_hist);
    measure::merge(&mut a.sync_hist, &b.sync_hist);
    if let (Some(x), Some(y)) = (a.service_hist.as_mut(), b.service_hist.as_ref()) {
        measure::merge(x, y);
    }
    a.ios += b.ios;
    a.bytes += b.bytes;
    a.runtime_s = (a.runtime_s + b.runtime_s).max(1e-9);
    let secs = a.runtime_s;
    a.lat = LatNs::of(&a.hist);
    a.timeseries.extend(b.timeseries.iter().map(|s| Sample {
        t_s: s.t_s + offset,
        ..*s
    }));
    a.fine = std::mem::take(&mut a.fine).then(b.fine);
    a.cpu = CpuDoc::new(
        a.cpu.user_s + b.cpu.user_s,
        a.cpu.sys_s + b.cpu.sys_s,
        a.ios,
    );
    let op = |x, y, h: &measure::Hist| joined_op(x, y, h, secs);
    a.read = op(a.read, b.read, &a.read_hist);
    a.write = op(a.write, b.write, &a.write_hist);
    a.trim = op(a.trim, b.trim, &a.trim_hist);
    if let Some(sync) = a.sync.as_mut() {
        sync.count += b.sync.as_ref().map_or(0, |s| s.count);
        sync.per_s = sync.count as f64 / secs;
        sync.lat_ns = LatNs::of(&a.sync_hist);
    }
    a.interrupted = a.interrupted.or(b.interrupted);
    a.error = a.error.or(b.error);
    a.ignored = IgnoredDoc::sum(a.ignored, b.ignored);
    a.stopped_early |= b.stopped_early;
    a
}

/// One direction of two measurements joined (repeats one after another, or streams at once):
/// counts added, rates over `secs`, latencies from the merged histogram `h`.
pub(crate) fn joined_op(
    x: Option<OpDoc>,
    y: Option<OpDoc>,
    h: &measure::Hist,
    secs: f64,
) -> Option<OpDoc> {
    if x.is_none() && y.is_none() {
        return None;
    }
    let (x, y) = (x.unwrap_or_default(), y.unwrap_or_default());
    let (ios, bytes) = (x.ios + y.ios, x.bytes + y.bytes);
    Some(OpDoc {
        ios,
        bytes,
        iops: ios as f64 / secs,
        bw_bytes: bytes as f64 / secs,
        lat_ns: LatNs::of(h),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SyncDoc;

    fn measured(lat: &[u64], writes: &[u64], syncs: &[u64]) -> Measured {
        let mut hist = measure::run_hist();
        let mut read_hist = measure::run_hist();
        let mut write_hist = measure::run_hist();
        let mut sync_hist = measure::run_hist();
        for &l in lat {
            hist.saturating_record(l);
            read_hist.saturating_record(l);
        }
        for &l in writes {
            hist.saturating_record(l);
            write_hist.saturating_record(l);
        }
        for &l in syncs {
            sync_hist.saturating_record(l);
        }
        let n = (lat.len() + writes.len()) as u64;
        let op = |k: usize, h: &measure::Hist| OpDoc {
            ios: k as u64,
            bytes: k as u64 * 4096,
            iops: k as f64,
            bw_bytes: k as f64 * 4096.0,
            lat_ns: LatNs::of(h),
        };
        Measured {
            ios: n,
            bytes: n * 4096,
            runtime_s: 1.0,
            lat: LatNs::of(&hist),
            read: Some(op(lat.len(), &read_hist)),
            write: Some(op(writes.len(), &write_hist)),
            trim: None,
            sync: Some(SyncDoc {
                kind: None,
                count: syncs.len() as u64,
                per_s: syncs.len() as f64,
                lat_ns: LatNs::of(&sync_hist),
            }),
            cpu: CpuDoc::new(0.5, 0.5, n),
            timeseries: vec![Sample {
                t_s: 1.0,
                ..Sample::default()
            }],
            interval_hists: Vec::new(),
            fine: crate::model::FineDoc::default(),
            engine: Default::default(),
            interrupted: None,
            hist,
            read_hist,
            write_hist,
            trim_hist: measure::run_hist(),
            sync_hist,
            service_hist: None,
            error: None,
            stopped_early: false,
            verify: None,
            ignored: None,
        }
    }

    // Regression (issue 10, item 7): a repeated run's per-direction and sync latencies came
    // from one repeat instead of the merged histograms.
    #[test]
    fn per_direction_and_sync_latencies_come_from_the_merged_histograms() {
        let a = measured(&[1_000; 10], &[100_000; 10], &[5_000_000; 10]);
        let b = measured(&[3_000; 30], &[300_000; 30], &[9_000_000; 30]);
        let m = append(a, b);
        let read = m.read.unwrap();
        let write = m.write.unwrap();
        let sync = m.sync.unwrap();
        assert_eq!((read.ios, write.ios, sync.count), (40, 40, 40));
        // 30 of 40 reads took 3 µs: the median is the second repeat's, the min the first's.
        assert!(
            (2_990..=3_010).contains(&read.lat_ns.p50),
            "{:?}",
            read.lat_ns
        );
        assert!((990..=1_010).contains(&read.lat_ns.min));
        assert!((299_000..=301_000).contains(&write.lat_ns.p50));
        assert!((4_990_000..=5_010_000).contains(&sync.lat_ns.min));
        assert!((8_990_000..=9_010_000).contains(&sync.lat_ns.p50));
        assert_eq!(m.runtime_s, 2.0);
        assert_eq!(
            m.timeseries[1].t_s, 2.0,
            "the second repeat follows the first"
        );
        assert_eq!(m.cpu.user_s, 1.0);
    }
}
