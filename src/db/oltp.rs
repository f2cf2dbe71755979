//! `iogauge db sysbench`: a throwaway MariaDB server in the target directory, its `sbtest`
//! tables prepared by sysbench, then one sysbench OLTP measurement — or one per
//! innodb_buffer_pool_size share of the data (`--buffer-ratio`, the buffer-pool-to-data sweep of
//! the "Solid State Disk Benchmarking" study), each after a restart so the pool starts cold.
//!
//! Each measurement becomes a `ResultDoc` like a pgbench one: `iops` are transactions per
//! second (sysbench's transaction count over its own total time), latencies whole transactions
//! from sysbench's histogram, the time series its per-second lines, the CPU that of mariadbd
//! (/proc/PID/stat: one process, all its threads), and a `sysbench` section with sysbench's
//! report, the server's settings and InnoDB's counters over the run.

use super::mariadb::{self, MyBin, Server};
use super::sysbench::{self, Script};
use super::text;
use crate::cli::{OutputArgs, SysbenchArgs};
use crate::error::usage;
use crate::measure::{self, LatNs};
use crate::model::{
    CpuDoc, EngineDoc, FineDoc, ResultDoc, RunDoc, SysbenchDoc, TargetDoc, WorkloadDoc,
};
use crate::store::{Recorder, Store};
use crate::units;
use crate::workload::Rw;
use anyhow::{anyhow, Context, Result};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

/// InnoDB bytes per sysbench row for `--data`: the c CHAR(120) and pad CHAR(60) columns with
/// the id, k and the secondary index (measured on MariaDB 10.11: 242–252 B/row from 100,000
/// rows up; small tables are padded to ~10 MiB each).
pub const BYTES_PER_ROW: u64 = 250;
/// Rows per table when neither --table-size nor --data is given (~25 MB per table).
const DEFAULT_TABLE_SIZE: u64 = 100_000;
/// The smallest buffer pool iogauge asks for; InnoDB rounds small pools up anyway.
const MIN_BUFFER_POOL: u64 = 8 << 20;
/// Settings recorded with every run: how InnoDB caches, logs and syncs.
const RECORDED: [&str; 12] = [
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_flush_method",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_max_dirty_pages_pct",
    "innodb_page_size",
    "sync_binlog",
    "log_bin",
    "skip_networking",
];
/// InnoDB's counters read before and after each run (all exist in 10.11; fsyncs of the log are
/// inside Innodb_data_fsyncs, which counts every InnoDB fsync).
const COUNTERS: [&str; 17] = [
    "Innodb_data_fsyncs",
    "Innodb_data_written",
    "Innodb_data_writes",
    "Innodb_data_read",
    "Innodb_data_reads",
    "Innodb_os_log_written",
    "Innodb_log_writes",
    "Innodb_log_waits",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_wait_free",
    "Innodb_pages_written",
    "Innodb_dblwr_pages_written",
    "Innodb_row_lock_waits",
    "Questions",
    "Com_commit",
];

/// InnoDB's flushing, sampled each second for the timeline: checkpoint age and dirty pages
/// (levels), pages flushed, redo written and fsyncs (counters).
const TIMELINE_COUNTERS: [&str; 5] = [
    "Innodb_checkpoint_age",
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_os_log_written",
    "Innodb_data_fsyncs",
];

/// Everything `db sysbench` will do, checked before anything is created.
#[derive(Debug)]
pub struct SysbenchPlan {
    pub target: PathBuf,
    pub bin: MyBin,
    pub owner: super::cluster::Owner,
    pub script: Script,
    pub tables: u32,
    pub table_size: u64,
    /// How the table size was chosen, for the plan.
    pub sized_by: String,
    pub threads: u32,
    pub time: Duration,
    /// --db-setting pairs, in order.
    pub settings: Vec<(String, String)>,
    /// innodb_buffer_pool_size as fractions of the data, one run each; empty: one run.
    pub ratios: Vec<f64>,
    pub keep: bool,
    pub output: OutputArgs,
    pub file: Option<(PathBuf, crate::plan::Format)>,
}

