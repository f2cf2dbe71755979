//! A sweep's document: each cell's IOPS under each setting against the baseline by
//! `compare`'s rule, and which setting won where.

use super::*;

use crate::compare::iops_of;

/// What a sweep found, as `--json` prints it and the table shows it.
#[derive(Serialize)]
pub struct SweepDoc {
    pub sweep: String,
    pub suite: String,
    /// What each cell's figure counts: "IOPS", or a database's "TPS".
    pub rate: String,
    /// Runs of each setting, the figures' mean.
    pub repeats: u32,
    pub alpha: f64,
    pub noise: f64,
    /// Cells whose baseline changed between the first and the last run of the sweep.
    pub drift: Vec<String>,
    /// One per knob (its baseline and its settings), or one for a grid or a file-system sweep.
    pub groups: Vec<GroupDoc>,
    /// Whether the settings that ran were stored as runs (not with `--no-store`).
    pub stored: bool,
    /// With `--members`: where each layout stops scaling, cell by cell (`scaling` findings).
    pub scaling: Vec<iogauge_analyze::Finding>,
    /// With `--degraded` or `--rebuild`: what the missing or rebuilding member cost each cell
    /// against the same array whole, and each rebuild's own line.
    pub damaged: Vec<String>,
}

impl SweepDoc {
    /// Whether any setting ran at all: a sweep in which every one was skipped measured nothing.
    pub fn anything_ran(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.settings.iter().any(|s| s.skipped.is_none()))
    }
}

#[derive(Serialize)]
pub struct GroupDoc {
    pub title: String,
    /// Column heads: the setting's value (or label); the first is the baseline.
    pub settings: Vec<SettingDoc>,
    pub cells: Vec<String>,
    /// The column every other is judged against: the first setting that ran (the values as
    /// found, or the first file system made).
    pub baseline: Option<String>,
    /// The setting best in most cells, and in how many of those it beats the baseline. Only
    /// settings that ran take part: one that was skipped is no competitor, and a verdict
    /// needs two that ran.
    pub best: Option<String>,
    pub best_in: usize,
    pub beats_baseline_in: usize,
    /// Why there is no verdict, when fewer than two settings ran.
    pub no_verdict: Option<String>,
}

#[derive(Serialize)]
pub struct SettingDoc {
    pub head: String,
    pub label: String,
    /// The stored run's id (`run_id`), when it ran.
    pub run_id: Option<String>,
    pub skipped: Option<String>,
    /// Per cell: IOPS mean, the 95% CI, and the verdict against the baseline.
    pub iops: Vec<Option<CellDoc>>,
}

#[derive(Serialize)]
pub struct CellDoc {
    pub mean: f64,
    pub ci95: Option<[f64; 2]>,
    pub vs_baseline: Option<String>,
    pub p_value: Option<f64>,
}

pub(super) fn summarize(
    id: &str,
    m: &dyn super::Measure,
    knobs: &[Knob],
    outcomes: &[(Setting, Outcome)],
    fss: &[FsSpec],
) -> SweepDoc {
    let base = outcomes.first();
    let (again, outcomes) = match outcomes.split_last() {
        Some((last, rest)) if last.1.label == AGAIN => (Some(last), rest),
        _ => (None, outcomes),
    };
    let drift = match (
        base.and_then(|b| b.1.doc.as_ref()),
        again.and_then(|a| a.1.doc.as_ref()),
    ) {
        (Some(first), Some(last)) => crate::compare::drift(&first.results, &last.results),
        _ => Vec::new(),
    };
    let grid = outcomes.iter().any(|(s, _)| s.knobs.len() > 1);
    let mut scaling = Vec::new();
    let mut groups: Vec<(String, Vec<&(Setting, Outcome)>)> = Vec::new();
    if !knobs.is_empty() && !grid {
        for (k, knob) in knobs.iter().enumerate() {
            let mut members: Vec<&(Setting, Outcome)> = base.into_iter().collect();
            members.extend(
                outcomes
                    .iter()
                    .filter(|(s, _)| s.knobs.iter().any(|(i, _)| *i == k)),
            );
            groups.push((
                format!("knob {} (as found: {})", knob.spec.label(), knob.as_found()),
                members,
            ));
        }
    } else {
        let arrays = outcomes.iter().any(|(s, _)| s.array.is_some());
        let title = match arrays {
            true => "array layouts (against the first)".to_string(),
            false => match fss.is_empty() {
                true => "every combination (--grid)".to_string(),
                false => "file systems (against the first)".to_string(),
            },
        };
        groups.push((title, outcomes.iter().collect()));
        if arrays {
            for (name, line) in by_members(outcomes) {
                scaling.extend(scaling_of(&name, &line));
                groups.push((format!("{name} by members (against the fewest)"), line));
            }
        }
    }
    let groups = groups
        .into_iter()
        .map(|(title, members)| group(title, &members, grid))
        .collect();
    SweepDoc {
        sweep: id.to_string(),
        suite: m.name(),
        rate: m.rate().to_string(),
        repeats: m.repeats(),
        alpha: ALPHA,
        noise: NOISE,
        drift,
        groups,
        stored: false,
        scaling,
        damaged: damaged(outcomes),
    }
}

