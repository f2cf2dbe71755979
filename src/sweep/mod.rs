//! `iogauge sweep`: the studies' "change only one single parameter between test runs", done by
//! the tool. Each setting — a device queue knob's value, or a file system on a scratch device —
//! runs the same suite (3 repeats by default), is stored as a run tagged with the sweep and its
//! setting, and the sweep ends with a table per knob and a verdict by `compare`'s rule.
//!
//! Knobs are journaled before they change and restored at the end, on an error and on Ctrl-C;
//! a killed sweep's journal is replayed by the next command ([`recover`]). A scratch device
//! carries no signature before and none after.

pub mod fs;
pub mod knobs;

pub use knobs::recover;

use crate::cli::SweepArgs;
use crate::error::usage;
use crate::model::{ResultDoc, RunDoc};
use crate::units;
use anyhow::Result;
use fs::{FsSpec, Mounted};
use knobs::{Guard, Knob, KnobSpec};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// The label of the baseline measured again after every other setting.
const AGAIN: &str = "as found, again";

/// `compare`'s rule: Welch's p below this, and a change above the noise.
const ALPHA: f64 = 0.05;
const NOISE: f64 = 0.02;

/// One point of the sweep.
#[derive(Clone, Debug)]
struct Setting {
    /// The knob (index into the knobs) this setting changes, with its value; empty for the
    /// baseline, several with --grid.
    knobs: Vec<(usize, String)>,
    /// A file system and its mount options.
    fs: Option<(FsSpec, Option<String>)>,
}

/// What a setting measured, or why it did not run.
struct Outcome {
    label: String,
    doc: Option<RunDoc>,
    skipped: Option<String>,
}

