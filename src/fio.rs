//! fio job files read as iogauge workloads: `ini` reads the syntax, this module gives each
//! job's options their meaning (fio's units, defaults and inheritance from `[global]`), and
//! `plan::from_fio` turns the jobs into a suite of cells, so fio jobs get the same target
//! checks, consent, store and findings as any suite.
//!
//! An option iogauge does not know, or knows and cannot honour, is refused with its file, line
//! and why — never dropped, since a job that runs without one of its options measures
//! something its author did not ask for (fio issue 1629, pbench 423). docs/fio.md lists them.

pub mod ini;
pub mod measures;
mod values;

use values::{bs_range, bs_split, count, distribution, file_service, flag, nrfiles, per_direction};
pub use values::{size, time};

use crate::workload::blocks::BsWeight;
use crate::workload::{BsMix, Distribution, FileService, Rw, SyncKind};
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
    pub seq_skip: u64,
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
    /// `verify=` (any method but none): iogauge's own stamps and read-back (--verify).
    pub verify: bool,
    /// `overwrite=1`: fio lays out a write-only job's new file by writing it, as iogauge
    /// always does; without it fio only preallocates it.
    pub overwrite: bool,
    /// `ss=` (fio's steady-state stop): iogauge's --until-stable rule, runtime as the bound.
    pub steady: bool,
    /// `latency_target` with `latency_percentile`: iogauge's --latency-target search.
    pub latency_target: Option<crate::workload::LatencyTarget>,
    pub distribution: Distribution,
    /// `None` when randrepeat=0 asks for a different sequence every run.
    pub seed: Option<u64>,
    pub group_reporting: bool,
    pub stonewall: bool,
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
    if jobs.is_empty() {
        return Err(format!(
            "{file}: no job, only global options; add a job such as [randread-4k] (--name=randread-4k on the command line)"
        ));
    }
    Ok(jobs)
}

/// Options accepted that change nothing in iogauge, with why that is faithful.
const NO_EFFECT: [(&str, &str); 6] = [
    ("thread", "iogauge's workers are always threads"),
    ("description", "text only"),
    (
        "refill_buffers",
        "iogauge writes incompressible random data",
    ),
    (
        "invalidate",
        "fio's default, 1, drops the file from the page cache before a buffered job, as iogauge does; with direct IO nothing is cached",
    ),
    (
        "clat_percentiles",
        "latency percentiles are always reported",
    ),
    ("lat_percentiles", "latency percentiles are always reported"),
];

/// Options accepted with a note of what iogauge does instead (fio::measures): those that
/// change what fio records or prints, not the IO, and those whose effect iogauge's way of
/// running a file already gives or cannot change.
pub const NOTED: [(&str, &str); 27] = [
    ("write_lat_log", LOGS),
    ("write_bw_log", LOGS),
    ("write_iops_log", LOGS),
    ("write_hist_log", LOGS),
    ("log_avg_msec", LOGS),
    ("log_hist_msec", LOGS),
    ("log_max_value", LOGS),
    ("log_offset", LOGS),
    ("log_prio", LOGS),
    ("log_compression", LOGS),
    ("log_unix_epoch", LOGS),
    ("log_alternate_epoch", LOGS),
    ("per_job_logs", LOGS),
    ("gtod_reduce", TIMES_ALL),
    ("disable_lat", TIMES_ALL),
    ("disable_clat", TIMES_ALL),
    ("disable_slat", TIMES_ALL),
    ("disable_bw_measurement", TIMES_ALL),
    (
        "percentile_list",
        "iogauge keeps each result's whole latency histogram (any percentile can be read from it) and prints p50, p90, p99, p99.9 and p99.99",
    ),
    (
        "slat_percentiles",
        "iogauge times each IO from submission to completion; there is no separate submission latency",
    ),
    (
        "random_generator",
        "iogauge draws offsets from its own generator, uniform with replacement (as fio's tausworthe draws; fio's lfsr visits each block once per pass instead), seeded by randseed",
    ),
    (
        "startdelay",
        "iogauge runs a file's jobs one after another, each once the one before has ended, so there is no start to stagger",
    ),
    (
        "rate_min",
        "iogauge does not end a job whose rate falls below it (fio ends it with an error); read the result's rate and its per-second series against it",
    ),
    (
        "threads",
        "threads= is an option of fio's tiobench profile, which a job ignores; iogauge's workers are threads anyway",
    ),
    ("fallocate", LAID_OUT),
    ("create_on_open", LAID_OUT),
    ("create_serialize", LAID_OUT),
];

