//! `iogauge sweep` as a plan: the knobs or file systems to go through and the suite's plan.

use super::axes::{Built, FsSpec, Kind, KnobSpec, Layout, Rebuild, SweepPlan};
use super::*;
use crate::cli::{BuildArgs, SweepArgs};

/// `iogauge sweep`: what to change (knobs or file systems) and the suite to run per setting,
/// checked before any knob changes or any mkfs runs.
pub fn from_sweep(args: &SweepArgs) -> Result<SweepPlan> {
    let specs: Vec<KnobSpec> = args
        .knob
        .iter()
        .map(|k| KnobSpec::parse(k))
        .collect::<Result<_>>()?;
    let built = built(&args.build)?;
    let fill = crate::target::fill::levels(args.build.fill.as_deref())?;
    if specs.is_empty() && built.scratch.is_empty() && fill.is_empty() {
        return Err(usage(
            "a sweep needs what to change: --knob NAME=V1,V2 (e.g. --knob scheduler=none,mq-deadline), --fill 40%,80%, --scratch DEV --fs ext4,xfs, or --scratch DEV1,DEV2,… --layout md:raid0,raid5",
        ));
    }
    if !fill.is_empty() && (!specs.is_empty() || !built.scratch.is_empty()) {
        return Err(usage(
            "sweep the fill level or knobs or what --scratch builds, one at a time (one change per sweep); run two sweeps",
        ));
    }
    if !specs.is_empty() && !built.fss.is_empty() {
        return Err(usage(
            "sweep knobs or file systems, not both at once (one change at a time); run two sweeps",
        ));
    }
    let mut suite = args.suite.clone();
    // With --file the one positional argument is the target, as `suite` reads it.
    if suite.file.is_some() && suite.target.target.is_none() {
        suite.target.target = suite.name.take().map(PathBuf::from);
    }
    if !built.scratch.is_empty() && suite.target.target.is_some() {
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
        grid: args.grid,
        fill,
        built,
        check: from_suite(&suite)?,
    })
}

