//! The devices' side of a result: what iogauge issued against what each device of the
//! target's stack counted, and what the members of each array under it did (md, a
//! device-mapper stripe, a multi-device btrfs).
//!
//! A stack is not always a chain. An array has several members, and a multi-device btrfs
//! spreads IO over all its devices with no device above them: the IO entering the stack is
//! then the sum over its top devices, and the IO reaching the bottom the sum over its bottom
//! devices (a member alone sees only its share, which read as "absorbed" before).

use crate::model::{DeviceDoc, ResultDoc};
use iogauge_analyze::{Finding, Issued, Kind, Seen};
use iogauge_sysinfo::{DeviceRole, SystemInfo, TargetInfo};

/// btrfs's stripe length (`BTRFS_STRIPE_LEN`): the chunk of its striped and parity profiles.
const BTRFS_STRIPE: u64 = 64 * 1024;

/// What the devices saw against what was issued (crates/analyze `device_findings`), and what
/// each array's members did. The null engine issues nothing to a device; a result without
/// device counters (older runs, `--files` cells) is not judged, except a direct-IO target with
/// no block device under it at all.
pub(super) fn findings(r: &ResultDoc, system: &SystemInfo) -> Vec<Finding> {
    let w = &r.workload;
    if w.engine == "null" || r.runtime_s <= 0.0 {
        return Vec::new();
    }
    let secs = r.runtime_s;
    let op = |o: Option<&crate::model::OpDoc>| {
        o.map_or((0.0, 0.0), |o| (o.ios as f64 / secs, o.bytes as f64 / secs))
    };
    let (reads, read_bytes) = op(r.read.as_ref());
    let (writes, write_bytes) = op(r.write.as_ref());
    let issued = iogauge_analyze::Issued {
        reads_per_s: reads,
        writes_per_s: writes,
        read_bytes_per_s: read_bytes,
        write_bytes_per_s: write_bytes,
        direct: w.direct,
        in_flight: w.threads * w.iodepth,
        ios: r.ios,
        measured_s: secs,
        syncs_per_s: r.sync.as_ref().map_or(0.0, |s| s.count as f64 / secs),
        // Runs stored before the devices' window opened at the measurement's start watched
        // them from before the ramp and the complete batch's trial.
        lead_s: r.repeats.len().max(1) as f64
            * (w.ramp_s
                + match r.engine.complete_trial {
                    Some(_) => crate::workload::CALIBRATION.as_secs_f64(),
                    None => 0.0,
                }),
        // Over the devices' window, as the devices' rates are.
        others: r.others.as_ref().map(|o| {
            let t = r.devices.first().map_or(secs, |d| d.elapsed_s).max(1e-9);
            iogauge_analyze::OthersSeen {
                read_bytes_per_s: o.read_bytes as f64 / t,
                write_bytes_per_s: o.write_bytes as f64 / t,
                unreadable: o.unreadable,
                top: o
                    .top
                    .iter()
                    .map(|p| {
                        (
                            format!(
                                "{} (pid {}){}",
                                crate::units::printable(&p.command),
                                p.pid,
                                match p.through_children {
                                    true => " through processes it started",
                                    false => "",
                                }
                            ),
                            (p.read_bytes + p.write_bytes) as f64 / t,
                        )
                    })
                    .collect(),
            }
        }),
        filesystem: system.target.as_ref().and_then(|t| t.filesystem.clone()),
        huge_buffers: r.engine.buffers_on_huge_pages(),
    };
    let no_device = system
        .target
        .as_ref()
        .is_some_and(|t| t.devices.is_empty() && t.filesystem.is_some());
    if r.devices.is_empty() && !no_device {
        return Vec::new();
    }
    let Some(stack) = stack(r, system.target.as_ref()) else {
        return Vec::new();
    };
    let mut found = iogauge_analyze::device_findings(&issued, &stack);
    for a in system.target.iter().flat_map(arrays) {
        found.extend(a.findings(&issued, r));
    }
    // The reads a parity array made to write are named as its read-modify-write, not again as
    // the file system's reads on iogauge's behalf (a multi-device btrfs counts them at its top).
    if found.iter().any(|f| f.kind == Kind::ReadModifyWrite) {
        found.retain(|f| {
            f.kind != Kind::Amplification || f.evidence.get("of_reads").copied() != Some(1.0)
        });
    }
    found
}

