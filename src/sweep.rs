//! `iogauge sweep`: the studies' "change only one single parameter between test runs", done by
//! the tool. Each setting — a device queue knob's value, or a file system on a scratch device —
//! runs the same suite (3 repeats by default), is stored as a run tagged with the sweep and its
//! setting, and the sweep ends with a table per knob and a verdict by `compare`'s rule.
//!
//! Knobs are journaled before they change and restored at the end, on an error and on Ctrl-C;
//! a killed sweep's journal is replayed by the next command ([`recover`]). A scratch device
//! carries no signature before and none after.

pub mod array;
mod fill;
pub mod fs;
pub mod knobs;
mod layouts;
mod rebuild;

use layouts::{array_sweep, Axes};
mod verdict;

use verdict::summarize;
pub use verdict::{GroupDoc, SweepDoc};

pub use crate::plan::axes::SweepPlan;
use crate::plan::axes::{Built, Health, Rebuild};
pub use knobs::recover;

use crate::error::usage;
use crate::model::{ResultDoc, RunDoc};
use crate::plan::Plan;
use crate::units;
use anyhow::Result;
use fs::{FsSpec, Mounted};
use knobs::{Guard, Knob, KnobSpec};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The label of the baseline measured again after every other setting.
use crate::compare::AGAIN;

/// `compare`'s rule, from the one place it is defined: Welch's p below this, and a change
/// above the noise.
const ALPHA: f64 = iogauge_stats::DEFAULT_ALPHA;
const NOISE: f64 = iogauge_stats::DEFAULT_NOISE;

/// One point of the sweep.
#[derive(Clone, Debug, Default)]
struct Setting {
    /// The knob (index into the knobs) this setting changes, with its value; empty for the
    /// baseline, several with --grid.
    knobs: Vec<(usize, String)>,
    /// A file system and its mount options.
    fs: Option<(FsSpec, Option<String>)>,
    /// An array: its layout, how many of the scratch devices, its chunk, and the state it is
    /// measured in (whole, a member missing, rebuilding one).
    array: Option<(array::Layout, usize, Option<u64>, Health)>,
    /// The level of use (percent) the target's file system is filled to.
    fill: Option<f64>,
}

/// What a setting measured, or why it did not run.
struct Outcome {
    label: String,
    doc: Option<RunDoc>,
    skipped: Option<String>,
}

/// What a sweep measures in each setting: a suite (`iogauge sweep`), or a load on a throwaway
/// database server (`iogauge db … --scratch`).
pub trait Measure {
    /// The sweep's name, in its id and its table: the suite's, or e.g. "db-pgbench".
    fn name(&self) -> String;
    /// Only the plan is said; nothing is built.
    fn dry_run(&self) -> bool;
    /// Runs of each setting.
    fn repeats(&self) -> u32;

    /// What a cell's figure counts, in the sweep's table.
    fn rate(&self) -> &'static str {
        "IOPS"
    }
    /// What each setting runs, as a dry run says it: "the suite planned below, 3 times".
    fn each(&self) -> String;
    /// Bytes it needs in a file system made for it, where known ahead.
    fn room(&self) -> Option<u64> {
        None
    }
    /// One setting, measured where `at` says.
    fn measure(&self, at: At, hooks: &dyn crate::exec::Hooks) -> Result<RunDoc>;
}

/// Where one setting is measured and what tags its run.
pub struct At {
    /// A directory (a file system made for the setting), the raw array iogauge built (with
    /// `raw`), or `None`: the plan's own target (a knob sweep).
    pub target: Option<PathBuf>,
    pub raw: bool,
    /// The sweep's id and the setting's label (`sweep`, `sweep.setting`), and what it changed.
    pub params: BTreeMap<String, String>,
    pub notes: Vec<String>,
}

impl At {
    fn new(
        id: &str,
        label: &str,
        mut params: BTreeMap<String, String>,
        target: Option<PathBuf>,
        notes: Vec<String>,
    ) -> At {
        params.insert("sweep".into(), id.to_string());
        params.insert("sweep.setting".into(), label.to_string());
        At {
            target,
            raw: false,
            params,
            notes,
        }
    }
}

/// A sweep's suite: its plan, once per setting, tagged with the sweep and the setting.
impl Measure for Plan {
    fn name(&self) -> String {
        self.suite.name.clone()
    }

