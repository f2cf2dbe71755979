//! What the device saw, held against what iogauge issued: the checks the 2009 studies made by
//! hand when 1 MiB reads, an 8 GB controller cache or a file system made their numbers lie.
//!
//! Inputs are rates (per second) so a device window that also covers a ramp or the workers'
//! start compares fairly with the measured window. Thresholds leave room for what a file system
//! adds on its own (journal, metadata): only clear disagreements are named.
//! - `split`: the device saw at least [`SPLIT_MORE`] times as many requests, each smaller; the
//!   queue limit that explains it is named (max_sectors_kb, max_segments with 4 KiB pages,
//!   max_segment_size).
//! - `merged`: the device saw at most [`MERGED_FEWER`] of the requests, each larger (buffered
//!   IO, plugging): the IOPS are not the device's.
//! - `absorbed`: of direct IO, more than [`ABSORBED_SHARE`] never reached the lowest device:
//!   memory answered (a loop device over a cached file, a file system serving O_DIRECT from its
//!   cache), or there is no block device at all.
//! - `other-io`: the device moved more than [`OTHER_IO_MORE`] times the bytes issued: someone
//!   else used it during the run.
//! - `queue`: the device's average queue depth stayed under [`QUEUE_SHARE`] of the IOs kept in
//!   flight while its `nr_requests` is below them: IOs waited above the device.

use crate::fmt::{bytes, count, pct};
use crate::{Finding, Kind, Severity};

pub const SPLIT_MORE: f64 = 1.3;
pub const MERGED_FEWER: f64 = 0.7;
pub const ABSORBED_SHARE: f64 = 0.5;
pub const OTHER_IO_MORE: f64 = 1.5;
pub const QUEUE_SHARE: f64 = 0.75;
/// Below this many bytes per second a device's traffic is background noise, never a finding.
const FLOOR_BYTES_PER_S: f64 = 1024.0 * 1024.0;

/// What iogauge issued, per second of measurement.
#[derive(Clone, Copy, Debug, Default)]
pub struct Issued {
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    pub direct: bool,
    /// IOs kept in flight (threads × depth).
    pub in_flight: u32,
}

/// What one device of the target's stack saw, per second, and its queue limits.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub name: String,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    pub avg_queue_depth: f64,
    pub max_sectors_kb: Option<u64>,
    pub max_segments: Option<u64>,
    pub max_segment_size: Option<u64>,
    pub nr_requests: Option<u64>,
    pub scheduler: Option<String>,
}

