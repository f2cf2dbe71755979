//! Every byte the user reads: a run's JSON document, or for people its summary (`summary`) or a
//! suite's tables (`tables`), then the notes and findings; the plan before a run, the stored
//! results, comparisons, sweeps, database runs, fio's JSON, CSV, and what `clean` did. One
//! stream rule for every command: results and findings on stdout, progress and errors on stderr.

use crate::model::RunDoc;
use crate::plan::{Kind, Plan};
use crate::target::Target;
use crate::units;
use anyhow::{Context, Result};
use tables::Stability;

pub mod advise;
pub mod compare;
pub mod csv;
pub mod db;
pub mod export;
pub mod findings;
pub mod fio_json;
pub mod fleet;
pub mod plan;
pub mod results;
pub mod stats;
pub mod streams;
pub mod summary;
pub mod sweep;
pub mod table;
pub mod tables;
pub mod timeline;
pub mod verify;

pub use tables::Outcome;

/// A finished run as the plan asks: the document on stdout (and in `--output`), then on
/// stderr the id it was stored under.
pub fn run(plan: &Plan, ran: &crate::exec::Executed) -> Result<()> {
    let outcomes: Vec<Outcome> = plan
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| Outcome {
            cell: c,
            result: ran.result_of[i].map(|r| &ran.doc.results[r]),
            skipped: ran.skipped[i].as_deref(),
        })
        .collect();
    emit(
        plan,
        &ran.doc,
        &outcomes,
        &ran.target,
        ran.stability.as_deref(),
    )?;
    if let Some(id) = ran.stored_as {
        say!("stored as run {id} (`iogauge show {id}`)");
    }
    Ok(())
}

/// Prints the run on stdout as the plan asks.
fn emit(
    plan: &Plan,
    doc: &RunDoc,
    outcomes: &[Outcome],
    target: &Target,
    stability: Option<&[Stability]>,
) -> Result<()> {
    // --baseline: what people read gives a result that changed regime at its later level; the
    // document (JSON, the store) keeps the measured averages and both levels in the finding.
    let mut later = None;
    if plan.output.baseline {
        let mut d = doc.clone();
        let used = crate::analysis::use_baseline(&mut d);
        later = Some((d, crate::analysis::baseline_said(&used)));
    }
    let orig = doc;
    let human = || {
        let (doc, said) = match &later {
            Some((d, said)) => (d, said.as_str()),
            None => (doc, ""),
        };
        // Said first, so no number below is read as the other level.
        let mut s = said.to_string();
        s += &match plan.kind {
            // A latency-target search: its steps as one curve, then the answer.
            Kind::Run if plan.latency_target.is_some() && doc.results.len() > 1 => {
                let lt = plan.latency_target.expect("checked above");
                let mut s = latency_curve(doc, lt);
                s.push_str(&crate::present::findings::text(&doc.findings));
                s
            }
            Kind::Run => {
                let mut s = crate::present::summary::run(doc);
                for (i, r) in doc.results.iter().enumerate() {
                    if !r.stats.is_empty() {
                        s.push('\n');
                        s.push_str(&stats::text(i, r));
                    }
                }
                s.push_str(&crate::present::findings::text(&doc.findings));
                s
            }
            Kind::Suite if plan.probe => probe_text(doc, outcomes),
            Kind::Suite => {
                // The tables read each cell's result through its outcome: point them at the
                // same results of the document shown.
                let shown: Vec<Outcome> = outcomes
                    .iter()
                    .map(|o| Outcome {
                        result: o.result.and_then(|r| {
                            let i = outcome_index(&orig.results, r)?;
                            doc.results.get(i)
                        }),
                        ..*o
                    })
                    .collect();
                suite_text(plan, doc, &shown, target, stability)
            }
        };
        s
    };
    write_out(doc, plan.file.as_ref(), &plan.output, &human)
}

/// Writes a run's document: to `--output FILE` in its format, then on stdout as JSON or as
/// `human` has it. One writer for every command that ends in a run (run, suite, fio, db).
pub fn write_out(
    doc: &RunDoc,
    file: Option<&(std::path::PathBuf, crate::plan::Format)>,
    output: &crate::plan::Output,
    human: &dyn Fn() -> String,
) -> Result<()> {
    let as_json = || serde_json::to_string_pretty(doc).map(|s| s + "\n");
    // The file first: it is what a script waits for, and it must not depend on a terminal.
    if let Some((path, format)) = file {
        let text = export::of(*format, human).one(doc)?;
        crate::target::files::replace(path, text.as_bytes())
            .with_context(|| format!("writing --output {}", path.display()))?;
        say!("wrote {}", path.display());
    }
    let text = match (output.fio_json, output.json) {
        (true, _) => fio_json::run(doc),
        (false, true) => as_json()?,
        (false, false) => human(),
    };
    Ok(crate::ui::out(&text)?)
}

