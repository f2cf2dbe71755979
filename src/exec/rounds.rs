//! A suite in rounds until steady state (SNIA PTS), and the `--latency-target` search.

use super::fold;
use super::work::{self, Ran, Work};
use super::{cell::not_stored, State};
use crate::error::usage;
use crate::plan::Plan;
use crate::store::Recorder;
use crate::target::Target;
use crate::units;
use anyhow::Result;

/// A suite in rounds (SNIA PTS): every cell once per round, until the tracked cell's IOPS over
/// the last `window` rounds pass the steady-state test (`iogauge_analyze::snia_window`), at
/// most `max` rounds. Each cell's result is its measurement window: the last `window` rounds
/// folded as repeats, so their spread is the result's confidence interval. Rounds keep only
/// the window's measurements in memory; the results are stored when the loop ends.
pub(super) fn run_rounds(
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
        .find(|&i| cells[i].op == op && cells[i].read_pct == pct && cells[i].bs.bytes() == bs)
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
    // Each cell's way of waiting for completions, as its first round's trial chose it, held
    // for the later rounds: the window's rounds then compare (a batched wait makes an IO's
    // time late by up to the batch), and a trial of 0.7 s is not paid again every round.
    let mut chosen: Vec<Option<(u32, crate::model::TrialDoc)>> = vec![None; cells.len()];
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
            let held = chosen[i].map(|(batch, _)| work.holding(batch));
            let work = held.as_ref().unwrap_or(work);
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
            if let Some(trial) = ran.m.engine.complete_trial {
                chosen[i] = Some((ran.m.engine.complete_batch, trial));
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
        let mut rans: Vec<Ran> = window[i].drain(..).collect();
        if rans.is_empty() {
            continue;
        }
        // The trial ran in the first round, which the window may have left behind; the
        // window's first round carries it, as a cell's first repeat does.
        if let (Some((_, trial)), Some(first)) = (chosen[i], rans.first_mut()) {
            first.m.engine.complete_trial.get_or_insert(trial);
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

/// Whether a paced step kept the latency target: its latency (ns, from each IO's planned start)
/// within `limit_ns`, and the rate asked also achieved (within 2%).
pub fn kept(asked: f64, iops: f64, lat_ns: f64, limit_ns: f64) -> bool {
    lat_ns <= limit_ns && iops >= 0.98 * asked
}

/// Steps of the rate search after the unthrottled run: each halves the interval the answer is
/// in, so the answer is within 1/2^SEARCH_STEPS of the unthrottled IOPS.
pub const SEARCH_STEPS: u32 = 6;

/// `--latency-target`: the highest rate whose percentile stays under the target. First the
/// workload as fast as it goes (if that keeps the target, it is the answer), then a binary
/// search of the rate between 0 and those IOPS. Every step is a result, so the curve of latency
/// against rate is in the run; the answer is a finding.
pub(super) fn latency_search(
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
            None => "unthrottled (not judged)".to_string(),
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
    // Only paced runs are judged: their latency counts from each IO's planned start, so the
    // queueing a real load meets is in it. The unthrottled run's counts from submission
    // (coordinated omission): it gave p99 under 2 ms at 55,794 IOPS where paced at half that
    // rate the same device gave 7.10 ms. It only bounds the search.
    let mut best: Option<(f64, f64)> = None;
    // The lowest rate asked, with what it achieved: what a failed search reports, so the
    // answer names a rate that was really tried.
    let mut lowest: Option<(f64, f64, f64)> = None;
    {
        for _ in 0..SEARCH_STEPS {
            let rate = (lo + hi) / 2.0;
            let Some((iops, lat)) = step(Some(rate), state)? else {
                break;
            };
            curve.push((iops, lat));
            if lowest.is_none_or(|l| rate < l.0) {
                lowest = Some((rate, iops, lat));
            }
            if kept(rate, iops, lat, limit) {
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
