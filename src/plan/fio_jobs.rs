//! fio job files as a plan: each job a cell, every option mapped or refused with its line.

use super::fio_files::{files, resolve_fill, resolve_shares, span};
use super::*;
use crate::workload::{Beside, Ends, Shape};

/// `iogauge fio`: every job of the job files becomes a group of one cell, in file order. What
/// a job sets for the whole run in iogauge (the target, the engine, the ramp, where random IOs
/// land and the seed) must agree across jobs; a job that differs is refused at its
/// line rather than run with another job's setting.
pub fn from_fio(args: &FioArgs) -> Result<Plan> {
    // fio's own --output-format and --output among its options, as iogauge's output.
    let taken = fio_output(args)?;
    let args = &taken;
    let mut jobs = read_jobs(args)?;
    resolve_shares(&mut jobs)?;
    resolve_fill(&mut jobs)?;
    shared_zones(&mut jobs)?;
    agree_per_run(&jobs)?;
    check_regions(&jobs)?;
    let first = &jobs[0];
    let nrfiles = first.nrfiles.max(1);
    let (own, on) = files(&jobs, args)?;
    // The created file (or the range used) is the largest job's; smaller jobs use its start.
    let size = jobs
        .iter()
        .zip(&on)
        .filter(|(_, k)| k.is_none())
        .filter_map(|(j, _)| span(j))
        .max();
    // randrepeat=0 asks for a new sequence each run: drawn here and kept in the document.
    let seed = first
        .seed
        .unwrap_or_else(|| fastrand::u64(1..u64::MAX >> 11));
    let env = run_env(&jobs, seed);
    let together = together(&jobs)?;
    let reports = fio::report_groups(&jobs);
    let groups = jobs
        .iter()
        .zip(together.into_iter().zip(reports))
        .zip(&on)
        .map(|((j, place), k)| group(j, k.map_or(size, |k| own[k].size), place))
        .collect::<Result<Vec<Group>>>()?;
    let suite = suite_of(args, &jobs, size, groups);
    let mut cells = cells::expand(&suite, &Overrides::default()).map_err(usage)?;
    // A fio job is a group of one cell.
    for c in &mut cells {
        c.target = on[c.group];
    }
    let notes = notes(&jobs, env.ram, seed);
    let mut target = target(place(args, first, size), size)?;
    target.files = nrfiles;
    target.streams = own;
    checked(Plan {
        kind: Kind::Suite,
        target,
        cells,
        suite,
        env,
        repeat: repeat(&args.repeat),
        until: match first.steady {
            true => Until::Stable,
            false => Until::Limit,
        },
        precondition: args.repeat.precondition,
        max_rounds: None,
        params: params(&args.repeat.param)?,
        file: output_file(&args.output)?,
        output: Output::of(&args.output),
        notes,
        probe: false,
        latency_target: first.latency_target,
    })
}

/// fio's command-line `--output-format` and `--output` after `--`, honoured as iogauge's
/// `--format fio-json` and `-o FILE` (fio's `normal` is iogauge's own text); the formats
/// iogauge does not write are refused with the one to use. The arguments without them.
fn fio_output(args: &FioArgs) -> Result<FioArgs> {
    let mut out = args.clone();
    out.options.clear();
    for o in &args.options {
        let (key, value) = o.split_once('=').unwrap_or((o.as_str(), ""));
        match key {
            "--output-format" => {
                let formats: Vec<&str> = value.split(',').map(str::trim).collect();
                match formats.as_slice() {
                    ["json"] => out.output.fio_output_format = Some("json".into()),
                    ["normal"] => {}
                    _ => {
                        return Err(usage(format!(
                            "--output-format={value}: iogauge writes fio's json (or its own text, fio's normal); {} is not written: give --output-format=json",
                            formats
                                .iter()
                                .find(|f| !matches!(**f, "json" | "normal"))
                                .unwrap_or(&"json with normal")
                        )))
                    }
                }
            }
            "--output" if args.output.output.is_some() => {
                return Err(usage(
                    "-o and fio's --output both name an output file: give one",
                ))
            }
            "--output" if !value.is_empty() => out.output.output = Some(value.into()),
            "--output" => return Err(usage("--output= names no file: give --output=FILE")),
            _ => out.options.push(o.clone()),
        }
    }
    Ok(out)
}