    fn dry_run(&self) -> bool {
        self.output.dry_run
    }

    fn repeats(&self) -> u32 {
        self.repeat.n
    }

    fn each(&self) -> String {
        format!("the suite planned below, {} times", self.repeat.n)
    }

    fn room(&self) -> Option<u64> {
        Some(
            self.target
                .size
                .map_or(self.target.created_size, |s| s + self.target.offset),
        )
    }

    fn measure(&self, at: At, hooks: &dyn crate::exec::Hooks) -> Result<RunDoc> {
        let mut plan = self.clone();
        if let Some(t) = at.target {
            plan.target.path = Some(t);
        }
        // The raw array is iogauge's own, just built from blank members: writing it needs no
        // other consent than the members' (checked blank before).
        plan.target.allow_overwrite |= at.raw;
        plan.params.extend(at.params);
        plan.notes.extend(at.notes);
        crate::exec::measure(&plan, hooks)
    }
}

pub fn run(sp: SweepPlan, hooks: &dyn crate::exec::Hooks) -> Result<Sweep> {
    let SweepPlan {
        knobs: specs,
        grid,
        fill,
        built,
        check,
    } = sp;
    let outcomes = match built.scratch.is_empty() {
        false => on_scratch(&built, &check, hooks)?,
        // Filling a file system beside a test file needs no more rights than the test file.
        true if !fill.is_empty() => {
            let id = new_id(&check.name());
            fill::fill_sweep(&check, &id, &fill, hooks)?.map(|(k, o)| (id, k, o))
        }
        true => {
            root_only(&check)?;
            let id = new_id(&check.name());
            knob_sweep(&check, &id, &specs, grid, hooks)?.map(|(k, o)| (id, k, o))
        }
    };
    // --dry-run: the sweep's plan was said; the suite's, once per setting, follows.
    let Some((id, knob_list, outcomes)) = outcomes else {
        let mut once = check;
        once.output.dry_run = true;
        return Ok(Sweep::Planned(Box::new(once)));
    };
    let mut doc = summarize(&id, &check, &knob_list, &outcomes, &built.fss);
    doc.stored = !check.output.no_store;
    Ok(Sweep::Done {
        doc,
        json: check.output.json,
    })
}

/// `m` in each file system or array built on the scratch devices (`db … --scratch`): the
/// sweep's document, or `None` for a dry run, whose plan was said.
pub fn built(
    b: &Built,
    m: &dyn Measure,
    no_store: bool,
    hooks: &dyn crate::exec::Hooks,
) -> Result<Option<SweepDoc>> {
    let Some((id, knobs, outcomes)) = on_scratch(b, m, hooks)? else {
        return Ok(None);
    };
    let mut doc = summarize(&id, m, &knobs, &outcomes, &b.fss);
    doc.stored = !no_store;
    Ok(Some(doc))
}

/// Building changes the machine (sysfs, mkfs): root only, and said before anything runs. A dry
/// run only reads (the knobs as found, the scratch device's signature).
fn root_only(m: &dyn Measure) -> Result<()> {
    match crate::db::is_root() || m.dry_run() {
        true => Ok(()),
        false => Err(usage(
            "a sweep changes device settings or makes file systems, which needs root; run it with sudo",
        )),
    }
}

/// How often each setting runs, for the sweep's first line.
fn runs_each(n: u32) -> String {
    match n {
        1 => "one run each".to_string(),
        n => format!("{n} repeats each"),
    }
}

/// A sweep's id: its name and the time it started, e.g. `quick-20261125T083000`.
fn new_id(name: &str) -> String {
    format!(
        "{name}-{}",
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace([':', '-'], "")
            .trim_end_matches('Z')
    )
}