/// `0.25,1` (shares) or `25%,100%`.
fn ratios(list: &str) -> Result<Vec<f64>> {
    units::parse_list(list, |s| {
        let (v, scale) = match s.strip_suffix('%') {
            Some(p) => (p, 100.0),
            None => (s, 1.0),
        };
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{s} is not a share (0.25) or a percentage (25%)"))?;
        let r = v / scale;
        match r > 0.0 && r <= 16.0 {
            true => Ok(r),
            false => Err(format!("{s} is not a share above 0 and at most 16")),
        }
    })
    .map_err(|e| usage(format!("--buffer-ratio {list}: {e}")))
}

/// What the user typed, checked: numbers, settings and directories, and where MariaDB and
/// sysbench are.
pub fn plan(a: &SysbenchArgs) -> Result<SysbenchPlan> {
    if !a.target.is_dir() {
        return Err(usage(format!(
            "{} is not a directory: give the directory under test, e.g. iogauge db sysbench /mnt/data",
            a.target.display()
        )));
    }
    let (table_size, sized_by) = match (a.table_size, a.data) {
        (Some(n), _) => (n, format!("{n} rows per table")),
        (None, Some(d)) => {
            let rows = d / (BYTES_PER_ROW * u64::from(a.tables));
            if rows < 1000 {
                return Err(usage(format!(
                    "--data {} gives fewer than 1,000 rows per table at ~{BYTES_PER_ROW} bytes a row; give more data or fewer --tables",
                    units::iec(d)
                )));
            }
            (
                rows,
                format!(
                    "{rows} rows per table: --data {} at ~{BYTES_PER_ROW} bytes a row",
                    units::iec(d)
                ),
            )
        }
        (None, None) => (
            DEFAULT_TABLE_SIZE,
            format!("{DEFAULT_TABLE_SIZE} rows per table"),
        ),
    };
    if a.time < Duration::from_secs(1) {
        return Err(usage(
            "--time is under 1s; sysbench counts whole seconds, e.g. --time 60s",
        ));
    }
    let settings = a
        .db_setting
        .iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                let k = k.trim().trim_start_matches("--").to_ascii_lowercase();
                if mariadb::OWN_SETTINGS.contains(&k.replace('-', "_").as_str()) {
                    return Err(usage(format!(
                        "--db-setting {k}: iogauge sets it, to keep the server and its files private"
                    )));
                }
                Ok((k, v.trim().to_string()))
            }
            _ => Err(usage(format!(
                "--db-setting '{s}' is not KEY=VALUE; write e.g. --db-setting innodb_flush_log_at_trx_commit=2"
            ))),
        })
        .collect::<Result<Vec<_>>>()?;
    let ratios = match &a.buffer_ratio {
        None => Vec::new(),
        Some(list) => {
            if settings
                .iter()
                .any(|(k, _)| k.replace('-', "_") == "innodb_buffer_pool_size")
            {
                return Err(usage(
                    "--buffer-ratio sets innodb_buffer_pool_size for each run; leave out --db-setting innodb_buffer_pool_size",
                ));
            }
            ratios(list)?
        }
    };
    if a.output.baseline {
        return Err(usage(
            "--baseline names a storage result's later level after a change of regime; db runs report transactions: drop it",
        ));
    }
    let bin = mariadb::find()?;
    let owner =
        super::cluster::owner_among(&["mysql", "nobody"], "MariaDB (mariadbd refuses root)")?;
    super::cluster::check_reachable_by(
        &a.target,
        &owner,
        "MariaDB runs as user {} (mariadbd refuses root)",
    )?;
    Ok(SysbenchPlan {
        target: a.target.clone(),
        bin,
        owner,
        script: a.script.into(),
        tables: a.tables,
        table_size,
        sized_by,
        threads: a.threads,
        time: a.time,
        settings,
        ratios,
        keep: a.keep,
        file: crate::plan::output_file(&a.output)?,
        output: a.output.clone(),
    })
}

