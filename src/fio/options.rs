//! fio's options as a table, the way fio's options.c is one: each option iogauge maps, by its
//! names, with the function that reads its value into the job. fio's aliases are resolved to
//! these names first; an option the table lacks is accepted or refused by `unmapped`. A rule
//! that needs options read after this one is `fixup`'s, as fio's init.c fixup_options.

use super::draft::{Arg, Draft, Set};
use super::ini::Opt;
use super::values::{
    bs_range, bs_split, count, dir_rates, distribution, file_service, flag, flow_weight, nrfiles,
    per_direction, prio_per_direction, size, time, time_us, DirRates,
};
use super::Engine;
use super::{amounts, unmapped};
use crate::workload::blocks::BsWeight;
use crate::workload::{BsMix, LatencyTarget, Rw, SyncKind};
use std::time::Duration;

/// fio's aliases (options.c `alias`), each to the name read here.
const ALIASES: [(&str, &str); 16] = [
    ("readwrite", "rw"),
    ("nr_files", "nrfiles"),
    ("fileoffset", "offset"),
    ("timeout", "runtime"),
    ("steadystate", "ss"),
    ("steadystate_duration", "ss_dur"),
    ("steadystate_ramp_time", "ss_ramp"),
    ("ratemin", "rate_min"),
    ("steadystate_check_interval", "ss_interval"),
    ("ba", "blockalign"),
    ("io_limit", "io_size"),
    ("disable_bw", "disable_bw_measurement"),
    ("iodepth_batch", "iodepth_batch_submit"),
    ("iodepth_batch_complete", "iodepth_batch_complete_min"),
    ("blocksize", "bs"),
    ("blocksize_range", "bsrange"),
];

/// The options of a job, `[global]`'s first, under the names read here; the last setting of
/// each wins, as fio reads them.
pub(super) fn settings(opts: &[Opt]) -> Set {
    let mut set = Set::new();
    for o in opts {
        let key = ALIASES
            .iter()
            .find(|(alias, _)| *alias == o.key)
            .map_or(o.key.as_str(), |(_, name)| name);
        set.insert(
            key.to_string(),
            (o.value.clone().unwrap_or_default(), o.at.clone()),
        );
    }
    set
}

/// `kb_base`, read before the options whose sizes it scales.
pub(super) fn kb_base(set: &Set) -> Result<u64, String> {
    match set.get("kb_base") {
        None => Ok(1024),
        Some((v, l)) => match v.as_str() {
            "1024" => Ok(1024),
            "1000" => Ok(1000),
            _ => Err(format!("{l}: kb_base={v}: fio takes 1024 or 1000")),
        },
    }
}

/// Reads one option into the draft: by the table, or as `unmapped` accepts or refuses it.
/// Options come in the order of their names, which some readers rely on (said where).
pub(super) fn read(d: &mut Draft, a: &Arg) -> Result<(), String> {
    match OPTIONS.iter().find(|o| o.names.contains(&a.key)) {
        Some(o) => (o.read)(d, a),
        None => unmapped::accept(a.key, a.at),
    }
}

/// One option iogauge maps: fio's names for it (alternatives that mean the same here) and
/// what reading its value does.
struct Mapped {
    names: &'static [&'static str],
    read: Reader,
}

type Reader = fn(&mut Draft, &Arg) -> Result<(), String>;

const fn opt(names: &'static [&'static str], read: Reader) -> Mapped {
    Mapped { names, read }
}

