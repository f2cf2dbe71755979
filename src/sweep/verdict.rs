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
    /// Every difference against the baseline that `compare`'s rule calls significant (Welch
    /// p < alpha and a change above the noise), cell by cell. Nothing else is a difference.
    pub differences: Vec<DifferenceDoc>,
    /// The one setting that no other is significantly faster than in any cell, and that is
    /// significantly faster than another in at least one; none when no setting is that.
    pub best: Option<String>,
    /// Cells in which `best` is significantly faster than at least one other setting.
    pub best_in: usize,
    /// Cells in which `best` is significantly faster than the baseline.
    pub beats_baseline_in: usize,
    /// Cells whose number a warning takes its meaning away from, under any setting.
    pub marked_cells: usize,
    /// Why there is no verdict: fewer than two settings ran, or too few runs to judge.
    pub no_verdict: Option<String>,
}

/// One significant difference against the baseline.
#[derive(Serialize)]
pub struct DifferenceDoc {
    pub setting: String,
    pub cell: String,
    /// "faster" or "slower".
    pub verdict: String,
    /// The setting's mean over the baseline's, minus one.
    pub change: f64,
    pub p_value: f64,
}

#[derive(Serialize)]
pub struct SettingDoc {
    pub head: String,
    pub label: String,
    /// The stored run's id (`run_id`), when it ran.
    pub run_id: Option<String>,
    pub skipped: Option<String>,
    /// In a fill sweep, the use of the target's file system as its cells began (statvfs, a
    /// share of its size: the run's `fill.level`), e.g. "40.0%".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<String>,
    /// Per cell: IOPS mean, the 95% CI, and the verdict against the baseline.
    pub iops: Vec<Option<CellDoc>>,
}