/// Which of `results` `r` is (by address: outcomes borrow the document's results).
fn outcome_index(
    results: &[crate::model::ResultDoc],
    r: &crate::model::ResultDoc,
) -> Option<usize> {
    results.iter().position(|x| std::ptr::eq(x, r))
}

/// A `--latency-target` search as one table: each step's rate asked, what it achieved, its
/// latency at the target's percentile and whether it kept the target (the unthrottled first
/// run only bounds the search: its latency counts from submission and is not judged).
fn latency_curve(doc: &RunDoc, lt: crate::workload::LatencyTarget) -> String {
    let limit = lt.limit.as_nanos() as f64;
    let mut rows = vec![vec![
        "step".to_string(),
        "rate asked".into(),
        "achieved".into(),
        format!("p{}", lt.percentile),
        "kept".into(),
    ]];
    for (i, r) in doc.results.iter().enumerate() {
        let lat = fio_json::quantile(&r.lat_hist, lt.percentile / 100.0) as f64;
        let (asked, kept) = match r.workload.rate_iops {
            Some(a) => (
                format!("{} IOPS", units::count(a)),
                match crate::exec::kept(a, r.iops, lat, limit) {
                    true => "yes",
                    false => "no",
                },
            ),
            None => ("unthrottled".into(), "the bound (not judged)"),
        };
        rows.push(vec![
            (i + 1).to_string(),
            asked,
            format!("{} IOPS", units::count(r.iops)),
            units::latency(lat),
            kept.to_string(),
        ]);
    }
    let w = doc
        .results
        .first()
        .map(crate::present::summary::workload_line);
    let mut s = format!(
        "Latency target p{} ≤ {}{}: the rates tried, latency from each IO's planned start\n\n",
        lt.percentile,
        units::latency(limit),
        w.map(|w| format!(" · {w}")).unwrap_or_default()
    );
    for line in table::table(&rows, &[true, true, true, true, false]).lines() {
        s.push_str(&format!("  {line}\n"));
    }
    s
}

/// What `iogauge fio` tells before it runs (and all `--dry-run` shows of the job's meaning).
pub fn plan_notes(notes: &[String]) -> String {
    notes.iter().map(|n| format!("note: {n}\n")).collect()
}

/// The convergence of a suite in rounds: the tracked cell's IOPS per round, the window marked.
fn rounds_text(r: &crate::model::RoundsDoc) -> String {
    let n = r.iops_per_round.len();
    let mut s = format!("Steady state (SNIA PTS): {} by round\n\n", r.tracked);
    let window_from = n.saturating_sub(r.window);
    for (i, v) in r.iops_per_round.iter().enumerate() {
        let mark = if i >= window_from { "  ◀ window" } else { "" };
        s.push_str(&format!(
            "  round {:>2}  {:>12} IOPS{mark}\n",
            i + 1,
            units::count(*v)
        ));
    }
    s.push_str(&match r.steady_at_round {
        Some(k) => format!("  steady in round {k} of at most {}\n\n", r.max_rounds),
        None => format!(
            "  not steady after {n} rounds (at most {})\n\n",
            r.max_rounds
        ),
    });
    s
}

