//! Changes of regime: a run whose rate moved to another level and stayed there — a cloud
//! volume's burst credits running out, an SSD's SLC write cache filling, a drive throttling
//! when hot, or the other way, a cache warming up or a throttle lifted. "100K+ IOPS on
//! semi-commodity hardware" saw performance "degraded later" with no way to tell when; a run
//! that straddles the change reports an average that describes neither level.
//!
//! Method: one mean-shift change point by least squares (the binary segmentation step of
//! Scott & Knott 1974; Killick, Fearnhead & Eckley 2012, "Optimal detection of changepoints
//! with a linear computational cost", for the penalised cost). On the completions per bin the
//! split `t` that most reduces the squared error, `t(n−t)/n · (μ₁−μ₂)²`, is taken when the
//! reduction exceeds a penalty of [`PENALTY`] · σ² · ln n (σ from the median absolute first
//! difference, so the change itself does not inflate it) and the change is material: the two
//! levels differ by at least `regime_frac` of the higher one (the materiality floor, as the
//! outlier rule has one). A change is a regime only if it stays: the later part, split again
//! the same way, must not come back towards the earlier level (that is a dip, which `stall`
//! names when it is deep), and each part must last at least [`MIN_PART_S`] and
//! [`MIN_PART_BINS`] bins, the later one twice that (long enough to have come back).
//!
//! Bins are widened first (as `stalls` does) until the median bin holds [`MIN_BIN_IOS`] IOs, so
//! a slow device's Poisson noise is not taken for a level.
//!
//! The device is not the only thing that can change level: iogauge's own threads can lose the
//! CPU to other work (another benchmark, the database beside it, a build). With iogauge's CPU
//! time in each bin, on a CPU and runnable but waiting for one (the kernel's schedstat), a
//! change is put down to the CPU when the share of their ready time the threads spent waiting
//! moved by at least [`CPU_WAIT_SHIFT`] the way the rate did, and the IOs per CPU second did
//! not change by `regime_frac`: the issuer got less (or more) CPU and did the same work with
//! each second of it. A device that slows makes the threads sleep, not wait, so its change is
//! not the CPU's even on a busy host.

use crate::fmt::{bytes, count, pct, secs, signed_pct};
use crate::{Finding, Kind, Severity, Thresholds};

/// Penalty factor of the change-point test (× σ² ln n).
pub const PENALTY: f64 = 8.0;
/// The fewest IOs a (widened) bin holds at the median, so noise is at most ~10%.
pub const MIN_BIN_IOS: u64 = 100;
/// The shortest part before or after a change, in seconds and in bins.
pub const MIN_PART_S: f64 = 1.0;
pub const MIN_PART_BINS: usize = 3;
/// `--until-change`: the later level must have held this long, and at least [`HOLD_FRAC`] of
/// the time before the change, before a run stops on it. The "it stays" test above needs a
/// later part long enough to have come back if it was going to; a quarter of the earlier part
/// keeps a bucket that took 40 minutes to empty from being judged on 5 seconds after it.
pub const MIN_HOLD_S: f64 = 5.0;
pub const HOLD_FRAC: f64 = 0.25;

/// The least change in the share of their ready time iogauge's threads waited for a CPU that
/// can explain a change of level: below it, scheduling noise on a busy machine.
pub const CPU_WAIT_SHIFT: f64 = 0.1;

/// iogauge's own CPU time in each bin, bin for bin with the IOs: CPU seconds per second its
/// threads ran (`run`) and spent runnable but waiting for a CPU (`wait`). Empty when unknown.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBins<'a> {
    pub run: &'a [f32],
    pub wait: &'a [f32],
    /// CPUs' worth of the machine's other work in each bin (other processes, and kernel
    /// threads: those serving iogauge's IO among them), and the machine's CPUs; empty and 0
    /// when unknown.
    pub others: &'a [f32],
    pub cpus: f64,
    /// The machine's CPUs when `cpus` counts only those iogauge may run on (taskset, a
    /// cpuset), fewer than the machine's; 0 when `cpus` is the machine's.
    pub machine: f64,
    /// The IOs in flight at the target's block device in each bin, and whether a device of its
    /// stack completes IO in a kernel thread of its own that waits for a CPU unseen (a loop
    /// device's worker): IO that stopped at such a device, in flight there, on a machine with
    /// no idle CPU may be that thread's wait ([`crate::stalls`]). Empty and false when unknown.
    pub in_flight: &'a [f32],
    pub worker: bool,
}

impl CpuBins<'_> {
    /// "the machine had no idle CPU (… took `others` of its N CPUs)", or of the CPUs iogauge
    /// may run on when it may not run on them all: a run pinned to CPU 0 beside work on CPU 0
    /// is starved there however idle the other CPUs are.
    pub(crate) fn none_idle(&self, others: &str) -> String {
        let what = "work other than iogauge's threads, kernel threads among it";
        match self.machine > self.cpus {
            false => format!(
                "the machine had no idle CPU ({what}, took {others} of its {} CPUs)",
                count(self.cpus)
            ),
            true => format!(
                "the CPUs iogauge may run on ({} of the machine's {}) had no idle time ({what}, took {others} of them)",
                count(self.cpus),
                count(self.machine)
            ),
        }
    }
}

