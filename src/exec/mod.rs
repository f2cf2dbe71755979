//! The one executor: takes a checked [`Plan`], looks at the target, holds every cell against
//! it, opens the results store, and only then writes — the fill, then the cells in order with
//! their repeats. Each cell is stored as it finishes, so an interrupted or killed run keeps what
//! it measured; at the end the run is analysed and handed to `present`.
//!
//! An interrupt or a failing cell ends the run after presenting what was measured.

pub mod fold;
pub mod verify;
pub mod work;

use crate::error::{self, usage};
use crate::model::{ResultDoc, RunDoc, SCHEMA};
use crate::plan::{Kind, Plan, Until};
use crate::present::{self, Outcome};
use crate::runner::StopWhen;
use crate::store::{Recorder, Store};
use crate::suite::cells::{self, Cell};
use crate::suite::stable::{self, Rule};
use crate::suite::tables::{self, Source, Stability};
use crate::suite::{Layout, Length, Op};
use crate::target::{self, Target};
use crate::units;
use anyhow::Result;
use iogauge_analyze::{Finding, Kind as FindingKind, Severity};
use iogauge_engine::EngineKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
use work::{Ran, Work};

pub fn execute(plan: &Plan) -> Result<()> {
    execute_as(plan, true).map(drop)
}

/// Runs `plan` as [`execute`] does but hands back the run's document instead of printing it
/// (progress still goes to stderr; `plan.output.no_store` decides whether it is stored). An
/// interrupt is not an error here: the document says `interrupted` and the caller, which has
/// its own results to keep, decides. For `db pgbench`, which puts these storage figures next
/// to its transactions.
pub fn measure(plan: &Plan) -> Result<RunDoc> {
    execute_as(plan, false)?.ok_or_else(|| anyhow::anyhow!("a dry run measures nothing"))
}