#[derive(Serialize)]
pub struct CellDoc {
    pub mean: f64,
    /// The 95% CI of the mean, with two repeats or more.
    pub ci95: Option<[f64; 2]>,
    /// "faster", "slower" or "no significant change" against the baseline; none for the
    /// baseline itself and where too few runs allow no judgement.
    pub vs_baseline: Option<String>,
    pub p_value: Option<f64>,
    /// What takes this number's meaning away (`model::caveats`), by name.
    pub caveats: Vec<crate::model::caveats::Caveat>,
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
        let filled = outcomes.iter().any(|(s, _)| s.fill.is_some());
        let title = match arrays {
            true => "array layouts (against the first)".to_string(),
            false if filled => {
                "the target's file system filled to each level (against as found)".to_string()
            }
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
    let mut groups: Vec<GroupDoc> = groups
        .into_iter()
        .map(|(title, members)| group(title, &members, grid, m))
        .collect();
    // A device that changed while the sweep ran makes every column a different device's: a
    // winner among them would be the change's, not a setting's.
    if !drift.is_empty() {
        for g in groups.iter_mut().filter(|g| g.no_verdict.is_none()) {
            g.best = None;
            g.best_in = 0;
            g.beats_baseline_in = 0;
            g.differences.clear();
            g.no_verdict = Some(
                "the settings as found measured differently at the start and at the end (the warning below), so the columns do not compare".to_string(),
            );
        }
    }
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

fn group(
    title: String,
    members: &[&(Setting, Outcome)],
    grid: bool,
    m: &dyn super::Measure,
) -> GroupDoc {
    use crate::model::caveats;
    use iogauge_stats::Verdict;
    let cells: Vec<String> = members
        .iter()
        .find_map(|(_, o)| o.doc.as_ref())
        .map(|d| d.results.iter().map(ResultDoc::display_name).collect())
        .unwrap_or_default();
    // A skipped first setting is no baseline: the next one that ran is, and the table says
    // which (a file-system sweep whose first mkfs is missing compares against the second).
    let base_at = members.iter().position(|(_, o)| o.doc.is_some());
    // Each setting's values per cell (one per repeat), the verdicts' evidence.
    let values: Vec<Vec<Option<Vec<f64>>>> = members
        .iter()
        .map(|(_, o)| {
            (0..cells.len())
                .map(|ci| o.doc.as_ref()?.results.get(ci).map(iops_of))
                .collect()
        })
        .collect();
    let judge = |base: &[f64], cand: &[f64]| {
        let c = iogauge_stats::verdict(base, cand, true, ALPHA, NOISE);
        (c.verdict != Verdict::CannotJudge).then_some(c)
    };
    let settings: Vec<SettingDoc> = members
        .iter()
        .enumerate()
        .map(|(mi, (set, o))| {
            let head = match set.knobs.as_slice() {
                [(_, v)] if !grid => v.clone(),
                [] if set.fill.is_some() => set.fill.map(|l| format!("{l}%")).unwrap_or_default(),
                [] if set.fs.is_none() && set.array.is_none() => "as found".into(),
                _ => o.label.clone(),
            };
            let iops = (0..cells.len())
                .map(|ci| {
                    let doc = o.doc.as_ref()?;
                    let r = doc.results.get(ci)?;
                    let v = values[mi][ci].as_deref()?;
                    let mut cell = CellDoc {
                        mean: v.iter().sum::<f64>() / v.len() as f64,
                        // An interval from one repeat is no interval.
                        ci95: r.stats.get("iops").filter(|s| s.n >= 2).map(|s| s.ci95),
                        vs_baseline: None,
                        p_value: None,
                        caveats: caveats::of_result(doc, ci),
                    };
                    let base = base_at
                        .filter(|b| mi > *b)
                        .and_then(|b| values[b][ci].as_deref());
                    if let Some(c) = base.and_then(|b| judge(b, v)) {
                        cell.vs_baseline = Some(c.verdict.label().to_string());
                        cell.p_value = c.p_value;
                    }
                    Some(cell)
                })
                .collect();
            SettingDoc {
                head,
                label: o.label.clone(),
                run_id: o.doc.as_ref().map(|d| d.run_id.clone()),
                skipped: o.skipped.clone(),
                used: o
                    .doc
                    .as_ref()
                    .and_then(|d| d.params.get("fill.level").cloned()),
                iops,
            }
        })
        .collect();
    let ran: Vec<usize> = (0..settings.len())
        .filter(|&i| settings[i].run_id.is_some())
        .collect();
    let judgeable = (0..cells.len()).any(|ci| {
        ran.iter()
            .filter(|&&mi| values[mi][ci].as_ref().is_some_and(|v| v.len() >= 2))
            .count()
            >= 2
    });
    // One setting that ran is best at nothing: "ext4 is best in 1 of 1 cells" with every other
    // file system skipped would read as a result. One run each has no variance to test, so no
    // difference can be called significant, and a winner by the raw means would be a guess.
    let no_verdict = match ran.as_slice() {
        [only] if settings[*only].head == "as found" => {
            Some("only the settings as found ran, so there is nothing to compare".to_string())
        }
        [only] => Some(format!(
            "only {} ran, so there is nothing to compare",
            settings[*only].head
        )),
        [] => Some("no setting ran".to_string()),
        _ if m.repeats() < 2 || !judgeable => {
            Some("one run each, so no difference can be judged: rerun with --repeat 3".to_string())
        }
        _ => None,
    };
    // Significantly faster, setting against setting: `beats[a][b]` lists the cells in which
    // a beats b.
    let n = settings.len();
    let mut beats = vec![vec![Vec::new(); n]; n];
    for &a in &ran {
        for &b in ran.iter().filter(|&&b| b != a) {
            for (ci, (va, vb)) in values[a].iter().zip(&values[b]).enumerate() {
                let (Some(va), Some(vb)) = (va, vb) else {
                    continue;
                };
                if judge(vb, va).is_some_and(|c| c.verdict == Verdict::Faster) {
                    beats[a][b].push(ci);
                }
            }
        }
    }
    let beaten = |a: usize| ran.iter().any(|&b| !beats[b][a].is_empty());
    let wins = |a: usize| -> std::collections::BTreeSet<usize> {
        ran.iter()
            .flat_map(|&b| beats[a][b].iter().copied())
            .collect()
    };
    let candidates: Vec<usize> = ran
        .iter()
        .copied()
        .filter(|&a| !beaten(a) && !wins(a).is_empty())
        .collect();
    let best = match (candidates.as_slice(), &no_verdict) {
        ([one], None) => Some(*one),
        _ => None,
    };
    let differences = match (&no_verdict, base_at) {
        (None, Some(b)) => ran
            .iter()
            .filter(|&&mi| mi != b)
            .flat_map(|&mi| {
                let settings = &settings;
                let cells = &cells;
                (0..cells.len()).filter_map(move |ci| {
                    let c = settings[mi].iops[ci].as_ref()?;
                    let base = settings[b].iops[ci].as_ref()?;
                    let verdict = c.vs_baseline.as_deref()?;
                    (verdict != Verdict::NoChange.label()).then(|| DifferenceDoc {
                        setting: settings[mi].head.clone(),
                        cell: cells[ci].clone(),
                        verdict: verdict.to_string(),
                        change: c.mean / base.mean - 1.0,
                        p_value: c.p_value.unwrap_or(0.0),
                    })
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let marked_cells = (0..cells.len())
        .filter(|&ci| {
            settings
                .iter()
                .any(|s| s.iops[ci].as_ref().is_some_and(|c| !c.caveats.is_empty()))
        })
        .count();
    GroupDoc {
        title,
        baseline: base_at.map(|i| settings[i].head.clone()),
        best_in: best.map_or(0, |a| wins(a).len()),
        beats_baseline_in: match (best, base_at) {
            (Some(a), Some(b)) => beats[a][b].len(),
            _ => 0,
        },
        best: best.map(|a| settings[a].head.clone()),
        settings,
        cells,
        differences,
        marked_cells,
        no_verdict,
    }
}