const OPTIONS: &[Mapped] = &[
    opt(&["name"], |d, a| {
        a.put(&mut d.job.name, Ok(a.v.to_string()))
    }),
    // Read before the others (`kb_base`).
    opt(&["kb_base"], |_, _| Ok(())),
    opt(&["rw"], rw),
    opt(&["rw_sequencer"], rw_sequencer),
    opt(&["rwmixread", "rwmixwrite"], rwmix),
    // Keys come sorted, so bssplit overrides bsrange, which overrides bs, as in fio.
    opt(&["bs", "bsrange", "bssplit"], block_sizes),
    opt(&["iodepth"], |d, a| a.put(&mut d.job.iodepth, count(a.v))),
    opt(&["numjobs"], |d, a| a.put(&mut d.job.numjobs, count(a.v))),
    opt(&["direct"], |d, a| a.put(&mut d.job.direct, flag(a.v))),
    // Against direct in `fixup`.
    opt(&["buffered"], |d, a| {
        a.put(&mut d.buffered, flag(a.v).map(Some))
    }),
    opt(&["ioengine"], ioengine),
    opt(&["runtime"], |d, a| {
        a.put(&mut d.job.runtime, time(a.v).map(Some))
    }),
    opt(&["time_based"], |d, a| {
        a.put(&mut d.job.time_based, flag(a.v))
    }),
    opt(&["ramp_time"], |d, a| a.put(&mut d.job.ramp, time(a.v))),
    // filesize comes before size, which wins.
    opt(&["size", "filesize"], amounts::job_size),
    opt(&["offset"], amounts::offset),
    opt(&["offset_increment"], amounts::offset_increment),
    opt(&["filename"], filename),
    opt(&["nrfiles"], |d, a| a.put(&mut d.job.nrfiles, nrfiles(a.v))),
    opt(&["file_service_type"], |d, a| {
        a.put(&mut d.job.file_service, file_service(a.v))
    }),
    // Checked against nrfiles in `fixup`: iogauge keeps every file open.
    opt(&["openfiles"], |_, a| a.check(count(a.v))),
    opt(&["directory"], directory),
    // fdatasync comes before fsync.
    opt(&["fsync", "fdatasync"], syncs),
    opt(&["rate_iops"], rate_iops),
    opt(&["rate"], rate),
    opt(&["verify"], |d, a| {
        a.put(&mut d.job.verify, Ok(!matches!(a.v, "0" | "null")))
    }),
    opt(&["overwrite"], |d, a| {
        a.put(&mut d.job.overwrite, flag(a.v))
    }),
    opt(&["ss"], steady_state),
    opt(&["ss_dur", "ss_ramp", "ss_interval"], steady_state_times),
    opt(&["do_verify"], |d, a| a.put(&mut d.job.readback, flag(a.v))),
    // Turns verify on when verify= is not set (fio's pattern_hdr): in `fixup`.
    opt(&["verify_pattern"], |_, a| a.check(pattern(a.v))),
    opt(&["verify_interval"], |_, a| {
        a.check(a.size().and_then(|n| match n >= 96 {
            true => Ok(n),
            false => Err("fio's smallest interval holds two headers: give 96 or more".into()),
        }))
    }),
    opt(&["fill_device"], |d, a| {
        a.put(&mut d.job.fill_device, flag(a.v))
    }),
    // iogauge's verify already accepts either order for writes of one block in flight
    // together (fio's reason to turn the sequence check off): noted in `measures`.
    opt(&["verify_write_sequence"], |_, a| a.check(flag(a.v))),
    opt(&["atomic"], |d, a| a.put(&mut d.job.atomic, flag(a.v))),
    opt(&["verify_fatal"], |d, a| {
        a.put(&mut d.job.verify_fatal, flag(a.v))
    }),
    // Read together in `errors`.
    opt(
        &["continue_on_error", "ignore_error", "error_dump"],
        |_, a| a.check(super::errors::check(a.key, a.v)),
    ),
    opt(&["latency_target"], latency_target),
    opt(
        &["latency_percentile", "latency_window"],
        latency_target_companions,
    ),
    // Read in `fixup` (it needs random_distribution=sequence).
    opt(&["random_sequence_stride"], |_, a| a.check(flag(a.v))),
    opt(&["random_distribution"], |d, a| {
        a.put(&mut d.job.distribution, distribution(a.v))
    }),
    opt(&["randrepeat"], randrepeat),
    // Read in `fixup`, once randrepeat is known.
    opt(&["randseed"], |_, _| Ok(())),
    opt(&["group_reporting"], |d, a| {
        a.put(&mut d.job.group_reporting, flag(a.v))
    }),
    opt(&["stonewall", "wait_for_previous"], |d, a| {
        a.put(&mut d.job.stonewall, flag(a.v))
    }),
    // A new reporting group: fio still runs the job with the ones before it, and iogauge
    // reports every job apart and each set that ran together as their sum.
    opt(&["new_group"], |d, a| {
        a.put(&mut d.job.new_group, flag(a.v))
    }),
    opt(&["sync"], sync),
    opt(&["iodepth_batch_submit"], submit_batch),
    opt(&["iodepth_batch_complete_min"], complete_batch),
    opt(&["iodepth_batch_complete_max"], complete_max),
    // iogauge draws offsets with replacement: that is what norandommap asks for.
    opt(&["norandommap"], |_, a| a.check(flag(a.v))),
    // end_fsync is told in a note for jobs that write (fio::measures).
    opt(&["unlink", "end_fsync"], |_, a| a.check(flag(a.v))),
    // Where the threads run and take memory from: read together in `place`.
    opt(
        &[
            "cpus_allowed",
            "cpumask",
            "cpus_allowed_policy",
            "numa_cpu_nodes",
            "numa_mem_policy",
        ],
        |_, _| Ok(()),
    ),
    // What the writes carry: read together in `content`.
    opt(
        &[
            "zero_buffers",
            "buffer_compress_percentage",
            "buffer_compress_chunk",
            "dedupe_percentage",
            "dedupe_mode",
            "dedupe_working_set_percentage",
            "dedupe_global",
        ],
        |_, _| Ok(()),
    ),
    opt(&["loops"], |d, a| a.put(&mut d.job.loops, count(a.v))),
    opt(&["io_size"], amounts::io_size),
    // The next three are noted (`unmapped::NOTED`); their values are checked here.
    opt(&["random_generator"], random_generator),
    opt(&["startdelay"], startdelay),
    opt(&["exitall"], |d, a| a.put(&mut d.job.exitall, flag(a.v))),
    // Noted (`unmapped::NOTED`); the value checked here.
    opt(&["io_submit_mode"], |_, a| match a.v {
        "inline" | "offload" => Ok(()),
        _ => Err(a.bad("fio's io_submit_mode is inline or offload")),
    }),
    opt(&["rate_process"], |d, a| {
        let poisson = match a.v {
            "linear" => Ok(false),
            "poisson" => Ok(true),
            _ => Err("fio's rate_process is linear or poisson".to_string()),
        };
        a.put(&mut d.job.rate_poisson, poisson)
    }),
    opt(&["exit_what"], exit_what),
    opt(&["rate_min"], |_, a| {
        a.check(size(a.v.split(',').next().unwrap_or(""), a.kb_base))
    }),
    // A job named before this one has ended when this one starts: iogauge runs a file's jobs
    // in order (checked in `jobs_of`).
    opt(&["wait_for"], |_, _| Ok(())),
    opt(&["blockalign"], blockalign),
    // Read together in `fixup` (each goes with the others); their values are checked here.
    opt(&["zonemode"], |_, a| match a.v {
        "none" | "strided" | "zbd" => Ok(()),
        _ => Err(a.bad("fio's zonemode is none, strided or zbd")),
    }),
    opt(&["zonesize", "zonerange", "zoneskip"], |_, a| {
        if a.v.ends_with(['z', 'Z']) {
            return Err(a.bad("give the zone in bytes, e.g. 256m"));
        }
        a.size().map(drop)
    }),
    opt(&["max_open_zones"], |_, a| {
        a.check(
            a.v.parse::<u32>()
                .map_err(|_| "give a count of zones".to_string()),
        )
    }),
    opt(&["zone_reset_threshold", "zone_reset_frequency"], |_, a| {
        a.check(match a.v.parse::<f64>() {
            Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
            _ => Err("give a fraction from 0 to 1".to_string()),
        })
    }),
    opt(&["read_beyond_wp", "sprandom"], |_, a| a.check(flag(a.v))),
    // Read together in `spr` (each goes with sprandom=1); checked there.
    opt(&["spr_op", "spr_num_regions", "spr_cs"], |_, _| Ok(())),
    opt(&["prioclass", "cmdprio_class"], |_, a| {
        a.check(prio_per_direction(a.v, 3))
    }),
    opt(&["prio", "cmdprio"], |_, a| {
        a.check(prio_per_direction(a.v, 7))
    }),
    opt(&["priohint", "cmdprio_hint"], |_, a| {
        a.check(prio_per_direction(a.v, 1023))
    }),
    opt(&["cmdprio_percentage"], |_, a| {
        a.check(prio_per_direction(a.v, 100))
    }),
    opt(&["cmdprio_bssplit"], |_, _| Ok(())),
    // Read together in `fixup` (each needs thinktime); their values are checked here.
    opt(&["thinktime", "thinktime_spin"], |_, a| {
        a.check(time_us(a.v))
    }),
    opt(&["thinktime_iotime"], |_, a| a.check(time(a.v))),
    opt(&["thinktime_blocks"], |_, a| a.check(count(a.v))),
    opt(&["thinktime_blocks_type"], |_, a| match a.v {
        "complete" | "issue" => Ok(()),
        _ => Err(a.bad("fio's thinktime_blocks_type is complete or issue")),
    }),
    // Read together in `fixup` (flow_id and flow_sleep need a flow).
    opt(&["flow"], |_, a| a.check(flow_weight(a.v))),
    opt(&["flow_id", "flow_sleep"], |_, a| {
        a.check(
            a.v.parse::<u32>()
                .map_err(|_| "give a whole number".to_string()),
        )
    }),
    // Applied in `fixup`, once the sizes are known.
    opt(&["number_ios"], |d, a| {
        a.put(&mut d.number_ios, count(a.v).map(|n| Some(n.into())))
    }),
];

