//! The database itself on the storage under test: `iogauge db pgbench` runs a throwaway
//! PostgreSQL cluster in the target directory, loads it with `pgbench -i`, and measures pgbench
//! transactions — once, or once per shared_buffers share of the data (`--buffer-ratio`, the
//! MySQL SSD study's buffer-pool sweep). Next to the TPS, in the same command and on the same
//! directory, iogauge measures what explains it: the fsync suite's WAL cell (8 KiB writes +
//! fdatasync) and 8 KiB random reads at the clients' concurrency.
//!
//! Every pgbench measurement becomes a `ResultDoc` (its `iops` are transactions per second,
//! its latencies whole transactions from pgbench's per-transaction log, in iogauge's histogram
//! layout) with a `pg` section; the storage cells are ordinary results. One run document holds
//! both and is stored as it goes, so `list`, `show`, `compare` and `export` work on it.
//!
//! `iogauge db sysbench` does the same with sysbench's OLTP scripts on MariaDB or on this
//! PostgreSQL cluster (`oltp`), and ends the same way ([`Outcome`]); the caller presents the
//! document (commands/db.rs).
//!
//! Modules: `cluster` (finding PostgreSQL, initdb, start, stop, always removed), `pgbench`
//! (its report and log), `server` (PostgreSQL's settings and its own IO counters), `mariadb`
//! (the throwaway MariaDB server), `backend` (both servers behind the one trait sysbench
//! drives), `cgroup` (--memory-limit for both), `common` (what both pipelines share: checks,
//! the page-cache finding, the storage cells, the ending), `sysbench` (its output read),
//! `oltp` (the plan and run of `db sysbench`), `timeline` (the run second by second), `text`
//! (the summary people read, for both).

pub mod backend;
pub mod cgroup;
pub mod cluster;
mod common;
pub mod mariadb;
mod owner;
mod plan;
mod progress;

pub use plan::{plan, sysbench_plan, tpcc_plan};
pub mod oltp;
pub mod pgbench;
pub mod server;
pub mod sysbench;
pub mod timeline;
pub mod tpcc;

use crate::error::{self, usage};
use crate::measure;
use crate::model::{
    CpuDoc, DeviceDoc, FineDoc, PgDoc, RepeatDoc, ResultDoc, RunDoc, Sample, SCHEMA,
};
use crate::store::Recorder;
use crate::units;
use anyhow::{Context, Result};
use backend::Backend;
use cluster::Cluster;
use pgbench::Script;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Bytes of database per pgbench scale unit: 100,000 accounts with their index, and the
/// tellers, branches and history that go with them (measured on PostgreSQL 15: scale 1 gives
/// 22.4 MiB, of which 7.4 MiB are the empty database's catalogs).
pub const BYTES_PER_SCALE: u64 = 15_800_000;
/// Catalogs of an empty database, which `--data` does not count as pgbench data.
pub const EMPTY_DB_BYTES: u64 = 7_700_000;
/// Whether iogauge runs as root: /proc/self belongs to the effective user (libc's geteuid is
/// `unsafe` to call, which only crates/engine may do).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Everything `db pgbench` will do, checked before anything is created: the server's part as
/// every load has it, and pgbench's own.
#[derive(Debug)]
pub struct DbPlan {
    pub server: oltp::ServerPlan,
    pub scale: u32,
    pub clients: u32,
    pub jobs: u32,
    pub script: Script,
    pub repeat: u32,
    pub interval: Duration,
}

/// One measured pgbench run.
struct Measured {
    summary: pgbench::Summary,
    timeline: pgbench::Timeline,
    runtime_s: f64,
    server_io: server::Snapshot,
    devices: Vec<iogauge_sysinfo::diskstats::DeviceWindow>,
    /// The run second by second, with the server's checkpoints.
    seconds: crate::model::TimelineDoc,
    /// The server's CPU seconds (user, system) during the run; `None` if /proc could not say.
    server_cpu: Option<(f64, f64)>,
}

impl DbPlan {
    /// The cluster pgbench drives: `db pgbench` runs on PostgreSQL only.
    fn cluster<'a>(&self, s: &'a dyn Backend) -> Result<&'a Cluster> {
        s.cluster()
            .ok_or_else(|| anyhow::anyhow!("bug: db pgbench on a server that is not PostgreSQL"))
    }
}

