//! The rules between a job's options, once all are read (fio's init.c fixup_options): what one
//! option means given others (rw's `:N` suffix, rate= at the mean block size, number_ios in
//! bytes, filesize over nrfiles), and the combinations iogauge refuses. They run in one order,
//! so a job with several of these problems is told the same one first every time.

use super::draft::{Draft, Set};
use super::values::{count, flag, flow_weight, size, time, time_us, DirRates};
use super::Job;
use crate::workload::Distribution;
use std::path::PathBuf;
use std::time::Duration;

/// The job `d` with every rule between its options applied, or the first rule it breaks.
pub(super) fn fixup(d: Draft, set: Set, kb_base: u64) -> Result<Job, String> {
    let Draft {
        mut job,
        mix,
        filename,
        directory,
        buffered,
        rate,
        number_ios,
        blockalign,
    } = d;
    let j = &mut job;
    verify_seed_direct(j, &set, buffered)?;
    rw_suffix(j, &set, kb_base)?;
    block_sizes(j, &set, mix, blockalign)?;
    amounts(j, &set, number_ios)?;
    pace(j, &set, rate)?;
    if j.steady_latency && j.rate_iops.is_some() {
        let (v, l) = &set["ss"];
        return Err(format!(
            "{l}: ss={v} with a rate: a paced job's rate is fixed while its latency is free, and iogauge's steady rule judges the rate; give ss=iops, or leave the rate out"
        ));
    }
    thinking(j, &set)?;
    flowing(j, &set)?;
    super::prio::apply(j, &set, kb_base)?;
    super::content::apply(j, &set, kb_base)?;
    super::place::apply(j, &set)?;
    strided(j, &set, kb_base)?;
    super::zbd::apply(j, &set, kb_base)?;
    super::spr::apply(j, &set)?;
    super::errors::apply(j, &set)?;
    sequence(j, &set)?;
    pattern_rules(j, &set)?;
    atomic(j, &set)?;
    files(j, &set)?;
    job.path = match (directory, filename) {
        (Some(d), Some(f)) => Some(PathBuf::from(d).join(f)),
        (Some(d), None) => Some(PathBuf::from(d)),
        (None, Some(f)) => Some(PathBuf::from(f)),
        (None, None) => None,
    };
    job.set = set;
    Ok(job)
}

/// verify_pattern's verify, randseed when randrepeat keeps a sequence, buffered against
/// direct.
fn verify_seed_direct(j: &mut Job, set: &Set, buffered: Option<bool>) -> Result<(), String> {
    // A pattern without verify= verifies (fio's pattern_hdr: a header, then the pattern).
    if set.contains_key("verify_pattern") && !set.contains_key("verify") {
        j.verify = true;
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
            return Err(format!(
                "{l}: buffered={} contradicts direct={}; give one",
                u8::from(b),
                u8::from(j.direct)
            ));
        }
        j.direct = !b;
    }
    Ok(())
}

/// `rw=randread:N`: a random offset every N IOs, sequential ones between; `rw=read:N`: N bytes
/// skipped after each IO (fio's options.c str_rw_cb and io_u.c get_next_offset).
fn rw_suffix(j: &mut Job, set: &Set, kb_base: u64) -> Result<(), String> {
    let Some((suffix, l)) = set
        .get("rw")
        .and_then(|(v, l)| v.split_once(':').map(|(_, n)| (n, l)))
    else {
        return Ok(());
    };
    let bad = |why: &str| format!("{l}: rw={}: {why}", set["rw"].0);
    if j.rw.random() {
        j.seq_run = suffix
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| bad("give the IOs per random offset, e.g. randread:8"))?;
    } else {
        // A negative skip walks backwards (fio's backwards-read.fio: `read:-8k` of 4 KiB).
        let (sign, bytes) = match suffix.strip_prefix('-') {
            Some(b) => (-1, b),
            None => (1, suffix),
        };
        let n = size(bytes, kb_base).map_err(|e| bad(&e))?;
        j.seq_skip = sign * i64::try_from(n).map_err(|_| bad("the skip is too large"))?;
    }
    Ok(())
}