/// The jobs of the job files, or of the fio options after `--`.
fn read_jobs(args: &FioArgs) -> Result<Vec<Job>> {
    let mut jobs: Vec<Job> = Vec::new();
    // ${NAME} from the environment; fio's keywords from this machine, as fio computes them.
    let env_var = |k: &str| match k {
        "$ncpus" => Some(iogauge_engine::sys::online_cpus().to_string()),
        "$mb_memory" => Some((iogauge_engine::sys::total_memory() >> 20).to_string()),
        "$pagesize" => Some(iogauge_engine::sys::page_size().to_string()),
        k => std::env::var(k).ok(),
    };
    if !args.options.is_empty() && !args.jobs.is_empty() {
        return Err(usage(
            "give job files or fio options after --, not both: iogauge fio JOB.fio, or iogauge fio -- --name=x --rw=read …",
        ));
    }
    if !args.options.is_empty() {
        jobs = fio::parse_args(&args.options, &env_var).map_err(usage)?;
    }
    if args.repeat.until_change.is_some() {
        return Err(usage(
            "--until-change does not go with fio jobs, whose runtime= or size= decides how long each runs; use iogauge run --until-change DURATION with the same workload",
        ));
    }
    for path in &args.jobs {
        let text =
            crate::target::gate::read_input("job file", path, crate::target::gate::TEXT_LIMIT)?;
        let name = path.display().to_string();
        jobs.extend(fio::parse(&text, &name, &env_var).map_err(usage)?);
    }
    Ok(jobs)
}

/// zonemode=zbd writes at write pointers iogauge keeps in memory: a zoned device, whose
/// pointers are its own (and refuses writes away from them), is not driven. The zbd jobs of one
/// file share one table for the run, as fio keeps one per file: carried from one job to the
/// next and shared by jobs that run together, a trimming job's resets the writing jobs' zones.
fn shared_zones(jobs: &mut [Job]) -> Result<()> {
    let mut files: Vec<Option<PathBuf>> = Vec::new();
    for j in jobs.iter().filter(|j| j.zbd.is_some()) {
        if !files.contains(&j.path) {
            files.push(j.path.clone());
        }
    }
    for (k, file) in files.iter().enumerate() {
        let on: Vec<usize> = (0..jobs.len())
            .filter(|&i| jobs[i].zbd.is_some() && jobs[i].path == *file)
            .collect();
        let first = &jobs[on[0]];
        let writers: Vec<&Job> = on
            .iter()
            .map(|&i| &jobs[i])
            .filter(|j| !j.rw.trims())
            .collect();
        let Some(writer) = writers.first() else {
            return Err(usage(format!(
                "{}: rw={} with no job writing its file: every zone starts empty, so there is nothing to reset (fio's trims end at once); add the job that writes the zones",
                first.at("rw"),
                first.rw.name()
            )));
        };
        for &i in &on[1..] {
            let (j, z, z0) = (&jobs[i], jobs[i].zbd.unwrap(), first.zbd.unwrap());
            let differs = if z.zone != z0.zone {
                Some("zonesize")
            } else if z.max_open != z0.max_open {
                Some("max_open_zones")
            } else if z.reset != z0.reset {
                Some("zone_reset_threshold and zone_reset_frequency")
            } else if (j.offset, j.size) != (first.offset, first.size) {
                Some("offset and size")
            } else if !j.rw.trims() && j.bs != writer.bs {
                Some("bs")
            } else {
                None
            };
            if let Some(what) = differs {
                return Err(usage(format!(
                    "{}: zonemode=zbd in job {} and in job {} ({}) of one file with different {what}: fio keeps one set of write pointers for a file, and iogauge one table of zones of one size over one range, counted in the writers' one block size; give them the same {what}, or each a file of its own",
                    j.at("zonemode"),
                    first.name,
                    j.name,
                    first.at("zonemode")
                )));
            }
        }
        let unit = writer.bs;
        for &i in &on {
            if let Some(z) = &mut jobs[i].zbd {
                z.table = k as u32 + 1;
                z.unit = unit;
            }
        }
    }
    let zbd: Vec<&Job> = jobs.iter().filter(|j| j.zbd.is_some()).collect();
    for j in zbd {
        let Some(p) = j.path.as_deref() else { continue };
        if let Some(model) = iogauge_sysinfo::zoned::zoned_model_for(p) {
            return Err(usage(format!(
                "{}: zonemode=zbd on {}, a {model} zoned device: iogauge emulates zones on a device that is not zoned (as fio does there) and does not drive a zoned device's own write pointers; give a device or file that is not zoned",
                j.at("zonemode"),
                p.display()
            )));
        }
    }
    Ok(())
}