/// One device's counters as rates over its window; `None` when they could not be read.
fn seen(d: &DeviceDoc) -> Option<Seen> {
    let (Some(rd), Some(wr), Some(rb), Some(wb)) = (d.reads, d.writes, d.read_bytes, d.write_bytes)
    else {
        return None;
    };
    let t = d.elapsed_s.max(1e-9);
    Some(Seen {
        name: d.name.clone(),
        reads_per_s: rd as f64 / t,
        writes_per_s: wr as f64 / t,
        read_bytes_per_s: rb as f64 / t,
        write_bytes_per_s: wb as f64 / t,
        flushes_per_s: d.flushes.unwrap_or(0) as f64 / t,
        window_s: d.elapsed_s,
        avg_queue_depth: d.avg_queue_depth.unwrap_or(0.0),
        max_sectors_kb: d.limits.max_sectors_kb,
        max_segments: d.limits.max_segments,
        max_segment_size: d.limits.max_segment_size,
        nr_requests: d.limits.nr_requests,
        scheduler: d.limits.scheduler.clone(),
        aggregate: false,
        shared_with: Vec::new(),
    })
}

/// Several devices as one: their rates added, over the longest window.
fn sum(stack: &[Seen], names: &[String], aggregate: bool) -> Option<Seen> {
    let parts: Vec<&Seen> = names
        .iter()
        .filter_map(|n| stack.iter().find(|s| &s.name == n))
        .collect();
    if parts.len() != names.len() {
        return None;
    }
    let add = |f: fn(&Seen) -> f64| parts.iter().map(|s| f(s)).sum::<f64>();
    Some(Seen {
        name: names.join(", "),
        reads_per_s: add(|s| s.reads_per_s),
        writes_per_s: add(|s| s.writes_per_s),
        read_bytes_per_s: add(|s| s.read_bytes_per_s),
        write_bytes_per_s: add(|s| s.write_bytes_per_s),
        flushes_per_s: add(|s| s.flushes_per_s),
        window_s: parts.iter().map(|s| s.window_s).fold(0.0, f64::max),
        avg_queue_depth: add(|s| s.avg_queue_depth),
        aggregate,
        ..Seen::default()
    })
}

/// The stack as crates/analyze reads it, top first and bottom last: each device, with the sum
/// over a multi-device btrfs's devices in front and the sum over several bottom devices at the
/// end. `None` when a device's counters could not be read (nothing is judged then).
fn stack(r: &ResultDoc, target: Option<&TargetInfo>) -> Option<Vec<Seen>> {
    let mut out = r.devices.iter().map(seen).collect::<Option<Vec<Seen>>>()?;
    let Some(t) = target else {
        return Some(out);
    };
    for s in &mut out {
        if let Some(b) = t.devices.iter().find(|b| b.name == s.name) {
            s.shared_with = b.shared_with.clone();
        }
    }
    // Documents before `below` was recorded hold a chain: its last device is the bottom.
    if t.btrfs.is_none() && t.devices.iter().all(|d| d.below.is_empty()) {
        return Some(out);
    }
    let bottom: Vec<String> = t
        .devices
        .iter()
        .filter(|d| d.below.is_empty())
        .map(|d| d.name.clone())
        .collect();
    let bottom_sum = (bottom.len() > 1).then(|| sum(&out, &bottom, true));
    // One device at the bottom of several branches (three loop devices over files on one disk)
    // is the lowest whatever order the walk listed the devices in: it goes last, where the
    // lowest device is read, and not a branch's own top that came after it in the list.
    if let [only] = bottom.as_slice() {
        if let Some(i) = out.iter().position(|s| &s.name == only) {
            let low = out.remove(i);
            out.push(low);
        }
    }
    if let Some(v) = t.btrfs.as_ref().filter(|v| v.members.len() > 1) {
        // What entered the devices: each copy of a mirror and the parity counted, and the
        // stripe's pieces, so it is judged for what went missing only (`aggregate`).
        out.insert(0, sum(&out, &v.members, true)?);
    }
    if let Some(s) = bottom_sum {
        out.push(s?);
    }
    Some(out)
}

