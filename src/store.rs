//! The results store: every run and suite kept in one SQLite file, written as it goes so an
//! interrupted run keeps what it measured, and read back by `list`, `show`, `export`, `delete`,
//! `compare` and `report`.
//!
//! Where: `--db PATH`, else `$IOGAUGE_DB`, else `$XDG_DATA_HOME/iogauge/results.db`, else
//! `~/.local/share/iogauge/results.db`. A missing or empty file becomes a new database; any other
//! file must be an iogauge database (see [`schema`]) or it is refused and left untouched.
//!
//! Layout (schema version 1):
//! - `iogauge_meta(key, value)`: `application` = `iogauge`, `created_by`, `created_at`.
//! - `runs`: one row per run — `id` (what users type), `run_id`, `label`, `started_at`,
//!   `finished_at` (null until [`Recorder::finish`]), `suite`, and as JSON `command`, `system`,
//!   `params`, `notes`, `findings`; `interrupted`; `doc`, the run document without its results.
//! - `results`: one row per result — `(run, idx)`, `name`, `workload` (JSON), `target`, the
//!   headline `iops`, `bw_bytes`, `lat_p50_ns`, `lat_p99_ns`, `interrupted`, and `doc`, the
//!   result document.
//!
//! The `doc` columns hold the exact text serde_json wrote; a run is rebuilt from them (see
//! [`json`]), so `iogauge export` prints what `iogauge run --json` printed, byte for byte. The
//! other columns are copies for queries.
//!
//! Several iogauge processes may write one file at once: WAL mode, a busy timeout, and every
//! write in a `BEGIN IMMEDIATE` transaction, so a writer waits for the lock instead of failing.

pub mod bundle;
mod json;
mod record;
mod schema;

pub use record::Recorder;

use crate::model::{RunDoc, WorkloadDoc};
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// SQLite's busy handler: wait in short steps up to BUSY_TIMEOUT, giving up at an interrupt.
fn busy(attempt: i32) -> bool {
    const STEP: std::time::Duration = std::time::Duration::from_millis(20);
    if crate::interrupt::requested().is_some()
        || STEP * attempt.max(0) as u32 >= schema::BUSY_TIMEOUT
    {
        return false;
    }
    std::thread::sleep(STEP);
    true
}

/// An open, checked, up-to-date results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A run read back from the store, with the id `list` shows.
#[derive(Clone, Debug)]
pub struct Stored {
    pub id: i64,
    pub doc: RunDoc,
}

/// What `iogauge list` shows of a run, read from the query columns only.
#[derive(Clone, Debug)]
pub struct RunRow {
    pub id: i64,
    pub run_id: String,
    pub label: Option<String>,
    pub started_at: String,
    /// Null until the run finished; with `interrupted`, tells a run cut short from one that
    /// ended normally.
    pub finished_at: Option<String>,
    pub suite: Option<String>,
    pub interrupted: bool,
    pub params: BTreeMap<String, String>,
    /// The machine it ran on (the system's hostname): runs imported from other machines'
    /// databases sit beside local ones.
    pub host: Option<String>,
    pub results: Vec<ResultRow>,
}

/// The headline numbers of one stored result.
#[derive(Clone, Debug)]
pub struct ResultRow {
    pub name: Option<String>,
    /// `None` if the stored workload no longer reads as this version's [`WorkloadDoc`].
    pub workload: Option<WorkloadDoc>,
    pub target: String,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    pub interrupted: bool,
}

/// The database file `db` names (--db or IOGAUGE_DB), or the XDG default.
pub fn db_path(db: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = db {
        if p.as_os_str().is_empty() {
            return Err(crate::error::usage(
                "--db (or IOGAUGE_DB) is empty; give a file path",
            ));
        }
        // The results database is never a device, a FIFO or under /dev: SQLite would write its
        // header over a device's first blocks (a file system's superblock among them).
        crate::target::gate::output_file(
            "--db (or IOGAUGE_DB)",
            p,
            "the results database is a file: give --db PATH on a file system",
        )?;
        return Ok(p.to_path_buf());
    }
    // The XDG base-directory spec says to ignore a relative XDG_DATA_HOME.
    let xdg = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    match (xdg, home) {
        (Some(d), _) => Ok(d.join("iogauge").join("results.db")),
        (None, Some(h)) => Ok(h.join(".local/share/iogauge/results.db")),
        (None, None) => Err(crate::error::usage(
            "cannot place the results database: neither XDG_DATA_HOME nor HOME is set; give --db PATH or IOGAUGE_DB",
        )),
    }
}

