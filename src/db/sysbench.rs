//! sysbench (1.0) read: its OLTP scripts, and its whole output on stdout turned into iogauge's
//! measurements. sysbench keeps no per-transaction log (pgbench's `-l`), so the latency
//! distribution is its `--histogram=on` table, re-recorded into a histogram of the fixed layout
//! of `measure` — p50, p99 and p99.9 then come out of the same code as everywhere else — and the
//! time series is its `--report-interval=1` lines.
//!
//! Formats (sysbench 1.0.20):
//! - interval: `[ 1s ] thds: 2 tps: 1697.91 qps: 33979.16 (r/w/o: 23785.71/6795.63/3397.82)
//!   lat (ms,99%): 2.97 err/s: 0.00 reconn/s: 0.00` — rates over that second;
//! - histogram, after `Latency histogram (values are in milliseconds)`: `   0.527 |**   2`, one
//!   line per non-empty bucket (log-spaced, ~1.8% apart), the value standing for its bucket;
//! - the final report: `transactions: N (X per sec.)`, `queries: …`, `ignored errors: …`,
//!   `reconnects: …`, `total time: 5.0034s`, and `Latency (ms):` min/avg/max/99th percentile.

use crate::measure::{self, Hist};
use crate::model::Sample;
use anyhow::{anyhow, Result};

/// sysbench's OLTP scripts (/usr/share/sysbench); all use the same prepared tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// 10 point selects, 4 range queries, 2 updates, a delete and an insert per transaction.
    ReadWrite,
    /// The selects of read_write only.
    ReadOnly,
    /// The updates, delete and insert of read_write only.
    WriteOnly,
    /// One primary-key select per transaction.
    PointSelect,
}

impl Script {
    pub fn name(self) -> &'static str {
        match self {
            Script::ReadWrite => "oltp_read_write",
            Script::ReadOnly => "oltp_read_only",
            Script::WriteOnly => "oltp_write_only",
            Script::PointSelect => "oltp_point_select",
        }
    }
}

/// One `[ Ns ]` line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Interval {
    pub t_s: f64,
    pub tps: f64,
    pub qps: f64,
    /// The `--percentile` latency of that second, ms.
    pub lat_ms: f64,
    pub err_s: f64,
    pub reconn_s: f64,
}

/// What one `sysbench … run` printed.
#[derive(Debug)]
pub struct Report {
    pub intervals: Vec<Interval>,
    /// The histogram, in ns, in the whole-run layout of `measure`.
    pub hist: Hist,
    pub transactions: u64,
    /// sysbench's own "(X per sec.)" of transactions.
    pub tps: f64,
    pub queries: u64,
    pub qps: f64,
    /// Queries by kind: read, write, other.
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
    /// "total time", seconds.
    pub total_s: f64,
    /// Its own "99th percentile" (or whichever `--percentile`) and average, ms.
    pub p99_ms: f64,
    pub avg_ms: f64,
}

impl Report {
    /// The per-second series in iogauge's form: TPS as the rate, sysbench's percentile as p99
    /// (sysbench reports no per-second median; 0 says "not measured").
    pub fn timeseries(&self) -> Vec<Sample> {
        self.intervals
            .iter()
            .map(|i| Sample {
                t_s: i.t_s,
                iops: i.tps,
                bw_bytes: 0.0,
                lat_p50_ns: 0,
                lat_p99_ns: (i.lat_ms * 1e6).round() as u64,
            })
            .collect()
    }
}

/// The number after `key` in `line`, if `line` has `key`.
fn after(line: &str, key: &str) -> Option<f64> {
    let (_, rest) = line.split_once(key)?;
    rest.split_whitespace()
        .next()?
        .trim_end_matches('s')
        .parse()
        .ok()
}

/// The transactions per second of one interval line, for the progress shown while it runs.
pub fn interval_tps(line: &str) -> Option<f64> {
    interval(line).map(|i| i.tps)
}

fn interval(line: &str) -> Option<Interval> {
    let rest = line.trim().strip_prefix('[')?;
    let (t, rest) = rest.split_once(']')?;
    Some(Interval {
        t_s: t.trim().trim_end_matches('s').parse().ok()?,
        tps: after(rest, "tps:")?,
        qps: after(rest, "qps:")?,
        lat_ms: after(rest, "%):")?,
        err_s: after(rest, "err/s:")?,
        reconn_s: after(rest, "reconn/s:")?,
    })
}

/// `transactions:                        8465   (1691.51 per sec.)` → (8465, 1691.51).
fn count_rate(v: &str) -> Option<(u64, f64)> {
    let mut w = v.split_whitespace();
    let n = w.next()?.parse().ok()?;
    let rate = w.next()?.trim_start_matches('(').parse().ok()?;
    Some((n, rate))
}

