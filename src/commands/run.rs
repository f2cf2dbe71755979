//! `iogauge run`: one workload, end to end — check, prepare the target, measure, report.

use crate::cli::{RepeatArgs, RunArgs, TargetArgs};
use crate::model::{
    CpuDoc, OpDoc, RepeatDoc, ResultDoc, RunDoc, Sample, TargetDoc, WorkloadDoc, SCHEMA,
};
use crate::runner::{self, Display, Measured};
use crate::target::{self, Target};
use crate::workload::Spec;
use crate::{error, output};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::time::SystemTime;

pub fn run(args: &RunArgs) -> Result<()> {
    let (spec, mut notes) = Spec::resolve(args)?;
    let params = parse_params(&args.repeat.param)?;
    let target = prepare_target(&args.target, &spec)?;
    let started = SystemTime::now();
    notes.extend(honesty_notes(&spec, &target));
    let mut doc = RunDoc {
        schema: SCHEMA.into(),
        run_id: run_id(started),
        label: args.output.label.clone(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        command: std::env::args().collect(),
        suite: None,
        system: iogauge_sysinfo::capture(Some(&target.path)),
        results: Vec::new(),
        findings: Vec::new(),
        interrupted: false,
        notes,
        params,
    };
    // The run is in the store before it measures anything, so a cut-short run keeps its place.
    let mut rec = crate::store::Recorder::start(&args.output, &doc)?;
    let result = measure_repeated(
        &spec,
        &target,
        None,
        &args.repeat,
        !args.output.json,
        &mut doc.notes,
    )?;
    doc.interrupted = result.interrupted;
    let failure = result.error.clone();
    doc.results.push(result);
    crate::analysis::annotate(&mut doc, target.data_bytes);
    for r in &doc.results {
        rec.add(r)?;
    }
    rec.finish(&doc)?;
    print(&doc, args.output.json)?;
    if !args.output.json && !doc.findings.is_empty() {
        eprint!("{}", crate::analysis::print_findings(&doc.findings));
    }
    drop(target); // removes a created test file before we report an interrupt or a failure
    if let Some(sig) = crate::interrupt::requested() {
        return Err(error::Interrupted(sig).into());
    }
    match failure {
        Some(e) => Err(anyhow::anyhow!(
            "{e} (the results above cover the run up to that point)"
        )),
        None => Ok(()),
    }
}

/// `--param KEY=VALUE` pairs.
pub fn parse_params(raw: &[String]) -> Result<BTreeMap<String, String>> {
    raw.iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(error::usage(format!(
                "--param '{p}' is not KEY=VALUE; write e.g. --param disks=4"
            ))),
        })
        .collect()
}

/// Runs a workload `--repeat` times (dropping the page cache between repeats when asked) and
/// folds the repeats into one result: the headline numbers over all repeats together, each
/// repeat in `repeats`, and their statistics in `stats`. Stops early on an interrupt or error.
pub fn measure_repeated(
    spec: &Spec,
    target: &Target,
    name: Option<String>,
    repeat: &RepeatArgs,
    progress: bool,
    notes: &mut Vec<String>,
) -> Result<ResultDoc> {
    repeated(repeat, notes, name.as_deref(), |label| {
        let mut r = measure(spec, target, label, progress)?;
        r.name = name.clone();
        Ok(r)
    })
}

/// Calls `once` (with a progress label naming the repeat) `--repeat` times and folds the
/// results; shared by `run` and the suites.
pub fn repeated(
    repeat: &RepeatArgs,
    notes: &mut Vec<String>,
    name: Option<&str>,
    mut once: impl FnMut(Option<String>) -> Result<ResultDoc>,
) -> Result<ResultDoc> {
    let n = repeat.repeat.max(1);
    let mut results = Vec::with_capacity(n as usize);
    for i in 0..n {
        if i > 0 && repeat.drop_caches {
            if let Err(why) = drop_caches() {
                let note = format!(
                    "--drop-caches: the page cache was not dropped between repeats ({why})"
                );
                if !notes.contains(&note) {
                    eprintln!("note: {note}");
                    notes.push(note);
                }
            }
        }
        let label = match (name, n) {
            (_, 1) => name.map(str::to_string),
            (Some(nm), _) => Some(format!("{nm} [repeat {}/{n}]", i + 1)),
            (None, _) => Some(format!("repeat {}/{n}", i + 1)),
        };
        let r = once(label)?;
        let stop = r.interrupted || r.error.is_some();
        results.push(r);
        if stop || crate::interrupt::requested().is_some() {
            break;
        }
    }
    Ok(fold_repeats(results))
}

