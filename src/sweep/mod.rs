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
use crate::{say, units};
use anyhow::Result;
use fs::{FsSpec, Mounted};
use knobs::{Guard, Knob, KnobSpec};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

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
    suite.repeat.repeat.get_or_insert(3);
    // Everything the suite needs is checked before any knob changes or any mkfs runs.
    let check = crate::plan::from_suite(&suite)?;
    if check.output.dry_run {
        return Err(usage(
            "--dry-run shows one suite's plan: run `iogauge suite … --dry-run`",
        ));
    }
    // Both kinds change the machine (sysfs, mkfs): root only, and said before anything runs.
    if !crate::db::is_root() {
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
    let (knob_list, outcomes) = outcomes;
    let text = table(&id, &check.suite.name, &knob_list, &outcomes, &fss);
    crate::ui::out(&text)?;
    match crate::interrupt::requested() {
        Some(sig) => Err(crate::error::Interrupted(sig).into()),
        None => Ok(()),
    }
}

type Swept = (Vec<Knob>, Vec<(Setting, Outcome)>);

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
    let knobs = knobs::find(specs, &devices)?;
    let settings = settings_of(&knobs, grid);
    say!(
        "sweep {id}: {} settings of {} on {} · {} repeats each",
        settings.len(),
        knobs
            .iter()
            .map(|k| format!("{} (as found: {})", k.spec.label(), k.as_found()))
            .collect::<Vec<_>>()
            .join(", "),
        devices.join(", "),
        suite.repeat.repeat.unwrap_or(3)
    );
    let mut guard = Guard::new(&knobs)?;
    let mut out = Vec::new();
    for (n, s) in settings.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let label = label_of(&knobs, s);
        say!("[setting {}/{}] {label}", n + 1, settings.len());
        if let Err(why) = apply(&knobs, s) {
            say!(
                "[setting {}/{}] {label}: skipped, {why}",
                n + 1,
                settings.len()
            );
            out.push((s.clone(), skipped(label, why)));
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
        out.push((s.clone(), outcome(label, doc)?));
    }
    for f in guard.restore() {
        say!("warning: {f}");
    }
    Ok((knobs, out))
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
    let mut out = Vec::new();
    for (n, s) in settings.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let label = label_of(&[], s);
        let Some((f, o)) = &s.fs else { continue };
        if f.mkfs().is_none() {
            let why = format!("mkfs.{} is not installed", f.fs);
            say!(
                "[setting {}/{}] {label}: skipped, {why}",
                n + 1,
                settings.len()
            );
            out.push((s.clone(), skipped(label, why)));
            continue;
        }
        say!("[setting {}/{}] {label}", n + 1, settings.len());
        let mounted = match Mounted::make(dev, f, o.as_deref()) {
            Ok(m) => m,
            Err(e) => {
                let why = format!("{e:#}");
                say!(
                    "[setting {}/{}] {label}: skipped, {why}",
                    n + 1,
                    settings.len()
                );
                out.push((s.clone(), skipped(label, why)));
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
        out.push((s.clone(), outcome(label, doc)?));
    }
    Ok((Vec::new(), out))
}

fn skipped(label: String, why: String) -> Outcome {
    Outcome {
        label,
        doc: None,
        skipped: Some(why),
    }
}