fn execute_as(plan: &Plan, print: bool) -> Result<Option<RunDoc>> {
    // A suite on an existing file or device without consent runs what only reads, and names the
    // cells it leaves out; a suite that only writes (and `run`) is refused by the target.
    let read_only = plan.kind == Kind::Suite
        && !plan.target.allow_overwrite
        && plan.writes()
        && plan.cells.iter().any(|c| !c.writes())
        && plan
            .target
            .path
            .as_deref()
            .is_some_and(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_dir()));
    // Preconditioning writes the whole range: it needs the same consent as a writing cell, and
    // without it there is nothing a read-only suite could measure the way it was meant.
    if read_only && plan.precondition {
        return Err(usage(format!(
            "{} exists and preconditioning writes its whole range; add --allow-overwrite to destroy its contents, or give a new path or a directory",
            plan.target.path.as_deref().unwrap_or(Path::new(".")).display()
        )));
    }
    let mut session = plan
        .env
        .verify
        .map(|sample| verify::Session::new(plan.env.seed, sample));
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
    };
    let resolved = target::resolve(&req)?;
    if plan.env.uring.hipri && plan.env.engine == EngineKind::IoUring {
        target::check_poll_queues(&resolved)?;
    }
    let works: Vec<Result<Work, String>> =
        plan.cells
            .iter()
            .map(|c| {
                match read_only && c.writes() {
            true => Err(
                "it writes, and an existing file or device is written only with --allow-overwrite"
                    .to_string(),
            ),
            false => work::of(c, &plan.env, resolved.range_bytes(), resolved.logical_block()),
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
    let summary = plan_text(plan, &resolved, &works);
    if plan.output.dry_run {
        if print {
            crate::ui::out(&summary)?;
        }
        return Ok(None);
    }
    if print && plan.kind == Kind::Suite && !plan.output.json {
        crate::ui::part(&summary);
    }
    // Under MPI every rank has checked its target by now: one refusal stops all before any
    // rank writes.
    crate::fleet::checked()?;
    // Opened before the fill: a results database that cannot be written is told at once.
    let store = match plan.output.no_store {
        true => None,
        false => Some(Store::open(&plan.output.db)?),
    };
    let direct = works
        .iter()
        .flatten()
        .any(|w| w.specs().iter().any(|s| s.direct));
    let mut target = resolved.realize(direct)?;
    if let Some(s) = &mut session {
        s.filled = target.created;
    }
    let started = SystemTime::now();
    let begun = Instant::now();

    let system = iogauge_sysinfo::capture(Some(&target.path));
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
    let header = RunDoc {
        schema: SCHEMA.into(),
        run_id: run_id(started),
        label: plan.output.label.clone(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        command: std::env::args().collect(),
        suite: (plan.kind == Kind::Suite).then(|| plan.suite.name.clone()),
        system: system.clone(),
        results: Vec::new(),
        findings: Vec::new(),
        interrupted: true,
        notes: Vec::new(),
        params: plan.params.clone(),
        rounds: None,
        fleet: None,
        verify: session.as_ref().map(|s| s.doc(&target)),
    };
    let mut rec = Recorder::start(store, &header)?;
    // A cache `probe cache` found on this stack earlier, for the working-set warning below.
    let known_cache = match (plan.probe, rec.store(), target.device.as_deref()) {
        (false, Some(store), Some(dev)) => store
            .known_cache(dev)
            .map(|(id, b)| (id, b, dev.to_string())),
        _ => None,
    };
    crate::interrupt::measuring();
    let mut state = State {
        verify: session,
        ..State::default()
    };
    let mut failure = match (&plan.suite.rounds, precondition(plan, &target, &mut state)) {
        (_, Err(e)) => Some(e),
        (Some(rounds), Ok(())) => {
            run_rounds(plan, rounds, &works, &target, &mut state, &mut rec).err()
        }
        (None, Ok(())) => match plan.latency_target {
            Some(lt) => latency_search(plan, lt, &works, &target, &mut state, &mut rec).err(),
            None => run_cells(plan, &works, &target, &mut state, &mut rec).err(),
        },
    };

    let mut notes = plan.notes.clone();
    notes.extend(notes_of(plan, &works, &state, &target));
    notes.append(&mut state.notes);
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
    crate::analysis::annotate(&mut doc, target.data_bytes);
    if let Some((id, bytes, dev)) = &known_cache {
        if (target.range_bytes as f64) <= *bytes {
            let f = Finding {
                kind: FindingKind::Cache,
                severity: Severity::Warning,
                summary: format!(
                    "the working set ({}) fits inside the cache of about {} that `iogauge probe cache` found in front of {dev} (run {id}): these numbers may come from that cache",
                    units::iec(target.range_bytes),
                    units::iec(*bytes as u64)
                ),
                evidence: BTreeMap::from([
                    ("working_set_bytes".to_string(), target.range_bytes as f64),
                    ("cache_bytes".to_string(), *bytes),
                ]),
                advice: "Use a --size well beyond the cache so the device answers.".into(),
                result: None,
            };
            if let Ok(v) = serde_json::to_value(&f) {
                doc.findings.push(v);
            }
        }
    }
    if plan.probe {
        // Each step of a probe measures a cache on purpose: its own cache warnings say nothing.
        let own_cache = |f: &serde_json::Value| {
            crate::analysis::is(f, iogauge_analyze::Kind::Cache) && !f["result"].is_null()
        };
        doc.findings.retain(|f| !own_cache(f));
        for r in &mut doc.results {
            r.findings
                .retain(|f| !crate::analysis::is(f, iogauge_analyze::Kind::Cache));
        }
        if let Some(f) = probe_finding(&plan.cells, &state.cell_of, &doc.results, &target) {
            if let Ok(v) = serde_json::to_value(&f) {
                doc.findings.push(v);
            }
        }
    }
    if let Some(answer) = state.latency_answer.take() {
        let mut f = finding(FindingKind::Ceiling, answer, 0);
        f.result = None;
        f.severity = match state.latency_best {
            Some(_) => Severity::Info,
            None => Severity::Warning,
        };
        if let Some(b) = state.latency_best {
            f.evidence.insert("best_iops".into(), b);
        }
        if let (None, Some((rate, iops, lat))) = (state.latency_best, state.latency_lowest) {
            f.evidence.insert("lowest_rate_iops".into(), rate);
            f.evidence.insert("lowest_achieved_iops".into(), iops);
            f.evidence.insert("lowest_latency_ns".into(), lat);
            f.advice = "Even a slow, paced rate missed the target: the latency comes from the device (or what lies between), not from queueing; relax the target or look for what adds latency at low load (power saving, a remote or throttled volume).".into();
        }
        if let Ok(v) = serde_json::to_value(&f) {
            doc.findings.push(v);
        }
    }
    if let Some(f) = doc.rounds.as_ref().and_then(rounds_finding) {
        if let Ok(v) = serde_json::to_value(&f) {
            doc.findings.push(v);
        }
    }
    let stability =
        (plan.until == Until::Stable).then(|| stability(&plan.cells, &state.cell_of, &doc.results));
    add_findings(
        &mut doc,
        &plan.cells,
        &state.cell_of,
        stability.as_deref(),
        plan.env.ram,
    );
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
        let stored = match session.as_ref().and_then(|s| s.map()) {
            Some((block, map)) => rec.verify_map(block, map),
            None => Ok(()),
        }
        .and_then(|()| rec.finish(&doc));
        // What was measured is still presented (and written to --output) when the store
        // fails; the run then ends with the store's error.
        if let Err(e) = stored {
            failure.get_or_insert(not_stored(e));
        }
    }
    let damaged: u64 = doc
        .results
        .iter()
        .filter_map(|r| r.verify.as_ref())
        .map(|v| v.failures())
        .sum();
    let damaged = (damaged > 0).then(|| {
        anyhow::anyhow!(
            "verify failed: {damaged} block{} came back other than iogauge wrote them (the integrity findings above name them)",
            crate::units::plural(damaged as usize)
        )
    });
    if !print {
        drop(target);
        return match failure.or(damaged) {
            Some(e) => Err(e),
            None => Ok(Some(doc)),
        };
    }
    let outcomes: Vec<Outcome> = plan
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| Outcome {
            cell: c,
            result: state.index_of(i).map(|r| &doc.results[r]),
            skipped: works[i]
                .as_ref()
                .err()
                .map(String::as_str)
                .or(state.skipped_reason(i)),
        })
        .collect();
    present::emit(
        plan,
        &doc,
        &outcomes,
        &target,
        stability.as_deref(),
        begun.elapsed(),
    )?;
    drop(target); // removes a created test file before the exit code is decided
    if let Some(e) = failure {
        return Err(match plan.kind {
            Kind::Run if !doc.results.is_empty() => {
                e.context("the results above cover the run up to that point")
            }
            _ => e,
        });
    }
    if let Some(e) = damaged {
        return Err(e);
    }
    match crate::interrupt::requested() {
        Some(sig) => Err(error::Interrupted(sig).into()),
        None => Ok(Some(doc)),
    }
}

/// The plan in a few lines, before anything is written: what runs, where, on how much data,
/// and about how long it takes.
fn plan_text(plan: &Plan, target: &target::Resolved, works: &[Result<Work, String>]) -> String {
    let runnable: Vec<&Cell> = plan
        .cells
        .iter()
        .zip(works)
        .filter(|(_, w)| w.is_ok())
        .map(|(c, _)| c)
        .collect();
    let repeats = plan.repeat.n;
    let range = target.range_bytes();
    let timed: Duration = runnable.iter().filter_map(|c| c.planned_time()).sum();
    // Fixed-data cells and the fill at an assumed 100 MB/s: an estimate, said to be one.
    let data: u64 = runnable
        .iter()
        .filter_map(|c| match c.length {
            Length::Data(a) => Some(cells::data_bytes(
                a,
                c.range.map_or(range, |r| r.min(range)),
            )),
            Length::Time(_) => None,
        })
        .sum();
    // Every cell's ramp runs before its measurement, and a latency-target search runs the
    // workload once unthrottled and then up to SEARCH_STEPS paced steps.
    let ramps = plan.env.ramp.as_secs_f64() * runnable.len() as f64;
    let per_run = timed.as_secs_f64() + ramps + data as f64 / 100e6;
    // A cell that may stop early (--until-stable, --until-change) takes at least its rule's
    // shortest time and at most its planned time.
    let shortest = match plan.until {
        Until::Limit => None,
        Until::Stable => Some(stable::MIN_TIME),
        Until::Change => Some(Duration::from_secs_f64(
            iogauge_analyze::MIN_HOLD_S + iogauge_analyze::MIN_PART_S,
        )),
    };
    let per_run_least = match shortest {
        None => per_run,
        Some(floor) => {
            let least: Duration = runnable
                .iter()
                .filter_map(|c| c.planned_time())
                .map(|t| t.min(floor))
                .sum();
            per_run - timed.as_secs_f64() + least.as_secs_f64()
        }
    };
    let searches = match plan.latency_target {
        Some(_) => 1 + SEARCH_STEPS,
        None => 1,
    };
    // A suite in rounds runs every cell once a round, at least a window's worth of rounds.
    let (least, most) = match &plan.suite.rounds {
        Some(r) => (r.window as u32, plan.max_rounds.unwrap_or(r.max)),
        None => (repeats, repeats),
    };
    // A search that meets the target unthrottled stops after its first run.
    let mut secs = per_run_least * f64::from(least);
    let mut secs_most = per_run * f64::from(most * searches);
    let what = match plan.kind {
        Kind::Run => "run".to_string(),
        Kind::Suite => format!("suite {}", plan.suite.name),
    };
    let mut s = format!(
        "plan: {what} — {} cell{}{}",
        runnable.len(),
        crate::units::plural(runnable.len()),
        match repeats {
            1 => String::new(),
            n => format!(", {n} repeats each"),
        }
    );
    let times: std::collections::BTreeSet<Duration> =
        runnable.iter().filter_map(|c| c.planned_time()).collect();
    if times.len() == 1 {
        let t = times.iter().next().copied().unwrap_or_default();
        let most = if plan.until == Until::Limit {
            ""
        } else {
            "up to "
        };
        s.push_str(&format!(" × {most}{}", units::duration(t)));
    }
    match plan.until {
        Until::Limit => {}
        Until::Stable => s.push_str(", each stopping once its IOPS are stable"),
        Until::Change => {
            s.push_str(", each stopping once its rate has moved to another level and held there")
        }
    }
    if least != most {
        s.push_str(&format!(
            ", in rounds until steady state ({least} to {most} rounds)"
        ));
    }
    s.push('\n');
    if plan.precondition {
        let bytes = 2 * range;
        secs += bytes as f64 / 100e6;
        secs_most += bytes as f64 / 100e6;
        s.push_str(&format!(
            "  preconditioning: the range written twice ({}) in 128 KiB sequential writes\n",
            units::iec(bytes)
        ));
    }
    let shown = plan
        .target
        .path
        .as_deref()
        .map_or_else(|| ".".to_string(), |p| p.display().to_string());
    match target {
        target::Resolved::Create { path, size, .. } => {
            secs += *size as f64 / 100e6;
            secs_most += *size as f64 / 100e6;
            s.push_str(&format!(
                "  target: {}, a test file of {} that iogauge creates, fills with random data and removes\n",
                path.display(),
                units::iec(*size)
            ));
        }
        target::Resolved::Ready(t) => s.push_str(&format!(
            "  target: {shown}, an existing {} ({} of {} used{})\n",
            t.kind.name().replace('_', " "),
            units::iec(t.range_bytes),
            units::iec(t.total_bytes),
            if plan.writes() {
                "; its contents are destroyed"
            } else {
                ", read only"
            }
        )),
    }
    if plan.env.ram > 0 {
        s.push_str(&format!(
            "  working set: {} · RAM {}\n",
            units::iec(range),
            units::iec(plan.env.ram)
        ));
    }
    let skipped = works.iter().filter(|w| w.is_err()).count();
    if skipped > 0 {
        s.push_str(&format!(
            "  skipped: {skipped} cell{} that cannot run here (named in the notes)\n",
            crate::units::plural(skipped)
        ));
    }
    let span = match (secs_most - secs).abs() < 0.5 {
        true => String::new(),
        false => format!(
            " to {}",
            units::duration(Duration::from_secs_f64(secs_most.max(1.0)))
        ),
    };
    s.push_str(&format!(
        "  estimated time: about {}{span}{}\n\n",
        units::duration(Duration::from_secs_f64(secs.max(1.0))),
        if data > 0 || matches!(target, target::Resolved::Create { .. }) {
            " (data at an assumed 100 MB/s)"
        } else {
            ""
        }
    ));
    s
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

/// Runs the cells in order until all ran, a signal came, or one failed.
fn run_cells(
    plan: &Plan,
    works: &[Result<Work, String>],
    target: &Target,
    state: &mut State,
    rec: &mut Recorder,
) -> Result<()> {
    let cells = &plan.cells;
    let runnable: Vec<usize> = (0..cells.len()).filter(|&i| works[i].is_ok()).collect();
    let suite = plan.kind == Kind::Suite;
    let progress = !plan.output.json;
    let mut eta = Eta::default();
    for (k, &i) in runnable.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let Ok(work) = &works[i] else { continue };
        let cell = &cells[i];
        let prefix = match suite {
            true => {
                let left = eta.left(runnable[k..].iter().map(|&j| &cells[j]), target.range_bytes);
                format!(
                    "[{}/{} · suite {left} left] {}",
                    k + 1,
                    runnable.len(),
                    cell.name()
                )
            }
            false => String::new(),
        };
        let files = match work {
            Work::Files { files, spec } => match seek_files(target, *files, spec.seed) {
                Ok(f) => f,
                // Interrupted while filling them: nothing of this cell was measured.
                Err(_) if crate::interrupt::requested().is_some() => break,
                Err(e) => return Err(e),
            },
            _ => Vec::new(),
        };
        let started = Instant::now();
        // --until-stable: stop a timed cell once its per-interval IOPS are stable enough;
        // --until-change: once its rate moved to another level and held there.
        let rule = cell.planned_time().map(Rule::new);
        // The runner hands the rule ~100 ms samples (its watch ticks).
        let interval = crate::runner::FINE_BIN;
        // Under MPI with `--stonewall first`: once another rank has moved its --data.
        let first = crate::fleet::stonewall_first();
        let stop = move |iops: &[f64]| {
            (first && crate::fleet::peer_done())
                || match plan.until {
                    Until::Limit => false,
                    Until::Stable => rule.is_some_and(|r| {
                        matches!(r.check(iops, interval), stable::Verdict::Stable { .. })
                    }),
                    Until::Change => changed(iops, interval),
                }
        };
        let stop_when: Option<StopWhen> = (plan.until != Until::Limit || first).then_some(&stop);
        let tracker = state
            .verify
            .as_ref()
            .and_then(|s| s.tracker(i, work, target));
        let verifier = state.verify.as_ref().map(|s| s.verifier(tracker.as_ref()));
        // Under MPI: every rank starts the cell at once.
        crate::fleet::before_cell()?;
        let outcome = repeated(plan, &mut state.notes, &prefix, |label| {
            work::run(
                work,
                target,
                &files,
                &label,
                progress,
                stop_when,
                verifier.as_ref(),
            )
        });
        // Under MPI with `--stonewall first`: a rank that moved all its data tells the others.
        if let Ok(ran) = &outcome {
            crate::fleet::cell_done(ran.iter().any(|r| r.m.stopped_early));
        }
        drop(files);
        let direct = work.specs().iter().any(|s| s.direct);
        let refused = |e: &str, ios: u64| suite && ios == 0 && refused_block(e, cell.bs, direct);
        let skip = |state: &mut State, why: String| {
            say!(
                "[{}/{}] {}: skipped, the target refused it",
                k + 1,
                runnable.len(),
                cell.name()
            );
            state.refused.insert(i, why);
        };
        match outcome {
            Ok(ran) => {
                let during = verifier.as_ref().map(|_| {
                    let mut all = iogauge_verify::Tally::new(crate::runner::KEEP_FAILURES);
                    for t in ran.iter().filter_map(|r| r.m.verify.as_ref()) {
                        all.merge(t);
                    }
                    all
                });
                let mut r = fold::result(ran, target, suite.then(|| cell.name()));
                // Read back what the cell wrote, unless it was cut short: then the writes in
                // flight at the cut make the last blocks' state unknown.
                if let Some(s) = state.verify.as_mut() {
                    let whole = !r.interrupted && crate::interrupt::requested().is_none();
                    let direct = work.specs().iter().any(|s| s.direct);
                    let t = tracker.as_ref().filter(|_| whole);
                    if t.is_some() && !plan.output.json {
                        say!("verifying what {} wrote ...", cell.name());
                    }
                    r.verify = Some(s.pass(t, target, direct, during.as_ref())?);
                }
                if r.error.as_deref().is_some_and(|e| refused(e, r.ios)) {
                    skip(state, r.error.unwrap_or_default());
                    continue;
                }
                eta.record(cell, &r, started.elapsed());
                if suite {
                    say!("[{}/{}] {}", k + 1, runnable.len(), one_line(cell, &r));
                }
                let cut = r.interrupted;
                let failed = r.error.clone();
                // Kept in the run's document first: a results database that fails now (its
                // file system full) loses no measurement, which is still printed and written
                // to --output.
                let stored = rec.add(&r);
                state.results.push(r);
                state.cell_of.push(i);
                stored.map_err(not_stored)?;
                if let Some(e) = failed {
                    // The partial cell is kept (flagged with its error); the run stops, as a
                    // failing device would make every later number doubtful.
                    let e = anyhow::anyhow!(e);
                    return Err(match suite {
                        true => {
                            e.context(format!("suite {}, cell {}", plan.suite.name, cell.name()))
                        }
                        false => e,
                    });
                }
                if cut {
                    break;
                }
            }
            Err(e) if refused(&format!("{e:#}"), 0) => skip(state, format!("{e:#}")),
            Err(e) => {
                if crate::interrupt::requested().is_some() {
                    break;
                }
                return Err(match suite {
                    true => e.context(format!("suite {}, cell {}", plan.suite.name, cell.name())),
                    false => e,
                });
            }
        }
    }
    Ok(())
}

/// A results database that could not take a result: the run stops, what was measured is shown.
fn not_stored(e: anyhow::Error) -> anyhow::Error {
    e.context("the results database could not store the run (the results measured are printed, and written to --output when asked, but not stored)")
}

/// SNIA PTS's workload-independent preconditioning: the whole range written twice in 128 KiB
/// sequential writes, so what follows measures a used device rather than a fresh one. Built as
/// a cell like any other, so its workload obeys the same rules; not stored as a result.
fn precondition(plan: &Plan, target: &Target, state: &mut State) -> Result<()> {
    if !plan.precondition {
        return Ok(());
    }
    let cell = Cell {
        group: 0,
        layout: Layout::Plain,
        op: Op::Write,
        read_pct: 0,
        bs: PRECONDITION_BS,
        threads: 1,
        iodepth: PRECONDITION_DEPTH,
        sync: None,
        odsync: false,
        direct: None,
        length: Length::Data(crate::suite::Amount::Bytes(2 * target.range_bytes)),
        range: None,
        files: 1,
        origin: None,
    };
    let w = work::of(&cell, &plan.env, target.range_bytes, target.logical_block).map_err(usage)?;
    say!(
        "Preconditioning: writing the {} range twice in 128 KiB sequential writes ...",
        units::iec(target.range_bytes)
    );
    let begun = Instant::now();
    // Under --verify the preconditioning stamps its writes as the fill does.
    let stamp = state.verify.as_ref().map(|s| s.verifier(None));
    let ran = work::run(
        &w,
        target,
        &[],
        "precondition",
        !plan.output.json,
        None,
        stamp.as_ref(),
    )?;
    if let Some(e) = ran.m.error {
        return Err(e.context("preconditioning"));
    }
    let took = begun.elapsed();
    say!(
        "  done in {} ({})",
        units::duration(took),
        units::mb_s(ran.m.bytes as f64 / took.as_secs_f64().max(1e-9))
    );
    state.precondition_s = Some(took.as_secs_f64());
    state.notes.push(format!(
        "preconditioned: the {} range was written twice in 128 KiB sequential writes ({} in {}) before the first measurement, as the SNIA PTS asks",
        units::iec(target.range_bytes),
        units::iec(ran.m.bytes),
        units::duration(took)
    ));
    Ok(())
}

const PRECONDITION_BS: u64 = 128 << 10;
const PRECONDITION_DEPTH: u32 = 32;

/// A suite in rounds (SNIA PTS): every cell once per round, until the tracked cell's IOPS over
/// the last `window` rounds pass the steady-state test (`iogauge_analyze::snia_window`), at
/// most `max` rounds. Each cell's result is its measurement window: the last `window` rounds
/// folded as repeats, so their spread is the result's confidence interval. Rounds keep only
/// the window's measurements in memory; the results are stored when the loop ends.
fn run_rounds(
    plan: &Plan,
    rounds: &crate::suite::Rounds,
    works: &[Result<Work, String>],
    target: &Target,
    state: &mut State,
    rec: &mut Recorder,
) -> Result<()> {
    let cells = &plan.cells;
    let runnable: Vec<usize> = (0..cells.len()).filter(|&i| works[i].is_ok()).collect();
    let (op, pct, bs) = rounds.track;
    let tracked = runnable
        .iter()
        .copied()
        .find(|&i| cells[i].op == op && cells[i].read_pct == pct && cells[i].bs == bs)
        .ok_or_else(|| {
            usage("the cell that decides steady state cannot run on this target (see the notes)")
        })?;
    let max = plan.max_rounds.unwrap_or(rounds.max);
    let th = iogauge_analyze::Thresholds::default();
    let mut window: Vec<std::collections::VecDeque<Ran>> = (0..cells.len())
        .map(|_| std::collections::VecDeque::new())
        .collect();
    let mut doc = crate::model::RoundsDoc {
        tracked: cells[tracked].name(),
        window: rounds.window,
        max_rounds: max,
        precondition_s: state.precondition_s,
        ..Default::default()
    };
    let mut failure = None;
    'rounds: for round in 1..=max {
        for (k, &i) in runnable.iter().enumerate() {
            if crate::interrupt::requested().is_some() {
                break 'rounds;
            }
            let Ok(work) = &works[i] else { continue };
            let prefix = format!(
                "[round {round}/{max} · {}/{}] {}",
                k + 1,
                runnable.len(),
                cells[i].name()
            );
            let ran = match work::run(work, target, &[], &prefix, !plan.output.json, None, None) {
                Ok(r) => r,
                Err(e) => {
                    failure = Some(e);
                    break 'rounds;
                }
            };
            let iops = ran.m.ios as f64 / ran.m.runtime_s;
            let cut = ran.m.interrupted.is_some();
            if let Some(e) = &ran.m.error {
                failure = Some(anyhow::anyhow!("{e:#}"));
            }
            if i == tracked && !cut && failure.is_none() {
                doc.iops_per_round.push(iops);
                say!(
                    "[round {round}/{max}] {}: {} IOPS",
                    cells[i].name(),
                    units::count(iops)
                );
            }
            if cut || failure.is_some() {
                break 'rounds;
            }
            window[i].push_back(ran);
            if window[i].len() > rounds.window {
                window[i].pop_front();
            }
        }
        let n = doc.iops_per_round.len();
        if n >= rounds.window {
            let w = iogauge_analyze::snia_window(&doc.iops_per_round[n - rounds.window..]);
            let mean = w.mean.abs().max(f64::MIN_POSITIVE);
            doc.excursion_frac = Some(w.excursion / mean);
            doc.slope_excursion_frac = Some(w.slope_excursion / mean);
            if w.steady(&th) {
                doc.steady_at_round = Some(round);
                say!(
                    "steady state in round {round}: rounds {}–{round} span {:.1}% (limit {:.0}%), trend {:.1}% (limit {:.0}%)",
                    round + 1 - rounds.window as u32,
                    w.excursion / mean * 100.0,
                    th.steady_excursion * 100.0,
                    w.slope_excursion / mean * 100.0,
                    th.steady_slope * 100.0
                );
                break;
            }
        }
    }
    for &i in &runnable {
        let rans: Vec<Ran> = window[i].drain(..).collect();
        if rans.is_empty() {
            continue;
        }
        let r = fold::result(rans, target, Some(cells[i].name()));
        let stored = rec.add(&r);
        state.results.push(r);
        state.cell_of.push(i);
        stored.map_err(not_stored)?;
    }
    state.rounds = Some(doc);
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Steps of the rate search after the unthrottled run: each halves the interval the answer is
/// in, so the answer is within 1/2^SEARCH_STEPS of the unthrottled IOPS.
const SEARCH_STEPS: u32 = 6;

/// `--latency-target`: the highest rate whose percentile stays under the target. First the
/// workload as fast as it goes (if that keeps the target, it is the answer), then a binary
/// search of the rate between 0 and those IOPS. Every step is a result, so the curve of latency
/// against rate is in the run; the answer is a finding.
fn latency_search(
    plan: &Plan,
    lt: crate::workload::LatencyTarget,
    works: &[Result<Work, String>],
    target: &Target,
    state: &mut State,
    rec: &mut Recorder,
) -> Result<()> {
    let Some((i, Ok(Work::One { spec, start, len }))) = works.iter().enumerate().next() else {
        return Err(usage("--latency-target takes one plain workload"));
    };
    let q = lt.percentile / 100.0;
    let mut step = |rate: Option<f64>, state: &mut State| -> Result<Option<(f64, f64)>> {
        let mut s = spec.clone();
        s.rate_per_thread = rate.map(|r| r / f64::from(s.threads));
        let w = Work::One {
            spec: s,
            start: *start,
            len: *len,
        };
        let label = match rate {
            Some(r) => format!("rate {} IOPS", units::count(r)),
            None => "unthrottled".to_string(),
        };
        let ran = work::run(&w, target, &[], &label, !plan.output.json, None, None)?;
        if ran.m.interrupted.is_some() || ran.m.error.is_some() {
            return Ok(None);
        }
        let lat = ran.m.hist.value_at_quantile(q) as f64;
        let mut r = fold::result(vec![ran], target, Some(label));
        let iops = r.iops;
        say!(
            "{}: {} IOPS · p{} {}",
            r.name.as_deref().unwrap_or(""),
            units::count(iops),
            lt.percentile,
            units::latency(lat)
        );
        r.findings.clear();
        let stored = rec.add(&r);
        state.results.push(r);
        state.cell_of.push(i);
        stored.map_err(not_stored)?;
        Ok(Some((iops, lat)))
    };
    let limit = lt.limit.as_nanos() as f64;
    let Some((max_iops, max_lat)) = step(None, state)? else {
        return Ok(());
    };
    let mut curve = vec![(max_iops, max_lat)];
    let (mut lo, mut hi) = (0.0, max_iops);
    let mut best = (max_lat <= limit).then_some((max_iops, max_lat));
    // The lowest rate asked, with what it achieved: what a failed search reports, so the
    // answer names a rate that was really tried.
    let mut lowest: Option<(f64, f64, f64)> = None;
    if best.is_none() {
        for _ in 0..SEARCH_STEPS {
            let rate = (lo + hi) / 2.0;
            let Some((iops, lat)) = step(Some(rate), state)? else {
                break;
            };
            curve.push((iops, lat));
            if lowest.is_none_or(|l| rate < l.0) {
                lowest = Some((rate, iops, lat));
            }
            // A rate counts as kept only when it was also achieved.
            if lat <= limit && iops >= 0.98 * rate {
                best = Some((iops, lat));
                lo = rate;
            } else {
                hi = rate;
            }
        }
    }
    state.latency_answer = Some(match best {
        Some((iops, lat)) => format!(
            "the highest rate with p{} under {}: {} IOPS (p{} {}), found in {} run{}",
            lt.percentile,
            units::latency(lt.limit.as_nanos() as f64),
            units::count(iops),
            lt.percentile,
            units::latency(lat),
            curve.len(),
            crate::units::plural(curve.len())
        ),
        None => match lowest {
            Some((rate, iops, lat)) => format!(
                "no rate kept p{} under {}: at the lowest rate tried, {} IOPS asked ({} achieved), it was {}",
                lt.percentile,
                units::latency(lt.limit.as_nanos() as f64),
                units::count(rate),
                units::count(iops),
                units::latency(lat)
            ),
            None => format!(
                "no rate kept p{} under {}: unthrottled it was {} at {} IOPS, and no slower rate could be tried",
                lt.percentile,
                units::latency(lt.limit.as_nanos() as f64),
                units::latency(max_lat),
                units::count(max_iops)
            ),
        },
    });
    state.latency_lowest = lowest;
    state.latency_best = best.map(|b| b.0);
    Ok(())
}

/// Calls `once` (with a progress label naming the repeat) `--repeat` times, dropping the page
/// cache between repeats when asked; stops early on an interrupt or an error.
fn repeated(
    plan: &Plan,
    notes: &mut Vec<String>,
    prefix: &str,
    mut once: impl FnMut(String) -> Result<Ran>,
) -> Result<Vec<Ran>> {
    let n = plan.repeat.n;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        if i > 0 && plan.repeat.drop_caches {
            if let Err(why) = drop_caches() {
                let note = format!(
                    "--drop-caches: the page cache was not dropped between repeats ({why})"
                );
                if !notes.contains(&note) {
                    say!("note: {note}");
                    notes.push(note);
                }
            }
        }
        let label = match (prefix.is_empty(), n) {
            (_, 1) => prefix.to_string(),
            (false, _) => format!("{prefix} [repeat {}/{n}]", i + 1),
            (true, _) => format!("repeat {}/{n}", i + 1),
        };
        let r = once(label)?;
        let stop = r.m.interrupted.is_some() || r.m.error.is_some();
        out.push(r);
        if stop || crate::interrupt::requested().is_some() {
            break;
        }
    }
    Ok(out)
}