/// What iogauge sets once per run, the same in every job, named by the fio option that sets it.
fn agree_per_run(jobs: &[Job]) -> Result<()> {
    let first = &jobs[0];
    let agree = |key: &str, same: &dyn Fn(&Job) -> bool| -> Result<()> {
        match jobs.iter().find(|j| !same(j)) {
            None => Ok(()),
            Some(j) => Err(usage(format!(
                "{}: job {} sets {key} differently from job {} ({}); iogauge runs one {key} per run: put the job in a job file of its own",
                j.at(key),
                j.name,
                first.name,
                first.at(key)
            ))),
        }
    };
    // Files of their own are `files`'; a job that names none beside one that names one is not.
    agree("filename", &|j| j.path.is_some() == first.path.is_some())?;
    agree("nrfiles", &|j| j.nrfiles == first.nrfiles)?;
    agree("file_service_type", &|j| {
        j.file_service == first.file_service
    })?;
    agree("offset", &|j| j.offset == first.offset)?;
    agree("ramp_time", &|j| j.ramp == first.ramp)?;
    agree("verify", &|j| j.verify == first.verify)?;
    agree("verify_fatal", &|j| j.verify_fatal == first.verify_fatal)?;
    agree("ss", &|j| j.steady == first.steady)?;
    agree("latency_target", &|j| {
        j.latency_target == first.latency_target
    })?;
    agree("randseed", &|j| j.seed == first.seed)?;
    agree("iodepth_batch_submit", &|j| {
        j.submit_batch == first.submit_batch
    })?;
    agree("iodepth_batch_complete_min", &|j| {
        j.complete_batch == first.complete_batch
    })
}

fn engine_of(j: &Job) -> EngineKind {
    match j.engine {
        Engine::IoUring | Engine::Libaio => EngineKind::IoUring,
        Engine::Sync => EngineKind::Psync,
        Engine::Null => EngineKind::Null,
    }
}

/// Offsets, sizes and clone strides in the whole 4 KiB blocks O_DIRECT needs; nrfiles with a
/// size to split.
fn check_regions(jobs: &[Job]) -> Result<()> {
    let first = &jobs[0];
    if !first.offset.is_multiple_of(4096) {
        return Err(usage(format!(
            "{}: offset={} is not a multiple of 4KiB, which O_DIRECT needs",
            first.at("offset"),
            first.offset
        )));
    }
    if let Some(j) = jobs.iter().find(|j| j.size.is_some_and(|s| s < 4096)) {
        return Err(usage(format!(
            "{}: size={} is smaller than one 4KiB block; give e.g. size=1g",
            j.at("size"),
            j.typed("size")
        )));
    }
    if let Some(j) = jobs
        .iter()
        .find(|j| j.offset_increment.is_some_and(|i| !i.is_multiple_of(4096)))
    {
        return Err(usage(format!(
            "{}: offset_increment={} is not a multiple of 4KiB, which O_DIRECT needs",
            j.at("offset_increment"),
            j.typed("offset_increment")
        )));
    }
    // nrfiles: the job's size is split evenly over its files, each iogauge's own test file.
    if let Some(j) = jobs.iter().find(|j| j.nrfiles > 1) {
        let Some(s) = j.size else {
            return Err(usage(format!(
                "{}: nrfiles={} without size=: give the job's total size to split over the files, e.g. size=1g",
                j.at("nrfiles"),
                j.nrfiles
            )));
        };
        if s / u64::from(j.nrfiles) < 4096 {
            return Err(usage(format!(
                "{}: size={} over nrfiles={} leaves each file less than one 4KiB block; give a larger size or fewer files",
                j.at("size"),
                j.typed("size"),
                j.nrfiles
            )));
        }
    }
    Ok(())
}