impl oltp::Load for DbPlan {
    fn command(&self) -> &'static str {
        "db-pgbench"
    }
    fn loading(&self) -> String {
        format!("pgbench -i at scale {}", self.scale)
    }
    fn database(&self) -> &'static str {
        "postgres"
    }
    fn prepare(&self, s: &dyn Backend) -> Result<Vec<String>> {
        let cluster = self.cluster(s)?;
        run_tool(
            cluster
                .client("pgbench")
                .args(["-i", "-q", "-s", &self.scale.to_string(), "postgres"]),
            cluster,
            "pgbench -i",
        )?;
        Ok([
            "pgbench_accounts",
            "pgbench_branches",
            "pgbench_tellers",
            "pgbench_history",
        ]
        .map(String::from)
        .to_vec())
    }
    fn data_bytes(&self, s: &dyn Backend) -> Result<u64> {
        // The whole database, catalogs too: what --data and BYTES_PER_SCALE count.
        server::database_bytes(self.cluster(s)?)
    }
    fn params(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("pg.scale".into(), self.scale.to_string()),
            ("pg.clients".into(), self.clients.to_string()),
            ("pg.script".into(), self.script.name().into()),
        ])
    }
    fn describe(&self) -> String {
        format!(
            "pgbench {} · {} clients{}",
            self.script.name(),
            self.clients,
            match self.repeat {
                1 => String::new(),
                n => format!(" · {n} repeats"),
            }
        )
    }
    fn measure(&self, s: &dyn Backend, at: &oltp::At) -> Result<Option<ResultDoc>> {
        let cluster = self.cluster(s)?;
        let (version, version_num) = server::version(cluster)?;
        let mut runs = Vec::new();
        for k in 0..self.repeat {
            if crate::interrupt::requested().is_some() {
                break;
            }
            if self.repeat > 1 {
                say!("repeat {}/{}", k + 1, self.repeat);
            }
            match measure_once(
                self,
                cluster,
                version_num,
                at.devices,
                &format!("{}-{k}", at.tag),
            )? {
                Some(m) => runs.push(m),
                None => break,
            }
        }
        if runs.is_empty() {
            return Ok(None);
        }
        let pg = PgDoc {
            version,
            script: self.script.name().into(),
            scale: self.scale,
            clients: self.clients,
            jobs: self.jobs,
            data_bytes: at.data_bytes,
            buffer_ratio: at.ratio,
            settings: at.settings.clone(),
            pgbench_tps: 0.0,
            failed_transactions: 0,
            checkpoints: None,
            server_io: BTreeMap::new(),
            page_cache: at.page_cache.clone().unwrap_or_default(),
            memory_limit_bytes: at.plan.memory_limit,
            wal_dir: cluster.wal.as_ref().map(|w| w.display().to_string()),
            user: at.plan.owner.name.clone(),
        };
        Ok(Some(result_doc(self, s, runs, pg, at)))
    }
    fn threads(&self) -> u32 {
        self.clients
    }
    fn notes(&self, data_bytes: u64, _server: &str) -> Vec<String> {
        let p = &self.server;
        match p.ram > 0 && p.memory_limit.is_none() {
            true => vec![format!(
                "the database ({}) against RAM ({}): PostgreSQL reads through the page cache, the storage cells with O_DIRECT",
                units::iec(data_bytes),
                units::iec(p.ram)
            )],
            false => Vec::new(),
        }
    }
}

pub fn pct(r: f64) -> String {
    let v = r * 100.0;
    match (v - v.round()).abs() < 1e-9 {
        true => format!("{v:.0}%"),
        false => format!("{v}%"),
    }
}

/// Runs a client tool to its end; its failure is one error with its last words.
fn run_tool(c: &mut std::process::Command, cl: &Cluster, what: &str) -> Result<()> {
    let out = c
        .current_dir(&cl.work)
        .output()
        .with_context(|| format!("running {what}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(common::client_failed(
            what,
            &String::from_utf8_lossy(&out.stderr),
            &[cl.data.as_path(), cl.work.as_path()],
        )),
    }
}