/// Empties the page cache between repeats: sync(2), then 3 into /proc/sys/vm/drop_caches
/// (root only), as the PostgreSQL and MySQL studies' authors did by hand before each run.
pub fn drop_caches() -> std::result::Result<(), String> {
    iogauge_engine::sys::sync_all();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| match e.kind() {
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

/// A direct IO the kernel refused for its size: small blocks under O_DIRECT on a device whose
/// logical block sysfs did not tell. The suite goes on without the cell, as bm-flash's tables
/// leave a cell blank.
fn refused_block(error: &str, bs: u64, direct: bool) -> bool {
    direct && bs < 4096 && error.contains("Invalid argument")
}

/// The files of a `--files` cell, next to the run's test file, filled like it and removed
/// after the cell.
fn seek_files(target: &Target, files: u32, seed: u64) -> Result<Vec<Target>> {
    let dir = target
        .path
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let size = work::file_size(target.range_bytes, files);
    say!(
        "Creating {files} files of {} for the seeks ...",
        units::iec(size)
    );
    let begun = Instant::now();
    let mut out = Vec::with_capacity(files as usize);
    for i in 0..files {
        let path = dir.join(format!("iogauge-seeks.{}.{i}", std::process::id()));
        out.push(target::prepare(&target::Request {
            path: Some(&path),
            size: Some(size),
            created_size: size,
            offset: 0,
            keep: false,
            allow_overwrite: false,
            writes: false,
            seed: seed.wrapping_add(u64::from(i)),
            quiet: true,
            verify: None,
        })?);
    }
    say!(
        "Created {files} files in {}",
        units::duration(begun.elapsed())
    );
    Ok(out)
}

/// `--until-change`: whether the live samples (IOPS per ~100 ms tick) hold a change of regime
/// that has settled. Judged once a second of samples: the test is linear in the run's length.
fn changed(iops: &[f64], tick: Duration) -> bool {
    let per_s = (1.0 / tick.as_secs_f64()).round().max(1.0) as usize;
    if iops.is_empty() || !iops.len().is_multiple_of(per_s) {
        return false;
    }
    let bin_s = tick.as_secs_f64();
    let ios: Vec<u32> = iops
        .iter()
        .map(|r| (r * bin_s).round().clamp(0.0, f64::from(u32::MAX)) as u32)
        .collect();
    iogauge_analyze::settled(&ios, bin_s, &iogauge_analyze::Thresholds::default())
}

/// The run's remaining time, from each cell's planned time; fixed-data cells are estimated
/// from the rate the finished ones moved data at (or 100 MB/s before any finished).
#[derive(Default)]
struct Eta {
    data_bytes: f64,
    data_secs: f64,
    /// Start-up and wind-down per cell beyond its planned time.
    overhead_secs: f64,
    timed: u32,
}

impl Eta {
    fn record(&mut self, cell: &Cell, r: &ResultDoc, took: Duration) {
        match cell.planned_time() {
            Some(t) => {
                self.overhead_secs += (took.as_secs_f64() - t.as_secs_f64()).max(0.0);
                self.timed += 1;
            }
            None => {
                self.data_bytes += r.bytes as f64;
                self.data_secs += took.as_secs_f64();
            }
        }
    }

    fn left<'a>(&self, cells: impl Iterator<Item = &'a Cell>, range: u64) -> String {
        let rate = if self.data_secs > 0.0 {
            self.data_bytes / self.data_secs
        } else {
            100e6
        };
        let per_cell = if self.timed > 0 {
            self.overhead_secs / f64::from(self.timed)
        } else {
            0.0
        };
        let secs: f64 = cells
            .map(|c| match c.length {
                Length::Time(t) => t.as_secs_f64() + per_cell,
                Length::Data(a) => {
                    let span = c.range.map_or(range, |r| r.min(range));
                    cells::data_bytes(a, span) as f64 / rate.max(1.0)
                }
            })
            .sum();
        units::duration(Duration::from_secs_f64(secs))
    }
}

/// One finished cell, for the log on stderr.
fn one_line(cell: &Cell, r: &ResultDoc) -> String {
    // Each p99 says what it is the p99 of: a sync cell has two.
    let what = match (&r.read, &r.write) {
        (Some(_), None) => "read",
        (None, Some(_)) => "write",
        _ => "IO",
    };
    let mut s = format!(
        "{}: {} IOPS · {} · {what} p99 {}",
        cell.name(),
        units::count(r.iops),
        units::mib_s(r.bw_bytes),
        units::latency(r.lat_ns.p99 as f64)
    );
    if let Some(sy) = &r.sync {
        s.push_str(&format!(
            " · {} syncs/s · sync p99 {}",
            units::count(sy.per_s),
            units::latency(sy.lat_ns.p99 as f64)
        ));
    }
    if r.interrupted {
        s.push_str(" (interrupted)");
    }
    s
}

/// What the reader of the numbers must know: the target's and engine's honesty notes once
/// each, the cells that did not run and why, and how copy, `--files` and `--until-stable`
/// were measured.
fn notes_of(
    plan: &Plan,
    works: &[Result<Work, String>],
    state: &State,
    target: &Target,
) -> Vec<String> {
    let cells = &plan.cells;
    let mut notes: Vec<String> = Vec::new();
    let mut add = |n: String| {
        if !notes.contains(&n) {
            notes.push(n);
        }
    };
    // A working set that fits a cache measures the cache: RAM's page cache for buffered IO, a
    // RAID controller's or a drive's for direct IO (the 2009 SSD studies' controllers held
    // 4–8 GB and their xdd runs read 16 GB of a 64 GB file for that reason).
    if plan.env.ram > 0 {
        let share = target.range_bytes as f64 * 100.0 / plan.env.ram as f64;
        add(format!(
            "working set {} ({} of the {} of RAM); a cache below the target larger than that can hold all of it",
            units::iec(target.range_bytes),
            if share < 1.0 { "under 1%".to_string() } else { format!("{share:.0}%") },
            units::iec(plan.env.ram)
        ));
    }
    for w in works.iter().flatten() {
        for spec in w.specs() {
            for n in honesty_notes(spec, target) {
                add(n);
            }
        }
    }
    for (i, w) in works.iter().enumerate() {
        if let Err(reason) = w {
            add(format!("skipped {}: {reason}", cells[i].name()));
        }
    }
    for (i, reason) in &state.refused {
        add(format!(
            "skipped {}: the target refused its block size under O_DIRECT ({reason})",
            cells[*i].name()
        ));
    }
    if plan.env.engine == EngineKind::Psync && cells.iter().any(|c| c.iodepth > 1) {
        add("psync keeps one IO in flight per thread: cells with N IOs in flight ran N times the threads instead".into());
    }
    if cells.iter().any(|c| c.op == Op::Copy) {
        add("copy reads the first half of the test file while writing the second half, as cp reads one file while writing another; its result counts both streams (bytes read + written), its copy rate is half of that".into());
    }
    if let Some(c) = cells.iter().find(|c| c.files > 1) {
        add(format!(
            "--files {}: the seeks read {} files in turn, an equal share of the cell's time each (at least {}), and their results are merged; sysbench picks a file per IO, so on a rotating disk iogauge's seeks span one file at a time and are shorter",
            c.files,
            c.files,
            units::duration(work::MIN_SLICE)
        ));
    }
    if plan.until == Until::Change {
        add(format!(
            "--until-change: each timed cell stopped once its rate had moved to another level and held there for {} and a quarter of the time before the change, or at its time limit; the change is the `regime` finding's (a mean shift in 100 ms samples)",
            units::duration(Duration::from_secs_f64(iogauge_analyze::MIN_HOLD_S))
        ));
    }
    if plan.until == Until::Stable {
        add(format!(
            "--until-stable: each timed cell stopped once its IOPS had a 95% confidence interval within ±{:.0}% (after at least {}), or at --cell-time; the interval comes from batch means of 100 ms samples, batched until they are nearly uncorrelated; a rule checked after every sample still stops early on a lucky streak more often than 5% of the time",
            stable::REL_HALF_WIDTH * 100.0,
            units::duration(stable::MIN_TIME)
        ));
    }
    // Said once for the run rather than as a finding per cell: a short cell is a choice of the
    // suite, not a fault of the storage.
    let window = iogauge_analyze::min_intervals(iogauge_analyze::STEADY_WINDOW);
    if plan.suite.rounds.is_none()
        && state
            .results
            .iter()
            .any(|r| r.timeseries.len() < window && !r.interrupted && !r.is_db())
    {
        let interval = state.results.first().map_or(1.0, |r| r.workload.interval_s);
        add(format!(
            "steady state was not judged: a cell needs {window} intervals of {} (cells of {} or longer) before the SNIA PTS test can tell a settled device from a drifting one",
            units::duration(Duration::from_secs_f64(interval)),
            units::duration(Duration::from_secs_f64(interval * window as f64))
        ));
    }
    if plan.kind == Kind::Suite
        && plan.suite.groups.iter().any(|g| g.layout == Layout::Seq)
        && plan.env.direct
    {
        add("the sequential cells use O_DIRECT, where dd and bonnie++ go through the page cache; add --buffered to compare with them (each result then says whether its data could come from RAM)".into());
    }
    notes
}

/// What the user must know to read one workload's numbers right.
fn honesty_notes(spec: &crate::workload::Spec, target: &Target) -> Vec<String> {
    let mut notes = Vec::new();
    if !spec.direct {
        notes.push(
            "buffered IO goes through the page cache: reads of a working set that fits in RAM and writes not yet flushed measure memory, not the device".into(),
        );
    }
    if spec.engine == EngineKind::Null {
        notes.push(
            "null engine: no IO reached the target; these numbers are iogauge's own overhead"
                .into(),
        );
    }
    if let Some(data) = target.data_bytes {
        if !target.created && data < target.range_bytes && !spec.writes() {
            notes.push(format!(
                "{} of the {} range hold no data (holes or unwritten extents read as zeros without touching the disk); fill the file first or let iogauge create one",
                units::iec(target.range_bytes - data),
                units::iec(target.range_bytes)
            ));
        }
    }
    notes
}

/// Per result: when its IOPS met the stability rule, judged on the same 100 ms samples the
/// live rule saw (the fine bins of the result).
fn stability(cells: &[Cell], cell_of: &[usize], results: &[ResultDoc]) -> Vec<Stability> {
    results
        .iter()
        .zip(cell_of)
        .enumerate()
        .filter_map(|(i, (r, &ci))| {
            let max = cells[ci].planned_time()?;
            let bin = r.fine.bin_s.max(1e-3);
            // Whole bins only: a run stopped mid-bin leaves a short last one; and the first bin
            // holds the workers' start, which the live rule (starting at its first tick) never
            // saw either.
            let whole = ((r.runtime_s / bin) + 1e-6).floor() as usize;
            let iops: Vec<f64> = r
                .fine
                .ios
                .iter()
                .take(whole)
                .skip(1)
                .map(|&n| f64::from(n) / bin)
                .collect();
            let rule = Rule::new(max);
            Some(Stability {
                result: i,
                name: cells[ci].name(),
                ran: Duration::from_secs_f64(r.runtime_s),
                stable: rule.stable_after(&iops, Duration::from_secs_f64(bin)),
                full: stable::rel_half_width(&iops),
            })
        })
        .collect()
}

/// The suite's own findings: where a seq result's data came from, and when a cell was stable.
fn add_findings(
    doc: &mut RunDoc,
    cells: &[Cell],
    cell_of: &[usize],
    stab: Option<&[Stability]>,
    ram: u64,
) {
    for (i, &ci) in cell_of.iter().enumerate() {
        let mut new = Vec::new();
        let r = &doc.results[i];
        let has_cache = r
            .findings
            .iter()
            .any(|f| crate::analysis::is(f, iogauge_analyze::Kind::Cache));
        if cells[ci].layout == Layout::Seq && !has_cache {
            let ws = tables::working_set(r);
            let src = Source::of(r.workload.direct, ws, ram);
            let mut f = finding(FindingKind::Cache, src.describe().to_string(), i);
            f.evidence.insert("working_set_bytes".into(), ws as f64);
            f.evidence.insert("mem_total_bytes".into(), ram as f64);
            if src == Source::Cache {
                f.severity = Severity::Warning;
                f.advice =
                    "Use --direct, or a --size larger than RAM, so the device answers.".into();
            }
            new.push(f);
        }
        if let Some(s) = stab.and_then(|all| all.iter().find(|s| s.result == i)) {
            let summary = match s.stable {
                Some((t, h)) => format!(
                    "IOPS stable (±{:.1}% at 95% confidence) after {} of {}",
                    h * 100.0,
                    units::duration(t),
                    units::duration(s.ran)
                ),
                None => format!("IOPS not stable to ±3% within {}", units::duration(s.ran)),
            };
            let mut f = finding(FindingKind::Steady, summary, i);
            f.evidence.insert("ran_s".into(), s.ran.as_secs_f64());
            if let Some((t, h)) = s.stable {
                f.evidence.insert("stable_after_s".into(), t.as_secs_f64());
                f.evidence.insert("ci95_half_width_frac".into(), h);
            }
            if let Some(h) = s.full {
                f.evidence.insert("ci95_half_width_frac_at_end".into(), h);
            }
            new.push(f);
        }
        for f in new {
            if let Ok(v) = serde_json::to_value(&f) {
                doc.results[i].findings.push(v.clone());
                doc.findings.push(v);
            }
        }
    }
}

/// `probe cache`: the cache size fitted to the random reads' mean latency by working set.
fn probe_finding(
    cells: &[Cell],
    cell_of: &[usize],
    results: &[ResultDoc],
    target: &Target,
) -> Option<Finding> {
    let probes: Vec<(f64, &ResultDoc)> = cell_of
        .iter()
        .zip(results)
        .filter(|(&c, r)| cells[c].op == Op::Randread && r.ios > 0)
        .filter_map(|(&c, r)| Some((cells[c].range? as f64, r)))
        .collect();
    let (lo, hi) = (probes.first()?.0, probes.last()?.0);
    // Each step's share of reads at or under a latency, from its histogram.
    let shares: Vec<Box<dyn Fn(f64) -> f64 + '_>> = probes
        .iter()
        .map(|(_, r)| {
            let total: u64 = r.lat_hist.iter().map(|b| b[1]).sum();
            Box::new(move |t: f64| {
                let under: u64 = r
                    .lat_hist
                    .iter()
                    .filter(|b| b[0] as f64 <= t)
                    .map(|b| b[1])
                    .sum();
                under as f64 / total.max(1) as f64
            }) as Box<dyn Fn(f64) -> f64>
        })
        .collect();
    let steps: Vec<iogauge_analyze::Step> = probes
        .iter()
        .zip(&shares)
        .map(|((w, r), f)| iogauge_analyze::Step {
            bytes: *w,
            median_ns: r.lat_ns.p50 as f64,
            p90_ns: r.lat_ns.p90 as f64,
            share_under: f.as_ref(),
        })
        .collect();
    let knee = iogauge_analyze::cache_knee(&steps);
    let on = target.device.as_deref().unwrap_or("the target");
    let mut f = match knee {
        Some(k) if k.cache_bytes >= hi => Finding {
            kind: FindingKind::Cache,
            severity: Severity::Info,
            summary: format!(
                "random reads stay at {} up to the whole {} probed: a cache of at least that size sits in the stack of {on}",
                units::latency(k.hit_ns),
                units::iec(hi as u64)
            ),
            evidence: BTreeMap::new(),
            advice: "Measure with a working set larger than this (a larger --size), or these results come from the cache.".into(),
            result: None,
        },
        Some(k) => Finding {
            kind: FindingKind::Cache,
            severity: Severity::Info,
            summary: format!(
                "reads within ~{} are served {:.0}× faster ({} against {}): a cache of about {} sits in the stack of {on}",
                units::iec(k.cache_bytes as u64),
                k.miss_ns / k.hit_ns,
                units::latency(k.hit_ns),
                units::latency(k.miss_ns),
                units::iec(k.cache_bytes as u64)
            ),
            evidence: BTreeMap::new(),
            advice: "Give runs on this stack a working set well beyond the cache (--size), or they measure the cache.".into(),
            result: None,
        },
        None => Finding {
            kind: FindingKind::Cache,
            severity: Severity::Info,
            summary: format!(
                "no cache shows between {} and {}: random reads take about as long over every working set",
                units::iec(lo as u64),
                units::iec(hi as u64)
            ),
            evidence: BTreeMap::new(),
            advice: String::new(),
            result: None,
        },
    };
    if let Some(k) = knee {
        f.evidence.insert("cache_bytes".into(), k.cache_bytes);
        f.evidence.insert("hit_ns".into(), k.hit_ns);
        f.evidence.insert("miss_ns".into(), k.miss_ns);
        f.evidence.insert("threshold_ns".into(), k.threshold_ns);
    }
    Some(f)
}

/// Steady state by rounds, as the SNIA PTS states it: reached (and when), or not within the
/// rounds allowed, with the window's numbers.
fn rounds_finding(r: &crate::model::RoundsDoc) -> Option<Finding> {
    let (ex, sl) = (r.excursion_frac?, r.slope_excursion_frac?);
    let numbers = format!(
        "the last {} rounds of {} span {:.1}% of their mean (limit 20%) with a trend of {:.1}% (limit 10%)",
        r.window,
        r.tracked,
        ex * 100.0,
        sl * 100.0
    );
    let mut f = match r.steady_at_round {
        Some(n) => Finding {
            kind: FindingKind::Steady,
            severity: Severity::Info,
            summary: format!("steady state (SNIA PTS) in round {n}: {numbers}"),
            evidence: BTreeMap::new(),
            advice: "The results are the measurement window: the last rounds of every cell.".into(),
            result: None,
        },
        None => Finding {
            kind: FindingKind::Steady,
            severity: Severity::Warning,
            summary: format!(
                "no steady state (SNIA PTS) within {} rounds: {numbers}",
                r.iops_per_round.len()
            ),
            evidence: BTreeMap::new(),
            advice: "Run more rounds (--max-rounds) or longer ones (--cell-time); a device still drifting after 25 rounds is reported as such by the specification.".into(),
            result: None,
        },
    };
    f.evidence.insert("excursion_frac".into(), ex);
    f.evidence.insert("slope_excursion_frac".into(), sl);
    f.evidence
        .insert("rounds".into(), r.iops_per_round.len() as f64);
    Some(f)
}

fn finding(kind: FindingKind, summary: String, result: usize) -> Finding {
    Finding {
        kind,
        severity: Severity::Info,
        summary,
        evidence: BTreeMap::new(),
        advice: String::new(),
        result: Some(result),
    }
}