/// Two levels of a series and where the second begins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// Index of the first bin of the later level.
    pub at: usize,
    pub before: f64,
    pub after: f64,
}

/// The best single mean shift of `xs` that passes the penalty, if any (before materiality).
pub fn best_shift(xs: &[f64], min_part: usize) -> Option<Change> {
    let n = xs.len();
    let min_part = min_part.max(1);
    if n < min_part.saturating_mul(2) || n < 4 {
        return None;
    }
    let total: f64 = xs.iter().sum();
    let mut left = 0.0;
    let mut best: Option<(f64, Change)> = None;
    for t in 1..n {
        left += xs[t - 1];
        if t < min_part || n - t < min_part {
            continue;
        }
        let (m1, m2) = (left / t as f64, (total - left) / (n - t) as f64);
        let gain = (t * (n - t)) as f64 / n as f64 * (m1 - m2).powi(2);
        if best.is_none_or(|(g, _)| gain > g) {
            best = Some((
                gain,
                Change {
                    at: t,
                    before: m1,
                    after: m2,
                },
            ));
        }
    }
    let (gain, change) = best?;
    let sigma = noise(xs);
    (gain > PENALTY * sigma * sigma * (n as f64).ln()).then_some(change)
}

/// σ of the noise around a piecewise-constant level: the median absolute first difference
/// scaled to a standard deviation (1.4826 for a normal's MAD, √2 for a difference).
fn noise(xs: &[f64]) -> f64 {
    let mut d: Vec<f64> = xs.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if d.is_empty() {
        return 0.0;
    }
    d.sort_by(f64::total_cmp);
    let med = d[d.len() / 2];
    // A perfectly regular series still has some noise: a hundredth of its level.
    let level = xs.iter().sum::<f64>() / xs.len() as f64;
    (med * 1.4826 / std::f64::consts::SQRT_2).max(level.abs() * 0.01)
}