/// One pgbench measurement: the tables brought to the same state, a checkpoint, the server's
/// counters and the devices watched around pgbench (the whole run's and, for the timeline,
/// each second's), its log read. `devices` are the data directory's stack and the timeline's
/// devices. `None` when interrupted.
fn measure_once(
    p: &DbPlan,
    cl: &Cluster,
    version_num: u32,
    (devices, timeline_devices): (&[String], &[String]),
    tag: &str,
) -> Result<Option<Measured>> {
    // pgbench's own vacuum, done here so it is not inside the measurement or its counters.
    if p.script.writes() {
        cl.query("VACUUM pgbench_branches, pgbench_tellers")?;
        cl.query("TRUNCATE pgbench_history")?;
    }
    cl.query("CHECKPOINT")?;
    let prefix = cl.work.join(format!("pgbench-{tag}"));
    let before = server::snapshot(cl, version_num)?;
    let watch = iogauge_sysinfo::diskstats::DeviceWatch::start(devices, p.interval);
    // The clients' output goes to files iogauge creates in the cluster's directory (the
    // server's account's) from its handle, and is read back through iogauge's own handles.
    let work = cl.work_dir()?;
    let (out_name, err_name) = (format!("pgbench-{tag}.out"), format!("pgbench-{tag}.err"));
    let out_file = work.create_new(&out_name, None)?;
    let err_file = work.create_new(&err_name, None)?;
    let (mut out_read, mut err_read) = (out_file.try_clone()?, err_file.try_clone()?);
    let cpu_before = server::cpu(cl);
    let log_from = cl.log_len();
    let begun = Instant::now();
    let stop_sampler = std::sync::atomic::AtomicBool::new(false);
    let probe = || server::flush_counters(cl, version_num);
    let (status, raws) = std::thread::scope(|scope| -> Result<_> {
        let sampler =
            scope.spawn(|| timeline::sample(timeline_devices, &probe, p.interval, &stop_sampler));
        let status = run_pgbench(p, cl, &prefix, out_file, err_file);
        stop_sampler.store(true, std::sync::atomic::Ordering::SeqCst);
        let raws = sampler.join().unwrap_or_default();
        Ok((status?, raws))
    })?;
    let runtime = begun.elapsed();
    let server_cpu = match (cpu_before, server::cpu(cl)) {
        (Some(b), Some(a)) => Some(((a.0 - b.0).max(0.0), (a.1 - b.1).max(0.0))),
        _ => None,
    };
    let windows = watch.stop();
    // pgbench's per-transaction logs (its output beside them is iogauge's), by name; each opened from the directory's handle as a
    // file of the server's user's own, never through a link.
    let logs: Vec<String> = pgbench::log_files(&prefix)
        .iter()
        .filter_map(|f| Some(f.file_name()?.to_str()?.to_string()))
        .filter(|f| *f != out_name && *f != err_name)
        .collect();
    let remove = || {
        for f in &logs {
            work.remove(f);
        }
        work.remove(&out_name);
        work.remove(&err_name);
    };
    let Some(status) = status else {
        remove();
        return Ok(None);
    };
    let stdout = cluster::read_back(&mut out_read);
    let stderr = cluster::read_back(&mut err_read);
    if !status.success() {
        remove();
        return Err(common::client_failed(
            "pgbench",
            &stderr,
            &[cl.data.as_path(), cl.work.as_path()],
        ));
    }
    let after = server::snapshot(cl, version_num)?;
    let summary = pgbench::parse_summary(&stdout);
    let timeline = logs
        .iter()
        .map(|f| work.open_servers(f, &cl.owner))
        .collect::<Result<Vec<_>>>()
        .and_then(|mut files| pgbench::read_logs(&mut files, p.server.time, p.interval));
    remove();
    let summary = summary?;
    let timeline = timeline?;
    // The latencies come from the log and the TPS from pgbench's summary: they must describe
    // the same transactions, or the two figures are of different runs.
    if timeline.transactions != summary.transactions {
        say!(
            "note: pgbench counted {} transactions, its per-transaction log {}",
            summary.transactions,
            timeline.transactions
        );
    }
    let step_s = p.interval.as_secs_f64();
    let end_us = timeline.start_us + (timeline.timeseries.len() as f64 * step_s * 1e6) as u64;
    let checkpoints =
        timeline::checkpoints_in_log(&cl.log_since(log_from), timeline.start_us, end_us);
    let seconds = timeline::build(
        timeline.start_us,
        step_s,
        &timeline.timeseries,
        &raws,
        timeline_devices,
        server::flush_source(version_num),
        checkpoints,
    );
    Ok(Some(Measured {
        runtime_s: if summary.tps > 0.0 {
            summary.transactions as f64 / summary.tps
        } else {
            runtime.as_secs_f64()
        },
        summary,
        timeline,
        server_io: server::delta(&before, &after),
        devices: windows,
        seconds,
        server_cpu,
    }))
}

