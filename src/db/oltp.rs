//! The loop every load on a throwaway server runs through ([`Load`] × [`Backend`]): `db
//! sysbench` and `db tpcc`. A throwaway database server in the target directory — MariaDB's
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

use crate::model::{ResultDoc, SysbenchDoc};
use crate::store::{Recorder, Store};
use crate::units;

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

/// What every load on a throwaway server shares, checked before anything is created: the
/// server, its settings and buffer shares, its log's directory, the measurement's length, the
/// storage cells, and where the run goes.
#[derive(Debug)]
pub struct ServerPlan {
    pub target: PathBuf,
    /// The option that gave the settings, named when the server refuses one.
    pub setting_flag: &'static str,
    pub bin: Bin,
    pub owner: cluster::Owner,
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

/// One load on a server: it makes and fills its database, then measures it once per buffer
/// share; [`run`] does the rest (the server, the restarts, the store, the storage cells).
pub trait Load: Sync {
    /// The run's command in the store, e.g. "db-sysbench".
    fn command(&self) -> &'static str;
    /// What is loaded, said before the load, e.g. "sysbench oltp_read_write prepare, 4 tables".
    fn loading(&self) -> String;
    /// Its database made on a fresh server and filled; the names of its tables.
    fn prepare(&self, s: &dyn Backend) -> Result<Vec<String>>;
    /// The database `prepare` made.
    fn database(&self) -> &'static str;
    /// The run's parameters, for the store's `params`.
    fn params(&self) -> BTreeMap<String, String>;
    /// The load for one measurement's line, e.g. "sysbench oltp_read_write · 8 threads".
    fn describe(&self) -> String;
    /// One measurement on the started server; `None` when interrupted.
    fn measure(&self, s: &dyn Backend, at: &At) -> Result<Option<ResultDoc>>;
    /// Connections, for the storage cells' concurrency.
    fn threads(&self) -> u32;
    /// The loaded data's size, which the buffer shares are of.
    fn data_bytes(&self, s: &dyn Backend) -> Result<u64> {
        s.data_bytes(self.database())
    }
    /// The load's own notes on the data.
    fn notes(&self, data_bytes: u64, server: &str) -> Vec<String>;
    /// A measurement that ran but failed a check of the load's own (stored all the same).
    fn failed(&self, _r: &ResultDoc) -> Option<anyhow::Error> {
        None
    }
}

/// One measurement's circumstances, as [`run`] set them up.
pub struct At<'a> {
    pub plan: &'a ServerPlan,
    /// The data directory's stack, and the timeline's devices.
    pub devices: (&'a [String], &'a [String]),
    /// A name for this measurement's files, unique in the run.
    pub tag: String,
    pub ratio: Option<f64>,
    /// The server's settings as it reports them.
    pub settings: BTreeMap<String, String>,
    pub version: &'a str,
    pub data_bytes: u64,
    /// How the page cache was kept out, when the server reads through it.
    pub page_cache: Option<String>,
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
    let (status_, w) = watched;
    let Some(st) = status_? else {
        return Ok(None);
    };
    if !st.success() {
        let mut dirs = vec![s.data(), s.work()];
        dirs.extend(s.log_dir());
        return Err(common::client_failed(
            &format!("sysbench {} run", p.script.name()),
            &stdout,
            &dirs,
        ));
    }
    let report = sysbench::parse(&stdout)?;
    let after = s.counters()?;
    let delta = common::counter_delta(&before, &after);
    let seconds = w.timeline(s, mark, &report.timeseries(), timeline_devices);
    Ok(Some(Measured {
        report,
        status: delta,
        cpu,
        devices: w.windows,
        seconds,
    }))
}

/// Runs sysbench to its end; `None` when interrupted (it is killed then).
fn run_sysbench(
    p: &SysbenchPlan,
    s: &dyn Backend,
    out_file: std::fs::File,
) -> Result<Option<std::process::ExitStatus>> {
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
        text.lines().rev().find_map(sysbench::interval_tps)
    };
    common::wait_client(child, p.server.time, &tps)
}

/// The server of the plan, created (its directories, cgroup and initdb or install-db), not
/// started.
fn create(p: &ServerPlan) -> Result<Box<dyn Backend>> {
    let site = cluster::Site {
        owner: &p.owner,
        target: &p.target,
        log_dir: p.log_dir.as_deref(),
        memory_limit: p.memory_limit,
        keep: p.keep,
    };
    Ok(match &p.bin {
        Bin::Mariadb(bin) => Box::new(backend::Mariadb(Server::create(bin, &site)?)),
        Bin::Postgres(bin) => Box::new(backend::Postgres::create(bin, &site, p.setting_flag)?),
    })
}

/// Runs `load` on the plan's server: the server, the load, one measurement per ratio, the
/// storage cells; stored as it goes. The caller presents the document, then ends as
/// [`super::Outcome::result`] says.
pub fn run(p: &ServerPlan, load: &dyn Load) -> Result<super::Outcome> {
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
    say!("loading: {}", load.loading());
    let loading = Instant::now();
    let tables = load.prepare(server.as_ref())?;
    server.settle(load.database(), &tables)?;
    let data_bytes = load.data_bytes(server.as_ref())?;
    say!(
        "loaded {} in {}",
        units::iec(data_bytes),
        units::duration(loading.elapsed())
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
    let mut params = load.params();
    params.insert(
        format!("{}.server", load.command().trim_start_matches("db-")),
        server.name().into(),
    );
    let header = super::header(&p.output, load.command(), started, system, params);
    let mut rec = Recorder::start(store, &header)?;
    crate::interrupt::measuring();
    let mut results = Vec::new();
    let mut failure = common::sweep(&p.ratios, &mut rec, &mut results, |i, n, ratio| {
        let mut set = p.settings.clone();
        if let Some(r) = ratio {
            let (k, v, _) = server.buffer(data_bytes, r);
            set.push((k.into(), v));
        }
        server.restart(&set, &p.settings)?;
        let recorded = server.settings(&p.settings)?;
        say!(
            "[{}/{n}] {} · {} {}{}",
            i + 1,
            load.describe(),
            server.buffer(data_bytes, 1.0).0,
            server
                .buffer_bytes(&recorded)
                .map_or("?".into(), units::iec),
            ratio.map_or(String::new(), |r| format!(
                " ({} of the data)",
                super::pct(r)
            ))
        );
        let at = At {
            plan: p,
            devices: (device_names.as_slice(), timeline_devices.as_slice()),
            tag: i.to_string(),
            ratio,
            settings: recorded,
            version: &version,
            data_bytes,
            page_cache: page_cache.as_ref().map(|c| c.0.clone()),
        };
        load.measure(server.as_ref(), &at)
    })?;
    if failure.is_none() {
        failure = results.iter().find_map(|r| load.failed(r));
    }
    let kept = server.kept().then(|| server.work().to_path_buf());
    let cgroup = server.cgroup();
    let cells = p.bin.cells(load.threads());
    let name = server.name();
    drop(server); // stopped and removed before the storage cells need the space
    let mut notes = common::server_notes(kept.as_deref(), cgroup.as_deref(), p.memory_limit);
    if let Some((note, _)) = &page_cache {
        notes.push(note.clone());
    }
    notes.extend(load.notes(data_bytes, name));
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
    doc.sysbench = Some(Box::new(sb));
    doc
}
