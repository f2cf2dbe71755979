//! The two servers `db sysbench` drives, behind one table of hooks (as fio's engines): MariaDB
//! (`mariadb::Server`) and PostgreSQL (`cluster::Cluster`, the cluster `db pgbench` uses).
//! `load` knows only [`Backend`]: how to start the server with settings, point sysbench at it,
//! size its tables, read its settings and IO counters, sample it for the timeline, find its
//! flushes, and which storage cells stand beside its TPS.

pub mod mariadb;
pub mod postgres;

use super::cluster::{Cluster, Dir};
use crate::model::{FlushDoc, TimelineDoc};
use crate::workload::SyncKind;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to use a kept server: shell command lines, paths quoted.
pub struct Again {
    /// Made before the start: a socket directory outside the kept one, removed with the run.
    pub prepare: Vec<String>,
    pub start: String,
    /// A server that stays in the foreground is started in the background and waited for
    /// until this socket exists.
    pub wait_for: Option<PathBuf>,
    pub connect: String,
    pub stop: String,
}

/// `s` as one shell word.
pub fn sh_word(s: &str) -> String {
    match s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-=,:+@%".contains(c))
    {
        true if !s.is_empty() => s.to_string(),
        _ => format!("'{}'", s.replace('\'', "'\\''")),
    }
}

/// A command line as its account runs it: through runuser when iogauge is root and the server
/// runs as another user (the servers refuse root).
pub fn as_account(owner: &super::owner::Owner, words: &[String]) -> String {
    let line: Vec<String> = words.iter().map(|w| sh_word(w)).collect();
    match owner.ids {
        Some(_) => format!("runuser -u {} -- {}", sh_word(&owner.name), line.join(" ")),
        None => line.join(" "),
    }
}

/// The script a kept server's directory holds to start it again.
pub const START_SCRIPT: &str = "start.sh";

/// `start.sh` of a kept server: starts it as it ran (its account, its private socket, TCP off,
/// the run's settings), waits until it answers, and says how to connect and stop it.
pub fn start_script(server: &str, a: &Again) -> String {
    let mut s = format!(
        "#!/bin/sh\n# The {server} server iogauge kept (--keep), started again as it ran: on its own socket, TCP off.\n# Connect: {}\n# Stop:    {}\nset -e\n",
        a.connect, a.stop
    );
    for line in &a.prepare {
        s.push_str(line);
        s.push('\n');
    }
    match &a.wait_for {
        None => {
            s.push_str(&a.start);
            s.push('\n');
        }
        Some(sock) => {
            let sock = sh_word(&sock.display().to_string());
            s.push_str(&format!(
                "{} >/dev/null 2>&1 &\ni=0\nuntil [ -S {sock} ]; do\n  i=$((i + 1)); [ $i -le 120 ] || {{ echo \"{server} did not start: see its log\" >&2; exit 1; }}\n  sleep 1\ndone\n",
                a.start
            ));
        }
    }
    s.push_str(&format!(
        "echo \"{server} is up. Connect: {}\"\n",
        a.connect.replace('"', "\\\"")
    ));
    s
}

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
    /// For a kept server: the shell commands that start it again as it ran (on its private
    /// socket, TCP off, as its account), connect to `database`, and stop it.
    fn again(&self, database: &str, settings: &[(String, String)]) -> Again;
    /// Why the server is not running, when it is not (killed, crashed): said in place of a
    /// client's "connection refused".
    fn down(&self) -> Option<String>;
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

/// The storage cells beside a database's TPS: its commit (the log's writes, each followed by a
/// sync) and its page reads at the clients' concurrency, measured by iogauge with O_DIRECT.
#[derive(Clone, Debug)]
pub struct Cells {
    /// What the commit cell stands for, e.g. "WAL: sequential 8 KiB writes + fdatasync".
    pub commit_title: String,
    pub commit_bs: u64,
    pub commit_sync: SyncKind,
    /// The server's page: the size of the random reads.
    pub page: u64,
    pub threads: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_with_spaces_or_quotes_stays_one_shell_word() {
        assert_eq!(
            sh_word("/srv/db/iogauge-pg-1/data"),
            "/srv/db/iogauge-pg-1/data"
        );
        assert_eq!(sh_word("--socket=/a/b.sock"), "--socket=/a/b.sock");
        assert_eq!(sh_word("/mnt/my disk"), "'/mnt/my disk'");
        assert_eq!(sh_word("it's"), "'it'\\''s'");
        assert_eq!(sh_word(""), "''");
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf %s {}", sh_word("a 'b' $c"))])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a 'b' $c");
    }
}