const LAID_OUT: &str = "iogauge lays out each new file before the job's clock starts by writing it whole with incompressible data, so how and when fio would create or preallocate it changes nothing measured";

const LOGS: &str = "iogauge writes no log files; every result keeps its latency histogram and a per-second series (IOPS, bandwidth, p50, p99) in the run document (--json, -o run.json), which report and export read";
const TIMES_ALL: &str = "fio measures less to spend less CPU per IO; iogauge always times every IO and shows its own CPU per IO beside the result";

/// Options iogauge knows and cannot honour, with the reason given to the user.
const REFUSED: [(&str, &str); 10] = [
    (
        "buffer_compress_percentage",
        "iogauge writes incompressible data only",
    ),
    ("dedupe_percentage", "iogauge writes unique data only"),
    (
        "zero_buffers",
        "iogauge writes incompressible random data only",
    ),
    ("fsync_on_close", "not mapped; fsync=N syncs within the job"),
    (
        "atomic",
        "atomic writes (RWF_ATOMIC, never torn by a power cut) are not issued by iogauge's engines",
    ),
    (
        "fill_device",
        "fill_device writes until the device or file system is full; iogauge writes the size= it is given: give size=",
    ),
    (
        "error_dump",
        "goes with continue_on_error; iogauge stops a job at its first IO error and says which IO failed",
    ),
    (
        "random_sequence_stride",
        "goes with random_distribution=sequence, a fixed order of blocks, which is not mapped",
    ),
    (
        "max_open_zones",
        "zones (zonemode, zonesize, zoneskip) are not mapped",
    ),
    (
        "filename_format",
        "iogauge names the files it creates itself (iogauge-test.PID, .1, .2 …); leave filename_format out, or give filename= for one existing file",
    ),
];

/// Options refused by family (a prefix of fio's name), with the reason.
const FAMILIES: [(&str, &str); 18] = [
    (
        "flow",
        "flow balances jobs that run at the same time; iogauge runs a file's jobs one after another",
    ),
    (
        "exit",
        "iogauge runs a file's jobs one after another, so there are no other jobs running to end",
    ),
    (
        "thinktime",
        "pauses between IOs are not mapped; iogauge paces IOs with rate_iops or rate",
    ),
    (
        "io_submit_mode",
        "iogauge submits IO from each job's own threads; fio's offload to a pool of submitters is not mapped",
    ),
    (
        "rate_process",
        "iogauge paces IOs evenly (fio's linear); poisson arrivals are not mapped",
    ),
    ("cmdprio", "IO priorities are not mapped"),
    ("prio", "IO priorities are not mapped"),
    ("numa_", "CPU and memory placement are not mapped"),
    ("cpus_allowed", "CPU placement is not mapped"),
    ("cpumask", "CPU placement is not mapped"),
    ("zone", "zones (zonemode, zonesize, zoneskip) are not mapped"),
    (
        "read_beyond_wp",
        "reads past a zone's write pointer go with zones (zonemode), which are not mapped",
    ),
    (
        "spr",
        "fio's sprandom preconditions a flash device by its own scheme; iogauge's preconditioning is that of SNIA's PTS (suite snia-iops and the other snia suites)",
    ),
    (
        "verify_",
        "iogauge verifies with its own header on every sector it writes, read back after the job (verify=); fio's verify options are not mapped",
    ),
    ("dedupe", "iogauge writes unique, incompressible data only"),
    ("compress", "iogauge writes unique, incompressible data only"),
    (
        "continue_on_error",
        "iogauge stops a job at its first IO error and says which IO failed",
    ),
    (
        "ignore_error",
        "iogauge stops a job at its first IO error and says which IO failed",
    ),
];

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

