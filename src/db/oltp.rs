//! `iogauge db sysbench`: a throwaway database server in the target directory — MariaDB's
//! InnoDB, or PostgreSQL in the cluster `db pgbench` uses (`--server`, behind `backend`) — its
//! `sbtest` tables prepared by sysbench, then one sysbench OLTP measurement, or one per buffer
//! share of the data (`--buffer-ratio`: innodb_buffer_pool_size or shared_buffers, the
//! buffer-pool-to-data sweep of the "Solid State Disk Benchmarking" study), each after a
//! restart so the buffer starts cold. Beside the TPS, as for pgbench, the storage cells of the
//! same directory: the server's commit (InnoDB: 16 KiB page writes + fsync; PostgreSQL: 8 KiB
//! + fdatasync) and its page's random reads.
//!
//! Each measurement becomes a `ResultDoc` like a pgbench one: `iops` are transactions per
//! second (sysbench's transaction count over its own total time), latencies whole transactions
//! from sysbench's histogram, the time series its per-second lines, the CPU that of the server
//! (/proc), and a `sysbench` section with sysbench's report, the server's settings and its IO
//! counters over the run.

use super::backend::{self, Backend};
use super::cluster::{self, PgBin};
use super::common;
use super::mariadb::{MyBin, Server};
use super::sysbench::{self, Script};
use crate::measure::{self, LatNs};
use crate::model::{CpuDoc, EngineDoc, FineDoc, ResultDoc, SysbenchDoc, TargetDoc, WorkloadDoc};
use crate::store::{Recorder, Store};
use crate::units;
use crate::workload::Rw;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

/// Bytes per sysbench row for `--data`: the c CHAR(120) and pad CHAR(60) columns with the id,
/// k and the secondary index (measured on MariaDB 10.11: 242–252 B/row from 100,000 rows up,
/// small tables padded to ~10 MiB each; PostgreSQL 15 keeps about as much).
pub const BYTES_PER_ROW: u64 = 250;
/// Rows per table when neither --table-size nor --data is given (~25 MB per table).
pub(super) const DEFAULT_TABLE_SIZE: u64 = 100_000;

/// Which server sysbench drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    Mariadb,
    Postgres,
}

/// The server's programs, found.
#[derive(Debug)]
pub enum Bin {
    Mariadb(MyBin),
    Postgres(PgBin),
}

impl Bin {
    /// What the buffer is called, that --buffer-ratio sizes.
    pub fn buffer_name(&self) -> &'static str {
        match self {
            Bin::Mariadb(_) => "innodb_buffer_pool_size",
            Bin::Postgres(_) => "shared_buffers",
        }
    }

    /// What the log is called, that --wal-dir or --log-dir moves.
    pub fn log_name(&self) -> &'static str {
        match self {
            Bin::Mariadb(_) => "InnoDB's redo log (innodb_log_group_home_dir)",
            Bin::Postgres(_) => "WAL (initdb --waldir)",
        }
    }

    /// The storage cells beside this server's TPS.
    pub fn cells(&self, threads: u32) -> common::Cells {
        match self {
            Bin::Mariadb(_) => backend::mariadb_cells(threads),
            Bin::Postgres(_) => backend::postgres_cells(threads),
        }
    }

    /// "MariaDB 10.11.19-MariaDB-0+deb12u1 (/usr/sbin/mariadbd)", for the plan and the log.
    pub fn describe(&self) -> String {
        match self {
            Bin::Mariadb(b) => format!("MariaDB {} ({})", b.version, b.mariadbd.display()),
            Bin::Postgres(b) => format!("PostgreSQL {} ({})", b.version, b.dir.display()),
        }
    }
}

/// Everything `db sysbench` will do, checked before anything is created.
#[derive(Debug)]
pub struct SysbenchPlan {
    pub target: PathBuf,
    pub bin: Bin,
    pub sysbench: PathBuf,
    pub owner: cluster::Owner,
    pub script: Script,
    pub tables: u32,
    pub table_size: u64,
    /// How the table size was chosen, for the plan.
    pub sized_by: String,
    pub threads: u32,
    pub time: Duration,
    /// --db-setting pairs, in order.
    pub settings: Vec<(String, String)>,
    /// The buffer as fractions of the data, one run each; empty: one run.
    pub ratios: Vec<f64>,
    /// The server's log (PostgreSQL's WAL, InnoDB's redo) in a directory of its own under this.
    pub log_dir: Option<PathBuf>,
    pub memory_limit: Option<u64>,
    /// Length of each storage cell; `None` with --no-storage.
    pub storage: Option<Duration>,
    pub keep: bool,
    pub ram: u64,
    pub output: crate::plan::Output,
    pub file: Option<(PathBuf, crate::plan::Format)>,
}

