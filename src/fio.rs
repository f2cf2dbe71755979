//! fio job files read as iogauge workloads: `ini` reads the syntax, this module makes a job of
//! each section (fio's defaults, inheritance from `[global]`, every blocker named at once),
//! `options` gives each option its meaning (a table, as fio's options.c), `unmapped` says which
//! of the rest are accepted or refused, `fixup` applies the rules between options, and
//! `plan::from_fio` turns the jobs into a suite of cells, so fio jobs get the same target
//! checks, consent, store and findings as any suite.
//!
//! An option iogauge does not know, or knows and cannot honour, is refused with its file, line
//! and why — never dropped, since a job that runs without one of its options measures
//! something its author did not ask for (fio issue 1629, pbench 423). docs/fio.md lists them.

mod amounts;
mod content;
mod draft;
mod errors;
mod fixup;
pub mod ini;
pub mod measures;
mod options;
mod place;
mod prio;
mod spr;
mod unmapped;
mod values;
mod zbd;

pub use unmapped::NOTED;
// The unit tests call size() and time() through `super::*`; nothing else here does.
#[cfg(test)]
use values::{size, time};

use crate::workload::{BsMix, Distribution, FileService, Rw, SyncKind};
use draft::{Arg, Draft};
use ini::{Loc, Opt};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The IO engine a job asked for, as fio names it, and what iogauge runs instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    IoUring,
    /// Runs on io_uring; told in a note.
    Libaio,
    /// psync, sync, pvsync: one IO at a time per job.
    Sync,
    Null,
}