fn rw(d: &mut Draft, a: &Arg) -> Result<(), String> {
    // fio's `:N` suffix is read once the pattern is known (`fixup`).
    let (pattern, _) = a.v.split_once(':').unwrap_or((a.v, ""));
    d.job.rw = match pattern {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::Randread,
        "randwrite" => Rw::Randwrite,
        "rw" | "readwrite" => Rw::Rw,
        "randrw" => Rw::Randrw,
        // Taken with zonemode=zbd only (zone resets in memory): refused without it in `zbd`.
        "trim" => Rw::Trim,
        "randtrim" => Rw::Randtrim,
        "trimwrite" | "randtrimwrite" => {
            return Err(a.bad("iogauge does not issue trims to a device"))
        }
        _ => return Err(a.bad("fio's patterns are read, write, randread, randwrite, rw, randrw")),
    };
    Ok(())
}

fn rw_sequencer(_: &mut Draft, a: &Arg) -> Result<(), String> {
    match a.v {
        "sequential" => Ok(()),
        _ => Err(a.bad(
            "only rw_sequencer=sequential (fio's default) is mapped; iogauge does not reissue one offset",
        )),
    }
}

/// rwmixread comes before rwmixwrite, which must agree with it.
fn rwmix(d: &mut Draft, a: &Arg) -> Result<(), String> {
    let p = match a.v.parse::<u8>() {
        Ok(p) if p <= 100 => p,
        _ => return Err(a.bad("give a percentage from 0 to 100")),
    };
    let read = if a.key == "rwmixread" { p } else { 100 - p };
    if d.mix.is_some_and(|m| m != read) {
        return Err(a.bad("rwmixread and rwmixwrite disagree; give one"));
    }
    d.mix = Some(read);
    Ok(())
}

