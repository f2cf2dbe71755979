//! A named study or a suite file as a plan: its cells with what was typed over them.

use super::*;

/// `iogauge suite`: a named study or the user's suite file, with the lists the command line
/// replaces.
pub fn from_suite(args: &SuiteArgs) -> Result<Plan> {
    // With --file there is no suite name, so the one positional argument is the target.
    let mut args = args.clone();
    if args.file.is_some() {
        if let Some(name) = args.name.take() {
            if args.target.target.is_some() {
                return Err(usage(format!(
                    "--file names the suite, so '{name}' is one argument too many; give the suite file and the target, e.g. iogauge suite --file my.toml /data"
                )));
            }
            args.target.target = Some(PathBuf::from(name));
        }
    }
    let suite = load(&args)?;
    from_suite_with(&args, suite)
}

/// `suite` with the suite given rather than named: also a suite the program carries for a
/// command of its own (`db advise`), with the same checks, target and store.
pub fn from_suite_with(args: &SuiteArgs, suite: Suite) -> Result<Plan> {
    // Options this suite would ignore are refused, not silently dropped.
    match (&suite.rounds, args.max_rounds, args.until_stable) {
        (None, Some(n), _) => {
            return Err(usage(format!(
                "--max-rounds {n} does nothing for suite {}: only the SNIA PTS suites (snia-iops, snia-latency, snia-throughput) run rounds",
                suite.name
            )))
        }
        (Some(_), _, true) => {
            return Err(usage(format!(
                "--until-stable does nothing for suite {}: its rounds decide steady state (SNIA PTS); use --max-rounds to bound them",
                suite.name
            )))
        }
        _ => {}
    }
    let until = match (args.until_stable, until_change(&args.repeat)?) {
        (true, Some(_)) => {
            return Err(usage(
                "--until-stable and --until-change stop a cell for opposite reasons; give one",
            ))
        }
        (false, Some(_)) if suite.rounds.is_some() => {
            return Err(usage(format!(
                "--until-change does nothing for suite {}: its rounds decide how long it runs (SNIA PTS); use run --until-change on one workload",
                suite.name
            )))
        }
        (false, Some(d)) if args.cell_time.is_some() => {
            return Err(usage(format!(
                "--until-change {} is already the most each cell runs; drop --cell-time",
                units::duration(d)
            )))
        }
        (true, None) => Until::Stable,
        (false, Some(_)) => Until::Change,
        (false, None) => Until::Limit,
    };
    let precondition =
        args.repeat.precondition || suite.rounds.as_ref().is_some_and(|r| r.precondition);
    let overrides = overrides(args)?;
    let mut cells = cells::expand(&suite, &overrides).map_err(usage)?;
    if cells.iter().any(|c| c.files > 1) {
        check_files_target(&args.target)?;
    }
    let own = streams::suite_targets(&args.stream_target, args, &suite.name, &mut cells)?;
    if !own.is_empty() && args.target.verify {
        return Err(usage(
            "--verify checks what was written to the suite's target, and --stream-target puts a stream on another; run them apart",
        ));
    }
    checked(Plan {
        kind: Kind::Suite,
        target: TargetPlan {
            streams: StreamTarget::sized_as_run(own),
            ..target(Place::of(&args.target), suite.size)?
        },
        cells,
        suite,
        env: env(
            EngineChoice::of(&args.target),
            args.seed,
            args.ramp,
            SUITE_INTERVAL,
        ),
        repeat: repeat(&args.repeat),
        until,
        precondition,
        max_rounds: args.max_rounds,
        params: params(&args.repeat.param)?,
        file: output_file(&args.output)?,
        output: Output::of(&args.output),
        notes: Vec::new(),
        probe: false,
        latency_target: None,
    })
}

fn load(args: &SuiteArgs) -> Result<Suite> {
    match (&args.file, &args.name) {
        (Some(path), _) => {
            let text = crate::target::gate::read_input(
                "suite file",
                path,
                crate::target::gate::TEXT_LIMIT,
            )?;
            suites::schema::parse(&text, &path.display().to_string()).map_err(usage)
        }
        (None, Some(name)) => suites::builtin(name).map_err(usage),
        (None, None) => Err(usage(
            "name a suite (quick, matrix, seq, fsync, seeks, mixes, full, snia-iops, snia-latency, snia-throughput) or give --file",
        )),
    }
}

fn overrides(args: &SuiteArgs) -> Result<Overrides> {
    let list = |flag: &str, s: &Option<String>, item: &dyn Fn(&str) -> Result<u64, String>| {
        s.as_deref()
            .map(|s| units::parse_list(s, item).map_err(|e| usage(format!("{flag} {s}: {e}"))))
            .transpose()
    };
    let bs = |s: &str| {
        let v = units::parse_size(s)?;
        BlockSize::new(v).map_err(|why| format!("{s}: {why}"))
    };
    let count = |max: u32| {
        move |s: &str| match s.parse::<u64>() {
            Ok(v) if (1..=u64::from(max)).contains(&v) => Ok(v),
            _ => Err(format!("{s} is not a whole number from 1 to {max}")),
        }
    };
    let pct = |s: &str| match s.parse::<u64>() {
        Ok(v) if v <= 100 => Ok(v),
        _ => Err(format!("{s} is not a percentage from 0 to 100")),
    };
    if let Some((t, why)) = args
        .cell_time
        .filter(|t| !t.is_zero())
        .and_then(|t| Some((t, crate::workload::too_short(t)?)))
    {
        return Err(usage(format!(
            "--cell-time {} {why}",
            crate::units::duration(t)
        )));
    }
    if args.cell_time.is_some_and(|t| t.is_zero()) {
        return Err(usage(
            "--cell-time 0 runs nothing; give e.g. --cell-time 10s",
        ));
    }
    if args.files == Some(0) {
        return Err(usage(
            "--files 0: give how many files to read, e.g. --files 8",
        ));
    }
    let narrow = |v: Option<Vec<u64>>| v.map(|v| v.into_iter().map(|x| x as u32).collect());
    Ok(Overrides {
        sizes: args
            .sizes
            .as_deref()
            .map(|s| units::parse_list(s, bs).map_err(|e| usage(format!("--sizes {s}: {e}"))))
            .transpose()?,
        threads: narrow(list("--threads", &args.threads, &count(MAX_THREADS))?),
        read_pct: list("--read-pct", &args.read_pct, &pct)?
            .map(|v| v.into_iter().map(|x| x as u8).collect()),
        qd: narrow(list("--qd", &args.qd, &count(MAX_IODEPTH))?),
        files: args.files,
        cell_time: args.repeat.until_change.or(args.cell_time),
    })
}