/// The read share, the block sizes each direction issues, and blockalign against them.
fn block_sizes(
    j: &mut Job,
    set: &Set,
    mix: Option<u8>,
    blockalign: Option<u64>,
) -> Result<(), String> {
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
                return Err(format!(
                    "{l}: blockalign={v} with one block size ({}): iogauge aligns each IO to its size; leave blockalign out or give a mix",
                    j.bs
                ))
            }
        }
    }
    Ok(())
}

/// number_ios and rate=, which count in IOs what iogauge counts in bytes or the reverse, at
/// the job's block sizes.
fn amounts(j: &mut Job, set: &Set, number_ios: Option<u64>) -> Result<(), String> {
    // number_ios stops a clone after that many IOs, if nothing stopped it before (fio's
    // HOWTO): with one block size, that many blocks' bytes, the smaller of it and io_size.
    if let Some(n) = number_ios {
        let (v, l) = &set["number_ios"];
        if j.mix.is_some() {
            return Err(format!(
                "{l}: number_ios={v} with a block-size mix: iogauge stops a job by bytes moved, and a mix's IO count for a byte count is not fixed; give io_size= instead"
            ));
        }
        let bytes = n.saturating_mul(j.bs);
        j.io_size = Some(j.io_size.map_or(bytes, |b| b.min(bytes)));
    }
    Ok(())
}

/// rate= and rate_iops= as one schedule of IOs (fio's rate_ddir): a job that reads or writes
/// only is paced by its direction's rate; a mix with both directions paced issues each at its
/// own rate whatever rwmixread says (fio switches to the direction behind its schedule), so
/// iogauge paces the sum with that share of reads. A mix with one direction paced leaves the
/// other as fast as the device goes, which one schedule cannot do: refused. rate=0 is fio's
/// "no limit". Bytes become IOs at the direction's mean size; a rate below one IO a second
/// spaces the IOs seconds apart, as fio does (`1mbs_clients.fio`: 1,250 B/s of 4 KiB reads,
/// one every 3.3 s).
fn pace(j: &mut Job, set: &Set, rate: Option<DirRates>) -> Result<(), String> {
    let Some(DirRates { per_dir, bytes }) = rate else {
        return Ok(());
    };
    let key = if bytes { "rate" } else { "rate_iops" };
    let (v, l) = &set[key];
    let size = |pct: u8| j.mix.as_ref().map_or(j.bs as f64, |m| m.mean(pct));
    let ios = |r: Option<f64>, pct: u8| r.map(|r| if bytes { r / size(pct) } else { r });
    let (read, write) = (ios(per_dir[0], 100), ios(per_dir[1], 0));
    let reads = j.rw.read_pct(j.read_pct) > 0;
    let writes = j.rw.writes(j.read_pct);
    j.rate_iops = match (reads && writes, read, write) {
        (true, Some(r), Some(w)) => {
            j.read_pct = ((100.0 * r / (r + w)).round() as u8).clamp(1, 99);
            Some(r + w)
        }
        (true, None, None) => None,
        (true, ..) => {
            return Err(format!(
                "{l}: {key}={v} paces one direction of rw={} and leaves the other as fast as the device goes (fio issues the unpaced one whenever the paced one is ahead); iogauge paces a job on one schedule: give both directions a rate (e.g. {key}=R,W), or make two jobs",
                j.rw.name()
            ))
        }
        (false, ..) if !reads && !writes => None,
        (false, r, w) => {
            let (mine, other) = if reads { (r, "writes") } else { (w, "reads") };
            if mine.is_none() && (r.is_some() || w.is_some()) {
                return Err(format!(
                    "{l}: {key}={v} paces {other}, and rw={} does none: give the rate for its direction (read,write)",
                    j.rw.name()
                ));
            }
            mine
        }
    };
    Ok(())
}