/// The change of regime in `fine_ios` (IOs completed per bin of `bin_s` seconds over the
/// measured run), with `bytes_per_io` to say how much was delivered above the later level.
///
/// Evidence: `change_s` (from the start of the measurement), `before_iops`, `after_iops`,
/// `change_frac` ((after − before) / before), `bin_s`, and for a fall `ios_above_later` and
/// `bytes_above_later`: what the earlier level delivered beyond the later one, the size of the
/// burst bucket or write cache.
///
/// `cpu`, when it covers every bin, is iogauge's own CPU time; a change it explains is named as
/// the CPU's, with evidence `cpu_wait_before` and `cpu_wait_after` (shares of the threads' ready
/// time spent waiting), `cpus_before` and `cpus_after` (CPUs' worth of time run), and no amount
/// above the later rate. A change on a machine with no idle CPU, where other work took half a
/// CPU or more, is named as possibly the CPU's, with `others_cpus_before`, `others_cpus_after`
/// and `cpus`.
pub fn regime(
    fine_ios: &[u32],
    bin_s: f64,
    bytes_per_io: Option<f64>,
    writes: bool,
    filesystem: Option<&str>,
    cpu: CpuBins,
    th: &Thresholds,
) -> Vec<Finding> {
    if fine_ios.is_empty() || !(bin_s.is_finite() && bin_s > 0.0) {
        return Vec::new();
    }
    let k = widen(fine_ios);
    let width = k as f64 * bin_s;
    // Whole widened bins only: a partial last bin would read as a fall.
    let xs: Vec<f64> = fine_ios
        .chunks_exact(k)
        .map(|c| c.iter().map(|&v| f64::from(v)).sum::<f64>() / width)
        .collect();
    let min_part = MIN_PART_BINS.max((MIN_PART_S / width).ceil().min(1e9) as usize);
    let Some(mut c) = best_shift(&xs, min_part) else {
        return Vec::new();
    };
    // The levels reported are the medians of the two parts without the bin on either side of
    // the change (which mixes both levels): robust to a throttle's first burst or a pause as
    // the new level sets in, where the means that found the split are not.
    c.before = median(&xs[..c.at.saturating_sub(1).max(1)]);
    c.after = median(&xs[(c.at + 1).min(xs.len() - 1)..]);
    let hi = c.before.max(c.after);
    // Nothing at all before is a stall at the start (`stalls` names it), not a level.
    if !(hi.is_finite() && (c.at as f64 * width).is_finite())
        || c.before <= 0.0
        || (c.after - c.before).abs() < th.regime_frac * hi
    {
        return Vec::new();
    }
    // It must stay, and the later part must be long enough to show it: split again as the run
    // was (two parts of `min_part`), or a last second lower than the rest is a dip that the
    // run's end cut off. `suite quick` on a quiet RAM loop device named a regime in a mix whose
    // last second of five ran 30% slower.
    if xs.len() - c.at < 2 * min_part {
        return Vec::new();
    }
    // A later part that comes back towards the earlier level was a dip.
    if let Some(back) = best_shift(&xs[c.at..], min_part) {
        if (back.after - c.before).abs() < (back.after - c.after).abs()
            && (back.after - back.before).abs() >= th.regime_frac * hi
        {
            return Vec::new();
        }
    }
    let change_s = c.at as f64 * width;
    let frac = (c.after - c.before) / c.before;
    let f = if let Some(p) = cpu_explains(&c, cpu, fine_ios.len(), k, th) {
        let (verb, why, advice) = if c.after < c.before {
            (
                "fell",
                "other work took the CPU; the device did not change",
                "This part of the run measured iogauge's share of a busy CPU, not the device. Run it again with the host otherwise idle, with fewer threads than cores, or pinned (taskset) away from the other work.",
            )
        } else {
            (
                "rose",
                "other work gave the CPU back; the device did not change",
                "The earlier part measured iogauge's share of a busy CPU, not the device: quote the later rate, or run again with the host otherwise idle.",
            )
        };
        Finding::new(
            Kind::Regime,
            Severity::Warning,
            format!(
                "at {} IOPS {verb} from {} to {} ({}) as iogauge's threads, ready to run, waited for a CPU {} of the time against {} before: {why}",
                secs(change_s),
                count(c.before),
                count(c.after),
                signed_pct(frac),
                pct(p.wait[1]),
                pct(p.wait[0]),
            ),
            advice,
        )
        .with("cpu_wait_before", p.wait[0])
        .with("cpu_wait_after", p.wait[1])
        .with("cpus_before", p.run[0])
        .with("cpus_after", p.run[1])
    } else if let Some(o) = machine_saturated(&c, cpu, fine_ios.len(), k) {
        Finding::new(
            Kind::Regime,
            Severity::Warning,
            format!(
                "at {} IOPS {} from {} to {} ({}) while {}: the IO waited on the scheduler, and on such a machine a change of rate is the CPU's as likely as the device's",
                secs(change_s),
                if c.after < c.before { "fell" } else { "rose" },
                count(c.before),
                count(c.after),
                signed_pct(frac),
                cpu.none_idle(&match (o[0] - o[1]).abs() < 0.5 {
                    true => format!("{:.1}", (o[0] + o[1]) / 2.0),
                    false => format!("{:.1} before and {:.1} after", o[0], o[1]),
                }),
            ),
            "Rates measured on a machine with no idle CPU belong to the scheduler as much as to the device: run again with the host otherwise idle, or with fewer threads than cores.",
        )
        .with("others_cpus_before", o[0])
        .with("others_cpus_after", o[1])
        .with("cpus", cpu.cpus)
    } else if c.after < c.before {
        // What was delivered before the change beyond what the later level would have.
        let delivered: f64 = xs[..c.at].iter().sum::<f64>() * width;
        let above = (delivered - c.after * change_s).max(0.0);
        let amount = match bytes_per_io {
            Some(b) if b > 0.0 && b.is_finite() => {
                format!("{} IOs ({})", count(above), bytes(above * b))
            }
            _ => format!("{} IOs", count(above)),
        };
        let f = Finding::new(
            Kind::Regime,
            Severity::Warning,
            format!(
                "at {} IOPS fell from {} to {} ({}) and stayed there: {amount} were delivered above the later rate — {}",
                secs(change_s),
                count(c.before),
                count(c.after),
                signed_pct(frac),
                // A write cache fills only with writes; reads fall off a burst allowance or a
                // read cache that stopped answering. Writes through a file system can also fall
                // when it starts the work it put off (btrfs 4K random writes over a RAM loop fell
                // by 69% after 67 MiB, issue 37: no cache below, the file system's own
                // copy-on-write metadata and writeback).
                match (writes, filesystem) {
                    (true, Some(fs)) => format!("a burst bucket or a write cache of about that size below, or {fs} starting work it had put off (its journal or log, metadata, writeback)"),
                    (true, None) => "a burst bucket or a write cache of about that size".to_owned(),
                    (false, _) => "a burst bucket of about that size, or a read cache the working set outgrew".to_owned(),
                },
            ),
            if filesystem.is_some() {
                "The run measured two speeds: the later one is what the device sustains under this file system (its baseline), the earlier one a burst. Quote them apart, and run longer than the burst (or until the change) to measure the baseline; run on the raw device to tell the file system's part from the device's."
            } else {
                "The run measured two speeds: the later one is what the device sustains (its baseline), the earlier one a burst. Quote them apart, and run longer than the burst (or until the change) to measure the baseline."
            },
        )
        .with("ios_above_later", above);
        match bytes_per_io {
            Some(b) if b > 0.0 && b.is_finite() => f.with("bytes_above_later", above * b),
            _ => f,
        }
    } else {
        Finding::new(
            Kind::Regime,
            Severity::Warning,
            format!(
                "at {} IOPS rose from {} to {} ({}) and stayed there: a cache warming up or a throttle lifted{}",
                secs(change_s),
                count(c.before),
                count(c.after),
                signed_pct(frac),
                // Measured on a loop device over a sparse RAM file: its writes rose 152% once
                // the first writes had allocated what the cell kept writing.
                match writes {
                    true => ", or a thin-provisioned device (thin LVM, a sparse file, a volume restored from a snapshot) allocating each block at its first write",
                    false => "",
                }
            ),
            "The run measured two speeds: quote the later one for a warmed-up device, and find what changed at that moment (a cache filling with the working set, a throttle or another load ending).",
        )
    };
    vec![f
        .with("change_s", change_s)
        .with("before_iops", c.before)
        .with("after_iops", c.after)
        .with("change_frac", frac)
        .with("bin_s", width)]
}