/// Where the jobs' IO goes: the first job's file (the others agree), the largest job's size.
fn place(args: &FioArgs, first: &Job, size: Option<u64>) -> Place {
    Place {
        path: first.path.clone(),
        size,
        offset: first.offset,
        keep: args.keep,
        allow_overwrite: args.allow_overwrite,
    }
}

/// How the jobs do IO: the first job's engine and batches (the others agree); always
/// O_DIRECT unless a job said buffered (the cells carry that), no --verify.
fn engine(first: &Job) -> EngineChoice {
    EngineChoice {
        engine: engine_of(first),
        direct: true,
        uring: Default::default(),
        submit_batch: first
            .submit_batch
            .unwrap_or(iogauge_engine::DEFAULT_SUBMIT_BATCH),
        complete_batch: first.complete_batch.unwrap_or(0),
        verify: None,
    }
}

/// The run's settings, from the first job (the others agree) and every job's invalidate.
fn run_env(jobs: &[Job], seed: u64) -> Env {
    let first = &jobs[0];
    let mut env = env(engine(first), seed, first.ramp, SUITE_INTERVAL);
    env.file_service = first.file_service;
    // fio drops a job's file from the page cache before it runs unless invalidate=0.
    env.invalidate = !jobs
        .iter()
        .any(|j| j.has("invalidate") && j.typed("invalidate") == "0");
    // verify=: iogauge's own stamps on every write, read back after each job (--verify).
    if first.verify {
        env.verify = Some(1.0);
        env.verify_fatal = first.verify_fatal;
    }
    env
}

/// Each job's cell of several streams (fio's run group, when it has more than one job), or
/// `None` for a job that runs alone. What iogauge runs once per cell cannot be asked of jobs
/// that run at once: refused at the line that asks it.
fn together(jobs: &[Job]) -> Result<Vec<Option<usize>>> {
    let groups = fio::run_groups(jobs);
    let shared = |g: usize| groups.iter().filter(|&&x| x == g).count() > 1;
    for (j, _) in jobs.iter().zip(&groups).filter(|(_, &g)| shared(g)) {
        let refuse = |key: &str, why: &str| {
            Err(usage(format!(
                "{}: {key}= on job {}, which runs at the same time as other jobs (no stonewall between them): {why}; add stonewall to the job to run it alone",
                j.at(key),
                j.name
            )))
        };
        if j.verify {
            refuse("verify", "iogauge verifies the writes of one job at a time")?;
        }
        if j.steady {
            refuse("ss", "iogauge's steady-state stop judges one job's rate")?;
        }
        if j.latency_target.is_some() {
            refuse("latency_target", "iogauge's latency search paces one job")?;
        }
        if j.startdelay.0 != j.startdelay.1 {
            refuse(
                "startdelay",
                "a delay drawn from a range starts the job at a time no run repeats; give one time",
            )?;
        }
        if j.nrfiles > 1 {
            refuse("nrfiles", "iogauge runs a job over several files alone")?;
        }
    }
    Ok(groups.iter().map(|&g| shared(g).then_some(g)).collect())
}

