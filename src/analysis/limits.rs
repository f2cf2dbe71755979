//! A device of the target's stack that ran at a cgroup's IO limit (blkio.throttle.* in v1,
//! io.max in v2): the result measured the limit, not the device — and when the device is one
//! member of an array, the whole array ran at that member's pace.
//!
//! The rule: in the device's own per-interval counters, the limited quantity (reads or writes
//! per second, or their bytes) sat within [`NEAR_LOW`]..[`NEAR_HIGH`] of the limit in at least
//! [`MIN_INTERVALS`] intervals and in at least a third of them. A throttle is a hard ceiling,
//! so a device held by it runs just under it, interval after interval; a device slower than
//! its limit (the near miss) runs well under it, and one whose limit came later ran far above
//! it before. Limits are read at the run's start and again at its end, so a limit set while
//! the run went is judged too and said to be so.

use crate::model::{DeviceDoc, ResultDoc};
use iogauge_analyze::{Finding, Kind, Severity};
use iogauge_sysinfo::cgroup::IoLimit;
use iogauge_sysinfo::SystemInfo;

/// Within this share of the limit, below it, an interval ran at the limit.
pub const NEAR_LOW: f64 = 0.8;
/// A throttle lets an interval's edge overshoot a little.
pub const NEAR_HIGH: f64 = 1.1;
/// The fewest intervals at the limit that name it.
pub const MIN_INTERVALS: usize = 2;

/// The limited quantity of one interval, per second.
fn per_second(
    what: &str,
    reads: u64,
    writes: u64,
    rb: Option<f64>,
    wb: Option<f64>,
    dt: f64,
) -> f64 {
    let v = match what {
        "read_iops" => reads as f64,
        "write_iops" => writes as f64,
        "read_bps" => reads as f64 * rb.unwrap_or(0.0),
        "write_bps" => writes as f64 * wb.unwrap_or(0.0),
        _ => 0.0,
    };
    v / dt
}

/// Intervals at the limit, and intervals in all (the first, a partial start-up, left out).
fn at_limit(d: &DeviceDoc, l: &IoLimit) -> (usize, usize, Option<f64>) {
    let mut prev = 0.0;
    let mut near = 0;
    let mut first_near = None;
    let mut n = 0;
    for (i, s) in d.intervals.iter().enumerate() {
        let dt = s.t_s - prev;
        prev = s.t_s;
        if i == 0 || dt <= 0.0 {
            continue;
        }
        n += 1;
        let v = per_second(
            &l.what,
            s.reads,
            s.writes,
            s.avg_read_request_bytes,
            s.avg_write_request_bytes,
            dt,
        );
        let limit = l.value as f64;
        if v >= NEAR_LOW * limit && v <= NEAR_HIGH * limit {
            near += 1;
            first_near.get_or_insert(s.t_s - dt);
        }
    }
    (near, n, first_near)
}

pub(super) fn findings(r: &ResultDoc, system: &SystemInfo) -> Vec<Finding> {
    let Some(t) = &system.target else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for l in &t.io_limits {
        let Some(dev) = t.devices.iter().find(|d| d.dev.as_ref() == Some(&l.dev)) else {
            continue;
        };
        let Some(d) = r.devices.iter().find(|d| d.name == dev.name) else {
            continue;
        };
        let (near, n, from) = at_limit(d, l);
        if near < MIN_INTERVALS || near * 3 < n {
            continue;
        }
        let array = t
            .devices
            .iter()
            .find(|a| a.below.len() > 1 && a.below.contains(&dev.name))
            .map(|a| a.name.clone())
            .or_else(|| {
                t.btrfs
                    .as_ref()
                    .filter(|b| b.members.len() > 1 && b.members.contains(&dev.name))
                    .map(|_| "the multi-device btrfs".to_string())
            });
        let limit = io_limit(t, l);
        let when = match (l.set_during_run, from) {
            (true, Some(s)) if s > 1.0 => format!(", from about {s:.0} s into the measurement"),
            _ => String::new(),
        };
        out.push(
            Finding::new(
                Kind::Limit,
                Severity::Warning,
                format!(
                    "{} ran at its cgroup limit in {near} of {n} seconds{when} ({limit}): {}",
                    dev.name,
                    match &array {
                        Some(a) => format!(
                            "it is one member of {a}, which ran at its pace: this result measured the limit, not the devices"
                        ),
                        None => format!("this result measured the limit, not {}", dev.name),
                    }
                ),
                "Lift the limit (blkio.throttle.*_device or io.max of the cgroup iogauge runs in, or of one above it) to measure the devices, or read these numbers as the limit's.",
            )
            .with("limit", l.value as f64)
            .with("intervals_at_limit", near as f64)
            .with("intervals", n as f64),
        );
    }
    out
}

/// A cgroup's limit on a device of the target's stack, for `show` and `report`: part of the
/// path, so what was measured may be the limit and not the device.
pub fn io_limit(t: &iogauge_sysinfo::TargetInfo, l: &iogauge_sysinfo::cgroup::IoLimit) -> String {
    let name = t
        .devices
        .iter()
        .find(|d| d.dev.as_ref() == Some(&l.dev))
        .map_or(l.dev.as_str(), |d| d.name.as_str());
    let (what, value) = match l.what.split_once('_') {
        Some((dir, "iops")) => (dir, format!("{} IOPS", crate::units::count(l.value as f64))),
        Some((dir, _)) => (dir, format!("{}/s", crate::units::iec(l.value))),
        None => (l.what.as_str(), l.value.to_string()),
    };
    format!(
        "{name}: {what}s held to {value} by a cgroup iogauge ran in{}",
        match l.set_during_run {
            true => " (set while the run went)",
            false => "",
        }
    )
}
