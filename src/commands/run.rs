//! `iogauge run`: one workload, end to end — check, prepare the target, measure, report.

use crate::cli::{RunArgs, TargetArgs};
use crate::model::{ResultDoc, RunDoc, TargetDoc, WorkloadDoc, SCHEMA};
use crate::runner::{self, Display};
use crate::target::{self, Target};
use crate::workload::Spec;
use crate::{error, output};
use anyhow::Result;
use std::io::Write;
use std::time::SystemTime;

pub fn run(args: &RunArgs) -> Result<()> {
    let (spec, mut notes) = Spec::resolve(args)?;
    let target = prepare_target(&args.target, &spec)?;
    let started = SystemTime::now();
    let system = iogauge_sysinfo::capture(Some(&target.path));
    let result = measure(&spec, &target, None, !args.output.json)?;
    notes.extend(honesty_notes(&spec, &target));
    let interrupted = result.interrupted;
    let doc = RunDoc {
        schema: SCHEMA.into(),
        run_id: run_id(started),
        label: args.output.label.clone(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        command: std::env::args().collect(),
        suite: None,
        system,
        results: vec![result],
        findings: Vec::new(),
        interrupted,
        notes,
        params: Default::default(),
    };
    print(&doc, args.output.json)?;
    drop(target); // removes a created test file before we report an interrupt
    match crate::interrupt::requested() {
        Some(sig) => Err(error::Interrupted(sig).into()),
        None => Ok(()),
    }
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
pub fn measure(spec: &Spec, target: &Target, name: Option<String>, progress: bool) -> Result<ResultDoc> {
    let file = target.open(spec.writes(), spec.direct, spec.odsync)?;
    let display = Display {
        progress,
        prefix: name.clone().map(|n| format!("{n} ")).unwrap_or_default(),
    };
    let m = runner::run(spec, &file, 0, target.range_bytes, &display)?;
    Ok(ResultDoc {
        name,
        workload: WorkloadDoc::of(spec),
        target: TargetDoc {
            path: target.path.display().to_string(),
            kind: target.kind.name().into(),
            created: target.created,
            offset_bytes: 0,
            range_bytes: target.range_bytes,
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
        interrupted: m.interrupted.is_some(),
        io_path: if spec.direct { "direct" } else { "buffered" }.into(),
        findings: Vec::new(),
        repeats: Vec::new(),
        stats: Default::default(),
    })
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
        notes.push("null engine: no IO reached the target; these numbers are iogauge's own overhead".into());
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
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_secs();
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
