//! `iogauge suite`: the seeds' studies as one command each. Loads the suite (by name or from a
//! file), expands its cells, prepares one target for all of them (one fill), runs the cells in
//! order with a suite-wide progress line, and prints the study's tables or the JSON document.
//! An interrupt or a failing cell ends the suite after printing what was measured.

use crate::cli::SuiteArgs;
use crate::commands::run::{honesty_notes, prepare_target, run_id};
use crate::error::{self, usage};
use crate::model::{ResultDoc, RunDoc, SCHEMA};
use crate::suite::cells::{self, Cell, Overrides};
use crate::suite::exec::{self, Env, Plan};
use crate::suite::stable::{self, Rule};
use crate::suite::tables::{self, Outcome, Source, Stability};
use crate::suite::{self as suites, Layout, Length, Suite};
use crate::target::{self, Target};
use crate::units;
use crate::workload::{Limit, Rw, Spec};
use anyhow::Result;
use iogauge_analyze::{Finding, Kind, Severity};
use iogauge_engine::{EngineKind, UringOptions};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

pub fn run(args: &SuiteArgs) -> Result<()> {
    let suite = load(args)?;
    let overrides = overrides(args)?;
    let cells = cells::expand(&suite, &overrides).map_err(usage)?;
    let params = params(&args.repeat.param)?;
    let env = Env {
        engine: EngineKind::from(args.target.engine),
        direct: !args.target.buffered,
        seed: args.seed,
        uring: UringOptions {
            sqpoll: args.target.sqpoll,
            hipri: args.target.hipri,
            no_register: args.target.no_register,
        },
        submit_batch: args.target.submit_batch,
        ram: iogauge_engine::sys::total_memory(),
    };
    if cells.iter().any(|c| c.files > 1) {
        check_files_target(args.target.target.as_deref())?;
    }
    let mut targs = args.target.clone();
    targs.size = targs.size.or(suite.size);
    let target = prepare_target(&targs, &consent_spec(&cells, &env))?;
    let started = SystemTime::now();
    let system = iogauge_sysinfo::capture(Some(&target.path));

    let plans: Vec<Result<Plan, String>> = cells
        .iter()
        .map(|c| exec::plan(c, &env, target.range_bytes, target.logical_block))
        .collect();
    if let Some(Err(reason)) = plans
        .iter()
        .find(|p| p.is_err())
        .filter(|_| plans.iter().all(Result::is_err))
    {
        return Err(usage(format!(
            "no cell of suite {} fits this target: {reason}",
            suite.name
        )));
    }

    // The run is in the store before its first cell, and each cell lands as it finishes, so
    // an interrupted or killed suite keeps what it measured.
    let header = RunDoc {
        schema: SCHEMA.into(),
        run_id: run_id(started),
        label: args.output.label.clone(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        command: std::env::args().collect(),
        suite: Some(suite.name.clone()),
        system,
        results: Vec::new(),
        findings: Vec::new(),
        interrupted: true,
        notes: Vec::new(),
        params,
    };
    let mut rec = crate::store::Recorder::start(&args.output, &header)?;
    let mut state = State::default();
    let failure = run_cells(&suite, &cells, &plans, &target, args, &mut state, &mut rec).err();

    let mut notes = notes(&suite, &cells, &plans, &state, &target, &env, args);
    notes.append(&mut state.notes);
    if let Some(e) = &failure {
        notes.push(format!("the suite stopped at a failing cell: {e:#}"));
    }
    let interrupted = failure.is_some() || crate::interrupt::requested().is_some();
    let mut doc = RunDoc {
        results: std::mem::take(&mut state.results),
        interrupted,
        notes,
        ..header
    };
    crate::analysis::annotate(&mut doc, target.data_bytes);
    let stability = args
        .until_stable
        .then(|| stability(&cells, &state.cell_of, &doc.results));
    add_findings(
        &mut doc,
        &cells,
        &state.cell_of,
        stability.as_deref(),
        env.ram,
    );
    rec.finish(&doc)?;
    if args.output.json {
        emit(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
    } else {
        let outcomes: Vec<Outcome> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| Outcome {
                cell: c,
                result: state.index_of(i).map(|r| &doc.results[r]),
                skipped: plans[i]
                    .as_ref()
                    .err()
                    .map(String::as_str)
                    .or(state.skipped_reason(i)),
            })
            .collect();
        emit(&text(
            &suite,
            &doc,
            &outcomes,
            &target,
            stability.as_deref(),
            env.ram,
        ))?;
    }
    drop(target); // removes a created test file before the exit code is decided
    if let Some(e) = failure {
        return Err(e);
    }
    match crate::interrupt::requested() {
        Some(sig) => Err(error::Interrupted(sig).into()),
        None => Ok(()),
    }
}

/// What the cells left behind.
#[derive(Default)]
struct State {
    results: Vec<ResultDoc>,
    /// Cell index of each result.
    cell_of: Vec<usize>,
    /// Cells the target refused while running, with why.
    refused: BTreeMap<usize, String>,
    /// Notes that came up while running (e.g. caches that could not be dropped).
    notes: Vec<String>,
}

impl State {
    fn index_of(&self, cell: usize) -> Option<usize> {
        self.cell_of.iter().position(|&c| c == cell)
    }

    fn skipped_reason(&self, cell: usize) -> Option<&str> {
        self.refused.get(&cell).map(String::as_str)
    }
}

fn load(args: &SuiteArgs) -> Result<Suite> {
    match (&args.file, &args.name) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| usage(format!("cannot read suite file {}: {e}", path.display())))?;
            suites::schema::parse(&text, &path.display().to_string()).map_err(usage)
        }
        (None, Some(name)) => suites::builtin(name).map_err(usage),
        (None, None) => Err(usage(
            "name a suite (quick, matrix, seq, fsync, seeks, mixes, full) or give --file",
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
        if !(crate::workload::MIN_BS..=crate::workload::MAX_BS).contains(&v) || v % 512 != 0 {
            return Err(format!(
                "{s} is not a multiple of 512 bytes between 512 and 64m"
            ));
        }
        Ok(v)
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
        sizes: list("--sizes", &args.sizes, &bs)?,
        threads: narrow(list(
            "--threads",
            &args.threads,
            &count(crate::workload::MAX_THREADS),
        )?),
        read_pct: list("--read-pct", &args.read_pct, &pct)?
            .map(|v| v.into_iter().map(|x| x as u8).collect()),
        qd: narrow(list(
            "--qd",
            &args.qd,
            &count(crate::workload::MAX_IODEPTH),
        )?),
        files: args.files,
        cell_time: args.cell_time,
    })
}

