//! Stalls: stretches of a run in which (almost) no IO completed — "One DVD per second"'s "file system freezes
//! in the order of 10 seconds" that averages hide.
//!
//! Rule: the run's completions per bin are compared with a reference rate, the median rate of the
//! bins that completed any IO (zero bins are left out so that a run frozen for more than half its
//! time still has a reference). A bin is stalled when it is empty or below `stall_frac` of the
//! reference. Runs of stalled bins separated by one bin are merged when both sides span at least
//! two bins, so a freeze interrupted by a trickle of completions is one stall while a merely
//! bursty device is not one long stall. Stalls shorter than `stall_min_s` are dropped.
//!
//! A stretch of slow but non-empty bins at the very start is a warm-up (a buffered run reading
//! from the disk until the page cache holds its working set), not a stall; a start with nothing
//! completing at all still is one.
//!
//! At low rates an empty 0.1 s bin is ordinary Poisson chance (at 10 IOPS a third of all bins are
//! empty), so bins are first widened by doubling until the median non-empty bin holds
//! `stall_min_count` IOs; the width used is reported as `bin_s` and bounds the timing error.

use crate::fmt::{count, pct, secs};
use crate::{CpuBins, Finding, Kind, Severity, Thresholds};

const ADVICE: &str = "Freezes like this usually come from a cache flush in the RAID controller or \
drive, SSD garbage collection, or a journal commit in the file system (the study “One DVD per second” saw ~10 s freezes \
once heavy writes had filled the controller's cache). Rerun while watching `iostat -x 1` and the \
kernel log, then compare with the controller's write cache off, another file system, or a longer \
run to see whether the freezes repeat.";

