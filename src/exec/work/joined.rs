//! Measurements joined into one result: a read and a write stream that ran at the same time
//! (a mix run as two), or parts that ran one after another (a region at a time).

use super::*;
use crate::model::{IgnoredDoc, SyncDoc};

/// Measurements that ran at the same time (a cell's streams), as one: counts add up, the
/// runtime is the longest, latencies of reads, writes and syncs merge exactly through their
/// histograms. Per-interval percentiles cannot be merged from summaries, so a sample keeps the
/// largest (the slowest stream's).
pub(crate) fn concurrent(parts: Vec<Measured>) -> Measured {
    let mut parts = parts.into_iter();
    let first = parts.next().expect("at least one stream");
    parts.fold(first, two)
}

impl Measured {
    /// This stream's measurement placed `d` after the cell's first start (fio's startdelay), for
    /// the sum: its time series begin with `d` of empty intervals and its window ends `d`
    /// later, so the sum's rate is over the whole cell's time.
    pub(crate) fn later_by(mut self, d: Duration) -> Measured {
        if d.is_zero() {
            return self;
        }
        let secs = d.as_secs_f64();
        if let Some(step) = self.timeseries.first().map(|s| s.t_s).filter(|t| *t > 0.0) {
            let empty = (secs / step).round() as usize;
            let moved = self.timeseries.iter().map(|s| Sample {
                t_s: s.t_s + secs,
                ..*s
            });
            self.timeseries = (1..=empty)
                .map(|k| Sample {
                    t_s: k as f64 * step,
                    ..Sample::default()
                })
                .chain(moved)
                .collect();
        }
        if self.fine.bin_s > 0.0 {
            let empty = (secs / self.fine.bin_s).round() as usize;
            self.fine.ios.splice(0..0, std::iter::repeat_n(0, empty));
        }
        self.runtime_s += secs;
        self
    }
}

fn two(a: Measured, b: Measured) -> Measured {
    let merged = |x: &measure::Hist, y: &measure::Hist| {
        let mut h = x.clone();
        measure::merge(&mut h, y);
        h
    };
    let hist = merged(&a.hist, &b.hist);
    let (read_hist, write_hist, sync_hist) = (
        merged(&a.read_hist, &b.read_hist),
        merged(&a.write_hist, &b.write_hist),
        merged(&a.sync_hist, &b.sync_hist),
    );
    let trim_hist = merged(&a.trim_hist, &b.trim_hist);
    let runtime_s = a.runtime_s.max(b.runtime_s);
    let secs = runtime_s.max(1e-9);
    let ios = a.ios + b.ios;
    let op = |x, y, h: &measure::Hist| crate::exec::fold::joined_op(x, y, h, secs);
    let sync = match (a.sync, b.sync) {
        (None, None) => None,
        (x, y) => {
            let kind = x
                .as_ref()
                .and_then(|s| s.kind)
                .or(y.as_ref().and_then(|s| s.kind));
            let count = x.map_or(0, |s| s.count) + y.map_or(0, |s| s.count);
            Some(SyncDoc {
                kind,
                count,
                per_s: count as f64 / secs,
                lat_ns: LatNs::of(&sync_hist),
            })
        }
    };
    let n = a.timeseries.len().max(b.timeseries.len());
    let at = |s: &[Sample], i: usize| s.get(i).copied().unwrap_or_default();
    let timeseries = (0..n)
        .map(|i| {
            let (x, y) = (at(&a.timeseries, i), at(&b.timeseries, i));
            Sample {
                t_s: x.t_s.max(y.t_s),
                iops: x.iops + y.iops,
                bw_bytes: x.bw_bytes + y.bw_bytes,
                lat_p50_ns: x.lat_p50_ns.max(y.lat_p50_ns),
                lat_p99_ns: x.lat_p99_ns.max(y.lat_p99_ns),
            }
        })
        .collect();
    let mut fine = a.fine.ios.clone();
    fine.resize(fine.len().max(b.fine.ios.len()), 0);
    for (x, y) in fine.iter_mut().zip(&b.fine.ios) {
        *x += y;
    }
    // CPU time is the process's over each window; the windows overlap, so the longer one
    // holds every stream's work.
    let cpu = if a.cpu.user_s + a.cpu.sys_s >= b.cpu.user_s + b.cpu.sys_s {
        a.cpu
    } else {
        b.cpu
    };
    let service_hist = match (&a.service_hist, &b.service_hist) {
        (Some(x), Some(y)) => Some(merged(x, y)),
        (x, y) => x.clone().or_else(|| y.clone()),
    };
    Measured {
        ios,
        bytes: a.bytes + b.bytes,
        runtime_s,
        lat: LatNs::of(&hist),
        read: op(a.read, b.read, &read_hist),
        write: op(a.write, b.write, &write_hist),
        trim: op(a.trim, b.trim, &trim_hist),
        sync,
        cpu: CpuDoc::new(cpu.user_s, cpu.sys_s, ios),
        timeseries,
        interval_hists: Vec::new(),
        // The streams ran in one process, so each one's CPU series counted every stream's
        // threads over its own window: summed bins would count them twice, so none is kept.
        fine: FineDoc {
            bin_s: a.fine.bin_s,
            ios: fine,
            cpu_run: Vec::new(),
            cpu_wait: Vec::new(),
            cpu_others: Vec::new(),
            ..FineDoc::default()
        },
        engine: a.engine,
        interrupted: a.interrupted.or(b.interrupted),
        hist,
        read_hist,
        write_hist,
        trim_hist,
        sync_hist,
        service_hist,
        error: a.error.or(b.error),
        stopped_early: a.stopped_early || b.stopped_early,
        verify: None,
        ignored: IgnoredDoc::sum(a.ignored.clone(), b.ignored.clone()),
    }
}

