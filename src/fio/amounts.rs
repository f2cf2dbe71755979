//! The options that say how much a job moves and where in the file: `size`, `offset`,
//! `offset_increment`, `io_size`, each in bytes, as a share of the file, or in zones.

use super::draft::{Arg, Draft};
use super::values::size;

/// A size or offset given in zones (`8z`): that many of zonemode=zbd's zonesize (fio
/// counts in zones in that mode only); `None` for a value in bytes.
fn in_zones(a: &Arg) -> Result<Option<u64>, String> {
    let Some(n) = a.v.strip_suffix(['z', 'Z']) else {
        return Ok(None);
    };
    let zbd = a.set.get("zonemode").is_some_and(|(m, _)| m == "zbd");
    let zone = a
        .set
        .get("zonesize")
        .map(|(z, _)| size(z, a.kb_base))
        .transpose()?;
    match (zbd, zone, n.trim().parse::<u64>()) {
        (true, Some(z), Ok(n)) => Ok(Some(n.saturating_mul(z))),
        (true, Some(_), Err(_)) => Err(a.bad("give a whole number of zones, e.g. 8z")),
        _ => Err(a.bad(format!(
            "{} in zones (z) goes with zonemode=zbd and zonesize=; give a size",
            a.key
        ))),
    }
}

pub(super) fn job_size(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if let Some(b) = in_zones(a)? {
        d.job.size = Some(b);
        return Ok(());
    }
    // A share of the file or device the job names, resolved against its size when the plan
    // looks at the target.
    if let Some(p) = a.v.strip_suffix('%') {
        match p.parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => d.job.size_pct = Some(p),
            _ => return Err(a.bad("give a share from 1% to 100%")),
        }
    } else {
        d.job.size = Some(a.size()?);
    }
    Ok(())
}

pub(super) fn offset(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if let Some(b) = in_zones(a)? {
        d.job.offset = b;
        return Ok(());
    }
    if a.v.ends_with('%') {
        return Err(a.bad(
            "an offset as a share of the file is not mapped yet; give a size, e.g. offset=1g",
        ));
    }
    d.job.offset = a.size()?;
    Ok(())
}

pub(super) fn offset_increment(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if a.v.ends_with('%') {
        return Err(
            a.bad("a share of the file is not mapped; give a size, e.g. offset_increment=1g")
        );
    }
    d.job.offset_increment = Some(a.size()?).filter(|i| *i > 0);
    Ok(())
}

pub(super) fn io_size(d: &mut Draft, a: &Arg) -> Result<(), String> {
    if let Some(b) = in_zones(a)? {
        d.job.io_size = Some(b).filter(|b| *b > 0);
        return Ok(());
    }
    d.job.io_size = Some(a.size()?).filter(|b| *b > 0);
    Ok(())
}