/// Sizes per direction (read, write; fio's third, trim, is not issued).
fn block_sizes(d: &mut Draft, a: &Arg) -> Result<(), String> {
    let dirs = per_direction(a.v, &|p| match a.key {
        "bs" => Ok(vec![BsWeight {
            bs: size(p, a.kb_base)?,
            weight: 1,
        }]),
        "bsrange" => bs_range(p, a.kb_base),
        _ => bs_split(p, a.kb_base),
    })
    .map_err(|e| a.bad(e))?;
    d.job.mix = Some(BsMix {
        read: dirs[0].clone(),
        write: dirs[1].clone(),
        align: None,
    });
    Ok(())
}

fn ioengine(d: &mut Draft, a: &Arg) -> Result<(), String> {
    d.job.engine = match a.v {
        "io_uring" => Engine::IoUring,
        "libaio" => Engine::Libaio,
        "psync" | "sync" | "pvsync" => Engine::Sync,
        "null" => Engine::Null,
        _ => {
            return Err(a.bad(
                "iogauge runs io_uring (for io_uring and libaio), psync (for psync, sync, pvsync) and null",
            ))
        }
    };
    d.job.engine_name = a.v.to_string();
    Ok(())
}

fn syncs(d: &mut Draft, a: &Arg) -> Result<(), String> {
    let n =
        a.v.parse::<u32>()
            .map_err(|_| a.bad("give a count of writes between syncs"))?;
    if n > 0 {
        let kind = if a.key == "fsync" {
            SyncKind::Fsync
        } else {
            SyncKind::Fdatasync
        };
        if d.job.sync.is_some() {
            return Err(a.bad("fsync and fdatasync together are not supported; give one"));
        }
        d.job.sync = Some((kind, n));
    }
    Ok(())
}

/// Bytes per second per clone for each direction; iogauge paces IOs, so they become IOs per
/// second at the job's sizes (`fixup`, once the sizes and the pattern are known).
fn rate(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if a.set.contains_key("rate_iops") {
        return Err(a.bad("rate and rate_iops both pace the job; give one"));
    }
    let per_dir = dir_rates(a.v, &|p| Ok(size(p, a.kb_base)? as f64)).map_err(|e| a.bad(e))?;
    d.rate = Some(DirRates {
        per_dir,
        bytes: true,
    });
    Ok(())
}

