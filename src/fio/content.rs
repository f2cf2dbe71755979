//! What a job's writes carry, once its options are all read: compressible chunks
//! (`buffer_compress_percentage`, `buffer_compress_chunk`, `zero_buffers`) and writes that
//! repeat earlier ones (`dedupe_percentage` with `dedupe_mode`, `dedupe_working_set_percentage`
//! and `dedupe_global`), as fio's fill_io_buffer makes them. Storage that compresses or
//! deduplicates (zram, btrfs and ZFS with compression, VDO, many SSDs and arrays) stores less
//! of such data than of iogauge's unique, incompressible bytes, which is what these ask to see.

use super::draft::Set;
use super::values::{flag, size};
use super::Job;
use crate::workload::{Content, Repeats};

/// fio's default working set: 5% of the job's range.
const WORKING_SET_PCT: u8 = 5;

/// The job's content into `j.content`, or the first rule its options break.
pub(super) fn apply(j: &mut Job, set: &Set, kb_base: u64) -> Result<(), String> {
    let pct = |k: &str| {
        set.get(k)
            .map(|(v, l)| match v.trim_end_matches('%').parse::<u8>() {
                Ok(n) if n <= 100 => Ok(n),
                _ => Err(format!("{l}: {k}={v}: give a share from 0 to 100")),
            })
            .transpose()
    };
    let mut c = Content {
        compress: pct("buffer_compress_percentage")?.unwrap_or(0),
        dedupe: pct("dedupe_percentage")?.unwrap_or(0),
        ..Content::default()
    };
    if let Some((v, l)) = set.get("zero_buffers") {
        if flag(v).map_err(|e| format!("{l}: zero_buffers={v}: {e}"))? {
            if c.compress > 0 {
                return Err(format!(
                    "{l}: zero_buffers with buffer_compress_percentage: fio fills by the percentage and ignores zero_buffers; give one"
                ));
            }
            // All zeros: every chunk compresses whole.
            c.compress = 100;
        }
    }
    if let Some((v, l)) = set.get("buffer_compress_chunk") {
        if c.compress == 0 {
            return Err(format!("{l}: buffer_compress_chunk sizes the chunks of buffer_compress_percentage, which is not set: give it, or leave buffer_compress_chunk out"));
        }
        let b = size(v, kb_base).map_err(|e| format!("{l}: buffer_compress_chunk={v}: {e}"))?;
        c.chunk = u32::try_from(b)
            .ok()
            .filter(|b| *b > 0)
            .ok_or_else(|| format!("{l}: buffer_compress_chunk={v}: give 1 byte to 4g"))?;
    }
    let working_set = match set.get("dedupe_mode") {
        None => false,
        Some((v, _)) if v == "repeat" => false,
        Some((v, _)) if v == "working_set" => true,
        Some((v, l)) => {
            return Err(format!(
                "{l}: dedupe_mode={v}: fio's dedupe_mode is repeat or working_set"
            ))
        }
    };
    let tied = [
        "dedupe_mode",
        "dedupe_working_set_percentage",
        "dedupe_global",
    ];
    if c.dedupe == 0 {
        if let Some(k) = tied.into_iter().find(|k| set.contains_key(*k)) {
            return Err(format!(
                "{}: {k} shapes the writes of dedupe_percentage, which is not set: give it, or leave {k} out",
                set[k].1
            ));
        }
    }
    if !working_set {
        if let Some(k) = tied[1..].iter().find(|k| set.contains_key(**k)) {
            return Err(format!(
                "{}: {k} goes with dedupe_mode=working_set (fio's default is repeat): give it, or leave {k} out",
                set[*k].1
            ));
        }
    }
    if working_set {
        c.repeats = Repeats::WorkingSet {
            pct: pct("dedupe_working_set_percentage")?.unwrap_or(WORKING_SET_PCT),
            global: set
                .get("dedupe_global")
                .map(|(v, l)| flag(v).map_err(|e| format!("{l}: dedupe_global={v}: {e}")))
                .transpose()?
                .unwrap_or(false),
        };
    }
    if c.is_plain() {
        return Ok(());
    }
    let named = |c: &Content| {
        let k = if c.dedupe > 0 {
            "dedupe_percentage"
        } else if set.contains_key("buffer_compress_percentage") {
            "buffer_compress_percentage"
        } else {
            "zero_buffers"
        };
        (k, &set[k].1)
    };
    let (k, l) = named(&c);
    if !j.rw.writes(j.read_pct) {
        return Err(format!(
            "{l}: {k} shapes what writes carry, and rw={} writes nothing: leave it out",
            j.rw.name()
        ));
    }
    if j.verify {
        return Err(format!(
            "{l}: {k} with verify: iogauge's verify stamps every sector with its place, which a compressible or repeated write cannot carry; leave one of them out"
        ));
    }
    j.content = c;
    Ok(())
}