/// thinktime with its companions (fio's handle_thinktime): a pause after every
/// thinktime_blocks IOs (1 unless set; none counted when only thinktime_iotime bounds the IO
/// between pauses), its spin at most the pause (fio's clamp). Values were checked as read.
/// thinktime_blocks_type (fio counts the IOs as issued or as completed) changes nothing here:
/// iogauge issues at most thinktime_blocks IOs and lets them all complete before the pause,
/// which is what fio documents for both ("no more than [that many] will be queued before we
/// have to complete it and do our thinktime").
fn thinking(j: &mut Job, set: &Set) -> Result<(), String> {
    let get = |k: &str| set.get(k).map(|(v, _)| v.as_str());
    let Some(pause) = get("thinktime").map(time_us).transpose()? else {
        let companion = [
            "thinktime_spin",
            "thinktime_blocks",
            "thinktime_blocks_type",
            "thinktime_iotime",
        ]
        .into_iter()
        .find(|k| set.contains_key(*k));
        return match companion {
            Some(k) => Err(format!(
                "{}: {k} goes with thinktime, which is not set: give thinktime=, or leave {k} out",
                set[k].1
            )),
            None => Ok(()),
        };
    };
    if pause.is_zero() {
        return Ok(());
    }
    if j.rate_iops.is_some() {
        let (v, l) = &set["thinktime"];
        return Err(format!(
            "{l}: thinktime={v} with a rate: iogauge paces a job either by a rate or by pauses between bursts of IO, not both; give one"
        ));
    }
    let iotime = get("thinktime_iotime").map(time).transpose()?;
    let blocks = match (get("thinktime_blocks").map(count).transpose()?, iotime) {
        (Some(n), _) => n.max(1),
        (None, Some(_)) => u32::MAX,
        (None, None) => 1,
    };
    let spin = get("thinktime_spin")
        .map(time_us)
        .transpose()?
        .unwrap_or_default();
    j.think = Some(crate::workload::Think {
        pause,
        spin: spin.min(pause),
        blocks,
        iotime: iotime.filter(|t| !t.is_zero()),
    });
    Ok(())
}

/// flow with flow_id (0 unless set) and flow_sleep (µs, 0 unless set); a weight of 0 is no
/// flow (fio's default), and its companions without a flow would do nothing.
fn flowing(j: &mut Job, set: &Set) -> Result<(), String> {
    let get = |k: &str| set.get(k).map(|(v, _)| v.parse::<u32>().unwrap_or(0));
    let weight = set
        .get("flow")
        .map(|(v, _)| flow_weight(v))
        .transpose()?
        .unwrap_or(0);
    if weight == 0 {
        return match ["flow_id", "flow_sleep"].into_iter().find(|k| set.contains_key(*k)) {
            Some(k) => Err(format!(
                "{}: {k} goes with flow=, a weight above 0, which is not set: give flow=, or leave {k} out",
                set[k].1
            )),
            None => Ok(()),
        };
    }
    j.flow = Some(crate::workload::Flow {
        id: get("flow_id").unwrap_or(0),
        weight,
        sleep: Duration::from_micros(get("flow_sleep").unwrap_or(0).into()),
    });
    Ok(())
}

