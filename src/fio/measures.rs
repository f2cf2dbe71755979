//! "What your job measures": the ways a published fio job measures something other than what
//! its name says, and how iogauge runs it instead. Each note names the fio option and the line
//! it was set on, so the author can change the job. They are told before the run (and by
//! `--dry-run`) and kept in the run's notes.

use super::{Engine, Job};
use crate::units;
use crate::workload::Rw;

/// Stands for the jobs a note is about until the notes of several jobs are merged.
const WHO: &str = "\u{0}";

/// The notes for `jobs`; `ram` is the machine's memory in bytes (0: unknown), `working_set`
/// the bytes each job's IO can touch when known, `laid_out` whether a job's file is already
/// there, as large as the job needs (fio then uses it as it is). A note that reads the same for
/// several jobs (an option set in `[global]`) is said once, naming them all.
pub fn notes(
    jobs: &[Job],
    ram: u64,
    working_set: &dyn Fn(&Job) -> Option<u64>,
    laid_out: &dyn Fn(&Job) -> bool,
) -> Vec<String> {
    let mut each: Vec<(String, &str)> = Vec::new();
    for j in jobs {
        let mut out = |text: String| each.push((text, j.name.as_str()));
        stop_and_pace(j, &mut out);
        sizes_and_layout(j, laid_out, &mut out);
        done_instead(j, &mut out);
        engine(j, &mut out);
        page_cache(j, ram, working_set, &mut out);
        clones(j, ram, &mut out);
        counted(j, &mut out);
    }
    let mut out = merged(&each);
    out.extend(order(jobs));
    out
}

/// runtime without time_based (fio stops at the first of time and bytes); rate=, paced in IOs.
fn stop_and_pace(j: &Job, out: &mut dyn FnMut(String)) {
    if let (Some(rt), false) = (j.runtime, j.time_based) {
        let passes = match j.loops {
            1 => String::new(),
            n => format!(" {n} times (loops={n})"),
        };
        let stop = match (j.io_size, j.size) {
            (Some(b), _) => format!("has moved {} per clone{passes}", units::iec(b)),
            (None, Some(s)) => format!(
                "has moved size={} ({}) per clone{passes}",
                j.typed("size"),
                units::iec(s)
            ),
            (None, None) => format!("has gone through its file{passes}"),
        };
        out(format!(
            "{}: runtime={} without time_based ({WHO}): fio stops a job as soon as it {stop}, which on a fast device is a short burst; iogauge runs the whole {} as time_based=1 does (add time_based=1 to get the same from fio)",
            j.at("runtime"),
            j.typed("runtime"),
            units::duration(rt)
        ));
    }
    let key = ["rate", "rate_iops"].into_iter().find(|k| j.has(k));
    if let (Some(key), Some(r)) = (key, j.rate_iops) {
        let mixed = j.rw.read_pct(j.read_pct) > 0 && j.rw.writes(j.read_pct);
        let each = match (key, &j.mix) {
            (_, _) if mixed => format!(
                "reads and writes each at their own rate, as fio issues them whatever rwmixread says: {} IOs/s together, {}% reads",
                units::count(r),
                j.read_pct
            ),
            ("rate_iops", _) => format!("{} IOs/s", units::count(r)),
            (_, Some(m)) => format!(
                "{} IOs/s of the mix's mean size, {}",
                units::count(r),
                units::iec_f64(m.mean(j.read_pct))
            ),
            (_, None) => format!("{} IOs/s of bs={}", units::count(r), j.typed("bs")),
        };
        if key == "rate" || mixed {
            out(format!(
                "{}: {key}={} ({WHO}) paces each clone, {each}: iogauge paces IOs on one schedule and counts each IO's latency from its planned start",
                j.at(key),
                j.typed(key),
            ));
        }
    }
}