/// What a result says about the first array under its target, for the `scaling` finding of a
/// member-count sweep: each member's share of time busy, and how much of their time iogauge's
/// submitting threads and the array's busiest kernel thread spent on a CPU.
pub fn scaling_evidence(r: &ResultDoc, system: &SystemInfo) -> iogauge_analyze::ScalingEvidence {
    let members_util = system
        .target
        .iter()
        .flat_map(arrays)
        .next()
        .map(|a| {
            a.members
                .iter()
                .filter_map(|m| r.devices.iter().find(|d| &d.name == m))
                .filter_map(|d| Some((d.name.clone(), d.util?)))
                .collect()
        })
        .unwrap_or_default();
    // A thread that issues IO as fast as a CPU lets it is on a CPU or ready for one all the
    // time: on a busy machine it waits for a CPU rather than runs, and the CPU is the limit all
    // the same (schedstat's run delay, bin by bin, where the kernel keeps it).
    let threads = f64::from(r.workload.threads.max(1));
    let f = &r.fine;
    let submit_cpu = match f.cpu_run.len() == f.cpu_wait.len() && !f.cpu_run.is_empty() {
        true => Some(
            f.cpu_run
                .iter()
                .zip(&f.cpu_wait)
                .map(|(r, w)| f64::from(r + w))
                .sum::<f64>()
                / f.cpu_run.len() as f64
                / threads,
        ),
        false => (r.runtime_s > 0.0).then(|| (r.cpu.user_s + r.cpu.sys_s) / r.runtime_s / threads),
    }
    .filter(|c| c.is_finite());
    let kernel_thread = r
        .kernel_threads
        .iter()
        .max_by(|a, b| a.cpu.total_cmp(&b.cpu))
        .map(|k| (k.name.clone(), k.cpu));
    let shared_below = system
        .target
        .as_ref()
        .and_then(|t| Some((t, arrays(t).into_iter().next()?)))
        .and_then(|(t, a)| shared_below(t, &a.members))
        .map(|name| {
            let util = r
                .devices
                .iter()
                .find(|d| d.name == name)
                .and_then(|d| d.util);
            (name, util)
        });
    iogauge_analyze::ScalingEvidence {
        members_util,
        submit_cpu,
        kernel_thread,
        shared_below,
    }
}

/// The highest device that lies beneath every one of `members` (each member's devices below
/// it, followed down the recorded stack), if they share one.
fn shared_below(t: &TargetInfo, members: &[String]) -> Option<String> {
    let under = |m: &String| {
        let mut seen: Vec<String> = Vec::new();
        let mut todo: Vec<String> = t
            .devices
            .iter()
            .find(|d| &d.name == m)
            .map(|d| d.below.clone())
            .unwrap_or_default();
        while let Some(n) = todo.pop() {
            if seen.contains(&n) || seen.len() > 64 {
                continue;
            }
            if let Some(d) = t.devices.iter().find(|d| d.name == n) {
                todo.extend(d.below.iter().cloned());
            }
            seen.push(n);
        }
        seen
    };
    let first = under(members.first()?);
    let rest: Vec<Vec<String>> = members.iter().skip(1).map(under).collect();
    if members.len() < 2 {
        return None;
    }
    // The highest: listed first in the walk of the first member.
    first
        .into_iter()
        .find(|n| rest.iter().all(|r| r.contains(n)))
}