fn job(name: &str, at: Loc, opts: &[Opt]) -> Result<Job, Blocked> {
    // The last setting of each option wins, [global]'s first, as fio reads them.
    let mut set: BTreeMap<String, (String, Loc)> = BTreeMap::new();
    for o in opts {
        // fio's aliases (options.c `alias`), each to the name read below.
        let key = match o.key.as_str() {
            "readwrite" => "rw",
            "nr_files" => "nrfiles",
            "fileoffset" => "offset",
            "timeout" => "runtime",
            "steadystate" => "ss",
            "steadystate_duration" => "ss_dur",
            "steadystate_ramp_time" => "ss_ramp",
            "ratemin" => "rate_min",
            "steadystate_check_interval" => "ss_interval",
            "ba" => "blockalign",
            "io_limit" => "io_size",
            "disable_bw" => "disable_bw_measurement",
            "iodepth_batch" => "iodepth_batch_submit",
            "iodepth_batch_complete" => "iodepth_batch_complete_min",
            "blocksize" => "bs",
            "blocksize_range" => "bsrange",
            k => k,
        };
        set.insert(
            key.to_string(),
            (o.value.clone().unwrap_or_default(), o.at.clone()),
        );
    }
    let kb_base = match set.get("kb_base") {
        None => 1024,
        Some((v, l)) => match v.as_str() {
            "1024" => 1024,
            "1000" => 1000,
            _ => return Err(format!("{l}: kb_base={v}: fio takes 1024 or 1000").into()),
        },
    };
    let mut j = Job {
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
        verify: false,
        overwrite: false,
        steady: false,
        latency_target: None,
        distribution: Distribution::Uniform,
        seed: Some(1),
        group_reporting: false,
        stonewall: false,
        submit_batch: None,
        complete_batch: None,
        io_size: None,
        loops: 1,
        odsync: false,
        set: BTreeMap::new(),
    };
    let mut mix: Option<u8> = None;
    let mut filename: Option<String> = None;
    let mut directory: Option<String> = None;
    let mut buffered: Option<bool> = None;
    let mut rate_bytes: Option<u64> = None;
    let mut number_ios: Option<u64> = None;
    let mut blockalign: Option<u64> = None;
    // Every option's problem is collected, so a file's blockers are all named in one run, in
    // the order of its lines (the options come sorted by name here, which some rules rely on).
    let mut blockers: Vec<(Loc, String)> = Vec::new();
    for (key, (v, l)) in &set {
        let bad = |why: String| format!("{l}: {key}={v}: {why}");
        let mut one = || -> Result<(), String> {
            match key.as_str() {
            "name" => j.name = v.clone(),
            "kb_base" => {}
            "rw" => {
                // fio's `:N` suffix is read once the pattern is known (below).
                let (pattern, _) = v.split_once(':').unwrap_or((v, ""));
                j.rw = match pattern {
                    "read" => Rw::Read,
                    "write" => Rw::Write,
                    "randread" => Rw::Randread,
                    "randwrite" => Rw::Randwrite,
                    "rw" | "readwrite" => Rw::Rw,
                    "randrw" => Rw::Randrw,
                    "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
                        return Err(bad("iogauge does not issue trims".into()))
                    }
                    _ => {
                        return Err(bad(
                            "fio's patterns are read, write, randread, randwrite, rw, randrw"
                                .into(),
                        ))
                    }
                }
            }
            "rw_sequencer" => match v.as_str() {
                "sequential" => {}
                _ => {
                    return Err(bad(
                        "only rw_sequencer=sequential (fio's default) is mapped; iogauge does not reissue one offset".into(),
                    ))
                }
            },
            "rwmixread" | "rwmixwrite" => {
                let p = match v.parse::<u8>() {
                    Ok(p) if p <= 100 => p,
                    _ => return Err(bad("give a percentage from 0 to 100".into())),
                };
                let read = if key == "rwmixread" { p } else { 100 - p };
                if mix.is_some_and(|m| m != read) {
                    return Err(bad("rwmixread and rwmixwrite disagree; give one".into()));
                }
                mix = Some(read);
            }
            // Sizes per direction (read, write; fio's third, trim, is not issued). Keys come
            // sorted, so bssplit overrides bsrange, which overrides bs, as in fio.
            "bs" | "bsrange" | "bssplit" => {
                let dirs = per_direction(v, &|p| match key.as_str() {
                    "bs" => Ok(vec![BsWeight {
                        bs: size(p, kb_base)?,
                        weight: 1,
                    }]),
                    "bsrange" => bs_range(p, kb_base),
                    _ => bs_split(p, kb_base),
                })
                .map_err(bad)?;
                j.mix = Some(BsMix {
                    read: dirs[0].clone(),
                    write: dirs[1].clone(),
                    align: None,
                });
            }
            "iodepth" => j.iodepth = count(v).map_err(bad)?,
            "numjobs" => j.numjobs = count(v).map_err(bad)?,
            "direct" => j.direct = flag(v).map_err(bad)?,
            "buffered" => buffered = Some(flag(v).map_err(bad)?),
            "ioengine" => {
                j.engine = match v.as_str() {
                    "io_uring" => Engine::IoUring,
                    "libaio" => Engine::Libaio,
                    "psync" | "sync" | "pvsync" => Engine::Sync,
                    "null" => Engine::Null,
                    _ => {
                        return Err(bad(
                            "iogauge runs io_uring (for io_uring and libaio), psync (for psync, sync, pvsync) and null".into(),
                        ))
                    }
                };
                j.engine_name = v.clone();
            }
            "runtime" => j.runtime = Some(time(v).map_err(bad)?),
            "time_based" => j.time_based = flag(v).map_err(bad)?,
            "ramp_time" => j.ramp = time(v).map_err(bad)?,
            // fio counts sizes and offsets in zones (z) in ZBD mode only: a unit it knows, for
            // a kind of device iogauge does not drive.
            "offset" | "size" | "filesize" | "io_size" if v.ends_with(['z', 'Z']) => {
                return Err(bad(format!(
                    "{key} in zones (z) is for zoned block devices (zonemode=zbd), which iogauge does not drive; give a size"
                )))
            }
            "size" | "filesize" => {
                // A share of the file or device the job names, resolved against its size when
                // the plan looks at the target.
                if let Some(p) = v.strip_suffix('%') {
                    match p.parse::<f64>() {
                        Ok(p) if p > 0.0 && p <= 100.0 => j.size_pct = Some(p),
                        _ => return Err(bad("give a share from 1% to 100%".into())),
                    }
                } else {
                    j.size = Some(size(v, kb_base).map_err(bad)?);
                }
            }
            "offset" if v.ends_with('%') => {
                return Err(bad(
                    "an offset as a share of the file is not mapped yet; give a size, e.g. offset=1g".into(),
                ))
            }
            "offset" => j.offset = size(v, kb_base).map_err(bad)?,
            "offset_increment" => {
                if v.ends_with('%') {
                    return Err(bad(
                        "a share of the file is not mapped; give a size, e.g. offset_increment=1g"
                            .into(),
                    ));
                }
                j.offset_increment = Some(size(v, kb_base).map_err(bad)?).filter(|i| *i > 0);
            }
            "filename" => {
                if v.contains(':') {
                    return Err(bad(
                        "several files joined by ':' are not supported (iogauge writes only files it creates, and names them); give directory= and nrfiles= instead".into(),
                    ));
                }
                filename = Some(v.clone());
            }
            "nrfiles" => j.nrfiles = nrfiles(v).map_err(bad)?,
            "file_service_type" => j.file_service = file_service(v).map_err(bad)?,
            // Checked against nrfiles below: iogauge keeps every file open.
            "openfiles" => {
                count(v).map_err(bad)?;
            }
            "directory" => {
                if v.contains(':') {
                    return Err(bad("several directories are not supported".into()));
                }
                directory = Some(v.clone());
            }
            "fsync" | "fdatasync" => {
                let n = v
                    .parse::<u32>()
                    .map_err(|_| bad("give a count of writes between syncs".into()))?;
                if n > 0 {
                    let kind = if key == "fsync" {
                        SyncKind::Fsync
                    } else {
                        SyncKind::Fdatasync
                    };
                    if j.sync.is_some() {
                        return Err(bad(
                            "fsync and fdatasync together are not supported; give one".into(),
                        ));
                    }
                    j.sync = Some((kind, n));
                }
            }
            "rate_iops" => {
                if v.contains(',') {
                    return Err(bad(
                        "a rate per direction is not supported; give one number".into(),
                    ));
                }
                match v.parse::<f64>() {
                    Ok(r) if r > 0.0 && r.is_finite() => j.rate_iops = Some(r),
                    _ => return Err(bad("give IOs per second, e.g. rate_iops=5000".into())),
                }
            }
            "rate" => {
                // Bytes per second per clone; iogauge paces IOs, so it becomes IOs per second
                // at the job's mean IO size.
                if v.contains(',') {
                    return Err(bad(
                        "a rate per direction is not supported; give one number".into(),
                    ));
                }
                if set.contains_key("rate_iops") {
                    return Err(bad("rate and rate_iops both pace the job; give one".into()));
                }
                // Turned into IOs per second once the sizes and the pattern are known (below).
                rate_bytes = Some(size(v, kb_base).map_err(bad)?);
            }
            "verify" => j.verify = !matches!(v.as_str(), "0" | "null"),
            "overwrite" => j.overwrite = flag(v).map_err(bad)?,
            // fio stops a job once its IOPS or bandwidth hold within a limit over ss_dur;
            // iogauge's rule for the same question is --until-stable's (said in a note).
            "ss" => {
                let metric = v.split(':').next().unwrap_or("");
                match metric {
                    "iops" | "iops_slope" | "bw" | "bw_slope" => {}
                    "lat" | "lat_slope" => {
                        return Err(bad(
                            "iogauge's steady-state rule (--until-stable) judges IOPS; a steady latency is not mapped: use ss=iops or ss=iops_slope".into(),
                        ))
                    }
                    _ => {
                        return Err(bad(
                            "fio's steady-state metrics are iops, iops_slope, bw, bw_slope, lat and lat_slope".into(),
                        ))
                    }
                }
                j.steady = true;
            }
            "ss_dur" | "ss_ramp" | "ss_interval" => {
                if !set.contains_key("ss") {
                    return Err(bad("goes with ss=, which is not set".into()));
                }
                time(v).map_err(bad)?;
            }
            // Read after the loop: keys come sorted, and do_verify=0 must win over verify=.
            "do_verify" => {
                flag(v).map_err(bad)?;
            }
            "latency_target" => {
                // fio's default unit here is microseconds.
                let limit = match v.parse::<u64>() {
                    Ok(us) => Duration::from_micros(us),
                    Err(_) => time(v).map_err(bad)?,
                };
                let pct = match set.get("latency_percentile") {
                    Some((p, _)) => p
                        .trim_end_matches('%')
                        .parse::<f64>()
                        .ok()
                        .filter(|p| *p > 0.0 && *p <= 100.0)
                        .ok_or_else(|| bad("latency_percentile is not a percentage".into()))?,
                    None => 100.0,
                };
                j.latency_target = Some(crate::workload::LatencyTarget {
                    percentile: pct,
                    limit,
                });
            }
            // Read with latency_target; fio's window is how long each depth is tried, iogauge's
            // search sets its own steps.
            "latency_percentile" | "latency_window" => {
                if !set.contains_key("latency_target") {
                    return Err(bad("goes with latency_target, which is not set".into()));
                }
            }
            "random_distribution" => j.distribution = distribution(v).map_err(bad)?,
            "randrepeat" => {
                if !flag(v).map_err(bad)? {
                    j.seed = None;
                }
            }
            "randseed" => {}
            "group_reporting" => j.group_reporting = flag(v).map_err(bad)?,
            "stonewall" | "wait_for_previous" | "new_group" => {
                j.stonewall = flag(v).map_err(bad)?
            }
            "sync" => match v.as_str() {
                "0" | "none" => {}
                "dsync" => j.odsync = true,
                _ => {
                    return Err(bad(
                        "O_SYNC is not mapped; iogauge opens with O_DSYNC (sync=dsync), or syncs with fsync=1 or fdatasync=1".into(),
                    ))
                }
            },
            "iodepth_batch_submit" => match v.parse::<u32>() {
                // 0 is fio's "as many as are queued", iogauge's default behaviour too.
                Ok(0) => {}
                Ok(n) if n <= 4096 => j.submit_batch = Some(n),
                _ => return Err(bad("give a count from 0 to 4096".into())),
            },
            "iodepth_batch_complete_min" => match v.parse::<u32>() {
                // 0 is fio's "do not wait", which iogauge does not do; 1 its default.
                Ok(n) if (1..=4096).contains(&n) => j.complete_batch = Some(n),
                _ => return Err(bad("give a count from 1 to 4096 (iogauge always waits for at least one completion)".into())),
            },
            "iodepth_batch_complete_max" => {
                // iogauge reaps every completion there is at each wake-up: fio's behaviour when
                // this is at least the queue (as the published jobs set it). Keys come in sorted
                // order, so iodepth is already read here.
                if !v
                    .parse::<u32>()
                    .is_ok_and(|n| n == 0 || n >= j.iodepth.max(1))
                {
                    return Err(bad(format!(
                        "iogauge reaps every completion there is; a cap below iodepth ({}) is not supported",
                        j.iodepth
                    )));
                }
            }
            "norandommap" => {
                // iogauge draws offsets with replacement: that is what norandommap asks for.
                flag(v).map_err(bad)?;
            }
            "unlink" | "end_fsync" => {
                // end_fsync is told in a note for jobs that write (fio::measures).
                flag(v).map_err(bad)?;
            }
            "zero_buffers"
            | "buffer_compress_percentage"
            | "dedupe_percentage"
                if v == "0" => {}
            "loops" => j.loops = count(v).map_err(bad)?,
            "io_size" => j.io_size = Some(size(v, kb_base).map_err(bad)?).filter(|b| *b > 0),
            "random_generator" => match v.as_str() {
                "tausworthe" | "lfsr" | "tausworthe64" => {}
                _ => return Err(bad("fio's generators are tausworthe, lfsr and tausworthe64".into())),
            },
            "startdelay" => {
                // A range (`1s-5s`) draws a delay in it; either end is a time.
                for t in v.splitn(2, '-') {
                    time(t).map_err(bad)?;
                }
            }
            "rate_min" => {
                size(v.split(',').next().unwrap_or(""), kb_base).map_err(bad)?;
            }
            // A job named before this one has ended when this one starts: iogauge runs a
            // file's jobs in order (checked in `jobs_of`).
            "wait_for" => {}
            // Read once the sizes are known (below).
            "blockalign" => {
                let dirs: Vec<&str> = v.split(',').filter(|p| !p.is_empty()).collect();
                let mut sizes = dirs.iter().map(|p| size(p, kb_base));
                let first = sizes.next().unwrap_or(Ok(0)).map_err(bad)?;
                for s in sizes {
                    if s.map_err(bad)? != first {
                        return Err(bad(
                            "an alignment per direction is not supported; give one size for both"
                                .into(),
                        ));
                    }
                }
                if first == 0 || first % 512 != 0 {
                    return Err(bad("give a multiple of 512 bytes, e.g. blockalign=4k".into()));
                }
                blockalign = Some(first);
            }
            "number_ios" => {
                number_ios = Some(u64::from(count(v).map_err(bad)?));
            }
            k if NO_EFFECT.iter().any(|(n, _)| *n == k) => {}
            // Told in a note (fio::measures): what iogauge records instead.
            k if NOTED.iter().any(|(n, _)| *n == k) => {}
            k => {
                let why = REFUSED
                    .iter()
                    .find(|(n, _)| *n == k)
                    .or_else(|| FAMILIES.iter().find(|(n, _)| k.starts_with(n)))
                    .map_or(
                        "iogauge does not support this fio option (docs/fio.md lists those it does)",
                        |(_, w)| w,
                    );
                return Err(format!("{l}: {key}: {why}"));
            }
        }
            Ok(())
        };
        if let Err(e) = one() {
            blockers.push((l.clone(), e));
        }
    }
    if !blockers.is_empty() {
        return Err(Blocked(blockers));
    }
    if set
        .get("do_verify")
        .is_some_and(|(v, _)| flag(v) == Ok(false))
    {
        j.verify = false;
    }
    // randseed sets the sequence, and only matters when randrepeat keeps one.
    if let Some((v, l)) = set.get("randseed") {
        let s = v
            .parse::<u64>()
            .map_err(|_| format!("{l}: randseed={v}: give a whole number"))?;
        if j.seed.is_some() {
            j.seed = Some(s);
        }
    }
    if let Some(b) = buffered {
        let (_, l) = &set["buffered"];
        if set.contains_key("direct") && b == j.direct {
            return Err(Blocked::from(format!(
                "{l}: buffered={} contradicts direct={}; give one",
                u8::from(b),
                u8::from(j.direct)
            )));
        }
        j.direct = !b;
    }
    // `rw=randread:N`: a random offset every N IOs, sequential ones between; `rw=read:N`: N
    // bytes skipped after each IO (fio's options.c str_rw_cb and io_u.c get_next_offset).
    if let Some((suffix, l)) = set
        .get("rw")
        .and_then(|(v, l)| v.split_once(':').map(|(_, n)| (n, l)))
    {
        let bad = |why: &str| format!("{l}: rw={}: {why}", set["rw"].0);
        if j.rw.random() {
            j.seq_run = suffix
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| bad("give the IOs per random offset, e.g. randread:8"))?;
        } else if suffix.starts_with('-') {
            return Err(Blocked::from(bad(
                "a negative skip (IO walking backwards) is not supported",
            )));
        } else {
            j.seq_skip = size(suffix, kb_base).map_err(|e| bad(&e))?;
        }
    }
    // rwmixread on a pure pattern is ignored by fio too (KDiskMark sets it for every job).
    j.read_pct = j.rw.read_pct(mix.unwrap_or(50));
    // A direction the pattern never issues does not make a mix (KDiskMark-style `bs=4k,64k`
    // on a read job reads 4k); one size in both directions is no mix at all.
    if let Some(m) = &mut j.mix {
        match j.read_pct {
            100 => m.write = m.read.clone(),
            0 => m.read = m.write.clone(),
            _ => {}
        }
        j.bs = m.min();
        if m.fixed().is_some() {
            j.mix = None;
        }
    }
    // blockalign: fio's default is each direction's smallest size, what iogauge aligns to; a
    // mix may be aligned to another (JESD219: 512 B to 64 KiB at 4 KiB offsets).
    if let Some(a) = blockalign {
        let (v, l) = &set["blockalign"];
        match &mut j.mix {
            Some(m) if m.min_of(false) != a || m.min_of(true) != a => m.align = Some(a),
            Some(_) => {}
            None if a == j.bs => {}
            None => {
                return Err(Blocked::from(format!(
                    "{l}: blockalign={v} with one block size ({}): iogauge aligns each IO to its size; leave blockalign out or give a mix",
                    j.bs
                )))
            }
        }
    }
    // number_ios stops a clone after that many IOs, if nothing stopped it before (fio's
    // HOWTO): with one block size, that many blocks' bytes, the smaller of it and io_size.
    if let Some(n) = number_ios {
        let (v, l) = &set["number_ios"];
        if j.mix.is_some() {
            return Err(Blocked::from(format!(
                "{l}: number_ios={v} with a block-size mix: iogauge stops a job by bytes moved, and a mix's IO count for a byte count is not fixed; give io_size= instead"
            )));
        }
        let bytes = n.saturating_mul(j.bs);
        j.io_size = Some(j.io_size.map_or(bytes, |b| b.min(bytes)));
    }
    if let Some(bytes) = rate_bytes {
        // A mix paces its mean size, as fio's rate counts bytes.
        let mean = j.mix.as_ref().map_or(j.bs as f64, |m| m.mean(j.read_pct));
        if (bytes as f64) < mean {
            let (v, l) = &set["rate"];
            return Err(Blocked::from(format!(
                "{l}: rate={v}: less than one IO of {} bytes a second; give a larger rate",
                mean.round()
            )));
        }
        j.rate_iops = Some(bytes as f64 / mean);
    }
    if j.sync.is_some() && !j.rw.writes(j.read_pct) {
        let key = if set.contains_key("fsync") {
            "fsync"
        } else {
            "fdatasync"
        };
        return Err(Blocked::from(format!(
            "{}: {key} follows writes, and rw={} does none: use a writing pattern or remove it",
            set[key].1,
            j.rw.name()
        )));
    }
    if j.distribution != Distribution::Uniform && !j.rw.random() {
        return Err(Blocked::from(format!(
            "{}: random_distribution shapes random offsets, and rw={} is sequential",
            set["random_distribution"].1,
            j.rw.name()
        )));
    }
    // offset_increment places each clone's region of `size` bytes; without a size fio's
    // regions would run to the file's end and overlap.
    if let Some(l) = set.get("offset_increment").map(|(_, l)| l) {
        if j.offset_increment.is_some() && j.size.is_none() && j.size_pct.is_none() {
            return Err(Blocked::from(format!(
                "{l}: offset_increment needs size= (each clone's region), e.g. size=1g"
            )));
        }
    }
    if j.nrfiles > 1 {
        let (n, l) = &set["nrfiles"];
        if let Some((f, _)) = set.get("filename") {
            return Err(Blocked::from(format!(
                "{l}: nrfiles={n} with filename={f}: iogauge creates and names the job's {n} files itself; give directory= for them instead of filename="
            )));
        }
        if let Some((o, ol)) = set.get("openfiles") {
            if count(o).is_ok_and(|o| o < j.nrfiles) {
                return Err(Blocked::from(format!(
                    "{ol}: openfiles={o} is below nrfiles={n}: iogauge keeps all of a job's files open; remove openfiles or set it to {n}"
                )));
            }
        }
        if j.verify {
            return Err(Blocked::from(format!(
                "{}: verify with nrfiles={n} is not supported: iogauge's verify tracks the blocks of one file; give nrfiles=1 for a verifying job",
                set["verify"].1
            )));
        }
        // filesize is each file's size (size the job's total).
        if let (Some((fs, fl)), false) = (set.get("filesize"), set.contains_key("size")) {
            let each = j.size.filter(|_| j.size_pct.is_none()).ok_or_else(|| {
                format!(
                    "{fl}: filesize={fs} with nrfiles: give each file's size, e.g. filesize=256m"
                )
            })?;
            j.size = Some(each.saturating_mul(u64::from(j.nrfiles)));
        }
    }
    j.path = match (directory, filename) {
        (Some(d), Some(f)) => Some(PathBuf::from(d).join(f)),
        (Some(d), None) => Some(PathBuf::from(d)),
        (None, Some(f)) => Some(PathBuf::from(f)),
        (None, None) => None,
    };
    j.set = set;
    Ok(j)
}

#[cfg(test)]
mod tests;
