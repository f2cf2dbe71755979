//! The one executor: takes a checked [`Plan`], looks at the target, holds every cell against
//! it, opens the results store, and only then writes — the fill, then the cells in order with
//! their repeats. Each cell is stored as it finishes, so an interrupted or killed run keeps what
//! it measured; at the end the run is analysed and returned as a document ([`Executed`]), which
//! the caller presents. The executor prints nothing of its own but progress: its callers
//! listen through [`Hooks`].
//!
//! An interrupt or a failing cell ends the run with what was measured kept in the document.

pub mod fold;
mod hooks;
pub mod verify;
pub mod work;

mod cell;
mod loops;
mod notes;
mod progress;
mod rounds;
mod together;

use cell::not_stored;
pub use hooks::Hooks;
use loops::{precondition, run_cells};
use notes::notes_of;
pub use rounds::{kept, SEARCH_STEPS};
use rounds::{latency_search, run_rounds};

use crate::analysis::run::Stability;
use crate::error::usage;
use crate::model::{ResultDoc, RunDoc, SCHEMA};
use crate::plan::{Kind, Plan};
use crate::store::{Recorder, Store};
use crate::target::{self, Target};
use anyhow::Result;
use iogauge_engine::EngineKind;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;
use work::Work;
/// Why a writing cell of a suite on an existing file or device without consent is skipped.
pub const READ_ONLY: &str =
    "it writes, and an existing file or device is written only with --allow-overwrite";

/// A plan held against its target before anything is written: the target as resolved, each
/// cell's workload or why it cannot run here. `present::plan` says it in words; [`run`] runs it.
pub struct Prepared<'a> {
    pub resolved: target::Resolved<'a>,
    /// The streams' own targets (the plan's `TargetPlan::streams`), checked the same way.
    pub streams: Vec<target::Resolved<'a>>,
    pub works: Vec<Result<Work, String>>,
    session: Option<verify::Session>,
}

/// What a run left: its document, and for the reader which result each of the plan's cells
/// gave or why it was skipped. `target` removes a created test file when dropped, so the
/// caller drops it after presenting and before deciding the exit code.
pub struct Executed {
    pub doc: RunDoc,
    pub target: Target,
    /// The streams' own targets, removed (when created) with the run's.
    pub streams: Vec<Target>,
    pub stability: Option<Vec<Stability>>,
    /// Per cell of the plan: the index of its result in `doc.results`.
    pub result_of: Vec<Option<usize>>,
    /// Per cell of the plan: why it did not run.
    pub skipped: Vec<Option<String>>,
    /// The error a cell or the store ended the run with; what was measured is still here.
    pub failure: Option<anyhow::Error>,
    /// `--verify` found blocks other than written.
    pub damaged: Option<anyhow::Error>,
    /// The run's id in the results store, when it was stored.
    pub stored_as: Option<i64>,
}

impl Executed {
    /// The document, or the run's failure: for callers that keep their own results (db,
    /// sweep, fleet). An interrupt is not an error here: the document says `interrupted`.
    pub fn into_doc(self) -> Result<RunDoc> {
        match self.failure.or(self.damaged) {
            Some(e) => Err(e),
            None => Ok(self.doc),
        }
    }
}

/// Runs `plan` and hands back the run's document (progress still goes to stderr;
/// `plan.output.no_store` decides whether it is stored). For `db`, `sweep` and many hosts,
/// which present their own documents.
pub fn measure(plan: &Plan, hooks: &dyn Hooks) -> Result<RunDoc> {
    if plan.output.dry_run {
        anyhow::bail!("a dry run measures nothing");
    }
    run(plan, prepare(plan)?, hooks)?.into_doc()
}