/// A setting's run; a failing suite is named and the sweep goes on, an interrupt ends it.
fn outcome(label: String, doc: Result<RunDoc>) -> Result<Outcome> {
    match doc {
        Ok(d) => Ok(Outcome {
            label,
            doc: Some(d),
            skipped: None,
        }),
        Err(e) if e.downcast_ref::<crate::error::Interrupted>().is_some() => Err(e),
        Err(e) => {
            let why = format!("{e:#}");
            say!("{label}: the suite failed: {why}");
            Ok(skipped(label, why))
        }
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

/// The sweep table: per knob (or for the file systems), each cell's IOPS with its 95% CI under
/// each setting, and the verdict against the baseline.
fn table(
    id: &str,
    suite: &str,
    knobs: &[Knob],
    outcomes: &[(Setting, Outcome)],
    fss: &[FsSpec],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sweep {id} · suite {suite} · IOPS: mean of the repeats (± half the 95% CI, Student t) · verdict: Welch p < {ALPHA} and a change above {:.0}%",
        NOISE * 100.0
    );
    let base = outcomes.first();
    // Groups: one per knob (the baseline and that knob's settings), or all of a grid / fs sweep.
    let mut groups: Vec<(String, Vec<&(Setting, Outcome)>)> = Vec::new();
    let grid = outcomes.iter().any(|(s, _)| s.knobs.len() > 1);
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
    for (title, members) in groups {
        let _ = writeln!(s, "\n{title}");
        let head: Vec<String> = members
            .iter()
            .map(|(set, o)| match set.knobs.as_slice() {
                [(_, v)] if !grid => v.clone(),
                [] if set.fs.is_none() => "as found".into(),
                _ => o.label.clone(),
            })
            .collect();
        let Some(first) = members.iter().find_map(|(_, o)| o.doc.as_ref()) else {
            let _ = writeln!(s, "  nothing was measured");
            continue;
        };
        let cells: Vec<String> = first.results.iter().map(cell_name).collect();
        let w0 = cells.iter().map(|c| c.len()).max().unwrap_or(4).max(4) + 2;
        let _ = write!(s, "  {:<w0$}", "cell");
        for h in &head {
            let _ = write!(s, "{h:>24}");
        }
        let _ = writeln!(s);
        let baseline = members.first().and_then(|(_, o)| o.doc.as_ref());
        // Per setting: (cells where it is best, cells where it beats the baseline).
        let mut best_count = vec![0usize; members.len()];
        let mut beats = vec![0usize; members.len()];
        for (ci, cell) in cells.iter().enumerate() {
            let _ = write!(s, "  {cell:<w0$}");
            let mut means = Vec::new();
            for (mi, (_, o)) in members.iter().enumerate() {
                let r = o.doc.as_ref().and_then(|d| d.results.get(ci));
                let text = match (r, &o.skipped) {
                    (_, Some(_)) => "skipped".to_string(),
                    (None, None) => "—".to_string(),
                    (Some(r), None) => {
                        let v = iops_of(r);
                        let mean = v.iter().sum::<f64>() / v.len() as f64;
                        means.push((mi, mean));
                        let mut t = units::count(mean);
                        if let Some(st) = r.stats.get("iops") {
                            let half = (st.ci95[1] - st.ci95[0]) / 2.0;
                            let _ = write!(t, " ±{}", units::count(half));
                        }
                        if mi > 0 {
                            if let Some(b) = baseline.and_then(|d| d.results.get(ci)) {
                                let c = iogauge_stats::verdict(&iops_of(b), &v, true, ALPHA, NOISE);
                                let mark = match c.verdict {
                                    iogauge_stats::Verdict::Faster => {
                                        beats[mi] += 1;
                                        " ▲"
                                    }
                                    iogauge_stats::Verdict::Slower => " ▼",
                                    _ => " ·",
                                };
                                t.push_str(mark);
                            }
                        }
                        t
                    }
                };
                let _ = write!(s, "{text:>24}");
            }
            let _ = writeln!(s);
            if let Some(&(mi, _)) = means.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
                best_count[mi] += 1;
            }
        }
        if let Some((mi, n)) = best_count.iter().enumerate().max_by_key(|(_, n)| **n) {
            let who = &head[mi];
            let real = match mi {
                0 => format!(
                    "{} is best in {n} of {} cells: no other setting beats it",
                    head[0],
                    cells.len()
                ),
                _ => format!(
                    "{who} is best in {n} of {} cells and beats {} in {} of them (▲ faster, ▼ slower, · no significant change, by compare's rule)",
                    cells.len(),
                    head[0],
                    beats[mi]
                ),
            };
            let _ = writeln!(s, "  verdict: {real}");
        }
        for (_, o) in &members {
            if let Some(why) = &o.skipped {
                let _ = writeln!(s, "  {}: skipped, {why}", o.label);
            }
        }
    }
    let _ = writeln!(
        s,
        "\nEach setting is stored as a run tagged sweep={id}: iogauge list, iogauge compare sweep:{id}, iogauge report sweep:{id}"
    );
    s
}
