//! The two servers `db sysbench` drives, behind one table of hooks (as fio's engines): MariaDB
//! (`mariadb::Server`) and PostgreSQL (`cluster::Cluster`, the cluster `db pgbench` uses).
//! `load` knows only [`Backend`]: how to start the server with settings, point sysbench at it,
//! size its tables, read its settings and IO counters, sample it for the timeline, find its
//! flushes, and which storage cells stand beside its TPS.

use super::cluster::{self, Cluster, Dir, PgBin};
use super::common::{self, Cells};
use super::mariadb::Server;
use super::server;
use crate::model::{FlushDoc, TimelineDoc};
use crate::workload::SyncKind;
use anyhow::{anyhow, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One server under sysbench.
pub trait Backend: Sync {
    /// "MariaDB" or "PostgreSQL".
    fn name(&self) -> &'static str;
    /// The directory of iogauge's own for the server.
    fn work(&self) -> &Path;
    /// That directory held open: the server's account owns it, so iogauge's files there are
    /// made and removed from this handle.
    fn work_dir(&self) -> Result<&Dir>;
    /// Its data directory (on the storage under test).
    fn data(&self) -> &Path;
    /// Its log's own directory (--wal-dir, --log-dir), when not in the data directory.
    fn log_dir(&self) -> Option<&Path>;
    fn cgroup(&self) -> Option<PathBuf>;
    fn kept(&self) -> bool;
    /// (Re)starts the server with `settings`; `asked` are the user's (a refusal names them).
    fn restart(&mut self, settings: &[(String, String)], asked: &[(String, String)]) -> Result<()>;
    fn version(&self) -> Result<String>;
    /// An empty database `name`, and a user of the same name who may connect to it.
    fn create_database(&self, name: &str) -> Result<()>;
    /// Where a client of iogauge's own connects: the server's socket and the database's user.
    fn endpoint(&self, database: &str) -> Endpoint;
    /// The loaded `tables` of `database` brought to a state of their own, not one a
    /// background task reaches at some moment: otherwise whether its first pass (PostgreSQL's
    /// autovacuum after the load: hint bits, the visibility map, statistics) lands inside the
    /// measurement depends on timing, and moves TPS by 10–30%.
    fn settle(&self, database: &str, tables: &[String]) -> Result<()>;
    /// sysbench with `script`, its driver pointed at this server's socket and `sbtest`.
    fn sysbench(&self, sysbench: &Path, script: &str) -> Command;
    /// The size of the tables of `database`, data and indexes.
    fn data_bytes(&self, database: &str) -> Result<u64>;
    /// The space `database` holds on the storage now, for its growth over a measurement:
    /// what the server has allocated for it, not an estimate refreshed at moments of its own.
    fn stored_bytes(&self, database: &str) -> Result<u64> {
        self.data_bytes(database)
    }
    /// The buffer setting for `share` of `data` bytes: its name, its value, its bytes.
    fn buffer(&self, data: u64, share: f64) -> (&'static str, String, u64);
    /// The settings every run records, and the user's.
    fn settings(&self, asked: &[(String, String)]) -> Result<BTreeMap<String, String>>;
    /// The buffer's size in bytes from recorded settings.
    fn buffer_bytes(&self, settings: &BTreeMap<String, String>) -> Option<u64>;
    /// The server's IO counters now, flat (`name` or `view.name`).
    fn counters(&self) -> Result<BTreeMap<String, f64>>;
    /// The server's flush counters for one timeline sample; empty when it could not be asked.
    fn probe(&self) -> BTreeMap<String, f64>;
    /// Where [`Backend::probe`] reads from.
    fn probe_source(&self) -> &'static str;
    /// CPU seconds (user, system) the server has used so far.
    fn cpu(&self) -> Option<(f64, f64)>;
    /// A mark in the server's log, before a measurement.
    fn log_mark(&self) -> u64;
    /// The server's flushes during one measurement, on the timeline of `seconds`.
    fn flushes(&self, mark: u64, seconds: &TimelineDoc, start_us: u64) -> Vec<FlushDoc>;
    /// How its data reaches the storage, e.g. "mariadb (InnoDB, O_DIRECT)".
    fn io_path(&self, settings: &BTreeMap<String, String>) -> String;
    /// Whether it reads its data around the page cache (O_DIRECT).
    fn direct(&self, settings: &BTreeMap<String, String>) -> bool;
    /// Its page, the size of a storage cell's reads.
    fn page(&self) -> u64;
    /// The PostgreSQL cluster, for a load that drives it with PostgreSQL's own tools
    /// (pgbench); `None` for another server.
    fn cluster(&self) -> Option<&Cluster> {
        None
    }
}

/// Where a client connects to a throwaway server: its private Unix socket, as the user of
/// the load's database (no password: the socket is the server's only door, and iogauge's).
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// PostgreSQL: the socket's directory and port, the role, the database.
    Postgres {
        socket_dir: PathBuf,
        port: u16,
        user: String,
        database: String,
    },
    /// MariaDB: the socket, the user, the database.
    Mariadb {
        socket: PathBuf,
        user: String,
        database: String,
    },
}

/// InnoDB's storage cells: its commit as the issue has it (16 KiB page writes, each followed
/// by an fsync) and 16 KiB page reads at the clients' concurrency.
pub fn mariadb_cells(threads: u32) -> Cells {
    Cells {
        commit_title: "InnoDB commit: sequential 16 KiB page writes + fsync in a 16 MiB file"
            .into(),
        commit_bs: 16384,
        commit_sync: SyncKind::Fsync,
        page: 16384,
        threads,
    }
}

/// PostgreSQL's storage cells, the same for pgbench and sysbench: the WAL's 8 KiB writes, each
/// followed by an fdatasync (wal_sync_method's default on Linux), and 8 KiB page reads.
pub fn postgres_cells(threads: u32) -> Cells {
    Cells {
        commit_title: "WAL: sequential 8 KiB writes + fdatasync in a 16 MiB segment".into(),
        commit_bs: 8192,
        commit_sync: SyncKind::Fdatasync,
        page: 8192,
        threads,
    }
}

/// MariaDB's settings recorded with every run: how InnoDB caches, logs and syncs.
const MY_RECORDED: [&str; 13] = [
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_log_group_home_dir",
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
const MY_COUNTERS: [&str; 17] = [
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
const MY_TIMELINE: [&str; 5] = [
    "Innodb_checkpoint_age",
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_os_log_written",
    "Innodb_data_fsyncs",
];
/// The smallest buffer pool iogauge asks for; InnoDB rounds small pools up anyway.
const MIN_BUFFER_POOL: u64 = 8 << 20;

/// MariaDB's InnoDB.
pub struct Mariadb(pub Server);

impl Mariadb {
    /// The server's status variables `names` as numbers.
    fn status(&self, names: &[&str]) -> Result<BTreeMap<String, f64>> {
        let names: Vec<String> = names.iter().map(|c| format!("'{c}'")).collect();
        Ok(self
            .0
            .pairs(&format!(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
                names.join(",")
            ))?
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
            .collect())
    }
}

impl Backend for Mariadb {
    fn name(&self) -> &'static str {
        "MariaDB"
    }
    fn work(&self) -> &Path {
        &self.0.work
    }
    fn work_dir(&self) -> Result<&Dir> {
        self.0.work_dir()
    }
    fn data(&self) -> &Path {
        &self.0.data
    }
    fn log_dir(&self) -> Option<&Path> {
        self.0.redo.as_deref()
    }
    fn cgroup(&self) -> Option<PathBuf> {
        self.0.cgroup()
    }
    fn kept(&self) -> bool {
        self.0.kept()
    }
    fn restart(&mut self, settings: &[(String, String)], asked: &[(String, String)]) -> Result<()> {
        // A restart for every measurement: the settings apply, and the pool starts cold.
        self.0.stop()?;
        self.0.start(settings, asked)
    }
    fn version(&self) -> Result<String> {
        self.0.query("SELECT VERSION()")
    }
    fn create_database(&self, name: &str) -> Result<()> {
        self.0.query(&format!(
            "CREATE DATABASE {name}; CREATE USER {name}@localhost; GRANT ALL ON {name}.* TO {name}@localhost"
        ))?;
        Ok(())
    }
    fn endpoint(&self, database: &str) -> Endpoint {
        Endpoint::Mariadb {
            socket: self.0.socket.clone(),
            user: database.into(),
            database: database.into(),
        }
    }
    fn settle(&self, database: &str, tables: &[String]) -> Result<()> {
        // InnoDB's statistics, which its background thread would otherwise recompute at a
        // moment of its own after the load.
        let names: Vec<String> = tables.iter().map(|t| format!("{database}.{t}")).collect();
        self.0
            .query(&format!("ANALYZE TABLE {}", names.join(", ")))?;
        Ok(())
    }
    fn sysbench(&self, sysbench: &Path, script: &str) -> Command {
        self.0.sysbench(sysbench, script)
    }
    fn data_bytes(&self, database: &str) -> Result<u64> {
        Ok(self
            .0
            .query(&format!("SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = '{database}'"))?
            .trim()
            .parse()
            .unwrap_or(0))
    }
    fn stored_bytes(&self, database: &str) -> Result<u64> {
        // information_schema's data_length is InnoDB's statistics, sampled and refreshed when
        // it chooses (it went down by 16 KiB over a window of New-Orders); the tablespace files
        // of the database's directory only grow while rows are added.
        let dir = self.0.data.join(database);
        let mut bytes = 0;
        for e in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let e = e?;
            if e.path().extension().is_some_and(|x| x == "ibd") {
                bytes += e.metadata()?.len();
            }
        }
        Ok(bytes)
    }
    fn buffer(&self, data: u64, share: f64) -> (&'static str, String, u64) {
        // InnoDB sizes its pool in whole MiB (chunks): asked so, it uses what was asked.
        let b = ((data as f64 * share) as u64 >> 20 << 20).max(MIN_BUFFER_POOL);
        ("innodb_buffer_pool_size", b.to_string(), b)
    }
    fn settings(&self, asked: &[(String, String)]) -> Result<BTreeMap<String, String>> {
        let names: Vec<String> = MY_RECORDED
            .iter()
            .map(|k| k.to_string())
            .chain(asked.iter().map(|(k, _)| k.replace('-', "_")))
            .map(|k| format!("'{}'", k.replace('\'', "''")))
            .collect();
        Ok(self
            .0
            .pairs(&format!(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
                names.join(",")
            ))?
            .into_iter()
            .collect())
    }
    fn buffer_bytes(&self, settings: &BTreeMap<String, String>) -> Option<u64> {
        settings.get("innodb_buffer_pool_size")?.parse().ok()
    }
    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        self.status(&MY_COUNTERS)
    }
    fn probe(&self) -> BTreeMap<String, f64> {
        self.status(&MY_TIMELINE).unwrap_or_default()
    }
    fn probe_source(&self) -> &'static str {
        "SHOW GLOBAL STATUS"
    }
    fn cpu(&self) -> Option<(f64, f64)> {
        common::cpu_of(self.0.pid()?)
    }
    fn log_mark(&self) -> u64 {
        0
    }
    fn flushes(&self, _mark: u64, seconds: &TimelineDoc, _start_us: u64) -> Vec<FlushDoc> {
        // InnoDB logs no checkpoints: its flushing shows as seconds of many pages flushed.
        super::timeline::flush_bursts(seconds)
    }
    fn io_path(&self, settings: &BTreeMap<String, String>) -> String {
        format!(
            "mariadb (InnoDB, {})",
            settings
                .get("innodb_flush_method")
                .map_or("?", String::as_str)
        )
    }
    fn direct(&self, settings: &BTreeMap<String, String>) -> bool {
        settings
            .get("innodb_flush_method")
            .is_some_and(|f| f.starts_with("O_DIRECT"))
    }
    fn page(&self) -> u64 {
        16384
    }
}