/// Loads several runs in the order given, each with its id (for `compare` and `report`).
pub fn load_runs(db: Option<&Path>, selectors: &[String]) -> Result<Vec<Stored>> {
    let store = Store::open_existing(db)?;
    let mut ids = Vec::new();
    for s in selectors {
        match s.trim().strip_prefix("sweep:") {
            Some(sweep) => ids.extend(store.sweep(sweep)?),
            None => ids.push(store.resolve(s)?),
        }
    }
    ids.into_iter()
        .map(|id| {
            Ok(Stored {
                id,
                doc: store.load(id)?,
            })
        })
        .collect()
}

impl Store {
    /// Opens the database for writing, creating and initialising it when the file is missing or
    /// empty, and migrating an older schema.
    pub fn open(db: Option<&Path>) -> Result<Store> {
        let store = Store::open_path(&db_path(db)?)?;
        store.check_writable()?;
        Ok(store)
    }

    /// For a command that will store a run, before anything is measured: a real write, rolled
    /// back (SQLite opens a file it may not write — chattr +i, a read-only bind mount —
    /// read-only without a word, and the lock taken on opening needs no write), and
    /// quick_check, which reads every page, so a file damaged mid-way is told now and not when
    /// the first result is inserted after the fill and the measuring.
    fn check_writable(&self) -> Result<()> {
        let path = self.path.display();
        if let Some(why) = std::fs::File::open(&self.path)
            .ok()
            .and_then(|f| schema::short_of_space(&f))
        {
            return Err(crate::error::usage(format!(
                "the results database {path} {why}; free some space there, or give --db PATH for another file, or --no-store to keep nothing"
            )));
        }
        let wrote = self
            .conn
            .execute_batch("BEGIN IMMEDIATE; CREATE TABLE iogauge_write_check (x); ROLLBACK;");
        let readonly = self.conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true);
        let why = match (wrote, readonly) {
            (Err(e), _) => Some(e.to_string()),
            (Ok(()), true) => Some("SQLite could open it only read-only".to_string()),
            (Ok(()), false) => None,
        };
        if let Some(why) = why {
            let _ = self.conn.execute_batch("ROLLBACK;");
            if let Some(sig) = crate::interrupt::requested() {
                return Err(crate::error::Interrupted(sig).into());
            }
            return Err(crate::error::usage(format!(
                "the results database {path} cannot be written ({why}); make it writable (is it immutable? see lsattr), or give --db PATH for another file, or --no-store to keep nothing"
            )));
        }
        let verdict: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .unwrap_or_else(|e| e.to_string());
        if verdict != "ok" {
            return Err(crate::error::usage(format!(
                "the results database {path} is damaged (SQLite's quick_check: {}); nothing was measured. Keep a copy and give --db PATH for another file, or --no-store to keep nothing",
                crate::units::quoted(&verdict, 120)
            )));
        }
        Ok(())
    }

    /// Opens an existing database; a missing file is an error that says no run was stored there.
    pub fn open_existing(db: Option<&Path>) -> Result<Store> {
        let path = db_path(db)?;
        match std::fs::metadata(&path) {
            Ok(_) => Store::open_path(&path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(crate::error::usage(format!(
                "no runs are stored in {} (the file does not exist); `iogauge run` stores runs there, --db picks another file",
                path.display()
            ))),
            Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display()))),
        }
    }

    /// Opens `path` (see [`Store::open`]).
    pub fn open_path(path: &Path) -> Result<Store> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(crate::error::usage(format!(
                    "{} is a directory; --db names the database file, e.g. {}",
                    path.display(),
                    path.join("results.db").display()
                )))
            }
            Ok(m) if m.len() > 0 => schema::check_existing(path)?,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
                // SQLite would say only "unable to open database file", as if the file were the
                // problem: a directory that may not be written is named as such.
                let cannot = |dir: &Path, e: std::io::Error| match e.raw_os_error() {
                    Some(libc::EROFS) => Some(crate::error::usage(format!(
                        "cannot create the results database {}: {} is on a read-only file system; give --db PATH on a writable one, or --no-store to keep nothing",
                        path.display(),
                        dir.display()
                    ))),
                    Some(libc::EACCES) => Some(crate::target::not_writable(
                        dir,
                        "the results database",
                        "give --db PATH in a directory you may write to, or --no-store to keep nothing",
                    )),
                    _ => None,
                };
                if let Some(d) = dir.filter(|d| d.is_dir()) {
                    if let Some(err) = std::fs::File::open(d)
                        .and_then(|f| iogauge_engine::sys::may_create_in(&f))
                        .err()
                        .and_then(|e| cannot(d, e))
                    {
                        return Err(err);
                    }
                }
                if let Some(dir) = dir {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        crate::error::usage(format!(
                            "cannot create the directory {} for the results database ({e}); give --db PATH for another file, or --no-store to keep nothing",
                            dir.display()
                        ))
                    })?;
                }
            }
            Err(e) => {
                return Err(crate::error::usage(format!(
                    "cannot reach the results database {} ({e}); give --db PATH for another file, or --no-store to keep nothing",
                    path.display()
                )))
            }
        }
        let mut conn = Connection::open(path)
            .with_context(|| format!("cannot open the results database {}", path.display()))?;
        conn.busy_timeout(schema::BUSY_TIMEOUT)?;
        // A database another process holds is waited for up to BUSY_TIMEOUT, but a Ctrl-C
        // ends the wait at once (the busy timeout alone would not hear it).
        conn.busy_handler(Some(busy))?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        schema::prepare(&mut conn, path)
            .with_context(|| format!("results database {}", path.display()))?;
        // Before anything is measured: a database that is locked or cannot be written is told
        // now, not after the fill and the first cell.
        conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")
            .map_err(|e| match crate::interrupt::requested() {
                Some(sig) => crate::error::Interrupted(sig).into(),
                None => anyhow::anyhow!(
                    "the results database {} cannot be written ({e}); is another program holding it? give --db PATH for another file, or --no-store to keep nothing",
                    path.display()
                ),
            })?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The newest cache `iogauge probe cache` found in front of `device`: (run id, bytes).
    pub fn known_cache(&self, device: &str) -> Option<(i64, f64)> {
        let rows = self.runs(1000).ok()?;
        rows.iter()
            .filter(|r| r.suite.as_deref() == Some("probe-cache") && !r.interrupted)
            .find_map(|r| {
                let doc = self.load(r.id).ok()?;
                let top = doc.system.target.as_ref()?.devices.first()?.name.clone();
                if top != device {
                    return None;
                }
                let bytes = doc.findings.iter().find_map(|f| {
                    (f.kind == iogauge_analyze::Kind::Cache && f.result.is_none())
                        .then(|| f.evidence.get("cache_bytes").copied())
                        .flatten()
                })?;
                Some((r.id, bytes))
            })
    }

    /// The id of the run `selector` names: `last`, an id, a run id, or a label (its newest run).
    pub fn resolve(&self, selector: &str) -> Result<i64> {
        let sel = selector.trim();
        let found: Option<i64> = if sel == "last" {
            self.conn
                .query_row("SELECT max(id) FROM runs", [], |r| r.get(0))?
        } else {
            let by_id = match sel.parse::<i64>() {
                Ok(n) => self
                    .conn
                    .query_row("SELECT id FROM runs WHERE id = ?1", [n], |r| r.get(0))
                    .optional()?,
                Err(_) => None,
            };
            match by_id {
                Some(id) => Some(id),
                None => self.conn.query_row(
                    "SELECT coalesce((SELECT max(id) FROM runs WHERE run_id = ?1), (SELECT max(id) FROM runs WHERE label = ?1))",
                    [sel],
                    |r| r.get(0),
                )?,
            }
        };
        found.ok_or_else(|| {
            crate::error::usage(if sel == "last" {
                format!("no runs are stored in {} yet", self.path.display())
            } else {
                format!(
                    "no run with the id, run id or label '{sel}' in {}; `iogauge list` shows the stored runs",
                    self.path.display()
                )
            })
        })
    }

    /// The runs of a sweep (`iogauge sweep`), in the order they ran: its first setting (the
    /// knobs as found) is the baseline.
    pub fn sweep(&self, id: &str) -> Result<Vec<i64>> {
        let mut stmt = self.conn.prepare(
            "SELECT id FROM runs WHERE json_extract(params, '$.sweep') = ?1 ORDER BY id",
        )?;
        let ids = stmt
            .query_map([id], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        if ids.is_empty() {
            return Err(crate::error::usage(format!(
                "no sweep '{id}' in {}; `iogauge list` shows each run's sweep=…",
                self.path.display()
            )));
        }
        Ok(ids)
    }

    /// The run's document as compact JSON, exactly as it was serialized.
    pub fn load_json(&self, id: i64) -> Result<String> {
        let header: String = self
            .conn
            .query_row("SELECT doc FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or_else(|| {
                crate::error::usage(format!("no run {id} in {}", self.path.display()))
            })?;
        let mut stmt = self
            .conn
            .prepare("SELECT doc FROM results WHERE run = ?1 ORDER BY idx")?;
        let results = stmt
            .query_map([id], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        json::splice_results(&header, &results).with_context(|| {
            format!(
                "run {id} in {} has a damaged document (no results member)",
                self.path.display()
            )
        })
    }

    /// The run's document as pretty JSON, byte-identical to what `iogauge run --json` printed.
    pub fn load_json_pretty(&self, id: i64) -> Result<String> {
        Ok(json::pretty(&self.load_json(id)?))
    }

    pub fn load(&self, id: i64) -> Result<RunDoc> {
        serde_json::from_str(&self.load_json(id)?).with_context(|| {
            format!(
                "run {id} in {} does not read as a run document",
                self.path.display()
            )
        })
    }

    /// Whether a run of this run id (the document's, not the database's id) is stored here.
    pub fn has_run_id(&self, run_id: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM runs WHERE run_id = ?1", [run_id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Stores a whole run document made elsewhere (`iogauge import`); its id here.
    pub fn import(&mut self, doc: &RunDoc) -> Result<i64> {
        let id = self.insert_run(doc, None)?;
        for (i, r) in doc.results.iter().enumerate() {
            self.insert_result(id, i, r)?;
        }
        self.finish_run(id, doc)?;
        Ok(id)
    }

    /// The newest `limit` runs, newest first.
    pub fn runs(&self, limit: u32) -> Result<Vec<RunRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, run_id, label, started_at, finished_at, suite, interrupted, params,
                    json_extract(system, '$.hostname')
             FROM runs ORDER BY id DESC LIMIT ?1",
        )?;
        let mut runs = stmt
            .query_map([limit], |r| {
                let params: String = r.get(7)?;
                Ok(RunRow {
                    id: r.get(0)?,
                    run_id: r.get(1)?,
                    label: r.get(2)?,
                    started_at: r.get(3)?,
                    finished_at: r.get(4)?,
                    suite: r.get(5)?,
                    interrupted: r.get(6)?,
                    params: serde_json::from_str(&params).unwrap_or_default(),
                    host: r.get(8)?,
                    results: Vec::new(),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT name, workload, target, iops, bw_bytes, lat_p50_ns, lat_p99_ns, interrupted
             FROM results WHERE run = ?1 ORDER BY idx",
        )?;
        for run in &mut runs {
            run.results = stmt
                .query_map([run.id], |r| {
                    let workload: String = r.get(1)?;
                    Ok(ResultRow {
                        name: r.get(0)?,
                        workload: serde_json::from_str(&workload).ok(),
                        target: r.get(2)?,
                        iops: r.get(3)?,
                        bw_bytes: r.get(4)?,
                        lat_p50_ns: r.get::<_, i64>(5)?.max(0) as u64,
                        lat_p99_ns: r.get::<_, i64>(6)?.max(0) as u64,
                        interrupted: r.get(7)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
        }
        Ok(runs)
    }

    /// Deletes a run and its results.
    pub fn delete(&mut self, id: i64) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("DELETE FROM results WHERE run = ?1", [id])?;
        tx.execute("DELETE FROM verify_maps WHERE run = ?1", [id])?;
        let n = tx.execute("DELETE FROM runs WHERE id = ?1", [id])?;
        tx.commit()?;
        if n == 0 {
            return Err(crate::error::usage(format!(
                "no run {id} in {}",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// The generations kept for a `--verify` run: the block size and one value per block.
    pub fn verify_map(&self, id: i64) -> Result<Option<(u64, Vec<u64>)>> {
        let row: Option<(i64, Vec<u8>)> = self
            .conn
            .query_row(
                "SELECT block, map FROM verify_maps WHERE run = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        Ok(row.map(|(block, bytes)| {
            let map = bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect();
            (block as u64, map)
        }))
    }
}

#[cfg(test)]
mod tests;