/// Empties the page cache between repeats: sync(2), then 3 into /proc/sys/vm/drop_caches
/// (root only), as the seeds' authors did by hand before each of their five runs.
pub fn drop_caches() -> std::result::Result<(), String> {
    iogauge_engine::sys::sync_all();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => "needs root".to_string(),
        _ => e.to_string(),
    })
}

/// One result from several repeats of the same workload.
fn fold_repeats(mut results: Vec<ResultDoc>) -> ResultDoc {
    if results.len() == 1 {
        return results.remove(0);
    }
    let repeats: Vec<RepeatDoc> = results
        .iter()
        .map(|r| RepeatDoc {
            iops: r.iops,
            bw_bytes: r.bw_bytes,
            ios: r.ios,
            bytes: r.bytes,
            runtime_s: r.runtime_s,
            lat_ns: r.lat_ns,
            syncs_per_s: r.sync.as_ref().map(|s| s.per_s),
            cpu: r.cpu.clone(),
        })
        .collect();
    let mut hist = crate::measure::run_hist();
    let mut out = results[0].clone();
    let (mut ios, mut bytes, mut runtime, mut user, mut sys) = (0, 0, 0.0, 0.0, 0.0);
    out.timeseries.clear();
    out.fine.ios.clear();
    for r in &results {
        crate::measure::merge(&mut hist, &crate::measure::from_buckets(&r.lat_hist));
        out.timeseries.extend(r.timeseries.iter().map(|s| Sample {
            t_s: s.t_s + runtime,
            ..*s
        }));
        out.fine.ios.extend(&r.fine.ios);
        ios += r.ios;
        bytes += r.bytes;
        runtime += r.runtime_s;
        user += r.cpu.user_s;
        sys += r.cpu.sys_s;
        out.interrupted |= r.interrupted;
        if out.error.is_none() {
            out.error = r.error.clone();
        }
    }
    let secs = runtime.max(1e-9);
    out.ios = ios;
    out.bytes = bytes;
    out.runtime_s = secs;
    out.iops = ios as f64 / secs;
    out.bw_bytes = bytes as f64 / secs;
    out.lat_ns = crate::measure::LatNs::of(&hist);
    out.lat_hist = crate::measure::buckets(&hist);
    out.cpu = CpuDoc::new(user, sys, ios);
    // Per-direction and sync figures: sums over the repeats.
    let fold_op = |get: fn(&ResultDoc) -> Option<&OpDoc>| -> Option<OpDoc> {
        let ops: Vec<&OpDoc> = results.iter().filter_map(get).collect();
        (ops.len() == results.len()).then(|| {
            let (n, b) = ops
                .iter()
                .fold((0, 0), |(n, b), o| (n + o.ios, b + o.bytes));
            OpDoc {
                ios: n,
                bytes: b,
                iops: n as f64 / secs,
                bw_bytes: b as f64 / secs,
                // Per-direction histograms are not kept per repeat: the mean of the repeats'.
                lat_ns: ops[ops.len() / 2].lat_ns,
            }
        })
    };
    out.read = fold_op(|r| r.read.as_ref());
    out.write = fold_op(|r| r.write.as_ref());
    if let Some(sync) = out.sync.as_mut() {
        let count: u64 = results
            .iter()
            .filter_map(|r| r.sync.as_ref())
            .map(|s| s.count)
            .sum();
        sync.count = count;
        sync.per_s = count as f64 / secs;
    }
    out.stats = crate::repeats::stats_for(&repeats);
    out.repeats = repeats;
    out
}

