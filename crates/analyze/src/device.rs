//! What the device saw, held against what iogauge issued: the checks the 2009 studies made by
//! hand when 1 MiB reads, an 8 GB controller cache or a file system made their numbers lie.
//!
//! Inputs are rates (per second) so a device window that also covers a ramp or the workers'
//! start compares fairly with the measured window. Thresholds leave room for what a file system
//! adds on its own (journal, metadata): only clear disagreements are named.
//! - `split`: of direct IO, the device saw at least [`SPLIT_MORE`] times as many requests, each
//!   smaller; the queue limit that explains it is named (max_sectors_kb, max_segments with 4 KiB
//!   pages, max_segment_size). Buffered IO reaches the device as the page cache's readahead and
//!   writeback, whose sizes are the kernel's, not iogauge's: its smaller requests are no split.
//! - `merged`: the device saw at most [`MERGED_FEWER`] of the requests, each larger (buffered
//!   IO, plugging): the IOPS are not the device's.
//! - `absorbed`: of direct IO, more than [`ABSORBED_SHARE`] never reached the lowest device:
//!   memory answered (a loop device over a cached file, a file system serving O_DIRECT from its
//!   cache), or there is no block device at all.
//! - `other-io`: the device moved more than [`OTHER_IO_MORE`] times the bytes issued, and the
//!   kernel's per-process accounting shows other processes moved at least [`OTHERS_EXPLAIN`] of
//!   the excess: someone else used it during the run, named with what they moved.
//!   On the raw device iogauge's direct IO enters, the kernel adds none of its own, so an excess
//!   there is `other-io` whether or not the accounting caught who moved it.
//! - `amplification`: the same excess, but no other process moved it (or not enough of it): the
//!   kernel did the IO on iogauge's behalf — a file system's journal or log tree, metadata and
//!   copy-on-write for each sync, readahead. Said with the factor, and per sync for a sync
//!   workload, as what the stack costs a database; an `info`, not a disturbance. A result that
//!   carries no process accounting (an older document) keeps the older judgement, `other-io`.
//! - `split` also needs the bytes to add up (at most [`SPLIT_BYTES_MORE`] of those issued): more
//!   requests *and* more bytes are someone else's IO, not a split.
//! - `queue`: the device's average queue depth stayed under [`QUEUE_SHARE`] of the IOs kept in
//!   flight while its `nr_requests` is below them: IOs waited above the device.
//!
//! Minimum evidence: no device finding is made from fewer than [`MIN_IOS`] IOs issued or a
//! measurement shorter than [`MIN_SECS`], nor when the device's counters were watched over a
//! window much longer than the measurement ([`MAX_WINDOW_RATIO`]): a short cell's start-up and
//! a few requests of someone else would be most of what the device saw.
//!
//! Flushes: every fsync/fdatasync sends the device an empty flush, which the kernel counts
//! once as a flush and once as a write with no data. Split is judged on the data writes alone
//! (writes − flushes: the fewest the device can have done), merged on all writes (the most it
//! can have done), so neither fires on the flushes of a sync workload.
//!
//! One finding never contradicts another on the same result: when `other-io` shows someone
//! else moved data on the stack, the device's counters are not iogauge's alone, and split,
//! merged and absorbed (each a comparison of those counters with what iogauge issued) are not
//! judged.

use crate::fmt::{bytes, count, pct, rate};
use crate::{Finding, Kind, Severity};

pub const SPLIT_MORE: f64 = 1.3;
pub const MERGED_FEWER: f64 = 0.7;
pub const ABSORBED_SHARE: f64 = 0.5;
pub const OTHER_IO_MORE: f64 = 1.5;
/// Other processes must have moved at least this share of a device's excess to be its cause.
pub const OTHERS_EXPLAIN: f64 = 0.5;
/// A split moves the bytes issued in more, smaller requests: at most this many times them.
pub const SPLIT_BYTES_MORE: f64 = 1.1;
pub const QUEUE_SHARE: f64 = 0.75;
/// Below this many bytes per second a device's traffic is background noise, never a finding.
const FLOOR_BYTES_PER_S: f64 = 1024.0 * 1024.0;
/// The fewest IOs issued that a device finding may rest on.
pub const MIN_IOS: u64 = 1000;
/// The shortest measurement a device finding may rest on, in seconds.
pub const MIN_SECS: f64 = 0.5;
/// The device window may exceed the measurement by this factor (plus [`WINDOW_SLACK_S`]).
pub const MAX_WINDOW_RATIO: f64 = 1.5;
const WINDOW_SLACK_S: f64 = 0.25;

/// What iogauge issued, per second of measurement.
#[derive(Clone, Debug, Default)]
pub struct Issued {
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    pub direct: bool,
    /// IOs kept in flight (threads × depth).
    pub in_flight: u32,
    /// IOs completed in the measurement, and its length in seconds.
    pub ios: u64,
    pub measured_s: f64,
    /// Seconds the devices were watched before the measurement began, by design: the ramp and
    /// an auto complete batch's trial (over all repeats). The window may be that much longer.
    pub lead_s: f64,
    /// fsync/fdatasync calls per second (0 for a workload without).
    pub syncs_per_s: f64,
    /// What other processes moved meanwhile, when it was counted.
    pub others: Option<OthersSeen>,
    /// The target's file system, to say whose writes an amplification is.
    pub filesystem: Option<String>,
    /// Every IO buffer lies on huge pages (what the kernel gave, read back): a large IO is
    /// physically contiguous, so `max_segments` of 4 KiB pages cannot be what cut it.
    pub huge_buffers: bool,
}

/// What other processes (not iogauge, not kernel threads) read and wrote to storage during the
/// measurement, per second, from the kernel's per-process accounting.
#[derive(Clone, Debug, Default)]
pub struct OthersSeen {
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    /// Processes that could not be looked at (another user's, without root).
    pub unreadable: u32,
    /// The busiest few: "command (pid N)" and bytes per second.
    pub top: Vec<(String, f64)>,
}