/// The findings for one result. `stack` is top (the device iogauge's IO enters) first, the
/// lowest device last; empty when the target has no block device under it.
pub fn device_findings(issued: &Issued, stack: &[Seen]) -> Vec<Finding> {
    let mut out = Vec::new();
    let issued_bytes = issued.read_bytes_per_s + issued.write_bytes_per_s;
    let Some(top) = stack.first() else {
        if issued.direct && issued_bytes > FLOOR_BYTES_PER_S {
            out.push(
                Finding::new(
                    Kind::Absorbed,
                    Severity::Warning,
                    "no block device lies under the target: every IO was answered by memory, not storage".into(),
                    "Measure a target on a disk, or read these numbers as memory speed.",
                )
                .with("absorbed_frac", 1.0),
            );
        }
        return out;
    };
    let lowest = stack.last().unwrap_or(top);
    for (dir, n_iss, b_iss, n_dev, b_dev) in [
        (
            "read",
            issued.reads_per_s,
            issued.read_bytes_per_s,
            top.reads_per_s,
            top.read_bytes_per_s,
        ),
        (
            "write",
            issued.writes_per_s,
            issued.write_bytes_per_s,
            top.writes_per_s,
            top.write_bytes_per_s,
        ),
    ] {
        if n_iss <= 0.0 || n_dev <= 0.0 || b_iss < FLOOR_BYTES_PER_S {
            continue;
        }
        let size_iss = b_iss / n_iss;
        let size_dev = b_dev / n_dev;
        if n_dev >= SPLIT_MORE * n_iss && size_dev < size_iss / SPLIT_MORE {
            let limit = split_limit(top, size_iss);
            out.push(
                Finding::new(
                    Kind::Split,
                    Severity::Warning,
                    format!(
                        "{} split the {dir}s: {} requests of {} on average for each {} IO issued ({}); the device measured smaller IOs than asked",
                        top.name,
                        count(n_dev / n_iss),
                        bytes(size_dev),
                        bytes(size_iss),
                        limit
                    ),
                    "Raise the queue limit named (e.g. /sys/block/DEV/queue/max_sectors_kb), or measure with a block size the device takes whole.",
                )
                .with("requests_per_io", n_dev / n_iss)
                .with("avg_request_bytes", size_dev)
                .with("issued_bytes", size_iss),
            );
        } else if n_dev <= MERGED_FEWER * n_iss && size_dev > size_iss * 1.2 {
            out.push(
                Finding::new(
                    Kind::Merged,
                    Severity::Info,
                    format!(
                        "{} merged the {dir}s: {} requests of {} on average per second for {} IOs of {} issued; the IOPS shown are iogauge's, not the device's",
                        top.name,
                        count(n_dev),
                        bytes(size_dev),
                        count(n_iss),
                        bytes(size_iss)
                    ),
                    "Use O_DIRECT (the default) to measure device IOPS; buffered IO and plugging merge neighbouring requests.",
                )
                .with("device_requests_per_s", n_dev)
                .with("avg_request_bytes", size_dev),
            );
        }
    }
    // Only direct IO is expected to reach the lowest device whole.
    if issued.direct {
        for (dir, b_iss, b_low) in [
            ("read", issued.read_bytes_per_s, lowest.read_bytes_per_s),
            ("write", issued.write_bytes_per_s, lowest.write_bytes_per_s),
        ] {
            if b_iss < FLOOR_BYTES_PER_S {
                continue;
            }
            let missing = 1.0 - (b_low / b_iss).min(1.0);
            if missing > ABSORBED_SHARE {
                out.push(
                    Finding::new(
                        Kind::Absorbed,
                        Severity::Warning,
                        format!(
                            "{} of the {dir}s never reached {}: these numbers come from memory",
                            pct(missing),
                            lowest.name
                        ),
                        "Something between iogauge and the disk caches (a loop device without direct IO over a cached file, a file system serving O_DIRECT from memory): measure the disk itself, or a working set larger than the cache.",
                    )
                    .with("absorbed_frac", missing)
                    .with("device_bytes_per_s", b_low),
                );
            }
        }
    }
    for d in stack {
        let seen = d.read_bytes_per_s + d.write_bytes_per_s;
        if issued_bytes > 0.0 && seen > OTHER_IO_MORE * issued_bytes + FLOOR_BYTES_PER_S {
            out.push(
                Finding::new(
                    Kind::OtherIo,
                    Severity::Warning,
                    format!(
                        "{} moved {}/s while iogauge issued {}/s: another process used the disk, and the result is disturbed",
                        d.name,
                        bytes(seen),
                        bytes(issued_bytes)
                    ),
                    "Find the other IO (iotop, pidstat -d) and run again on a quiet device.",
                )
                .with("device_bytes_per_s", seen)
                .with("issued_bytes_per_s", issued_bytes),
            );
            break;
        }
    }
    let want = f64::from(issued.in_flight);
    if let Some(nr) = top.nr_requests {
        if issued.in_flight >= 4 && (nr as f64) < want && top.avg_queue_depth < QUEUE_SHARE * want {
            out.push(
                Finding::new(
                    Kind::Queue,
                    Severity::Warning,
                    format!(
                        "{} queued {:.1} IOs on average while iogauge kept {} in flight: its nr_requests is {nr}{}, so the rest waited above the device",
                        top.name,
                        top.avg_queue_depth,
                        issued.in_flight,
                        top.scheduler
                            .as_deref()
                            .map(|s| format!(" (scheduler {s})"))
                            .unwrap_or_default()
                    ),
                    "Raise /sys/block/DEV/queue/nr_requests to at least the IOs in flight, or measure at a depth the queue takes.",
                )
                .with("avg_queue_depth", top.avg_queue_depth)
                .with("in_flight", want)
                .with("nr_requests", nr as f64),
            );
        }
    }
    out
}

/// Busiest over idlest member beyond this is an imbalance ("One DVD per second" found its two
/// controller legs 25% apart).
pub const IMBALANCE: f64 = 1.2;

/// The members of a striped device (md, dm, LVM) and the bytes each moved: each one's share,
/// and an imbalance when the busiest moved more than [`IMBALANCE`] times the idlest.
pub fn stripe_imbalance(members: &[(String, f64)]) -> Option<Finding> {
    if members.len() < 2 {
        return None;
    }
    let total: f64 = members.iter().map(|m| m.1).sum();
    if total < FLOOR_BYTES_PER_S {
        return None;
    }
    let (lo, hi) = members.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), m| {
        (lo.min(m.1), hi.max(m.1))
    });
    if hi <= IMBALANCE * lo {
        return None;
    }
    let shares: Vec<String> = members
        .iter()
        .map(|(n, b)| format!("{n} {}", pct(b / total)))
        .collect();
    let mut f = Finding::new(
        Kind::Imbalance,
        Severity::Warning,
        format!(
            "the stripe's members did unequal work: {} (the busiest moved {:.1}× the idlest)",
            shares.join(", "),
            if lo > 0.0 { hi / lo } else { f64::INFINITY }
        ),
        "Check the stripe's layout and chunk size against the IO size, and the members' paths (controller, port): the slowest member sets the pace.",
    );
    for (n, b) in members {
        f = f.with(&format!("share_{n}"), b / total);
    }
    Some(f)
}