/// File systems on one scratch device, or arrays from several, each measured by `m`.
fn on_scratch(b: &Built, m: &dyn Measure, hooks: &dyn crate::exec::Hooks) -> Result<Swept> {
    root_only(m)?;
    let id = new_id(&m.name());
    let swept = match (b.scratch.first(), b.layouts.is_empty()) {
        (Some(_), false) => array_sweep(
            m,
            &id,
            &b.scratch,
            &Axes {
                layouts: &b.layouts,
                chunks: &b.chunks,
                members: &b.members,
                fs: b.fss.first(),
                mount_opts: b.mount_opts.first().map(String::as_str),
                assume_clean: b.assume_clean,
                degraded: b.degraded,
                rebuild: b.rebuild,
            },
            hooks,
        )?,
        (Some(dev), true) => fs_sweep(m, &id, dev, &b.fss, &b.mount_opts, hooks)?,
        (None, _) => None,
    };
    Ok(swept.map(|(k, o)| (id, k, o)))
}

/// What a sweep ends in: its document, or for `--dry-run` the suite's plan to say once per
/// setting.
pub enum Sweep {
    Planned(Box<crate::plan::Plan>),
    Done { doc: SweepDoc, json: bool },
}

/// The knobs and each setting's outcome; `None` for a dry run, which stops after the plan.
type Swept = Option<(String, Vec<Knob>, Vec<(Setting, Outcome)>)>;
type Settings = Option<(Vec<Knob>, Vec<(Setting, Outcome)>)>;

fn knob_sweep(
    plan: &Plan,
    id: &str,
    specs: &[KnobSpec],
    grid: bool,
    hooks: &dyn crate::exec::Hooks,
) -> Result<Settings> {
    let path = plan
        .target
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let system = iogauge_sysinfo::capture(Some(&path));
    let devices: Vec<String> = system
        .target
        .as_ref()
        .map(|t| t.devices.iter().map(|d| d.name.clone()).collect())
        .unwrap_or_default();
    // Which devices the knobs change (their values read here are not kept). Those are locked
    // for the whole sweep, and the values "as found" read again under the lock: a second sweep
    // of one of them would take this one's temporary values for the originals and "restore"
    // them. Only those: a sweep of loop1's scheduler does not hold the disk under its backing
    // file, and a dry run, which changes nothing, holds nothing.
    let knobs = knobs::find(specs, &devices)?;
    let changed: Vec<String> = knobs.iter().flat_map(Knob::devices).collect();
    let _locks = match plan.output.dry_run {
        true => Vec::new(),
        false => crate::ledger::lock_devices(&changed)?,
    };
    let knobs = match plan.output.dry_run {
        true => knobs,
        false => knobs::find(specs, &devices)?,
    };
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
        fill: None,
        knobs: Vec::new(),
        fs: None,
        array: None,
    });
    // The plan names each device that changes (`as found: V on DEV`); the devices below the
    // target that keep their settings are named too, so nobody wonders whether the disk under
    // a loop device was touched.
    say!(
        "sweep {id}: {} settings of {} · {}",
        settings.len(),
        knobs
            .iter()
            .map(|k| format!("{} (as found: {})", k.spec.label(), k.as_found()))
            .collect::<Vec<_>>()
            .join(", "),
        runs_each(plan.repeat.n)
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
    if plan.output.dry_run {
        say!(
            "dry run: nothing is changed; each setting runs the suite planned below, {} times",
            plan.repeat.n
        );
        return Ok(None);
    }
    let mut guard = Guard::new(&knobs)?;
    let out = in_turn(&settings, &knobs, |s, label| {
        apply(&knobs, s)?;
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
        Ok(plan.measure(At::new(id, label, params, None, notes), hooks))
    })?;
    for f in guard.restore() {
        say!("warning: {f}");
    }
    Ok(Some((knobs, out)))
}

/// Measures each setting in turn, the last named as the baseline measured again: `one` sets
/// it up and measures it, or says why it cannot (the setting is skipped, and the sweep goes
/// on). An interrupt ends the sweep.
fn in_turn(
    settings: &[Setting],
    knobs: &[Knob],
    mut one: impl FnMut(&Setting, &str) -> std::result::Result<Result<RunDoc>, String>,
) -> Result<Vec<(Setting, Outcome)>> {
    let mut out = Vec::new();
    for (n, s) in settings.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let label = match n + 1 == settings.len() {
            true => AGAIN.to_string(),
            false => label_of(knobs, s),
        };
        say!("[setting {}/{}] {label}", n + 1, settings.len());
        let o = match one(s, &label) {
            Err(why) => skipped(n, settings.len(), label, why),
            Ok(doc) => outcome(n, settings.len(), label, doc)?,
        };
        out.push((s.clone(), o));
    }
    Ok(out)
}