/// zonemode=strided (or zonesize without a zonemode, fio's old spelling): zonesize bytes in a
/// zone of zonerange bytes (zonesize unless set), then the next zone zonerange + zoneskip on
/// (fio's init.c rules). In whole blocks, on the plain path of one block size and one file.
fn strided(j: &mut Job, set: &Set, kb_base: u64) -> Result<(), String> {
    let get = |k: &str| set.get(k).map(|(v, _)| size(v, kb_base)).transpose();
    let mode = set.get("zonemode").map(|(v, l)| (v.as_str(), l));
    if let Some(("zbd", _)) = mode {
        return Ok(());
    }
    let Some(zsize) = get("zonesize")?.filter(|s| *s > 0) else {
        if let Some(("strided", l)) = mode {
            return Err(format!(
                "{l}: zonemode=strided needs zonesize=, the bytes to move in each zone"
            ));
        }
        if let Some(k) = ["zonerange", "zoneskip"]
            .into_iter()
            .find(|k| set.contains_key(*k))
        {
            return Err(format!(
                "{}: {k} goes with zonemode=strided and zonesize=, which are not set",
                set[k].1
            ));
        }
        return Ok(());
    };
    let (v, l) = &set["zonesize"];
    if let Some(("none", ml)) = mode {
        return Err(format!("{ml}: zonemode=none and zonesize={v} together: fio refuses them; give zonemode=strided, or leave zonesize out"));
    }
    let z = crate::workload::Strided {
        range: get("zonerange")?.filter(|r| *r > 0).unwrap_or(zsize),
        size: zsize,
        skip: get("zoneskip")?.unwrap_or(0),
    };
    let shaped = ["bssplit", "bsrange", "offset_increment"]
        .into_iter()
        .find(|k| set.contains_key(*k));
    if let Some(k) = shaped
        .or(j.mix.as_ref().map(|_| "bs"))
        .or((j.seq_run > 1 || j.seq_skip != 0).then_some("rw"))
    {
        return Err(format!(
            "{l}: zonesize={v} with {k}={}: strided zones are mapped for one block size and a plain pattern; give one bs and no :N suffix",
            set.get(k).map_or("", |(v, _)| v.as_str())
        ));
    }
    if j.nrfiles > 1 {
        return Err(format!("{l}: zonesize={v} with nrfiles={}: fio walks strided zones in one file only (and drops them with more); leave one of them out", j.nrfiles));
    }
    for (k, b) in [
        ("zonesize", z.size),
        ("zonerange", z.range),
        ("zoneskip", z.skip),
    ] {
        if b % j.bs != 0 {
            return Err(format!(
                "{}: {k}={}: give a whole number of blocks of bs={}",
                set.get(k).map_or(l, |(_, l)| l),
                set.get(k).map_or("", |(v, _)| v.as_str()),
                set.get("bs").map_or("", |(v, _)| v.as_str())
            ));
        }
    }
    j.zones = Some(z);
    Ok(())
}

/// Options that need a pattern that writes, a random one, or a region per clone.
fn pattern_rules(j: &Job, set: &Set) -> Result<(), String> {
    if j.sync.is_some() && !j.rw.writes(j.read_pct) {
        let key = if set.contains_key("fsync") {
            "fsync"
        } else {
            "fdatasync"
        };
        return Err(format!(
            "{}: {key} follows writes, and rw={} does none: use a writing pattern or remove it",
            set[key].1,
            j.rw.name()
        ));
    }
    if j.distribution != Distribution::Uniform && !j.rw.random() {
        return Err(format!(
            "{}: random_distribution shapes random offsets, and rw={} is sequential",
            set["random_distribution"].1,
            j.rw.name()
        ));
    }
    // offset_increment places each clone's region of `size` bytes; without a size fio's
    // regions would run to the file's end and overlap.
    if let Some(l) = set.get("offset_increment").map(|(_, l)| l) {
        if j.offset_increment.is_some() && j.size.is_none() && j.size_pct.is_none() {
            return Err(format!(
                "{l}: offset_increment needs size= (each clone's region), e.g. size=1g"
            ));
        }
    }
    Ok(())
}

/// random_distribution=sequence with random_sequence_stride; the sequence on the plain path
/// (one block size, no `:N`, no region per clone, no zones).
fn sequence(j: &mut Job, set: &Set) -> Result<(), String> {
    let stride = set.get("random_sequence_stride");
    let Distribution::Sequence(s) = &mut j.distribution else {
        return match stride {
            Some((_, l)) => Err(format!(
                "{l}: random_sequence_stride goes with random_distribution=sequence:…, which is not set: give it, or leave random_sequence_stride out"
            )),
            None => Ok(()),
        };
    };
    s.stride = stride.is_some_and(|(v, _)| flag(v) == Ok(true));
    let shaped = [
        (j.mix.is_some(), "a block-size mix"),
        (j.seq_run > 1, "rw=…:N"),
        (
            j.offset_increment.is_some() && j.numjobs > 1,
            "offset_increment",
        ),
        (j.zones.is_some(), "zones"),
    ];
    match shaped.into_iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(format!(
            "{}: random_distribution=sequence with {what} is not mapped: iogauge walks a sequence for one block size over the whole range",
            set["random_distribution"].1
        )),
        None => Ok(()),
    }
}

