//! A plan before anything is written: what runs, where, on how much data, and about how long
//! it takes — one document, said in a few lines or printed as JSON (`--dry-run --json`).

use crate::plan::{Kind, Plan, Until};
use crate::suite::cells::{self, Cell};
use crate::suite::stable;
use crate::suite::Length;
use crate::target;
use crate::units;
use serde::Serialize;
use std::time::Duration;

/// Cells listed one a line; a larger suite lists these and says how many more.
const LISTED: usize = 12;

#[derive(Serialize)]
pub struct PlanDoc {
    /// `run`, `suite quick`, `fio`, `probe cache`'s suite name.
    pub what: String,
    pub cells: Vec<CellPlan>,
    pub repeats: u32,
    /// `time` (each cell its planned time), `stable` (--until-stable) or `change`
    /// (--until-change): the last two may stop a cell early.
    pub until: &'static str,
    /// A suite in rounds until steady state: the least and most rounds.
    pub rounds: Option<(u32, u32)>,
    /// Bytes preconditioning writes before the cells (the range twice).
    pub precondition_bytes: Option<u64>,
    pub target: TargetPlan,
    /// The streams' own targets (`--stream '… --target PATH'`), each named by its stream.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<TargetPlan>,
    pub working_set_bytes: u64,
    pub ram_bytes: u64,
    /// Least and most seconds the run should take.
    pub estimate_s: (f64, f64),
    /// The rate assumed for the fill and fixed-data cells in the estimate, when any.
    pub assumed_mb_s: Option<f64>,
}

#[derive(Serialize)]
pub struct CellPlan {
    pub name: String,
    pub op: &'static str,
    pub read_pct: u8,
    pub bs: u64,
    pub threads: u32,
    pub iodepth: u32,
    pub writes: bool,
    /// Planned seconds of a timed cell.
    pub time_s: Option<f64>,
    /// Bytes a fixed-data cell moves.
    pub data_bytes: Option<u64>,
    /// Why the cell does not run here.
    pub skipped: Option<String>,
}

#[derive(Serialize)]
pub struct TargetPlan {
    pub path: String,
    /// `test file` (created, filled and removed), `file` or `block device`.
    pub kind: &'static str,
    pub created: bool,
    pub range_bytes: u64,
    /// Size of the whole file or device (of the created file).
    pub total_bytes: u64,
    /// Whether a cell that runs writes to it.
    pub written: bool,
    /// Test files of `total_bytes` each (fio's `nrfiles`); 1 but for those.
    pub files: u32,
    /// The stack under it as `show` draws it (file system, then each device down to the disks),
    /// looked at now; empty when nothing lies under it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// The stream whose own target this is; `None` for the run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
}