/// Resolves and checks the target for a workload (shared by `run` and the suites). `spec`
/// decides whether writes need consent and which block size must fit.
pub fn prepare_target(t: &TargetArgs, spec: &Spec) -> Result<Target> {
    let target = target::prepare(&target::Request {
        path: t.target.as_deref(),
        size: t.size,
        keep: t.keep,
        allow_overwrite: t.allow_overwrite,
        writes: spec.writes(),
        seed: spec.seed,
        quiet: false,
    })?;
    spec.check_target(target.range_bytes, target.logical_block)?;
    Ok(target)
}

/// Runs one workload on a prepared target and describes it as a result.
pub fn measure(
    spec: &Spec,
    target: &Target,
    name: Option<String>,
    progress: bool,
) -> Result<ResultDoc> {
    let display = Display {
        progress,
        prefix: name.clone().map(|n| format!("{n} ")).unwrap_or_default(),
        stop_when: None,
    };
    let m = measure_range(spec, target, 0, target.range_bytes, &display)?;
    Ok(result_doc(spec, target, 0, target.range_bytes, name, m))
}

/// Runs one workload on `[start, start + len)` of a prepared target.
pub fn measure_range(
    spec: &Spec,
    target: &Target,
    start: u64,
    len: u64,
    display: &Display,
) -> Result<Measured> {
    let file = target.open(spec.writes(), spec.direct, spec.odsync)?;
    runner::run(spec, &file, start, len, display)
}

/// The result document of a measurement of `[start, start + len)` of `target`.
pub fn result_doc(
    spec: &Spec,
    target: &Target,
    start: u64,
    len: u64,
    name: Option<String>,
    m: Measured,
) -> ResultDoc {
    ResultDoc {
        name,
        workload: WorkloadDoc::of(spec),
        target: TargetDoc {
            path: target.path.display().to_string(),
            kind: target.kind.name().into(),
            created: target.created,
            offset_bytes: start,
            range_bytes: len,
            logical_block_size: target.logical_block,
        },
        iops: m.ios as f64 / m.runtime_s,
        bw_bytes: m.bytes as f64 / m.runtime_s,
        ios: m.ios,
        bytes: m.bytes,
        runtime_s: m.runtime_s,
        lat_ns: m.lat,
        lat_hist: crate::measure::buckets(&m.hist),
        read: m.read,
        write: m.write,
        sync: m.sync,
        cpu: m.cpu,
        timeseries: m.timeseries,
        fine: m.fine,
        engine: m.engine,
        interrupted: m.interrupted.is_some() || m.error.is_some(),
        error: m
            .error
            .as_ref()
            .map(|e| format!("{}: {e:#}", target.path.display())),
        io_path: if spec.direct { "direct" } else { "buffered" }.into(),
        findings: Vec::new(),
        repeats: Vec::new(),
        stats: Default::default(),
    }
}

/// What the user must know to read the numbers right.
pub fn honesty_notes(spec: &Spec, target: &Target) -> Vec<String> {
    let mut notes = Vec::new();
    if !spec.direct {
        notes.push(
            "buffered IO goes through the page cache: reads of a working set that fits in RAM and writes not yet flushed measure memory, not the device".into(),
        );
    }
    if spec.engine == iogauge_engine::EngineKind::Null {
        notes.push(
            "null engine: no IO reached the target; these numbers are iogauge's own overhead"
                .into(),
        );
    }
    if let Some(data) = target.data_bytes {
        if !target.created && data < target.range_bytes && !spec.writes() {
            notes.push(format!(
                "{} of the {} range hold no data (holes or unwritten extents read as zeros without touching the disk); fill the file first or let iogauge create one",
                crate::units::iec(target.range_bytes - data),
                crate::units::iec(target.range_bytes)
            ));
        }
    }
    notes
}

pub fn run_id(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    format!("{secs:x}-{:04x}", fastrand::u16(..))
}

/// JSON on stdout and nothing else there, or the human summary.
pub fn print(doc: &RunDoc, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let text = if json {
        serde_json::to_string_pretty(doc)? + "\n"
    } else {
        output::run(doc)
    };
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A closed pipe (e.g. `| head`) is not a failure of the run.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}