pub fn run(args: &SweepArgs) -> Result<()> {
    let specs: Vec<KnobSpec> = args
        .knob
        .iter()
        .map(|k| KnobSpec::parse(k))
        .collect::<Result<_>>()?;
    let mut fss: Vec<FsSpec> = Vec::new();
    for f in &args.fs {
        fss.extend(FsSpec::parse(f)?);
    }
    if specs.is_empty() && fss.is_empty() {
        return Err(usage(
            "a sweep needs what to change: --knob NAME=V1,V2 (e.g. --knob scheduler=none,mq-deadline) or --scratch DEV --fs ext4,xfs",
        ));
    }
    if !specs.is_empty() && !fss.is_empty() {
        return Err(usage(
            "sweep knobs or file systems, not both at once (one change at a time); run two sweeps",
        ));
    }
    let mut suite = args.suite.clone();
    // With --file the one positional argument is the target, as `suite` reads it.
    if suite.file.is_some() && suite.target.target.is_none() {
        suite.target.target = suite.name.take().map(PathBuf::from);
    }
    if args.scratch.is_some() && suite.target.target.is_some() {
        return Err(usage(
            "with --scratch the suite runs in the file systems made there; give no TARGET",
        ));
    }
    if suite.output.baseline {
        return Err(usage(
            "--baseline shapes one run's summary; for a sweep's settings use iogauge compare --baseline sweep:ID after it",
        ));
    }
    suite.repeat.repeat.get_or_insert(3);
    // Everything the suite needs is checked before any knob changes or any mkfs runs.
    let check = crate::plan::from_suite(&suite)?;
    // Both kinds change the machine (sysfs, mkfs): root only, and said before anything runs.
    // A dry run only reads (the knobs as found, the scratch device's signature).
    if !crate::db::is_root() && !check.output.dry_run {
        return Err(usage(
            "a sweep changes device settings or makes file systems, which needs root; run it with sudo",
        ));
    }
    let id = format!(
        "{}-{}",
        check.suite.name,
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace([':', '-'], "")
            .trim_end_matches('Z')
    );
    let outcomes = match &args.scratch {
        Some(dev) => fs_sweep(&suite, &id, dev, &fss, &args.mount_opts)?,
        None => knob_sweep(&suite, &id, &specs, args.grid)?,
    };
    // --dry-run: the sweep's plan was said; the suite's, once per setting, follows.
    let Some((knob_list, outcomes)) = outcomes else {
        let mut once = check.clone();
        once.output.dry_run = true;
        return crate::commands::execute(&once);
    };
    let doc = summarize(&id, &check.suite.name, &knob_list, &outcomes, &fss);
    match check.output.json {
        true => crate::ui::out(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?,
        false => crate::ui::out(&render(&doc))?,
    }
    match crate::interrupt::requested() {
        Some(sig) => Err(crate::error::Interrupted(sig).into()),
        None => Ok(()),
    }
}

/// The knobs and each setting's outcome; `None` for a dry run, which stops after the plan.
type Swept = Option<(Vec<Knob>, Vec<(Setting, Outcome)>)>;

fn knob_sweep(
    suite: &crate::cli::SuiteArgs,
    id: &str,
    specs: &[KnobSpec],
    grid: bool,
) -> Result<Swept> {
    let path = suite
        .target
        .target
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let system = iogauge_sysinfo::capture(Some(&path));
    let devices: Vec<String> = system
        .target
        .as_ref()
        .map(|t| t.devices.iter().map(|d| d.name.clone()).collect())
        .unwrap_or_default();
    // Held for the whole sweep, before the values "as found" are read: a second sweep of the
    // same device would take this one's temporary values for the originals and "restore" them.
    let named: Vec<String> = devices
        .iter()
        .cloned()
        .chain(specs.iter().filter_map(|s| s.device.clone()))
        .collect();
    let _locks = crate::ledger::lock_devices(&named)?;
    let knobs = knobs::find(specs, &devices)?;
    let mut settings = settings_of(&knobs, grid);
    // A value asked for that is the one as found is measured as the baseline, and said so:
    // every value asked is either measured under its own name, this, or skipped with a reason.
    for k in &knobs {
        if let Some(v) = k.spec.values.iter().find(|v| v.as_str() == k.original()) {
            say!(
                "note: {}={v} is how {} was found, so it is measured as the baseline (\"as found\")",
                k.spec.label(),
                k.spec.label()
            );
        }
    }
    // The baseline once more at the end: a device whose state moved during the sweep (blocks
    // written for the first time, a cache warming, an SSD's spare area used up) shows as a
    // baseline that changed, instead of as a knob that seemed to matter.
    settings.push(Setting {
        knobs: Vec::new(),
        fs: None,
    });
    // The plan names each device that changes (`as found: V on DEV`); the devices below the
    // target that keep their settings are named too, so nobody wonders whether the disk under
    // a loop device was touched.
    say!(
        "sweep {id}: {} settings of {} · {} repeats each",
        settings.len(),
        knobs
            .iter()
            .map(|k| format!("{} (as found: {})", k.spec.label(), k.as_found()))
            .collect::<Vec<_>>()
            .join(", "),
        suite.repeat.repeat.unwrap_or(3)
    );
    let mut changed: Vec<&str> = Vec::new();
    for s in specs {
        if let Some(d) = s.device.as_deref().or(devices.first().map(String::as_str)) {
            if !changed.contains(&d) {
                changed.push(d);
            }
        }
    }
    let untouched: Vec<&str> = devices
        .iter()
        .map(String::as_str)
        .filter(|d| !changed.contains(d))
        .collect();
    if let Some(first) = untouched.first() {
        say!(
            "note: only {} is changed; {} of the target's stack {} (to sweep one, name it: --knob {first}:{}=…)",
            changed.join(", "),
            untouched.join(", "),
            match untouched.len() {
                1 => "keeps its settings",
                _ => "keep their settings",
            },
            knobs.first().map_or("NAME", |k| k.spec.name.as_str())
        );
    }
    if suite.output.dry_run {
        say!(
            "dry run: nothing is changed; each setting runs the suite planned below, {} times",
            suite.repeat.repeat.unwrap_or(3)
        );
        return Ok(None);
    }
    let mut guard = Guard::new(&knobs)?;
    let mut out = Vec::new();
    for (n, s) in settings.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let label = match n + 1 == settings.len() {
            true => AGAIN.to_string(),
            false => label_of(&knobs, s),
        };
        say!("[setting {}/{}] {label}", n + 1, settings.len());
        if let Err(why) = apply(&knobs, s) {
            out.push((s.clone(), skipped(n, settings.len(), label, why)));
            continue;
        }
        // The changed knob is a parameter (for compare's scaling order); every knob's value on
        // every device goes into the notes, as the studies asked: document all settings.
        let params: BTreeMap<String, String> = s
            .knobs
            .iter()
            .map(|(k, v)| (format!("knob.{}", knobs[*k].spec.label()), v.clone()))
            .collect();
        let notes = knobs
            .iter()
            .map(|k| {
                let now = k
                    .files
                    .iter()
                    .map(|(f, _)| knobs::read_value(f).unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "sweep {id}: {} = {now} (as found: {})",
                    k.spec.label(),
                    k.as_found()
                )
            })
            .collect();
        let doc = measure(suite, id, &label, params, None, notes);
        out.push((s.clone(), outcome(n, settings.len(), label, doc)?));
    }
    for f in guard.restore() {
        say!("warning: {f}");
    }
    Ok(Some((knobs, out)))
}

