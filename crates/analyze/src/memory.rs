//! A device that is memory — zram, a RAM disk, a loop device over a file in tmpfs — has no state
//! of its own to change: no cache to fill, no burst bucket to empty, no spare area to use up.
//! Its rate is the CPU's: the threads that copy (or compress) each block, which CPUs the
//! scheduler gives them and when, the clock. So a level that moved within a run (`regime`) or
//! had not settled by its end (`steady`) is said as the CPU's, as information: on a quiet
//! 2-CPU machine `write 8K + fdatasync` on a RAM loop rose 49% 2.6 s into its cell, and
//! `randread 64K` on xfs over one moved −20% over its last 5 s (issue 37); the storage causes
//! those warnings named (a write cache, preconditioning) were not there.
//!
//! A change that other work on the CPU explains keeps its warning: a busy machine is worth one
//! on any device. The caller says a device is memory only when no cgroup limits its IO (a
//! throttle is a device of its own, and the tests that plant regimes use one over RAM).

use crate::fmt::{count, secs, signed_pct};
use crate::{Finding, Kind, Severity};

const ADVICE: &str = "A device in memory measures the CPU and the kernel's IO path, not storage: \
quote the cell's mean as that path's rate, and pin the run (taskset) or repeat it (--repeat) to \
see how far the scheduler moves it.";

/// Says each `regime` and `steady` warning in `found` about a run on `memory` (as
/// `TargetInfo::memory` names it) as the CPU's pace, at info; other findings are left as
/// they are.
pub fn on_memory(found: &mut [Finding], memory: &str) {
    for f in found.iter_mut().filter(|f| f.severity == Severity::Warning) {
        let e = |k: &str| f.evidence.get(k).copied();
        let summary = match f.kind {
            // The CPU-explained kinds carry the CPU's evidence: they stay warnings.
            Kind::Regime if e("cpu_wait_before").is_none() && e("others_cpus_before").is_none() => {
                let (Some(at), Some(before), Some(after)) =
                    (e("change_s"), e("before_iops"), e("after_iops"))
                else {
                    continue;
                };
                format!(
                    "at {} IOPS {} from {} to {} ({}) and stayed there, on {memory}, which is memory: its rate is the CPU's (the threads that copy each block and where the scheduler runs them), not a state of the device",
                    secs(at),
                    if after < before { "fell" } else { "rose" },
                    count(before),
                    count(after),
                    signed_pct((after - before) / before),
                )
            }
            Kind::Steady => {
                let (Some(before), Some(after), Some(window)) =
                    (e("before_mean_iops"), e("window_mean_iops"), e("window"))
                else {
                    continue;
                };
                format!(
                    "the rate moved from {} IOPS over {window} intervals to {} over the last {window} ({}), on {memory}, which is memory: the CPU's pace moved (the threads that copy each block and where the scheduler runs them), not the device's state; there is nothing to precondition",
                    count(before),
                    count(after),
                    signed_pct((after - before) / before),
                )
            }
            _ => continue,
        };
        f.summary = summary;
        f.severity = Severity::Info;
        f.advice = ADVICE.to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regime(extra: Option<&str>) -> Finding {
        let f = Finding::new(
            Kind::Regime,
            Severity::Warning,
            "at 2.6 s IOPS rose from 7,510 to 11,190 (+49%) and stayed there: a cache warming up or a throttle lifted".into(),
            "find what changed",
        )
        .with("change_s", 2.6)
        .with("before_iops", 7510.0)
        .with("after_iops", 11190.0);
        match extra {
            Some(k) => f.with(k, 1.0),
            None => f,
        }
    }

    fn steady() -> Finding {
        Finding::new(
            Kind::Steady,
            Severity::Warning,
            "still drifting: IOPS went from 17,523 over 5 intervals to 13,988".into(),
            "precondition it",
        )
        .with("window", 5.0)
        .with("before_mean_iops", 17523.0)
        .with("window_mean_iops", 13988.0)
    }

    #[test]
    fn a_change_on_memory_is_the_cpus_pace_at_info() {
        let mut found = vec![regime(None), steady()];
        on_memory(&mut found, "loop3 (a file in tmpfs)");
        assert!(found.iter().all(|f| f.severity == Severity::Info));
        assert_eq!(
            found[0].summary,
            "at 2.6 s IOPS rose from 7,510 to 11,190 (+49%) and stayed there, on loop3 (a file in tmpfs), which is memory: its rate is the CPU's (the threads that copy each block and where the scheduler runs them), not a state of the device"
        );
        assert!(found[1].summary.starts_with(
            "the rate moved from 17,523 IOPS over 5 intervals to 13,988 over the last 5 (−20%), on loop3 (a file in tmpfs), which is memory"
        ));
        assert!(found
            .iter()
            .all(|f| !f.summary.contains("cache") && !f.advice.contains("precondition")));
        // The evidence is kept as it was.
        assert_eq!(found[0].evidence["after_iops"], 11190.0);
    }

    #[test]
    fn other_work_on_the_cpu_and_other_findings_keep_their_warning() {
        let mut found = vec![
            regime(Some("cpu_wait_before")),
            regime(Some("others_cpus_before")),
            Finding::new(Kind::Stall, Severity::Warning, "a stall".into(), "look"),
        ];
        let before = found.clone();
        on_memory(&mut found, "zram0");
        assert_eq!(found, before);
    }
}
