//! `iogauge sweep`: the studies' "change only one single parameter between test runs", done by
//! the tool. Each setting — a device queue knob's value, or a file system on a scratch device —
//! runs the same suite (3 repeats by default), is stored as a run tagged with the sweep and its
//! setting, and the sweep ends with a table per knob and a verdict by `compare`'s rule.
//!
//! Knobs are journaled before they change and restored at the end, on an error and on Ctrl-C;
//! a killed sweep's journal is replayed by the next command ([`recover`]). A scratch device
//! carries no signature before and none after.

pub mod array;
pub mod fs;
pub mod knobs;
mod verdict;

use verdict::summarize;
pub use verdict::SweepDoc;

pub use crate::plan::axes::SweepPlan;
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
#[derive(Clone, Debug)]
struct Setting {
    /// The knob (index into the knobs) this setting changes, with its value; empty for the
    /// baseline, several with --grid.
    knobs: Vec<(usize, String)>,
    /// A file system and its mount options.
    fs: Option<(FsSpec, Option<String>)>,
    /// An array: its layout, how many of the scratch devices, its chunk.
    /// With `degraded`: one member failed and removed (md) before it is measured.
    array: Option<(array::Layout, usize, Option<u64>, bool)>,
}

/// What a setting measured, or why it did not run.
struct Outcome {
    label: String,
    doc: Option<RunDoc>,
    skipped: Option<String>,
}

pub fn run(sp: SweepPlan, hooks: &dyn crate::exec::Hooks) -> Result<Sweep> {
    let SweepPlan {
        knobs: specs,
        fss,
        scratch,
        layouts,
        chunks,
        members,
        assume_clean,
        degraded,
        mount_opts,
        grid,
        check,
    } = sp;
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
    let outcomes = match (scratch.first(), layouts.is_empty()) {
        (Some(_), false) => array_sweep(
            &check,
            &id,
            &scratch,
            &Axes {
                layouts: &layouts,
                chunks: &chunks,
                members: &members,
                fs: fss.first(),
                mount_opts: mount_opts.first().map(String::as_str),
                assume_clean,
                degraded,
            },
            hooks,
        )?,
        (Some(dev), true) => fs_sweep(&check, &id, dev, &fss, &mount_opts, hooks)?,
        (None, _) => knob_sweep(&check, &id, &specs, grid, hooks)?,
    };
    // --dry-run: the sweep's plan was said; the suite's, once per setting, follows.
    let Some((knob_list, outcomes)) = outcomes else {
        let mut once = check;
        once.output.dry_run = true;
        return Ok(Sweep::Planned(Box::new(once)));
    };
    let mut doc = summarize(&id, &check.suite.name, &knob_list, &outcomes, &fss);
    doc.stored = !check.output.no_store;
    Ok(Sweep::Done {
        doc,
        json: check.output.json,
    })
}

/// What a sweep ends in: its document, or for `--dry-run` the suite's plan to say once per
/// setting.
pub enum Sweep {
    Planned(Box<crate::plan::Plan>),
    Done { doc: SweepDoc, json: bool },
}

/// The knobs and each setting's outcome; `None` for a dry run, which stops after the plan.
type Swept = Option<(Vec<Knob>, Vec<(Setting, Outcome)>)>;

fn knob_sweep(
    plan: &Plan,
    id: &str,
    specs: &[KnobSpec],
    grid: bool,
    hooks: &dyn crate::exec::Hooks,
) -> Result<Swept> {
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
        knobs: Vec::new(),
        fs: None,
        array: None,
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
        plan.repeat.n
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
        let doc = measure(plan, id, &label, params, None, notes, hooks);
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
    if let Some((layout, n, chunk, degraded)) = &s.array {
        let mut l = match layout.kind {
            array::Kind::Single => "single".to_string(),
            _ => format!("{} × {n}", layout.label()),
        };
        if let Some(c) = chunk.filter(|_| layout.takes_chunk()) {
            l.push_str(&format!(" · chunk {}", units::bs_label(c)));
        }
        if *degraded {
            l.push_str(" · degraded");
        }
        if let Some((f, _)) = &s.fs {
            l.push_str(&format!(" · {}", f.fs));
        }
        return l;
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
    plan: &Plan,
    id: &str,
    dev: &std::path::Path,
    fss: &[FsSpec],
    mount_opts: &[String],
    hooks: &dyn crate::exec::Hooks,
) -> Result<Swept> {
    // Two file-system sweeps on one scratch device would wipe each other's file systems.
    let name = std::fs::canonicalize(dev)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dev.display().to_string());
    // A dry run changes nothing and holds nothing.
    let _lock = match plan.output.dry_run {
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
                knobs: Vec::new(),
                fs: Some((f.clone(), o.clone())),
                array: None,
            })
        })
        .collect();
    // The test file lives in each new file system, which holds less than the device: a test
    // file as large as the device or larger fails in every setting (every one was skipped for
    // "needs 4 GiB but only 906.2 MiB is free"), so it is refused now, dry run or not.
    let need = plan
        .target
        .size
        .map_or(plan.target.created_size, |s| s + plan.target.offset);
    if let Some(holds) = fs::device_bytes(dev) {
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
    say!(
        "sweep {id}: {} file systems on {} · {} repeats each",
        settings.len(),
        dev.display(),
        plan.repeat.n
    );
    if plan.output.dry_run {
        say!(
            "dry run: nothing is made or mounted; each file system runs the suite planned below (its test file then in that file system), {} times",
            plan.repeat.n
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
        let doc = measure(
            plan,
            id,
            &label,
            params,
            Some(mounted.dir.clone()),
            notes,
            hooks,
        );
        drop(mounted);
        out.push((s.clone(), outcome(n, settings.len(), label, doc)?));
    }
    Ok(Some((Vec::new(), out)))
}

/// The axes of a layout sweep.
struct Axes<'a> {
    layouts: &'a [array::Layout],
    chunks: &'a [u64],
    members: &'a [usize],
    fs: Option<&'a FsSpec>,
    mount_opts: Option<&'a str>,
    assume_clean: bool,
    degraded: bool,
}

