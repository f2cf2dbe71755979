//! The cells in order, each with its repeats: the loop every run and suite goes through, and
//! the preconditioning before it.

use super::cell::{drop_cached, not_stored, repeated};
use super::fold;
use super::work::{self, Work};
use super::{
    progress::{one_line, Eta},
    State,
};
use crate::error::usage;
use crate::plan::{Kind, Plan, Until};
use crate::runner::StopWhen;
use crate::store::Recorder;
use crate::suite::cells::Cell;
use crate::suite::stable::{self, Rule};
use crate::suite::{Layout, Length, Op};
use crate::target::{self, Target};
use crate::units;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Runs the cells in order until all ran, a signal came, or one failed.
pub(super) fn run_cells(
    plan: &Plan,
    works: &[Result<Work, String>],
    (target, own): (&Target, &[Target]),
    state: &mut State,
    rec: &mut Recorder,
    hooks: &dyn super::Hooks,
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
        if ended_later(cells, (&runnable, k), state) {
            break;
        }
        // A cell of several streams runs once, from its first stream.
        if let Some(g) = cell.together {
            if k > 0 && cells[runnable[k - 1]].together == Some(g) {
                continue;
            }
            let members: Vec<usize> = runnable[k..]
                .iter()
                .copied()
                .take_while(|&j| cells[j].together == Some(g))
                .collect();
            if members.len() > 1 {
                if super::together::run(
                    plan,
                    works,
                    &members,
                    (target, own),
                    state,
                    rec,
                    (k, runnable.len()),
                )? {
                    break;
                }
                continue;
            }
        }
        // A stream's cell alone (a suite's `wal` alone) on the stream's own target, if any.
        let target = cell.target.map_or(target, |t| &own[t]);
        let prefix = match suite {
            true => {
                let left = eta.left(runnable[k..].iter().map(|&j| &cells[j]), target.range_bytes);
                let (at, n) = (k + 1, runnable.len());
                format!("[{at}/{n} · suite {left} left] {}", cell.name())
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
        let first = hooks.peer_may_stop();
        let stop = move |iops: &[f64]| {
            (first && hooks.peer_done())
                || match plan.until {
                    Until::Limit => false,
                    Until::Stable => rule.is_some_and(|r| {
                        matches!(r.check(iops, interval), stable::Verdict::Stable { .. })
                    }),
                    Until::Change => changed(iops, interval),
                }
        };
        let stop_when: Option<StopWhen> = (plan.until != Until::Limit || first).then_some(&stop);
        let session = state.verify.as_ref();
        let tracker = session.and_then(|s| s.tracker(i, work, target));
        let verifier = session.map(|s| s.verifier(tracker.as_ref(), target));
        // Under MPI: every rank starts the cell at once.
        hooks.before_cell()?;
        // fio's invalidate=1: a buffered cell starts without the target's pages cached.
        let invalidate = plan.env.invalidate && work.specs().iter().any(|s| !s.direct);
        let outcome = repeated(plan, &mut state.notes, &prefix, |label, held| {
            if invalidate {
                for t in std::iter::once(target).chain(&files) {
                    drop_cached(&t.path);
                }
            }
            let held = held.map(|b| work.holding(b));
            work::run(
                held.as_ref().unwrap_or(work),
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
            hooks.cell_done(ran.iter().any(|r| r.m.stopped_early));
        }
        drop(files);
        let direct = work.specs().iter().any(|s| s.direct);
        let refused =
            |e: &str, ios: u64| suite && ios == 0 && refused_block(e, cell.bs.bytes(), direct);
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
                    let t = tracker.as_ref().filter(|_| whole);
                    let read_back = !cell.no_readback;
                    if t.is_some() && read_back && !plan.output.json {
                        say!("verifying what {} wrote ...", cell.name());
                    }
                    r.verify = Some(s.pass(t, read_back, target, direct, during.as_ref())?);
                }
                if r.error.as_deref().is_some_and(|e| refused(e, r.ios)) {
                    skip(state, r.error.unwrap_or_default());
                    continue;
                }
                eta.record(cell, &r, started.elapsed());
                if suite {
                    say!(
                        "[{}/{}] {}",
                        k + 1,
                        runnable.len(),
                        one_line(&cell.name(), &r)
                    );
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

/// SNIA PTS's workload-independent preconditioning: the whole range written twice in 128 KiB
/// sequential writes, so what follows measures a used device rather than a fresh one. Built as
/// a cell like any other, so its workload obeys the same rules; not stored as a result.
pub(super) fn precondition(plan: &Plan, target: &Target, state: &mut State) -> Result<()> {
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
        // Every file's range, twice (the precondition's writes go round the files).
        length: Length::Data(crate::suite::Amount::Bytes(2 * target.all_bytes())),
        range: None,
        files: 1,
        origin: None,
        shape: Default::default(),
        together: None,
        target: None,
        rate: None,
        think: None,
        prio: None,
        flow: None,
        placement: None,
        engine: None,
        distribution: None,
        beside: Default::default(),
        no_readback: false,
        tolerate: None,
        atomic: false,
    };
    let w = work::of(&cell, &plan.env, target.range_bytes, target.logical_block).map_err(usage)?;
    say!(
        "Preconditioning: writing the {} range twice in 128 KiB sequential writes ...",
        units::iec(target.all_bytes())
    );
    let begun = Instant::now();
    // Under --verify the preconditioning stamps its writes as the fill does.
    let stamp = state.verify.as_ref().map(|s| s.verifier(None, target));
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
        units::bw(ran.m.bytes as f64 / took.as_secs_f64().max(1e-9))
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

pub(crate) const PRECONDITION_BS: crate::workload::BlockSize =
    crate::workload::BlockSize::known(128 << 10);
pub(crate) const PRECONDITION_DEPTH: u32 = 32;

/// A direct IO the kernel refused for its size: small blocks under O_DIRECT on a device whose
/// logical block sysfs did not tell. The suite goes on without the cell, as bm-flash's tables
/// leave a cell blank.
pub(super) fn refused_block(error: &str, bs: u64, direct: bool) -> bool {
    direct && bs < 4096 && error.contains("Invalid argument")
}

/// The files of a `--files` cell, next to the run's test file, filled like it and removed
/// after the cell.
pub(super) fn seek_files(target: &Target, files: u32, seed: u64) -> Result<Vec<Target>> {
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
            files: 1,
            name_tag: None,
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
pub(super) fn changed(iops: &[f64], tick: Duration) -> bool {
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

/// fio's `exit_what=all`: whether a job whose end ends every later job ran before the `k`th
/// runnable cell (and not in its cell of several streams); then it and every later cell never
/// start, and the run says why.
fn ended_later(cells: &[Cell], (runnable, k): (&[usize], usize), state: &mut State) -> bool {
    let cell = &cells[runnable[k]];
    let ender = runnable[..k].iter().map(|&j| &cells[j]).find(|c| {
        c.beside.ends == crate::workload::Ends::Later
            && (c.together.is_none() || c.together != cell.together)
    });
    let Some(ender) = ender else { return false };
    let why = format!(
        "not run: the end of {} ended every later job (exit_what=all), as fio ends them",
        ender.origin.clone().unwrap_or_else(|| ender.name())
    );
    say!("[{}/{}] {why}", k + 1, runnable.len());
    for &j in &runnable[k..] {
        state.refused.insert(j, why.clone());
    }
    true
}