/// The baseline (every knob as found), then one knob at a time through its other values, or
/// with `grid` every combination.
fn settings_of(knobs: &[Knob], grid: bool) -> Vec<Setting> {
    let base = Setting {
        knobs: Vec::new(),
        fs: None,
    };
    let mut out = vec![base];
    if grid {
        let mut combos: Vec<Vec<(usize, String)>> = vec![Vec::new()];
        for (k, knob) in knobs.iter().enumerate() {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    knob.spec.values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((k, v.clone()));
                        c
                    })
                })
                .collect();
        }
        for c in combos {
            // The combination of originals is the baseline, already first.
            if c.iter().all(|(k, v)| *v == knobs[*k].original()) {
                continue;
            }
            out.push(Setting { knobs: c, fs: None });
        }
    } else {
        for (k, knob) in knobs.iter().enumerate() {
            for v in &knob.spec.values {
                if v != knob.original() {
                    out.push(Setting {
                        knobs: vec![(k, v.clone())],
                        fs: None,
                    });
                }
            }
        }
    }
    out
}

fn label_of(knobs: &[Knob], s: &Setting) -> String {
    if let Some((f, o)) = &s.fs {
        return match o {
            Some(o) => format!("{} -o {o}", f.label()),
            None => f.label(),
        };
    }
    match s.knobs.is_empty() {
        true => "as found".to_string(),
        false => s
            .knobs
            .iter()
            .map(|(k, v)| format!("{}={v}", knobs[*k].spec.label()))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Sets every knob to the setting's value or its original; the kernel's refusal in words.
fn apply(knobs: &[Knob], s: &Setting) -> std::result::Result<(), String> {
    for (k, knob) in knobs.iter().enumerate() {
        let want = s
            .knobs
            .iter()
            .find(|(i, _)| *i == k)
            .map(|(_, v)| v.as_str());
        for (file, original) in &knob.files {
            let v = want.unwrap_or(original);
            if knobs::read_value(file).ok().as_deref() == Some(v) {
                continue;
            }
            if let Err(e) = knobs::set(file, v) {
                return Err(format!("the kernel refused {} = {v} ({e})", file.display()));
            }
        }
    }
    Ok(())
}

fn fs_sweep(
    suite: &crate::cli::SuiteArgs,
    id: &str,
    dev: &std::path::Path,
    fss: &[FsSpec],
    mount_opts: &[String],
) -> Result<Swept> {
    // Two file-system sweeps on one scratch device would wipe each other's file systems.
    let name = std::fs::canonicalize(dev)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dev.display().to_string());
    let _lock = crate::ledger::lock_devices(std::slice::from_ref(&name))?;
    fs::check_scratch(dev)?;
    let opts: Vec<Option<String>> = match mount_opts.is_empty() {
        true => vec![None],
        false => mount_opts.iter().map(|o| Some(o.clone())).collect(),
    };
    let settings: Vec<Setting> = fss
        .iter()
        .flat_map(|f| {
            opts.iter().map(move |o| Setting {
                knobs: Vec::new(),
                fs: Some((f.clone(), o.clone())),
            })
        })
        .collect();
    say!(
        "sweep {id}: {} file systems on {} · {} repeats each",
        settings.len(),
        dev.display(),
        suite.repeat.repeat.unwrap_or(3)
    );
    if suite.output.dry_run {
        say!(
            "dry run: nothing is made or mounted; each file system runs the suite planned below (its test file then in that file system), {} times",
            suite.repeat.repeat.unwrap_or(3)
        );
        return Ok(None);
    }
    let mut out = Vec::new();
    for (n, s) in settings.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let label = label_of(&[], s);
        let Some((f, o)) = &s.fs else { continue };
        if f.mkfs().is_none() {
            let why = format!("mkfs.{} is not installed", f.fs);
            out.push((s.clone(), skipped(n, settings.len(), label, why)));
            continue;
        }
        say!("[setting {}/{}] {label}", n + 1, settings.len());
        let mounted = match Mounted::make(dev, f, o.as_deref()) {
            Ok(m) => m,
            Err(e) => {
                let why = format!("{e:#}");
                out.push((s.clone(), skipped(n, settings.len(), label, why)));
                continue;
            }
        };
        let params = BTreeMap::from([
            ("fs".to_string(), f.fs.clone()),
            ("fs.mkfs".to_string(), f.mkfs_opts.join(" ")),
            ("fs.mount".to_string(), o.clone().unwrap_or_default()),
        ]);
        let notes = vec![format!(
            "sweep {id}: mkfs.{} {} {}, mounted with {}",
            f.fs,
            f.mkfs_opts.join(" "),
            dev.display(),
            o.as_deref().unwrap_or("the defaults")
        )];
        let doc = measure(suite, id, &label, params, Some(mounted.dir.clone()), notes);
        drop(mounted);
        out.push((s.clone(), outcome(n, settings.len(), label, doc)?));
    }
    Ok(Some((Vec::new(), out)))
}