fn params(given: &[String]) -> Result<BTreeMap<String, String>> {
    given
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(usage(format!(
                "--param {p}: write KEY=VALUE, e.g. --param disks=4"
            ))),
        })
        .collect()
}

/// `--files` creates its files next to iogauge's own test file, never inside a user's file.
fn check_files_target(path: Option<&Path>) -> Result<()> {
    match path.map(std::fs::metadata) {
        None | Some(Err(_)) => Ok(()),
        Some(Ok(md)) if md.is_dir() => Ok(()),
        Some(Ok(_)) => Err(usage(
            "--files N creates N test files of iogauge's own; give a directory as TARGET (or none for the current one)",
        )),
    }
}

/// The workload the target's consent check sees: one that writes if any cell writes, with a
/// block every target takes (each cell's own block size is checked when it is planned).
fn consent_spec(cells: &[Cell], env: &Env) -> Spec {
    let writes = cells.iter().any(Cell::writes);
    Spec {
        rw: if writes { Rw::Randwrite } else { Rw::Randread },
        bs: 4096,
        threads: 1,
        iodepth: 1,
        engine: env.engine,
        direct: env.direct,
        mix_read_pct: if writes { 0 } else { 100 },
        sync: None,
        odsync: false,
        seed: env.seed,
        limit: Limit::Time(Duration::from_secs(1)),
        ramp: Duration::ZERO,
        interval: exec::INTERVAL,
        uring: env.uring,
        submit_batch: env.submit_batch,
    }
}

