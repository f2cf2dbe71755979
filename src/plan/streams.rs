//! `run --stream 'NAME: FLAGS'`: several workloads at once on the run's target, each typed in
//! `run`'s own workload flags (one definition of each option, read by the same parser), the
//! run's settings (ramp, seed, interval, distribution) said once before the streams.

use super::*;
use crate::cli::{StreamArgs, WorkloadArgs};
use clap::Parser;
use std::path::{Path, PathBuf};

/// Flags that set the run, not a stream: given inside a stream, they are refused there.
const RUN_FLAGS: [&str; 6] = [
    "--ramp",
    "--seed",
    "--interval",
    "--distribution",
    "--latency-target",
    "--stonewall",
];

/// One `--stream` as typed: its name, workload and own target.
pub(super) struct Typed {
    pub name: String,
    pub workload: WorkloadArgs,
    pub target: Option<PathBuf>,
}

/// Each stream's name and workload, in the order typed; empty without `--stream`.
pub(super) fn of(args: &RunArgs) -> Result<Vec<Typed>> {
    let mut out: Vec<Typed> = Vec::with_capacity(args.stream.len());
    for typed in &args.stream {
        let (name, flags) = typed.split_once(':').unwrap_or(("", typed));
        let name = name.trim();
        let ok = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
        if name.is_empty() || !name.chars().all(ok) {
            return Err(usage(format!(
                "--stream '{}': give the stream a name of letters, digits, - _ or . before a colon, e.g. --stream 'wal: --rw write --bs 8k --fdatasync 1'",
                units::printable(typed)
            )));
        }
        if out.iter().any(|t| t.name == name) {
            return Err(usage(format!(
                "--stream {name} is named twice; give each stream its own name"
            )));
        }
        let words: Vec<&str> = flags.split_whitespace().collect();
        if let Some(f) = words
            .iter()
            .find(|w| RUN_FLAGS.iter().any(|r| w.split('=').next() == Some(*r)))
        {
            return Err(usage(format!(
                "--stream {name}: {} sets the whole run, not one stream; give it before the streams",
                f.split('=').next().unwrap_or(f)
            )));
        }
        let parsed = StreamArgs::try_parse_from(&words).map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            usage(format!(
                "--stream {name}: {}",
                first.trim_start_matches("error: ")
            ))
        })?;
        let mut w = parsed.workload;
        if w.time.is_none() && w.data.is_none() {
            (w.time, w.data) = (args.workload.time, args.workload.data);
        }
        out.push(Typed {
            name: name.to_string(),
            workload: w,
            target: parsed.target,
        });
    }
    if out.len() == 1 {
        return Err(usage(
            "one --stream is one workload: give its flags to run directly, or add a second --stream to run beside it",
        ));
    }
    Ok(out)
}

/// The streams' own targets of `run --stream '… --target PATH'`, in the order typed, each
/// group pointed at its own (an index into the list).
pub(super) fn targets(
    typed: &[Typed],
    args: &RunArgs,
    cells: &mut [crate::suite::cells::Cell],
) -> Result<Vec<PathBuf>> {
    let named: Vec<(&str, &Path)> = typed
        .iter()
        .filter_map(|t| Some((t.name.as_str(), t.target.as_deref()?)))
        .collect();
    let spell = |n: &str, p: &Path| format!("--stream {n}: --target {}", p.display());
    own_targets(
        &named,
        &args.target,
        args.repeat.precondition,
        &spell,
        cells,
    )
}