/// A suite for people: what ran where, the study's tables, the summary, notes and findings.
fn suite_text(
    plan: &Plan,
    doc: &RunDoc,
    outcomes: &[Outcome],
    target: &Target,
    stab: Option<&[Stability]>,
) -> String {
    let suite = &plan.suite;
    let ram = plan.env.ram;
    let mut s = String::new();
    // A cell of several streams is one result per stream; their sum is no cell of its own.
    let ran = doc
        .results
        .iter()
        .filter(|r| !r.together.as_ref().is_some_and(|t| t.sum))
        .count();
    let where_ = if target.created && target.files() > 1 {
        format!(
            "{}, test files created by iogauge at {} and beside it (.1 to .{})",
            summary::files_of(target.files(), target.range_bytes),
            target.path.display(),
            target.files() - 1
        )
    } else if target.created {
        format!(
            "a test file of {} created by iogauge at {}",
            units::iec(target.range_bytes),
            target.path.display()
        )
    } else {
        let region = match target.offset {
            0 => String::new(),
            o => format!(" from {}", units::iec(o)),
        };
        format!(
            "{} ({} used{region} of {})",
            target.path.display(),
            units::iec(target.range_bytes),
            units::iec(target.total_bytes)
        )
    };
    // Each engine and way of IO the cells used, in the order they first did (a fio file's
    // jobs may each have their own).
    let mut engines: Vec<&str> = Vec::new();
    let mut ways: Vec<&str> = Vec::new();
    for w in doc.results.iter().map(|r| &r.workload) {
        let way = if w.direct { "O_DIRECT" } else { "buffered" };
        if !engines.contains(&w.engine.as_str()) {
            engines.push(&w.engine);
        }
        if !ways.contains(&way) {
            ways.push(way);
        }
    }
    let how = (!engines.is_empty())
        .then(|| format!("{} · {}", engines.join(" and "), ways.join(" and ")));
    s.push_str(&format!(
        "suite {} — {}\n{} of {} cells on {}{}\n\n",
        suite.name,
        suite.description,
        ran,
        outcomes.len(),
        where_,
        how.map(|h| format!(" · {h}")).unwrap_or_default()
    ));
    s.push_str(&tables::render(suite, outcomes, ram, &doc.results));
    if let Some(t) = streams::commits(&doc.results) {
        s.push_str(&t);
    }
    if let Some(rows) = stab {
        s.push_str("Stability (--until-stable)\n\n");
        s.push_str(&tables::stability(rows));
        s.push('\n');
    }
    if let Some(r) = &doc.rounds {
        s.push_str(&rounds_text(r));
    }
    s.push_str(&tables::summary(suite, outcomes));
    let repeats = stats::suite_table(
        &doc.results,
        doc.rounds
            .as_ref()
            .map(crate::model::RoundsDoc::first_in_window),
    );
    if !repeats.is_empty() {
        s.push('\n');
        s.push_str(&repeats);
    }
    if doc.interrupted {
        s.push_str("\n(interrupted: the tables hold the cells that finished)\n");
    }
    for n in &doc.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    // The tables already say where each seq result's data came from; only warnings repeat it.
    let shown: Vec<iogauge_analyze::Finding> = doc
        .findings
        .iter()
        .filter(|f| {
            !(f.kind == iogauge_analyze::Kind::Cache
                && f.severity == iogauge_analyze::Severity::Info
                && f.result.is_some())
        })
        .cloned()
        .collect();
    s.push_str(&crate::present::findings::text(&shown));
    s
}

/// `probe cache`: random reads by working set, the warm-up reads that fill the cache before each
/// left out (they measure nothing the verdict uses), then the verdict and the notes.
fn probe_text(doc: &RunDoc, outcomes: &[Outcome]) -> String {
    let mut rows = vec![["working set", "IOPS", "p50", "p90", "p99"]
        .map(String::from)
        .to_vec()];
    for o in outcomes {
        let (Some(r), Some(range)) = (o.result, o.cell.range) else {
            continue;
        };
        if o.cell.op != crate::suite::Op::Randread {
            continue;
        }
        rows.push(vec![
            units::iec(range),
            units::count(r.iops),
            units::latency(r.lat_ns.p50 as f64),
            units::latency(r.lat_ns.p90 as f64),
            units::latency(r.lat_ns.p99 as f64),
        ]);
    }
    let bs = outcomes
        .iter()
        .find(|o| o.cell.op == crate::suite::Op::Randread)
        .map_or(4096, |o| o.cell.bs.bytes());
    let mut s = format!(
        "probe cache — random {} reads by working set, each after a sequential pass that warms it\n\n",
        units::iec(bs)
    );
    for line in table::table(&rows, &[false, true, true, true, true]).lines() {
        s.push_str(&format!("  {line}\n"));
    }
    s.push('\n');
    if doc.interrupted {
        s.push_str("(interrupted: the table holds the steps that finished)\n");
    }
    for n in &doc.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&crate::present::findings::text(&doc.findings));
    s
}

/// `fsync-check verify`'s verdict: of the acknowledged writes, how many were lost, and where
/// the first was with what the block held instead.
pub fn fsync_check(found: &crate::fsync_check::Outcome) -> String {
    let crate::fsync_check::Outcome { total, lost, first } = *found;
    match first {
        None => format!(
            "honest: 0 of {} acknowledged writes lost\n",
            units::count(total as f64)
        ),
        Some((offset, v)) => format!(
            "LIES: {} of {} acknowledged writes lost (first at offset {}: {v})\n",
            units::count(lost as f64),
            units::count(total as f64),
            units::count(offset as f64)
        ),
    }
}

/// The executor's hooks for a run someone watches: what the stack showed before the run is said
/// at once, before a long measurement.
pub struct Shown;

impl crate::exec::Hooks for Shown {
    fn found_before_run(&self, found: &[iogauge_analyze::Finding]) {
        say!("{}", findings::titled("before the run", found));
    }
}

/// What `iogauge clean` did, one line per thing a killed run left.
pub fn clean(done: &[crate::ledger::Outcome], dry_run: bool) -> String {
    if done.is_empty() {
        return "nothing to clean: no killed iogauge run left anything\n".into();
    }
    let mut out = String::new();
    for o in done {
        out.push_str(&format!(
            "{} (run pid {}): {}\n",
            units::printable(&o.what),
            o.pid,
            o.done
        ));
    }
    if dry_run {
        out.push_str("dry run: nothing was changed; run `iogauge clean` to remove these\n");
    }
    out
}
