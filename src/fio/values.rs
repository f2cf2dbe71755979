//! fio's option values in iogauge's terms: sizes with kb_base, times with suffixes, per-direction
//! pairs, block-size ranges and splits, counts, flags, random distributions and file service types.

use crate::workload::blocks::BsWeight;
use crate::workload::{BsMix, Distribution, FileService};
use std::time::Duration;

/// A fio size: a number with k/m/g/t/p, optionally followed by B or iB. fio's default
/// kb_base=1024 reads k, K and KB as 1024 and KiB as 1000 ("compatibility mode", as its manual
/// says); kb_base=1000 reads them the SI way.
pub fn size(v: &str, kb_base: u64) -> Result<u64, String> {
    let (n, unit) =
        number_and_unit(v).ok_or_else(|| format!("'{v}' is not a size; write e.g. 4k or 1g"))?;
    let (prefix, iec) = match unit.strip_suffix("ib") {
        Some(p) => (p, true),
        None => (unit.strip_suffix('b').unwrap_or(&unit), false),
    };
    let power = match prefix {
        "" if !iec => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => {
            return Err(format!(
                "'{v}' has a unit fio does not know; write e.g. 4k or 1g"
            ))
        }
    };
    let other = if kb_base == 1024 { 1000 } else { 1024 };
    let base = if iec { other } else { kb_base } as f64;
    let bytes = n * base.powi(power);
    if !bytes.is_finite() || bytes > u64::MAX as f64 / 2.0 || bytes.fract() != 0.0 {
        return Err(format!("'{v}' is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// A fio value's number and its unit, lowercased (`4KiB` → 4, "kib").
pub(super) fn number_and_unit(v: &str) -> Option<(f64, String)> {
    let t = v.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    Some((num.parse().ok()?, unit.trim().to_ascii_lowercase()))
}

/// A fio time: seconds unless a suffix says us, ms, s, m, h or d.
pub fn time(v: &str) -> Result<Duration, String> {
    time_in(v, 1.0)
}

/// A fio time whose bare number is in microseconds (thinktime's).
pub(super) fn time_us(v: &str) -> Result<Duration, String> {
    time_in(v, 1e-6)
}

/// A fio time, a bare number counting `unit` seconds.
fn time_in(v: &str, unit_s: f64) -> Result<Duration, String> {
    let (n, unit) =
        number_and_unit(v).ok_or_else(|| format!("'{v}' is not a time; write e.g. 60 or 30s"))?;
    let secs = match unit.as_str() {
        "us" | "usec" => n / 1e6,
        "ms" | "msec" => n / 1e3,
        "" => n * unit_s,
        "s" | "sec" => n,
        "m" | "min" => n * 60.0,
        "h" | "hr" | "hour" => n * 3600.0,
        "d" | "day" => n * 86400.0,
        _ => {
            return Err(format!(
                "'{v}' has a unit fio does not know; write e.g. 30s or 2m"
            ))
        }
    };
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| *d <= crate::units::MAX_DURATION)
        .ok_or_else(|| format!("'{v}' is not a time of at most 30 days"))
}

/// fio's per-direction form `R,W[,T]`: one value for every direction, an empty one keeping
/// fio's default (4k); what `each` reads, for reads and for writes.
pub(super) fn per_direction(
    v: &str,
    each: &dyn Fn(&str) -> Result<Vec<BsWeight>, String>,
) -> Result<[Vec<BsWeight>; 2], String> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err("give at most read,write,trim".into());
    }
    let default = || {
        vec![BsWeight {
            bs: 4096,
            weight: 1,
        }]
    };
    let read = match parts[0] {
        "" => default(),
        p => each(p)?,
    };
    let write = match parts.get(1) {
        None => read.clone(),
        Some(&"") => default(),
        Some(p) => each(p)?,
    };
    if let Some(t) = parts.get(2).filter(|t| !t.is_empty()) {
        each(t)?;
    }
    Ok([read, write])
}

/// `bsrange=4k-64k`: fio's sizes between the two, each with its share.
pub(super) fn bs_range(v: &str, kb_base: u64) -> Result<Vec<BsWeight>, String> {
    let (lo, hi) = v
        .split_once('-')
        .ok_or_else(|| format!("'{v}' is not a range; write e.g. 4k-64k"))?;
    let (lo, hi) = (size(lo, kb_base)?, size(hi, kb_base)?);
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    if lo == 0 {
        return Err("a block size must be at least 1 byte".into());
    }
    Ok(BsMix::range(lo, hi))
}

/// `bssplit=4k/50:64k/50`: sizes with percentages; sizes without one share what the others
/// leave of 100, as fio does.
pub(super) fn bs_split(v: &str, kb_base: u64) -> Result<Vec<BsWeight>, String> {
    let mut out: Vec<(u64, Option<u64>)> = Vec::new();
    for part in v.split(':').filter(|p| !p.is_empty()) {
        let (bs, pct) = part.split_once('/').unwrap_or((part, ""));
        let bs = size(bs, kb_base)?;
        let pct = match pct {
            "" => None,
            p => Some(
                p.parse::<u64>()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| format!("'{part}': give a percentage from 0 to 100"))?,
            ),
        };
        out.push((bs, pct));
    }
    if out.is_empty() {
        return Err("give sizes with percentages, e.g. 4k/50:64k/50".into());
    }
    let given: u64 = out.iter().filter_map(|(_, p)| *p).sum();
    let missing = out.iter().filter(|(_, p)| p.is_none()).count() as u64;
    if given > 100 || (missing == 0 && given != 100) {
        return Err(format!("the percentages add up to {given}, not 100"));
    }
    let share = (100 - given).checked_div(missing).unwrap_or(0);
    let mut sizes: Vec<BsWeight> = Vec::new();
    for (bs, p) in out {
        let weight = p.unwrap_or(share);
        match sizes.iter_mut().find(|w| w.bs == bs) {
            Some(w) => w.weight += weight,
            None => sizes.push(BsWeight { bs, weight }),
        }
    }
    sizes.retain(|w| w.weight > 0);
    if sizes.is_empty() {
        return Err("every size has 0%".into());
    }
    Ok(sizes)
}