/// Measurements that ran one after another, as one run: their time series end to end.
pub(super) fn sequential(parts: Vec<Measured>) -> Measured {
    let mut hist = measure::run_hist();
    let mut read_hist = measure::run_hist();
    let (mut ios, mut bytes, mut runtime_s) = (0, 0, 0.0);
    let (mut user, mut sys) = (0.0, 0.0);
    let mut timeseries = Vec::new();
    let mut fine: Option<FineDoc> = None;
    let mut interrupted = None;
    let mut error = None;
    let mut ignored = None;
    let mut engine = Default::default();
    for (i, p) in parts.into_iter().enumerate() {
        ignored = IgnoredDoc::sum(ignored, p.ignored.clone());
        measure::merge(&mut hist, &p.hist);
        measure::merge(&mut read_hist, &p.read_hist);
        timeseries.extend(p.timeseries.iter().map(|s| Sample {
            t_s: s.t_s + runtime_s,
            ..*s
        }));
        ios += p.ios;
        bytes += p.bytes;
        runtime_s += p.runtime_s;
        user += p.cpu.user_s;
        sys += p.cpu.sys_s;
        fine = Some(match fine {
            None => p.fine,
            Some(f) => f.then(p.fine),
        });
        interrupted = interrupted.or(p.interrupted);
        error = error.or(p.error);
        if i == 0 {
            engine = p.engine;
        }
    }
    let runtime_s = f64::max(runtime_s, 1e-9);
    let lat = LatNs::of(&hist);
    let op = crate::model::OpDoc {
        ios,
        bytes,
        iops: ios as f64 / runtime_s,
        bw_bytes: bytes as f64 / runtime_s,
        lat_ns: lat,
    };
    Measured {
        ios,
        bytes,
        runtime_s,
        lat,
        read: Some(op),
        write: None,
        trim: None,
        sync: None,
        cpu: CpuDoc::new(user, sys, ios),
        timeseries,
        interval_hists: Vec::new(),
        fine: fine.unwrap_or_else(|| FineDoc {
            bin_s: runner::FINE_BIN.as_secs_f64(),
            ..FineDoc::default()
        }),
        engine,
        interrupted,
        hist,
        read_hist,
        write_hist: measure::run_hist(),
        trim_hist: measure::run_hist(),
        sync_hist: measure::run_hist(),
        service_hist: None,
        error,
        stopped_early: false,
        verify: None,
        ignored,
    }
}