/// The server's counters of `COUNTERS` as numbers.
fn status(s: &Server) -> Result<BTreeMap<String, f64>> {
    status_of(s, &COUNTERS)
}

/// The server's status variables `names` as numbers.
fn status_of(s: &Server, names: &[&str]) -> Result<BTreeMap<String, f64>> {
    let names: Vec<String> = names.iter().map(|c| format!("'{c}'")).collect();
    Ok(s.pairs(&format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        names.join(",")
    ))?
    .into_iter()
    .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
    .collect())
}

/// The recorded settings and the ones the user set.
fn settings(s: &Server, also: &[(String, String)]) -> Result<BTreeMap<String, String>> {
    let names: Vec<String> = RECORDED
        .iter()
        .map(|k| k.to_string())
        .chain(also.iter().map(|(k, _)| k.replace('-', "_")))
        .map(|k| format!("'{}'", k.replace('\'', "''")))
        .collect();
    Ok(s.pairs(&format!(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
        names.join(",")
    ))?
    .into_iter()
    .collect())
}

/// CPU seconds (user, system) mariadbd has used so far: one process, so fields 14 and 15 of
/// /proc/PID/stat already hold all its threads. `None` when /proc cannot say.
fn server_cpu(pid: u32) -> Option<(f64, f64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may itself hold spaces and parentheses.
    let f: Vec<&str> = s.rsplit_once(')')?.1.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    // /proc counts in USER_HZ, 100 on every architecture MariaDB runs on.
    Some((n(11)? as f64 / 100.0, n(12)? as f64 / 100.0))
}

/// One measured sysbench run.
struct Measured {
    report: sysbench::Report,
    status: BTreeMap<String, f64>,
    cpu: Option<(f64, f64)>,
    devices: Vec<iogauge_sysinfo::diskstats::DeviceWindow>,
    /// The run second by second, with InnoDB's bursts of flushing.
    seconds: crate::model::TimelineDoc,
}

/// One sysbench run: InnoDB's counters, the server's CPU and the devices around it; its output
/// read. `None` when interrupted.
fn measure_once(
    p: &SysbenchPlan,
    s: &Server,
    devices: &[String],
    tag: &str,
) -> Result<Option<Measured>> {
    let before = status(s)?;
    let pid = s
        .pid()
        .ok_or_else(|| anyhow!("the MariaDB server is not running"))?;
    let out_path = s.work.join(format!("sysbench-{tag}.out"));
    // The directory belongs to the server's account, which could have planted a link at this
    // name: create it new, never through a link.
    let out_file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&out_path)
            .with_context(|| {
                format!(
                    "creating {} (something is already there)",
                    out_path.display()
                )
            })?
    };
    let watch = iogauge_sysinfo::diskstats::DeviceWatch::start(devices, Duration::from_secs(1));
    let cpu_before = server_cpu(pid);
    let stop_sampler = std::sync::atomic::AtomicBool::new(false);
    let probe = || status_of(s, &TIMELINE_COUNTERS).unwrap_or_default();
    // sysbench counts its seconds from its start; the spawn is within a few ms of it (the
    // tables exist already, so it only connects).
    let start_us = super::timeline::now_us();
    let (status_, raws) = std::thread::scope(|scope| -> Result<_> {
        let sampler = scope.spawn(|| {
            super::timeline::sample(devices, &probe, Duration::from_secs(1), &stop_sampler)
        });
        let status = run_sysbench(p, s, out_file);
        stop_sampler.store(true, std::sync::atomic::Ordering::SeqCst);
        let raws = sampler.join().unwrap_or_default();
        Ok((status?, raws))
    })?;
    let cpu = match (cpu_before, server_cpu(pid)) {
        (Some(b), Some(a)) => Some(((a.0 - b.0).max(0.0), (a.1 - b.1).max(0.0))),
        _ => None,
    };
    let windows = watch.stop();
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let Some(st) = status_ else {
        return Ok(None);
    };
    if !st.success() {
        return Err(anyhow!(
            "sysbench {} run failed: {}",
            p.script.name(),
            super::cluster::last_lines(&stdout, 3)
        ));
    }
    let report = sysbench::parse(&stdout)?;
    let after = status(s)?;
    let delta = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect();
    let mut seconds = super::timeline::build(
        start_us,
        1.0,
        &report.timeseries(),
        &raws,
        devices,
        "SHOW GLOBAL STATUS",
        Vec::new(),
    );
    seconds.flushes = super::timeline::flush_bursts(&seconds);
    Ok(Some(Measured {
        report,
        status: delta,
        cpu,
        devices: windows,
        seconds,
    }))
}

