//! `probe cache` as a plan: random reads over doubling working sets, each warmed first.

use super::*;

/// Smallest working set of `probe cache`.
const PROBE_FROM: u64 = 16 << 20;

/// `iogauge probe cache`: for each working set (16 MiB, doubling, up to the target), one
/// sequential pass that puts the set in whatever caches there are, then 4 KiB random reads
/// over it; `exec` fits the cache size to their mean latencies.
pub fn from_probe_cache(args: &crate::cli::ProbeCacheArgs) -> Result<Plan> {
    let target = target(Place::of(&args.target), None)?;
    let len = probe_len(&target);
    if len < 4 * PROBE_FROM {
        return Err(usage(format!(
            "probe cache needs a target of at least {} to see a knee, this one has {}; give a larger --size",
            units::iec(4 * PROBE_FROM),
            units::iec(len)
        )));
    }
    let mut sets = Vec::new();
    let mut ws = PROBE_FROM;
    while ws < len {
        sets.push(ws);
        ws *= 2;
    }
    sets.push(len / 4096 * 4096);
    let mut groups = Vec::new();
    for &ws in &sets {
        let group = |title: String, op, bs, iodepth, length| Group {
            title,
            layout: Layout::Plain,
            origin: None,
            ops: vec![op],
            read_pct: Vec::new(),
            bs: vec![bs],
            threads: vec![1],
            iodepth: vec![iodepth],
            sync: None,
            odsync: false,
            direct: None,
            length,
            range: Some(ws),
            options: Vec::new(),
            shape: Default::default(),
            together: None,
            rate: None,
            think: None,
            prio: None,
            flow: None,
            placement: None,
            engine: None,
            distribution: None,
            beside: Default::default(),
            no_readback: false,
            tolerate: None,
            atomic: false,
        };
        groups.push(group(
            format!("warm {}", units::iec(ws)),
            Op::Read,
            BlockSize::known(1 << 20),
            4,
            Length::Data(Amount::Range),
        ));
        groups.push(group(
            format!("probe {}", units::iec(ws)),
            Op::Randread,
            BlockSize::known(4096),
            1,
            Length::Data(Amount::Bytes(args.ios * 4096)),
        ));
    }
    let suite = Suite {
        name: "probe-cache".into(),
        description: "4 KiB random reads over growing working sets, each read through once first"
            .into(),
        size: None,
        groups,
        rounds: None,
    };
    let cells = cells::expand(&suite, &Overrides::default()).map_err(usage)?;
    Ok(Plan {
        kind: Kind::Suite,
        cells,
        suite,
        env: env(
            EngineChoice::of(&args.target),
            1,
            Duration::ZERO,
            SUITE_INTERVAL,
        ),
        target,
        repeat: Repeat {
            n: 1,
            drop_caches: false,
        },
        until: Until::Limit,
        precondition: false,
        max_rounds: None,
        params: BTreeMap::new(),
        file: output_file(&args.output)?,
        output: Output::of(&args.output),
        notes: Vec::new(),
        probe: true,
        latency_target: None,
    })
}

/// Bytes `probe cache` can use of its target, before the target is opened: `--size`, else an
/// existing file's or device's size, else the size of the file it would create.
fn probe_len(t: &TargetPlan) -> u64 {
    let existing = t.path.as_deref().and_then(crate::target::existing_size);
    let len = existing.unwrap_or(t.created_size).saturating_sub(t.offset);
    t.size.map_or(len, |s| s.min(len))
}
