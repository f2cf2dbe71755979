//! `db pgbench`, the load: pgbench's tables made with `pgbench -i`, each measurement a pgbench
//! run on the cluster (with `--repeat`), after its own vacuum and a checkpoint; what pgbench
//! prints and logs is read by `output`.

mod output;

use super::backend::Backend;
use super::cluster::{self, Cluster};
use super::{common, devices_of, load, pct, server, timeline};
use crate::measure;
use crate::model::{CpuDoc, FineDoc, PgDoc, RepeatDoc, ResultDoc, Sample};
use crate::units;
use anyhow::{Context, Result};
use output::{log_files, parse_summary, read_logs, whole_window, Summary, Timeline};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

/// pgbench's built-in scripts (`--builtin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// TPC-B (sort of): three updates, a select and an insert per transaction.
    TpcbLike,
    /// The TPC-B transaction without the updates of tellers and branches (less contention).
    SimpleUpdate,
    /// One primary-key select per transaction: reads only.
    SelectOnly,
}

impl Script {
    pub fn name(self) -> &'static str {
        match self {
            Script::TpcbLike => "tpcb-like",
            Script::SimpleUpdate => "simple-update",
            Script::SelectOnly => "select-only",
        }
    }

    pub fn writes(self) -> bool {
        self != Script::SelectOnly
    }
}

/// Everything `db pgbench` will do, checked before anything is created: the server's part as
/// every load has it, and pgbench's own.
#[derive(Debug)]
pub struct PgbenchPlan {
    pub server: load::ServerPlan,
    pub scale: u32,
    pub clients: u32,
    pub jobs: u32,
    pub script: Script,
    pub repeat: u32,
    pub interval: Duration,
}

/// One measured pgbench run.
struct Measured {
    summary: Summary,
    timeline: Timeline,
    runtime_s: f64,
    server_io: server::Snapshot,
    devices: Vec<iogauge_sysinfo::diskstats::DeviceWindow>,
    /// The run second by second, with the server's checkpoints.
    seconds: crate::model::TimelineDoc,
    /// The server's CPU seconds (user, system) during the run; `None` if /proc could not say.
    server_cpu: Option<(f64, f64)>,
    /// The part of the window kept when a Ctrl-C stopped pgbench before its end.
    cut_short: Option<Duration>,
}

impl PgbenchPlan {
    /// The cluster pgbench drives: `db pgbench` runs on PostgreSQL only.
    fn cluster<'a>(&self, s: &'a dyn Backend) -> Result<&'a Cluster> {
        s.cluster()
            .ok_or_else(|| anyhow::anyhow!("bug: db pgbench on a server that is not PostgreSQL"))
    }
}

impl load::Load for PgbenchPlan {
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
    fn measure(&self, s: &dyn Backend, at: &load::At) -> Result<Option<ResultDoc>> {
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
                // A window a Ctrl-C cut short is kept, and is the last.
                Some(m) if m.cut_short.is_some() => {
                    runs.push(m);
                    break;
                }
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
    fn repeats_itself(&self) -> bool {
        true
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
    p: &PgbenchPlan,
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
    let logs: Vec<String> = log_files(&prefix)
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
    let open_logs = || {
        logs.iter()
            .map(|f| work.open_servers(f, &cl.owner))
            .collect::<Result<Vec<_>>>()
    };
    let (summary, timeline, cut_short) = match status {
        // Stopped by a Ctrl-C: what its logs hold whole is kept, as the part of the window it is.
        None => {
            let read = open_logs().and_then(|mut files| {
                let Some(window) = whole_window(&mut files, p.interval)? else {
                    return Ok(None);
                };
                let t = read_logs(&mut files, window, p.interval, true)?;
                Ok(Some((window, t)))
            });
            remove();
            let Some((window, t)) = read? else {
                return Ok(None);
            };
            (Summary::of_log(&t, window), t, Some(window))
        }
        Some(status) if !status.success() => {
            let stderr = cluster::read_back(&mut err_read);
            remove();
            if let Some(why) = cl.down() {
                return Err(anyhow::anyhow!(why));
            }
            return Err(common::client_failed(
                "pgbench",
                &stderr,
                &[cl.data.as_path(), cl.work.as_path()],
            ));
        }
        Some(_) => {
            let stdout = cluster::read_back(&mut out_read);
            let summary = parse_summary(&stdout);
            let timeline = open_logs()
                .and_then(|mut files| read_logs(&mut files, p.server.time, p.interval, false));
            remove();
            let (summary, timeline) = (summary?, timeline?);
            // The latencies come from the log and the TPS from pgbench's summary: they must
            // describe the same transactions, or the two figures are of different runs.
            if timeline.transactions != summary.transactions {
                say!(
                    "note: pgbench counted {} transactions, its per-transaction log {}",
                    summary.transactions,
                    timeline.transactions
                );
            }
            (summary, timeline, None)
        }
    };
    // After a Ctrl-C the server's counters are worth keeping but not worth failing for.
    let after = match cut_short {
        None => server::snapshot(cl, version_num)?,
        Some(_) => server::snapshot(cl, version_num).unwrap_or_else(|_| before.clone()),
    };
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
        runtime_s: match cut_short {
            Some(w) => w.as_secs_f64(),
            None if summary.tps > 0.0 => summary.transactions as f64 / summary.tps,
            None => runtime.as_secs_f64(),
        },
        summary,
        timeline,
        server_io: server::delta(&before, &after),
        devices: windows,
        seconds,
        server_cpu,
        cut_short,
    }))
}

/// Runs pgbench to its end; `None` when interrupted (it is killed then).
fn run_pgbench(
    p: &PgbenchPlan,
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
        // A terminal's Ctrl-C is iogauge's to act on: pgbench, in a group of its own, is not
        // killed by it before iogauge can keep what it measured.
        .process_group(0)
        .spawn()
        .context("starting pgbench")?;
    // pgbench says its rate only at its end: the progress shows the time.
    // pgbench has no report of its own at an interrupt: its per-transaction logs are read.
    Ok(
        match common::wait_client(child, p.server.time, &|| None, None)? {
            common::Ended::Itself(s) => Some(s),
            common::Ended::Stopped(_) => None,
        },
    )
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
    p: &PgbenchPlan,
    s: &dyn Backend,
    runs: Vec<Measured>,
    mut pg: PgDoc,
    at: &load::At,
) -> ResultDoc {
    let mut hist = measure::run_hist();
    let mut timeseries: Vec<Sample> = Vec::new();
    let mut fine = FineDoc {
        bin_s: crate::runner::FINE_BIN.as_secs_f64(),
        ios: Vec::new(),
        cpu_run: Vec::new(),
        cpu_wait: Vec::new(),
        cpu_others: Vec::new(),
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
    if let Some(w) = runs.last().and_then(|m| m.cut_short) {
        common::cut_short(&mut doc, w, p.server.time);
    }
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