/// Runs pgbench to its end; `None` when interrupted (it is killed then).
fn run_pgbench(
    p: &DbPlan,
    cl: &Cluster,
    prefix: &Path,
    out_file: std::fs::File,
    err_file: std::fs::File,
) -> Result<Option<std::process::ExitStatus>> {
    let child = cl
        .client("pgbench")
        .args(["-n", "-b", p.script.name(), "-c"])
        .arg(p.clients.to_string())
        .arg("-j")
        .arg(p.jobs.to_string())
        .arg("-T")
        .arg(p.server.time.as_secs().max(1).to_string())
        .arg("-l")
        .arg(format!("--log-prefix={}", prefix.display()))
        .arg("postgres")
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::from(err_file))
        .spawn()
        .context("starting pgbench")?;
    // pgbench says its rate only at its end: the progress shows the time.
    common::wait_client(child, p.server.time, &|| None)
}

/// The server's CPU over `runs` (its processes, from /proc: pgbench's own client is not in it),
/// per transaction in `per_io_us`. A run whose /proc entries could not be read adds nothing.
fn server_cpu(runs: &[Measured]) -> CpuDoc {
    let (user, sys) = runs
        .iter()
        .filter_map(|m| m.server_cpu)
        .fold((0.0, 0.0), |(u, s), (du, ds)| (u + du, s + ds));
    CpuDoc::new(user, sys, runs.iter().map(|m| m.summary.transactions).sum())
}

/// The repeats of one ratio as one result: histograms merged exactly, time series end to end,
/// counters added; each repeat kept for the statistics.
fn result_doc(
    p: &DbPlan,
    s: &dyn Backend,
    runs: Vec<Measured>,
    mut pg: PgDoc,
    at: &oltp::At,
) -> ResultDoc {
    let mut hist = measure::run_hist();
    let mut timeseries: Vec<Sample> = Vec::new();
    let mut fine = FineDoc {
        bin_s: crate::runner::FINE_BIN.as_secs_f64(),
        ios: Vec::new(),
        cpu_run: Vec::new(),
        cpu_wait: Vec::new(),
        ..FineDoc::default()
    };
    let (mut txns, mut failed, mut runtime_s) = (0u64, 0u64, 0.0f64);
    let mut server_io = server::Snapshot::new();
    let mut repeats = Vec::new();
    for m in &runs {
        measure::merge(&mut hist, &m.timeline.hist);
        let offset = timeseries.last().map_or(0.0, |s| s.t_s);
        timeseries.extend(m.timeline.timeseries.iter().map(|s| Sample {
            t_s: s.t_s + offset,
            ..*s
        }));
        fine.ios.extend_from_slice(&m.timeline.fine.ios);
        txns += m.summary.transactions;
        failed += m.summary.failed + m.timeline.failed.saturating_sub(m.summary.failed);
        runtime_s += m.runtime_s;
        for (view, counters) in &m.server_io {
            let into = server_io.entry(view.clone()).or_default();
            for (k, v) in counters {
                *into.entry(k.clone()).or_default() += v;
            }
        }
        repeats.push(RepeatDoc {
            iops: m.summary.tps,
            bw_bytes: 0.0,
            ios: m.summary.transactions,
            bytes: 0,
            runtime_s: m.runtime_s,
            lat_ns: m.timeline.lat,
            syncs_per_s: None,
            cpu: server_cpu(std::slice::from_ref(m)),
            complete_batch: None,
            complete_trial: None,
        });
    }
    let mut seconds: Option<crate::model::TimelineDoc> = None;
    for m in &runs {
        match &mut seconds {
            None => seconds = Some(m.seconds.clone()),
            Some(t) => timeline::append(t, m.seconds.clone()),
        }
    }
    pg.pgbench_tps = txns as f64 / runtime_s.max(1e-9);
    pg.failed_transactions = failed;
    pg.checkpoints = server::checkpoints(&server_io);
    pg.server_io = server_io;
    let mut name = format!(
        "pgbench {} · scale {} · {} clients",
        p.script.name(),
        p.scale,
        p.clients
    );
    if let Some(r) = at.ratio {
        name += &format!(" · shared_buffers {} of data", pct(r));
    }
    let windows: Vec<&[iogauge_sysinfo::diskstats::DeviceWindow]> =
        runs.iter().map(|m| m.devices.as_slice()).collect();
    let cpu = server_cpu(&runs);
    let mut doc = common::transactions_result(common::Transactions {
        name,
        server: s,
        settings: &at.settings,
        data_bytes: pg.data_bytes,
        clients: p.clients,
        time: p.server.time,
        transactions: txns,
        runtime_s,
        hist: &hist,
        timeseries,
        cpu: Some((cpu.user_s, cpu.sys_s)),
        devices: devices_of(&windows),
        timeline: seconds.unwrap_or_default(),
        engine: "pgbench",
        mix_read_pct: if p.script.writes() { 50 } else { 100 },
    });
    doc.workload.interval_s = p.interval.as_secs_f64();
    // pgbench's log times every transaction: finer bins than the other loads' seconds.
    doc.fine = fine;
    doc.pg = Some(pg);
    if repeats.len() > 1 {
        doc.stats = crate::repeats::stats_for(&repeats);
        doc.repeats = repeats;
    }
    doc
}