/// Runs the cells in order until all ran, a signal came, or one failed.
fn run_cells(
    suite: &Suite,
    cells: &[Cell],
    plans: &[Result<Plan, String>],
    target: &Target,
    args: &SuiteArgs,
    state: &mut State,
    rec: &mut crate::store::Recorder,
) -> Result<()> {
    let runnable: Vec<usize> = (0..cells.len()).filter(|&i| plans[i].is_ok()).collect();
    let mut eta = Eta::default();
    for (k, &i) in runnable.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let Ok(plan) = &plans[i] else { continue };
        let cell = &cells[i];
        let left = eta.left(runnable[k..].iter().map(|&j| &cells[j]), target.range_bytes);
        let prefix = format!(
            "[{}/{} · suite {left} left] {}",
            k + 1,
            runnable.len(),
            cell.name()
        );
        let files = match plan {
            Plan::Files { files, .. } => match seek_files(target, *files, plan) {
                Ok(f) => f,
                // Interrupted while filling them: nothing of this cell was measured.
                Err(_) if crate::interrupt::requested().is_some() => break,
                Err(e) => return Err(e),
            },
            _ => Vec::new(),
        };
        let begun = Instant::now();
        // --until-stable: stop a timed cell once its per-interval IOPS are stable enough.
        let rule = cell.planned_time().map(Rule::new);
        let interval = exec::INTERVAL;
        let stop = move |iops: &[f64]| {
            rule.is_some_and(|r| matches!(r.check(iops, interval), stable::Verdict::Stable { .. }))
        };
        let stop_when: Option<crate::runner::StopWhen> = args.until_stable.then_some(&stop);
        let outcome = crate::commands::run::repeated(
            &args.repeat,
            &mut state.notes,
            Some(&prefix),
            |label| {
                exec::run(
                    plan,
                    target,
                    &files,
                    label.unwrap_or_else(|| prefix.clone()),
                    !args.output.json,
                    stop_when,
                )
            },
        );
        drop(files);
        let direct = plan.specs().iter().any(|s| s.direct);
        match outcome {
            Ok(r)
                if r.error
                    .as_deref()
                    .is_some_and(|e| refused_block(e, cell.bs, direct))
                    && r.ios == 0 =>
            {
                eprintln!(
                    "[{}/{}] {}: skipped, the target refused it",
                    k + 1,
                    runnable.len(),
                    cell.name()
                );
                state.refused.insert(i, r.error.unwrap_or_default());
            }
            Ok(mut r) => {
                eta.record(cell, &r, begun.elapsed());
                r.name = Some(cell.name());
                eprintln!("[{}/{}] {}", k + 1, runnable.len(), one_line(cell, &r));
                let cut = r.interrupted;
                let failed = r.error.clone();
                rec.add(&r)?;
                state.results.push(r);
                state.cell_of.push(i);
                if let Some(e) = failed {
                    // The partial cell is kept (flagged with its error); the suite stops, as a
                    // failing device would make every later number doubtful.
                    return Err(anyhow::anyhow!(e).context(format!(
                        "suite {}, cell {}",
                        suite.name,
                        cell.name()
                    )));
                }
                if cut {
                    break;
                }
            }
            Err(e) if refused_block(&format!("{e:#}"), cell.bs, direct) => {
                eprintln!(
                    "[{}/{}] {}: skipped, the target refused it",
                    k + 1,
                    runnable.len(),
                    cell.name()
                );
                state.refused.insert(i, format!("{e:#}"));
            }
            Err(e) => {
                if crate::interrupt::requested().is_some() {
                    break;
                }
                return Err(e.context(format!("suite {}, cell {}", suite.name, cell.name())));
            }
        }
    }
    Ok(())
}