/// Runs sysbench to its end; `None` when interrupted (it is killed then).
fn run_sysbench(
    p: &SysbenchPlan,
    s: &Server,
    out_file: std::fs::File,
) -> Result<Option<std::process::ExitStatus>> {
    let mut child = s
        .sysbench(p.script.name())
        .arg(format!("--tables={}", p.tables))
        .arg(format!("--table-size={}", p.table_size))
        .arg(format!("--threads={}", p.threads))
        .arg(format!("--time={}", p.time.as_secs().max(1)))
        .args([
            "--report-interval=1",
            "--percentile=99",
            "--histogram=on",
            "run",
        ])
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::null())
        // Its own process group: iogauge decides what a Ctrl-C stops, and when.
        .process_group(0)
        .spawn()
        .context("starting sysbench")?;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Some(st));
        }
        if crate::interrupt::requested().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the plan: server, prepare, one measurement per ratio; stored as it goes and printed at
/// the end.
pub fn run(p: &SysbenchPlan) -> Result<()> {
    if p.output.dry_run {
        return Ok(crate::ui::out(&text::sysbench_plan(p))?);
    }
    // Opened before the server: a results database that cannot be written is told at once.
    let store = match p.output.no_store {
        true => None,
        false => Some(Store::open(p.output.db.path())?),
    };
    say!(
        "MariaDB {} ({}); the server runs as user {}",
        p.bin.version,
        p.bin.mariadbd.display(),
        p.owner.name
    );
    let started = SystemTime::now();
    let mut server = Server::create(&p.bin, &p.owner, &p.target, p.keep)?;
    say!("server in {}", server.work.display());
    server.start(&p.settings, &p.settings)?;
    let version = server.query("SELECT VERSION()")?;
    server.query(
        "CREATE DATABASE sbtest; CREATE USER sbtest@localhost; GRANT ALL ON sbtest.* TO sbtest@localhost",
    )?;
    say!(
        "loading: sysbench {} prepare, {} tables × {} rows",
        p.script.name(),
        p.tables,
        p.table_size
    );
    let load = Instant::now();
    let out = server
        .sysbench(p.script.name())
        .arg(format!("--tables={}", p.tables))
        .arg(format!("--table-size={}", p.table_size))
        // prepare fills one table per thread.
        .arg(format!("--threads={}", p.threads.min(p.tables)))
        .arg("prepare")
        .output()
        .context("running sysbench prepare")?;
    if !out.status.success() {
        return Err(anyhow!(
            "sysbench prepare failed: {}",
            super::cluster::last_lines(&String::from_utf8_lossy(&out.stdout), 3)
        ));
    }
    let data_bytes: u64 = server
        .query("SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = 'sbtest'")?
        .trim()
        .parse()
        .unwrap_or(0);
    say!(
        "loaded {} in {}",
        units::iec(data_bytes),
        units::duration(load.elapsed())
    );
    let pool = |r: f64| ((data_bytes as f64 * r) as u64 >> 20 << 20).max(MIN_BUFFER_POOL);

    let system = iogauge_sysinfo::capture(Some(&server.data));
    let device_names: Vec<String> = system
        .target
        .as_ref()
        .map(|t| t.devices.iter().map(|d| d.name.clone()).collect())
        .unwrap_or_default();
    let mut params: BTreeMap<String, String> = BTreeMap::new();
    params.insert("sysbench.script".into(), p.script.name().into());
    params.insert("sysbench.tables".into(), p.tables.to_string());
    params.insert("sysbench.table_size".into(), p.table_size.to_string());
    params.insert("sysbench.threads".into(), p.threads.to_string());
    let header = super::header(&p.output, "db-sysbench", started, system, params);
    let mut rec = Recorder::start(store, &header)?;
    crate::interrupt::measuring();
    let steps: Vec<Option<f64>> = match p.ratios.is_empty() {
        true => vec![None],
        false => p.ratios.iter().map(|&r| Some(r)).collect(),
    };
    let mut results = Vec::new();
    let mut failure = None;
    for (i, ratio) in steps.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let mut set = p.settings.clone();
        if let Some(r) = ratio {
            set.push(("innodb_buffer_pool_size".into(), pool(*r).to_string()));
        }
        let res = (|| -> Result<Option<ResultDoc>> {
            // A restart for every measurement: the settings apply, and the pool starts cold.
            server.stop()?;
            server.start(&set, &p.settings)?;
            let recorded = settings(&server, &p.settings)?;
            say!(
                "[{}/{}] sysbench {} · {} threads · innodb_buffer_pool_size {}{}",
                i + 1,
                steps.len(),
                p.script.name(),
                p.threads,
                recorded
                    .get("innodb_buffer_pool_size")
                    .and_then(|v| v.parse::<u64>().ok())
                    .map_or("?".into(), units::iec),
                ratio.map_or(String::new(), |r| format!(
                    " ({} of the data)",
                    super::pct(r)
                ))
            );
            let Some(m) = measure_once(p, &server, &device_names, &i.to_string())? else {
                return Ok(None);
            };
            let doc = SysbenchDoc {
                server: "MariaDB".into(),
                version: version.clone(),
                script: p.script.name().into(),
                tables: p.tables,
                table_size: p.table_size,
                threads: p.threads,
                data_bytes,
                buffer_ratio: *ratio,
                settings: recorded,
                user: p.owner.name.clone(),
                ..SysbenchDoc::default()
            };
            Ok(Some(result_doc(p, &server, m, doc)))
        })();
        match res {
            Ok(Some(r)) => {
                say!("[{}/{}] {}", i + 1, steps.len(), text::one_line(&r));
                rec.add(&r)?;
                results.push(r);
            }
            Ok(None) => break,
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let kept = server.kept().then(|| server.work.clone());
    drop(server);
    let mut notes = Vec::new();
    if let Some(k) = &kept {
        notes.push(format!(
            "the server's directory was kept (--keep) in {}",
            k.display()
        ));
    }
    notes.push(format!(
        "the tables: {} (data and indexes, information_schema) in {} tables of {} rows",
        units::iec(data_bytes),
        p.tables,
        p.table_size
    ));
    let interrupted = failure.is_some() || crate::interrupt::requested().is_some();
    let mut doc = RunDoc {
        results,
        interrupted,
        notes,
        ..header
    };
    crate::analysis::annotate(&mut doc, None);
    super::conclude(rec, &doc, failure, |d| emit(p, d))
}

/// One measurement as a result: TPS as the rate (transactions over sysbench's total time),
/// latencies from its histogram, its seconds as the time series.
fn result_doc(p: &SysbenchPlan, s: &Server, m: Measured, mut sb: SysbenchDoc) -> ResultDoc {
    let r = &m.report;
    let tps = r.transactions as f64 / r.total_s.max(1e-9);
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
    let direct = sb
        .settings
        .get("innodb_flush_method")
        .is_some_and(|f| f.starts_with("O_DIRECT"));
    let name = match sb.buffer_ratio {
        Some(x) => format!(
            "sysbench {} · {} × {} rows · {} threads · buffer pool {} of data",
            p.script.name(),
            p.tables,
            p.table_size,
            p.threads,
            super::pct(x)
        ),
        None => format!(
            "sysbench {} · {} × {} rows · {} threads",
            p.script.name(),
            p.tables,
            p.table_size,
            p.threads
        ),
    };
    let devices = super::devices_of(&[m.devices.as_slice()]);
    let (user, sys) = m.cpu.unwrap_or((0.0, 0.0));
    ResultDoc {
        name: Some(name),
        workload: WorkloadDoc {
            rw: match p.script.writes() {
                true => Rw::Randrw,
                false => Rw::Randread,
            },
            bs: 16384,
            threads: p.threads,
            iodepth: 1,
            engine: "sysbench".into(),
            direct,
            mix_read_pct: match p.script {
                Script::WriteOnly => 0,
                Script::ReadWrite => 50,
                _ => 100,
            },
            sync: None,
            sync_every: None,
            odsync: false,
            seed: 0,
            time_s: Some(p.time.as_secs_f64()),
            data_bytes: None,
            ramp_s: 0.0,
            interval_s: 1.0,
            rate_iops: None,
            distribution: "uniform".into(),
        },
        target: TargetDoc {
            path: s.data.display().to_string(),
            absolute_path: Some(s.data.display().to_string()),
            device: devices.first().map(|d| d.name.clone()),
            kind: "directory".into(),
            created: true,
            offset_bytes: 0,
            range_bytes: sb.data_bytes,
            logical_block_size: iogauge_sysinfo::logical_block_size_for(&s.data).unwrap_or(512),
        },
        iops: tps,
        bw_bytes: 0.0,
        ios: r.transactions,
        bytes: 0,
        runtime_s: r.total_s,
        lat_ns: LatNs::of(&r.hist),
        lat_hist: measure::buckets(&r.hist),
        read: None,
        write: None,
        sync: None,
        service_lat_ns: None,
        cpu: CpuDoc::new(user, sys, r.transactions),
        timeseries: r.timeseries(),
        interval_hists: Vec::new(),
        // sysbench reports whole seconds only: no finer bins to time a stall by.
        fine: FineDoc::default(),
        engine: EngineDoc {
            name: "sysbench".into(),
            ..EngineDoc::default()
        },
        interrupted: false,
        error: None,
        io_path: format!(
            "mariadb (InnoDB, {})",
            sb.settings
                .get("innodb_flush_method")
                .map_or("?", String::as_str)
        ),
        findings: Vec::new(),
        repeats: Vec::new(),
        devices,
        stats: BTreeMap::new(),
        pg: None,
        sysbench: Some(Box::new(sb)),
        verify: None,
        timeline: Some(Box::new(m.seconds)),
    }
}

/// Prints the run as asked: JSON, or the summary for people; and the --output file.
fn emit(p: &SysbenchPlan, doc: &RunDoc) -> Result<()> {
    crate::present::write_out(doc, p.file.as_ref(), p.output.json, &|| {
        text::sysbench_run(p, doc)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_ratios_are_shares_or_percentages() {
        assert_eq!(ratios("0.25,1").unwrap(), vec![0.25, 1.0]);
        assert_eq!(ratios("25%, 100%").unwrap(), vec![0.25, 1.0]);
        let e = ratios("0.25,0").unwrap_err().to_string();
        assert!(e.contains("above 0"), "{e}");
        assert_eq!(crate::error::exit_code(&ratios("x").unwrap_err()), 2);
    }

    #[test]
    fn the_servers_cpu_is_read_from_proc() {
        let (u, s) = server_cpu(std::process::id()).unwrap();
        assert!(u >= 0.0 && s >= 0.0);
        assert!(server_cpu(u32::MAX - 1).is_none());
    }
}