/// A setting that did not run, said as it happens and kept for the table.
fn skipped(n: usize, of: usize, label: String, why: String) -> Outcome {
    say!("[setting {}/{of}] {label}: skipped, {why}", n + 1);
    Outcome {
        label,
        doc: None,
        skipped: Some(why),
    }
}

/// A setting's run; a failing suite is named and the sweep goes on, an interrupt ends it.
fn outcome(n: usize, of: usize, label: String, doc: Result<RunDoc>) -> Result<Outcome> {
    match doc {
        Ok(d) => Ok(Outcome {
            label,
            doc: Some(d),
            skipped: None,
        }),
        Err(e) if e.downcast_ref::<crate::error::Interrupted>().is_some() => Err(e),
        Err(e) => Ok(skipped(n, of, label, format!("the suite failed: {e:#}"))),
    }
}

/// Runs the suite for one setting, tagged with the sweep and the setting.
fn measure(
    suite: &crate::cli::SuiteArgs,
    id: &str,
    label: &str,
    params: BTreeMap<String, String>,
    target: Option<PathBuf>,
    notes: Vec<String>,
) -> Result<RunDoc> {
    let mut args = suite.clone();
    if let Some(t) = target {
        args.target.target = Some(t);
    }
    let mut plan = crate::plan::from_suite(&args)?;
    plan.params.insert("sweep".into(), id.to_string());
    plan.params
        .insert("sweep.setting".into(), label.to_string());
    plan.params.extend(params);
    plan.notes.extend(notes);
    crate::exec::measure(&plan)
}

