//! Stragglers: in a run on many hosts at once (under MPI), a host whose rate is far from the
//! others' — the slow disk of a fleet, the client of a shared array that got less of it. The
//! rule is the repeats' outlier rule (computed by the caller with the modified z-score of
//! Iglewicz and Hoaglin, |z| > 3.5, and at least 10% from the median of the others), applied
//! across hosts instead of across repeats.

use crate::fmt::{count, pct};
use crate::{Finding, Kind, Severity};

/// One finding per flagged index of `iops` (one value per host, named by `hosts`).
///
/// Evidence: `rank` (the host's index, its MPI rank), `iops`, `others_median_iops` and
/// `shift_frac` = iops / others' median − 1.
pub fn stragglers(hosts: &[String], iops: &[f64], flagged: &[usize]) -> Vec<Finding> {
    flagged
        .iter()
        .filter(|&&i| i < iops.len() && i < hosts.len() && iops[i].is_finite())
        .filter_map(|&i| {
            let mut others: Vec<f64> = (0..iops.len())
                .filter(|&j| j != i && iops[j].is_finite())
                .map(|j| iops[j])
                .collect();
            if others.is_empty() {
                return None;
            }
            others.sort_by(f64::total_cmp);
            let n = others.len();
            let median = match n % 2 {
                1 => others[n / 2],
                _ => (others[n / 2 - 1] + others[n / 2]) / 2.0,
            };
            if median <= 0.0 {
                return None;
            }
            let shift = iops[i] / median - 1.0;
            // "100% below" would hide a host that did almost nothing: far off, say the share.
            let how = match shift {
                s if s <= -0.9 => format!("{} of", pct(1.0 + s)),
                s if s < 0.0 => format!("{} below", pct(-s)),
                s => format!("{} above", pct(s)),
            };
            Some(
                Finding::new(
                    Kind::Straggler,
                    Severity::Warning,
                    format!(
                        "{} did {} IOPS, {how} the other hosts' median of {}",
                        hosts[i],
                        count(iops[i]),
                        count(median)
                    ),
                    "Look at that host's own result (its device counters and findings) and at what is different about it: its disk or its firmware, a RAID rebuild, a throttle or a noisy neighbour, its path to a shared array.",
                )
                .with("rank", i as f64)
                .with("iops", iops[i])
                .with("others_median_iops", median)
                .with("shift_frac", shift),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_host_and_by_how_much() {
        let hosts: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let f = stragglers(&hosts, &[4000.0, 1000.0, 4100.0], &[1]);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].summary.starts_with("b did 1,000 IOPS, 75"),
            "{}",
            f[0].summary
        );
        assert_eq!(f[0].evidence["rank"], 1.0);
        assert!(stragglers(&hosts, &[4000.0, 1000.0, 4100.0], &[]).is_empty());
        assert!(stragglers(&hosts[..1], &[4000.0], &[0]).is_empty());
    }
}
