//! `db sysbench`, the load: the `sbtest` tables made with `sysbench SCRIPT prepare`, each
//! measurement a `sysbench SCRIPT run` on MariaDB or PostgreSQL.
//!
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
//!
//! sysbench has no handler for SIGINT. Started with `--forced-shutdown`, it has one for
//! SIGALRM: it prints the final report of what it measured so far (without the histogram) and
//! ends with status 2. iogauge sends it at a Ctrl-C, and a window cut short is kept.

use super::backend::Backend;
use super::cluster;
use super::common;
use super::load::{At, Load, ServerPlan};
use crate::measure::{self, Hist};
use crate::model::{ResultDoc, Sample, SysbenchDoc};
use crate::units;
use anyhow::{anyhow, Context, Result};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;

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
    /// Its own "99th percentile" (or whichever `--percentile`), average, minimum and
    /// maximum, ms.
    pub p99_ms: f64,
    pub avg_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Report {
    /// The latencies: from the histogram, or, when a report cut short has none, sysbench's own
    /// minimum, average, p99 and maximum (the others 0: not measured).
    pub fn lat_ns(&self) -> crate::measure::LatNs {
        if !self.hist.is_empty() {
            return crate::measure::LatNs::of(&self.hist);
        }
        let ns = |ms: f64| (ms * 1e6).round() as u64;
        crate::measure::LatNs {
            min: ns(self.min_ms),
            mean: self.avg_ms * 1e6,
            p99: ns(self.p99_ms),
            max: ns(self.max_ms),
            ..Default::default()
        }
    }
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
    let (mut min_ms, mut max_ms) = (0.0, 0.0);
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
            "min" if in_latency => min_ms = value.parse().unwrap_or(0.0),
            "max" if in_latency => max_ms = value.parse().unwrap_or(0.0),
            k if in_latency && k.ends_with("th percentile") => p99_ms = value.parse().ok(),
            "Threads fairness" => in_latency = false,
            _ => {}
        }
    }
    let (Some((transactions, tps)), Some(total_s)) = (transactions, total_s) else {
        return Err(anyhow!(
            "sysbench printed no final report: {}",
            super::process::last_lines(stdout, 3)
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
        min_ms,
        max_ms,
    })
}

/// Bytes per sysbench row for `--data`: the c CHAR(120) and pad CHAR(60) columns with the id,
/// k and the secondary index (measured on MariaDB 10.11: 242–252 B/row from 100,000 rows up,
/// small tables padded to ~10 MiB each; PostgreSQL 15 keeps about as much).
pub const BYTES_PER_ROW: u64 = 250;
/// Rows per table when neither --table-size nor --data is given (~25 MB per table).
pub(super) const DEFAULT_TABLE_SIZE: u64 = 100_000;

/// Everything `db sysbench` will do, checked before anything is created.
#[derive(Debug)]
pub struct SysbenchPlan {
    pub server: ServerPlan,
    pub sysbench: PathBuf,
    pub script: Script,
    pub tables: u32,
    pub table_size: u64,
    /// How the table size was chosen, for the plan.
    pub sized_by: String,
    pub threads: u32,
}

/// One measured sysbench run.
struct Measured {
    report: Report,
    status: BTreeMap<String, f64>,
    cpu: Option<(f64, f64)>,
    devices: Vec<iogauge_sysinfo::diskstats::DeviceWindow>,
    /// The run second by second, with the server's flushes.
    seconds: crate::model::TimelineDoc,
    /// A window a Ctrl-C cut short: sysbench's report of what it measured until then.
    cut_short: bool,
}

