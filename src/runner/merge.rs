//! What the workers measured, as one: their histograms and counts merged after the run into
//! the workload's result, and the intervals gathered while it ran.

use super::worker::WorkerOut;
use super::{IntervalMsg, Measured, FINE_BIN};
use crate::measure::{self, Hist, LatNs};
use crate::model::{CpuDoc, EngineDoc, FineDoc, OpDoc, Sample, SyncDoc, TrialDoc};
use crate::workload::Spec;
use iogauge_engine::{sys, UringSetup};
use std::collections::BTreeMap;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// Per-interval aggregation over workers.
#[derive(Default)]
pub(super) struct Intervals {
    by_idx: BTreeMap<u64, (u64, u64, Hist)>,
}

impl Intervals {
    pub(super) fn add(&mut self, m: IntervalMsg) {
        let e = self
            .by_idx
            .entry(m.idx)
            .or_insert_with(|| (0, 0, measure::interval_hist()));
        e.0 += m.ios;
        e.1 += m.bytes;
        measure::merge(&mut e.2, &m.hist);
    }

    pub(super) fn drain(&mut self, rx: &Receiver<IntervalMsg>) {
        while let Ok(m) = rx.try_recv() {
            self.add(m);
        }
    }

    /// Each interval's histogram as buckets, aligned with [`Intervals::samples`].
    pub(super) fn hists(&self, interval: Duration, runtime: Duration) -> Vec<Vec<[u64; 2]>> {
        let n = (runtime.as_secs_f64() / interval.as_secs_f64() - 1e-9)
            .ceil()
            .max(0.0) as u64;
        (0..n)
            .map(|i| match self.by_idx.get(&i) {
                Some((_, _, h)) => measure::buckets(h),
                None => Vec::new(),
            })
            .collect()
    }

    /// One sample per interval from 0 to the end of the run, zeros where nothing completed.
    pub(super) fn samples(&self, interval: Duration, runtime: Duration) -> Vec<Sample> {
        let step = interval.as_secs_f64();
        let end = runtime.as_secs_f64();
        let n = (end / step - 1e-9).ceil().max(0.0) as u64;
        (0..n)
            .map(|i| {
                let t_start = i as f64 * step;
                let t_end = ((i + 1) as f64 * step).min(end);
                let len = (t_end - t_start).max(1e-9);
                match self.by_idx.get(&i) {
                    Some((ios, bytes, h)) => Sample {
                        t_s: t_end,
                        iops: *ios as f64 / len,
                        bw_bytes: *bytes as f64 / len,
                        lat_p50_ns: h.value_at_quantile(0.5),
                        lat_p99_ns: h.value_at_quantile(0.99),
                    },
                    None => Sample {
                        t_s: t_end,
                        ..Sample::default()
                    },
                }
            })
            .collect()
    }
}

