//! The notes a run's reader must know: honesty about the target and engine, and the cells
//! that did not run.

use super::work::{self, Work};
use super::State;
use crate::plan::{Kind, Plan, Until};
use crate::suite::stable::{self};
use crate::suite::{Layout, Op};
use crate::target::Target;
use crate::units;
use anyhow::Result;
use iogauge_engine::EngineKind;
use std::time::Duration;

/// What the reader of the numbers must know: the target's and engine's honesty notes once
/// each, the cells that did not run and why, and how copy, `--files` and `--until-stable`
/// were measured.
pub(super) fn notes_of(
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
    // The null engine reaches no cache (nor anything else): the null engine's note says so.
    if plan.env.ram > 0 && plan.env.engine != EngineKind::Null {
        let share = target.all_bytes() as f64 * 100.0 / plan.env.ram as f64;
        add(format!(
            "working set {} ({} of the {} of RAM); a cache below the target larger than that can hold all of it",
            units::iec(target.all_bytes()),
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
    // The cells a read-only target skips share one reason, which the plan gave already: one
    // note says it, not one per cell (Orion's mixes skip 22).
    let writers = works
        .iter()
        .filter(|w| w.as_ref().err().map(String::as_str) == Some(super::READ_ONLY))
        .count();
    if writers > 1 {
        add(format!(
            "skipped the {writers} cells that write: an existing file or device is written only with --allow-overwrite"
        ));
    }
    for (i, w) in works.iter().enumerate() {
        match w {
            Err(reason) if writers > 1 && reason == super::READ_ONLY => {}
            Err(reason) => add(format!("skipped {}: {reason}", cells[i].name())),
            Ok(_) => {}
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
pub(super) fn honesty_notes(spec: &crate::workload::Spec, target: &Target) -> Vec<String> {
    let mut notes = Vec::new();
    if !spec.direct && spec.engine != EngineKind::Null {
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

/// A result whose IO errors were gone on after (fio's continue_on_error) says how many, the
/// first, and that its numbers leave them out.
pub(super) fn ignored_errors(results: &[crate::model::ResultDoc]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| {
            let e = r.ignored_errors.as_ref()?;
            Some(format!(
                "{}: {} IO error{} counted and gone on after (continue_on_error), the first a {}; the numbers leave those IOs out",
                r.name.as_deref().unwrap_or("the run"),
                e.count,
                if e.count == 1 { "" } else { "s" },
                e.first
            ))
        })
        .collect()
}
