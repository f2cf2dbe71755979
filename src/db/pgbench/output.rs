//! pgbench's output, read: its summary on stdout, and its per-transaction log (`-l`) turned
//! into iogauge's own measurements — the whole-run latency histogram in the fixed layout of
//! `measure` (so repeats and runs merge exactly), transactions per interval, and completions in
//! 100 ms bins for the stall finding.
//!
//! A log line (pgbench 13+, without --aggregate-interval) is
//! `client_id transaction_no time script_no time_epoch time_us [schedule_lag]`: `time` is the
//! transaction's latency in µs and `time_epoch.time_us` when it ended. Failed transactions
//! (pgbench 15+) have `failed`/`serialization`/`deadlock` in place of `time` and are counted
//! apart.

use crate::measure::{self, Hist, LatNs};
use crate::model::{FineDoc, Sample};
use anyhow::{anyhow, Context, Result};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What pgbench printed at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// "tps = … (without initial connection time)".
    pub tps: f64,
    /// "number of transactions actually processed".
    pub transactions: u64,
    /// "number of failed transactions" (pgbench 15+; 0 before).
    pub failed: u64,
    /// "latency average = … ms", in ns.
    pub latency_avg_ns: Option<f64>,
}

impl Summary {
    /// What a summary would say of the transactions `t` holds over `window`: a pgbench stopped
    /// before its end prints none.
    pub fn of_log(t: &Timeline, window: Duration) -> Summary {
        Summary {
            tps: t.transactions as f64 / window.as_secs_f64().max(1e-9),
            transactions: t.transactions,
            failed: t.failed,
            latency_avg_ns: (t.transactions > 0).then_some(t.lat.mean),
        }
    }
}

/// Reads pgbench's closing report.
pub fn parse_summary(stdout: &str) -> Result<Summary> {
    let mut s = Summary::default();
    let mut tps = None;
    for line in stdout.lines() {
        let line = line.trim();
        let value = |prefix: &str| line.strip_prefix(prefix).map(str::trim);
        if let Some(v) = value("tps =") {
            tps = v.split_whitespace().next().and_then(|x| x.parse().ok());
        } else if let Some(v) = value("number of transactions actually processed:") {
            // "4714" or "4714/5000" with -t.
            s.transactions = v
                .split(['/', ' '])
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
        } else if let Some(v) = value("number of failed transactions:") {
            s.failed = v
                .split_whitespace()
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
        } else if let Some(v) = value("latency average =") {
            s.latency_avg_ns = v
                .split_whitespace()
                .next()
                .and_then(|x| x.parse::<f64>().ok())
                .map(|ms| ms * 1e6);
        }
    }
    let processed = stdout.contains("number of transactions actually processed:");
    s.tps = match tps {
        Some(t) => t,
        // pgbench prints no rate (nor latency) when no transaction completed at all.
        None if processed && s.transactions == 0 => {
            return Err(anyhow!(
                "no transaction completed in the window, so pgbench gave no rate: one transaction took longer than the whole window on this storage; give a longer --time"
            ))
        }
        None => return Err(anyhow!("pgbench printed no tps line")),
    };
    Ok(s)
}

/// The measurements made from one run's per-transaction log.
pub struct Timeline {
    /// When the first transaction started, µs since the epoch: time zero of `timeseries`.
    pub start_us: u64,
    pub hist: Hist,
    pub lat: LatNs,
    /// Transactions that ended in the log.
    pub transactions: u64,
    /// Failed transactions in the log (not in the histogram).
    pub failed: u64,
    pub timeseries: Vec<Sample>,
    pub fine: FineDoc,
}

/// One log line: (end in µs since the epoch, latency in µs), or `None` for a failure.
fn parse_line(line: &str) -> Option<Option<(u64, u64)>> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 6 {
        return None;
    }
    let end = f[4].parse::<u64>().ok()? * 1_000_000 + f[5].parse::<u64>().ok()?;
    match f[2].parse::<u64>() {
        Ok(lat) => Some(Some((end, lat))),
        Err(_) => Some(None),
    }
}

/// pgbench's log files for `prefix`: `prefix.PID` and, with several jobs, `prefix.PID.N`.
pub fn log_files(prefix: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (prefix.parent(), prefix.file_name()) else {
        return Vec::new();
    };
    let stem = format!("{}.", stem.to_string_lossy());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&stem))
        .map(|e| e.path())
        .collect();
    files.sort();
    files
}