/// What the IOs' sizes and their file are in fio and in iogauge: a mix under fio's random
/// map, a write-only job's file that fio never writes.
fn sizes_and_layout(j: &Job, laid_out: &dyn Fn(&Job) -> bool, out: &mut dyn FnMut(String)) {
    // fio's random map (norandommap=0, its default) cuts an IO short where it would cover
    // blocks already used: once the map fills, a split's large sizes shrink. Measured with
    // fio 3.33, bssplit=4k/50:64k/50 on a 1 GiB file: 21 KB per IO, not 34 KB.
    let randommap = !j.has("norandommap") || j.typed("norandommap") == "0";
    if let (Some(m), true, true) = (&j.mix, j.rw.random(), randommap) {
        let key = ["bssplit", "bsrange", "bs"]
            .into_iter()
            .find(|k| j.has(k))
            .unwrap_or("bs");
        out(format!(
            "{}: {key}={} on random IO with fio's random map (no norandommap=1) ({WHO}): once the map fills, fio cuts each IO short at blocks it has already used, so its IOs come out smaller than the mix; iogauge draws offsets with replacement and issues the mix's sizes (mean {}), as fio does with norandommap=1",
            j.at(key),
            j.typed(key),
            units::iec_f64(m.mean(j.read_pct))
        ));
    }
    // fio lays out a new file by writing it only for a job that reads or has overwrite=1;
    // a write-only job's file is unlinked, created and preallocated, never written
    // (filesetup.c, extend_file). Measured on the virtual disk (docs/fio.md): Google
    // Cloud's write IOPS job ran ~15% faster there than on a written file.
    if matches!(j.rw, Rw::Write | Rw::Randwrite) && !j.overwrite && !laid_out(j) {
        out(format!(
            "{}: rw={} without overwrite=1 ({WHO}): fio would create the file preallocated and never written, so its writes go to space that holds no data yet (on a file system each first write into it is an extent to convert; on a thin or virtual disk, a block to allocate); iogauge fills the file with random data before measuring, as fio does with overwrite=1 (add overwrite=1 to compare like for like)",
            j.at("rw"),
            j.rw.name()
        ));
    }
}

/// How zbd jobs share their zones, said in each one's note.
const SHARED_ZONES: &str = "the jobs of a file and their threads share one set of pointers for the run, carried from one job to the next and shared by jobs that run together, as fio's are";

/// Options iogauge honours its own way: those of `NOTED`, verify=, ss=, latency_target.
fn done_instead(j: &Job, out: &mut dyn FnMut(String)) {
    for (key, instead) in super::NOTED.iter().filter(|(k, _)| j.has(k)) {
        out(format!("{}: {key} ({WHO}): {instead}", j.at(key)));
    }
    if j.verify {
        let key = if j.has("verify") {
            "verify"
        } else {
            "verify_pattern"
        };
        out(format!(
            "{}: {key}={} ({WHO}): iogauge {}; fio's checksum is not computed, and a wrong, lost or misplaced block is named either way",
            j.at(key),
            j.typed(key),
            match (j.readback, j.rw.writes(j.read_pct)) {
                (_, false) => "checks every block this job reads against the header (run, offset, generation) the run stamped on each of its sectors",
                (true, true) => "stamps every sector it writes with its own header (run, offset, generation) and reads every block back after the job",
                (false, true) => "stamps every sector it writes with its own header (run, offset, generation) and does not read them back after the job (do_verify=0): a later job's reads check them",
            }
        ));
        if j.has("verify_pattern") {
            out(format!(
                "{}: verify_pattern={} ({WHO}): iogauge writes its own incompressible payload after each header, not the pattern, so a block that comes back other than written is told from a pattern that happens to match",
                j.at("verify_pattern"),
                j.typed("verify_pattern")
            ));
        }
        if j.has("verify_write_sequence") {
            out(format!(
                "{}: verify_write_sequence={} ({WHO}): iogauge judges which write of a block landed last only where the order is certain: of writes of one block in flight together either may land last, and a block older than a write that had to land last is named lost, whatever this says",
                j.at("verify_write_sequence"),
                j.typed("verify_write_sequence")
            ));
        }
        if j.has("verify_interval") {
            out(format!(
                "{}: verify_interval={} ({WHO}): iogauge's header and checksum cover each 4 KiB sector, whatever the interval; damage anywhere in one is found and named by the sector's offset",
                j.at("verify_interval"),
                j.typed("verify_interval")
            ));
        }
    }
    if j.fill_device {
        out(format!(
            "{}: fill_device=1 ({WHO}): fio writes until the device ends or a write fails for lack of space; iogauge writes {} from the offset: to the device's end, or the space the file system had free when the run was planned less 1% (at least 1 MiB) kept free",
            j.at("fill_device"),
            j.size.map_or_else(String::new, units::iec)
        ));
    }
    if j.steady {
        out(format!(
            "{}: ss={} ({WHO}): fio stops the job once that metric holds within its limit over ss_dur; iogauge stops it by its own rule (--until-stable: the 95% confidence interval of its IOPS within ±3%), with runtime as the most it runs{}",
            j.at("ss"),
            j.typed("ss"),
            match j.steady_latency {
                true => format!("; at its fixed {} in flight the mean latency is that depth over the IOPS (Little's law), so a steady rate is a steady mean latency", j.iodepth * j.numjobs),
                false => String::new(),
            }
        ));
    }
    if let Some(z) = j.zbd.filter(|_| !j.rw.trims()) {
        out(format!(
            "{}: zonemode=zbd ({WHO}): on a target that is not zoned, iogauge keeps the zones' write pointers as fio does, every zone empty at the start: each write goes to a zone's pointer ({}){}, a full zone chosen again starts over at its start, and a reset reaches no device; {}",
            j.at("zonemode"),
            match j.rw {
                Rw::Randwrite => "a random zone's",
                _ => "the zones in turn",
            },
            match z.max_open {
                0 => String::new(),
                n => format!(", at most {n} zones written at once"),
            },
            SHARED_ZONES
        ));
    }
    if j.zbd.is_some() && j.rw.trims() {
        out(format!(
            "{}: rw={} with zonemode=zbd ({WHO}): each trim resets a zone's write pointer in memory ({}), as fio's do on a target that is not zoned: nothing reaches the device, and each counts as a trim of one zone; {}",
            j.at("rw"),
            j.rw.name(),
            match j.rw {
                Rw::Randtrim => "the zone nearest a random one that holds data; none holding any ends the job",
                _ => "the zones in turn",
            },
            SHARED_ZONES
        ));
    }
    if let Some(s) = j.spr {
        out(format!(
            "{}: sprandom ({WHO}): fio's SanDisk random preconditioning, in {} regions at spr_op={}: every block written once in a random order and, at each region's start, a share of the last region's blocks again ({:.1}% after the first region, none after the last), the range and {}% of it in all; iogauge walks the blocks in its own random order and draws its own coins (fio's LFSR and taus88 give another order, the same shares), and the job ends when its sequence does, as fio's, whatever io_size says",
            j.at("sprandom"),
            s.regions,
            s.op,
            f64::from(crate::workload::sprandom::invalid_pct(s)[0]) / 100.0,
            (s.op * 100.0).round()
        ));
    }
    if let Some(t) = j.latency_target {
        out(format!(
            "{}: latency_target={} at the p{} ({WHO}): fio lowers the queue depth until the target holds; iogauge keeps iodepth={} and searches the highest rate that keeps it (--latency-target) — the same question, asked by rate",
            j.at("latency_target"),
            j.typed("latency_target"),
            t.percentile,
            j.iodepth
        ));
    }
}