/// What one device of the target's stack saw, per second, and its queue limits.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub name: String,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    /// Flush requests per second (also counted in `writes_per_s`, with no data).
    pub flushes_per_s: f64,
    /// Seconds the counters were watched.
    pub window_s: f64,
    pub avg_queue_depth: f64,
    pub max_sectors_kb: Option<u64>,
    pub max_segments: Option<u64>,
    pub max_segment_size: Option<u64>,
    pub nr_requests: Option<u64>,
    pub scheduler: Option<String>,
    /// The sum over several devices (an array's members at the bottom of the stack, a
    /// multi-device btrfs's devices at its top): what reached storage in all, judged for
    /// `absorbed` only. Its bytes count each copy a mirror wrote and its requests the
    /// stripe's pieces, so it is never judged for `other-io`, `split` or `merged`; each
    /// member is, on its own.
    pub aggregate: bool,
    /// Loop devices outside the target's stack whose backing lies on this device ("loop3 over
    /// /var/tmp/a.img"): their IO reaches it through the kernel's own threads.
    pub shared_with: Vec<String>,
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
    if issued.ios < MIN_IOS
        || issued.measured_s < MIN_SECS
        || stack.iter().any(|d| {
            d.window_s > MAX_WINDOW_RATIO * issued.measured_s + WINDOW_SLACK_S + issued.lead_s
        })
    {
        return out;
    }
    let lowest = stack.last().unwrap_or(top);
    let other = other_io(issued, stack);
    if let Some(f) = other {
        // The counters hold IO iogauge did not issue (someone else's, or the kernel's on its
        // behalf): nothing else can be judged from them.
        out.push(f);
        out.extend(queue(issued, top));
        return out;
    }
    for (dir, n_iss, b_iss, n_dev, n_flush, b_dev) in [
        (
            "read",
            issued.reads_per_s,
            issued.read_bytes_per_s,
            top.reads_per_s,
            0.0,
            top.read_bytes_per_s,
        ),
        (
            "write",
            issued.writes_per_s,
            issued.write_bytes_per_s,
            top.writes_per_s,
            top.flushes_per_s,
            top.write_bytes_per_s,
        ),
    ] {
        // Several devices summed (a multi-device btrfs's) are cut by the layout's stripe, which
        // `chunk_split` judges: not one device's queue limits.
        if top.aggregate || n_iss <= 0.0 || n_dev <= 0.0 || b_iss < FLOOR_BYTES_PER_S {
            continue;
        }
        let size_iss = b_iss / n_iss;
        // The fewest data requests the device can have done: its empty flushes are not data.
        let n_data = (n_dev - n_flush).max(0.0);
        let size_data = if n_data > 0.0 {
            b_dev / n_data
        } else {
            f64::INFINITY
        };
        let size_dev = b_dev / n_dev;
        if issued.direct
            && n_data >= SPLIT_MORE * n_iss
            && size_data < size_iss / SPLIT_MORE
            && b_dev <= SPLIT_BYTES_MORE * b_iss
        {
            let (n_dev, size_dev) = (n_data, size_data);
            let (limit, explained) = split_limit(top, size_iss, issued.huge_buffers);
            let pieces = n_dev / n_iss;
            let f = match issued.filesystem.as_deref() {
                // Through a file system the device's requests are the file system's: where its
                // extents lie, how its direct IO path builds bios (btrfs cut 1 MiB reads into
                // 2.8 requests on a loop device whose queue limits allow one of 1,280 KiB,
                // where ext4 sent them whole; precision suite at real length, issue 37). Beyond
                // what a queue limit explains, that is how the stack serves this block size —
                // what a database on it gets — not a measurement gone wrong.
                Some(fs) if pieces > SPLIT_MORE * explained => Finding::new(
                    Kind::Split,
                    Severity::Info,
                    format!(
                        "{fs} reached {} with {} requests of {} on average for each {} {dir} issued ({}): the file system, not the block size asked, set the requests the device served",
                        top.name,
                        count(pieces),
                        bytes(size_dev),
                        bytes(size_iss),
                        if explained > 1.0 {
                            format!("{limit}, which explains {}", count(explained))
                        } else {
                            "no queue limit in sysfs explains it".to_owned()
                        },
                    ),
                    "These results are the device behind this file system at this block size. To measure the device's own IOs of this size, run on the raw device, or on a file system that passes them whole (ext4 and XFS do for direct IO).",
                ),
                _ => Finding::new(
                    Kind::Split,
                    Severity::Warning,
                    format!(
                        "{} split the {dir}s: {} requests of {} on average for each {} IO issued ({limit}); the device measured smaller IOs than asked",
                        top.name,
                        count(pieces),
                        bytes(size_dev),
                        bytes(size_iss),
                    ),
                    "Raise the queue limit named (e.g. /sys/block/DEV/queue/max_sectors_kb), or measure with a block size the device takes whole.",
                ),
            };
            out.push(
                f.with("requests_per_io", pieces)
                    .with("avg_request_bytes", size_dev)
                    .with("issued_bytes", size_iss)
                    .with("limit_pieces", explained),
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
                    if issued.direct {
                        "Neighbouring direct IOs were merged below iogauge (plugging, the scheduler): the device did fewer, larger requests. Use random offsets, or --iodepth 1, to measure its per-request IOPS."
                    } else {
                        "Use O_DIRECT (the default) to measure device IOPS; buffered IO and plugging merge neighbouring requests."
                    },
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
    out.extend(queue(issued, top));
    out
}

/// A device of the stack moved far more than iogauge issued: `other-io` when other processes
/// moved at least [`OTHERS_EXPLAIN`] of the excess (or when nobody counted them), else
/// `amplification`, the kernel's own IO on iogauge's behalf.
fn other_io(issued: &Issued, stack: &[Seen]) -> Option<Finding> {
    let issued_bytes = issued.read_bytes_per_s + issued.write_bytes_per_s;
    if let Some(f) = other_stacks(issued_bytes, stack) {
        return Some(f);
    }
    let d = stack.iter().filter(|d| !d.aggregate).find(|d| {
        let seen = d.read_bytes_per_s + d.write_bytes_per_s;
        issued_bytes > 0.0 && seen > OTHER_IO_MORE * issued_bytes + FLOOR_BYTES_PER_S
    })?;
    let seen = d.read_bytes_per_s + d.write_bytes_per_s;
    let excess = seen - issued_bytes;
    let Some(others) = &issued.others else {
        return Some(
            Finding::new(
                Kind::OtherIo,
                Severity::Warning,
                format!(
                    "{} moved {} while iogauge issued {}: another process used the disk, and the result is disturbed",
                    d.name,
                    rate(seen),
                    rate(issued_bytes)
                ),
                "Find the other IO (iotop, pidstat -d) and run again on a quiet device.",
            )
            .with("device_bytes_per_s", seen)
            .with("issued_bytes_per_s", issued_bytes),
        );
    };
    let theirs = others.read_bytes_per_s + others.write_bytes_per_s;
    if theirs >= OTHERS_EXPLAIN * excess {
        let named: Vec<String> = others
            .top
            .iter()
            .take(3)
            .map(|(who, b)| format!("{who} {}", rate(*b)))
            .collect();
        return Some(
            Finding::new(
                Kind::OtherIo,
                Severity::Warning,
                format!(
                    "{} moved {} while iogauge issued {}, and other processes moved {} meanwhile ({}): the result is disturbed",
                    d.name,
                    rate(seen),
                    rate(issued_bytes),
                    rate(theirs),
                    named.join(", ")
                ),
                "Stop the processes named, or run again on a quiet device.",
            )
            .with("device_bytes_per_s", seen)
            .with("issued_bytes_per_s", issued_bytes)
            .with("others_bytes_per_s", theirs),
        );
    }
    // Nothing of the kernel's own adds to direct IO on a raw device (no readahead, journal or
    // metadata): what the device iogauge's IO enters moved beyond it is another's, whether or
    // not a process's accounting caught it (a reader that ended unreaped as the window closed,
    // seen in CI on a loaded machine). Devices below it may still amplify (a parity array).
    if issued.direct && issued.filesystem.is_none() && std::ptr::eq(d, &stack[0]) {
        return Some(
            Finding::new(
                Kind::OtherIo,
                Severity::Warning,
                format!(
                    "{} moved {} while iogauge issued {} of direct IO to it, to which the kernel adds none of its own: another process used the device, and the result is disturbed (the processes counted moved {} meanwhile{})",
                    d.name,
                    rate(seen),
                    rate(issued_bytes),
                    rate(theirs),
                    unseen(others.unreadable)
                ),
                "Find the other IO (iotop, pidstat -d) and run again on a quiet device.",
            )
            .with("device_bytes_per_s", seen)
            .with("issued_bytes_per_s", issued_bytes)
            .with("others_bytes_per_s", theirs),
        );
    }
    // The kernel's own IO for iogauge: in the direction that grew.
    let (dir, dev_b, iss_b) = match d.write_bytes_per_s - issued.write_bytes_per_s
        >= d.read_bytes_per_s - issued.read_bytes_per_s
    {
        true => ("write", d.write_bytes_per_s, issued.write_bytes_per_s),
        false => ("read", d.read_bytes_per_s, issued.read_bytes_per_s),
    };
    let factor = dev_b / iss_b.max(1.0);
    let fs = issued
        .filesystem
        .as_deref()
        .map(|f| format!("the file system ({f}) and the kernel"))
        .unwrap_or_else(|| "the kernel".to_string());
    let synced = dir == "write" && issued.syncs_per_s > 0.0;
    let per_sync = match synced {
        true => format!(", {} for each sync", bytes(dev_b / issued.syncs_per_s)),
        false => String::new(),
    };
    let factor_text = match iss_b >= FLOOR_BYTES_PER_S {
        true => format!("{factor:.1}× the {dir}s iogauge issued"),
        false => format!("while iogauge issued {} of {dir}s", rate(iss_b)),
    };
    let mut f = Finding::new(
        Kind::Amplification,
        Severity::Info,
        format!(
            "{} moved {} of {dir}s, {factor_text}{}: {fs} did them on iogauge's behalf (other processes on it moved {}){}",
            d.name,
            rate(dev_b),
            per_sync,
            rate(theirs),
            unseen(others.unreadable),
        ),
        match dir {
            "write" => "This is what the storage stack costs a database: each commit's fsync makes the device write this much (journal or log tree, metadata, copy-on-write). Compare file systems or journal modes with `iogauge sweep --fs`.",
            _ => "The kernel read more than was asked (readahead, metadata): the device's numbers include it.",
        },
    )
    .with("amplification", factor)
    // Which way the excess went: reads a parity array made to write are its read-modify-write.
    .with("of_reads", if dir == "read" { 1.0 } else { 0.0 })
    .with("device_bytes_per_s", dev_b)
    .with("issued_bytes_per_s", iss_b)
    .with("others_bytes_per_s", theirs);
    if synced {
        f = f.with("device_bytes_per_sync", dev_b / issued.syncs_per_s);
    }
    Some(f)
}

/// What is said of processes the accounting could not look at (another user's, without root).
fn unseen(unreadable: u32) -> String {
    match unreadable {
        0 => String::new(),
        n => format!(
            " ({n} other process{} could not be looked at: run as root to rule them out)",
            if n == 1 { "" } else { "es" }
        ),
    }
}

/// A device other stacks share (loop devices over files on it) that moved far more than this
/// stack sent it — the most any device above it moved, or what iogauge issued: the rest is
/// those devices' IO, which the kernel's own threads do and no process's accounting shows, so
/// it is `other-io`, never the file system's amplification. A shared device that moved no more
/// than the stack sent it says nothing here.
fn other_stacks(issued_bytes: f64, stack: &[Seen]) -> Option<Finding> {
    let mut sent = issued_bytes;
    for d in stack.iter().filter(|d| !d.aggregate) {
        let seen = d.read_bytes_per_s + d.write_bytes_per_s;
        if d.shared_with.is_empty() {
            sent = sent.max(seen);
            continue;
        }
        if issued_bytes > 0.0 && seen > OTHER_IO_MORE * sent + FLOOR_BYTES_PER_S {
            let named: Vec<&str> = d.shared_with.iter().take(3).map(String::as_str).collect();
            let more = d.shared_with.len().saturating_sub(named.len());
            return Some(
                Finding::new(
                    Kind::OtherIo,
                    Severity::Warning,
                    format!(
                        "{} moved {} while this stack sent it at most {}: other devices on it ({}{}) did the rest through the kernel's own threads, which no process's accounting shows; the result may be disturbed",
                        d.name,
                        rate(seen),
                        rate(sent),
                        named.join(", "),
                        match more {
                            0 => String::new(),
                            n => format!(" and {n} more"),
                        }
                    ),
                    "Stop the work on the devices named (or detach them), or measure on a disk nothing else uses.",
                )
                .with("device_bytes_per_s", seen)
                .with("stack_bytes_per_s", sent)
                .with("issued_bytes_per_s", issued_bytes),
            );
        }
    }
    None
}

/// `queue`: IOs waited above a device whose nr_requests is below the IOs in flight.
fn queue(issued: &Issued, top: &Seen) -> Option<Finding> {
    let want = f64::from(issued.in_flight);
    let nr = top.nr_requests?;
    (issued.in_flight >= 4 && (nr as f64) < want && top.avg_queue_depth < QUEUE_SHARE * want).then(|| {
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
        .with("nr_requests", nr as f64)
    })
}

/// Member reads beyond this share of the bytes written, during a workload that only writes,
/// are the parity array reading to write: a read-modify-write.
pub const RMW_READ_SHARE: f64 = 0.1;

/// A parity array (md RAID5/6) and what its members moved while iogauge only wrote.
#[derive(Clone, Debug, Default)]
pub struct ParityArray {
    pub name: String,
    pub level: String,
    /// The chunk (stripe unit), bytes.
    pub chunk_bytes: Option<u64>,
    /// Members that hold data in one stripe (members − 1 for RAID5, − 2 for RAID6).
    pub data_members: usize,
    /// The members' reads and writes, bytes per second.
    pub member_read_bytes_per_s: f64,
    pub member_write_bytes_per_s: f64,
}

/// `read-modify-write`: a parity array whose members read while iogauge only wrote — each
/// write smaller than a full stripe makes md read the rest of the stripe (or the old data and
/// parity) to compute the new parity ("One DVD per second" saw RAID5 writes fall into gaps).
/// Said with how much was read for how much was written and the full stripe; an `info`, since
/// it is the layout's nature, not a disturbance. Near misses: full-stripe writes read nothing,
/// a layout without parity is never judged, a workload that reads is not judged.
pub fn read_modify_write(issued: &Issued, array: &ParityArray) -> Option<Finding> {
    if issued.ios < MIN_IOS
        || issued.measured_s < MIN_SECS
        || issued.reads_per_s > 0.0
        || issued.write_bytes_per_s < FLOOR_BYTES_PER_S
        || !matches!(array.level.as_str(), "raid5" | "raid6" | "raid4")
    {
        return None;
    }
    let share = array.member_read_bytes_per_s / issued.write_bytes_per_s;
    if share <= RMW_READ_SHARE {
        return None;
    }
    let size = issued.write_bytes_per_s / issued.writes_per_s.max(1e-9);
    let stripe = array
        .chunk_bytes
        .map(|c| c as f64 * array.data_members.max(1) as f64);
    let mut f = Finding::new(
        Kind::ReadModifyWrite,
        Severity::Info,
        format!(
            "{} ({}) read {} from its members for the {} iogauge wrote ({} for each byte written): writes of {}{} make it read to compute parity",
            array.name,
            array.level,
            rate(array.member_read_bytes_per_s),
            rate(issued.write_bytes_per_s),
            count(share),
            bytes(size),
            stripe
                .map(|s| format!(", smaller than its full stripe of {}", bytes(s)))
                .unwrap_or_default()
        ),
        "Parity RAID pays for every write smaller than a full stripe with reads: write in whole stripes (a database's page or WAL block cannot), use RAID10 for small random writes, or a chunk that makes the full stripe match the writes; align the file system to the stripe (iogauge sweep --fs does).",
    )
    .with("member_read_bytes_per_s", array.member_read_bytes_per_s)
    .with("member_write_bytes_per_s", array.member_write_bytes_per_s)
    .with("issued_write_bytes_per_s", issued.write_bytes_per_s)
    .with("read_per_written", share);
    if let Some(s) = stripe {
        f = f.with("full_stripe_bytes", s);
    }
    Some(f)
}

/// `split` across an array's members: direct reads that reached the members as more, smaller
/// requests. Reads only, since writes reach a mirror once per copy and a parity array with its
/// parity; of a parity array, only a workload that does not write (its read-modify-write reads
/// are no split). Reads larger than the chunk are cut by the layout itself, said as an `info`
/// with the chunk; reads no larger than the chunk that still reach two members straddle chunk
/// boundaries — placed off the chunk — and are a `warning`. The member bytes must add up to
/// what was read ([`SPLIT_BYTES_MORE`]): more would be someone else's reads, or a degraded
/// array reconstructing.
pub fn chunk_split(
    issued: &Issued,
    array: &str,
    chunk_bytes: Option<u64>,
    parity: bool,
    member_reads_per_s: f64,
    member_read_bytes_per_s: f64,
) -> Option<Finding> {
    if !issued.direct
        || issued.ios < MIN_IOS
        || issued.measured_s < MIN_SECS
        || issued.reads_per_s <= 0.0
        || issued.read_bytes_per_s < FLOOR_BYTES_PER_S
        || (parity && issued.writes_per_s > 0.0)
        || member_reads_per_s <= 0.0
        || member_read_bytes_per_s > SPLIT_BYTES_MORE * issued.read_bytes_per_s
    {
        return None;
    }
    // Pieces per read from the sizes, which the devices' longer window (the ramp, the trial)
    // does not change as it does their rates.
    let size = issued.read_bytes_per_s / issued.reads_per_s;
    let avg = member_read_bytes_per_s / member_reads_per_s;
    let per_io = size / avg;
    if per_io < SPLIT_MORE {
        return None;
    }
    let larger = chunk_bytes.is_some_and(|c| size > c as f64);
    let chunk = chunk_bytes
        .map(|c| bytes(c as f64))
        .unwrap_or_else(|| "unknown".to_string());
    let (severity, cause, advice) = match larger {
        true => (
            Severity::Info,
            format!("its chunk of {chunk} is smaller than the reads, and each member serves a piece"),
            "Each read waits for its slowest piece: a chunk at least the size of the database's largest reads keeps each on one member, and several reads in flight keep the members busy.",
        ),
        false => (
            Severity::Warning,
            format!("the reads are no larger than its chunk of {chunk}, so they straddle chunk boundaries: they are not placed on the chunk"),
            "Align what lies on the array to its chunk (a partition or volume on 1 MiB, a file system with the array's stripe settings); misaligned, every read near a boundary costs two members.",
        ),
    };
    Some(
        Finding::new(
            Kind::Split,
            severity,
            format!(
                "{array} cut each {} read into {:.1} member requests of {} on average: {cause}",
                bytes(size),
                per_io,
                bytes(avg)
            ),
            advice,
        )
        .with("requests_per_io", per_io)
        .with("avg_request_bytes", avg)
        .with("issued_bytes", size),
    )
}

/// A member whose requests took this many times the others' median, and
/// [`SLOW_MEMBER_MIN_MS`] more, is slow ("One DVD per second": two legs 25% apart).
pub const SLOW_MEMBER: f64 = 2.0;
pub const SLOW_MEMBER_MIN_MS: f64 = 1.0;
/// The fewest requests a member must have served to be judged.
const SLOW_MEMBER_MIN_REQUESTS: u64 = 100;

/// One member of an array over a result's window: its requests and the mean time each took
/// on the device, and how busy it was.
#[derive(Clone, Debug, Default)]
pub struct Member {
    pub name: String,
    pub requests: u64,
    pub ms_per_request: f64,
    pub util: f64,
}

/// `slow-member`: one member of an array whose requests took far longer than the others'
/// (a failing disk, a path through another controller, a throttle): the array waits for it, so
/// the whole array runs at its pace. Named with its latency and utilisation against the
/// others'. Near misses: members within a factor of two of each other, or a few milliseconds
/// apart on a slow medium, or too few requests, are not named.
pub fn slow_member(array: &str, members: &[Member]) -> Option<Finding> {
    let judged: Vec<&Member> = members
        .iter()
        .filter(|m| m.requests >= SLOW_MEMBER_MIN_REQUESTS && m.ms_per_request.is_finite())
        .collect();
    if judged.len() < 2 {
        return None;
    }
    let (slowest, others): (Vec<&Member>, Vec<&Member>) = {
        let worst = judged
            .iter()
            .max_by(|a, b| a.ms_per_request.total_cmp(&b.ms_per_request))?;
        judged.iter().partition(|m| std::ptr::eq(**m, *worst))
    };
    let slow = slowest.first()?;
    let mut rest: Vec<f64> = others.iter().map(|m| m.ms_per_request).collect();
    rest.sort_by(f64::total_cmp);
    let median = rest[rest.len() / 2];
    if slow.ms_per_request < SLOW_MEMBER * median
        || slow.ms_per_request - median < SLOW_MEMBER_MIN_MS
    {
        return None;
    }
    let util_rest = others.iter().map(|m| m.util).sum::<f64>() / others.len() as f64;
    Some(
        Finding::new(
            Kind::SlowMember,
            Severity::Warning,
            format!(
                "{} of {array} took {:.2} ms a request against {:.2} ms for the other members (busy {} of the time against {}): the array waits for it",
                slow.name,
                slow.ms_per_request,
                median,
                pct(slow.util),
                pct(util_rest)
            ),
            "Check that member: its SMART data and error log, its path (controller, cable, a throttle), whether it rebuilds; then measure it alone (iogauge run /dev/MEMBER) against another.",
        )
        .with("member_ms_per_request", slow.ms_per_request)
        .with("others_ms_per_request", median)
        .with("member_util", slow.util)
        .with("others_util", util_rest),
    )
}

/// Busiest over idlest member beyond this is an imbalance ("One DVD per second" found its two
/// controller legs 25% apart).
pub const IMBALANCE: f64 = 1.2;

/// The members of an array (md, dm, LVM, btrfs) and the bytes each moved: each one's share,
/// and an imbalance when the busiest moved more than [`IMBALANCE`] times the idlest.
pub fn stripe_imbalance(
    array: &str,
    members: &[(String, f64)],
    why: Option<&str>,
) -> Option<Finding> {
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
    let idle: Vec<&str> = members
        .iter()
        .filter(|m| m.1 <= 0.0)
        .map(|m| m.0.as_str())
        .collect();
    let spread = match idle.as_slice() {
        [] => format!("the busiest moved {:.1}× the idlest", hi / lo),
        [one] => format!("{one} moved nothing"),
        many => format!("{} moved nothing", many.join(" and ")),
    };
    let mut f = Finding::new(
        Kind::Imbalance,
        Severity::Warning,
        format!(
            "{array}'s members did unequal work: {} ({spread}){}",
            shares.join(", "),
            why.map(|w| format!(": {w}")).unwrap_or_default()
        ),
        "Check the stripe's layout and chunk size against the IO size, and the members' paths (controller, port): the slowest member sets the pace.",
    );
    for (n, b) in members {
        f = f.with(&format!("share_{n}"), b / total);
    }
    Some(f)
}

/// Which queue limit cuts an IO of `size` bytes into pieces, and into how many at least (1
/// when none does). With `huge_buffers` an IO's memory is contiguous, so its segments are as
/// long as `max_segment_size` allows, not 4 KiB pages.
fn split_limit(d: &Seen, size: f64, huge_buffers: bool) -> (String, f64) {
    if let Some(kb) = d.max_sectors_kb {
        let most = (kb * 1024) as f64;
        if most > 0.0 && size > most {
            return (format!("max_sectors_kb is {kb}"), (size / most).ceil());
        }
    }
    if let Some(seg) = d.max_segments.filter(|_| !huge_buffers) {
        if seg > 0 && size / 4096.0 > seg as f64 {
            return (
                format!(
                    "max_segments is {seg}, fewer than the 4 KiB pieces of a {} buffer",
                    bytes(size)
                ),
                (size / (4096.0 * seg as f64)).ceil(),
            );
        }
    }
    if let Some(s) = d.max_segment_size {
        if s > 0 && (s as f64) < size {
            // One segment of this size per request at the least: whatever the segment count.
            let segs = d.max_segments.unwrap_or(1).max(1) as f64;
            return (
                format!("max_segment_size is {}", bytes(s as f64)),
                (size / (s as f64 * segs)).ceil(),
            );
        }
    }
    ("no queue limit in sysfs explains it".into(), 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10-second measurement.
    fn issued(reads: f64, size: f64) -> Issued {
        Issued {
            reads_per_s: reads,
            read_bytes_per_s: reads * size,
            direct: true,
            in_flight: 4,
            ios: (reads * 10.0) as u64,
            measured_s: 10.0,
            ..Issued::default()
        }
    }

    fn writes(n: f64, size: f64) -> Issued {
        Issued {
            writes_per_s: n,
            write_bytes_per_s: n * size,
            direct: true,
            in_flight: 1,
            ios: (n * 10.0) as u64,
            measured_s: 10.0,
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
            window_s: 10.1,
            ..Seen::default()
        }
    }

    /// A disk other stacks share: more than the stack sent it is theirs (`other-io`, naming
    /// them), never amplification; what the stack's own loop device moved, amplified by its
    /// file system, is still amplification; a shared disk moving what it was sent says nothing.
    #[test]
    fn a_shared_disks_excess_is_the_other_stacks() {
        let k = 4096.0;
        let shared = |reads: f64| Seen {
            shared_with: vec!["loop5 over /var/tmp/b.img".into()],
            ..seen("vda", reads, k)
        };
        let f = device_findings(
            &issued(10_000.0, k),
            &[seen("loop3", 10_000.0, k), shared(40_000.0)],
        );
        assert_eq!(kinds(&f), [Kind::OtherIo]);
        assert!(
            f[0].summary.contains("loop5 over /var/tmp/b.img"),
            "{}",
            f[0].summary
        );
        // Near miss: the disk moved what the stack sent it.
        let f = device_findings(
            &issued(10_000.0, k),
            &[seen("loop3", 10_000.0, k), shared(10_400.0)],
        );
        assert!(f.is_empty(), "{:?}", kinds(&f));
        // The stack's own excess, above the shared disk, is still the file system's.
        let mut w = writes(1_000.0, k);
        w.others = Some(OthersSeen::default());
        w.filesystem = Some("ext4".into());
        let own = |name: &str, n: f64| Seen {
            writes_per_s: n,
            write_bytes_per_s: n * k,
            ..seen(name, 0.0, k)
        };
        let mut disk = own("vda", 3_050.0);
        disk.shared_with = vec!["loop5 over /var/tmp/b.img".into()];
        let f = device_findings(&w, &[own("loop3", 3_000.0), disk]);
        assert_eq!(kinds(&f), [Kind::Amplification], "{f:?}");
    }

    fn kinds(f: &[Finding]) -> Vec<Kind> {
        f.iter().map(|f| f.kind).collect()
    }

    /// A mirror's members, summed at the bottom of the stack: each member has its share and
    /// the sum twice the writes. Nothing went missing and nobody else wrote: nothing is named.
    /// The same sum short of the bytes issued is what never reached storage.
    #[test]
    fn the_sum_of_an_arrays_members_is_the_bottom_and_not_other_io() {
        let mib = 1048576.0;
        let w = writes(100.0, mib);
        let member = |name: &str, n: f64| Seen {
            name: name.into(),
            writes_per_s: n,
            write_bytes_per_s: n * mib,
            window_s: 10.1,
            ..Seen::default()
        };
        let mirror = [
            member("md0", 100.0),
            member("vda", 100.0),
            member("vdb", 100.0),
            Seen {
                aggregate: true,
                ..member("vda, vdb", 200.0)
            },
        ];
        assert_eq!(kinds(&device_findings(&w, &mirror)), []);
        let short = [
            member("md0", 100.0),
            member("vda", 20.0),
            member("vdb", 20.0),
            Seen {
                aggregate: true,
                ..member("vda, vdb", 40.0)
            },
        ];
        let f = device_findings(&w, &short);
        assert_eq!(kinds(&f), [Kind::Absorbed]);
        assert!(
            f[0].summary.contains("never reached vda, vdb"),
            "{}",
            f[0].summary
        );
    }

    /// Reads cut across an array's members: by the layout (larger than the chunk, an info),
    /// by misplacement (no larger than the chunk, a warning); whole reads, a parity array that
    /// also writes, and members reading more than was asked are not judged.
    #[test]
    fn an_array_cuts_reads_larger_than_its_chunk_or_placed_off_it() {
        let k = 1024.0;
        let reads = issued(1000.0, 256.0 * k);
        let f = chunk_split(
            &reads,
            "md0",
            Some(65536),
            false,
            4000.0,
            1000.0 * 256.0 * k,
        )
        .unwrap();
        assert_eq!((f.kind, f.severity), (Kind::Split, Severity::Info));
        assert!(
            f.summary.contains("into 4.0 member requests of 64 KiB"),
            "{}",
            f.summary
        );
        let off = issued(1000.0, 64.0 * k);
        let f = chunk_split(&off, "md0", Some(65536), false, 2000.0, 1000.0 * 64.0 * k).unwrap();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.summary.contains("straddle chunk boundaries"),
            "{}",
            f.summary
        );
        // Near misses.
        assert!(chunk_split(&off, "md0", Some(65536), false, 1050.0, 1000.0 * 64.0 * k).is_none());
        let mut mixed = off.clone();
        mixed.writes_per_s = 10.0;
        assert!(chunk_split(&mixed, "md0", Some(65536), true, 2000.0, 1000.0 * 64.0 * k).is_none());
        assert!(chunk_split(&off, "md0", Some(65536), false, 4000.0, 2000.0 * 64.0 * k).is_none());
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
        assert!(stripe_imbalance("md0", &even, None).is_none());
        let legs = [("sda".to_string(), 40e6), ("sdb".to_string(), 60e6)];
        let f = stripe_imbalance("md0", &legs, None).unwrap();
        assert_eq!(f.kind, Kind::Imbalance);
        assert!(f.summary.contains("sda 40%, sdb 60%"), "{}", f.summary);
        assert!((f.evidence["share_sdb"] - 0.6).abs() < 1e-9);
        assert!(
            stripe_imbalance("md0", &legs[..1], None).is_none(),
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
        let f = device_findings(&issued(1000.0, mib), std::slice::from_ref(&d));
        assert!(f[0].summary.contains("max_segments"), "{}", f[0].summary);
        // The near miss: the same counters under buffered reads are the page cache's
        // readahead, sized by the kernel, not a split of iogauge's IOs.
        let buffered = Issued {
            direct: false,
            ..issued(1000.0, mib)
        };
        assert!(device_findings(&buffered, &[d]).is_empty());
    }

    /// Through a file system, a split beyond what the queue limits explain is the file
    /// system's: an info naming it (btrfs over a 4Kn RAM loop, issue 37: 2.76 requests of
    /// 365 KiB for each 1 MiB read, where max_segments explains two). The near misses: the same
    /// counters on the raw device, and a file system whose split a limit explains, warn.
    #[test]
    fn a_file_systems_own_cutting_is_an_info_naming_it() {
        let mib = 1048576.0;
        let mut d = seen("loop1", 2760.0, mib / 2.76);
        d.max_sectors_kb = Some(1280);
        d.max_segments = Some(128);
        d.max_segment_size = Some(65536);
        let mut on_fs = issued(1000.0, mib);
        on_fs.filesystem = Some("btrfs".into());
        let f = device_findings(&on_fs, std::slice::from_ref(&d));
        assert_eq!(kinds(&f), [Kind::Split]);
        assert_eq!(f[0].severity, Severity::Info, "{}", f[0].summary);
        assert!(
            f[0].summary
                .starts_with("btrfs reached loop1 with 2.76 requests"),
            "{}",
            f[0].summary
        );
        assert!(
            f[0].summary.contains("which explains 2"),
            "{}",
            f[0].summary
        );
        let raw = device_findings(&issued(1000.0, mib), std::slice::from_ref(&d));
        assert_eq!(raw[0].severity, Severity::Warning, "{}", raw[0].summary);
        // On huge pages a 1 MiB buffer is 16 segments of 64 KiB: max_segments explains nothing.
        let two = seen("loop1", 1860.0, mib / 1.86);
        let two = Seen {
            max_segments: Some(128),
            max_segment_size: Some(65536),
            ..two
        };
        on_fs.huge_buffers = true;
        let f = device_findings(&on_fs, std::slice::from_ref(&two));
        assert_eq!(f[0].severity, Severity::Info, "{}", f[0].summary);
        assert!(f[0].summary.contains("no queue limit"), "{}", f[0].summary);
        on_fs.huge_buffers = false;
        let f = device_findings(&on_fs, &[two]);
        assert_eq!(f[0].severity, Severity::Warning, "{}", f[0].summary);
        // Two pieces each, as max_segments allows: the limit's split, a warning on ext4 too.
        let two = seen("loop1", 2000.0, mib / 2.0);
        let mut two = Seen {
            max_segments: Some(128),
            ..two
        };
        two.max_sectors_kb = Some(1280);
        let mut ext4 = issued(1000.0, mib);
        ext4.filesystem = Some("ext4".into());
        let f = device_findings(&ext4, &[two]);
        assert_eq!(f[0].severity, Severity::Warning, "{}", f[0].summary);
        assert!(
            f[0].summary.contains("max_segments is 128"),
            "{}",
            f[0].summary
        );
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

    /// btrfs under fdatasync: the device wrote 7× what iogauge issued, and no other process
    /// moved anything. That is the file system's own work for each sync, an amplification, not
    /// someone else's IO. With another process moving the excess it is other-io, named.
    #[test]
    fn the_kernels_own_writes_are_amplification_and_another_process_is_other_io() {
        let k16 = 16384.0;
        let mut iss = writes(1700.0, k16);
        iss.syncs_per_s = 1700.0;
        iss.filesystem = Some("btrfs".into());
        iss.others = Some(OthersSeen::default());
        let mut d = seen("loop0", 0.0, 0.0);
        d.writes_per_s = 9000.0;
        d.flushes_per_s = 1700.0;
        d.write_bytes_per_s = 7.0 * 1700.0 * k16;
        let f = device_findings(&iss, std::slice::from_ref(&d));
        assert_eq!(kinds(&f), [Kind::Amplification], "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert!((f[0].evidence["amplification"] - 7.0).abs() < 1e-9);
        assert!(
            f[0].summary
                .contains("7.0× the writes iogauge issued, 112 KiB for each sync")
                && f[0]
                    .summary
                    .contains("the file system (btrfs) and the kernel"),
            "{}",
            f[0].summary
        );
        // Another process moved most of the excess: other-io, with its name.
        iss.others = Some(OthersSeen {
            write_bytes_per_s: 5.0 * 1700.0 * k16,
            top: vec![("dd (pid 4242)".into(), 5.0 * 1700.0 * k16)],
            ..OthersSeen::default()
        });
        let f = device_findings(&iss, std::slice::from_ref(&d));
        assert_eq!(kinds(&f), [Kind::OtherIo], "{f:?}");
        assert!(f[0].summary.contains("dd (pid 4242)"), "{}", f[0].summary);
        // Near miss: a little other IO, well under half the excess, is still amplification.
        iss.others = Some(OthersSeen {
            write_bytes_per_s: 0.2 * 1700.0 * k16,
            ..OthersSeen::default()
        });
        assert_eq!(kinds(&device_findings(&iss, &[d])), [Kind::Amplification]);
    }

    /// Direct IO to a raw device: the kernel adds nothing of its own there, so reads the device
    /// moved beyond iogauge's are another's even when no process's accounting shows them (a
    /// reader that ended unreaped as the window closed): other-io, never amplification. Near
    /// misses: the same device under a file system, or buffered (readahead), is amplification;
    /// a member below the device may still amplify.
    #[test]
    fn a_raw_devices_excess_under_direct_io_is_anothers_even_uncounted() {
        let k = 4096.0;
        let mut iss = issued(10_000.0, k);
        iss.others = Some(OthersSeen::default());
        let top = seen("loop4", 30_000.0, k);
        let f = device_findings(&iss, std::slice::from_ref(&top));
        assert_eq!(kinds(&f), [Kind::OtherIo], "{f:?}");
        assert!(
            f[0].summary
                .contains("to which the kernel adds none of its own"),
            "{}",
            f[0].summary
        );
        iss.filesystem = Some("ext4".into());
        let f = device_findings(&iss, std::slice::from_ref(&top));
        assert_eq!(kinds(&f), [Kind::Amplification], "{f:?}");
        iss.filesystem = None;
        iss.direct = false;
        let f = device_findings(&iss, std::slice::from_ref(&top));
        assert_eq!(kinds(&f), [Kind::Amplification], "{f:?}");
        // An array's member below the raw device: its excess may be the array's own.
        iss.direct = true;
        let f = device_findings(&iss, &[seen("md0", 10_000.0, k), seen("vdb", 30_000.0, k)]);
        assert_eq!(kinds(&f), [Kind::Amplification], "{f:?}");
    }

    /// More requests, each smaller, *and* 26% more bytes than issued is not a split: the
    /// bytes of a split add up to what was issued.
    #[test]
    fn a_split_moves_the_bytes_issued() {
        let k32 = 32768.0;
        let d = seen("vda", 2170.0, 18.6 * 1024.0);
        assert!(device_findings(&issued(1000.0, k32), &[d]).is_empty());
        let d = seen("vda", 2000.0, k32 / 2.0);
        assert_eq!(
            kinds(&device_findings(&issued(1000.0, k32), &[d])),
            [Kind::Split]
        );
    }

    /// An 8 KiB fdatasync workload: every write arrives whole, and each sync adds an empty
    /// flush the kernel counts as a write too (issue 23: split fired on every sync workload).
    #[test]
    fn the_flushes_of_a_sync_workload_are_no_split() {
        let k8 = 8192.0;
        let mut d = seen("loop1", 0.0, 0.0);
        d.writes_per_s = 2000.0;
        d.flushes_per_s = 1000.0;
        d.write_bytes_per_s = 1000.0 * k8;
        assert!(device_findings(&writes(1000.0, k8), &[d.clone()]).is_empty());
        // A near miss the other way: the same counters without flushes are a real split.
        d.flushes_per_s = 0.0;
        assert_eq!(
            kinds(&device_findings(&writes(1000.0, k8), &[d])),
            [Kind::Split]
        );
    }

    /// A few IOs, a short cell, or a device window much longer than the measurement judge
    /// nothing (issue 23: "93% of the reads never reached vda" from 16 IOs).
    #[test]
    fn too_little_evidence_judges_nothing() {
        let k = 4096.0;
        let absorbed = [seen("loop0", 10_000.0, k), seen("vda", 100.0, k)];
        let mut few = issued(10_000.0, k);
        few.ios = 16;
        assert!(device_findings(&few, &absorbed).is_empty());
        let mut short = issued(10_000.0, k);
        short.measured_s = 0.0077;
        assert!(device_findings(&short, &absorbed).is_empty());
        let mut wide = absorbed.clone();
        wide[1].window_s = 30.0;
        assert!(device_findings(&issued(10_000.0, k), &wide).is_empty());
        // The same evidence over a long enough, matching window is judged.
        assert_eq!(
            kinds(&device_findings(&issued(10_000.0, k), &absorbed)),
            [Kind::Absorbed]
        );
    }

    /// Someone else's IO on the stack: other-io alone, never merged or absorbed beside it
    /// (issue 23: other-io and merged with "use O_DIRECT" on a direct cell).
    #[test]
    fn other_io_is_not_contradicted() {
        let k = 4096.0;
        let mut d = seen("vda", 500.0, 20.0 * k);
        d.read_bytes_per_s = 500.0 * 400.0 * k;
        let f = device_findings(&issued(10_000.0, k), &[d]);
        assert_eq!(kinds(&f), [Kind::OtherIo]);
        // Merged on a direct run does not advise direct IO.
        let f = device_findings(&issued(10_000.0, k), &[seen("vda", 500.0, 20.0 * k)]);
        assert_eq!(kinds(&f), [Kind::Merged]);
        assert!(!f[0].advice.contains("Use O_DIRECT"), "{}", f[0].advice);
    }

    /// 4 KiB random writes on a 3-disk RAID5 with a 64 KiB chunk: the members read about as
    /// much as was written (measured in a guest: ~1,000 member reads for 1,000 writes). Full
    /// stripe writes read nothing, RAID10 is not judged, a workload that reads is not judged.
    #[test]
    fn parity_arrays_that_read_to_write_are_named() {
        let k4 = 4096.0;
        let raid5 = |reads: f64| ParityArray {
            name: "md100".into(),
            level: "raid5".into(),
            chunk_bytes: Some(65536),
            data_members: 2,
            member_read_bytes_per_s: reads,
            member_write_bytes_per_s: 2.0 * 2000.0 * k4,
        };
        let iss = writes(2000.0, k4);
        let f = read_modify_write(&iss, &raid5(2000.0 * k4)).unwrap();
        assert_eq!(f.kind, Kind::ReadModifyWrite);
        assert!(
            f.summary
                .contains("smaller than its full stripe of 128 KiB"),
            "{}",
            f.summary
        );
        assert!((f.evidence["read_per_written"] - 1.0).abs() < 1e-9);
        // Near misses.
        assert!(read_modify_write(&iss, &raid5(0.02 * 2000.0 * k4)).is_none());
        let raid10 = ParityArray {
            level: "raid10".into(),
            ..raid5(2000.0 * k4)
        };
        assert!(read_modify_write(&iss, &raid10).is_none());
        let mixed = Issued {
            reads_per_s: 100.0,
            ..writes(2000.0, k4)
        };
        assert!(read_modify_write(&mixed, &raid5(2000.0 * k4)).is_none());
    }

    /// One member behind a 20 ms delay among members at 0.3 ms: named with both figures. Near
    /// misses: 30% apart, or two members at 0.1 and 0.5 ms (5× but under a millisecond apart),
    /// or too few requests.
    #[test]
    fn a_slow_member_is_named_and_near_misses_are_not() {
        let m = |name: &str, ms: f64, requests: u64| Member {
            name: name.into(),
            requests,
            ms_per_request: ms,
            util: (ms / 25.0).min(1.0),
        };
        let f = slow_member(
            "md100",
            &[
                m("dm-0", 0.3, 900),
                m("dm-1", 20.4, 900),
                m("dm-2", 0.31, 900),
            ],
        )
        .unwrap();
        assert_eq!(f.kind, Kind::SlowMember);
        assert!(
            f.summary.starts_with("dm-1 of md100 took 20.40 ms"),
            "{}",
            f.summary
        );
        assert!(slow_member("md100", &[m("a", 1.0, 900), m("b", 1.3, 900)]).is_none());
        assert!(slow_member("md100", &[m("a", 0.1, 900), m("b", 0.5, 900)]).is_none());
        assert!(slow_member("md100", &[m("a", 0.3, 900), m("b", 20.0, 50)]).is_none());
    }
}