/// fio's flow weight: 0 (no flow) to 1,000 (fio's FLOW_MAX_WEIGHT).
pub(super) fn flow_weight(v: &str) -> Result<u32, String> {
    match v.parse::<u32>() {
        Ok(n) if n <= 1000 => Ok(n),
        _ => Err("give a weight from 0 (no flow) to 1000, as fio takes it".into()),
    }
}

pub(super) fn count(v: &str) -> Result<u32, String> {
    match v.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("give a whole number of at least 1".into()),
    }
}

/// fio's booleans: an option with no value is on.
pub(super) fn flag(v: &str) -> Result<bool, String> {
    match v {
        "" | "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err("give 1 or 0".into()),
    }
}

/// fio's random_distribution in iogauge's terms; zoned and center offsets are refused.
pub(super) fn distribution(v: &str) -> Result<Distribution, String> {
    let (kind, arg) = v.split_once(':').unwrap_or((v, ""));
    match kind {
        // Zones are separated by ':' themselves.
        "zoned" => Distribution::parse(v),
        "zoned_abs" => Err(
            "zones of absolute sizes are not mapped; give the same zones in percent of the range, zoned:IO%/SIZE%:…".into(),
        ),
        _ if arg.contains(':') => Err(format!(
            "a center offset (the value after the second ':') is not supported; give e.g. {kind}:{}",
            arg.split(':').next().unwrap_or("")
        )),
        "random" if arg.is_empty() => Ok(Distribution::Uniform),
        "zipf" | "pareto" => Distribution::parse(v),
        "normal" | "gauss" if !arg.is_empty() => Distribution::parse(&format!("normal:{arg}%")),
        "normal" | "gauss" => Err("give the deviation in percent, e.g. normal:5".into()),
        "sequence" => {
            let blocks = arg
                .split(',')
                .map(|b| b.trim().parse::<u32>())
                .collect::<Result<Vec<u32>, _>>()
                .map_err(|_| "give block indices, e.g. sequence:2,0,1".to_string())?;
            crate::workload::distribution::Sequence::new(&blocks, false).map(Distribution::Sequence)
        }
        _ => Err(format!(
            "'{kind}' is not one of fio's distributions (random, zipf, pareto, normal, zoned, zoned_abs, sequence)"
        )),
    }
}

