//! A plan in words, before anything is written.

use crate::exec::work::Work;
use crate::plan::{Kind, Plan, Until};
use crate::suite::cells::{self, Cell};
use crate::suite::stable::{self};
use crate::suite::Length;
use crate::target::{self};
use crate::units;
use anyhow::Result;
use std::time::Duration;

/// The plan in a few lines, before anything is written: what runs, where, on how much data,
/// and about how long it takes.
pub fn text(plan: &Plan, target: &target::Resolved, works: &[Result<Work, String>]) -> String {
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
        Some(_) => 1 + crate::exec::SEARCH_STEPS,
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