/// Each degraded or rebuilding array against the same array whole (layout, members, chunk, file
/// system), cell by cell: its p99 and IOPS beside the whole one's; a rebuild's own finding
/// (how long, at what rate) first.
fn damaged(outcomes: &[(Setting, Outcome)]) -> Vec<String> {
    use iogauge_analyze::signed_pct;
    let mut out = Vec::new();
    for (s, o) in outcomes {
        let (Some((layout, n, chunk, health)), Some(doc)) = (&s.array, &o.doc) else {
            continue;
        };
        if *health == Health::Whole {
            continue;
        }
        let whole = outcomes.iter().find_map(|(w, wo)| {
            let (l, m, c, h) = w.array.as_ref()?;
            (l == layout && m == n && c == chunk && *h == Health::Whole && w.fs == s.fs)
                .then_some(wo.doc.as_ref())
                .flatten()
        });
        out.extend(
            doc.findings
                .iter()
                .filter(|f| f.kind == iogauge_analyze::Kind::Rebuild && f.result.is_none())
                .map(|f| format!("{}: {}", o.label, f.summary)),
        );
        let Some(whole) = whole else { continue };
        for r in &doc.results {
            let Some(w) = whole.results.iter().find(|w| w.name == r.name) else {
                continue;
            };
            let rel = |a: f64, b: f64| match b > 0.0 {
                true => signed_pct(a / b - 1.0),
                false => "–".to_string(),
            };
            // A database's transactions are counted as such, its storage cells in IOs.
            let unit = match r.workload.is_db_load() {
                true => "TPS",
                false => "IOPS",
            };
            out.push(format!(
                "{}, {}: p99 {} against {} whole ({}), {} {unit} against {} ({})",
                o.label,
                r.name.as_deref().unwrap_or("the cell"),
                units::latency(r.lat_ns.p99 as f64),
                units::latency(w.lat_ns.p99 as f64),
                rel(r.lat_ns.p99 as f64, w.lat_ns.p99 as f64),
                units::count(r.iops),
                units::count(w.iops),
                rel(r.iops, w.iops),
            ));
        }
    }
    out
}

/// `scaling` for each cell of one layout's line across its member counts: the count after
/// which one more member adds little, from each count's mean IOPS and 95% CI, with what the
/// members' counters and iogauge's CPU said at the count past it.
fn scaling_of(name: &str, line: &[&(Setting, Outcome)]) -> Vec<iogauge_analyze::Finding> {
    let th = iogauge_analyze::Thresholds::default();
    let Some(cells) = line
        .iter()
        .find_map(|(_, o)| o.doc.as_ref())
        .map(|d| d.results.len())
    else {
        return Vec::new();
    };
    (0..cells)
        .filter_map(|ci| {
            let points: Vec<iogauge_analyze::MemberPoint> = line
                .iter()
                .filter_map(|(set, o)| {
                    let doc = o.doc.as_ref()?;
                    let r = doc.results.get(ci)?;
                    let v = iops_of(r);
                    Some(iogauge_analyze::MemberPoint {
                        members: u32::try_from(set.array.as_ref()?.1).ok()?,
                        mean: v.iter().sum::<f64>() / v.len().max(1) as f64,
                        // An interval from one repeat is no interval.
                        ci95: r.stats.get("iops").filter(|s| s.n >= 2).map(|s| s.ci95),
                        seen: crate::analysis::scaling_evidence(r, &doc.system),
                    })
                })
                .collect();
            let cell = line
                .iter()
                .find_map(|(_, o)| o.doc.as_ref()?.results.get(ci))
                .map(ResultDoc::display_name)?;
            iogauge_analyze::scaling(name, &cell, &points, &th)
        })
        .collect()
}