impl Load for SysbenchPlan {
    fn command(&self) -> &'static str {
        "db-sysbench"
    }
    fn loading(&self) -> String {
        format!(
            "sysbench {} prepare, {} tables × {} rows",
            self.script.name(),
            self.tables,
            self.table_size
        )
    }
    fn database(&self) -> &'static str {
        "sbtest"
    }
    fn prepare(&self, server: &dyn Backend) -> Result<Vec<String>> {
        server.create_database(self.database())?;
        let out = server
            .sysbench(&self.sysbench, self.script.name())
            .arg(format!("--tables={}", self.tables))
            .arg(format!("--table-size={}", self.table_size))
            // prepare fills one table per thread.
            .arg(format!("--threads={}", self.threads.min(self.tables)))
            .arg("prepare")
            .output()
            .context("running sysbench prepare")?;
        if !out.status.success() {
            let said = format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let mut dirs = vec![server.data(), server.work()];
            dirs.extend(server.log_dir());
            return Err(common::client_failed("sysbench prepare", &said, &dirs));
        }
        Ok((1..=self.tables).map(|i| format!("sbtest{i}")).collect())
    }
    fn params(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("sysbench.script".into(), self.script.name().into()),
            ("sysbench.tables".into(), self.tables.to_string()),
            ("sysbench.table_size".into(), self.table_size.to_string()),
            ("sysbench.threads".into(), self.threads.to_string()),
        ])
    }
    fn describe(&self) -> String {
        format!("sysbench {} · {} threads", self.script.name(), self.threads)
    }
    fn measure(&self, s: &dyn Backend, at: &At) -> Result<Option<ResultDoc>> {
        let Some(m) = measure_once(self, s, at.devices, &at.tag)? else {
            return Ok(None);
        };
        let doc = SysbenchDoc {
            server: s.name().into(),
            version: at.version.into(),
            script: self.script.name().into(),
            tables: self.tables,
            table_size: self.table_size,
            threads: self.threads,
            data_bytes: at.data_bytes,
            buffer_ratio: at.ratio,
            settings: at.settings.clone(),
            user: at.plan.owner.name.clone(),
            memory_limit_bytes: at.plan.memory_limit,
            log_dir: s.log_dir().map(|d| d.display().to_string()),
            ..SysbenchDoc::default()
        };
        Ok(Some(result_doc(self, s, m, doc)))
    }
    fn threads(&self) -> u32 {
        self.threads
    }
    fn notes(&self, data_bytes: u64, server: &str) -> Vec<String> {
        vec![format!(
            "the tables: {} (data and indexes, as {server} counts them) in {} tables of {} rows",
            units::iec(data_bytes),
            self.tables,
            self.table_size
        )]
    }
}

/// One sysbench run: the server's counters, its CPU and the devices around it (the whole run's
/// and, for the timeline, each second's); its output read. `devices` are the data directory's
/// stack and the timeline's devices. `None` when interrupted.
fn measure_once(
    p: &SysbenchPlan,
    s: &dyn Backend,
    (devices, timeline_devices): (&[String], &[String]),
    tag: &str,
) -> Result<Option<Measured>> {
    let before = s.counters()?;
    // sysbench's output goes to a file iogauge creates in the server's directory (its
    // account's) from the handle, and is read back through iogauge's own handle.
    let work = s.work_dir()?;
    let out_name = format!("sysbench-{tag}.out");
    let out_file = work.create_new(&out_name, None)?;
    let mut out_read = out_file.try_clone()?;
    let cpu_before = s.cpu();
    let mark = s.log_mark();
    // sysbench counts its seconds from its start; the spawn is within a few ms of it (the
    // tables exist already, so it only connects).
    let watched = super::timeline::watch(s, devices, timeline_devices, || {
        run_sysbench(p, s, out_file)
    });
    let cpu = common::cpu_since(cpu_before, s.cpu());
    let stdout = cluster::read_back(&mut out_read);
    work.remove(&out_name);
    let (ended, w) = watched;
    let (st, cut_short) = match ended? {
        common::Ended::Itself(st) => (st, false),
        common::Ended::Stopped(Some(st)) => (st, true),
        common::Ended::Stopped(None) => return Ok(None),
    };
    if !cut_short && !st.success() {
        if let Some(why) = s.down() {
            return Err(anyhow::anyhow!(why));
        }
        let mut dirs = vec![s.data(), s.work()];
        dirs.extend(s.log_dir());
        return Err(common::client_failed(
            &format!("sysbench {} run", p.script.name()),
            &stdout,
            &dirs,
        ));
    }
    let report = match parse(&stdout) {
        Ok(r) => r,
        // Stopped before its first report: nothing was measured.
        Err(_) if cut_short => return Ok(None),
        Err(e) => return Err(e),
    };
    // After a Ctrl-C the server's counters are worth keeping but not worth failing for.
    let after = match cut_short {
        false => s.counters()?,
        true => s.counters().unwrap_or_else(|_| before.clone()),
    };
    let delta = common::counter_delta(&before, &after);
    let seconds = w.timeline(s, mark, &report.timeseries(), timeline_devices);
    Ok(Some(Measured {
        report,
        status: delta,
        cpu,
        devices: w.windows,
        seconds,
        cut_short,
    }))
}