/// fio stops a job once its IOPS or bandwidth hold within a limit over ss_dur; iogauge's rule
/// for the same question is --until-stable's (said in a note).
fn steady_state(d: &mut Draft, a: &Arg) -> Result<(), String> {
    let metric = a.v.split(':').next().unwrap_or("");
    match metric {
        "iops" | "iops_slope" | "bw" | "bw_slope" => {}
        // At a fixed depth the mean latency is the depth over the rate (Little's law): a steady
        // rate is a steady mean latency, and iogauge judges the rate. A paced job is refused
        // (`fixup`): its rate is fixed while its latency is free.
        "lat" | "lat_slope" => d.job.steady_latency = true,
        _ => {
            return Err(a.bad(
                "fio's steady-state metrics are iops, iops_slope, bw, bw_slope, lat and lat_slope",
            ))
        }
    }
    d.job.steady = true;
    Ok(())
}

fn latency_target(d: &mut Draft, a: &Arg) -> Result<(), String> {
    // fio's default unit here is microseconds.
    let limit = match a.v.parse::<u64>() {
        Ok(us) => Duration::from_micros(us),
        Err(_) => a.time()?,
    };
    let pct = match a.set.get("latency_percentile") {
        Some((p, _)) => p
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| a.bad("latency_percentile is not a percentage"))?,
        None => 100.0,
    };
    d.job.latency_target = Some(LatencyTarget {
        percentile: pct,
        limit,
    });
    Ok(())
}

/// iogauge reaps every completion there is at each wake-up: fio's behaviour when this is at
/// least the queue (as the published jobs set it). Keys come in sorted order, so iodepth is
/// already read here.
fn complete_max(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if !a
        .v
        .parse::<u32>()
        .is_ok_and(|n| n == 0 || n >= d.job.iodepth.max(1))
    {
        return Err(a.bad(format!(
            "iogauge reaps every completion there is; a cap below iodepth ({}) is not supported",
            d.job.iodepth
        )));
    }
    Ok(())
}

/// Checked against the sizes in `fixup`.
fn blockalign(d: &mut Draft, a: &Arg) -> Result<(), String> {
    let dirs: Vec<&str> = a.v.split(',').filter(|p| !p.is_empty()).collect();
    let mut sizes = dirs.iter().map(|p| size(p, a.kb_base));
    let first = sizes.next().unwrap_or(Ok(0)).map_err(|e| a.bad(e))?;
    for s in sizes {
        if s.map_err(|e| a.bad(e))? != first {
            return Err(
                a.bad("an alignment per direction is not supported; give one size for both")
            );
        }
    }
    if first == 0 || first % 512 != 0 {
        return Err(a.bad("give a multiple of 512 bytes, e.g. blockalign=4k"));
    }
    d.blockalign = Some(first);
    Ok(())
}

/// Joined with directory in `fixup`.
fn filename(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if a.v.contains(':') {
        return Err(a.bad(
            "several files joined by ':' are not supported (iogauge writes only files it creates, and names them); give directory= and nrfiles= instead",
        ));
    }
    d.filename = Some(a.v.to_string());
    Ok(())
}

fn directory(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if a.v.contains(':') {
        return Err(a.bad("several directories are not supported"));
    }
    d.directory = Some(a.v.to_string());
    Ok(())
}

fn rate_iops(d: &mut Draft, a: &Arg) -> Result<(), String> {
    let per_dir = dir_rates(a.v, &|p| match p.parse::<f64>() {
        Ok(r) if r >= 0.0 && r.is_finite() => Ok(r),
        _ => Err("give IOs per second, e.g. rate_iops=5000".to_string()),
    })
    .map_err(|e| a.bad(e))?;
    d.rate = Some(DirRates {
        per_dir,
        bytes: false,
    });
    Ok(())
}

fn steady_state_times(_: &mut Draft, a: &Arg) -> Result<(), String> {
    if !a.set.contains_key("ss") {
        return Err(a.bad("goes with ss=, which is not set"));
    }
    a.check(time(a.v))
}

/// Read with latency_target; fio's window is how long each depth is tried, iogauge's search
/// sets its own steps.
fn latency_target_companions(_: &mut Draft, a: &Arg) -> Result<(), String> {
    if !a.set.contains_key("latency_target") {
        return Err(a.bad("goes with latency_target, which is not set"));
    }
    Ok(())
}