/// A sync engine with a queue; libaio, which runs on io_uring here.
fn engine(j: &Job, out: &mut dyn FnMut(String)) {
    if j.engine == Engine::Sync && j.iodepth > 1 {
        out(format!(
            "{}: iodepth={} with ioengine={} ({WHO}): a sync engine has one IO in flight per clone whatever iodepth says, so {} in flight in fio and in iogauge; use ioengine=io_uring or libaio with direct=1 for a queue",
            j.at("iodepth"),
            j.iodepth,
            j.engine_name,
            j.numjobs
        ));
    }
    if j.engine == Engine::Libaio {
        let why = match j.direct {
            true => "the same queue of direct IOs".to_string(),
            false => format!(
                "but without direct=1 Linux completes libaio IO synchronously, so fio ran one IO at a time per clone whatever iodepth={} says, while io_uring keeps the queue: add direct=1 for numbers fio and iogauge agree on",
                j.iodepth
            ),
        };
        out(format!(
            "{}: ioengine=libaio ({WHO}) runs on io_uring in iogauge, {why}",
            j.at("ioengine")
        ));
    }
}

/// Buffered IO, and whether its working set fits in the page cache.
fn page_cache(
    j: &Job,
    ram: u64,
    working_set: &dyn Fn(&Job) -> Option<u64>,
    out: &mut dyn FnMut(String),
) {
    // The null engine moves nothing through the page cache: there is no cache to warn of.
    if !j.direct && j.engine != Engine::Null {
        let default = match j.has("direct") || j.has("buffered") {
            true => "",
            false => ", fio's default",
        };
        match working_set(j) {
            Some(ws) if ram > 0 && ws <= ram => out(format!(
                "{}: buffered IO (direct=0{default}) over a working set of {} that fits in RAM ({}) ({WHO}): this measures the page cache, not the device; add direct=1 to measure the device",
                j.at("direct"),
                units::iec(ws),
                units::iec(ram)
            )),
            _ => out(format!(
                "{}: buffered IO (direct=0{default}) ({WHO}): reads may come from the page cache and writes may not reach the device before the job ends",
                j.at("direct"),
            )),
        }
    }
}