/// What each device of the data directory's stack did over the measurements, each
/// measurement's device windows in the order of `runs`.
fn devices_of(runs: &[&[iogauge_sysinfo::diskstats::DeviceWindow]]) -> Vec<DeviceDoc> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|i| {
            let name = &first[i].name;
            let mut total = first[i].total;
            let (mut elapsed, mut intervals) = (0.0, Vec::new());
            for (k, m) in runs.iter().enumerate() {
                let Some(w) = m.get(i) else { continue };
                let step = w.interval.as_secs_f64();
                intervals.extend(
                    w.intervals
                        .iter()
                        .enumerate()
                        .map(|(j, s)| (elapsed + (j + 1) as f64 * step, *s)),
                );
                elapsed += w.elapsed.as_secs_f64();
                if k > 0 {
                    match (total.as_mut(), w.total) {
                        (Some(t), Some(x)) => t.add(&x),
                        _ => total = None,
                    }
                }
            }
            DeviceDoc::of(
                name,
                total.as_ref(),
                elapsed,
                &intervals,
                iogauge_sysinfo::diskstats::QueueLimits::read(name),
            )
        })
        .collect()
}

/// The document of a database run before its results: one shape and one run-id format for
/// pgbench and sysbench, as for every other run (`exec::run_id`).
pub(crate) fn header(
    output: &crate::plan::Output,
    suite: &str,
    started: std::time::SystemTime,
    system: iogauge_sysinfo::SystemInfo,
    params: BTreeMap<String, String>,
) -> RunDoc {
    RunDoc {
        schema: SCHEMA.into(),
        run_id: crate::exec::run_id(started),
        label: output.label.clone(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        command: std::env::args().collect(),
        suite: Some(suite.into()),
        system,
        results: Vec::new(),
        findings: Vec::new(),
        interrupted: true,
        notes: Vec::new(),
        params,
        rounds: None,
        fleet: None,
        verify: None,
    }
}

/// How a database run ended: its document (stored, or discarded when nothing was measured),
/// and the failure or signal that ended it early. One ending for pgbench and sysbench.
pub struct Outcome {
    pub doc: RunDoc,
    failure: Option<anyhow::Error>,
}

impl Outcome {
    /// Stores the document (or, with nothing measured, discards it and says so).
    pub(crate) fn conclude(
        rec: Recorder,
        doc: RunDoc,
        failure: Option<anyhow::Error>,
    ) -> Result<Outcome> {
        if doc.results.is_empty() {
            let discarded = rec.discard()?;
            if let Some(e) = failure {
                return Err(e);
            }
            if discarded {
                say!("nothing was measured, so nothing was stored");
            }
        } else if let Some(id) = rec.finish(&doc)? {
            say!("stored as run {id}");
        }
        Ok(Outcome { doc, failure })
    }

    /// The run's end once its document was presented: its failure, or its signal.
    pub fn result(self) -> Result<()> {
        if let Some(e) = self.failure {
            return Err(match self.doc.results.is_empty() {
                true => e,
                false => e.context("the results above cover the runs that finished"),
            });
        }
        match crate::interrupt::requested() {
            Some(sig) => Err(error::Interrupted(sig).into()),
            None => Ok(()),
        }
    }
}