/// The plan as a document, from the plan held against its target.
pub fn doc(plan: &Plan, prepared: &crate::exec::Prepared) -> PlanDoc {
    let (resolved, works) = (&prepared.resolved, prepared.works.as_slice());
    let range = resolved.range_bytes();
    let cells: Vec<CellPlan> = plan
        .cells
        .iter()
        .zip(works)
        .map(|(c, w)| CellPlan {
            name: c.name(),
            op: c.op.name(),
            read_pct: c.read_pct,
            bs: c.bs.bytes(),
            threads: c.threads,
            iodepth: c.iodepth,
            writes: c.writes(),
            time_s: c.planned_time().map(|t| t.as_secs_f64()),
            data_bytes: match c.length {
                Length::Data(a) => Some(cells::data_bytes(
                    a,
                    c.range.map_or(range, |r| r.min(range)),
                )),
                Length::Time(_) => None,
            },
            skipped: w.as_ref().err().cloned(),
        })
        .collect();
    let runnable: Vec<&Cell> = plan
        .cells
        .iter()
        .zip(works)
        .filter(|(_, w)| w.is_ok())
        .map(|(c, _)| c)
        .collect();
    let repeats = plan.repeat.n;
    // Cells that run at once (streams, fio's jobs without stonewall) take their longest's time
    // (and its later start), not their sum.
    let timed = Duration::from_secs_f64(at_once(runnable.iter().map(|c| {
        let t = c.planned_time().map_or(0.0, |t| t.as_secs_f64());
        (
            c.together,
            t + c.beside.delay.as_secs_f64() * f64::from(t > 0.0),
        )
    })));
    // Fixed-data cells and the fill at an assumed 100 MB/s: an estimate, said to be one.
    let data: u64 = cells
        .iter()
        .filter(|c| c.skipped.is_none())
        .filter_map(|c| c.data_bytes)
        .sum();
    // Every cell's ramp runs before its measurement, and a latency-target search runs the
    // workload once unthrottled and then up to SEARCH_STEPS paced steps.
    let ramps = plan.env.ramp.as_secs_f64() * runnable.len() as f64;
    // A paced fixed-data cell takes its IOs at its rate, however fast the device: 128 MiB of
    // 4 KiB reads at 50 a second is 11 minutes, not a second or two.
    let data_s = at_once(
        plan.cells
            .iter()
            .zip(&cells)
            .filter(|(_, p)| p.skipped.is_none())
            .filter_map(|(c, p)| {
                let bytes = p.data_bytes? as f64;
                let paced = c.rate.or(plan.env.rate).map_or(0.0, |r| {
                    bytes / (r.per_thread(c.threads) * f64::from(c.threads) * c.bs.bytes() as f64)
                });
                Some((
                    c.together,
                    paced.max(bytes / 100e6) + c.beside.delay.as_secs_f64(),
                ))
            }),
    );
    let per_run = timed.as_secs_f64() + ramps + data_s;
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
    // A search runs all its steps: only paced runs are judged.
    let mut secs = per_run_least * f64::from(least * searches);
    let mut secs_most = per_run * f64::from(most * searches);
    // Every file's range, for a target of several (fio's nrfiles).
    let all = range.saturating_mul(u64::from(resolved.files()));
    let precondition_bytes = plan.precondition.then_some(2 * all);
    if let Some(bytes) = precondition_bytes {
        secs += bytes as f64 / 100e6;
        secs_most += bytes as f64 / 100e6;
    }
    let shown = plan
        .target
        .path
        .as_deref()
        .map_or_else(|| ".".to_string(), |p| p.display().to_string());
    let written = runnable.iter().any(|c| c.writes()) || plan.precondition;
    let (target, filled) = target_plan(resolved, shown, written, None);
    let mut streams = Vec::with_capacity(prepared.streams.len());
    let mut filled_all = filled;
    for (k, (r, p)) in prepared
        .streams
        .iter()
        .zip(&plan.target.streams)
        .enumerate()
    {
        let mine = runnable.iter().filter(|c| c.target == Some(k));
        let name = mine.clone().find_map(|c| c.origin.clone());
        let written = mine.clone().any(|c| c.writes());
        let (t, filled) = target_plan(r, p.path.display().to_string(), written, name);
        filled_all += filled;
        streams.push(t);
    }
    // The fill writes every file.
    secs += filled_all / 100e6;
    secs_most += filled_all / 100e6;
    let assumed = data > 0 || target.created || precondition_bytes.is_some();
    PlanDoc {
        what: match plan.kind {
            Kind::Run => "run".to_string(),
            Kind::Suite => format!("suite {}", plan.suite.name),
        },
        cells,
        repeats,
        until: match plan.until {
            Until::Limit => "time",
            Until::Stable => "stable",
            Until::Change => "change",
        },
        rounds: (least != most).then_some((least, most)),
        precondition_bytes,
        target,
        streams,
        working_set_bytes: all,
        ram_bytes: plan.env.ram,
        estimate_s: (secs.max(1.0), secs_most.max(secs).max(1.0)),
        assumed_mb_s: assumed.then_some(100.0),
    }
}

/// A target as the plan shows it, looked at now (reads only), and the bytes its fill writes.
fn target_plan(
    resolved: &target::Resolved,
    shown: String,
    written: bool,
    stream: Option<String>,
) -> (TargetPlan, f64) {
    let (mut t, filled) = match resolved {
        target::Resolved::Create {
            path, more, size, ..
        } => (
            TargetPlan {
                path: path.display().to_string(),
                kind: "test file",
                created: true,
                range_bytes: resolved.range_bytes(),
                total_bytes: *size,
                written,
                files: resolved.files(),
                stack: Vec::new(),
                stream,
            },
            *size as f64 * (1 + more.len()) as f64,
        ),
        target::Resolved::Ready(t) => (
            TargetPlan {
                path: shown,
                kind: match t.kind {
                    target::Kind::File => "file",
                    target::Kind::BlockDevice => "block device",
                },
                created: false,
                range_bytes: t.range_bytes,
                total_bytes: t.total_bytes,
                written,
                files: t.files(),
                stack: Vec::new(),
                stream,
            },
            0.0,
        ),
    };
    // Where the IO will land, as the run will record it.
    t.stack = iogauge_sysinfo::capture(Some(std::path::Path::new(&t.path)))
        .target
        .map(|s| crate::report::stack::tree(&s))
        .unwrap_or_default();
    (t, filled)
}

/// A target's lines in the plan: what it is, what is done to it, the stack under it.
fn target_text(t: &TargetPlan) -> String {
    let label = match &t.stream {
        Some(n) => format!("stream {n}'s target"),
        None => "target".to_string(),
    };
    let mut s = match t.created {
        true if t.files > 1 => format!(
            "  {label}: {} and {} more beside it, {} test files of {} each ({} in all) that iogauge creates, fills with random data and removes\n",
            t.path,
            t.files - 1,
            t.files,
            units::iec(t.total_bytes),
            units::iec(t.total_bytes.saturating_mul(u64::from(t.files)))
        ),
        true => format!(
            "  {label}: {}, a test file of {} that iogauge creates, fills with random data and removes\n",
            t.path,
            units::iec(t.total_bytes)
        ),
        false => format!(
            "  {label}: {}, an existing {} ({} of {} used{})\n",
            t.path,
            t.kind,
            units::iec(t.range_bytes),
            units::iec(t.total_bytes),
            if t.written {
                "; its contents are destroyed"
            } else {
                ", read only"
            }
        ),
    };
    for (i, line) in t.stack.iter().enumerate() {
        s.push_str(&format!(
            "  {}{line}\n",
            if i == 0 { "stack: " } else { "       " }
        ));
    }
    s
}