/// Which queue limit cuts an IO of `size` bytes into pieces.
fn split_limit(d: &Seen, size: f64) -> String {
    if let Some(kb) = d.max_sectors_kb {
        if size > (kb * 1024) as f64 {
            return format!("max_sectors_kb is {kb}");
        }
    }
    if let Some(seg) = d.max_segments {
        if size / 4096.0 > seg as f64 {
            return format!(
                "max_segments is {seg}, fewer than the 4 KiB pieces of a {} buffer",
                bytes(size)
            );
        }
    }
    if let Some(s) = d.max_segment_size {
        if (s as f64) < size {
            return format!("max_segment_size is {}", bytes(s as f64));
        }
    }
    "no queue limit in sysfs explains it".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issued(reads: f64, size: f64) -> Issued {
        Issued {
            reads_per_s: reads,
            read_bytes_per_s: reads * size,
            direct: true,
            in_flight: 4,
            ..Issued::default()
        }
    }

    fn seen(name: &str, reads: f64, size: f64) -> Seen {
        Seen {
            name: name.into(),
            reads_per_s: reads,
            read_bytes_per_s: reads * size,
            avg_queue_depth: 4.0,
            max_sectors_kb: Some(1280),
            max_segments: Some(254),
            max_segment_size: Some(1 << 30),
            nr_requests: Some(256),
            ..Seen::default()
        }
    }

    fn kinds(f: &[Finding]) -> Vec<Kind> {
        f.iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_clean_run_names_nothing() {
        let mib = 1048576.0;
        assert!(device_findings(&issued(1000.0, mib), &[seen("vda", 1000.0, mib)]).is_empty());
        // A journal's few extra requests are not other IO.
        let mut d = seen("vda", 1010.0, mib);
        d.writes_per_s = 5.0;
        d.write_bytes_per_s = 20480.0;
        assert!(device_findings(&issued(1000.0, mib), &[d]).is_empty());
    }

    #[test]
    fn a_stripe_names_its_members_shares_when_they_differ() {
        let even = [("sda".to_string(), 50e6), ("sdb".to_string(), 52e6)];
        assert!(stripe_imbalance(&even).is_none());
        let legs = [("sda".to_string(), 40e6), ("sdb".to_string(), 60e6)];
        let f = stripe_imbalance(&legs).unwrap();
        assert_eq!(f.kind, Kind::Imbalance);
        assert!(f.summary.contains("sda 40%, sdb 60%"), "{}", f.summary);
        assert!((f.evidence["share_sdb"] - 0.6).abs() < 1e-9);
        assert!(
            stripe_imbalance(&legs[..1]).is_none(),
            "one member is no stripe"
        );
    }

    #[test]
    fn split_names_the_limit() {
        let mib = 1048576.0;
        let mut d = seen("loop0", 4000.0, mib / 4.0);
        d.max_sectors_kb = Some(256);
        let f = device_findings(&issued(1000.0, mib), &[d]);
        assert_eq!(kinds(&f), [Kind::Split]);
        assert!(
            f[0].summary.contains("max_sectors_kb is 256"),
            "{}",
            f[0].summary
        );
        let d = seen("vda", 2000.0, mib / 2.0);
        let f = device_findings(&issued(1000.0, mib), &[d]);
        assert!(f[0].summary.contains("max_segments"), "{}", f[0].summary);
    }

    #[test]
    fn merged_absorbed_other_io_and_queue() {
        let k = 4096.0;
        let f = device_findings(&issued(10_000.0, k), &[seen("vda", 500.0, 20.0 * k)]);
        assert_eq!(kinds(&f), [Kind::Merged]);
        let f = device_findings(
            &issued(10_000.0, k),
            &[seen("loop0", 10_000.0, k), seen("vda", 100.0, k)],
        );
        assert_eq!(kinds(&f), [Kind::Absorbed]);
        assert!(
            f[0].summary.contains("99% of the reads never reached vda"),
            "{}",
            f[0].summary
        );
        let f = device_findings(&issued(1000.0, 65536.0), &[seen("vda", 3000.0, 65536.0)]);
        assert!(kinds(&f).contains(&Kind::OtherIo), "{f:?}");
        let mut q = seen("vda", 1000.0, k * 64.0);
        q.nr_requests = Some(4);
        q.avg_queue_depth = 3.9;
        let mut iss = issued(1000.0, k * 64.0);
        iss.in_flight = 32;
        let f = device_findings(&iss, &[q]);
        assert_eq!(kinds(&f), [Kind::Queue]);
        assert!(
            f[0].summary.contains("nr_requests is 4"),
            "{}",
            f[0].summary
        );
        assert_eq!(
            kinds(&device_findings(&issued(1000.0, k * 64.0), &[])),
            [Kind::Absorbed],
            "no device at all"
        );
    }
}