/// The smallest shared_buffers PostgreSQL accepts: 16 buffers of 8 KiB.
const MIN_SHARED_BUFFERS: u64 = 128 << 10;

/// shared_buffers for `share` of `data` bytes, in whole 8 KiB buffers, at least PostgreSQL's
/// least; for pgbench and sysbench alike.
pub fn shared_buffers(data: u64, share: f64) -> u64 {
    ((data as f64 * share) as u64 / 8192 * 8192).max(MIN_SHARED_BUFFERS)
}

/// PostgreSQL, in the cluster `db pgbench` uses.
pub struct Postgres {
    pub cl: Cluster,
    /// server_version_num, once it has started.
    version_num: u32,
    running: bool,
}

impl Postgres {
    /// A new cluster (initdb), not started; a refused setting is named as `flag` gave it.
    pub fn create(bin: &PgBin, site: &cluster::Site, flag: &'static str) -> Result<Postgres> {
        let mut cl = Cluster::create(bin, site)?;
        cl.setting_flag = flag;
        Ok(Postgres {
            cl,
            version_num: 0,
            running: false,
        })
    }
}

impl Backend for Postgres {
    fn name(&self) -> &'static str {
        "PostgreSQL"
    }
    fn work(&self) -> &Path {
        &self.cl.work
    }
    fn work_dir(&self) -> Result<&Dir> {
        self.cl.work_dir()
    }
    fn data(&self) -> &Path {
        &self.cl.data
    }
    fn log_dir(&self) -> Option<&Path> {
        self.cl.wal.as_deref()
    }
    fn cgroup(&self) -> Option<PathBuf> {
        self.cl.cgroup().map(Path::to_path_buf)
    }
    fn kept(&self) -> bool {
        self.cl.kept()
    }
    fn restart(&mut self, settings: &[(String, String)], asked: &[(String, String)]) -> Result<()> {
        if self.running {
            self.cl.stop()?;
            self.running = false;
        }
        self.cl.configure(settings)?;
        self.cl.start(asked)?;
        self.running = true;
        self.version_num = server::version(&self.cl)?.1;
        Ok(())
    }
    fn version(&self) -> Result<String> {
        Ok(server::version(&self.cl)?.0)
    }
    fn create_database(&self, name: &str) -> Result<()> {
        // Clients connect as the cluster's superuser (trust on a private socket).
        self.cl.query(&format!("CREATE DATABASE {name}"))?;
        Ok(())
    }
    fn endpoint(&self, database: &str) -> Endpoint {
        Endpoint::Postgres {
            socket_dir: self.cl.socket_dir.clone(),
            port: cluster::PORT,
            user: cluster::ROLE.into(),
            database: database.into(),
        }
    }
    fn settle(&self, database: &str, _tables: &[String]) -> Result<()> {
        // What pgbench -i does after its load, and what autovacuum would do at some moment.
        self.cl.query_in(database, "VACUUM ANALYZE")?;
        Ok(())
    }
    fn sysbench(&self, sysbench: &Path, script: &str) -> Command {
        let mut c = self.cl.libpq_client(sysbench);
        c.arg(script)
            .arg("--db-driver=pgsql")
            .arg(format!("--pgsql-host={}", self.cl.socket_dir.display()))
            .arg(format!("--pgsql-port={}", cluster::PORT))
            .arg(format!("--pgsql-user={}", cluster::ROLE))
            .arg("--pgsql-db=sbtest");
        c
    }
    fn data_bytes(&self, database: &str) -> Result<u64> {
        let v = self.cl.query_in(
            database,
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind = 'r' AND n.nspname = 'public'",
        )?;
        v.trim()
            .parse()
            .map_err(|_| anyhow!("the size of the {database} tables: psql said '{v}'"))
    }
    fn buffer(&self, data: u64, share: f64) -> (&'static str, String, u64) {
        let b = shared_buffers(data, share);
        ("shared_buffers", format!("{}kB", b / 1024), b)
    }
    fn settings(&self, asked: &[(String, String)]) -> Result<BTreeMap<String, String>> {
        let extra: Vec<String> = asked.iter().map(|(k, _)| k.clone()).collect();
        server::settings(&self.cl, &extra)
    }
    fn buffer_bytes(&self, settings: &BTreeMap<String, String>) -> Option<u64> {
        crate::units::parse_size(settings.get("shared_buffers")?).ok()
    }
    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        Ok(server::snapshot(&self.cl, self.version_num)?
            .into_iter()
            .flat_map(|(view, m)| m.into_iter().map(move |(k, v)| (format!("{view}.{k}"), v)))
            .collect())
    }
    fn probe(&self) -> BTreeMap<String, f64> {
        server::flush_counters(&self.cl, self.version_num)
    }
    fn probe_source(&self) -> &'static str {
        server::flush_source(self.version_num)
    }
    fn cpu(&self) -> Option<(f64, f64)> {
        server::cpu(&self.cl)
    }
    fn log_mark(&self) -> u64 {
        self.cl.log_len()
    }
    fn flushes(&self, mark: u64, seconds: &TimelineDoc, start_us: u64) -> Vec<FlushDoc> {
        let end_us = start_us + (seconds.rows.len() as f64 * seconds.step_s * 1e6) as u64;
        super::timeline::checkpoints_in_log(&self.cl.log_since(mark), start_us, end_us)
    }
    fn io_path(&self, _settings: &BTreeMap<String, String>) -> String {
        "postgresql (buffered)".into()
    }
    fn direct(&self, _settings: &BTreeMap<String, String>) -> bool {
        false
    }
    fn page(&self) -> u64 {
        8192
    }
    fn cluster(&self) -> Option<&Cluster> {
        Some(&self.cl)
    }
}
