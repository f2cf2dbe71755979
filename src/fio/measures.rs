//! "What your job measures": the ways a published fio job measures something other than what
//! its name says, and how iogauge runs it instead. Each note names the fio option and the line
//! it was set on, so the author can change the job. They are told before the run (and by
//! `--dry-run`) and kept in the run's notes.

use super::{Engine, Job};
use crate::units;

/// The notes for `jobs`; `ram` is the machine's memory in bytes (0: unknown), `working_set`
/// the bytes each job's IO can touch when known.
pub fn notes(jobs: &[Job], ram: u64, working_set: &dyn Fn(&Job) -> Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    for j in jobs {
        let name = &j.name;
        if let (Some(rt), false) = (j.runtime, j.time_based) {
            let stop = match j.size {
                Some(s) => format!(
                    "has moved size={} ({}) per clone",
                    j.typed("size"),
                    units::iec(s)
                ),
                None => "has gone through its file once".into(),
            };
            out.push(format!(
                "{}: job {name} has runtime={} without time_based: fio stops it as soon as it {stop}, which on a fast device is a short burst; iogauge runs it for the whole {} as time_based=1 does (add time_based=1 to get the same from fio)",
                j.at("runtime"),
                j.typed("runtime"),
                units::duration(rt)
            ));
        }
        if j.engine == Engine::Sync && j.iodepth > 1 {
            out.push(format!(
                "{}: job {name} has iodepth={} with ioengine={}: a sync engine has one IO in flight per clone whatever iodepth says, so this job runs {} in flight in fio and in iogauge; use ioengine=io_uring or libaio with direct=1 for a queue",
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
            out.push(format!(
                "{}: job {name}'s ioengine=libaio runs on io_uring in iogauge, {why}",
                j.at("ioengine")
            ));
        }
        if !j.direct {
            match working_set(j) {
                Some(ws) if ram > 0 && ws <= ram => out.push(format!(
                    "{}: job {name} is buffered (direct=0{}) over a working set of {} that fits in RAM ({}): this measures the page cache, not the device; add direct=1 to measure the device",
                    j.at("direct"),
                    if j.has("direct") || j.has("buffered") { "" } else { ", fio's default" },
                    units::iec(ws),
                    units::iec(ram)
                )),
                _ => out.push(format!(
                    "{}: job {name} is buffered (direct=0{}): reads may come from the page cache and writes may not reach the device before the job ends",
                    j.at("direct"),
                    if j.has("direct") || j.has("buffered") { "" } else { ", fio's default" },
                )),
            }
        }
        if let (Some(s), true, false) = (j.size, j.numjobs > 1, j.has("filename")) {
            let total = s.saturating_mul(u64::from(j.numjobs));
            out.push(format!(
                "{}: job {name} has size={} with numjobs={}: fio lays out a file of that size per clone, {} in all{}; iogauge's {} threads share one range of {}",
                j.at("size"),
                j.typed("size"),
                j.numjobs,
                units::iec(total),
                match ram {
                    0 => String::new(),
                    r => format!(" next to {} of RAM", units::iec(r)),
                },
                j.numjobs,
                units::iec(s)
            ));
        }
        if j.has("end_fsync") && j.rw.writes(j.read_pct) && j.set["end_fsync"].0 != "0" {
            out.push(format!(
                "{}: job {name} has end_fsync=1: fio syncs the file once when the job ends and counts that time; iogauge does not, so its write numbers leave out the last flush{}",
                j.at("end_fsync"),
                if j.direct { " (small with direct=1: the data was already written)" } else { ", which for buffered writes is most of the work" }
            ));
        }
        if j.numjobs > 1 && !j.group_reporting {
            out.push(format!(
                "{}: job {name} has numjobs={} without group_reporting: fio reports each clone alone; iogauge reports the job's threads together, as group_reporting=1 does",
                j.at("numjobs"),
                j.numjobs
            ));
        }
    }
    if jobs.len() > 1 {
        let concurrent: Vec<&str> = jobs[1..]
            .iter()
            .filter(|j| !j.stonewall)
            .map(|j| j.name.as_str())
            .collect();
        out.push(match concurrent.is_empty() {
            true => "iogauge runs the jobs one after another, as their stonewall says".into(),
            false => format!(
                "fio runs job{} {} at the same time as the job before (no stonewall or new_group); iogauge runs every job after the one before, as if each had stonewall, so each job's numbers are its own rather than a share of a busy device",
                if concurrent.len() == 1 { "" } else { "s" },
                concurrent.join(", ")
            ),
        });
    }
    out
}