/// Every array of the axes, smallest member count first, each layout in the order given, each
/// chunk: the settings of a layout sweep. A plain single device comes first, the baseline
/// everything is judged against, unless the user named `single` themselves.
fn array_settings(ax: &Axes, devices: usize) -> Vec<Setting> {
    let fs = ax
        .fs
        .map(|f| (f.clone(), ax.mount_opts.map(str::to_string)));
    let counts: Vec<usize> = match ax.members.is_empty() {
        true => vec![devices],
        false => ax.members.to_vec(),
    };
    let mut out = Vec::new();
    // Like for like: btrfs layouts against btrfs on one device (a file system against a file
    // system), the others against the plain device (with the same --fs, when given).
    let all_btrfs = ax.layouts.iter().all(|l| l.kind == array::Kind::Btrfs);
    let single = match all_btrfs {
        true => array::Layout::parse("btrfs:single"),
        false => array::Layout::parse("single"),
    }
    .expect("a layout of iogauge's own")
    .remove(0);
    if !ax.layouts.contains(&single) {
        out.push(Setting {
            knobs: Vec::new(),
            fs: fs.clone(),
            array: Some((single, 1, None, false)),
        });
    }
    for &n in &counts {
        for l in ax.layouts {
            if l.kind == array::Kind::Single {
                if n == counts[0] {
                    out.push(Setting {
                        knobs: Vec::new(),
                        fs: fs.clone(),
                        array: Some((l.clone(), 1, None, false)),
                    });
                }
                continue;
            }
            if n < l.min_members() {
                continue;
            }
            let chunks: Vec<Option<u64>> = match (l.takes_chunk(), ax.chunks.is_empty()) {
                (true, false) => ax.chunks.iter().map(|c| Some(*c)).collect(),
                _ => vec![None],
            };
            for c in chunks {
                out.push(Setting {
                    knobs: Vec::new(),
                    fs: fs.clone(),
                    array: Some((l.clone(), n, c, false)),
                });
                // The same array with a member missing, beside it: what the database sees
                // between a disk's failure and its replacement.
                if ax.degraded && l.redundant() {
                    out.push(Setting {
                        knobs: Vec::new(),
                        fs: fs.clone(),
                        array: Some((l.clone(), n, c, true)),
                    });
                }
            }
        }
    }
    out
}