/// Runs sysbench to its end, or until a Ctrl-C asks it for its report so far.
fn run_sysbench(
    p: &SysbenchPlan,
    s: &dyn Backend,
    out_file: std::fs::File,
) -> Result<common::Ended> {
    let watch_file = out_file.try_clone()?;
    let child = s
        .sysbench(&p.sysbench, p.script.name())
        .arg(format!("--tables={}", p.tables))
        .arg(format!("--table-size={}", p.table_size))
        .arg(format!("--threads={}", p.threads))
        .arg(format!("--time={}", p.server.time.as_secs().max(1)))
        .args([
            "--report-interval=1",
            "--percentile=99",
            "--histogram=on",
            // Installs sysbench's SIGALRM handler (its report so far), which iogauge sends at a
            // Ctrl-C; the forced shutdown itself, an hour after the window, ends no run.
            "--forced-shutdown=3600",
            "run",
        ])
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::null())
        // Its own process group: iogauge decides what a Ctrl-C stops, and when.
        .process_group(0)
        .spawn()
        .context("starting sysbench")?;
    // sysbench's last interval line, read at its offset in the file sysbench is writing (a
    // positioned read: the file's own offset, which sysbench writes at, stays where it is).
    let tps = || {
        use std::os::unix::fs::FileExt;
        let len = watch_file.metadata().ok()?.len();
        let from = len.saturating_sub(4096);
        let mut tail = vec![0u8; (len - from) as usize];
        let n = watch_file.read_at(&mut tail, from).ok()?;
        let text = String::from_utf8_lossy(&tail[..n]);
        text.lines().rev().find_map(interval_tps)
    };
    common::wait_client(child, p.server.time, &tps, Some("ALRM"))
}

/// One measurement as a result: TPS as the rate (transactions over sysbench's total time),
/// latencies from its histogram, its seconds as the time series.
fn result_doc(p: &SysbenchPlan, s: &dyn Backend, m: Measured, mut sb: SysbenchDoc) -> ResultDoc {
    let r = &m.report;
    sb.transactions = r.transactions;
    sb.sysbench_tps = r.tps;
    sb.queries = r.queries;
    sb.qps = r.qps;
    sb.reads = r.reads;
    sb.writes = r.writes;
    sb.other = r.other;
    sb.errors = r.errors;
    sb.reconnects = r.reconnects;
    sb.total_time_s = r.total_s;
    sb.sysbench_p99_ms = r.p99_ms;
    sb.sysbench_avg_ms = r.avg_ms;
    sb.seconds = r
        .intervals
        .iter()
        .map(|i| [i.t_s, i.tps, i.qps, i.lat_ms, i.err_s, i.reconn_s])
        .collect();
    sb.status = m.status;
    let buffer = match s.name() {
        "PostgreSQL" => "shared_buffers",
        _ => "buffer pool",
    };
    let mut name = format!(
        "sysbench {} · {} × {} rows · {} threads",
        p.script.name(),
        p.tables,
        p.table_size,
        p.threads,
    );
    if let Some(x) = sb.buffer_ratio {
        name += &format!(" · {buffer} {} of data", super::pct(x));
    }
    let mut doc = common::transactions_result(common::Transactions {
        name,
        server: s,
        settings: &sb.settings,
        data_bytes: sb.data_bytes,
        clients: p.threads,
        time: p.server.time,
        transactions: r.transactions,
        runtime_s: r.total_s,
        hist: &r.hist,
        timeseries: r.timeseries(),
        cpu: m.cpu,
        devices: super::devices_of(&[m.devices.as_slice()]),
        timeline: m.seconds,
        engine: "sysbench",
        mix_read_pct: match p.script {
            Script::WriteOnly => 0,
            Script::ReadWrite => 50,
            _ => 100,
        },
    });
    // A report cut short has no histogram: sysbench's own figures stand for it.
    doc.lat_ns = r.lat_ns();
    if m.cut_short {
        let ran = std::time::Duration::from_secs_f64(r.total_s);
        common::cut_short(&mut doc, ran, p.server.time);
    }
    doc.sysbench = Some(Box::new(sb));
    doc
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

    /// A report cut short (sysbench's forced shutdown) has no histogram: the latencies are the
    /// report's own, and what it did not measure is 0.
    #[test]
    fn a_report_without_a_histogram_gives_its_own_latencies() {
        let hist_at = RUN.find("Latency histogram").unwrap();
        let sql_at = RUN.find("SQL statistics").unwrap();
        let cut = format!(
            "{}FATAL: The --max-time limit has expired, forcing shutdown...\n{}",
            &RUN[..hist_at],
            &RUN[sql_at..]
        );
        let r = parse(&cut).unwrap();
        assert!(r.hist.is_empty());
        let lat = r.lat_ns();
        assert_eq!((lat.min, lat.p99, lat.max), (530_000, 2_520_000, 6_040_000));
        assert_eq!((lat.mean, lat.p50, lat.p999), (1_180_000.0, 0, 0));
        // With its histogram, the histogram's.
        let whole = parse(RUN).unwrap();
        assert_eq!(whole.lat_ns().p50, LatNs::of(&whole.hist).p50);
    }

    #[test]
    fn a_failure_is_its_last_words() {
        let e = parse("sysbench 1.0.20\nFATAL: error 2002: Can't connect to local server through socket '/x' (2)\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("FATAL: error 2002"), "{e}");
    }
}