/// Seconds of cells in order, where neighbours with the same `together` number run at once:
/// their longest counts, the others add up.
fn at_once(cells: impl Iterator<Item = (Option<usize>, f64)>) -> f64 {
    let mut total = 0.0;
    let mut group: Option<(usize, f64)> = None;
    for (together, secs) in cells {
        match (together, &mut group) {
            (Some(t), Some((g, longest))) if *g == t => *longest = longest.max(secs),
            (t, _) => {
                total += group.take().map_or(0.0, |(_, l)| l);
                match t {
                    Some(t) => group = Some((t, secs)),
                    None => total += secs,
                }
            }
        }
    }
    total + group.map_or(0.0, |(_, l)| l)
}

/// The plan in a few lines.
pub fn text(p: &PlanDoc) -> String {
    let runnable: Vec<&CellPlan> = p.cells.iter().filter(|c| c.skipped.is_none()).collect();
    let mut s = format!(
        "plan: {} — {} cell{}{}",
        p.what,
        runnable.len(),
        units::plural(runnable.len()),
        match p.repeats {
            1 => String::new(),
            n => format!(", {n} repeats each"),
        }
    );
    let times: std::collections::BTreeSet<u64> = runnable
        .iter()
        .filter_map(|c| c.time_s)
        .map(f64::to_bits)
        .collect();
    if times.len() == 1 && runnable.iter().all(|c| c.time_s.is_some()) {
        let t = times.iter().next().map_or(0.0, |b| f64::from_bits(*b));
        let most = if p.until == "time" { "" } else { "up to " };
        s.push_str(&format!(
            " × {most}{}",
            units::duration(Duration::from_secs_f64(t))
        ));
    }
    match p.until {
        "stable" => s.push_str(", each stopping once its IOPS are stable"),
        "change" => {
            s.push_str(", each stopping once its rate has moved to another level and held there")
        }
        _ => {}
    }
    if let Some((least, most)) = p.rounds {
        s.push_str(&format!(
            ", in rounds until steady state ({least} to {most} rounds)"
        ));
    }
    s.push('\n');
    for (i, c) in runnable.iter().enumerate() {
        if i == LISTED && runnable.len() > LISTED + 1 {
            s.push_str(&format!(
                "    … and {} more (--dry-run --json lists them all)\n",
                runnable.len() - LISTED
            ));
            break;
        }
        let length = match (c.time_s, c.data_bytes) {
            (_, Some(b)) => format!(" · {}", units::iec(b)),
            _ => String::new(),
        };
        s.push_str(&format!("    {}{length}\n", c.name));
    }
    if let Some(bytes) = p.precondition_bytes {
        s.push_str(&format!(
            "  preconditioning: the range written twice ({}) in 128 KiB sequential writes\n",
            units::iec(bytes)
        ));
    }
    s.push_str(&target_text(&p.target));
    for t in &p.streams {
        s.push_str(&target_text(t));
    }
    if p.ram_bytes > 0 {
        s.push_str(&format!(
            "  working set: {} · RAM {}\n",
            units::iec(p.working_set_bytes),
            units::iec(p.ram_bytes)
        ));
    }
    let skipped: Vec<&CellPlan> = p.cells.iter().filter(|c| c.skipped.is_some()).collect();
    let writers = skipped
        .iter()
        .filter(|c| c.skipped.as_deref() == Some(crate::exec::READ_ONLY))
        .count();
    if writers > 0 {
        s.push_str(&format!(
            "  read only: the {writers} cell{} that write{} skipped (add --allow-overwrite to destroy the target's contents and run them)\n",
            units::plural(writers),
            if writers == 1 { " is" } else { " are" }
        ));
    }
    if skipped.len() > writers {
        let n = skipped.len() - writers;
        s.push_str(&format!(
            "  skipped: {n} cell{} that cannot run here (named in the notes)\n",
            units::plural(n)
        ));
    }
    let (least, most) = p.estimate_s;
    let span = match (most - least).abs() < 0.5 {
        true => String::new(),
        false => format!(" to {}", units::duration(Duration::from_secs_f64(most))),
    };
    s.push_str(&format!(
        "  estimated time: about {}{span}{}\n\n",
        units::duration(Duration::from_secs_f64(least)),
        match p.assumed_mb_s {
            Some(r) => format!(" (data at an assumed {})", units::bw(r * 1e6)),
            None => String::new(),
        }
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::at_once;

    /// Cells alone add up; neighbours that run at once count their longest.
    #[test]
    fn cells_at_once_take_their_longest_time() {
        let cells = [
            (None, 2.0),
            (Some(1), 3.0),
            (Some(1), 5.0),
            (None, 1.0),
            (Some(2), 4.0),
            (Some(3), 6.0),
        ];
        assert_eq!(at_once(cells.into_iter()), 2.0 + 5.0 + 1.0 + 4.0 + 6.0);
        assert_eq!(at_once(std::iter::empty()), 0.0);
    }
}