/// A result's IOPS per repeat (one value without repeats).
fn iops_of(r: &ResultDoc) -> Vec<f64> {
    match r.stats.get("iops") {
        Some(s) if !s.values.is_empty() => s.values.clone(),
        _ => vec![r.iops],
    }
}

fn cell_name(r: &ResultDoc) -> String {
    r.name.clone().unwrap_or_else(|| {
        format!(
            "{} {}",
            r.workload.rw.name(),
            units::bs_label(r.workload.bs)
        )
    })
}

/// What a sweep found, as `--json` prints it and the table shows it.
#[derive(Serialize)]
struct SweepDoc {
    sweep: String,
    suite: String,
    alpha: f64,
    noise: f64,
    /// Cells whose baseline changed between the first and the last run of the sweep.
    drift: Vec<String>,
    /// One per knob (its baseline and its settings), or one for a grid or a file-system sweep.
    groups: Vec<GroupDoc>,
}

#[derive(Serialize)]
struct GroupDoc {
    title: String,
    /// Column heads: the setting's value (or label); the first is the baseline.
    settings: Vec<SettingDoc>,
    cells: Vec<String>,
    /// The column every other is judged against: the first setting that ran (the values as
    /// found, or the first file system made).
    baseline: Option<String>,
    /// The setting best in most cells, and in how many of those it beats the baseline. Only
    /// settings that ran take part: one that was skipped is no competitor, and a verdict
    /// needs two that ran.
    best: Option<String>,
    best_in: usize,
    beats_baseline_in: usize,
    /// Why there is no verdict, when fewer than two settings ran.
    no_verdict: Option<String>,
}

#[derive(Serialize)]
struct SettingDoc {
    head: String,
    label: String,
    /// The stored run's id (`run_id`), when it ran.
    run_id: Option<String>,
    skipped: Option<String>,
    /// Per cell: IOPS mean, the 95% CI, and the verdict against the baseline.
    iops: Vec<Option<CellDoc>>,
}

#[derive(Serialize)]
struct CellDoc {
    mean: f64,
    ci95: Option<[f64; 2]>,
    vs_baseline: Option<String>,
    p_value: Option<f64>,
}