/// Finds stalls in `fine_ios`, the IOs completed per bin of `bin_s` seconds over the measured run;
/// `cpu` is iogauge's CPU over the same bins (empty when the kernel gave none).
///
/// Evidence: `start_s`, `duration_s` (from the start of `fine_ios`), `depth` (rate during the
/// stall / reference rate, 0 = nothing completed), `median_iops` (the reference rate) and `bin_s`
/// (the bin width judged); for a stall the CPU explains (see [`cpu_stalled`]), `cpu_wait` and
/// `cpu_run` over it too; for one a machine with no idle CPU may explain, `others_cpus` and
/// `cpus`, and `in_flight` when it stopped at a loop device ([`held_at_worker`]). A run with no IO at all is one finding covering it. Empty input or a
/// bin width that is not a positive number gives no findings.
pub fn stalls(fine_ios: &[u32], bin_s: f64, cpu: CpuBins, th: &Thresholds) -> Vec<Finding> {
    if fine_ios.is_empty() || !(bin_s.is_finite() && bin_s > 0.0) {
        return Vec::new();
    }
    let run_s = fine_ios.len() as f64 * bin_s;
    if fine_ios.iter().all(|&c| c == 0) {
        return vec![Finding::new(
            Kind::Stall,
            Severity::Warning,
            format!("no IO completed during the whole {} run", secs(run_s)),
            "Nothing completed at all: check that the device answers (dmesg, the controller's \
             event log) and that the engine submitted IO, e.g. with a short run on the null engine.",
        )
        .with("start_s", 0.0)
        .with("duration_s", run_s)
        .with("depth", 0.0)
        .with("median_iops", 0.0)
        .with("bin_s", bin_s)];
    }

    let k = bins_per_window(fine_ios, th.stall_min_count);
    let width_s = k as f64 * bin_s;
    let windows: Vec<u64> = fine_ios
        .chunks(k)
        .map(|c| c.iter().map(|&v| u64::from(v)).sum())
        .collect();
    // The last window may be partial, so compare rates rather than counts.
    let rates: Vec<f64> = fine_ios
        .chunks(k)
        .zip(&windows)
        .map(|(c, &ios)| ios as f64 / (c.len() as f64 * bin_s))
        .collect();
    let busy: Vec<f64> = rates
        .iter()
        .zip(&windows)
        .filter(|(_, &ios)| ios > 0)
        .map(|(&r, _)| r)
        .collect();
    let Some(reference) = median(busy) else {
        return Vec::new();
    };
    let limit = th.stall_frac * reference;
    let mut stalled: Vec<bool> = rates
        .iter()
        .zip(&windows)
        .map(|(&r, &ios)| ios == 0 || r < limit)
        .collect();
    // A slow start that still completes IO is a warm-up, not a freeze: a buffered run that
    // reads from the disk until the page cache holds its working set, a device waking up.
    for (s, &ios) in stalled.iter_mut().zip(&windows) {
        if !*s || ios == 0 {
            break;
        }
        *s = false;
    }

    let mut findings = Vec::new();
    for (first, end) in merge(runs(&stalled)) {
        let start = first * k;
        let stop = (end * k).min(fine_ios.len());
        let duration_s = (stop - start) as f64 * bin_s;
        // A tolerance of a thousandth of a bin keeps 5 × 0.1 s from missing 0.5 s by rounding.
        let long_enough = duration_s >= th.stall_min_s - bin_s * 1e-3;
        if !long_enough {
            continue;
        }
        let ios: u64 = fine_ios[start..stop].iter().map(|&v| u64::from(v)).sum();
        let depth = ios as f64 / duration_s / reference;
        let start_s = start as f64 * bin_s;
        // Named as the CPU's: iogauge's own threads waited for one, or the machine had none idle.
        let what = match ios {
            0 => "no IO completed".to_string(),
            _ => format!(
                "IO fell to {} of the median {} IOPS",
                pct(depth),
                count(reference)
            ),
        };
        let when = format!(
            "{what} for {} from {} into the run while",
            secs(duration_s),
            secs(start_s)
        );
        let cpus = if let Some((run, wait)) = cpu_stalled(cpu, start..stop, k, fine_ios.len()) {
            Some((
                format!("{when} iogauge's threads, ready to run, waited for a CPU ({wait:.2} CPU-seconds per second waiting, summed over them, against {run:.2} CPU-seconds per second running): other work took the CPU; the device did not stall"),
                vec![("cpu_wait", wait), ("cpu_run", run)],
            ))
        } else if depth >= STALL_SCHEDULED_DEPTH || windows[first..end].iter().all(|&w| w > 0) {
            machine_saturated(cpu, start..stop, fine_ios.len()).map(|o| {
                (
                    format!(
                        "{when} {}: the IO waited on the scheduler, and on such a machine a stall is the CPU's as likely as the device's",
                        cpu.none_idle(&format!("{o:.1}"))
                    ),
                    vec![("others_cpus", o), ("cpus", cpu.cpus)],
                )
            })
        } else if let Some(n) = held_at_worker(cpu, start..stop) {
            machine_saturated(cpu, start..stop, fine_ios.len()).map(|o| {
                (
                    format!(
                        "{when} {} and the device had at least {} IO in flight at each of iogauge's looks inside it, IO its kernel thread completes (a loop device's worker, whose wait for a CPU iogauge cannot see): on such a machine a stall is the CPU's as likely as the device's",
                        cpu.none_idle(&format!("{o:.1}")),
                        count(n)
                    ),
                    vec![("others_cpus", o), ("cpus", cpu.cpus), ("in_flight", n)],
                )
            })
        } else {
            None
        };
        if let Some((summary, evidence)) = cpus {
            let mut f = Finding::new(Kind::Stall, Severity::Warning, summary, CPU_ADVICE)
                .with("start_s", start_s)
                .with("duration_s", duration_s)
                .with("depth", depth)
                .with("median_iops", reference)
                .with("bin_s", width_s);
            for (k, v) in evidence {
                f = f.with(k, v);
            }
            findings.push(f);
            continue;
        }
        let summary = if ios == 0 {
            format!(
                "no IO completed for {} from {} into the run (median {} IOPS)",
                secs(duration_s),
                secs(start_s),
                count(reference)
            )
        } else {
            format!(
                "IO stalled for {} from {} into the run at {} of the median {} IOPS",
                secs(duration_s),
                secs(start_s),
                pct(depth),
                count(reference)
            )
        };
        findings.push(
            Finding::new(Kind::Stall, Severity::Warning, summary, ADVICE)
                .with("start_s", start_s)
                .with("duration_s", duration_s)
                .with("depth", depth)
                .with("median_iops", reference)
                .with("bin_s", width_s),
        );
    }
    findings
}

/// CPU-seconds per second that iogauge's threads, summed, must have waited for a CPU over a
/// stall beyond their usual waiting (the median over the rest of the run) for the stall to be
/// the CPU's: half of one thread's time, ready to run and not running.
pub const STALL_CPU_WAIT: f64 = 0.5;

const CPU_ADVICE: &str = "This part of the run measured a CPU iogauge could not get, not the \
device: the IOs were done but nobody was running to reap them or send more. Run it again with the \
host otherwise idle, with fewer threads than cores, or pinned (taskset) away from the other work.";