/// Reads the whole stdout of a run; an output without the final report is an error quoting its
/// last lines (sysbench prints its `FATAL:` errors on stdout too).
pub fn parse(stdout: &str) -> Result<Report> {
    let mut intervals = Vec::new();
    let mut hist = measure::run_hist();
    let mut in_hist = false;
    let mut in_latency = false;
    let (mut transactions, mut queries, mut errors, mut reconnects) = (None, None, None, None);
    let (mut reads, mut writes, mut other) = (0, 0, 0);
    let (mut total_s, mut p99_ms, mut avg_ms) = (None, None, 0.0);
    for line in stdout.lines() {
        let t = line.trim();
        if t.starts_with("Latency histogram") {
            in_hist = true;
            continue;
        }
        if in_hist {
            if t.starts_with("value") {
                continue;
            }
            // `0.527 |***   2`: the value before the bar, the count last.
            let row = t.split_once('|').and_then(|(v, rest)| {
                let ms: f64 = v.trim().parse().ok()?;
                let n: u64 = rest.split_whitespace().last()?.parse().ok()?;
                Some((ms, n))
            });
            match row {
                Some((ms, n)) => {
                    let ns = ((ms * 1e6).round() as u64).clamp(1, measure::LAT_HIGHEST_NS);
                    hist.saturating_record_n(ns, n);
                }
                None => in_hist = false,
            }
            continue;
        }
        if let Some(i) = interval(t) {
            intervals.push(i);
            continue;
        }
        let Some((key, value)) = t.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let num = || {
            value
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
        };
        match key {
            "read" if !in_latency => reads = num().unwrap_or(0),
            "write" => writes = num().unwrap_or(0),
            "other" => other = num().unwrap_or(0),
            "transactions" => transactions = count_rate(value),
            "queries" => queries = count_rate(value),
            "ignored errors" => errors = count_rate(value),
            "reconnects" => reconnects = count_rate(value),
            "total time" => total_s = value.trim_end_matches('s').parse::<f64>().ok(),
            "Latency (ms)" => in_latency = true,
            "avg" if in_latency => avg_ms = value.parse().unwrap_or(0.0),
            k if in_latency && k.ends_with("th percentile") => p99_ms = value.parse().ok(),
            "Threads fairness" => in_latency = false,
            _ => {}
        }
    }
    let (Some((transactions, tps)), Some(total_s)) = (transactions, total_s) else {
        return Err(anyhow!(
            "sysbench printed no final report: {}",
            super::cluster::last_lines(stdout, 3)
        ));
    };
    let (queries, qps) = queries.unwrap_or_default();
    Ok(Report {
        intervals,
        hist,
        transactions,
        tps,
        queries,
        qps,
        reads,
        writes,
        other,
        errors: errors.map_or(0, |e| e.0),
        reconnects: reconnects.map_or(0, |r| r.0),
        total_s,
        p99_ms: p99_ms.unwrap_or(0.0),
        avg_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::LatNs;

    /// A real sysbench 1.0.20 output against MariaDB 10.11 (histogram shortened).
    pub const RUN: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Report intermediate results every 1 second(s)

Initializing worker threads...

Threads started!

[ 1s ] thds: 2 tps: 1697.91 qps: 33979.16 (r/w/o: 23785.71/6795.63/3397.82) lat (ms,99%): 2.97 err/s: 0.00 reconn/s: 0.00
[ 2s ] thds: 2 tps: 1859.34 qps: 37197.74 (r/w/o: 26042.72/7436.35/3718.67) lat (ms,99%): 2.52 err/s: 0.00 reconn/s: 0.00
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.527 |                                         2
       0.536 |*                                        90
       1.180 |**************************************** 3400
       2.520 |***                                      40
       6.040 |                                         8
 
SQL statistics:
    queries performed:
        read:                            49700
        write:                           14200
        other:                           7100
        total:                           71000
    transactions:                        3540   (1769.00 per sec.)
    queries:                             71000  (35480.00 per sec.)
    ignored errors:                      1      (0.50 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0011s
    total number of events:              3540

Latency (ms):
         min:                                    0.53
         avg:                                    1.18
         max:                                    6.04
         99th percentile:                        2.52
         sum:                                 4178.97

Threads fairness:
    events (avg/stddev):           1770.0000/3.00
    execution time (avg/stddev):   2.0000/0.00
";

    #[test]
    fn reads_a_run() {
        let r = parse(RUN).unwrap();
        assert_eq!(r.intervals.len(), 2);
        assert_eq!(
            r.intervals[1],
            Interval {
                t_s: 2.0,
                tps: 1859.34,
                qps: 37197.74,
                lat_ms: 2.52,
                err_s: 0.0,
                reconn_s: 0.0
            }
        );
        assert_eq!((r.transactions, r.tps), (3540, 1769.0));
        assert_eq!((r.queries, r.qps), (71000, 35480.0));
        assert_eq!((r.reads, r.writes, r.other), (49700, 14200, 7100));
        assert_eq!((r.errors, r.reconnects), (1, 0));
        assert_eq!((r.total_s, r.p99_ms, r.avg_ms), (2.0011, 2.52, 1.18));
        // The histogram holds every transaction, and its p99 is sysbench's: the 3,505th of
        // 3,540 is in the 2.52 ms bucket.
        assert_eq!(r.hist.len(), 3540);
        let lat = LatNs::of(&r.hist);
        let close = |a: u64, b: f64| (a as f64 - b).abs() <= b * 1e-3;
        assert!(close(lat.p99, 2.52e6), "{}", lat.p99);
        assert!(close(lat.p50, 1.18e6), "{}", lat.p50);
        assert!(close(lat.max, 6.04e6), "{}", lat.max);
        let ts = r.timeseries();
        assert_eq!(
            (ts[0].t_s, ts[0].iops, ts[0].lat_p99_ns),
            (1.0, 1697.91, 2_970_000)
        );
    }

    #[test]
    fn a_failure_is_its_last_words() {
        let e = parse("sysbench 1.0.20\nFATAL: error 2002: Can't connect to local server through socket '/x' (2)\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("FATAL: error 2002"), "{e}");
    }
}
