//! The rules between a job's options, once all are read (fio's init.c fixup_options): what one
//! option means given others (rw's `:N` suffix, rate= at the mean block size, number_ios in
//! bytes, filesize over nrfiles), and the combinations iogauge refuses. They run in one order,
//! so a job with several of these problems is told the same one first every time.

use super::options::{Draft, Set};
use super::values::{count, flag, size};
use super::Job;
use crate::workload::Distribution;
use std::path::PathBuf;

/// The job `d` with every rule between its options applied, or the first rule it breaks.
pub(super) fn fixup(d: Draft, set: Set, kb_base: u64) -> Result<Job, String> {
    let Draft {
        mut job,
        mix,
        filename,
        directory,
        buffered,
        rate_bytes,
        number_ios,
        blockalign,
    } = d;
    let j = &mut job;
    verify_seed_direct(j, &set, buffered)?;
    rw_suffix(j, &set, kb_base)?;
    block_sizes(j, &set, mix, blockalign)?;
    amounts(j, &set, number_ios, rate_bytes)?;
    if j.steady_latency && j.rate_iops.is_some() {
        let (v, l) = &set["ss"];
        return Err(format!(
            "{l}: ss={v} with a rate: a paced job's rate is fixed while its latency is free, and iogauge's steady rule judges the rate; give ss=iops, or leave the rate out"
        ));
    }
    pattern_rules(j, &set)?;
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

/// do_verify=0 over verify=, randseed when randrepeat keeps a sequence, buffered against
/// direct.
fn verify_seed_direct(j: &mut Job, set: &Set, buffered: Option<bool>) -> Result<(), String> {
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
fn amounts(
    j: &mut Job,
    set: &Set,
    number_ios: Option<u64>,
    rate_bytes: Option<u64>,
) -> Result<(), String> {
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
    // rate=0 is fio's "no limit". A mix paces its mean size, as fio's rate counts bytes; a
    // rate below one IO a second spaces the IOs seconds apart, as fio does
    // (`1mbs_clients.fio`: 1,250 B/s of 4 KiB reads, one every 3.3 s).
    if let Some(bytes) = rate_bytes.filter(|b| *b > 0) {
        let mean = j.mix.as_ref().map_or(j.bs as f64, |m| m.mean(j.read_pct));
        j.rate_iops = Some(bytes as f64 / mean);
    }
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
