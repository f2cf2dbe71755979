//! fio's sprandom (`sprandom`, `spr_op`, `spr_num_regions`, `spr_cs`): its rules, as fio's
//! init.c and filesetup.c check them, and iogauge's own (one clone, one pass); the sequence
//! itself is `workload::sprandom`'s.

use super::draft::Set;
use super::values::flag;
use super::Job;
use crate::workload::{Rw, Spr};

/// Reads sprandom's options into the job, or refuses what fio or iogauge cannot run.
pub(super) fn apply(j: &mut Job, set: &Set) -> Result<(), String> {
    let on = match set.get("sprandom") {
        Some((v, l)) => flag(v).map_err(|e| format!("{l}: sprandom={v}: {e}"))?,
        None => false,
    };
    let companions = ["spr_op", "spr_num_regions", "spr_cs"];
    if !on {
        if let Some(k) = companions.iter().find(|k| set.contains_key(**k)) {
            return Err(format!(
                "{}: {k} goes with sprandom=1, which is not set",
                set[*k].1
            ));
        }
        return Ok(());
    }
    let l = &set["sprandom"].1;
    if j.rw != Rw::Randwrite {
        return Err(format!(
            "{l}: sprandom with rw={}: fio's sprandom is random writes (rw=randwrite)",
            rw_typed(set)
        ));
    }
    if let Some((v, rl)) = set.get("random_generator").filter(|(v, _)| v != "lfsr") {
        return Err(format!("{rl}: random_generator={v} with sprandom: fio requires random_generator=lfsr (or nothing)"));
    }
    if let Some((_, nl)) = set.get("norandommap").filter(|(v, _)| v == "0") {
        return Err(format!(
            "{nl}: norandommap=0 with sprandom: fio requires norandommap=1 (or nothing)"
        ));
    }
    if j.nrfiles > 1 {
        return Err(format!(
            "{l}: sprandom with nrfiles={}: fio's sprandom supports one file",
            j.nrfiles
        ));
    }
    let refused = [
        (j.numjobs > 1, "numjobs", "each of fio's clones writes its own whole sequence over the file, where iogauge's threads would share one; give numjobs=1"),
        (j.loops > 1, "loops", "fio writes the sequence once; give loops=1"),
        (j.verify, "verify", "iogauge's verify is not mapped for sprandom's rewrites; leave verify out"),
        (j.mix.is_some() || j.seq_run > 1 || set.contains_key("offset_increment"), "bs", "sprandom is mapped for one block size and a plain pattern"),
        (set.get("spr_cs").is_some_and(|(v, _)| v.trim() != "0"), "spr_cs", "rewrites deferred past a cache are not mapped: iogauge rewrites at the start of each region, as fio does without spr_cs"),
    ];
    if let Some((_, k, why)) = refused.iter().find(|(bad, _, _)| *bad) {
        let (v, kl) = set.get(*k).map_or(("", l), |(v, kl)| (v.as_str(), kl));
        return Err(format!("{kl}: {k}={v} with sprandom: {why}"));
    }
    let op = match set.get("spr_op") {
        Some((v, ol)) => match v.parse::<f64>() {
            Ok(op) if op > 0.0 && op < 1.0 => op,
            _ => return Err(format!("{ol}: spr_op={v}: give the over-provisioning as a fraction between 0 and 1, e.g. 0.15")),
        },
        None => 0.15,
    };
    let regions = match set.get("spr_num_regions") {
        Some((v, rl)) => match v.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(format!(
                    "{rl}: spr_num_regions={v}: give a count of regions, at least 1"
                ))
            }
        },
        None => 100,
    };
    j.spr = Some(Spr { op, regions });
    Ok(())
}

fn rw_typed(set: &Set) -> &str {
    set.get("rw").map_or("read", |(v, _)| v.as_str())
}