/// The baseline (every knob as found), then one knob at a time through its other values, or
/// with `grid` every combination.
fn settings_of(knobs: &[Knob], grid: bool) -> Vec<Setting> {
    let base = Setting {
        fill: None,
        knobs: Vec::new(),
        fs: None,
        array: None,
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
            out.push(Setting {
                fill: None,
                knobs: c,
                fs: None,
                array: None,
            });
        }
    } else {
        for (k, knob) in knobs.iter().enumerate() {
            for v in &knob.spec.values {
                if v != knob.original() {
                    out.push(Setting {
                        fill: None,
                        knobs: vec![(k, v.clone())],
                        fs: None,
                        array: None,
                    });
                }
            }
        }
    }
    out
}

fn label_of(knobs: &[Knob], s: &Setting) -> String {
    if let Some((layout, n, chunk, health)) = &s.array {
        let mut l = match layout.kind {
            array::Kind::Single => "single".to_string(),
            _ => format!("{} × {n}", layout.label()),
        };
        if let Some(c) = chunk.filter(|_| layout.takes_chunk()) {
            l.push_str(&format!(" · chunk {}", units::bs_label(c)));
        }
        l.push_str(health.suffix());
        if let Some((f, _)) = &s.fs {
            l.push_str(&format!(" · {}", f.fs));
        }
        return l;
    }
    if let Some(l) = s.fill {
        return format!("fill {l}%");
    }
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
    m: &dyn Measure,
    id: &str,
    dev: &std::path::Path,
    fss: &[FsSpec],
    mount_opts: &[String],
    hooks: &dyn crate::exec::Hooks,
) -> Result<Settings> {
    // Two file-system sweeps on one scratch device would wipe each other's file systems.
    let name = std::fs::canonicalize(dev)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dev.display().to_string());
    // A dry run changes nothing and holds nothing.
    let _lock = match m.dry_run() {
        true => Vec::new(),
        false => crate::ledger::lock_devices(std::slice::from_ref(&name))?,
    };
    crate::target::scratch(&[dev.to_path_buf()], "a scratch device")?;
    let opts: Vec<Option<String>> = match mount_opts.is_empty() {
        true => vec![None],
        false => mount_opts.iter().map(|o| Some(o.clone())).collect(),
    };
    let settings: Vec<Setting> = fss
        .iter()
        .flat_map(|f| {
            opts.iter().map(move |o| Setting {
                fill: None,
                knobs: Vec::new(),
                fs: Some((f.clone(), o.clone())),
                array: None,
            })
        })
        .collect();
    // The test file lives in each new file system, which holds less than the device: a test
    // file as large as the device or larger fails in every setting (every one was skipped for
    // "needs 4 GiB but only 906.2 MiB is free"), so it is refused now, dry run or not.
    let need = m.room();
    if let (Some(need), Some(holds)) = (need, fs::device_bytes(dev)) {
        if need >= holds {
            return Err(crate::error::usage(format!(
                "the suite's test file of {} cannot fit in a file system on {} ({} in all, less once formatted); give --size of at most about {}",
                crate::units::iec(need),
                dev.display(),
                crate::units::iec(holds),
                crate::units::iec(holds / 10 * 8)
            )));
        }
    }
    let small = match m.room() {
        Some(need) => fs::too_small(need, dev, fss)?,
        None => Vec::new(),
    };
    say!(
        "sweep {id}: {} file systems on {} · {}",
        settings.len(),
        dev.display(),
        runs_each(m.repeats())
    );
    if m.dry_run() {
        for (label, why) in &small {
            say!("dry run: {label} would be skipped: {why}");
        }
        say!(
            "dry run: nothing is made or mounted on {}; each file system runs {} (in that file system)",
            dev.display(),
            m.each()
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
        if let Some((_, why)) = small.iter().find(|(l, _)| *l == f.label()) {
            out.push((s.clone(), skipped(n, settings.len(), label, why.clone())));
            continue;
        }
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
        let doc = m.measure(
            At::new(id, &label, params, Some(mounted.dir.clone()), notes),
            hooks,
        );
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
        Err(e) => Ok(skipped(
            n,
            of,
            label,
            format!("the measurement failed: {e:#}"),
        )),
    }
}