/// iogauge's CPU over the fine bins `span` of a stall — (CPUs running, CPUs waiting), means —
/// when it explains the stall: its threads, ready to run, waited for a CPU [`STALL_CPU_WAIT`]
/// more than they usually do (the median of the run's other bins: a run whose threads always
/// wait, such as more polling threads than cores, says nothing by waiting) and longer than they
/// ran. A device that stops makes the threads sleep on it, neither running nor waiting.
///
/// The kernel adds a thread's wait when it next gets a CPU, which is when IO comes back, and
/// the sampling thread, which waited too, reads it only when it next runs after them: on a CPU
/// a real-time task holds, that is its next slice, up to a second later, and the wait is
/// spread over the bins in between (a real-time busy loop on iogauge's CPU, here: 0.27
/// CPU-seconds a second above the usual in the stall, 2.2 in the nine bins after it; the
/// stall was named the device's in the CI run of d9d75ce). So the wait booked from the stall's start
/// through the window in which IO resumed (`after` fine bins), and on through the bins right
/// after that still wait half a thread more than usual, at most the stall's own length, is the
/// stall's, per second of the stall. Threads asleep on a device add no wait when it resumes,
/// so a device's stall stays the device's.
fn cpu_stalled(
    cpu: CpuBins,
    span: std::ops::Range<usize>,
    after: usize,
    bins: usize,
) -> Option<(f64, f64)> {
    let ok = |v: &[f32]| v.len() >= bins && v[..bins].iter().all(|x| x.is_finite() && *x >= 0.0);
    if span.is_empty() || span.end > bins || !(ok(cpu.run) && ok(cpu.wait)) {
        return None;
    }
    let resumed = (span.end + after).min(bins);
    let rest: Vec<f64> = (0..bins)
        .filter(|i| !(span.start..resumed).contains(i))
        .map(|i| f64::from(cpu.wait[i]))
        .collect();
    let usual = median(rest).unwrap_or(0.0);
    let elevated = |i: usize| f64::from(cpu.wait[i]) - usual >= STALL_CPU_WAIT;
    let most = (span.end + after.max(span.len())).min(bins);
    let mut end = resumed;
    while end < most && (span.end..end).all(elevated) && elevated(end) {
        end += 1;
    }
    let sum =
        |v: &[f32], r: std::ops::Range<usize>| v[r].iter().map(|&x| f64::from(x)).sum::<f64>();
    let len = span.len() as f64;
    let r = sum(cpu.run, span.clone()) / len;
    let beyond = sum(cpu.wait, span.start..end) - usual * (end - span.start) as f64;
    let w = usual + beyond / len;
    (w - usual >= STALL_CPU_WAIT && w > r).then_some((r, w))
}

/// The least of the median rate a stall must keep to be named as possibly a busy machine's,
/// unless IO completed in every window of it: the scheduler mostly shares the CPUs out within
/// tens of milliseconds, so the kernel threads that complete iogauge's IO, kept waiting, still
/// complete some of it in every window; IO that stopped all but completely for half a second or
/// more stopped below (a file system frozen on a machine busy with a browser beside it was named
/// the CPU's without this, in a fresh CI run). A fast device held to one handoff a scheduler tick
/// stays under it while completing in every window: a RAM loop device at 109,240 IOPS fell to
/// about 1,000 (0.9%) for a second beside two busy loops (CI run 86).
///
/// Not always, though: 1 MiB reads from xfs on a RAM loop device stopped all but completely
/// for 0.7-0.9 s (3 cells of 100, each 1 s) while another process's io_uring workers wrote to
/// zram on both CPUs, and the loop device's kernel worker sat runnable for 0.82 s, running 3 ms
/// of it, its wait growing by 0.82 s (/proc/TID/schedstat sampled every 10 ms, Linux 6.18).
/// Such a stall is told from a frozen file system by the IO in flight at the device
/// ([`held_at_worker`]).
pub const STALL_SCHEDULED_DEPTH: f64 = 0.02;