/// One job as a group of one cell; `size` is the run's target size, `together` its cell of
/// several streams.
/// A job's group, with its cell of several streams (or none) and its reporting group.
fn group(j: &Job, size: Option<u64>, (together, report): (Option<usize>, u32)) -> Result<Group> {
    let bs = match j.rw.trims() {
        true => BlockSize::zone_reset(j.bs),
        false => {
            check_bs("bs", j.bs, j.direct).map_err(|e| usage(format!("{}: {e}", j.at("bs"))))?
        }
    };
    if let Some(m) = &j.mix {
        // Where the mix was set: bssplit wins over bsrange over bs, as in fio.
        let key = ["bssplit", "bsrange", "bs"]
            .into_iter()
            .find(|k| j.has(k))
            .unwrap_or("bs");
        for w in m.all() {
            check_bs(key, w.bs, j.direct).map_err(|e| usage(format!("{}: {e}", j.at(key))))?;
        }
        if j.verify {
            return Err(usage(format!(
                "{}: verify with a block-size mix ({key}={}) is not supported: iogauge's verify tracks one block size; give one bs for a verifying job",
                j.at("verify"),
                j.typed(key)
            )));
        }
    }
    check_count("numjobs", j.numjobs, MAX_THREADS)
        .map_err(|e| usage(format!("{}: {e}", j.at("numjobs"))))?;
    check_count("iodepth", j.iodepth, MAX_IODEPTH)
        .map_err(|e| usage(format!("{}: {e}", j.at("iodepth"))))?;
    Ok(Group {
        title: j.at.to_string(),
        layout: Layout::Plain,
        origin: Some(j.name.clone()),
        ops: vec![Op::from(j.rw)],
        read_pct: vec![j.read_pct],
        bs: vec![bs],
        threads: vec![j.numjobs],
        // A sync engine has one IO in flight per clone, whatever iodepth says (fio's rule).
        iodepth: vec![if j.engine == Engine::Sync {
            1
        } else {
            j.iodepth
        }],
        sync: j.sync,
        odsync: j.odsync,
        direct: Some(j.direct),
        length: length(j)?,
        range: span(j).filter(|s| Some(*s) != size),
        options: Vec::new(),
        shape: Shape {
            mix: j.mix.clone(),
            seq_run: j.seq_run,
            seq_skip: j.seq_skip,
            stride: j.offset_increment.filter(|_| j.numjobs > 1),
            zones: j.zones,
            zbd: j.zbd,
            spr: j.spr,
            content: j.content,
        },
        together,
        // Each job's own pace, as fio paces each job (and each of its clones) apart.
        rate: j.rate_iops.map(|iops| Rate {
            iops,
            per_thread: true,
            poisson: j.rate_poisson,
        }),
        think: j.think,
        prio: j.prio.clone(),
        flow: j.flow,
        placement: j.placement.clone(),
        // Its own engine: fio runs each job with its own (a sync reader beside libaio ones).
        engine: Some(engine_of(j)),
        distribution: Some(j.distribution),
        // Beside other jobs: its start after theirs and what its end ends (exitall); alone,
        // only exit_what=all does anything: the later jobs never start.
        beside: match (together, j.exitall) {
            (Some(_), exitall) => Beside {
                delay: j.startdelay.0,
                group: report,
                ends: if exitall { j.exit_what } else { Ends::Own },
            },
            (None, true) if j.exit_what == Ends::Later => Beside {
                ends: Ends::Later,
                ..Beside::default()
            },
            (None, _) => Beside::default(),
        },
        no_readback: j.verify && !j.readback,
        tolerate: j.tolerate,
        atomic: j.atomic,
    })
}