/// numjobs: fio's clones each lay out their own files or walk the same one; iogauge's threads
/// share them.
fn clones(j: &Job, ram: u64, out: &mut dyn FnMut(String)) {
    if let (Some(s), true, false) = (j.size, j.numjobs > 1, j.has("filename")) {
        let total = s.saturating_mul(u64::from(j.numjobs));
        // With nrfiles, size is split over the job's files: fio lays out that many per
        // clone, and iogauge's threads share the one set.
        let (theirs, ours) = match j.nrfiles {
            0 | 1 => ("a file of that size".to_string(), units::iec(s)),
            n => {
                let each = units::iec(s / u64::from(n));
                (
                    format!("{n} files of {each}"),
                    format!("{n} files of {each} ({})", units::iec(s)),
                )
            }
        };
        out(format!(
            "{}: size={} with numjobs={} ({WHO}): fio lays out {theirs} per clone, {} in all{}; iogauge's {} threads {} {ours}",
            j.at("size"),
            j.typed("size"),
            j.numjobs,
            units::iec(total),
            match ram {
                0 => String::new(),
                r => format!(" next to {} of RAM", units::iec(r)),
            },
            j.numjobs,
            match (j.offset_increment, j.nrfiles > 1) {
                (Some(_), false) => "use one file, each its own region (offset_increment apart) of",
                (Some(_), true) => "use, each its own region (offset_increment apart) in each file,",
                (None, false) => "share one range of",
                (None, true) => "share",
            },
        ));
    }
    if j.numjobs > 1 && j.has("filename") && !j.rw.random() && j.offset_increment.is_none() {
        out(format!(
            "{}: numjobs={} with one filename and rw={} ({WHO}): fio's clones each walk the whole file from its start, so the same blocks are moved {} times close together (a cache below sees the repeats); iogauge's {} threads each take their own part of the file (add offset_increment=size/numjobs to get the same from fio)",
            j.at("numjobs"),
            j.numjobs,
            j.rw.name(),
            j.numjobs,
            j.numjobs,
        ));
    }
}

/// What fio's numbers count that iogauge's do not, or apart: end_fsync's flush, each clone
/// without group_reporting.
fn counted(j: &Job, out: &mut dyn FnMut(String)) {
    if j.has("end_fsync") && j.rw.writes(j.read_pct) && j.typed("end_fsync") != "0" {
        out(format!(
            "{}: end_fsync=1 on a job that writes ({WHO}): fio syncs the file once when the job ends and counts that time; iogauge does not, so its write numbers leave out the last flush{}",
            j.at("end_fsync"),
            match j.direct {
                true => " (small with direct=1: the data was already written)",
                false => ", which for buffered writes is most of the work",
            }
        ));
    }
    if j.numjobs > 1 && !j.group_reporting {
        out(format!(
            "{}: numjobs={} without group_reporting ({WHO}): fio reports each clone alone; iogauge reports the job's threads together, as group_reporting=1 does",
            j.at("numjobs"),
            j.numjobs
        ));
    }
}

/// The notes of every job, one that reads the same for several said once, naming them all.
fn merged(each: &[(String, &str)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for (text, _) in each {
        if done.contains(&text.as_str()) {
            continue;
        }
        done.push(text);
        let names: Vec<&str> = each
            .iter()
            .filter(|(t, _)| t == text)
            .map(|(_, n)| *n)
            .collect();
        let who = match names.as_slice() {
            [one] => format!("job {one}"),
            many => format!("jobs {}", many.join(", ")),
        };
        out.push(text.replace(WHO, &who));
    }
    out
}

/// How the jobs follow each other: fio's run groups, a group of several jobs run at once.
fn order(jobs: &[Job]) -> Vec<String> {
    if jobs.len() <= 1 {
        return Vec::new();
    }
    let groups = super::run_groups(jobs);
    let members = |g: usize| -> Vec<&str> {
        jobs.iter()
            .zip(&groups)
            .filter(|(_, &x)| x == g)
            .map(|(j, _)| j.name.as_str())
            .collect()
    };
    let last = groups.last().copied().unwrap_or(0);
    let together: Vec<Vec<&str>> = (0..=last).map(members).filter(|m| m.len() > 1).collect();
    let mut out = vec![match together.is_empty() {
        true => "iogauge runs the jobs one after another, as their stonewall says".to_string(),
        false => format!(
            "{}: each job's numbers are its share of what its target gave while the others ran (a job on a file of its own shares what lies under both), and their sum is reported as well",
            together
                .iter()
                .map(|m| format!(
                    "jobs {} run at the same time, as fio runs them (no stonewall between them)",
                    m.join(", ")
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }];
    // wait_for=X starts a job when X ends; iogauge starts it when X's whole group has.
    for (i, j) in jobs.iter().enumerate().filter(|(_, j)| j.has("wait_for")) {
        let x = j.typed("wait_for");
        let Some(g) = jobs[..i]
            .iter()
            .zip(&groups)
            .find(|(e, _)| e.name == x)
            .map(|(_, &g)| g)
        else {
            continue;
        };
        let beside: Vec<&str> = members(g).into_iter().filter(|n| *n != x).collect();
        if !beside.is_empty() {
            out.push(format!(
                "{}: wait_for={x}: fio starts job {} when {x} ends, while {} may still run; iogauge starts it once they have all ended",
                j.at("wait_for"),
                j.name,
                beside.join(", ")
            ));
        }
    }
    out
}