/// A job over several files: iogauge names and opens them all itself, verifies one file only,
/// and reads filesize as each file's size (size the job's total).
fn files(j: &mut Job, set: &Set) -> Result<(), String> {
    if j.nrfiles <= 1 {
        return Ok(());
    }
    let (n, l) = &set["nrfiles"];
    if let Some((f, _)) = set.get("filename") {
        return Err(format!(
            "{l}: nrfiles={n} with filename={f}: iogauge creates and names the job's {n} files itself; give directory= for them instead of filename="
        ));
    }
    if let Some((o, ol)) = set.get("openfiles") {
        if count(o).is_ok_and(|o| o < j.nrfiles) {
            return Err(format!(
                "{ol}: openfiles={o} is below nrfiles={n}: iogauge keeps all of a job's files open; remove openfiles or set it to {n}"
            ));
        }
    }
    if j.verify {
        return Err(format!(
            "{}: verify with nrfiles={n} is not supported: iogauge's verify tracks the blocks of one file; give nrfiles=1 for a verifying job",
            set["verify"].1
        ));
    }
    if let (Some((fs, fl)), false) = (set.get("filesize"), set.contains_key("size")) {
        let each = j.size.filter(|_| j.size_pct.is_none()).ok_or_else(|| {
            format!("{fl}: filesize={fs} with nrfiles: give each file's size, e.g. filesize=256m")
        })?;
        j.size = Some(each.saturating_mul(u64::from(j.nrfiles)));
    }
    Ok(())
}

/// atomic=1 as the kernel takes RWF_ATOMIC (Documentation/filesystems and fio's HOWTO): a
/// direct write of one power-of-two size, at an offset that is a multiple of it. What the
/// target's own atomic sizes allow is asked of it once it is looked at (the plan). And
/// verify_write_sequence, which means something only with verify.
fn atomic(j: &Job, set: &Set) -> Result<(), String> {
    if let (Some((v, l)), false) = (set.get("verify_write_sequence"), j.verify) {
        return Err(format!(
            "{l}: verify_write_sequence={v} without verify: it changes how verify checks, and this job does not verify; leave it out or give verify="
        ));
    }
    if !j.atomic {
        return Ok(());
    }
    let (_, l) = &set["atomic"];
    let bs = crate::units::bs_label(j.bs);
    let refusal = if !j.rw.writes(j.read_pct) {
        Some("the job only reads, and only writes are atomic; leave atomic out".to_string())
    } else if j.engine == super::Engine::Null {
        Some("ioengine=null writes nothing; leave atomic out".to_string())
    } else if !j.direct {
        Some(
            "the kernel takes atomic writes (RWF_ATOMIC) only with direct IO; give direct=1"
                .to_string(),
        )
    } else if j.mix.is_some() {
        Some(
            "an atomic write has one size, and this job mixes block sizes; give one bs".to_string(),
        )
    } else if !j.bs.is_power_of_two() {
        Some(format!(
            "an atomic write's size is a power of two, and bs is {bs}; give 4k, 8k, 16k …"
        ))
    } else if let Some((what, n)) = [
        ("offset", j.offset),
        ("offset_increment", j.offset_increment.unwrap_or(0)),
        ("the skip of rw=", j.seq_skip.unsigned_abs()),
    ]
    .into_iter()
    .find(|(_, n)| !n.is_multiple_of(j.bs))
    {
        Some(format!(
            "an atomic write starts at a multiple of its size, and {what} ({n} bytes) is not a multiple of bs={bs}; give one that is"
        ))
    } else {
        None
    };
    match refusal {
        Some(why) => Err(format!("{l}: atomic=1: {why}")),
        None => Ok(()),
    }
}
