//! `iogauge sweep` as a plan: the knobs or file systems to go through and the suite's plan.

use super::*;
use crate::cli::SweepArgs;
use crate::sweep::fs::FsSpec;
use crate::sweep::knobs::KnobSpec;
use crate::sweep::SweepPlan;

/// `iogauge sweep`: what to change (knobs or file systems) and the suite to run per setting,
/// checked before any knob changes or any mkfs runs.
pub fn from_sweep(args: &SweepArgs) -> Result<SweepPlan> {
    let specs: Vec<KnobSpec> = args
        .knob
        .iter()
        .map(|k| KnobSpec::parse(k))
        .collect::<Result<_>>()?;
    for o in &args.mount_opts {
        crate::target::gate::option_words("--mount-opts", o, o.split_whitespace())?;
    }
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
    Ok(SweepPlan {
        knobs: specs,
        fss,
        scratch: args.scratch.clone(),
        mount_opts: args.mount_opts.clone(),
        grid: args.grid,
        check: from_suite(&suite)?,
    })
}