/// A layout sweep: each array built from the scratch devices, measured (on the raw array, or
/// in the file system made on it, aligned to its stripe), taken apart with every member blank.
fn array_sweep(
    plan: &Plan,
    id: &str,
    devices: &[PathBuf],
    ax: &Axes,
    hooks: &dyn crate::exec::Hooks,
) -> Result<Swept> {
    let names: Vec<String> = devices
        .iter()
        .map(|d| {
            std::fs::canonicalize(d)
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| d.display().to_string())
        })
        .collect();
    // A dry run changes nothing and holds nothing.
    let _lock = match plan.output.dry_run {
        true => Vec::new(),
        false => crate::ledger::lock_devices(&names)?,
    };
    crate::target::scratch(devices, "an array's member")?;
    let settings = array_settings(ax, devices.len());
    say!(
        "sweep {id}: {} layouts from {} ({}) · {} repeats each{}",
        settings.len(),
        devices.len(),
        names.join(", "),
        plan.repeat.n,
        match (ax.layouts.iter().any(|l| l.redundant()), ax.assume_clean) {
            (false, _) => "",
            (true, true) => " · md arrays not resynced (--assume-clean)",
            (true, false) => " · md arrays resynced before they are measured",
        }
    );
    for (n, s) in settings.iter().enumerate() {
        say!("  [{}/{}] {}", n + 1, settings.len(), label_of(&[], s));
    }
    if plan.output.dry_run {
        say!(
            "dry run: nothing is built; each layout runs the suite planned below, {} times, {}",
            plan.repeat.n,
            match ax.fs {
                Some(f) => format!("in {} made on the array, aligned to its stripe", f.fs),
                None => "on the raw array (btrfs layouts in their own file system)".to_string(),
            }
        );
        return Ok(None);
    }
    let mut out = Vec::new();
    for (n, s) in settings.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let label = label_of(&[], s);
        let Some((layout, count, chunk, degraded)) = &s.array else {
            continue;
        };
        say!("[setting {}/{}] {label}", n + 1, settings.len());
        let built = array::Array::build(layout, &devices[..*count], *chunk, ax.assume_clean);
        let arr = match built {
            Ok(a) => a,
            Err(e) => {
                out.push((
                    s.clone(),
                    skipped(n, settings.len(), label, format!("{e:#}")),
                ));
                continue;
            }
        };
        let mut notes = vec![format!("sweep {id}: {}", arr.built)];
        if *degraded {
            match arr.degrade() {
                Ok(gone) => notes.push(format!(
                    "degraded: {} failed and removed from {} (mdadm --fail, --remove) before the measurement",
                    gone.display(),
                    arr.record.device.display()
                )),
                Err(e) => {
                    drop(arr);
                    out.push((s.clone(), skipped(n, settings.len(), label, format!("{e:#}"))));
                    continue;
                }
            }
        }
        // Where the suite runs: the btrfs file system the array is, a file system made on the
        // array (aligned to its stripe), or the raw array.
        let mounted = match (layout.kind, &s.fs) {
            (array::Kind::Btrfs, _) => fs::Mounted::existing(
                &arr.record.device,
                "btrfs",
                arr.record.uuid.clone(),
                ax.mount_opts,
            )
            .map(Some),
            (_, Some((f, o))) => {
                let spec = aligned(f, arr.geometry());
                if spec.mkfs_opts.len() > f.mkfs_opts.len() {
                    notes.push(format!(
                        "{} made aligned to the array: {}",
                        f.fs,
                        spec.mkfs_opts[f.mkfs_opts.len()..].join(" ")
                    ));
                }
                fs::Mounted::make(&arr.record.device, &spec, o.as_deref()).map(Some)
            }
            (_, None) => Ok(None),
        };
        // What was built, said as it is done (and kept in the run's notes).
        for note in &notes {
            say!("  {note}");
        }
        let mounted = match mounted {
            Ok(m) => m,
            Err(e) => {
                drop(arr);
                out.push((
                    s.clone(),
                    skipped(n, settings.len(), label, format!("{e:#}")),
                ));
                continue;
            }
        };
        let mut params = BTreeMap::from([
            ("layout".to_string(), layout.label()),
            ("layout.members".to_string(), count.to_string()),
        ]);
        if let Some(c) = chunk.filter(|_| layout.takes_chunk()) {
            params.insert("layout.chunk".into(), units::bs_label(c));
        }
        if let Some((f, _)) = &s.fs {
            params.insert("fs".into(), f.fs.clone());
        }
        let mut p = plan.clone();
        let target = match &mounted {
            Some(m) => m.dir.clone(),
            None => {
                // The raw array is iogauge's own, just built from blank members: writing it
                // needs no other consent than the members' (checked blank before).
                p.target.allow_overwrite = true;
                arr.record.device.clone()
            }
        };
        let doc = measure(&p, id, &label, params, Some(target), notes, hooks);
        drop(mounted);
        drop(arr);
        out.push((s.clone(), outcome(n, settings.len(), label, doc)?));
    }
    Ok(Some((Vec::new(), out)))
}

/// `f` with the options that align it to an array's stripe (stripe unit `chunk`, `data`
/// members): ext2/3/4's stride and stripe width in 4 KiB blocks, xfs's su and sw. Unchanged
/// for other file systems and for arrays without a stripe.
fn aligned(f: &FsSpec, geometry: Option<(u64, usize)>) -> FsSpec {
    let mut spec = f.clone();
    let Some((chunk, data)) = geometry else {
        return spec;
    };
    match f.fs.as_str() {
        "ext2" | "ext3" | "ext4" if chunk >= 4096 => {
            let stride = chunk / 4096;
            spec.mkfs_opts.push("-E".into());
            spec.mkfs_opts.push(format!(
                "stride={stride},stripe_width={}",
                stride * data as u64
            ));
        }
        "xfs" => {
            spec.mkfs_opts.push("-d".into());
            spec.mkfs_opts
                .push(format!("su={}k,sw={data}", chunk / 1024));
        }
        _ => {}
    }
    spec
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

/// Runs the suite for one setting — the sweep's one plan, in a file system's directory for a
/// file-system sweep — tagged with the sweep and the setting.
fn measure(
    plan: &Plan,
    id: &str,
    label: &str,
    params: BTreeMap<String, String>,
    target: Option<PathBuf>,
    notes: Vec<String>,
    hooks: &dyn crate::exec::Hooks,
) -> Result<RunDoc> {
    let mut plan = plan.clone();
    if let Some(t) = target {
        plan.target.path = Some(t);
    }
    plan.params.insert("sweep".into(), id.to_string());
    plan.params
        .insert("sweep.setting".into(), label.to_string());
    plan.params.extend(params);
    plan.notes.extend(notes);
    crate::exec::measure(&plan, hooks)
}
