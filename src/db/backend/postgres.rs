//! PostgreSQL behind the [`Backend`] hooks, in the cluster `db pgbench` uses: its storage cells,
//! shared_buffers, and how `db sysbench` starts, sizes and samples it.

use super::super::cluster::{self, Cluster, Dir, PgBin};
use super::super::server;
use super::{as_account, sh_word, Again, Backend, Cells, Endpoint};
use crate::model::{FlushDoc, TimelineDoc};
use crate::workload::SyncKind;
use anyhow::{anyhow, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    fn again(&self, database: &str, _settings: &[(String, String)]) -> Again {
        // The run's own settings, socket and port stay in the data directory's iogauge.conf.
        let cl = &self.cl;
        let tool = |t: &str| cl.bin.dir.join(t).display().to_string();
        let path = |p: &Path| p.display().to_string();
        let sock = path(&cl.socket_dir);
        Again {
            // A socket directory outside the kept one (a path too long for a socket) went
            // with the run: made again, the server's.
            prepare: match cl.socket_dir.starts_with(&cl.work) {
                true => Vec::new(),
                false => vec![
                    format!("mkdir -p {}", sh_word(&sock)),
                    format!("chown {} {}", sh_word(&cl.owner.name), sh_word(&sock)),
                ],
            },
            start: as_account(
                &cl.owner,
                &[
                    tool("pg_ctl"),
                    "start".into(),
                    "-w".into(),
                    "-D".into(),
                    path(&cl.data),
                    "-l".into(),
                    path(&cl.log),
                ],
            ),
            wait_for: None,
            connect: [
                tool("psql"),
                "-h".into(),
                sock,
                "-p".into(),
                cluster::PORT.to_string(),
                "-U".into(),
                cluster::ROLE.into(),
                database.into(),
            ]
            .iter()
            .map(|w| sh_word(w))
            .collect::<Vec<_>>()
            .join(" "),
            stop: as_account(
                &cl.owner,
                &[
                    tool("pg_ctl"),
                    "stop".into(),
                    "-w".into(),
                    "-D".into(),
                    path(&cl.data),
                ],
            ),
        }
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
    fn down(&self) -> Option<String> {
        self.cl.down()
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
        super::super::timeline::checkpoints_in_log(&self.cl.log_since(mark), start_us, end_us)
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
