//! Writing runs: a run recorded as it goes ([`Recorder`]), each result in its own transaction
//! so an interrupted run keeps what it measured, and the final document replacing it all at
//! the end; also a whole run made elsewhere (`Store::import`).

use super::Store;
use crate::model::{ResultDoc, RunDoc};
use anyhow::Result;
use rusqlite::{params, TransactionBehavior};
use std::time::SystemTime;

impl Store {
    pub(super) fn save_verify_map(&mut self, id: i64, block: u64, map: &[u64]) -> Result<()> {
        let bytes: Vec<u8> = map.iter().flat_map(|g| g.to_le_bytes()).collect();
        self.conn.execute(
            "INSERT OR REPLACE INTO verify_maps (run, block, map) VALUES (?1, ?2, ?3)",
            rusqlite::params![id, block as i64, bytes],
        )?;
        Ok(())
    }

    /// Writes the run row, marked interrupted until [`Store::finish_run`] says otherwise, and
    /// its first result with it when given, in one transaction: a run killed between two would
    /// be an empty run in the store (`suite quick (0 results)`, a CI run's kill at a random
    /// moment).
    pub(super) fn insert_run(&mut self, header: &RunDoc, first: Option<&ResultDoc>) -> Result<i64> {
        let mut doc = header_of(header);
        doc.interrupted = true;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO runs (run_id, label, started_at, suite, command, system, params, interrupted, notes, findings, doc)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?9, ?10)",
            params![
                doc.run_id,
                doc.label,
                doc.started_at,
                doc.suite,
                serde_json::to_string(&doc.command)?,
                serde_json::to_string(&doc.system)?,
                serde_json::to_string(&doc.params)?,
                serde_json::to_string(&doc.notes)?,
                serde_json::to_string(&doc.findings)?,
                serde_json::to_string(&doc)?,
            ],
        )?;
        let id = tx.last_insert_rowid();
        if let Some(r) = first {
            put_result(&tx, id, 0, r)?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Writes one result of run `run` at position `idx`, in its own transaction.
    pub(super) fn insert_result(&mut self, run: i64, idx: usize, r: &ResultDoc) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        put_result(&tx, run, idx, r)?;
        tx.commit()?;
        Ok(())
    }

    /// Replaces the run's row and results with the final document, in one transaction.
    pub(super) fn finish_run(&mut self, run: i64, doc: &RunDoc) -> Result<()> {
        let header = header_of(doc);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "UPDATE runs SET run_id = ?2, label = ?3, started_at = ?4, finished_at = ?5, suite = ?6, command = ?7,
                 system = ?8, params = ?9, interrupted = ?10, notes = ?11, findings = ?12, doc = ?13
             WHERE id = ?1",
            params![
                run,
                header.run_id,
                header.label,
                header.started_at,
                humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
                header.suite,
                serde_json::to_string(&header.command)?,
                serde_json::to_string(&header.system)?,
                serde_json::to_string(&header.params)?,
                header.interrupted,
                serde_json::to_string(&header.notes)?,
                serde_json::to_string(&header.findings)?,
                serde_json::to_string(&header)?,
            ],
        )?;
        if n == 0 {
            return Err(anyhow::anyhow!(
                "run {run} was deleted from {} while it ran; its final results were not stored",
                self.path.display()
            ));
        }
        tx.execute("DELETE FROM results WHERE run = ?1", [run])?;
        for (i, r) in doc.results.iter().enumerate() {
            put_result(&tx, run, i, r)?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// The run document without its results, as the `runs.doc` column keeps it.
fn header_of(doc: &RunDoc) -> RunDoc {
    // Spelled with `..` so fields added to RunDoc later are kept without a change here.
    RunDoc {
        results: Vec::new(),
        ..doc.clone()
    }
}

fn put_result(tx: &rusqlite::Transaction<'_>, run: i64, idx: usize, r: &ResultDoc) -> Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO results (run, idx, name, workload, target, iops, bw_bytes, lat_p50_ns, lat_p99_ns, interrupted, doc)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            run,
            idx as i64,
            r.name,
            serde_json::to_string(&r.workload)?,
            r.target.path,
            r.iops,
            r.bw_bytes,
            r.lat_ns.p50.min(i64::MAX as u64) as i64,
            r.lat_ns.p99.min(i64::MAX as u64) as i64,
            r.interrupted,
            serde_json::to_string(r)?,
        ],
    )?;
    Ok(())
}