/// How long a job runs: its runtime, or what each clone moves when no runtime bounds it
/// (io_size or number_ios, else its region of size once), loops passes of that.
fn length(j: &Job) -> Result<Length> {
    let amount = j.io_size.or(j.size);
    Ok(match (j.runtime, j.time_based, amount) {
        (Some(t), _, _) if t.is_zero() => {
            return Err(usage(format!(
                "{}: runtime=0 runs nothing",
                j.at("runtime")
            )))
        }
        (Some(t), _, _) => Length::Time(t),
        // fio's sprandom writes its range and the over-provisioning, then ends by itself
        // (io_size is fio's to set); a little more than that bounds it.
        (None, false, _) if j.spr.is_some() => {
            let op = j.spr.map_or(0.0, |s| s.op);
            Length::Data(Amount::Permille(1001 + (op * 1000.0).ceil() as u32))
        }
        (None, true, _) => {
            return Err(usage(format!(
                "{}: time_based without runtime runs until stopped; give runtime=, e.g. runtime=60",
                j.at("time_based")
            )))
        }
        // With nrfiles, what the files hold together (size split in whole blocks).
        (None, false, Some(s)) => {
            let s = match (j.nrfiles, j.io_size) {
                (0 | 1, _) | (_, Some(_)) => s,
                (n, None) => s / u64::from(n) / 4096 * 4096 * u64::from(n),
            };
            Length::Data(Amount::Bytes(
                s.saturating_mul(u64::from(j.numjobs))
                    .saturating_mul(u64::from(j.loops)),
            ))
        }
        (None, false, None) if j.numjobs == 1 && j.loops == 1 => Length::Data(Amount::Range),
        // Each clone goes over the whole file (fio), loops times.
        (None, false, None) => Length::Data(Amount::Ranges(j.numjobs.saturating_mul(j.loops))),
    })
}

fn suite_of(args: &FioArgs, jobs: &[Job], size: Option<u64>, groups: Vec<Group>) -> Suite {
    Suite {
        name: match args.options.is_empty() {
            true => {
                let names: Vec<String> =
                    args.jobs.iter().map(|p| p.display().to_string()).collect();
                format!("fio {}", names.join(" "))
            }
            false => "fio (command line)".to_string(),
        },
        description: {
            let groups = fio::run_groups(jobs);
            let runs = groups.last().map_or(0, |g| g + 1);
            format!(
                "{} fio job{}, {}",
                jobs.len(),
                crate::units::plural(jobs.len()),
                match runs {
                    _ if jobs.len() == 1 => "alone".to_string(),
                    r if r == jobs.len() => "one after another".to_string(),
                    1 => "all at the same time".to_string(),
                    r => format!("in {r} run groups, each at the same time"),
                }
            )
        },
        size,
        groups,
        rounds: None,
    }
}

/// What the jobs measure that their names do not say (fio::measures), and the seed drawn for
/// randrepeat=0.
fn notes(jobs: &[Job], ram: u64, seed: u64) -> Vec<String> {
    let mut notes = fio::measures::notes(jobs, ram, &working_set, &laid_out);
    if jobs[0].seed.is_none() {
        notes.push(format!(
            "{}: randrepeat=0: this run's random sequence comes from seed {seed}",
            jobs[0].at("randrepeat")
        ));
    }
    notes
}

/// The bytes a job's IO can touch. Clones offset_increment apart touch their regions, or the
/// span where they overlap.
fn working_set(j: &Job) -> Option<u64> {
    let clones = j.size.map(|s| s.saturating_mul(u64::from(j.numjobs)));
    let regions = span(j).zip(clones).map(|(a, b)| a.min(b));
    let regions = regions.filter(|_| j.offset_increment.is_some());
    regions.or(j.size).or_else(|| match &j.path {
        None => Some(crate::target::DEFAULT_CREATED_SIZE),
        Some(p) => crate::target::existing_size(p),
    })
}

/// A file already there, as large as the job needs (to the end of its last clone's region), is
/// used as it is by fio too; so is a device, and a share of what is there (size=N%).
fn laid_out(j: &Job) -> bool {
    let Some(p) = j.path.as_deref() else {
        return false;
    };
    let last =
        u64::from(j.numjobs.saturating_sub(1)).saturating_mul(j.offset_increment.unwrap_or(0));
    let need = j
        .offset
        .saturating_add(last)
        .saturating_add(j.size.unwrap_or(0));
    crate::target::is_block_device(p)
        || crate::target::existing_size(p).is_some_and(|have| j.size_pct.is_some() || have >= need)
}