/// iogauge's CPU before and after a change: CPUs' worth of time run, and the share of the
/// threads' ready time spent waiting for a CPU.
struct CpuParts {
    run: [f64; 2],
    wait: [f64; 2],
}

/// The machine had no idle CPU on either side of the change `c` (iogauge's threads and other
/// work together within a tenth of a CPU of all of them) and other work took at least half a
/// CPU throughout: the kernel threads that serve iogauge's IO (a loop device's workers, a file
/// system's) waited for a CPU where iogauge's own schedstat cannot see them. Two busy loops
/// on a 2-CPU machine made `randread 4K × 1 thread` on a RAM loop rise from 16,920 to 88,215
/// IOPS 1.9 s into its cell, with iogauge's own threads' waiting unchanged (issue 37). Returns
/// the other work's CPUs before and after.
///
/// Or the slower part alone had no idle CPU, other work taking half a CPU or more there and half a
/// CPU more than in the faster part: the other work came as the rate fell or left as it rose. A
/// `suite` beside a compiler that finished mid-cell rose 148% (randwrite 64K on xfs over a RAM
/// loop) with the machine saturated only before the rise.
fn machine_saturated(c: &Change, cpu: CpuBins, bins: usize, k: usize) -> Option<[f64; 2]> {
    if cpu.cpus.is_nan() || cpu.cpus < 1.0 {
        return None;
    }
    let [run, o] = part_means(c, [cpu.run, cpu.others], bins, k)?;
    let saturated = |i: usize| run[i] + o[i] >= cpu.cpus - 0.1 * cpu.cpus;
    let both = saturated(0) && saturated(1) && o.iter().all(|&x| x >= 0.5);
    let slow = usize::from(c.after < c.before);
    let slow_only = saturated(slow) && o[slow] >= 0.5 && o[slow] - o[1 - slow] >= 0.5;
    (both || slow_only).then_some(o)
}

/// The means of two per-bin CPU series before and after the change `c` (found on bins widened
/// `k` times), over the same parts as the levels: without the bin on either side of the change.
/// `None` when a series does not cover the `bins` bins with finite, non-negative values.
fn part_means(c: &Change, series: [&[f32]; 2], bins: usize, k: usize) -> Option<[[f64; 2]; 2]> {
    let ok = |v: &[f32]| v.len() >= bins && v[..bins].iter().all(|x| x.is_finite() && *x >= 0.0);
    if !series.iter().all(|v| ok(v)) || k == 0 {
        return None;
    }
    let wide = |v: &[f32]| -> Vec<f64> {
        v[..bins]
            .chunks_exact(k)
            .map(|ch| ch.iter().map(|&x| f64::from(x)).sum::<f64>() / k as f64)
            .collect()
    };
    let n = bins / k;
    if n < 2 {
        return None;
    }
    let parts = [
        0..c.at.saturating_sub(1).clamp(1, n),
        (c.at + 1).min(n - 1)..n,
    ];
    let means = |v: &[f32]| {
        let w = wide(v);
        parts
            .clone()
            .map(|r| w[r.clone()].iter().sum::<f64>() / r.len().max(1) as f64)
    };
    Some([means(series[0]), means(series[1])])
}

/// iogauge's CPU before and after the change `c` (found on bins widened `k` times) when it
/// explains the change: the share of ready time waiting moved by [`CPU_WAIT_SHIFT`] the way
/// the rate did, and the IOs per CPU second differ by less than `regime_frac` across it.
fn cpu_explains(
    c: &Change,
    cpu: CpuBins,
    bins: usize,
    k: usize,
    th: &Thresholds,
) -> Option<CpuParts> {
    let [r, q] = part_means(c, [cpu.run, cpu.wait], bins, k)?;
    if r.iter().any(|&x| x <= 0.0) {
        return None;
    }
    let w = [q[0] / (q[0] + r[0]), q[1] / (q[1] + r[1])];
    let fell = c.after < c.before;
    let moved = if fell { w[1] - w[0] } else { w[0] - w[1] };
    // IOs per CPU second after against before.
    let per_cpu = (c.after / r[1]) / (c.before / r[0]);
    let same_work = 1.0 - per_cpu.min(1.0 / per_cpu) < th.regime_frac;
    // Threads kept from a CPU still want it: their time waiting for one holds on the slower
    // side (two busy loops on iogauge's CPU: 0.90 CPU-seconds a second waiting before, 0.87
    // after). Threads the device holds sleep instead and wake less often, so they wait less in
    // all though their share of ready time waiting can rise on a busy machine (59% to 77%, 0.58×
    // the waiting, under a throttle lowered to a quarter, seen in CI) — which alone read as the
    // CPU's doing.
    let (slow, fast) = if fell { (q[1], q[0]) } else { (q[0], q[1]) };
    let still_waiting = slow >= (1.0 - th.regime_frac) * fast;
    // And a starved issuer wants the CPU the whole time: the time its threads were ready (run
    // or waiting for a CPU) holds on the slower side. Threads the device holds are ready for
    // less as the rate falls, however long each wake-up waits on a busy machine (a blkio
    // throttle lowered to a quarter beside two busy loops, in CI: waiting 30% of ready time
    // before and 51% after, as much in all, and named the CPU's until this).
    let ready = [r[0] + q[0], r[1] + q[1]];
    let (slow_ready, fast_ready) = if fell {
        (ready[1], ready[0])
    } else {
        (ready[0], ready[1])
    };
    let ready_held = slow_ready >= (1.0 - th.regime_frac) * fast_ready;
    (moved >= CPU_WAIT_SHIFT && same_work && still_waiting && ready_held && per_cpu.is_finite())
        .then_some(CpuParts { run: r, wait: w })
}