fn summarize(
    id: &str,
    suite: &str,
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
        (Some(first), Some(last)) => first
            .results
            .iter()
            .zip(&last.results)
            .filter_map(|(a, b)| {
                let c = iogauge_stats::verdict(&iops_of(a), &iops_of(b), true, ALPHA, NOISE);
                matches!(
                    c.verdict,
                    iogauge_stats::Verdict::Faster | iogauge_stats::Verdict::Slower
                )
                .then(|| {
                    format!(
                        "{}: {} IOPS at the start, {} at the end",
                        cell_name(a),
                        units::count(a.iops),
                        units::count(b.iops)
                    )
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let grid = outcomes.iter().any(|(s, _)| s.knobs.len() > 1);
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
        let title = match fss.is_empty() {
            true => "every combination (--grid)".to_string(),
            false => "file systems (against the first)".to_string(),
        };
        groups.push((title, outcomes.iter().collect()));
    }
    let groups = groups
        .into_iter()
        .map(|(title, members)| group(title, &members, grid))
        .collect();
    SweepDoc {
        sweep: id.to_string(),
        suite: suite.to_string(),
        alpha: ALPHA,
        noise: NOISE,
        drift,
        groups,
    }
}

fn group(title: String, members: &[&(Setting, Outcome)], grid: bool) -> GroupDoc {
    let cells: Vec<String> = members
        .iter()
        .find_map(|(_, o)| o.doc.as_ref())
        .map(|d| d.results.iter().map(cell_name).collect())
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
                [] if set.fs.is_none() => "as found".into(),
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

/// The sweep table: per knob (or for the file systems), each cell's IOPS with its 95% CI under
/// each setting, marked against the baseline, and the verdict.
fn render(doc: &SweepDoc) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sweep {} · suite {} · IOPS: mean of the repeats (± half the 95% CI, Student t) · ▲ faster ▼ slower · no significant change, against the first column that ran: Welch p < {} and a change above {:.0}%",
        doc.sweep,
        doc.suite,
        doc.alpha,
        doc.noise * 100.0
    );
    for g in &doc.groups {
        let _ = writeln!(s, "\n{}", g.title);
        if g.cells.is_empty() {
            let _ = writeln!(s, "  nothing was measured");
        }
        let w0 = g
            .cells
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(4)
            .max(4)
            + 2;
        if !g.cells.is_empty() {
            let _ = write!(s, "  {:<w0$}", "cell");
            for h in &g.settings {
                let _ = write!(s, "{:>24}", h.head);
            }
            let _ = writeln!(s);
        }
        for (ci, cell) in g.cells.iter().enumerate() {
            let pad = w0.saturating_sub(cell.chars().count());
            let _ = write!(s, "  {cell}{:pad$}", "");
            for set in &g.settings {
                let text = match (&set.skipped, &set.iops[ci]) {
                    (Some(_), _) => "skipped".to_string(),
                    (None, None) => "—".to_string(),
                    (None, Some(c)) => {
                        let mut t = units::count(c.mean);
                        if let Some([lo, hi]) = c.ci95 {
                            let _ = write!(t, " ±{}", units::count((hi - lo) / 2.0));
                        }
                        match c.vs_baseline.as_deref() {
                            Some("faster") => t.push_str(" ▲"),
                            Some("slower") => t.push_str(" ▼"),
                            Some(_) => t.push_str(" ·"),
                            None => {}
                        }
                        t
                    }
                };
                let _ = write!(s, "{text:>24}");
            }
            let _ = writeln!(s);
        }
        // The verdict names how many settings it judged, so a skipped one is never read as
        // having lost.
        let skipped: Vec<&str> = g
            .settings
            .iter()
            .filter(|x| x.skipped.is_some())
            .map(|x| x.head.as_str())
            .collect();
        let among = match skipped.is_empty() {
            true => String::new(),
            false => format!(
                " (among the {} settings that ran; not {}, skipped)",
                g.settings.len() - skipped.len(),
                skipped.join(", ")
            ),
        };
        if let (Some(best), Some(base)) = (&g.best, &g.baseline) {
            let verdict = if best == base {
                format!(
                    "{best} is best in {} of {} cells{among}: no other setting beats it",
                    g.best_in,
                    g.cells.len()
                )
            } else {
                format!(
                    "{best} is best in {} of {} cells{among} and beats {base} in {} of them",
                    g.best_in,
                    g.cells.len(),
                    g.beats_baseline_in
                )
            };
            let _ = writeln!(s, "  verdict: {verdict}");
        }
        if let Some(why) = &g.no_verdict {
            let _ = writeln!(s, "  no verdict: {why}");
        }
        for set in &g.settings {
            if let Some(why) = &set.skipped {
                let _ = writeln!(s, "  {}: skipped, {why}", set.label);
            }
        }
    }
    if !doc.drift.is_empty() {
        let _ = writeln!(
            s,
            "\nwarning: the settings as found measured differently at the start and at the end of the sweep, so the device changed while it ran and the columns above are not comparable:\n  {}\n  try: fill or precondition the target first (--precondition writes it twice over), or run the sweep twice and keep the second",
            doc.drift.join("\n  ")
        );
    }
    let _ = writeln!(
        s,
        "\nEach setting is stored as a run tagged sweep={0}: iogauge list, iogauge compare sweep:{0}, iogauge report sweep:{0}",
        doc.sweep
    );
    s
}