/// One measured sysbench run.
struct Measured {
    report: sysbench::Report,
    status: BTreeMap<String, f64>,
    cpu: Option<(f64, f64)>,
    devices: Vec<iogauge_sysinfo::diskstats::DeviceWindow>,
    /// The run second by second, with the server's flushes.
    seconds: crate::model::TimelineDoc,
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
    let watch = iogauge_sysinfo::diskstats::DeviceWatch::start(devices, Duration::from_secs(1));
    let cpu_before = s.cpu();
    let mark = s.log_mark();
    let stop_sampler = std::sync::atomic::AtomicBool::new(false);
    let probe = || s.probe();
    // sysbench counts its seconds from its start; the spawn is within a few ms of it (the
    // tables exist already, so it only connects).
    let start_us = super::timeline::now_us();
    let (status_, raws) = std::thread::scope(|scope| -> Result<_> {
        let sampler = scope.spawn(|| {
            super::timeline::sample(
                timeline_devices,
                &probe,
                Duration::from_secs(1),
                &stop_sampler,
            )
        });
        let status = run_sysbench(p, s, out_file);
        stop_sampler.store(true, std::sync::atomic::Ordering::SeqCst);
        let raws = sampler.join().unwrap_or_default();
        Ok((status?, raws))
    })?;
    let cpu = match (cpu_before, s.cpu()) {
        (Some(b), Some(a)) => Some(((a.0 - b.0).max(0.0), (a.1 - b.1).max(0.0))),
        _ => None,
    };
    let windows = watch.stop();
    let stdout = cluster::read_back(&mut out_read);
    work.remove(&out_name);
    let Some(st) = status_ else {
        return Ok(None);
    };
    if !st.success() {
        let mut dirs = vec![s.data(), s.work()];
        dirs.extend(s.log_dir());
        return Err(super::common::client_failed(
            &format!("sysbench {} run", p.script.name()),
            &stdout,
            &dirs,
        ));
    }
    let report = sysbench::parse(&stdout)?;
    let after = s.counters()?;
    let delta = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect();
    let mut seconds = super::timeline::build(
        start_us,
        1.0,
        &report.timeseries(),
        &raws,
        timeline_devices,
        s.probe_source(),
        Vec::new(),
    );
    seconds.flushes = s.flushes(mark, &seconds, start_us);
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
    s: &dyn Backend,
    out_file: std::fs::File,
) -> Result<Option<std::process::ExitStatus>> {
    let child = s
        .sysbench(&p.sysbench, p.script.name())
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
    common::wait_client(child)
}

/// The server of the plan, created (its directories, cgroup and initdb or install-db), not
/// started.
fn create(p: &SysbenchPlan) -> Result<Box<dyn Backend>> {
    let site = cluster::Site {
        owner: &p.owner,
        target: &p.target,
        log_dir: p.log_dir.as_deref(),
        memory_limit: p.memory_limit,
        keep: p.keep,
    };
    Ok(match &p.bin {
        Bin::Mariadb(bin) => Box::new(backend::Mariadb(Server::create(bin, &site)?)),
        Bin::Postgres(bin) => Box::new(backend::Postgres::create(bin, &site)?),
    })
}