/// An array under the target: md, a device-mapper volume over several devices (an LVM
/// stripe), or a multi-device btrfs.
struct Array {
    name: String,
    /// md's or btrfs's level; `None` for a device-mapper stripe.
    level: Option<String>,
    chunk_bytes: Option<u64>,
    members: Vec<String>,
    btrfs: bool,
}

fn arrays(t: &TargetInfo) -> Vec<Array> {
    let mut out: Vec<Array> = t
        .devices
        .iter()
        .filter_map(|d| match d.role {
            DeviceRole::Md => Some(Array {
                name: d.name.clone(),
                level: d.md_level.clone(),
                chunk_bytes: d.md_chunk_bytes,
                members: d.md_members.clone(),
                btrfs: false,
            }),
            DeviceRole::Dm if d.below.len() > 1 => Some(Array {
                name: d.dm_name.clone().unwrap_or_else(|| d.name.clone()),
                level: None,
                chunk_bytes: d.minimum_io_size.map(u64::from),
                members: d.below.clone(),
                btrfs: false,
            }),
            _ => None,
        })
        .collect();
    if let Some(v) = t.btrfs.as_ref().filter(|v| v.members.len() > 1) {
        out.push(Array {
            name: format!(
                "the btrfs at {}",
                t.mount_point.as_deref().unwrap_or(v.fsid.as_str())
            ),
            level: v.data_profile.clone(),
            chunk_bytes: Some(BTRFS_STRIPE),
            members: v.members.clone(),
            btrfs: true,
        });
    }
    out
}

impl Array {
    /// Copies of each block (RAID1 and RAID10 of md and btrfs): reads go to one copy of
    /// the driver's choosing, so only the writes must be spread evenly.
    fn mirrored(&self) -> bool {
        self.level
            .as_deref()
            .is_some_and(|l| l.starts_with("raid1") || l == "dup")
    }

    /// Why members of a btrfs mirror did nothing: btrfs keeps each block group (1 GiB of
    /// data) of raid1 on two of its devices (raid1c3 three, raid1c4 four), so a test file
    /// within one block group reaches only those, however many devices the file system has.
    fn why_idle(&self, shares: &[(String, f64)]) -> Option<String> {
        let copies = match (self.btrfs, self.level.as_deref()?) {
            (true, "raid1") => 2,
            (true, "raid1c3") => 3,
            (true, "raid1c4") => 4,
            _ => return None,
        };
        let busy = shares.iter().filter(|s| s.1 > 0.0).count();
        (busy == copies && shares.len() > copies).then(|| {
            format!(
                "btrfs keeps each block group of {} on {copies} of its {} devices, so a test file within one block group (1 GiB of data) reaches only those; measure a larger file to use them all",
                self.level.as_deref().unwrap_or_default(),
                shares.len()
            )
        })
    }

    fn parity(&self) -> Option<usize> {
        match self.level.as_deref()? {
            "raid5" | "raid4" => Some(1),
            "raid6" => Some(2),
            _ => None,
        }
    }