pub(super) fn merge(
    spec: &Spec,
    workers: Vec<WorkerOut>,
    agg: Intervals,
    runtime: Duration,
    cpu_window: Option<(sys::CpuTimes, sys::CpuTimes)>,
    setup: Option<UringSetup>,
    interrupted: Option<i32>,
) -> Measured {
    let mut read = measure::run_hist();
    let mut write = measure::run_hist();
    let mut sync = measure::run_hist();
    let mut trim = measure::run_hist();
    let mut service = measure::run_hist();
    let (mut reads, mut writes, mut rb, mut wb, mut syncs) = (0, 0, 0, 0, 0);
    let (mut trims, mut tb) = (0, 0);
    let mut fine: Vec<u32> = Vec::new();
    for w in &workers {
        measure::merge(&mut read, &w.read);
        measure::merge(&mut write, &w.write);
        measure::merge(&mut sync, &w.sync);
        measure::merge(&mut trim, &w.trim);
        measure::merge(&mut service, &w.service);
        trims += w.trims;
        tb += w.trim_bytes;
        reads += w.reads;
        writes += w.writes;
        rb += w.read_bytes;
        wb += w.write_bytes;
        syncs += w.syncs;
        if fine.len() < w.fine.len() {
            fine.resize(w.fine.len(), 0);
        }
        for (a, b) in fine.iter_mut().zip(&w.fine) {
            *a += b;
        }
    }
    let secs = runtime.as_secs_f64().max(1e-9);
    // Bins that end after the runtime hold completions beyond it only by rounding; the time
    // series covers whole bins up to the runtime.
    let bins = (secs / FINE_BIN.as_secs_f64()).ceil() as usize;
    fine.resize(bins.max(fine.len().min(bins)), 0);
    let op = |ios: u64, bytes: u64, h: &Hist| OpDoc {
        ios,
        bytes,
        iops: ios as f64 / secs,
        bw_bytes: bytes as f64 / secs,
        lat_ns: LatNs::of(h),
    };
    let mut all = measure::run_hist();
    measure::merge(&mut all, &read);
    measure::merge(&mut all, &write);
    measure::merge(&mut all, &trim);
    let ios = reads + writes + trims;
    let cpu = match cpu_window {
        Some((a, b)) => {
            let used = b.since(a);
            CpuDoc::new(used.user.as_secs_f64(), used.sys.as_secs_f64(), ios)
        }
        None => CpuDoc::default(),
    };
    let engine = match setup {
        Some(s) => EngineDoc {
            name: spec.engine.name().into(),
            flags: s.flags.iter().map(|f| f.to_string()).collect(),
            refused: s.refused.iter().map(|f| f.to_string()).collect(),
            registered_buffers: s.registered_buffers,
            registered_files: s.registered_files,
            looked: s.looked,
            buffers: String::new(),
            complete_batch: workers.iter().map(|w| w.complete_batch).max().unwrap_or(1),
            complete_trial: (spec.complete_batch == 0).then(|| {
                let sum = |i: usize| workers.iter().map(|w| w.trial[i]).sum();
                let secs = |i: usize| workers.iter().map(|w| w.trial_time[i].as_secs_f64()).sum();
                TrialDoc {
                    one: sum(0),
                    half: sum(1),
                    all: sum(2),
                    one_s: secs(0),
                    half_s: secs(1),
                    all_s: secs(2),
                }
            }),
        },
        None => EngineDoc {
            name: spec.engine.name().into(),
            ..EngineDoc::default()
        },
    };
    Measured {
        ios,
        bytes: rb + wb + tb,
        runtime_s: secs,
        lat: LatNs::of(&all),
        read: (spec.mix_read_pct > 0).then(|| op(reads, rb, &read)),
        write: (spec.mix_read_pct < 100 && !spec.rw.trims()).then(|| op(writes, wb, &write)),
        trim: spec.rw.trims().then(|| op(trims, tb, &trim)),
        sync: spec.sync.map(|(k, _)| SyncDoc {
            kind: Some(k),
            count: syncs,
            per_s: syncs as f64 / secs,
            lat_ns: LatNs::of(&sync),
        }),
        cpu,
        timeseries: agg.samples(spec.interval, runtime),
        interval_hists: match spec.interval_hists {
            true => agg.hists(spec.interval, runtime),
            false => Vec::new(),
        },
        fine: FineDoc {
            bin_s: FINE_BIN.as_secs_f64(),
            ios: fine,
            // Filled by `run` from the watch thread's samples.
            cpu_run: Vec::new(),
            cpu_wait: Vec::new(),
            cpu_others: Vec::new(),
            ..FineDoc::default()
        },
        engine,
        interrupted,
        hist: all,
        read_hist: read,
        write_hist: write,
        trim_hist: trim,
        sync_hist: sync,
        service_hist: spec.rate_per_thread.map(|_| service),
        error: None,
        stopped_early: false,
        verify: None,
        ignored: None,
    }
}

/// The IO errors the workers went on after: how many, and one worker's first.
pub(super) fn ignored(workers: &[WorkerOut]) -> Option<crate::model::IgnoredDoc> {
    let count = workers.iter().map(|w| w.ignored).sum();
    let (io, errno) = workers.iter().find_map(|w| w.first_ignored)?;
    Some(crate::model::IgnoredDoc {
        count,
        errno,
        first: format!(
            "{} of {} bytes at offset {}: {} ({})",
            match io.op {
                iogauge_engine::Op::Read => "read",
                _ => "write",
            },
            io.len,
            io.offset,
            crate::workload::errors::errno_name(errno),
            std::io::Error::from_raw_os_error(errno)
        ),
    })
}