/// Runs the plan: server, prepare, one measurement per ratio, the storage cells; stored as it
/// goes. The caller presents the document, then ends as [`super::Outcome::result`] says.
pub fn run(p: &SysbenchPlan) -> Result<super::Outcome> {
    // Opened before the server: a results database that cannot be written is told at once.
    let store = match p.output.no_store {
        true => None,
        false => Some(Store::open(p.output.db.as_deref())?),
    };
    say!(
        "{}; the server runs as user {}",
        p.bin.describe(),
        p.owner.name
    );
    let started = SystemTime::now();
    let mut server = create(p)?;
    say!("server in {}", server.work().display());
    server.restart(&p.settings, &p.settings)?;
    let version = server.version()?;
    server.create_sbtest()?;
    say!(
        "loading: sysbench {} prepare, {} tables × {} rows",
        p.script.name(),
        p.tables,
        p.table_size
    );
    let load = Instant::now();
    let out = server
        .sysbench(&p.sysbench, p.script.name())
        .arg(format!("--tables={}", p.tables))
        .arg(format!("--table-size={}", p.table_size))
        // prepare fills one table per thread.
        .arg(format!("--threads={}", p.threads.min(p.tables)))
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
        return Err(super::common::client_failed(
            "sysbench prepare",
            &said,
            &dirs,
        ));
    }
    server.settle(p.tables)?;
    let data_bytes = server.data_bytes()?;
    say!(
        "loaded {} in {}",
        units::iec(data_bytes),
        units::duration(load.elapsed())
    );
    let buffers: Vec<(f64, u64)> = p
        .ratios
        .iter()
        .map(|&r| (r, server.buffer(data_bytes, r).2))
        .collect();
    common::check_room(p.memory_limit, server.buffer(data_bytes, 1.0).0, &buffers)?;
    // Whether the page cache can answer for the storage: only when the server reads through it.
    let first = server.settings(&p.settings)?;
    let page_cache = (!server.direct(&first))
        .then(|| common::page_cache(p.memory_limit, p.ram, data_bytes, server.name()));

    let system = iogauge_sysinfo::capture(Some(server.data()));
    let device_names = common::device_names(&system);
    let timeline_devices = common::timeline_devices(&system, server.log_dir());
    let mut params: BTreeMap<String, String> = BTreeMap::new();
    params.insert("sysbench.server".into(), server.name().into());
    params.insert("sysbench.script".into(), p.script.name().into());
    params.insert("sysbench.tables".into(), p.tables.to_string());
    params.insert("sysbench.table_size".into(), p.table_size.to_string());
    params.insert("sysbench.threads".into(), p.threads.to_string());
    let header = super::header(&p.output, "db-sysbench", started, system, params);
    let mut rec = Recorder::start(store, &header)?;
    crate::interrupt::measuring();
    let mut results = Vec::new();
    let failure = common::sweep(&p.ratios, &mut rec, &mut results, |i, n, ratio| {
        let mut set = p.settings.clone();
        if let Some(r) = ratio {
            let (k, v, _) = server.buffer(data_bytes, r);
            set.push((k.into(), v));
        }
        server.restart(&set, &p.settings)?;
        let recorded = server.settings(&p.settings)?;
        say!(
            "[{}/{n}] sysbench {} · {} threads · {} {}{}",
            i + 1,
            p.script.name(),
            p.threads,
            server.buffer(data_bytes, 1.0).0,
            server
                .buffer_bytes(&recorded)
                .map_or("?".into(), units::iec),
            ratio.map_or(String::new(), |r| format!(
                " ({} of the data)",
                super::pct(r)
            ))
        );
        let devices = (device_names.as_slice(), timeline_devices.as_slice());
        let Some(m) = measure_once(p, server.as_ref(), devices, &i.to_string())? else {
            return Ok(None);
        };
        let doc = SysbenchDoc {
            server: server.name().into(),
            version: version.clone(),
            script: p.script.name().into(),
            tables: p.tables,
            table_size: p.table_size,
            threads: p.threads,
            data_bytes,
            buffer_ratio: ratio,
            settings: recorded,
            user: p.owner.name.clone(),
            memory_limit_bytes: p.memory_limit,
            log_dir: server.log_dir().map(|d| d.display().to_string()),
            ..SysbenchDoc::default()
        };
        Ok(Some(result_doc(p, server.as_ref(), m, doc)))
    })?;
    let kept = server.kept().then(|| server.work().to_path_buf());
    let cgroup = server.cgroup();
    let cells = p.bin.cells(p.threads);
    let name = server.name();
    drop(server); // stopped and removed before the storage cells need the space
    let mut notes = common::server_notes(kept.as_deref(), cgroup.as_deref(), p.memory_limit);
    if let Some((note, _)) = &page_cache {
        notes.push(note.clone());
    }
    notes.push(format!(
        "the tables: {} (data and indexes, as {name} counts them) in {} tables of {} rows",
        units::iec(data_bytes),
        p.tables,
        p.table_size
    ));
    common::Ending {
        header,
        rec,
        results,
        notes,
        failure,
        cache: page_cache.map(|c| c.1),
        cells,
        target: &p.target,
        ram: p.ram,
        output: &p.output,
        data_bytes,
        storage: p.storage,
    }
    .finish()
}

/// One measurement as a result: TPS as the rate (transactions over sysbench's total time),
/// latencies from its histogram, its seconds as the time series.
fn result_doc(p: &SysbenchPlan, s: &dyn Backend, m: Measured, mut sb: SysbenchDoc) -> ResultDoc {
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
    let direct = s.direct(&sb.settings);
    let buffer = match s.name() {
        "PostgreSQL" => "shared_buffers",
        _ => "buffer pool",
    };
    let name = match sb.buffer_ratio {
        Some(x) => format!(
            "sysbench {} · {} × {} rows · {} threads · {buffer} {} of data",
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
            bs: s.page(),
            bs_mix: None,
            seq_run: None,
            seq_skip: None,
            offset_increment: None,
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
            path: s.data().display().to_string(),
            absolute_path: Some(s.data().display().to_string()),
            device: devices.first().map(|d| d.name.clone()),
            kind: "directory".into(),
            created: true,
            offset_bytes: 0,
            range_bytes: sb.data_bytes,
            logical_block_size: iogauge_sysinfo::logical_block_size_for(s.data()).unwrap_or(512),
            files: 1,
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
        io_path: s.io_path(&sb.settings),
        findings: Vec::new(),
        repeats: Vec::new(),
        devices,
        others: None,
        stats: BTreeMap::new(),
        pg: None,
        sysbench: Some(Box::new(sb)),
        verify: None,
        timeline: Some(Box::new(m.seconds)),
    }
}