/// A direct IO the kernel refused for its size: small blocks under O_DIRECT on a device whose
/// logical block sysfs did not tell. The suite goes on without the cell, as bm-flash's tables
/// leave a cell blank.
fn refused_block(error: &str, bs: u64, direct: bool) -> bool {
    direct && bs < 4096 && error.contains("Invalid argument")
}

/// The files of a `--files` cell, next to the suite's test file, filled like it and removed
/// after the cell.
fn seek_files(target: &Target, files: u32, plan: &Plan) -> Result<Vec<Target>> {
    let dir = target
        .path
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let size = exec::file_size(target.range_bytes, files);
    let spec = plan.specs()[0];
    eprint!(
        "Creating {files} files of {} for the seeks ... ",
        units::iec(size)
    );
    let _ = std::io::stderr().flush();
    let begun = Instant::now();
    let mut out = Vec::with_capacity(files as usize);
    for i in 0..files {
        let path = dir.join(format!("iogauge-seeks.{}.{i}", std::process::id()));
        out.push(target::prepare(&target::Request {
            path: Some(&path),
            size: Some(size),
            keep: false,
            allow_overwrite: false,
            writes: false,
            seed: spec.seed.wrapping_add(u64::from(i)),
            quiet: true,
        })?);
    }
    eprintln!("done in {}", units::duration(begun.elapsed()));
    Ok(out)
}

/// The suite's remaining time, from each cell's planned time; fixed-data cells are estimated
/// from the rate the finished ones moved data at (or 100 MB/s before any finished).
#[derive(Default)]
struct Eta {
    data_bytes: f64,
    data_secs: f64,
    /// Start-up and wind-down per cell beyond its planned time.
    overhead_secs: f64,
    timed: u32,
}

impl Eta {
    fn record(&mut self, cell: &Cell, r: &ResultDoc, took: Duration) {
        match cell.planned_time() {
            Some(t) => {
                self.overhead_secs += (took.as_secs_f64() - t.as_secs_f64()).max(0.0);
                self.timed += 1;
            }
            None => {
                self.data_bytes += r.bytes as f64;
                self.data_secs += took.as_secs_f64();
            }
        }
    }

    fn left<'a>(&self, cells: impl Iterator<Item = &'a Cell>, range: u64) -> String {
        let rate = if self.data_secs > 0.0 {
            self.data_bytes / self.data_secs
        } else {
            100e6
        };
        let per_cell = if self.timed > 0 {
            self.overhead_secs / f64::from(self.timed)
        } else {
            0.0
        };
        let secs: f64 = cells
            .map(|c| match c.length {
                Length::Time(t) => t.as_secs_f64() + per_cell,
                Length::Data(a) => {
                    let span = c.range.map_or(range, |r| r.min(range));
                    cells::data_bytes(a, span) as f64 / rate.max(1.0)
                }
            })
            .sum();
        units::duration(Duration::from_secs_f64(secs))
    }
}

/// One finished cell, for the log on stderr.
fn one_line(cell: &Cell, r: &ResultDoc) -> String {
    let mut s = format!(
        "{}: {} IOPS · {} · p99 {}",
        cell.name(),
        units::count(r.iops),
        units::mib_s(r.bw_bytes),
        units::latency(r.lat_ns.p99 as f64)
    );
    if let Some(sy) = &r.sync {
        s.push_str(&format!(" · {} syncs/s", units::count(sy.per_s)));
    }
    if r.interrupted {
        s.push_str(" (interrupted)");
    }
    s
}