fn randrepeat(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if !flag(a.v).map_err(|e| a.bad(e))? {
        d.job.seed = None;
    }
    Ok(())
}

fn sync(d: &mut Draft, a: &Arg) -> Result<(), String> {
    match a.v {
        "0" | "none" => {}
        "dsync" => d.job.odsync = true,
        _ => {
            return Err(a.bad(
                "O_SYNC is not mapped; iogauge opens with O_DSYNC (sync=dsync), or syncs with fsync=1 or fdatasync=1",
            ))
        }
    }
    Ok(())
}

fn submit_batch(d: &mut Draft, a: &Arg) -> Result<(), String> {
    match a.v.parse::<u32>() {
        // 0 is fio's "as many as are queued", iogauge's default behaviour too.
        Ok(0) => {}
        Ok(n) if n <= 4096 => d.job.submit_batch = Some(n),
        _ => return Err(a.bad("give a count from 0 to 4096")),
    }
    Ok(())
}

fn complete_batch(d: &mut Draft, a: &Arg) -> Result<(), String> {
    match a.v.parse::<u32>() {
        // 0 is fio's "do not wait", which iogauge does not do; 1 its default.
        Ok(n) if (1..=4096).contains(&n) => d.job.complete_batch = Some(n),
        _ => {
            return Err(a.bad(
                "give a count from 1 to 4096 (iogauge always waits for at least one completion)",
            ))
        }
    }
    Ok(())
}

fn random_generator(_: &mut Draft, a: &Arg) -> Result<(), String> {
    match a.v {
        "tausworthe" | "lfsr" | "tausworthe64" => Ok(()),
        _ => Err(a.bad("fio's generators are tausworthe, lfsr and tausworthe64")),
    }
}

/// A range (`1s-5s`) draws a delay in it; either end is a time.
fn startdelay(d: &mut Draft, a: &Arg) -> Result<(), String> {
    let (lo, hi) = a.v.split_once('-').unwrap_or((a.v, a.v));
    let range = time(lo).and_then(|lo| Ok((lo, time(hi)?)));
    a.put(&mut d.job.startdelay, range)
}

/// fio's `exit_what`: `group` (its default) ends the jobs of the ended one's reporting group,
/// `stonewall` every job running beside it (in iogauge, one cell), `all` every later job too.
fn exit_what(d: &mut Draft, a: &Arg) -> Result<(), String> {
    use crate::workload::Ends;
    let ends = match a.v {
        "group" => Ok(Ends::Group),
        "stonewall" => Ok(Ends::Cell),
        "all" => Ok(Ends::Later),
        _ => Err("fio's exit_what is group, stonewall or all".to_string()),
    };
    a.put(&mut d.job.exit_what, ends)
}

/// fio's verify_pattern: pieces of hex (`0xaa55`, bytes as written), decimal numbers, quoted
/// strings and `%o` (the block's offset), one after another.
fn pattern(v: &str) -> Result<(), String> {
    // Hex runs until the next `0x` too: `0xff0x14` is two values, as fio reads it.
    let digits = |s: &str, hex: bool| {
        let b = s.as_bytes();
        (0..b.len())
            .find(|&i| {
                let c = b[i] as char;
                !(c.is_ascii_digit() || hex && c.is_ascii_hexdigit())
                    || hex && i > 0 && c == '0' && matches!(b.get(i + 1), Some(b'x' | b'X'))
            })
            .unwrap_or(b.len())
    };
    let mut rest = v.trim();
    let mut pieces = 0;
    while !rest.is_empty() {
        let taken = if let Some(h) = rest.strip_prefix("0x").or(rest.strip_prefix("0X")) {
            Some(digits(h, true)).filter(|&n| n > 0).map(|n| n + 2)
        } else if let Some(q) = rest.strip_prefix('"') {
            q.find('"').map(|n| n + 2)
        } else if rest.starts_with("%o") {
            Some(2)
        } else {
            let n = rest.strip_prefix('-').unwrap_or(rest);
            let sign = rest.len() - n.len();
            Some(digits(n, false)).filter(|&d| d > 0).map(|d| d + sign)
        };
        let Some(taken) = taken else { break };
        rest = rest[taken..].trim_start();
        pieces += 1;
    }
    match (pieces, rest) {
        (1.., "") => Ok(()),
        _ => Err(format!(
            "give hex bytes (0xaa555aa5), a number, a quoted string or %o, one after another; {v:?} is not read from {rest:?} on"
        )),
    }
}