/// `suite --stream-target NAME=PATH`: each named stream's cells (alone or beside others) on
/// a target of its own; the targets in the order typed.
pub(super) fn suite_targets(
    typed: &[String],
    args: &crate::cli::SuiteArgs,
    suite: &str,
    cells: &mut [crate::suite::cells::Cell],
) -> Result<Vec<PathBuf>> {
    let mut named: Vec<(&str, &Path)> = Vec::with_capacity(typed.len());
    for t in typed {
        let Some((name, path)) = t
            .split_once('=')
            .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        else {
            return Err(usage(format!(
                "--stream-target {}: give a stream's name and its target, e.g. --stream-target wal=/dev/nvme1n1",
                units::printable(t)
            )));
        };
        if !cells.iter().any(|c| c.origin.as_deref() == Some(name)) {
            let mut names: Vec<&str> = Vec::new();
            for n in cells.iter().filter_map(|c| c.origin.as_deref()) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            return Err(usage(match names.is_empty() {
                true => format!(
                    "--stream-target {name}=…: suite {suite} has no streams; a suite file names them with stream = \"NAME\""
                ),
                false => format!(
                    "--stream-target {name}=…: suite {suite} has no stream {name}; its streams: {}",
                    names.join(", ")
                ),
            }));
        }
        if named.iter().any(|(n, _)| *n == name) {
            return Err(usage(format!(
                "--stream-target {name} is given twice; give each stream one target"
            )));
        }
        named.push((name, Path::new(path)));
    }
    let spell = |n: &str, p: &Path| format!("--stream-target {n}={}", p.display());
    own_targets(
        &named,
        &args.target,
        args.repeat.precondition,
        &spell,
        cells,
    )
}

/// The streams' own targets as given (`named`: each stream's name and target), checked
/// against the run's and each other: the run's own target again, one target for two streams
/// (the same IO would be measured as two streams on two targets), and `--precondition`, which
/// writes the run's target alone, are refused. `spell` says how the user typed one. Each
/// named stream's cells are pointed at its target (an index into the list returned).
fn own_targets(
    named: &[(&str, &Path)],
    run: &crate::cli::TargetArgs,
    precondition: bool,
    spell: &dyn Fn(&str, &Path) -> String,
    cells: &mut [crate::suite::cells::Cell],
) -> Result<Vec<PathBuf>> {
    if precondition && !named.is_empty() {
        return Err(usage(
            "--precondition writes the run's target, not a stream's own target; precondition each target in a run of its own first, or leave --precondition out",
        ));
    }
    // Two spellings of one path (relative, with `..`, through a link) are one target.
    let key = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let run = key(run.target.as_deref().unwrap_or(Path::new(".")));
    let mut own: Vec<PathBuf> = Vec::with_capacity(named.len());
    for (name, path) in named {
        if key(path) == run {
            return Err(usage(format!(
                "{} is the run's own target; leave it out to run the stream there, or give another",
                spell(name, path)
            )));
        }
        if let Some(k) = own.iter().position(|o| key(o) == key(path)) {
            return Err(usage(format!(
                "{} is stream {}'s too; give each stream its own target, or leave it out to share the run's",
                spell(name, path),
                named[k].0
            )));
        }
        for c in cells
            .iter_mut()
            .filter(|c| c.origin.as_deref() == Some(name))
        {
            c.target = Some(own.len());
        }
        own.push(path.to_path_buf());
    }
    Ok(own)
}

/// What runs one workload at a time, refused with streams.
pub(super) fn refuse_with(args: &RunArgs) -> Result<()> {
    let refuse = |what: &str, why: &str| {
        Err(usage(format!(
            "{what} does not go with --stream: {why}; run the workload alone"
        )))
    };
    if args.workload.latency_target.is_some() {
        return refuse("--latency-target", "its search paces one workload");
    }
    if args.repeat.until_change.is_some() {
        return refuse("--until-change", "it watches one workload's rate");
    }
    if args.target.verify {
        return refuse("--verify", "it checks one workload's writes at a time");
    }

    Ok(())
}

/// What judges or paces one workload at a time, refused for a plan whose cells run streams at
/// once rather than left undone: `--verify` (its stamps and read-back follow one cell's writes),
/// a stopping rule (`--until-stable`, `--until-change`), SNIA rounds and `--latency-target`.
pub(super) fn together_alone(plan: &Plan) -> Result<()> {
    let Some(c) = plan.cells.iter().find(|c| c.together.is_some()) else {
        return Ok(());
    };
    let what = if plan.env.verify.is_some() {
        "--verify"
    } else if plan.until == Until::Stable {
        "--until-stable"
    } else if plan.until == Until::Change {
        "--until-change"
    } else if plan.suite.rounds.is_some() {
        "SNIA rounds ([rounds])"
    } else if plan.latency_target.is_some() {
        "--latency-target"
    } else {
        return Ok(());
    };
    Err(usage(format!(
        "{what} judges one workload at a time, and {} runs beside other streams; run the streams apart (stonewall, or groups without with_previous)",
        c.name()
    )))
}