/// What the reader of the numbers must know: the target's and engine's honesty notes once
/// each, the cells that did not run and why, and how copy, `--files` and `--until-stable`
/// were measured.
fn notes(
    suite: &Suite,
    cells: &[Cell],
    plans: &[Result<Plan, String>],
    state: &State,
    target: &Target,
    env: &Env,
    args: &SuiteArgs,
) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let mut add = |n: String| {
        if !notes.contains(&n) {
            notes.push(n);
        }
    };
    for p in plans.iter().flatten() {
        for spec in p.specs() {
            for n in honesty_notes(spec, target) {
                add(n);
            }
        }
    }
    for (i, p) in plans.iter().enumerate() {
        if let Err(reason) = p {
            add(format!("skipped {}: {reason}", cells[i].name()));
        }
    }
    for (i, reason) in &state.refused {
        add(format!(
            "skipped {}: the target refused its block size under O_DIRECT ({reason})",
            cells[*i].name()
        ));
    }
    if env.engine == EngineKind::Psync && cells.iter().any(|c| c.iodepth > 1) {
        add("psync keeps one IO in flight per thread: cells with N IOs in flight ran N times the threads instead".into());
    }
    if cells.iter().any(|c| c.op == suites::Op::Copy) {
        add("copy reads the first half of the test file while writing the second half, as cp reads one file while writing another; its result counts both streams (bytes read + written), its copy rate is half of that".into());
    }
    if let Some(c) = cells.iter().find(|c| c.files > 1) {
        add(format!(
            "--files {}: the seeks read {} files in turn, an equal share of the cell's time each (at least {}), and their results are merged; sysbench picks a file per IO, so on a rotating disk iogauge's seeks span one file at a time and are shorter",
            c.files,
            c.files,
            units::duration(exec::MIN_SLICE)
        ));
    }
    if args.until_stable {
        add(format!(
            "--until-stable: each timed cell stopped once its per-second IOPS had a 95% confidence interval within ±{:.0}% (after at least {}), or at --cell-time; consecutive seconds are correlated, so treat the interval as a stopping rule, not a guarantee",
            stable::REL_HALF_WIDTH * 100.0,
            units::duration(stable::MIN_TIME)
        ));
    }
    if suite.groups.iter().any(|g| g.layout == Layout::Seq) && env.direct {
        add("the sequential cells use O_DIRECT, where dd and bonnie++ go through the page cache; add --buffered to compare with them (each result then says whether its data could come from RAM)".into());
    }
    notes
}

/// Per result: when its per-second IOPS met the stability rule.
fn stability(cells: &[Cell], cell_of: &[usize], results: &[ResultDoc]) -> Vec<Stability> {
    results
        .iter()
        .zip(cell_of)
        .enumerate()
        .filter_map(|(i, (r, &ci))| {
            let max = cells[ci].planned_time()?;
            let iops = whole_samples(r);
            let rule = Rule::new(max);
            Some(Stability {
                result: i,
                name: cells[ci].name(),
                ran: Duration::from_secs_f64(r.runtime_s),
                stable: rule.stable_after(&iops, Duration::from_secs_f64(r.workload.interval_s)),
                full: stable::rel_half_width(&iops),
            })
        })
        .collect()
}

/// Per-interval IOPS of the intervals that ran their full length.
fn whole_samples(r: &ResultDoc) -> Vec<f64> {
    let step = r.workload.interval_s;
    let mut prev = 0.0;
    let mut out = Vec::new();
    for s in &r.timeseries {
        if s.t_s - prev >= step * 0.999 {
            out.push(s.iops);
        }
        prev = s.t_s;
    }
    out
}