/// How much of a window pgbench's logs hold whole when pgbench was stopped before its end, in
/// whole `interval`s from the first transaction's start; `None` when not one interval. pgbench
/// writes each log through a buffer that a stopped pgbench never flushes, so each file ends
/// somewhere in the window: up to the earliest of the files' last ends, every transaction that
/// ended is in its file, and past it some are missing.
pub fn whole_window(files: &mut [std::fs::File], interval: Duration) -> Result<Option<Duration>> {
    let (mut start, mut end) = (u64::MAX, u64::MAX);
    for file in files.iter_mut() {
        std::io::Seek::rewind(file).context("reading a pgbench log")?;
        let mut last = None;
        for line in BufReader::new(&*file).lines() {
            if let Some(Some((e, lat))) = parse_line(&line?) {
                start = start.min(e.saturating_sub(lat));
                last = Some(last.map_or(e, |l: u64| l.max(e)));
            }
        }
        // A file with no transaction (a job that never finished one) bounds nothing.
        if let Some(l) = last {
            end = end.min(l);
        }
    }
    if start == u64::MAX || end == u64::MAX || end <= start {
        return Ok(None);
    }
    let step_us = (interval.as_micros() as u64).max(1);
    let whole = (end - start) / step_us * step_us;
    Ok((whole > 0).then(|| Duration::from_micros(whole)))
}