/// Records one run as it happens. The calls, in order:
///
/// 1. [`Recorder::start`] before the first measurement, with the run's header document (system,
///    label, params, command; `results` usually empty), and a store opened (and checked to be
///    writable) before anything is measured. The run row, marked interrupted, is written with
///    the first result, so a run that dies after measuring is listed as such and one that dies
///    before leaves nothing.
/// 2. [`Recorder::add`] for each result as it finishes, one transaction each: whatever happens
///    next, the results added so far stay in the store.
/// 3. [`Recorder::finish`] with the final document (results, findings, notes, `interrupted`).
///    It replaces the header and every result in one transaction, so later changes to a result
///    (stats, findings) land too. Call it also for an interrupted run, with what was measured.
///
/// With `--no-store` every call does nothing. If `finish` is never called (a panic, a second
/// Ctrl-C, a kill), the run stays in the store marked interrupted with the results added so
/// far — or is not there at all when none was.
///
/// ```ignore
/// let mut rec = store::Recorder::start(Some(Store::open(db)?), &header)?;
/// for cell in cells {
///     let result = measure(cell)?;
///     rec.add(&result)?;
///     doc.results.push(result);
/// }
/// if let Some(id) = rec.finish(&doc)? { say!("stored as run {id}"); }
/// ```
pub struct Recorder {
    store: Option<Store>,
    /// The run's id, once its first result (or its end) put it in the store.
    id: Option<i64>,
    header: Option<RunDoc>,
    added: usize,
}

impl Recorder {
    /// Starts recording `header` in `store` (see the type's documentation); `None` stores
    /// nothing (`--no-store`). The run row is written with the first result, so a run killed
    /// before it measured anything leaves no empty run behind.
    pub fn start(store: Option<Store>, header: &RunDoc) -> Result<Recorder> {
        let Some(store) = store else {
            return Ok(Recorder::disabled());
        };
        let mut rec = Recorder {
            store: Some(store),
            id: None,
            header: Some(header.clone()),
            added: 0,
        };
        for r in &header.results {
            rec.add(r)?;
        }
        Ok(rec)
    }

    /// The store it records into, for look-ups while a run goes.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// A recorder that stores nothing.
    pub fn disabled() -> Recorder {
        Recorder {
            store: None,
            id: None,
            header: None,
            added: 0,
        }
    }

    /// The run's row, written now if it is not yet.
    fn row(&mut self, doc: Option<&RunDoc>) -> Result<Option<(&mut Store, i64)>> {
        let Some(store) = self.store.as_mut() else {
            return Ok(None);
        };
        let id = match self.id {
            Some(id) => id,
            None => {
                let header = doc
                    .or(self.header.as_ref())
                    .expect("a recorder with a store has a header");
                let id = store.insert_run(header, None)?;
                self.id = Some(id);
                id
            }
        };
        Ok(Some((store, id)))
    }

    /// Stores one finished result (the next position in the run), in its own transaction.
    pub fn add(&mut self, result: &ResultDoc) -> Result<()> {
        let Some(store) = self.store.as_mut() else {
            return Ok(());
        };
        match self.id {
            Some(id) => store.insert_result(id, self.added, result)?,
            // The row and the first result together (Store::insert_run).
            None => {
                let header = self
                    .header
                    .as_ref()
                    .expect("a recorder with a store has a header");
                self.id = Some(store.insert_run(header, Some(result))?);
            }
        }
        self.added += 1;
        crate::interrupt::note_stored(self.added);
        Ok(())
    }

    /// Keeps a `--verify` run's generations beside it (see [`Store::verify_map`]).
    pub fn verify_map(&mut self, block: u64, map: &[u64]) -> Result<()> {
        match self.row(None)? {
            Some((store, id)) => store.save_verify_map(id, block, map),
            None => Ok(()),
        }
    }

    /// Removes a run that measured nothing (interrupted before its first result), so the store
    /// holds no empty run. True if there was a store to keep it from.
    pub fn discard(self) -> Result<bool> {
        match (self.store, self.id) {
            (Some(mut store), Some(id)) if self.added == 0 => {
                store.delete(id)?;
                Ok(true)
            }
            (Some(_), None) => Ok(true),
            _ => Ok(false),
        }
    }

    /// Stores the final document: it replaces the header and all results added. Returns the
    /// run's id, or `None` with `--no-store`.
    pub fn finish(mut self, doc: &RunDoc) -> Result<Option<i64>> {
        match self.row(Some(doc))? {
            Some((store, id)) => {
                store.finish_run(id, doc)?;
                crate::interrupt::note_finished();
                Ok(Some(id))
            }
            None => Ok(None),
        }
    }
}
