//! MariaDB's InnoDB behind the [`Backend`] hooks: its storage cells, the settings and status
//! counters recorded with each run, and how `db sysbench` starts, sizes and samples it.

use super::super::cluster::Dir;
use super::super::mariadb::Server;
use super::{Backend, Cells, Endpoint};
use crate::model::{FlushDoc, TimelineDoc};
use crate::workload::SyncKind;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    fn again(&self, database: &str, settings: &[(String, String)]) -> super::Again {
        let s = &self.0;
        let mut start = s.start_words();
        start.extend(settings.iter().map(|(k, v)| format!("--{k}={v}")));
        let sock = format!("--socket={}", s.socket.display());
        let words = |w: &[&str]| {
            w.iter()
                .map(|x| super::sh_word(x))
                .collect::<Vec<_>>()
                .join(" ")
        };
        super::Again {
            prepare: Vec::new(),
            start: super::as_account(&s.owner, &start),
            wait_for: Some(s.socket.clone()),
            connect: words(&[
                &s.bin.client.display().to_string(),
                &sock,
                "-u",
                database,
                database,
            ]),
            stop: words(&[
                &s.bin.admin.display().to_string(),
                &sock,
                "-u",
                "root",
                "shutdown",
            ]),
        }
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
    fn down(&self) -> Option<String> {
        self.0.down()
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
        super::super::process::cpu_of(self.0.pid()?)
    }
    fn log_mark(&self) -> u64 {
        0
    }
    fn flushes(&self, _mark: u64, seconds: &TimelineDoc, _start_us: u64) -> Vec<FlushDoc> {
        // InnoDB logs no checkpoints: its flushing shows as seconds of many pages flushed.
        super::super::timeline::flush_bursts(seconds)
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