/// Reads the logs twice: once for the start of the first transaction (time zero), once to
/// record each transaction in the histograms and bins. Transactions ending after `length` (the
/// last ones in flight when pgbench's timer ran out) go into the last interval; with `cut` (a
/// window pgbench was stopped in, `length` from [`whole_window`]) they are left out, as not
/// every one of them is in the logs.
pub fn read_logs(
    files: &mut [std::fs::File],
    length: Duration,
    interval: Duration,
    cut: bool,
) -> Result<Timeline> {
    let mut each = |f: &mut dyn FnMut(Option<(u64, u64)>)| -> Result<()> {
        for file in files.iter_mut() {
            std::io::Seek::rewind(file).context("reading a pgbench log")?;
            for line in BufReader::new(&*file).lines() {
                if let Some(t) = parse_line(&line?) {
                    f(t);
                }
            }
        }
        Ok(())
    };
    let mut start = u64::MAX;
    each(&mut |t| {
        if let Some((end, lat)) = t {
            start = start.min(end.saturating_sub(lat));
        }
    })?;
    let fine_us = crate::runner::FINE_BIN.as_micros() as u64;
    let step_us = (interval.as_micros() as u64).max(1);
    let length_us = (length.as_micros() as u64).max(step_us);
    let n_steps = length_us.div_ceil(step_us) as usize;
    let n_fine = length_us.div_ceil(fine_us) as usize;
    let mut hist = measure::run_hist();
    let mut steps: Vec<(u64, Hist)> = (0..n_steps)
        .map(|_| (0, measure::interval_hist()))
        .collect();
    let mut fine = vec![0u32; n_fine];
    let (mut transactions, mut failed) = (0u64, 0u64);
    each(&mut |t| match t {
        None => failed += 1,
        Some((end, _)) if cut && end.saturating_sub(start) > length_us => {}
        Some((end, lat)) => {
            transactions += 1;
            let ns = lat.saturating_mul(1000).max(1);
            hist.saturating_record(ns);
            let at = end.saturating_sub(start);
            let k = ((at / step_us) as usize).min(n_steps - 1);
            steps[k].0 += 1;
            steps[k].1.saturating_record(ns);
            let b = ((at / fine_us) as usize).min(n_fine - 1);
            fine[b] = fine[b].saturating_add(1);
        }
    })?;
    let secs = step_us as f64 / 1e6;
    let timeseries = steps
        .iter()
        .enumerate()
        .map(|(k, (n, h))| {
            let lat = LatNs::of(h);
            Sample {
                t_s: ((k as u64 + 1) * step_us).min(length_us) as f64 / 1e6,
                iops: *n as f64 / secs,
                bw_bytes: 0.0,
                lat_p50_ns: lat.p50,
                lat_p99_ns: lat.p99,
            }
        })
        .collect();
    Ok(Timeline {
        start_us: if start == u64::MAX { 0 } else { start },
        lat: LatNs::of(&hist),
        hist,
        transactions,
        failed,
        timeseries,
        fine: FineDoc {
            bin_s: crate::runner::FINE_BIN.as_secs_f64(),
            ios: fine,
            cpu_run: Vec::new(),
            cpu_wait: Vec::new(),
            cpu_others: Vec::new(),
            ..FineDoc::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PG15: &str = "pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 2
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: 4714
number of failed transactions: 0 (0.000%)
latency average = 0.848 ms
initial connection time = 2.916 ms
tps = 2359.222387 (without initial connection time)
";

    #[test]
    fn reads_pgbench_15s_report() {
        let s = parse_summary(PG15).unwrap();
        assert_eq!(s.transactions, 4714);
        assert_eq!(s.failed, 0);
        assert!((s.tps - 2359.222387).abs() < 1e-9);
        assert_eq!(s.latency_avg_ns, Some(848_000.0));
        assert!(parse_summary("pgbench: error: connection refused").is_err());
        // No transaction in the window: pgbench 15 stops its report before the rate.
        let none = PG15
            .lines()
            .map(|l| {
                match l
                    .trim_start()
                    .starts_with("number of transactions actually")
                {
                    true => "number of transactions actually processed: 0",
                    false => l,
                }
            })
            .take_while(|l| !l.contains("latency average"))
            .collect::<Vec<_>>()
            .join("\n");
        let err = parse_summary(&none).unwrap_err().to_string();
        assert!(
            err.starts_with("no transaction completed in the window"),
            "{err}"
        );
    }

    #[test]
    fn a_log_becomes_histogram_intervals_and_bins() {
        let dir = tempfile::tempdir().unwrap();
        // Two jobs' files; transaction ends at 0.5 s, 0.55 s and 1.5 s after a start at
        // epoch 100.000000 s (the first one's start), and one failure.
        std::fs::write(
            dir.path().join("pgb.77"),
            "0 1 500000 0 100 500000\n0 2 1000 0 100 550000\n0 3 failed 0 100 600000\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("pgb.77.1"), "1 1 2000 0 101 500000\n").unwrap();
        std::fs::write(dir.path().join("other.1"), "junk\n").unwrap();
        let files = log_files(&dir.path().join("pgb"));
        assert_eq!(files.len(), 2);
        let mut files: Vec<std::fs::File> = files
            .iter()
            .map(|f| std::fs::File::open(f).unwrap())
            .collect();
        let t = read_logs(
            &mut files,
            Duration::from_secs(2),
            Duration::from_secs(1),
            false,
        )
        .unwrap();
        assert_eq!((t.transactions, t.failed), (3, 1));
        assert_eq!(t.hist.len(), 3);
        let close = |a: u64, b: u64| (a as f64 - b as f64).abs() <= b as f64 * 1e-3;
        assert!(close(t.lat.max, 500_000_000), "{}", t.lat.max);
        assert!(close(t.lat.min, 1_000_000), "{}", t.lat.min);
        let tps: Vec<f64> = t.timeseries.iter().map(|s| s.iops).collect();
        assert_eq!(tps, vec![2.0, 1.0]);
        assert_eq!(t.fine.ios.len(), 20);
        assert_eq!((t.fine.ios[5], t.fine.ios[15]), (2, 1));
        assert_eq!(t.fine.ios.iter().sum::<u32>(), 3);
    }

    /// pgbench stopped 2.9 s in: one job's file flushed to 2.9 s, the other's only to 2.1 s
    /// (its buffer lost). Whole to 2.1 s, so the window is 2 s and what ended after is left out.
    #[test]
    fn a_stopped_pgbench_logs_are_read_to_their_common_whole_intervals() {
        let dir = tempfile::tempdir().unwrap();
        // Starts at epoch 100.0 s (1 ms latency, ends at 100.001).
        std::fs::write(
            dir.path().join("pgb.9"),
            "0 1 1000 0 100 1000\n0 2 1000 0 101 500000\n0 3 1000 0 102 900000\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("pgb.9.1"),
            "1 1 1000 0 100 800000\n1 2 1000 0 102 100000\n",
        )
        .unwrap();
        let mut files: Vec<std::fs::File> = log_files(&dir.path().join("pgb"))
            .iter()
            .map(|f| std::fs::File::open(f).unwrap())
            .collect();
        let second = Duration::from_secs(1);
        let window = whole_window(&mut files, second).unwrap();
        assert_eq!(window, Some(Duration::from_secs(2)));
        let t = read_logs(&mut files, window.unwrap(), second, true).unwrap();
        // 102.9 and 102.1 ended past 102.0: out; 100.001, 101.5 and 100.8 in.
        assert_eq!(t.transactions, 3);
        let tps: Vec<f64> = t.timeseries.iter().map(|s| s.iops).collect();
        assert_eq!(tps, vec![2.0, 1.0]);
        // Near miss: stopped before one whole interval, nothing to keep.
        std::fs::write(dir.path().join("pgb.9.1"), "1 1 1000 0 100 800000\n").unwrap();
        let mut files: Vec<std::fs::File> = log_files(&dir.path().join("pgb"))
            .iter()
            .map(|f| std::fs::File::open(f).unwrap())
            .collect();
        assert_eq!(whole_window(&mut files, second).unwrap(), None);
    }
}