/// `--scratch` with `--fs` or `--layout` and their options, checked before anything is built;
/// nothing at all without `--scratch`.
pub fn built(args: &BuildArgs) -> Result<Built> {
    for o in &args.mount_opts {
        crate::target::gate::option_words("--mount-opts", o, o.split_whitespace())?;
    }
    let mut fss: Vec<FsSpec> = Vec::new();
    for f in &args.fs {
        fss.extend(FsSpec::parse(f)?);
    }
    let mut layouts = Vec::new();
    for l in &args.layout {
        layouts.extend(Layout::parse(l)?);
    }
    let scratch: Vec<PathBuf> = args
        .scratch
        .as_deref()
        .map(|s| s.split(',').map(|d| PathBuf::from(d.trim())).collect())
        .unwrap_or_default();
    if !scratch.is_empty() && fss.is_empty() && layouts.is_empty() {
        return Err(usage(
            "--scratch names devices to build on: add --fs ext4,xfs (file systems on one device) or --layout md:raid0,raid5 (arrays from several)",
        ));
    }
    if scratch.iter().any(|d| d.as_os_str().is_empty()) {
        return Err(usage(
            "--scratch has an empty item; separate devices by single commas, e.g. /dev/sdb,/dev/sdc",
        ));
    }
    if layouts.is_empty() && scratch.len() > 1 {
        return Err(usage(format!(
            "--fs makes one file system on one device, and --scratch names {}; give one device, or --layout to build arrays from several",
            scratch.len()
        )));
    }
    let chunks = match &args.chunk {
        Some(c) => crate::units::parse_list(c, crate::units::parse_size)
            .map_err(|e| usage(format!("--chunk {e}")))?,
        None => Vec::new(),
    };
    if let Some(bad) = chunks.iter().find(|c| **c < 4096 || !c.is_power_of_two()) {
        return Err(usage(format!(
            "--chunk {}: a chunk is a power of two of at least 4 KiB, e.g. 64k or 512k",
            crate::units::bs_label(*bad)
        )));
    }
    if !chunks.is_empty() && !layouts.iter().any(|l| l.takes_chunk()) {
        return Err(usage(
            "--chunk sets the stripe unit of md and lvm layouts, and none is asked (btrfs, raid1 and single have none): drop it, or add e.g. --layout md:raid0",
        ));
    }
    let members: Vec<usize> = match &args.members {
        Some(m) => crate::units::parse_list(m, |x| {
            x.parse::<usize>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("'{x}' is not a number of devices"))
        })
        .map_err(|e| usage(format!("--members {e}")))?,
        None => Vec::new(),
    };
    if let Some(too_many) = members.iter().find(|n| **n > scratch.len()) {
        return Err(usage(format!(
            "--members {too_many} is more than the {} devices --scratch names",
            scratch.len()
        )));
    }
    let most = members.iter().copied().max().unwrap_or(scratch.len());
    if let Some(l) = layouts.iter().find(|l| l.min_members() > most) {
        return Err(usage(format!(
            "{} needs at least {} members, and at most {most} are used; name more --scratch devices or leave it out",
            l.label(),
            l.min_members()
        )));
    }
    if args.degraded && !layouts.iter().any(|l| l.redundant()) {
        return Err(usage(
            "--degraded measures arrays with a member missing, and no redundant layout is asked (md raid1, raid10, raid5, raid6; btrfs raid1, raid10, raid5, raid6, raid1c3): drop it, or add one",
        ));
    }
    if args.rebuild && !layouts.iter().any(|l| l.resyncs()) {
        return Err(usage(
            "--rebuild measures md arrays while they recover a member, and no redundant md layout is asked (raid1, raid10, raid5, raid6): drop it, or add one",
        ));
    }
    let rebuild = args
        .rebuild
        .then(|| rebuild_speed(args.rebuild_speed.as_deref()))
        .transpose()?;
    if args.assume_clean && !layouts.iter().any(|l| l.resyncs()) {
        return Err(usage(
            "--assume-clean skips the initial resync of redundant md arrays, and no redundant md layout is asked (raid1, raid10, raid5, raid6): drop it, or add one",
        ));
    }
    if !layouts.is_empty() && fss.len() > 1 {
        return Err(usage(
            "a layout sweep changes the array, one file system on each (--fs ext4); sweep file systems on one device apart",
        ));
    }
    if !fss.is_empty() && layouts.iter().any(|l| l.kind == Kind::Btrfs) {
        return Err(usage(
            "btrfs layouts are their own file system; leave out --fs, or sweep btrfs layouts apart from md and lvm ones",
        ));
    }
    Ok(Built {
        fss,
        scratch,
        layouts,
        chunks,
        members,
        assume_clean: args.assume_clean,
        degraded: args.degraded,
        rebuild,
        mount_opts: args.mount_opts.clone(),
    })
}

/// `--rebuild-speed MIN,MAX` (per second, e.g. 10m,50m) as md's KiB/s: both at least 1 KiB/s,
/// the minimum no more than the maximum.
fn rebuild_speed(arg: Option<&str>) -> Result<Rebuild> {
    let Some(a) = arg else {
        return Ok(Rebuild { speed_kib: None });
    };
    let bad = |why: &str| {
        usage(format!(
            "--rebuild-speed '{}': {why}; give the rebuild's least and most per second, e.g. --rebuild-speed 10m,50m",
            crate::units::quoted(a, 40)
        ))
    };
    let v = crate::units::parse_list(a, crate::units::parse_size).map_err(|e| bad(&e))?;
    let [min, max] = v[..] else {
        return Err(bad("it takes two sizes, MIN,MAX"));
    };
    if min < 1024 {
        return Err(bad("md counts its rate in KiB/s, so the least is 1k"));
    }
    if min > max {
        return Err(bad("MIN is above MAX"));
    }
    Ok(Rebuild {
        speed_kib: Some((min / 1024, max / 1024)),
    })
}
