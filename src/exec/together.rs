//! A cell of several streams: the plan's cells that share a `together` number run at once,
//! behind one gate ([`work::together`]), each repeat of them all together. Each stream is kept
//! as a result of its own (its cell's), and their sum as one more, named after them all: the
//! devices' counters belong to the sum, since the device saw every stream at once.

use super::cell::{drop_cached, not_stored, repeated};
use super::fold;
use super::progress::one_line;
use super::work::{self, Ran, Work};
use super::State;
use crate::model::{ResultDoc, TogetherDoc};
use crate::plan::Plan;
use crate::store::Recorder;
use crate::target::Target;
use anyhow::Result;

/// The name of a cell of several streams: its streams' names joined, e.g. `wal + data`.
pub fn name(streams: &[String]) -> String {
    streams.join(" + ")
}

/// Runs `members` (indices into the plan's cells, all runnable) at once with their repeats and
/// keeps their results. Returns whether the run must stop (an interrupt or a failed stream).
/// `at` is the place of the first member among the runnable cells, and their count.
pub(super) fn run(
    plan: &Plan,
    works: &[Result<Work, String>],
    members: &[usize],
    (target, own_targets): (&Target, &[Target]),
    state: &mut State,
    rec: &mut Recorder,
    at: (usize, usize),
) -> Result<bool> {
    let cells = &plan.cells;
    let works: Vec<&Work> = members
        .iter()
        .filter_map(|&i| works[i].as_ref().ok())
        .collect();
    // A stream goes by its job's name where it has one (fio's), else by its cell's.
    let names: Vec<String> = members
        .iter()
        .map(|&i| cells[i].origin.clone().unwrap_or_else(|| cells[i].name()))
        .collect();
    let beside: Vec<crate::workload::Beside> = members.iter().map(|&i| cells[i].beside).collect();
    // Each stream on its own target where it has one, else on the run's.
    let targets: Vec<&Target> = members
        .iter()
        .map(|&i| cells[i].target.map_or(target, |k| &own_targets[k]))
        .collect();
    let cell = name(&names);
    let place = format!("[{}–{}/{}]", at.0 + 1, at.0 + members.len(), at.1);
    let prefix = format!("{place} {cell}");
    let progress = !plan.output.json;
    let invalidate =
        plan.env.invalidate && works.iter().any(|w| w.specs().iter().any(|s| !s.direct));
    let ran = repeated(plan, &mut state.notes, &prefix, |label, held| {
        if invalidate {
            for (k, t) in targets.iter().enumerate() {
                if targets[..k].iter().all(|o| o.path != t.path) {
                    drop_cached(&t.path);
                }
            }
        }
        let held: Option<Vec<Work>> = held.map(|b| works.iter().map(|w| w.holding(b)).collect());
        let these: Vec<&Work> = match &held {
            Some(h) => h.iter().collect(),
            None => works.clone(),
        };
        work::together(&these, &beside, &targets, &label, progress)
    })?;
    // Each stream's repeats, then the sum's.
    let mut each: Vec<Vec<Ran>> = (0..members.len()).map(|_| Vec::new()).collect();
    let mut sums = Vec::with_capacity(ran.len());
    for mut r in ran {
        for (k, s) in std::mem::take(&mut r.streams).into_iter().enumerate() {
            each[k].push(s);
        }
        sums.push(r);
    }
    // Streams on targets of their own: each names its own, the sum all of them.
    let apart = targets.iter().any(|t| t.path != target.path);
    let path = |t: &Target| t.path.display().to_string();
    let tag = |sum: bool, k: usize| TogetherDoc {
        cell: cell.clone(),
        streams: names.clone(),
        sum,
        targets: match (apart, sum) {
            (false, _) => Vec::new(),
            (true, true) => targets.iter().map(|t| path(t)).collect(),
            (true, false) if targets[k].path != target.path => vec![path(targets[k])],
            (true, false) => Vec::new(),
        },
    };
    let mut docs: Vec<(usize, ResultDoc)> = Vec::with_capacity(members.len() + 1);
    for (k, rans) in each.into_iter().enumerate() {
        // Named apart from the same stream run alone (compare and the findings pair them).
        let others: Vec<&str> = names
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != k)
            .map(|(_, n)| n.as_str())
            .collect();
        let own = format!(
            "{} (beside {})",
            cells[members[k]].name(),
            others.join(" + ")
        );
        let mut d = fold::result(rans, targets[k], Some(own));
        d.together = Some(tag(false, k));
        docs.push((members[k], d));
    }
    let mut sum = fold::result(sums, target, Some(cell.clone()));
    sum.together = Some(tag(true, 0));
    // The sum counts as the first stream's cell; a cell's own result is found first.
    docs.push((members[0], sum));
    let mut stop = crate::interrupt::requested().is_some();
    let mut failed = None;
    for (i, d) in docs {
        say!(
            "{place} {}",
            one_line(d.name.as_deref().unwrap_or_default(), &d)
        );
        stop |= d.interrupted;
        if failed.is_none() {
            failed = d.error.clone();
        }
        let stored = rec.add(&d);
        state.results.push(d);
        state.cell_of.push(i);
        stored.map_err(not_stored)?;
    }
    if let Some(e) = failed {
        return Err(anyhow::anyhow!(e).context(format!("suite {}, cell {cell}", plan.suite.name)));
    }
    Ok(stop)
}