    /// imbalance, slow-member and read-modify-write from the members' counters.
    fn findings(&self, issued: &Issued, r: &ResultDoc) -> Vec<Finding> {
        let docs: Vec<&DeviceDoc> = self
            .members
            .iter()
            .filter_map(|m| r.devices.iter().find(|d| &d.name == m))
            .collect();
        if docs.len() < 2 {
            return Vec::new();
        }
        let mut out = Vec::new();
        let per_s = |d: &DeviceDoc, b: Option<u64>| b.unwrap_or(0) as f64 / d.elapsed_s.max(1e-9);
        let shares: Vec<(String, f64)> = docs
            .iter()
            .map(|d| {
                let moved = match self.mirrored() {
                    true => per_s(d, d.write_bytes),
                    false => per_s(d, d.read_bytes) + per_s(d, d.write_bytes),
                };
                (d.name.clone(), moved)
            })
            .collect();
        out.extend(iogauge_analyze::stripe_imbalance(
            &self.name,
            &shares,
            self.why_idle(&shares).as_deref(),
        ));
        if issued.ios >= iogauge_analyze::MIN_DEVICE_IOS {
            // Each member's requests and the time each took, over the result's window.
            let members: Vec<iogauge_analyze::Member> = docs
                .iter()
                .map(|d| {
                    let (reads, writes) = (d.reads.unwrap_or(0), d.writes.unwrap_or(0));
                    let ms = d.read_ms_per_io.unwrap_or(0.0) * reads as f64
                        + d.write_ms_per_io.unwrap_or(0.0) * writes as f64;
                    iogauge_analyze::Member {
                        name: d.name.clone(),
                        requests: reads + writes,
                        ms_per_request: ms / (reads + writes).max(1) as f64,
                        util: d.util.unwrap_or(0.0),
                    }
                })
                .collect();
            out.extend(iogauge_analyze::slow_member(&self.name, &members));
        }
        out.extend(iogauge_analyze::chunk_split(
            issued,
            &self.name,
            self.chunk_bytes,
            self.parity().is_some(),
            docs.iter().map(|d| per_s(d, d.reads)).sum(),
            docs.iter().map(|d| per_s(d, d.read_bytes)).sum(),
        ));
        // A parity array: what its members read while iogauge only wrote.
        if let (Some(parity), Some(level)) = (self.parity(), self.level.clone()) {
            let array = iogauge_analyze::ParityArray {
                name: self.name.clone(),
                level,
                chunk_bytes: self.chunk_bytes,
                data_members: self.members.len().saturating_sub(parity),
                member_read_bytes_per_s: docs.iter().map(|d| per_s(d, d.read_bytes)).sum(),
                member_write_bytes_per_s: docs.iter().map(|d| per_s(d, d.write_bytes)).sum(),
            };
            out.extend(iogauge_analyze::read_modify_write(issued, &array));
        }
        out
    }
}

/// `misaligned`: the placements of the target's stack, judged before any IO (crates/analyze
/// `misaligned`): each device's start against its boundary, a partition of a parity array
/// against its full stripe, the file system's stripe settings against the array under it.
pub fn misaligned(system: &SystemInfo) -> Vec<Finding> {
    let Some(t) = system.target.as_ref() else {
        return Vec::new();
    };
    let by_name = |n: &str| t.devices.iter().find(|d| d.name == n);
    let placed: Vec<iogauge_analyze::Placed> = t
        .devices
        .iter()
        .map(|d| iogauge_analyze::Placed {
            name: d.name.clone(),
            alignment_offset: d.alignment_offset,
            start_bytes: d.partition_start_bytes,
            granularity: d.physical_block_size.max(d.minimum_io_size).map(u64::from),
            parity_array: d
                .partition_start_bytes
                .and(d.below.first())
                .and_then(|b| by_name(b))
                .filter(|b| matches!(b.md_level.as_deref(), Some("raid4" | "raid5" | "raid6")))
                .and_then(|b| Some((b.name.clone(), u64::from(b.optimal_io_size?)))),
        })
        .collect();
    // The file system sits on the stack's first device; judged when that is striped.
    let stripe = t.fs_stripe.as_ref().and_then(|s| {
        let top = t.devices.first()?;
        let chunk = u64::from(top.minimum_io_size?);
        let full = u64::from(top.optimal_io_size?);
        (full > chunk).then(|| iogauge_analyze::Stripe {
            fs: t.filesystem.clone().unwrap_or_default(),
            device: t.mount_source.clone().unwrap_or_else(|| top.name.clone()),
            unit_bytes: s.unit_bytes,
            width_bytes: s.width_bytes,
            chunk_bytes: chunk,
            full_stripe_bytes: full,
            block_bytes: s.block_bytes,
        })
    });
    iogauge_analyze::misaligned(&placed, stripe.as_ref())
}