/// The least count of IOs in flight at the target's device over the fine bins `span` of a
/// stall, when a device of its stack completes IO in a kernel thread ([`CpuBins::worker`]) and
/// every bin of the stall but its first and last (their counts may have been read before it
/// began or after it ended: a stall that began just after its first bin's look, at QD 1, had 0
/// there and 1 in the seven after) was looked in and had IO in flight, or was not looked in
/// (−1) between two that were: the IO reached the device and waited on that thread, where IO
/// held above the device (a frozen file system) has none in flight. Such a thread, ready to
/// run, has waited 0.82 s for a CPU on a machine with none idle (the limit below).
fn held_at_worker(cpu: CpuBins, span: std::ops::Range<usize>) -> Option<f64> {
    if !cpu.worker || span.len() < 3 || span.end > cpu.in_flight.len() {
        return None;
    }
    let inner = &cpu.in_flight[span.start + 1..span.end - 1];
    let looked = |v: f32| v >= 0.0;
    let held = inner.iter().enumerate().all(|(i, &v)| match looked(v) {
        true => v >= 1.0,
        false => {
            let seen = |j: Option<usize>| j.and_then(|j| inner.get(j)).is_some_and(|&w| looked(w));
            seen(i.checked_sub(1)) && seen(Some(i + 1))
        }
    });
    let least = inner
        .iter()
        .copied()
        .filter(|&v| looked(v))
        .fold(f32::INFINITY, f32::min);
    (held && least.is_finite()).then_some(f64::from(least))
}

/// Other work's CPUs over the fine bins `span` of a stall when the machine had no idle CPU
/// there (iogauge's threads and other work together within a tenth of a CPU of all of them) and
/// other work took at least half a CPU: the kernel threads that complete iogauge's IO (a loop
/// device's workers, a file system's) may have waited for a CPU where iogauge's own schedstat
/// cannot see them, as [`crate::regime`] says of a change of rate. With two busy loops on a
/// 2-CPU machine, `suite quick` on a RAM loop device is such a run.
fn machine_saturated(cpu: CpuBins, span: std::ops::Range<usize>, bins: usize) -> Option<f64> {
    let ok = |v: &[f32]| v.len() >= bins && v[..bins].iter().all(|x| x.is_finite() && *x >= 0.0);
    if span.is_empty() || span.end > bins || !(ok(cpu.run) && ok(cpu.others)) || cpu.cpus < 1.0 {
        return None;
    }
    let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    let (r, o) = (mean(&cpu.run[span.clone()]), mean(&cpu.others[span]));
    (r + o >= 0.9 * cpu.cpus && o >= 0.5).then_some(o)
}

/// The narrowest window, in fine bins, at which the median non-empty window holds `min_count`
/// IOs, or the whole run if the run is too slow for that. Doubling finds a wide enough window in
/// log n steps; a binary search below it then narrows it, since a wide window blurs the timing.
fn bins_per_window(fine_ios: &[u32], min_count: u32) -> usize {
    let n = fine_ios.len();
    let enough = |k: usize| {
        let sums: Vec<f64> = fine_ios
            .chunks(k)
            .map(|c| c.iter().map(|&v| u64::from(v)).sum::<u64>())
            .filter(|&s| s > 0)
            .map(|s| s as f64)
            .collect();
        median(sums).is_some_and(|m| m >= f64::from(min_count))
    };
    let (mut lo, mut hi) = (0usize, 1usize);
    while !enough(hi) {
        if hi >= n {
            return n;
        }
        lo = hi;
        hi = hi.saturating_mul(2).min(n);
    }
    // `hi` is enough and `lo` is not (or is zero); the median is not strictly monotone in the
    // width, so this finds a narrow width that is enough, not necessarily the narrowest.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Maximal runs of `true` as half-open index ranges.
fn runs(flags: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &f) in flags.iter().enumerate() {
        match (f, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, flags.len()));
    }
    out
}