/// The suite's own findings: where a seq result's data came from, and when a cell was stable.
fn add_findings(
    doc: &mut RunDoc,
    cells: &[Cell],
    cell_of: &[usize],
    stab: Option<&[Stability]>,
    ram: u64,
) {
    for (i, &ci) in cell_of.iter().enumerate() {
        let mut new = Vec::new();
        let r = &doc.results[i];
        let has_cache = r
            .findings
            .iter()
            .any(|f| f.get("kind").and_then(|k| k.as_str()) == Some("cache"));
        if cells[ci].layout == Layout::Seq && !has_cache {
            let ws = tables::working_set(r);
            let src = Source::of(r.workload.direct, ws, ram);
            let mut f = finding(Kind::Cache, src.describe().to_string(), i);
            f.evidence.insert("working_set_bytes".into(), ws as f64);
            f.evidence.insert("mem_total_bytes".into(), ram as f64);
            if src == Source::Cache {
                f.severity = Severity::Warning;
                f.advice =
                    "Use --direct, or a --size larger than RAM, so the device answers.".into();
            }
            new.push(f);
        }
        if let Some(s) = stab.and_then(|all| all.iter().find(|s| s.result == i)) {
            let summary = match s.stable {
                Some((t, h)) => format!(
                    "IOPS stable (±{:.1}% at 95% confidence) after {} of {}",
                    h * 100.0,
                    units::duration(t),
                    units::duration(s.ran)
                ),
                None => format!("IOPS not stable to ±3% within {}", units::duration(s.ran)),
            };
            let mut f = finding(Kind::Steady, summary, i);
            f.evidence.insert("ran_s".into(), s.ran.as_secs_f64());
            if let Some((t, h)) = s.stable {
                f.evidence.insert("stable_after_s".into(), t.as_secs_f64());
                f.evidence.insert("ci95_half_width_frac".into(), h);
            }
            if let Some(h) = s.full {
                f.evidence.insert("ci95_half_width_frac_at_end".into(), h);
            }
            new.push(f);
        }
        for f in new {
            if let Ok(v) = serde_json::to_value(&f) {
                doc.results[i].findings.push(v.clone());
                doc.findings.push(v);
            }
        }
    }
}

fn finding(kind: Kind, summary: String, result: usize) -> Finding {
    Finding {
        kind,
        severity: Severity::Info,
        summary,
        evidence: BTreeMap::new(),
        advice: String::new(),
        result: Some(result),
    }
}

/// The human report: what ran where, the study's tables, the summary, notes and findings.
fn text(
    suite: &Suite,
    doc: &RunDoc,
    outcomes: &[Outcome],
    target: &Target,
    stab: Option<&[Stability]>,
    ram: u64,
) -> String {
    let mut s = String::new();
    let ran = doc.results.len();
    let where_ = if target.created {
        format!(
            "a {} test file created by iogauge at {}",
            units::iec(target.range_bytes),
            target.path.display()
        )
    } else {
        format!(
            "{} ({} used)",
            target.path.display(),
            units::iec(target.range_bytes)
        )
    };
    let how = doc.results.first().map(|r| {
        format!(
            "{} · {}",
            r.workload.engine,
            if r.workload.direct {
                "O_DIRECT"
            } else {
                "buffered"
            }
        )
    });
    s.push_str(&format!(
        "suite {} — {}\n{} of {} cells on {}{}\n\n",
        suite.name,
        suite.description,
        ran,
        outcomes.len(),
        where_,
        how.map(|h| format!(" · {h}")).unwrap_or_default()
    ));
    s.push_str(&tables::render(suite, outcomes, ram));
    if let Some(rows) = stab {
        s.push_str("Stability (--until-stable)\n\n");
        s.push_str(&tables::stability(rows));
        s.push('\n');
    }
    s.push_str(&tables::summary(suite, outcomes));
    if doc.interrupted {
        s.push_str("\n(interrupted: the tables hold the cells that finished)\n");
    }
    for n in &doc.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    // The tables already say where each seq result's data came from; only warnings repeat it.
    let shown: Vec<serde_json::Value> = doc
        .findings
        .iter()
        .filter(|f| !(f["kind"] == "cache" && f["severity"] == "info"))
        .cloned()
        .collect();
    s.push_str(&crate::analysis::print_findings(&shown));
    s
}

/// Writes to stdout; a closed pipe (`| head`) is not a failure of the suite.
fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}