/// One fio job with every option resolved; `None`s are fio's defaults left unsaid.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    /// The job's section.
    pub at: Loc,
    pub rw: Rw,
    pub read_pct: u8,
    /// Block size; with a mix, its smallest size.
    pub bs: u64,
    /// `bs=R,W`, `bsrange`, `bssplit`: the sizes drawn per IO, when there is more than one.
    pub mix: Option<BsMix>,
    /// `rw=randread:N`: IOs per random offset, the ones between following the last.
    pub seq_run: u32,
    /// `rw=read:N`: bytes skipped after each sequential IO.
    pub seq_skip: i64,
    /// `offset_increment`: clone `i`'s region starts `i ×` this after `offset`.
    pub offset_increment: Option<u64>,
    pub iodepth: u32,
    pub numjobs: u32,
    pub direct: bool,
    pub engine: Engine,
    /// The engine as typed, for notes.
    pub engine_name: String,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp: Duration,
    pub size: Option<u64>,
    /// `size=N%`: a share of the named file or device (the plan turns it into `size`).
    pub size_pct: Option<f64>,
    pub offset: u64,
    /// `directory` joined with `filename`, or either alone.
    pub path: Option<PathBuf>,
    /// `nrfiles`: files the job spreads its IO over, `size` split evenly among them.
    pub nrfiles: u32,
    /// `file_service_type`: which file each IO goes to when there are several.
    pub file_service: FileService,
    pub sync: Option<(SyncKind, u32)>,
    /// Per job clone, as fio's rate_iops (or `rate=` in bytes/s over the block size).
    pub rate_iops: Option<f64>,
    /// `rate_process=poisson`: the IOs' starts a Poisson process at that rate.
    pub rate_poisson: bool,
    /// `verify=` (any method but none), or `verify_pattern`: iogauge's own stamps on every
    /// write (--verify). Off in every job when no job checks anything (see `checks`).
    pub verify: bool,
    /// `do_verify=0` turns this off: a writing job's blocks are not read back after it. A job
    /// that only reads checks every read whatever it says, as in fio.
    pub readback: bool,
    /// `fill_device=1`: the job writes from its offset to the end of the device, or of the
    /// file system's free space (the plan turns it into `size`).
    pub fill_device: bool,
    /// `verify_fatal=1`: the job stops at its first block that comes back wrong.
    pub verify_fatal: bool,
    /// `continue_on_error` with `ignore_error`: the IO errors the job counts and goes on after.
    pub tolerate: Option<crate::workload::Tolerate>,
    /// fio's `atomic=1`: every write carries RWF_ATOMIC, stored whole or not at all.
    pub atomic: bool,
    /// `overwrite=1`: fio lays out a write-only job's new file by writing it, as iogauge
    /// always does; without it fio only preallocates it.
    pub overwrite: bool,
    /// `ss=` (fio's steady-state stop): iogauge's --until-stable rule, runtime as the bound.
    pub steady: bool,
    /// `ss=lat` or `ss=lat_slope`: fio judges the mean latency (iogauge the rate it follows from).
    pub steady_latency: bool,
    /// `latency_target` with `latency_percentile`: iogauge's --latency-target search.
    pub latency_target: Option<crate::workload::LatencyTarget>,
    pub distribution: Distribution,
    /// `None` when randrepeat=0 asks for a different sequence every run.
    pub seed: Option<u64>,
    pub group_reporting: bool,
    pub stonewall: bool,
    /// `startdelay`: how long after its run group's start the job starts, as the shortest
    /// and longest delay of fio's range (the same for one time).
    pub startdelay: (Duration, Duration),
    /// `exitall`: the job's end ends the jobs that run beside it.
    pub exitall: bool,
    /// `exit_what`: what `exitall` ends (fio's default, the job's reporting group).
    pub exit_what: crate::workload::Ends,
    /// `new_group`: a reporting group of its own from this job on (as `stonewall` starts one).
    pub new_group: bool,
    /// `thinktime` and its companions: pauses between bursts of IO.
    pub think: Option<crate::workload::Think>,
    /// `prioclass`, `prio` and `cmdprio_*`: IO priorities.
    pub prio: Option<crate::workload::Prio>,
    /// `flow` with `flow_id` and `flow_sleep`: a share of the IOs of the jobs beside it.
    pub flow: Option<crate::workload::Flow>,
    /// `cpus_allowed`, `cpumask`, `cpus_allowed_policy`, `numa_*`: where its threads run.
    pub placement: Option<crate::workload::Placement>,
    /// `zonemode=strided` with `zonesize`, `zonerange`, `zoneskip`.
    pub zones: Option<crate::workload::Strided>,
    /// `zonemode=zbd` with `zonesize`, `max_open_zones`, `zone_reset_*`: writes at write
    /// pointers iogauge keeps, as fio does on a target that is not zoned.
    pub zbd: Option<crate::workload::Zbd>,
    /// `sprandom` with `spr_op` and `spr_num_regions`: fio's SanDisk random preconditioning.
    pub spr: Option<crate::workload::Spr>,
    /// `buffer_compress_*`, `dedupe_*`, `zero_buffers`: what the writes carry.
    pub content: crate::workload::Content,
    /// `sync=dsync`: the file opened with O_DSYNC.
    pub odsync: bool,
    /// `io_size` (`io_limit`), or `number_ios` × bs: bytes each clone moves over its region of
    /// `size`, when that is not the region once.
    pub io_size: Option<u64>,
    /// `loops`: passes over the job's amount (bytes moved = amount × loops, as fio sums them).
    pub loops: u32,
    /// `iodepth_batch_submit`: IOs handed to the kernel at once (iogauge's --submit-batch).
    pub submit_batch: Option<u32>,
    /// `iodepth_batch_complete_min`: completions waited for at once (iogauge's
    /// --complete-batch).
    pub complete_batch: Option<u32>,
    /// Where each option that was set came from (the last setting wins, as in fio).
    pub set: BTreeMap<String, (String, Loc)>,
}

impl Job {
    /// Whether the job checks what it reads: a writing job reads its blocks back after it
    /// unless do_verify=0; a job that only reads checks every read, as fio's does.
    pub fn checks(&self) -> bool {
        self.verify && (self.readback || !self.rw.writes(self.read_pct))
    }