/// Joins runs split by a single bin when both sides are at least two bins long.
fn merge(runs: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(runs.len());
    // Length of the run that last joined `out.last()`, so that a merge judges the side next to
    // the noisy bin rather than everything merged before it.
    let mut last_side = 0;
    for (s, e) in runs {
        if let Some(prev) = out.last_mut() {
            if s == prev.1 + 1 && last_side >= 2 && e - s >= 2 {
                prev.1 = e;
                last_side = e - s;
                continue;
            }
        }
        out.push((s, e));
        last_side = e - s;
    }
    out
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `seconds` at `iops` in 0.1 s bins, with the bins in `[from_s, to_s)` replaced by `during`.
    fn run(seconds: f64, iops: u32, from_s: f64, to_s: f64, during: u32) -> Vec<u32> {
        let bins = (seconds * 10.0).round() as usize;
        (0..bins)
            .map(|i| {
                let t = i as f64 / 10.0;
                if t + 1e-9 >= from_s && t + 1e-9 < to_s {
                    during
                } else {
                    iops / 10
                }
            })
            .collect()
    }

    fn assert_near(got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() <= tol, "got {got}, want {want} ± {tol}");
    }

    // Regression (issue 10, item 7): a buffered cold start was reported as a stall.
    #[test]
    fn a_slow_start_is_a_warm_up_but_a_frozen_start_is_a_stall() {
        let warm = run(10.0, 10_000, 0.0, 2.0, 20);
        assert!(stalls(&warm, 0.1, CpuBins::default(), &Thresholds::default()).is_empty());
        let frozen = run(10.0, 10_000, 0.0, 2.0, 0);
        let found = stalls(&frozen, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_near(found[0].evidence["duration_s"], 2.0, 0.3);
        // The same slowdown later in the run is still one.
        let later = run(10.0, 10_000, 5.0, 7.0, 20);
        assert_eq!(
            stalls(&later, 0.1, CpuBins::default(), &Thresholds::default()).len(),
            1
        );
    }

    #[test]
    fn ten_second_freeze_is_timed_within_half_a_second() {
        let ios = run(30.0, 1000, 12.0, 22.0, 0);
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.kind, Kind::Stall);
        assert_near(f.evidence["start_s"], 12.0, 0.5);
        assert_near(f.evidence["duration_s"], 10.0, 0.5);
        assert_eq!(f.evidence["depth"], 0.0);
        assert_near(f.evidence["median_iops"], 1000.0, 1e-9);
    }

    #[test]
    fn empty_input_gives_nothing() {
        assert!(stalls(&[], 0.1, CpuBins::default(), &Thresholds::default()).is_empty());
    }

    #[test]
    fn bad_bin_width_gives_nothing() {
        let ios = run(5.0, 1000, 1.0, 3.0, 0);
        for bin_s in [0.0, -0.1, f64::NAN, f64::INFINITY] {
            assert!(stalls(&ios, bin_s, CpuBins::default(), &Thresholds::default()).is_empty());
        }
    }

    #[test]
    fn all_zeros_is_one_finding_over_the_whole_run() {
        let found = stalls(&[0; 50], 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_near(found[0].evidence["start_s"], 0.0, 1e-9);
        assert_near(found[0].evidence["duration_s"], 5.0, 1e-9);
        assert_eq!(found[0].evidence["depth"], 0.0);
    }

    #[test]
    fn stall_at_the_very_start() {
        let ios = run(20.0, 2000, 0.0, 3.0, 0);
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_near(found[0].evidence["start_s"], 0.0, 0.5);
        assert_near(found[0].evidence["duration_s"], 3.0, 0.5);
    }

    #[test]
    fn stall_at_the_very_end() {
        let ios = run(20.0, 2000, 17.5, 20.0, 0);
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_near(f.evidence["start_s"], 17.5, 0.5);
        assert_near(f.evidence["start_s"] + f.evidence["duration_s"], 20.0, 1e-9);
    }

    #[test]
    fn a_trickle_below_the_limit_is_a_stall_with_its_depth() {
        // 5 IOs per bin against a median of 100: 5% of the median, under the 10% limit.
        let ios = run(30.0, 1000, 10.0, 12.0, 5);
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_near(found[0].evidence["depth"], 0.05, 1e-9);
    }

    #[test]
    fn a_dip_above_the_limit_is_not_a_stall() {
        let ios = run(30.0, 1000, 10.0, 15.0, 20);
        assert!(stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default()).is_empty());
    }

    #[test]
    fn short_stalls_are_dropped() {
        let ios = run(30.0, 1000, 10.0, 10.4, 0);
        assert!(stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default()).is_empty());
        let ios = run(30.0, 1000, 10.0, 10.5, 0);
        assert_eq!(
            stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default()).len(),
            1
        );
    }

    #[test]
    fn one_noisy_bin_does_not_split_a_freeze() {
        let mut ios = run(30.0, 1000, 12.0, 22.0, 0);
        ios[170] = 300; // a burst of held-back completions in the middle of the freeze
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_near(found[0].evidence["start_s"], 12.0, 0.5);
        assert_near(found[0].evidence["duration_s"], 10.0, 0.5);
    }

    #[test]
    fn two_separate_freezes_stay_two() {
        let mut ios = run(30.0, 1000, 5.0, 7.0, 0);
        for b in &mut ios[200..230] {
            *b = 0;
        }
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 2);
        assert_near(found[0].evidence["start_s"], 5.0, 0.5);
        assert_near(found[1].evidence["start_s"], 20.0, 0.5);
        assert_near(found[1].evidence["duration_s"], 3.0, 0.5);
    }

    #[test]
    fn alternating_empty_bins_are_not_one_long_stall() {
        let ios: Vec<u32> = (0..300).map(|i| if i % 2 == 0 { 0 } else { 200 }).collect();
        assert!(stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default()).is_empty());
    }

    #[test]
    fn slow_runs_are_judged_on_wider_bins() {
        // 5 IOPS in 0.1 s bins: at such rates runs of empty bins are common by chance. This
        // deterministic stand-in puts 2 IOs in every fourth bin, with 0.3 s of empty bins
        // between that are no stall, then a real 5 s freeze.
        let mut ios: Vec<u32> = (0..600).map(|i| if i % 4 == 0 { 2 } else { 0 }).collect();
        for b in &mut ios[300..350] {
            *b = 0;
        }
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert!(f.evidence["bin_s"] > 0.1);
        // Timing is only as good as the widened bin.
        assert_near(f.evidence["start_s"], 30.0, f.evidence["bin_s"]);
        assert_near(f.evidence["duration_s"], 5.0, 2.0 * f.evidence["bin_s"]);
    }

    #[test]
    fn a_run_frozen_most_of_the_time_keeps_its_reference() {
        // 70% of the run frozen: the median of all bins would be zero.
        let ios = run(10.0, 1000, 2.0, 9.0, 0);
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_near(found[0].evidence["median_iops"], 1000.0, 1e-9);
        assert_near(found[0].evidence["duration_s"], 7.0, 0.5);
    }

    #[test]
    fn merge_needs_two_bins_on_each_side() {
        assert_eq!(merge(vec![(0, 3), (4, 6)]), vec![(0, 6)]);
        assert_eq!(merge(vec![(0, 1), (2, 6)]), vec![(0, 1), (2, 6)]);
        assert_eq!(merge(vec![(0, 3), (5, 8)]), vec![(0, 3), (5, 8)]);
        assert_eq!(merge(vec![(0, 3), (4, 6), (7, 9)]), vec![(0, 9)]);
    }

    /// iogauge's CPU per bin: `run` and `wait` everywhere, `wait_during` in `[from, to)`.
    fn cpu(
        bins: usize,
        from: usize,
        to: usize,
        run: f32,
        wait_during: f32,
    ) -> (Vec<f32>, Vec<f32>) {
        let r = (0..bins)
            .map(|i| if (from..to).contains(&i) { 0.05 } else { run })
            .collect();
        let w = (0..bins)
            .map(|i| {
                if (from..to).contains(&i) {
                    wait_during
                } else {
                    0.02
                }
            })
            .collect();
        (r, w)
    }

    #[test]
    fn a_stall_the_cpu_explains_is_named_as_the_cpus() {
        let ios = run(10.0, 10_000, 4.0, 6.0, 0);
        let (r, w) = cpu(ios.len(), 40, 60, 0.9, 1.6);
        let found = stalls(
            &ios,
            0.1,
            CpuBins {
                run: &r,
                wait: &w,
                ..CpuBins::default()
            },
            &Thresholds::default(),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert!(
            f.summary.contains("waited for a CPU")
                && f.summary.contains("the device did not stall"),
            "{}",
            f.summary
        );
        assert_near(f.evidence["cpu_wait"], 1.6, 1e-3);
        assert_near(f.evidence["duration_s"], 2.0, 0.3);
    }

    #[test]
    fn a_stall_with_the_threads_asleep_or_little_waiting_is_the_devices() {
        let ios = run(10.0, 10_000, 4.0, 6.0, 0);
        let device = |r: &[f32], w: &[f32]| {
            let found = stalls(
                &ios,
                0.1,
                CpuBins {
                    run: r,
                    wait: w,
                    ..CpuBins::default()
                },
                &Thresholds::default(),
            );
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(!found[0].summary.contains("CPU"), "{}", found[0].summary);
            assert!(!found[0].evidence.contains_key("cpu_wait"));
        };
        // Asleep on the device: neither running nor waiting.
        let (r, w) = cpu(ios.len(), 40, 60, 0.9, 0.0);
        device(&r, &w);
        // Waiting, but less than half a thread's worth.
        let (r, w) = cpu(ios.len(), 40, 60, 0.9, 0.4);
        device(&r, &w);
        // Waiting half a thread's worth, but running more than waiting.
        let (mut r, w) = cpu(ios.len(), 40, 60, 0.9, 0.6);
        r[40..60].iter_mut().for_each(|x| *x = 0.8);
        device(&r, &w);
        // Series that stop before the stall, or hold a NaN: not judged.
        let (r, w) = cpu(ios.len(), 40, 60, 0.9, 1.6);
        device(&r[..50], &w[..50]);
        let mut bad = w.clone();
        bad[45] = f32::NAN;
        device(&r, &bad);
        // Threads that always wait (more pollers than cores): a stall waiting as usual is the
        // device's.
        let (r, mut w) = cpu(ios.len(), 40, 60, 0.9, 1.6);
        w.iter_mut().for_each(|x| *x = x.max(1.4));
        device(&r, &w);
    }

    /// The one stall `ios` holds, judged with iogauge's CPU `run` and `wait`.
    fn only_stall(ios: &[u32], run: &[f32], wait: &[f32]) -> Finding {
        let cpu = CpuBins {
            run,
            wait,
            ..CpuBins::default()
        };
        let found = stalls(ios, 0.1, cpu, &Thresholds::default());
        assert_eq!(found.len(), 1, "{found:?}");
        found.into_iter().next().unwrap()
    }

    /// Threads that got no CPU at all book their wait when they next run, as IO comes back:
    /// the 3.2 CPU-seconds of a 2 s stall read in the bin after it are the stall's. Booked a
    /// window later (the next bin's IO between), they are not.
    #[test]
    fn a_wait_booked_as_io_resumes_is_the_stalls() {
        let ios = run(10.0, 10_000, 4.0, 6.0, 0);
        let judge = |at: usize| {
            let (r, mut w) = cpu(ios.len(), 40, 60, 0.9, 0.0);
            w[at] += 32.0;
            only_stall(&ios, &r, &w)
        };
        let f = judge(60);
        assert!(f.summary.contains("waited for a CPU"), "{}", f.summary);
        assert_near(f.evidence["cpu_wait"], 1.6, 0.01);
        let f = judge(61);
        assert!(!f.summary.contains("CPU"), "{}", f.summary);
    }

    /// The sampling thread read the wait only at its next slice, a second on: the stall's
    /// 1.9 CPU-seconds spread over the ten bins after it, which still wait 1.9 more than the
    /// usual 0.6, are the stall's. The same wait after a bin at the usual level is not.
    #[test]
    fn a_wait_read_a_slice_later_is_the_stalls() {
        let ios = run(10.0, 10_000, 4.0, 5.0, 0);
        let judge = |gap: bool| {
            let (r, mut w) = cpu(ios.len(), 40, 50, 0.9, 0.6);
            w.iter_mut().for_each(|x| *x = x.max(0.6));
            w[50..60].iter_mut().for_each(|x| *x = 2.5);
            if gap {
                w[50] = 0.6;
            }
            only_stall(&ios, &r, &w)
        };
        let f = judge(false);
        assert!(f.summary.contains("waited for a CPU"), "{}", f.summary);
        assert_near(f.evidence["cpu_wait"], 2.5, 0.01);
        let f = judge(true);
        assert!(!f.summary.contains("CPU"), "{}", f.summary);
    }

    /// A stall with iogauge's threads asleep on a machine that had no idle CPU, other work
    /// taking 1.5 of its 2, with IO at 5% of its rate: the workers that complete the IO may
    /// have waited unseen, so it is named as possibly the CPU's. The near misses: 0.4 of a CPU
    /// idle, other work under half a CPU, the machine's CPU count unknown, and IO that stopped
    /// altogether (a frozen file system on a busy machine) — each the device's.
    #[test]
    fn a_stall_on_a_machine_with_no_idle_cpu_names_the_cpu() {
        let mut ios = run(10.0, 10_000, 4.0, 6.0, 50);
        let (r, w) = cpu(ios.len(), 40, 60, 0.9, 0.0);
        let at = |ios: &[u32], run: f32, others: f32, cpus: f64| {
            let mut rr = r.clone();
            rr[40..60].iter_mut().for_each(|x| *x = run);
            let o = vec![others; ios.len()];
            stalls(
                ios,
                0.1,
                CpuBins {
                    run: &rr,
                    wait: &w,
                    others: &o,
                    cpus,
                    machine: 0.0,
                    ..CpuBins::default()
                },
                &Thresholds::default(),
            )
        };
        let found = at(&ios, 0.5, 1.5, 2.0);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert!(f.summary.contains("no idle CPU"), "{}", f.summary);
        assert_near(f.evidence["others_cpus"], 1.5, 1e-6);
        assert!(!f.evidence.contains_key("cpu_wait"));
        for (run, others, cpus) in [(0.2, 1.4, 2.0), (1.6, 0.4, 2.0), (0.5, 1.5, 0.0)] {
            let found = at(&ios, run, others, cpus);
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(!found[0].summary.contains("CPU"), "{}", found[0].summary);
            assert!(!found[0].evidence.contains_key("others_cpus"));
        }
        // IO at 1% of its rate, below the depth, but completing in every window: the CPU's as
        // likely; the same share with empty windows between (IO that stopped, then resumed
        // for a moment), the device's.
        ios[40..60].iter_mut().for_each(|x| *x = 10);
        let found = at(&ios, 0.5, 1.5, 2.0);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].summary.contains("no idle CPU"),
            "{}",
            found[0].summary
        );
        ios[40..60]
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = if i % 2 == 0 { 20 } else { 0 });
        let found = at(&ios, 0.5, 1.5, 2.0);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(!found[0].summary.contains("CPU"), "{}", found[0].summary);
        ios[40..60].iter_mut().for_each(|x| *x = 0);
        let found = at(&ios, 0.5, 1.5, 2.0);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(!found[0].summary.contains("CPU"), "{}", found[0].summary);
    }

    /// IO that stopped altogether at a loop device, in flight there in every bin of the stall,
    /// on a machine with no idle CPU: the loop device's worker may have waited for a CPU
    /// (tests/stall.rs makes it wait), so it is named as possibly the CPU's, with the least
    /// count in flight. The near misses, each the device's: a bin inside the stall with nothing
    /// in flight (IO held above the device, a frozen file system), a device no kernel thread
    /// serves, a machine with a CPU idle, and in-flight counts that stop before the stall ends.
    #[test]
    fn io_stopped_in_flight_at_a_loop_device_on_a_busy_machine_names_the_cpu() {
        let ios = run(10.0, 10_000, 4.0, 6.0, 0);
        let (r, w) = cpu(ios.len(), 40, 60, 0.9, 0.0);
        let o = vec![1.9f32; ios.len()];
        let mut flight = vec![0.0f32; ios.len()];
        flight[40..60].iter_mut().for_each(|x| *x = 2.0);
        let at = |flight: &[f32], worker: bool, others: &[f32]| {
            stalls(
                &ios,
                0.1,
                CpuBins {
                    run: &r,
                    wait: &w,
                    others,
                    cpus: 2.0,
                    machine: 0.0,
                    in_flight: flight,
                    worker,
                },
                &Thresholds::default(),
            )
        };
        let found = at(&flight, true, &o);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert!(
            f.summary.contains("no idle CPU") && f.summary.contains("in flight"),
            "{}",
            f.summary
        );
        assert_near(f.evidence["in_flight"], 2.0, 1e-6);
        assert_near(f.evidence["others_cpus"], 1.9, 1e-6);
        // Nothing in flight at the stall's first and last bins, read before and after it:
        // still the CPU's as likely.
        let mut edges = flight.clone();
        edges[40] = 0.0;
        edges[59] = 0.0;
        let found = at(&edges, true, &o);
        assert!(found[0].summary.contains("in flight"), "{found:?}");
        // A bin not looked in, alone: still; two in a row: not judged, the device's.
        let mut unseen = flight.clone();
        unseen[45] = -1.0;
        let found = at(&unseen, true, &o);
        assert!(found[0].summary.contains("in flight"), "{found:?}");
        unseen[46] = -1.0;
        let found = at(&unseen, true, &o);
        assert!(!found[0].summary.contains("CPU"), "{found:?}");
        let mut gap = flight.clone();
        gap[50] = 0.0;
        let idle = vec![1.4f32; ios.len()];
        for found in [
            at(&gap, true, &o),
            at(&flight, false, &o),
            at(&flight, true, &idle),
            at(&flight[..55], true, &o),
        ] {
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(!found[0].summary.contains("CPU"), "{}", found[0].summary);
            assert!(!found[0].evidence.contains_key("in_flight"));
        }
    }
}