/// Looks at the target and holds every cell against it. Writes nothing.
pub fn prepare(plan: &Plan) -> Result<Prepared<'_>> {
    // A suite on an existing file or device without consent runs what only reads, and names the
    // cells it leaves out; a suite that only writes (and `run`) is refused by the target.
    let read_only = plan.kind == Kind::Suite
        && !plan.target.allow_overwrite
        && plan.writes()
        && plan.cells.iter().any(|c| !c.writes())
        && plan.target.path.as_deref().is_some_and(target::holds_data);
    // Preconditioning writes the whole range: it needs the same consent as a writing cell, and
    // without it there is nothing a read-only suite could measure the way it was meant.
    if read_only && plan.precondition {
        return Err(usage(format!(
            "{} exists and preconditioning writes its whole range; add --allow-overwrite to destroy its contents, or give a new path or a directory",
            plan.target.path.as_deref().unwrap_or(Path::new(".")).display()
        )));
    }
    let session = plan
        .env
        .verify
        .map(|sample| verify::Session::new(plan.env.seed, sample, plan.env.verify_fatal));
    let req = target::Request {
        verify: session.as_ref().map(|s| s.key),
        path: plan.target.path.as_deref(),
        size: plan.target.size,
        created_size: plan.target.created_size,
        offset: plan.target.offset,
        keep: plan.target.keep,
        allow_overwrite: plan.target.allow_overwrite,
        writes: plan.writes() && !read_only,
        seed: plan.env.seed,
        quiet: false,
        files: plan.target.files,
        name_tag: plan.target.name_tag.as_deref(),
    };
    let resolved = target::resolve(&req)?;
    // A stream's own target passes the same gate, written only when one of its cells writes.
    let streams = plan
        .target
        .streams
        .iter()
        .enumerate()
        .map(|(k, p)| {
            target::resolve(&target::Request {
                path: Some(&p.path),
                size: p.size.or(req.size),
                writes: plan.cells.iter().any(|c| c.target == Some(k) && c.writes()),
                ..req
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if plan.env.uring.hipri && plan.env.engine == EngineKind::IoUring {
        for r in std::iter::once(&resolved).chain(&streams) {
            target::check_poll_queues(r)?;
        }
    }
    for c in plan.cells.iter().filter(|c| c.atomic) {
        target::check_atomic(c.target.map_or(&resolved, |k| &streams[k]), c.bs.bytes())?;
    }
    let works: Vec<Result<Work, String>> = plan
        .cells
        .iter()
        .map(|c| {
            let on = c.target.map_or(&resolved, |k| &streams[k]);
            match read_only && c.writes() {
                true => Err(READ_ONLY.to_string()),
                false => work::of(c, &plan.env, on.range_bytes(), on.logical_block()),
            }
        })
        .collect();
    if works.iter().all(Result::is_err) {
        let reason = works
            .iter()
            .find_map(|w| w.as_ref().err())
            .cloned()
            .unwrap_or_else(|| "it has no cells".into());
        return Err(usage(match plan.kind {
            Kind::Run => reason,
            Kind::Suite => format!(
                "no cell of suite {} fits this target: {reason}",
                plan.suite.name
            ),
        }));
    }
    if session.is_some() {
        verify::Session::check(&works, plan.env.ram)?;
    }
    Ok(Prepared {
        resolved,
        streams,
        works,
        session,
    })
}

/// Runs a prepared plan: the fill, the cells, their findings, the store.
pub fn run(plan: &Plan, prepared: Prepared<'_>, hooks: &dyn Hooks) -> Result<Executed> {
    let Prepared {
        resolved,
        streams,
        works,
        mut session,
    } = prepared;
    // Under MPI every rank has checked its target by now: one refusal stops all before any
    // rank writes.
    hooks.checked()?;
    // fio's zones start empty in every run, as in every fio invocation.
    crate::workload::zbd::forget_shared();
    // Opened before the fill: a results database that cannot be written is told at once.
    let store = match plan.output.no_store {
        true => None,
        false => Some(Store::open(plan.output.db.as_deref())?),
    };
    let direct = works
        .iter()
        .flatten()
        .any(|w| w.specs().iter().any(|s| s.direct));
    let mut target = resolved.realize(direct)?;
    // The streams' own targets after the run's, each made and filled the same way; each
    // learns the devices under it for the cell's watch.
    let mut own = Vec::with_capacity(streams.len());
    for r in streams {
        own.push(r.realize(direct)?);
    }
    if let Some(s) = &mut session {
        s.filled = target.created;
    }
    let mut params = plan.params.clone();
    hooks.realized(&target.path, &mut params)?;
    let started = SystemTime::now();
    let mut system = look_at_stack(plan, &mut target, hooks);
    for t in &mut own {
        let on = iogauge_sysinfo::capture(Some(&t.path)).target;
        if plan.env.engine != EngineKind::Null {
            t.devices = on
                .iter()
                .flat_map(|s| s.devices.iter().map(|d| d.name.clone()))
                .collect();
        }
        system.streams.extend(on);
    }
    let header = RunDoc {
        schema: SCHEMA.into(),
        run_id: run_id(started),
        label: plan.output.label.clone(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        command: std::env::args().collect(),
        suite: (plan.kind == Kind::Suite).then(|| plan.suite.name.clone()),
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
        verify: session.as_ref().map(|s| s.doc(&target)),
    };
    let mut rec = Recorder::start(store, &header)?;
    let known_cache = known_cache(plan, &rec, &target);
    crate::interrupt::measuring();
    let mut state = State {
        verify: session,
        ..State::default()
    };
    let failure = match (&plan.suite.rounds, precondition(plan, &target, &mut state)) {
        (_, Err(e)) => Some(e),
        (Some(rounds), Ok(())) => {
            run_rounds(plan, rounds, &works, &target, &mut state, &mut rec).err()
        }
        (None, Ok(())) => match plan.latency_target {
            Some(lt) => latency_search(plan, lt, &works, &target, &mut state, &mut rec).err(),
            None => run_cells(plan, &works, (&target, &own), &mut state, &mut rec, hooks).err(),
        },
    };

    let mut notes = plan.notes.clone();
    notes.extend(notes_of(plan, &works, &state, &target));
    for (k, t) in own.iter().enumerate() {
        let names: Vec<&str> = plan
            .cells
            .iter()
            .filter(|c| c.target == Some(k))
            .filter_map(|c| c.origin.as_deref())
            .collect();
        notes.push(format!(
            "stream {} ran on its own target, {}{}: the device findings judge IO against the devices it went to, so they leave out the sum of a cell whose streams went to different targets (each device's counters are still shown)",
            names.first().copied().unwrap_or("?"),
            t.path.display(),
            match t.devices.is_empty() {
                true => String::new(),
                false => format!(" (on {})", t.devices.join(" on ")),
            }
        ));
    }
    notes.append(&mut state.notes);
    notes.extend(notes::ignored_errors(&state.results));
    if let (Some(e), Kind::Suite) = (&failure, plan.kind) {
        notes.push(format!("the suite stopped at a failing cell: {e:#}"));
    }
    let results = std::mem::take(&mut state.results);
    let session = state.verify.take();
    let interrupted = failure.is_some()
        || crate::interrupt::requested().is_some()
        || results.iter().any(|r| r.interrupted);
    let mut doc = RunDoc {
        results,
        interrupted,
        notes,
        rounds: state.rounds.take(),
        fleet: None,
        rebuild: None,
        advice: None,
        verify: session.as_ref().map(|s| s.doc(&target)),
        ..header
    };
    if let Some(s) = &session {
        if let Some(why) = s.no_map() {
            doc.notes.push(format!(
                "--verify: {why}, so a later `iogauge verify` checks each block's integrity but cannot tell a lost write from the version before it"
            ));
        }
    }
    // A cgroup limit set while the cells ran is part of what they measured.
    if let Some(t) = doc.system.target.as_mut() {
        iogauge_sysinfo::add_limits_set_since(t);
    }
    hooks.measured(&mut doc);
    let stability = crate::analysis::run::judge(
        &mut doc,
        plan,
        &target,
        crate::analysis::run::Seen {
            cell_of: &state.cell_of,
            known_cache,
            latency: state
                .latency_answer
                .take()
                .map(|answer| crate::analysis::run::Latency {
                    answer,
                    best: state.latency_best,
                    lowest: state.latency_lowest,
                }),
        },
    );
    let (stored_as, failure) = store_run(rec, &doc, session.as_ref(), failure)?;
    Ok(Executed {
        result_of: (0..plan.cells.len()).map(|i| state.index_of(i)).collect(),
        skipped: works
            .iter()
            .enumerate()
            .map(|(i, w)| {
                w.as_ref()
                    .err()
                    .map(String::as_str)
                    .or(state.skipped_reason(i))
                    .map(str::to_string)
            })
            .collect(),
        damaged: damaged(&doc),
        doc,
        target,
        streams: own,
        stability,
        failure,
        stored_as,
    })
}

/// What the target sits on (its stack, for the document), with what the stack showed before
/// anything is measured handed to the hooks; the target learns its devices.
fn look_at_stack(
    plan: &Plan,
    target: &mut Target,
    hooks: &dyn Hooks,
) -> iogauge_sysinfo::SystemInfo {
    let system = iogauge_sysinfo::capture(Some(&target.path));
    // A stack placed off its boundaries is said before a long measurement, not only after it.
    let placed = crate::analysis::misaligned(&system);
    if !placed.is_empty() {
        hooks.found_before_run(&placed);
    }
    target.device = system
        .target
        .as_ref()
        .and_then(|t| t.devices.first())
        .map(|d| d.name.clone());
    if plan.env.engine != EngineKind::Null {
        target.devices = system
            .target
            .as_ref()
            .map(|t| t.devices.iter().map(|d| d.name.clone()).collect())
            .unwrap_or_default();
    }
    system
}

/// A cache `probe cache` found on this stack earlier, for the working-set warning; looked up in
/// the results database whether or not this run is stored there, so --no-store never changes
/// what a run finds (a database that is not there, or cannot be read, knows of no cache).
fn known_cache(plan: &Plan, rec: &Recorder, target: &Target) -> Option<(i64, f64, String)> {
    let dev = target.device.as_deref().filter(|_| !plan.probe)?;
    let looked_up;
    let store = match rec.store() {
        Some(s) => Some(s),
        None => {
            looked_up = Store::open_existing(plan.output.db.as_deref()).ok();
            looked_up.as_ref()
        }
    };
    store
        .and_then(|s| s.known_cache(dev))
        .map(|(id, b)| (id, b, dev.to_string()))
}

/// The run into the store, unless nothing was measured: its id, and the run's failure as it
/// now stands (a store that failed is one; a stop for a result the store could not take is
/// told as what it turned out to be).
fn store_run(
    mut rec: Recorder,
    doc: &RunDoc,
    session: Option<&verify::Session>,
    mut failure: Option<anyhow::Error>,
) -> Result<(Option<i64>, Option<anyhow::Error>)> {
    let mut stored_as = None;
    if doc.results.is_empty() && doc.interrupted {
        // Stopped or failed before a cell finished: an empty run in the store, or an empty
        // summary, would only mislead.
        let discarded = rec.discard()?;
        if let Some(e) = failure {
            return Err(e);
        }
        if discarded {
            say!("nothing was measured, so nothing was stored");
        }
    } else {
        let stored = match session.and_then(|s| s.map()) {
            Some((block, map)) => rec.verify_map(block, map),
            None => Ok(()),
        }
        .and_then(|()| rec.finish(doc));
        // What was measured is still presented (and written to --output) when the store
        // fails; the run then ends with the store's error.
        match stored {
            Ok(id) => {
                stored_as = id;
                // A result that could not be stored stopped the run, and the store took the
                // whole run in the end: one true account, not "not stored" beside "stored as".
                if let (Some(id), Some(f)) = (id, &failure) {
                    if f.downcast_ref::<cell::NotStored>().is_some() {
                        let why = f.root_cause().to_string();
                        failure = Some(anyhow::anyhow!(
                            "the results database could not take a result ({why}), so the run stopped early; what it measured until then was stored in the end as run {id}"
                        ));
                    }
                }
            }
            Err(e) => {
                failure.get_or_insert(not_stored(e));
            }
        }
    }
    Ok((stored_as, failure))
}

/// `--verify`'s verdict on the run: an error naming how many blocks came back other than
/// written.
fn damaged(doc: &RunDoc) -> Option<anyhow::Error> {
    let damaged: u64 = doc
        .results
        .iter()
        .filter_map(|r| r.verify.as_ref())
        .map(|v| v.failures())
        .sum();
    (damaged > 0).then(|| {
        anyhow::anyhow!(
            "verify failed: {damaged} block{} came back other than iogauge wrote them (the integrity findings above name them)",
            crate::units::plural(damaged as usize)
        )
    })
}

/// What the cells left behind.
#[derive(Default)]
struct State {
    results: Vec<ResultDoc>,
    /// Cell index of each result.
    cell_of: Vec<usize>,
    /// Cells the target refused while running, with why.
    refused: BTreeMap<usize, String>,
    /// Notes that came up while running (e.g. caches that could not be dropped).
    notes: Vec<String>,
    /// `--verify`: the run's key and what its cells wrote.
    verify: Option<verify::Session>,
    /// How a suite run in rounds converged.
    rounds: Option<crate::model::RoundsDoc>,
    /// Seconds the preconditioning took, when it ran.
    precondition_s: Option<f64>,
    /// `--latency-target`: the answer in words, and the rate found.
    latency_answer: Option<String>,
    /// A failed latency search's lowest rate asked, with the IOPS and latency it achieved.
    latency_lowest: Option<(f64, f64, f64)>,
    latency_best: Option<f64>,
}

impl State {
    fn index_of(&self, cell: usize) -> Option<usize> {
        self.cell_of.iter().position(|&c| c == cell)
    }

    fn skipped_reason(&self, cell: usize) -> Option<&str> {
        self.refused.get(&cell).map(String::as_str)
    }
}

/// Empties the page cache between repeats: sync(2), then 3 into /proc/sys/vm/drop_caches
/// (root only), as the PostgreSQL and MySQL studies' authors did by hand before each run.
pub fn drop_caches() -> std::result::Result<(), String> {
    iogauge_engine::sys::sync_all();
    crate::target::files::set_knob(Path::new("/proc/sys/vm/drop_caches"), "3").map_err(|e| match e
        .kind()
    {
        std::io::ErrorKind::PermissionDenied => "needs root".to_string(),
        _ => e.to_string(),
    })
}

pub fn run_id(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    format!("{secs:x}-{:04x}", fastrand::u16(..))
}