    /// fio's defaults for a job named `name`, before its options.
    fn fio_default(name: &str, at: Loc) -> Job {
        Job {
            name: name.to_string(),
            at,
            rw: Rw::Read,
            read_pct: 100,
            bs: 4096,
            mix: None,
            seq_run: 1,
            seq_skip: 0,
            offset_increment: None,
            iodepth: 1,
            numjobs: 1,
            // fio's default is buffered IO: the page cache, unless the job says direct=1.
            direct: false,
            engine: Engine::Sync,
            engine_name: "psync".into(),
            runtime: None,
            time_based: false,
            ramp: Duration::ZERO,
            size: None,
            size_pct: None,
            offset: 0,
            path: None,
            nrfiles: 1,
            file_service: FileService::default(),
            sync: None,
            rate_iops: None,
            rate_poisson: false,
            verify: false,
            readback: true,
            fill_device: false,
            verify_fatal: false,
            tolerate: None,
            atomic: false,
            overwrite: false,
            steady: false,
            steady_latency: false,
            latency_target: None,
            distribution: Distribution::Uniform,
            seed: Some(1),
            group_reporting: false,
            stonewall: false,
            startdelay: (Duration::ZERO, Duration::ZERO),
            exitall: false,
            exit_what: crate::workload::Ends::Group,
            new_group: false,
            think: None,
            prio: None,
            flow: None,
            placement: None,
            zones: None,
            zbd: None,
            spr: None,
            content: Default::default(),
            submit_batch: None,
            complete_batch: None,
            io_size: None,
            loops: 1,
            odsync: false,
            set: BTreeMap::new(),
        }
    }

    /// Where `key` was set, for messages: `job.fio:7`, or the job's section when it was not.
    pub fn at(&self, key: &str) -> &Loc {
        self.set.get(key).map_or(&self.at, |(_, l)| l)
    }

    /// The value of `key` as the job file wrote it (empty for an option with no value).
    pub fn typed(&self, key: &str) -> &str {
        self.set.get(key).map_or("", |(v, _)| v.as_str())
    }

    /// Whether the job file set `key` (or an alias that resolved to it).
    pub fn has(&self, key: &str) -> bool {
        self.set.contains_key(key)
    }
}

/// fio's run groups: a job starts with the jobs before it unless it waits for them
/// (`stonewall`, `wait_for_previous`, or `wait_for` a job before it, which iogauge takes as
/// waiting for every job of that group). Each job's group, numbered from 0 in file order.
pub fn run_groups(jobs: &[Job]) -> Vec<usize> {
    groups(jobs, false)
}

/// Each job's reporting group, as fio numbers them: a new one at each `stonewall`,
/// `wait_for` or `new_group` (fio's groupid, which `exit_what=group` ends).
pub fn report_groups(jobs: &[Job]) -> Vec<u32> {
    groups(jobs, true).into_iter().map(|g| g as u32).collect()
}

/// A new group at each job that waits (and, for reporting, at each `new_group`), but for a
/// `wait_for` whose job's group had ended before the group this job would join began: two
/// jobs that both wait for a third start together when it ends, as fio starts them
/// (`zbd-rand-write-trim-gc.fio`'s writer and trimmer after its warm-up).
fn groups(jobs: &[Job], reporting: bool) -> Vec<usize> {
    let mut group = 0;
    let mut of: Vec<usize> = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        let waited = j.has("wait_for").then(|| j.typed("wait_for"));
        let ended = waited.and_then(|x| jobs[..i].iter().position(|p| p.name == x));
        let joins = !j.stonewall && ended.is_some_and(|k| of[k] < group);
        if i > 0 && (j.stonewall || (waited.is_some() && !joins) || (reporting && j.new_group)) {
            group += 1;
        }
        of.push(group);
    }
    of
}

