//! fio's zonemode=zbd, as fio runs it on a target that is not zoned: zones of `zonesize` over
//! the job's range, write pointers kept in memory and every zone empty at the start, writes at
//! the pointers (`max_open_zones` zones at a time), resets by `zone_reset_threshold` and
//! `zone_reset_frequency`; reads past the pointers with `read_beyond_wp=1`. The job's rules
//! are checked here; `workload::zbd` keeps the pointers while it runs, and the plan refuses a
//! zoned device (whose pointers are the device's own).

use super::draft::Set;
use super::values::{flag, size};
use super::Job;
use crate::workload::{Rw, Zbd};

/// The largest zone a trim may reset: one IO's length (an engine's `u32`) with room to spare.
const MAX_TRIM_ZONE: u64 = 1 << 31;

/// The options that mean something only with zonemode=zbd.
const ZBD_ONLY: [&str; 4] = [
    "max_open_zones",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "read_beyond_wp",
];

/// Reads zonemode=zbd and its options into the job, or refuses what iogauge cannot follow.
pub(super) fn apply(j: &mut Job, set: &Set, kb_base: u64) -> Result<(), String> {
    let Some((_, ml)) = set.get("zonemode").filter(|(m, _)| m == "zbd") else {
        if j.rw.trims() {
            return Err(format!(
                "{}: rw={}: iogauge issues no trims to a device; it takes them with zonemode=zbd, where fio's trims reset the emulated zones' write pointers in memory",
                at(j, set, "rw"),
                typed(set, "rw")
            ));
        }
        if let Some(k) = ZBD_ONLY.iter().find(|k| set.contains_key(**k)) {
            return Err(format!(
                "{}: {k} goes with zonemode=zbd, which is not set",
                set[*k].1
            ));
        }
        return Ok(());
    };
    let zone = match set.get("zonesize").map(|(v, _)| size(v, kb_base)) {
        Some(Ok(z)) if z > 0 => z,
        Some(Err(e)) => return Err(format!("{}: zonesize: {e}", set["zonesize"].1)),
        _ => {
            return Err(format!(
                "{ml}: zonemode=zbd needs zonesize=: on a target that is not zoned, fio and iogauge cut the range into zones of that size (a zoned device is not driven)"
            ))
        }
    };
    let (zv, zl) = &set["zonesize"];
    if let Some(k) = ["zonerange", "zoneskip", "zonecapacity"]
        .into_iter()
        .find(|k| set.contains_key(*k))
    {
        return Err(format!(
            "{}: {k} with zonemode=zbd is not mapped: iogauge's zones are whole zones of zonesize, written from their start; leave {k} out",
            set[k].1
        ));
    }
    let shaped = ["bssplit", "bsrange", "offset_increment"]
        .into_iter()
        .find(|k| set.contains_key(*k))
        .or(j.mix.as_ref().map(|_| "bs"))
        .or((j.seq_run > 1 || j.seq_skip != 0).then_some("rw"));
    if let Some(k) = shaped {
        return Err(format!(
            "{}: zonemode=zbd with {k}={}: zones are mapped for one block size and a plain pattern; give one bs and no :N suffix",
            at(j, set, k),
            typed(set, k)
        ));
    }
    if j.nrfiles > 1 {
        return Err(format!(
            "{ml}: zonemode=zbd with nrfiles={}: iogauge keeps write pointers for one file; leave one of them out",
            j.nrfiles
        ));
    }
    if j.verify {
        return Err(format!(
            "{}: zonemode=zbd with verify: fio skips full zones when it verifies, which iogauge's verify does not follow; leave verify out",
            at(j, set, "verify")
        ));
    }
    if j.rw.trims() && j.bs != zone {
        return Err(format!(
            "{}: rw={} with bs={}: a trim resets one zone, so fio takes only bs=zonesize ({zv}) for trims",
            at(j, set, "rw"),
            typed(set, "rw"),
            crate::units::bs_label(j.bs)
        ));
    }
    if j.rw.trims() && zone > MAX_TRIM_ZONE {
        return Err(format!(
            "{zl}: zonesize={zv} with trims: iogauge counts a trim of at most {}; give a smaller zone",
            crate::units::iec(MAX_TRIM_ZONE)
        ));
    }
    if !zone.is_multiple_of(j.bs) {
        return Err(format!(
            "{zl}: zonesize={zv}: give a whole number of blocks of bs={}",
            typed(set, "bs")
        ));
    }
    if !j.offset.is_multiple_of(zone) {
        return Err(format!(
            "{}: offset={} is not at a zone's start (zonesize={zv}); fio would round it up to the next zone: give offset=Nz",
            at(j, set, "offset"),
            typed(set, "offset")
        ));
    }
    let beyond = match set.get("read_beyond_wp") {
        Some((v, l)) => flag(v).map_err(|e| format!("{l}: read_beyond_wp={v}: {e}"))?,
        None => false,
    };
    if !beyond && !matches!(j.rw, Rw::Write | Rw::Randwrite | Rw::Trim | Rw::Randtrim) {
        let what = if matches!(j.rw, Rw::Read | Rw::Randread) {
            "and on a target that is not zoned every zone starts empty: the job would read nothing (fio reads 0 bytes)"
        } else {
            "which iogauge's reads in a mix do not follow"
        };
        return Err(format!(
            "{}: zonemode=zbd with rw={} reads only below the zones' write pointers (read_beyond_wp=0), {what}; give read_beyond_wp=1 to read the whole range",
            at(j, set, "rw"),
            typed(set, "rw")
        ));
    }
    if let Some(s) = j.size.filter(|s| *s < zone) {
        return Err(format!(
            "{}: size={} is less than one zone (zonesize={zv}); fio refuses it too: give size=1z or more",
            at(j, set, "size"),
            crate::units::iec(s)
        ));
    }
    let number = |k: &str| set.get(k).map(|(v, _)| v.parse::<f64>().unwrap_or(0.0));
    let max_open = set
        .get("max_open_zones")
        .map_or(0, |(v, _)| v.parse::<u32>().unwrap_or(0));
    let frequency = number("zone_reset_frequency").unwrap_or(0.0);
    j.zbd = Some(Zbd {
        zone,
        max_open,
        reset: (frequency > 0.0)
            .then(|| (number("zone_reset_threshold").unwrap_or(0.0), frequency)),
        // The plan gives jobs of one file their table (`plan::fio_jobs`).
        table: 0,
        unit: 0,
    });
    Ok(())
}

/// Where `key` was set (the job's section when it was not): the job's own `at` reads the
/// settings it is given only after its fix-ups.
fn at<'a>(j: &'a Job, set: &'a Set, key: &str) -> &'a super::ini::Loc {
    set.get(key).map_or(&j.at, |(_, l)| l)
}

/// The value of `key` as the job file wrote it.
fn typed<'a>(set: &'a Set, key: &str) -> &'a str {
    set.get(key).map_or("", |(v, _)| v.as_str())
}
