//! fio's continue_on_error with ignore_error (and error_dump): which IO errors a job counts
//! and goes on after, as fio's td_non_fatal_error decides it — continue_on_error picks the
//! directions, ignore_error each direction's errors (fio's default: EIO and EILSEQ).

use super::draft::Set;
use super::Job;
use crate::workload::errors::{errno_of, Errnos};
use crate::workload::Tolerate;

/// continue_on_error's directions: (reads, writes); `verify` goes on after a failed check,
/// which iogauge's verify always does.
fn directions(v: &str) -> Result<(bool, bool), String> {
    match v {
        "none" | "0" | "false" | "verify" => Ok((false, false)),
        "read" => Ok((true, false)),
        "write" => Ok((false, true)),
        "io" | "all" | "1" | "true" | "" => Ok((true, true)),
        _ => Err("give none, read, write, io, verify or all".into()),
    }
}

/// ignore_error's lists, `READS,WRITES,VERIFY`, each errors by name or number split by `:`.
fn lists(v: &str) -> Result<[Option<Errnos>; 3], String> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err("give at most three lists: reads,writes,verify (e.g. ,ENOSPC)".into());
    }
    let mut out = [None; 3];
    for (i, p) in parts
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.trim().is_empty())
    {
        let mut errnos = Vec::new();
        for name in p.split(':').map(str::trim) {
            let e = errno_of(name).ok_or_else(|| {
                format!("{name} is not an error iogauge knows: give a name such as ENOSPC or EIO, or its number")
            })?;
            errnos.push(e);
        }
        out[i] = Some(
            Errnos::of(&errnos)
                .ok_or_else(|| format!("give at most {} errors per list", Errnos::MAX))?,
        );
    }
    Ok(out)
}

/// Checks each option's value as it is read.
pub(super) fn check(key: &str, v: &str) -> Result<(), String> {
    match key {
        "continue_on_error" => directions(v).map(drop),
        "ignore_error" => lists(v).map(drop),
        // fio's default; error_dump=1 prints every error, where iogauge names the first.
        _ => match super::values::flag(v)? {
            false => Ok(()),
            true => Err("iogauge names the first error a job goes on after and counts the rest; leave error_dump out".into()),
        },
    }
}

/// The errors the job goes on after, or a refusal of what would do nothing or cannot be kept.
pub(super) fn apply(j: &mut Job, set: &Set) -> Result<(), String> {
    let (reads, writes) = match set.get("continue_on_error") {
        Some((v, _)) => directions(v)?,
        None => (false, false),
    };
    let lists = match set.get("ignore_error") {
        Some((v, _)) => lists(v)?,
        None => [None; 3],
    };
    if let Some((v, l)) = set.get("ignore_error") {
        let unused = [(0, reads, "read"), (1, writes, "write")]
            .into_iter()
            .find(|(i, on, _)| lists[*i].is_some() && !on);
        if let Some((_, _, dir)) = unused {
            return Err(format!(
                "{l}: ignore_error={v} lists {dir} errors, and continue_on_error does not go on after {dir} errors: add continue_on_error={dir} (or io), or leave the list out"
            ));
        }
        if lists[2].is_some() {
            return Err(format!(
                "{l}: ignore_error={v}: a verify list; iogauge's verify counts every failed check and never stops a job, so there is nothing to ignore: leave the third list out"
            ));
        }
    }
    if !(reads || writes) {
        return Ok(());
    }
    let pick = |on: bool, list: Option<Errnos>| match on {
        true => list.unwrap_or_else(Errnos::fios_default),
        false => Errnos::default(),
    };
    if j.verify && writes {
        return Err(format!(
            "{}: continue_on_error with verify: a write that failed leaves its block in a state no check can know; leave one of them out",
            set["continue_on_error"].1
        ));
    }
    j.tolerate = Some(Tolerate {
        read: pick(reads, lists[0]),
        write: pick(writes, lists[1]),
    });
    Ok(())
}