/// Reads one job file into its jobs, each with `[global]`'s options before its own.
pub fn parse(
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Job>, String> {
    jobs_of(ini::parse(text, file, env)?, file)
}

/// The jobs of fio's command-line form (`--name=a --rw=read …`).
pub fn parse_args(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Job>, String> {
    jobs_of(ini::parse_args(args, env)?, "the command line")
}

fn jobs_of(sections: Vec<ini::Section>, file: &str) -> Result<Vec<Job>, String> {
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs = Vec::new();
    let mut failed: Vec<(Loc, String)> = Vec::new();
    for s in sections {
        if s.is_global() {
            // A later [global] adds to the earlier ones for the jobs after it, as in fio.
            global.extend(s.opts);
            continue;
        }
        // A name= in [global] names no job: fio names each job by its section unless the
        // section itself says name=.
        let mut opts: Vec<Opt> = global.iter().filter(|o| o.key != "name").cloned().collect();
        opts.extend(s.opts.iter().cloned());
        match job(&s.name, s.at.clone(), &opts) {
            Ok(j) => jobs.push(j),
            // The next jobs are read too, so a file's blockers are all named at once, in the
            // file's order (a [global] option each job refuses said once).
            Err(Blocked(e)) => failed.extend(e),
        }
    }
    // wait_for names a job that must have ended first: one before it in the file, as iogauge
    // runs them in order.
    for (i, j) in jobs.iter().enumerate() {
        if j.has("wait_for") {
            let name = j.typed("wait_for");
            if !jobs[..i].iter().any(|e| e.name == name) {
                failed.push((
                    j.at("wait_for").clone(),
                    format!(
                        "{}: wait_for={name}: no job before this one is named {name}; iogauge runs a file's jobs in order, so put the job waited for first",
                        j.at("wait_for")
                    ),
                ));
            }
        }
    }
    if !failed.is_empty() {
        return Err(in_file_order(failed));
    }
    // fio stamps the writes of a verifying job even with do_verify=0, for a later job (or
    // run) to check; when no job of the file checks anything, the stamps serve nothing and
    // iogauge writes its usual data.
    if !jobs.iter().any(Job::checks) {
        for j in &mut jobs {
            j.verify = false;
        }
    }
    if jobs.is_empty() {
        return Err(format!(
            "{file}: no job, only global options; add a job such as [randread-4k] (--name=randread-4k on the command line)"
        ));
    }
    Ok(jobs)
}

/// What keeps a job from running: each blocker with where it was set.
#[derive(Debug)]
struct Blocked(Vec<(Loc, String)>);

impl From<String> for Blocked {
    /// One refusal, its place read back from the message, which begins with it
    /// (`job.fio:7: …`).
    fn from(e: String) -> Blocked {
        let loc = e
            .split_once(": ")
            .and_then(|(at, _)| at.rsplit_once(':'))
            .and_then(|(file, line)| {
                Some(Loc {
                    file: file.to_string(),
                    line: line.parse().ok()?,
                })
            })
            .unwrap_or(Loc {
                file: String::new(),
                line: 0,
            });
        Blocked(vec![(loc, e)])
    }
}

/// Several blockers as one line, in the order of their lines in the file (an include's by its
/// own name), the same one (a [global] option read for each job) said once.
fn in_file_order(mut blockers: Vec<(Loc, String)>) -> String {
    blockers.sort_by(|a, b| (&a.0.file, a.0.line).cmp(&(&b.0.file, b.0.line)));
    blockers.dedup_by(|a, b| a.1 == b.1);
    // The first keeps its place at the start of the line (where each refusal names its line).
    let all: Vec<String> = blockers.into_iter().map(|(_, e)| e).collect();
    match all.split_first() {
        Some((first, [])) => first.clone(),
        Some((first, rest)) => format!("{first}; {} more: {}", rest.len(), rest.join("; ")),
        None => String::new(),
    }
}

/// One job from its options, `[global]`'s first: each read by fio::options' table, then the
/// rules between them (fio::fixup).
fn job(name: &str, at: Loc, opts: &[Opt]) -> Result<Job, Blocked> {
    let set = options::settings(opts);
    let kb_base = options::kb_base(&set)?;
    let mut d = Draft::new(Job::fio_default(name, at));
    // Every option's problem is collected, so a file's blockers are all named in one run, in
    // the order of its lines (the options come sorted by name here, which some rules rely on).
    let mut blockers: Vec<(Loc, String)> = Vec::new();
    for (key, (v, l)) in &set {
        let arg = Arg {
            key,
            v,
            at: l,
            kb_base,
            set: &set,
        };
        if let Err(e) = options::read(&mut d, &arg) {
            blockers.push((l.clone(), e));
        }
    }
    if !blockers.is_empty() {
        return Err(Blocked(blockers));
    }
    Ok(fixup::fixup(d, set, kb_base)?)
}

#[cfg(test)]
mod tests;