/// `--until-change`: whether `fine_ios` (IOs per bin of `bin_s` seconds so far) holds a change
/// of regime whose later level has lasted [`MIN_HOLD_S`] and [`HOLD_FRAC`] of the time before
/// it — the moment a run measuring a burst bucket or a write cache has seen both levels.
pub fn settled(fine_ios: &[u32], bin_s: f64, th: &Thresholds) -> bool {
    let total_s = fine_ios.len() as f64 * bin_s;
    regime(fine_ios, bin_s, None, true, None, CpuBins::default(), th)
        .iter()
        .any(|f| {
            f.evidence
                .get("change_s")
                .is_some_and(|&at| total_s - at >= MIN_HOLD_S.max(HOLD_FRAC * at))
        })
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// How many bins to join so that the median bin holds [`MIN_BIN_IOS`] IOs.
fn widen(fine: &[u32]) -> usize {
    let mut k = 1usize;
    loop {
        let mut sums: Vec<u64> = fine
            .chunks_exact(k)
            .map(|c| c.iter().map(|&v| u64::from(v)).sum())
            .collect();
        if sums.is_empty() {
            return k.max(1) / 2 + 1;
        }
        sums.sort_unstable();
        if sums[sums.len() / 2] >= MIN_BIN_IOS || k * 2 > fine.len() {
            return k;
        }
        k *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn th() -> Thresholds {
        Thresholds::default()
    }

    /// 100 ms bins at `rate` IOPS with ±`jitter` relative noise from a fixed sequence.
    fn bins(rate: f64, n: usize, jitter: f64, seed: u64) -> Vec<u32> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let u = (s % 10_000) as f64 / 10_000.0 * 2.0 - 1.0;
                (rate * 0.1 * (1.0 + jitter * u)).round() as u32
            })
            .collect()
    }

    #[test]
    fn a_burst_bucket_running_out_is_named_with_its_size() {
        // 3,000 IOPS for 41.2 s, then 1,000 IOPS for 20 s, 4 KiB IOs.
        let mut f = bins(3000.0, 412, 0.05, 7);
        f.extend(bins(1000.0, 200, 0.05, 9));
        let found = plain(&f, true, None);
        assert_eq!(found.len(), 1, "{found:?}");
        let e = &found[0].evidence;
        assert!((e["change_s"] - 41.2).abs() <= 0.5, "{e:?}");
        assert!((e["before_iops"] / 3000.0 - 1.0).abs() < 0.05, "{e:?}");
        assert!((e["after_iops"] / 1000.0 - 1.0).abs() < 0.05, "{e:?}");
        assert!(
            (e["ios_above_later"] / 82_400.0 - 1.0).abs() < 0.05,
            "{e:?}"
        );
        assert!(
            found[0].summary.contains("fell from") && found[0].summary.contains("stayed"),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_rise_is_named_too() {
        let mut f = bins(1000.0, 50, 0.05, 3);
        f.extend(bins(3000.0, 50, 0.05, 5));
        let found = plain(&f, true, None);
        assert_eq!(found.len(), 1);
        assert!(found[0].summary.contains("rose"), "{}", found[0].summary);
    }

    #[test]
    fn steady_and_noisy_runs_are_silent() {
        assert!(regime(
            &bins(5000.0, 300, 0.02, 11),
            0.1,
            Some(4096.0),
            true,
            None,
            CpuBins::default(),
            &th()
        )
        .is_empty());
        assert!(regime(
            &bins(5000.0, 300, 0.4, 13),
            0.1,
            Some(4096.0),
            true,
            None,
            CpuBins::default(),
            &th()
        )
        .is_empty());
        // A near miss: a real but immaterial step (−15%) stays silent.
        let mut f = bins(5000.0, 150, 0.02, 17);
        f.extend(bins(4250.0, 150, 0.02, 19));
        assert!(plain(&f, true, None).is_empty());
    }

    #[test]
    fn a_dip_that_comes_back_is_no_regime() {
        let mut f = bins(5000.0, 100, 0.03, 21);
        f.extend(vec![0; 30]);
        f.extend(bins(5000.0, 100, 0.03, 23));
        assert!(plain(&f, true, None).is_empty());
        // Also when the dip is at the end of a long run it came back from.
        let mut f = bins(5000.0, 200, 0.03, 25);
        f.extend(bins(1000.0, 40, 0.03, 27));
        f.extend(bins(5000.0, 40, 0.03, 29));
        assert!(plain(&f, true, None).is_empty());
    }

    #[test]
    fn settled_waits_for_the_later_level_to_hold() {
        // 20 s at 3,000 IOPS, then 1,000 IOPS: settled once the later level has held
        // max(5 s, a quarter of 20 s) = 5 s, not at 2 s, and never on a steady run.
        let mut f = bins(3000.0, 200, 0.05, 31);
        f.extend(bins(1000.0, 20, 0.05, 33));
        assert!(!settled(&f, 0.1, &th()));
        f.extend(bins(1000.0, 35, 0.05, 35));
        assert!(settled(&f, 0.1, &th()));
        assert!(!settled(&bins(3000.0, 600, 0.05, 37), 0.1, &th()));
    }

    /// `n` bins of `run` CPUs' worth of time run and `wait` waiting for a CPU.
    fn cpu(run: f32, wait: f32, n: usize) -> (Vec<f32>, Vec<f32>) {
        (vec![run; n], vec![wait; n])
    }

    /// Two stretches of CPU bins end to end.
    fn then(a: (Vec<f32>, Vec<f32>), b: (Vec<f32>, Vec<f32>)) -> (Vec<f32>, Vec<f32>) {
        ([a.0, b.0].concat(), [a.1, b.1].concat())
    }

    /// The regime of 4 KiB IOs in 100 ms bins `f`, with no CPU series.
    fn plain(f: &[u32], writes: bool, filesystem: Option<&str>) -> Vec<Finding> {
        regime(
            f,
            0.1,
            Some(4096.0),
            writes,
            filesystem,
            CpuBins::default(),
            &th(),
        )
    }

    fn bins_of(c: &(Vec<f32>, Vec<f32>)) -> CpuBins<'_> {
        CpuBins {
            run: &c.0,
            wait: &c.1,
            ..CpuBins::default()
        }
    }

    /// A rise on a machine with no idle CPU, where other work took most of it and iogauge's own
    /// threads' waiting did not move (the kernel threads serving its IO waited instead), is
    /// named as possibly the CPU's. Near misses: the same rise with a CPU idle, or with the
    /// machine saturated by iogauge alone (other work under half a CPU), is the device's.
    #[test]
    fn a_change_on_a_saturated_machine_names_the_cpu() {
        let mut f = bins(17_000.0, 19, 0.02, 3);
        f.extend(bins(88_000.0, 31, 0.02, 4));
        let n = f.len();
        let (run, wait) = (vec![0.3f32; n], vec![0.02f32; n]);
        let busy = vec![1.7f32; n];
        let cpu = CpuBins {
            run: &run,
            wait: &wait,
            others: &busy,
            cpus: 2.0,
            machine: 0.0,
            ..CpuBins::default()
        };
        let found = regime(&f, 0.1, Some(4096.0), false, None, cpu, &th());
        assert_eq!(found.len(), 1);
        assert!(
            found[0].summary.contains("no idle CPU"),
            "{}",
            found[0].summary
        );
        assert!(
            found[0].summary.contains("took 1.7 of its 2 CPUs"),
            "{}",
            found[0].summary
        );
        assert!(found[0].evidence.contains_key("others_cpus_after"));
        let idle = vec![1.2f32; n];
        let cpu = CpuBins {
            others: &idle,
            ..cpu
        };
        let found = regime(&f, 0.1, Some(4096.0), false, None, cpu, &th());
        assert!(found[0].summary.contains("cache"), "{}", found[0].summary);
        let (run, few) = (vec![1.8f32; n], vec![0.3f32; n]);
        let cpu = CpuBins {
            run: &run,
            others: &few,
            ..cpu
        };
        let found = regime(&f, 0.1, Some(4096.0), false, None, cpu, &th());
        assert!(
            !found[0].summary.contains("idle CPU"),
            "{}",
            found[0].summary
        );
    }

    /// A fall on the one CPU of two that iogauge may run on (taskset -c 0), as four busy loops
    /// came to that CPU (tests/cpu_contention.rs, on a quiet machine): iogauge's threads ran
    /// 1.0 then 0.22 CPUs, other work 0.0 then 0.78 there, and the threads did 0.55× the IOs
    /// per CPU-second, so their waiting alone does not name the CPU. Named as the CPUs'
    /// iogauge may run on. The near miss: the same counted over the whole machine, whose other
    /// CPU was idle, is the device's.
    #[test]
    fn a_fall_on_the_cpus_iogauge_may_run_on_names_them() {
        let mut f = bins(150_000.0, 15, 0.02, 7);
        f.extend(bins(18_000.0, 65, 0.02, 8));
        let n = f.len();
        let side = |before: f32, after: f32| -> Vec<f32> {
            (0..n)
                .map(|i| if i < 15 { before } else { after })
                .collect()
        };
        let (run, wait, others) = (side(1.0, 0.22), side(0.62, 0.97), side(0.0, 0.78));
        let pinned = CpuBins {
            run: &run,
            wait: &wait,
            others: &others,
            cpus: 1.0,
            machine: 2.0,
            ..CpuBins::default()
        };
        let found = regime(&f, 0.1, Some(4096.0), false, None, pinned, &th());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].summary.contains(
                "the CPUs iogauge may run on (1 of the machine's 2) had no idle time (work other than iogauge's threads, kernel threads among it, took 0.0 before and 0.8 after of them)"
            ),
            "{}",
            found[0].summary
        );
        assert!(!found[0].evidence.contains_key("ios_above_later"));
        let machine = CpuBins {
            cpus: 2.0,
            machine: 0.0,
            ..pinned
        };
        let found = regime(&f, 0.1, Some(4096.0), false, None, machine, &th());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].evidence.contains_key("ios_above_later"),
            "{}",
            found[0].summary
        );
    }

    /// The rise of a cell whose machine was saturated only before it: other work (a compiler)
    /// took 1.7 CPUs and then left, iogauge's threads on one. Named as possibly the CPU's, with
    /// both sides' shares. Near misses: the same rise with the other work at 0.9 CPUs before
    /// (saturated, but under half a CPU more than the 0.5 after), and with the machine saturated
    /// only after the rise (the faster part).
    #[test]
    fn a_rise_as_other_work_left_a_saturated_machine_names_the_cpu() {
        let mut f = bins(6_400.0, 23, 0.02, 5);
        f.extend(bins(16_000.0, 77, 0.02, 6));
        let n = f.len();
        let (run, wait) = (vec![1.0f32; n], vec![0.02f32; n]);
        let cpu_of = |before: f32, after: f32| -> Vec<f32> {
            (0..n)
                .map(|i| if i < 23 { before } else { after })
                .collect()
        };
        let left = cpu_of(1.7, 0.2);
        let cpu = CpuBins {
            run: &run,
            wait: &wait,
            others: &left,
            cpus: 2.0,
            machine: 0.0,
            ..CpuBins::default()
        };
        let found = regime(&f, 0.1, Some(4096.0), false, None, cpu, &th());
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .summary
                .contains("took 1.7 before and 0.2 after of its 2 CPUs"),
            "{}",
            found[0].summary
        );
        for others in [cpu_of(0.9, 0.5), cpu_of(0.2, 1.7)] {
            let cpu = CpuBins {
                others: &others,
                ..cpu
            };
            let found = regime(&f, 0.1, Some(4096.0), false, None, cpu, &th());
            assert_eq!(found.len(), 1);
            assert!(found[0].summary.contains("cache"), "{}", found[0].summary);
        }
    }

    /// A fall in the last second of a 5 s cell (30 bins of 100 ms before, 10 after) cannot
    /// show that it stayed: not a regime. With 2 s after it (20 bins), it is.
    #[test]
    fn a_fall_needs_a_later_part_long_enough_to_have_come_back() {
        let mut f = bins(180_000.0, 40, 0.02, 7);
        f.extend(bins(125_000.0, 10, 0.02, 8));
        assert!(plain(&f, true, None).is_empty());
        let mut f = bins(180_000.0, 30, 0.02, 7);
        f.extend(bins(125_000.0, 20, 0.02, 8));
        let found = plain(&f, true, None);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].summary.contains("fell"), "{}", found[0].summary);
    }

    /// A rise of writes may be a thin device allocating at first writes; reads are not.
    #[test]
    fn a_rise_of_writes_names_thin_provisioning_and_of_reads_does_not() {
        let mut f = bins(1_200.0, 24, 0.02, 9);
        f.extend(bins(3_000.0, 26, 0.02, 10));
        let w = plain(&f, true, None);
        assert!(
            w[0].summary.contains("thin-provisioned"),
            "{}",
            w[0].summary
        );
        let r = plain(&f, false, None);
        assert!(r[0].summary.contains("throttle lifted"), "{}", r[0].summary);
        assert!(!r[0].summary.contains("thin"), "{}", r[0].summary);
    }

    #[test]
    fn a_fall_the_cpu_explains_is_named_as_the_cpus() {
        // A CPU-bound issuer on one CPU: 200,000 IOPS on 0.95 CPU waiting 0.05 s a second,
        // then a hog takes half: 100,000 IOPS on 0.5 CPU, waiting 0.5 s a second. The same
        // IOs per CPU second; ready time waiting from 5% to 50%.
        let mut f = bins(200_000.0, 30, 0.03, 41);
        f.extend(bins(100_000.0, 30, 0.03, 43));
        let c = then(cpu(0.95, 0.05, 30), cpu(0.5, 0.5, 30));
        let found = regime(&f, 0.1, Some(4096.0), true, None, bins_of(&c), &th());
        assert_eq!(found.len(), 1, "{found:?}");
        let (s, e) = (&found[0].summary, &found[0].evidence);
        assert!(
            s.contains("fell from") && s.contains("waited for a CPU"),
            "{s}"
        );
        assert!(!e.contains_key("ios_above_later"), "{e:?}");
        assert!((e["cpu_wait_after"] - 0.5).abs() < 0.01, "{e:?}");
        assert!((e["cpus_before"] - 0.95).abs() < 0.01, "{e:?}");
        // And a rise when the other work ends.
        let mut f = bins(100_000.0, 30, 0.03, 45);
        f.extend(bins(200_000.0, 30, 0.03, 47));
        let c = then(cpu(0.5, 0.5, 30), cpu(0.95, 0.05, 30));
        let found = regime(&f, 0.1, Some(4096.0), true, None, bins_of(&c), &th());
        assert!(found[0].summary.contains("rose from"), "{found:?}");
        assert!(found[0].summary.contains("gave the CPU back"), "{found:?}");
    }

    #[test]
    fn a_fall_the_cpu_does_not_explain_is_the_devices() {
        // Near misses, each the device's regime with its size: the threads waited more but
        // did a third of the IOs per CPU second (a burst bucket emptied on a busy host); the
        // wait moved less than CPU_WAIT_SHIFT; it moved the other way; a device that slows
        // on a quiet host, its threads sleeping, not waiting (same IOs per CPU second).
        let mut f = bins(3000.0, 200, 0.05, 51);
        f.extend(bins(1000.0, 200, 0.05, 53));
        for (a, b) in [
            ((0.3, 0.02), (0.3, 0.2)),
            ((0.3, 0.02), (0.1, 0.012)),
            ((0.3, 0.2), (0.1, 0.02)),
            ((0.3, 0.0), (0.1, 0.0)),
        ] {
            let c = then(cpu(a.0, a.1, 200), cpu(b.0, b.1, 200));
            let found = regime(&f, 0.1, Some(4096.0), true, None, bins_of(&c), &th());
            assert_eq!(found.len(), 1, "{a:?}→{b:?}: {found:?}");
            assert!(
                found[0].evidence.contains_key("ios_above_later")
                    && !found[0].summary.contains("CPU"),
                "{a:?}→{b:?}: {}",
                found[0].summary
            );
        }
        // A throttle lowered to a quarter on a busy host (seen in CI): the same IOs per CPU
        // second, the share of ready time waiting up from 59% to 77%, but the threads waited
        // 0.58× as long in all — they slept on the device and woke less often.
        let mut quarter = bins(4000.0, 200, 0.05, 57);
        quarter.extend(bins(1000.0, 200, 0.05, 59));
        // And one whose threads waited as long in all, each wake-up waiting longer (CI, run
        // 79): ready time waiting 30% then 61%, the same IOs per CPU second, but ready for
        // 0.45× as long — the threads slept on the device.
        for (a, b) in [((0.4, 0.576), (0.1, 0.335)), ((0.4, 0.17), (0.1, 0.155))] {
            let c = then(cpu(a.0, a.1, 200), cpu(b.0, b.1, 200));
            let found = regime(&quarter, 0.1, Some(4096.0), true, None, bins_of(&c), &th());
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                found[0].evidence.contains_key("ios_above_later")
                    && !found[0].summary.contains("CPU"),
                "{a:?}→{b:?}: {}",
                found[0].summary
            );
        }
        // Series that would explain the fall but stop one bin short are not judged by.
        let (mut run, mut wait) = then(cpu(0.3, 0.02, 200), cpu(0.1, 0.2, 200));
        let whole = CpuBins {
            run: &run,
            wait: &wait,
            ..CpuBins::default()
        };
        assert!(regime(&f, 0.1, Some(4096.0), true, None, whole, &th())[0]
            .summary
            .contains("CPU"));
        run.pop();
        wait.pop();
        let found = regime(
            &f,
            0.1,
            Some(4096.0),
            true,
            None,
            bins_of(&(run, wait)),
            &th(),
        );
        assert!(found[0].evidence.contains_key("ios_above_later"));
    }

    #[test]
    fn short_or_empty_input_is_silent() {
        assert!(regime(&[], 0.1, None, true, None, CpuBins::default(), &th()).is_empty());
        assert!(regime(
            &[500, 500, 100],
            0.1,
            None,
            true,
            None,
            CpuBins::default(),
            &th()
        )
        .is_empty());
        assert!(regime(
            &[1; 100],
            f64::NAN,
            None,
            true,
            None,
            CpuBins::default(),
            &th()
        )
        .is_empty());
    }

    /// Reads that fall to a lower level are no write cache filling (issue 37: the wording
    /// named one on random-read cells).
    #[test]
    fn a_fall_of_reads_names_no_write_cache() {
        let mut f = bins(5000.0, 150, 0.02, 23);
        f.extend(bins(2000.0, 150, 0.02, 29));
        let reads = plain(&f, false, None);
        assert_eq!(reads.len(), 1);
        assert!(
            !reads[0].summary.contains("write cache"),
            "{}",
            reads[0].summary
        );
        assert!(
            reads[0].summary.contains("read cache"),
            "{}",
            reads[0].summary
        );
        let writes = plain(&f, true, None);
        assert!(
            writes[0].summary.contains("write cache"),
            "{}",
            writes[0].summary
        );
    }

    /// A fall of writes to a file names the file system beside a cache below; the same fall of
    /// reads does not (a file system puts off writes, not reads).
    #[test]
    fn a_fall_of_writes_on_a_file_system_names_it() {
        let mut f = bins(4000.0, 30, 0.02, 1);
        f.extend(bins(1000.0, 60, 0.02, 2));
        let found = plain(&f, true, Some("btrfs"));
        assert!(
            found[0]
                .summary
                .contains("btrfs starting work it had put off"),
            "{}",
            found[0].summary
        );
        assert!(
            found[0].advice.contains("raw device"),
            "{}",
            found[0].advice
        );
        let reads = plain(&f, false, Some("btrfs"));
        assert!(!reads[0].summary.contains("btrfs"), "{}", reads[0].summary);
    }
}