/// `file_service_type`: roundrobin and random with an optional `:K` (IOs per file before the
/// next), and sequential. fio's skewed kinds pick files by a distribution, which iogauge does not.
pub(super) fn file_service(v: &str) -> Result<FileService, String> {
    let (kind, k) = match v.split_once(':') {
        Some((kind, k)) => (kind, Some(k)),
        None => (v, None),
    };
    let per = || match k {
        None => Ok(1),
        Some(k) => k
            .parse::<u32>()
            .ok()
            .filter(|k| *k >= 1)
            .ok_or_else(|| format!("give the IOs per file after ':', e.g. {kind}:8")),
    };
    match kind {
        "roundrobin" => Ok(FileService::RoundRobin(per()?)),
        "random" => Ok(FileService::Random(per()?)),
        "sequential" if k.is_none() => Ok(FileService::Sequential),
        "sequential" => Err("sequential takes no ':K'".into()),
        "zipf" | "pareto" | "normal" | "gauss" => Err(format!(
            "{kind} picks files by a skewed distribution, which iogauge does not do; use roundrobin, sequential or random (random_distribution shapes offsets within each file)"
        )),
        _ => Err("fio's file_service_type is roundrobin, sequential or random (each but sequential with an optional :K)".into()),
    }
}

/// The most files a job may spread its IO over: each is a descriptor per worker.
const MAX_FILES: u32 = 4096;

/// `nrfiles`: at least one file, at most [`MAX_FILES`].
pub(super) fn nrfiles(v: &str) -> Result<u32, String> {
    match count(v)? {
        n if n > MAX_FILES => Err(format!("give at most {MAX_FILES} files")),
        n => Ok(n),
    }
}

/// A priority option's `R[,W]` (the last value standing for the directions after it, as fio's
/// parser reads it; a trim's is ignored, as fio ignores it for priorities), each at most `max`.
pub(super) fn prio_per_direction(v: &str, max: u32) -> Result<[u16; 2], String> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err("give at most read,write,trim".into());
    }
    let n = |p: &str| match p.trim().parse::<u32>() {
        Ok(n) if n <= max => Ok(n as u16),
        _ => Err(format!("give a whole number from 0 to {max}")),
    };
    let read = n(parts[0])?;
    let write = parts.get(1).map(|p| n(p)).transpose()?.unwrap_or(read);
    Ok([read, write])
}

/// fio's rate= or rate_iops= for reads and for writes (`R,W[,T]`; one value for every
/// direction, an empty or 0 one leaving that direction unpaced); `bytes` for rate=.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct DirRates {
    pub per_dir: [Option<f64>; 2],
    pub bytes: bool,
}

/// Reads `R,W[,T]` with `each` (a trim's rate is checked: iogauge issues no trims).
pub(super) fn dir_rates(
    v: &str,
    each: &dyn Fn(&str) -> Result<f64, String>,
) -> Result<[Option<f64>; 2], String> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err("give at most read,write,trim".into());
    }
    let one = |p: &str| match p {
        "" => Ok(None),
        p => each(p).map(|r| Some(r).filter(|r| *r > 0.0)),
    };
    let read = one(parts[0])?;
    // As fio's parser: the last value given stands for the directions after it.
    let write = match parts.get(1) {
        None => read,
        Some(p) => one(p)?,
    };
    if let Some(t) = parts.get(2) {
        one(t)?;
    }
    Ok([read, write])
}
