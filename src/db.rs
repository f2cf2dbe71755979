//! The database itself on the storage under test, as loads × servers (the way the engine
//! crate is engines): a load — `pgbench` (PostgreSQL's pgbench), `sysbench` (sysbench's OLTP
//! scripts), `tpcc` (iogauge's TPC-C-derived driver) — on a throwaway server in the target
//! directory — PostgreSQL (`cluster`) or MariaDB (`mariadb`), behind one table of hooks
//! (`backend`) — driven by one loop (`load`): the server made, the load's data loaded, one
//! measurement per buffer share of the data (`--buffer-ratio`, the MySQL SSD study's
//! buffer-pool sweep), then the server removed and, beside the transactions, the storage cells
//! of the same directory: the server's commit (its log's writes + syncs) and random reads of its
//! page.
//!
//! Every measurement becomes a `ResultDoc` by one builder (`common::transactions_result`): its
//! rate is transactions per second, its latencies whole transactions in iogauge's histogram
//! layout, with the load's own section (`pg`, `sysbench`, `tpcc`) and the timeline; one run
//! document holds them and the storage cells, stored as it goes, and ends as [`Outcome`]
//! says; the caller presents it (commands/db.rs).
//!
//! Modules: `load` (the loop, the plan every load shares, the `Load` trait), `pgbench`,
//! `sysbench`, `tpcc` (the loads), `backend`, `cluster`, `mariadb`, `server` (PostgreSQL's
//! settings and counters), `cgroup` (--memory-limit), `owner` (the server's account and its
//! files), `common` (checks, the page-cache finding, the storage cells, the ending),
//! `timeline` (the run second by second), `progress` (the bar), `plan` (what was typed,
//! checked).

pub mod advise;
pub mod backend;
pub mod cgroup;
pub mod cluster;
mod common;
pub mod mariadb;
mod memory;
mod owner;
mod plan;
mod process;
mod progress;
mod repeats;

pub use pgbench::PgbenchPlan;
pub use plan::{plan, sysbench_plan, tpcc_plan};
pub mod load;
pub mod pgbench;
pub mod server;
pub mod sysbench;
pub mod timeline;
pub mod tpcc;

use crate::error::{self, usage};
use crate::model::{DeviceDoc, RunDoc, SCHEMA};
use crate::store::Recorder;
use anyhow::Result;
use std::collections::BTreeMap;

/// Bytes of database per pgbench scale unit: 100,000 accounts with their index, and the
/// tellers, branches and history that go with them (measured on PostgreSQL 15: scale 1 gives
/// 22.4 MiB, of which 7.4 MiB are the empty database's catalogs).
pub const BYTES_PER_SCALE: u64 = 15_800_000;
/// Catalogs of an empty database, which `--data` does not count as pgbench data.
pub const EMPTY_DB_BYTES: u64 = 7_700_000;
/// Whether iogauge runs as root (its effective user).
pub fn is_root() -> bool {
    iogauge_engine::sys::euid() == 0
}

pub fn pct(r: f64) -> String {
    let v = r * 100.0;
    match (v - v.round()).abs() < 1e-9 {
        true => format!("{v:.0}%"),
        false => format!("{v}%"),
    }
}

/// What each device of the data directory's stack did over the measurements, each
/// measurement's device windows in the order of `runs`.
fn devices_of(runs: &[&[iogauge_sysinfo::diskstats::DeviceWindow]]) -> Vec<DeviceDoc> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|i| {
            let name = &first[i].name;
            let mut total = first[i].total;
            let (mut elapsed, mut intervals) = (0.0, Vec::new());
            for (k, m) in runs.iter().enumerate() {
                let Some(w) = m.get(i) else { continue };
                let step = w.interval.as_secs_f64();
                intervals.extend(
                    w.intervals
                        .iter()
                        .enumerate()
                        .map(|(j, s)| (elapsed + (j + 1) as f64 * step, *s)),
                );
                elapsed += w.elapsed.as_secs_f64();
                if k > 0 {
                    match (total.as_mut(), w.total) {
                        (Some(t), Some(x)) => t.add(&x),
                        _ => total = None,
                    }
                }
            }
            DeviceDoc::of(
                name,
                total.as_ref(),
                elapsed,
                &intervals,
                iogauge_sysinfo::diskstats::QueueLimits::read(name),
            )
        })
        .collect()
}

/// The document of a database run before its results: one shape and one run-id format for
/// pgbench and sysbench, as for every other run (`exec::run_id`).
pub(crate) fn header(
    output: &crate::plan::Output,
    suite: &str,
    started: std::time::SystemTime,
    system: iogauge_sysinfo::SystemInfo,
    params: BTreeMap<String, String>,
) -> RunDoc {
    RunDoc {
        schema: SCHEMA.into(),
        run_id: crate::exec::run_id(started),
        label: output.label.clone(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        command: std::env::args().collect(),
        suite: Some(suite.into()),
        system,
        results: Vec::new(),
        findings: Vec::new(),
        interrupted: true,
        notes: Vec::new(),
        params,
        rounds: None,
        fleet: None,
        rebuild: None,
        advice: None,
        verify: None,
    }
}

/// How a database run ended: its document (stored, or discarded when nothing was measured),
/// and the failure or signal that ended it early. One ending for pgbench and sysbench.
pub struct Outcome {
    pub doc: RunDoc,
    failure: Option<anyhow::Error>,
}

impl Outcome {
    /// What was measured, for a sweep's setting: the document when it holds a result (a
    /// failure after one is a note of it), else the failure.
    pub fn into_doc(self) -> Result<RunDoc> {
        let Outcome { mut doc, failure } = self;
        match failure {
            Some(e) if doc.results.is_empty() => Err(e),
            Some(e) => {
                doc.notes
                    .push(format!("the run failed after it measured: {e:#}"));
                Ok(doc)
            }
            None => Ok(doc),
        }
    }

    /// Stores the document (or, with nothing measured, discards it and says so).
    pub(crate) fn conclude(
        rec: Recorder,
        doc: RunDoc,
        failure: Option<anyhow::Error>,
    ) -> Result<Outcome> {
        if doc.results.is_empty() {
            let discarded = rec.discard()?;
            if let Some(e) = failure {
                return Err(e);
            }
            if discarded {
                say!("nothing was measured, so nothing was stored");
            }
        } else if let Some(id) = rec.finish(&doc)? {
            say!("stored as run {id}");
        }
        Ok(Outcome { doc, failure })
    }

    /// A failure that came while a Ctrl-C was stopping the run is the stop's: a terminal's
    /// Ctrl-C reaches the clients iogauge started in its group too, and `pgbench -i` cancels
    /// its load with "canceling statement due to user request". The run ends as interrupted
    /// (exit 130), what failed said as a note.
    pub fn or_interrupted(e: anyhow::Error) -> anyhow::Error {
        match crate::interrupt::requested() {
            Some(sig) if e.downcast_ref::<error::Interrupted>().is_none() => {
                say!("note: stopped while: {e:#}");
                error::Interrupted(sig).into()
            }
            _ => e,
        }
    }

    /// The run's end once its document was presented: its failure, or its signal.
    pub fn result(self) -> Result<()> {
        if let Some(e) = self.failure {
            return Err(match self.doc.results.is_empty() {
                true => e,
                false => e.context("the results above cover the runs that finished"),
            });
        }
        match crate::interrupt::requested() {
            Some(sig) => Err(error::Interrupted(sig).into()),
            None => Ok(()),
        }
    }
}