/// With `--members`, one line per layout (at each chunk, healthy or degraded) across its
/// member counts, by its name: a table judged against the fewest ("how does it scale from 2 to
/// 8" read in one row), and where it stops scaling.
fn by_members(outcomes: &[(Setting, Outcome)]) -> Vec<(String, Vec<&(Setting, Outcome)>)> {
    let mut lines: Vec<(String, Vec<&(Setting, Outcome)>)> = Vec::new();
    for o in outcomes {
        let Some((layout, _, chunk, health)) = &o.0.array else {
            continue;
        };
        if layout.kind == array::Kind::Single {
            continue;
        }
        let mut name = layout.label();
        if let Some(c) = chunk.filter(|_| layout.takes_chunk()) {
            name.push_str(&format!(" · chunk {}", units::bs_label(c)));
        }
        name.push_str(health.suffix());
        if let Some((f, _)) = &o.0.fs {
            name.push_str(&format!(" · {}", f.fs));
        }
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(o),
            None => lines.push((name, vec![o])),
        }
    }
    lines
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(name, mut v)| {
            v.sort_by_key(|o| o.0.array.as_ref().map_or(0, |a| a.1));
            (name, v)
        })
        .collect()
}

fn group(title: String, members: &[&(Setting, Outcome)], grid: bool) -> GroupDoc {
    let cells: Vec<String> = members
        .iter()
        .find_map(|(_, o)| o.doc.as_ref())
        .map(|d| d.results.iter().map(ResultDoc::display_name).collect())
        .unwrap_or_default();
    // A skipped first setting is no baseline: the next one that ran is, and the table says
    // which (a file-system sweep whose first mkfs is missing compares against the second).
    let base_at = members.iter().position(|(_, o)| o.doc.is_some());
    let baseline = base_at.and_then(|i| members[i].1.doc.as_ref());
    let settings: Vec<SettingDoc> = members
        .iter()
        .enumerate()
        .map(|(mi, (set, o))| {
            let head = match set.knobs.as_slice() {
                [(_, v)] if !grid => v.clone(),
                [] if set.fs.is_none() && set.array.is_none() => "as found".into(),
                _ => o.label.clone(),
            };
            let iops = (0..cells.len())
                .map(|ci| {
                    let r = o.doc.as_ref()?.results.get(ci)?;
                    let v = iops_of(r);
                    let mut cell = CellDoc {
                        mean: v.iter().sum::<f64>() / v.len() as f64,
                        ci95: r.stats.get("iops").map(|s| s.ci95),
                        vs_baseline: None,
                        p_value: None,
                    };
                    if base_at.is_some_and(|b| mi > b) {
                        if let Some(b) = baseline.and_then(|d| d.results.get(ci)) {
                            let c = iogauge_stats::verdict(&iops_of(b), &v, true, ALPHA, NOISE);
                            cell.vs_baseline = Some(c.verdict.label().to_string());
                            cell.p_value = c.p_value;
                        }
                    }
                    Some(cell)
                })
                .collect();
            SettingDoc {
                head,
                label: o.label.clone(),
                run_id: o.doc.as_ref().map(|d| d.run_id.clone()),
                skipped: o.skipped.clone(),
                iops,
            }
        })
        .collect();
    let mut best_count = vec![0usize; settings.len()];
    for ci in 0..cells.len() {
        let best = settings
            .iter()
            .enumerate()
            .filter_map(|(mi, s)| s.iops[ci].as_ref().map(|c| (mi, c.mean)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((mi, _)) = best {
            best_count[mi] += 1;
        }
    }
    let best = best_count
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .max_by_key(|(_, n)| **n)
        .map(|(mi, _)| mi);
    let beats = |mi: usize| {
        settings[mi]
            .iops
            .iter()
            .flatten()
            .filter(|c| c.vs_baseline.as_deref() == Some(iogauge_stats::Verdict::Faster.label()))
            .count()
    };
    let ran: Vec<&SettingDoc> = settings.iter().filter(|s| s.run_id.is_some()).collect();
    // One setting that ran is best at nothing: "ext4 is best in 1 of 1 cells" with every other
    // file system skipped would read as a result.
    let no_verdict = match ran.as_slice() {
        [_, _, ..] => None,
        [only] if only.head == "as found" => {
            Some("only the settings as found ran, so there is nothing to compare".to_string())
        }
        [only] => Some(format!(
            "only {} ran, so there is nothing to compare",
            only.head
        )),
        [] => Some("no setting ran".to_string()),
    };
    let best = best.filter(|_| no_verdict.is_none());
    let (best_in, beats_baseline_in) = best.map_or((0, 0), |mi| (best_count[mi], beats(mi)));
    let best = best.map(|mi| settings[mi].head.clone());
    GroupDoc {
        title,
        baseline: base_at.map(|i| settings[i].head.clone()),
        settings,
        cells,
        best,
        best_in,
        beats_baseline_in,
        no_verdict,
    }
}
