//! `--until-stable`: when a cell has measured enough. A cell is stable once the 95% confidence
//! interval of the mean of its per-interval IOPS is within ±3% of that mean — Student's t
//! interval, mean ± t(0.975, n − 1)·s/√n, computed by `iogauge_stats::summarize` — after at
//! least the minimum time; at the maximum time it stops whatever the interval says.
//!
//! Two honest caveats, also in the user's note: the interval assumes independent intervals,
//! and consecutive seconds of a storage device are correlated (caches fill, garbage collection
//! comes in bursts), so the interval is narrower than the truth; and checking after every
//! interval is a sequential test, which stops early on a lucky streak more often than 5% of the
//! time. The rule is a stopping heuristic that saves time on steady cells, not a guarantee.

use std::time::Duration;

/// The rule's defaults: ±3% at 95% confidence, at least 1 s.
pub const REL_HALF_WIDTH: f64 = 0.03;
pub const MIN_TIME: Duration = Duration::from_secs(1);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub min: Duration,
    pub max: Duration,
    /// Largest accepted half-width of the interval, relative to the mean.
    pub rel_half_width: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Keep measuring.
    Continue,
    /// The interval is narrow enough; `rel_half_width` is what it reached.
    Stable { rel_half_width: f64 },
    /// The maximum time is reached without stability.
    Limit,
}

impl Rule {
    pub fn new(max: Duration) -> Rule {
        Rule {
            min: MIN_TIME,
            max,
            rel_half_width: REL_HALF_WIDTH,
        }
    }

    /// Decides after `iops.len()` complete intervals of `interval` each.
    pub fn check(&self, iops: &[f64], interval: Duration) -> Verdict {
        let elapsed = interval.saturating_mul(iops.len() as u32);
        if elapsed >= self.min {
            if let Some(h) = rel_half_width(iops) {
                if h <= self.rel_half_width {
                    return Verdict::Stable { rel_half_width: h };
                }
            }
        }
        if elapsed >= self.max {
            Verdict::Limit
        } else {
            Verdict::Continue
        }
    }

    /// When a cell that ran to the end would have stopped: the time and the half-width reached
    /// then, or `None` if it never became stable.
    pub fn stable_after(&self, iops: &[f64], interval: Duration) -> Option<(Duration, f64)> {
        (1..=iops.len()).find_map(|n| match self.check(&iops[..n], interval) {
            Verdict::Stable { rel_half_width } => {
                Some((interval.saturating_mul(n as u32), rel_half_width))
            }
            _ => None,
        })
    }
}

/// Half-width of the 95% confidence interval of the mean, relative to the mean; `None` when it
/// cannot be estimated (fewer than two intervals, a non-positive mean, a non-finite value).
pub fn rel_half_width(iops: &[f64]) -> Option<f64> {
    if iops.len() < 2 {
        return None;
    }
    let s = iogauge_stats::summarize(iops)?;
    if s.mean <= 0.0 {
        return None;
    }
    Some((s.ci95.1 - s.ci95.0) / 2.0 / s.mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn a_steady_cell_stops_at_the_first_interval_the_rule_allows() {
        let rule = Rule::new(Duration::from_secs(10));
        let flat = [1000.0; 10];
        // Two equal intervals: no spread, and 2 s is past the 1 s minimum.
        assert_eq!(rule.stable_after(&flat, SEC), Some((2 * SEC, 0.0)));
        // Quarter-second intervals: the minimum second decides, four intervals.
        let quarter = Duration::from_millis(250);
        assert_eq!(rule.stable_after(&flat, quarter), Some((SEC, 0.0)));
    }

    #[test]
    fn one_interval_is_never_enough() {
        let rule = Rule::new(Duration::from_secs(10));
        assert_eq!(rule.check(&[1000.0], SEC), Verdict::Continue);
        assert_eq!(rule.check(&[], SEC), Verdict::Continue);
    }

    #[test]
    fn alternating_noise_needs_the_textbook_number_of_intervals() {
        // Values m(1 ± a), alternating. Independently of `summarize`: the half-width of each
        // prefix from its own mean, its sample sd (divisor n − 1) and t(0.975, n − 1); the rule
        // must stop at the first prefix where that is at most 3%.
        let a = 0.1;
        let values: Vec<f64> = (0..200)
            .map(|i| 1000.0 * if i % 2 == 0 { 1.0 + a } else { 1.0 - a })
            .collect();
        let half = |xs: &[f64]| {
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            iogauge_stats::student_t_quantile(0.975, n - 1.0) * (var / n).sqrt() / mean
        };
        let expect = (2..=200)
            .find(|&n| half(&values[..n]) <= REL_HALF_WIDTH)
            .unwrap();
        // For even n the sd is a·m·√(n/(n−1)): the textbook form t·a/√(n−1) agrees.
        if expect % 2 == 0 {
            let n = expect as f64;
            let t = iogauge_stats::student_t_quantile(0.975, n - 1.0);
            assert!((t * a / (n - 1.0).sqrt() - half(&values[..expect])).abs() < 1e-9);
        }
        assert!(
            expect > 40,
            "a 10% wobble takes many intervals to pin down to 3%"
        );
        let rule = Rule::new(Duration::from_secs(1000));
        let (after, h) = rule.stable_after(&values, SEC).unwrap();
        assert_eq!(after, SEC * expect as u32);
        assert!((h - half(&values[..expect])).abs() < 1e-9);
    }

    #[test]
    fn the_maximum_time_ends_an_unstable_cell() {
        let rule = Rule::new(Duration::from_secs(4));
        let wild = [100.0, 5000.0, 10.0, 8000.0, 300.0];
        assert_eq!(rule.check(&wild[..3], SEC), Verdict::Continue);
        assert_eq!(rule.check(&wild[..4], SEC), Verdict::Limit);
        assert_eq!(rule.stable_after(&wild, SEC), None);
    }

    #[test]
    fn a_cell_that_did_nothing_is_never_stable() {
        assert_eq!(rel_half_width(&[0.0, 0.0, 0.0]), None);
        assert_eq!(rel_half_width(&[f64::NAN, 1.0, 1.0]), None);
    }

    proptest! {
        /// Stable means what it says: the interval of the prefix it stopped at is within the
        /// bound, and no earlier prefix past the minimum was.
        #[test]
        fn stable_after_is_the_first_prefix_within_bound(
            values in proptest::collection::vec(1.0f64..1e6, 0..60),
            bound in 0.005f64..0.2,
        ) {
            let rule = Rule { min: Duration::from_secs(3), max: Duration::from_secs(3600), rel_half_width: bound };
            match rule.stable_after(&values, SEC) {
                Some((after, h)) => {
                    let n = after.as_secs() as usize;
                    prop_assert!(n >= 3);
                    prop_assert!(h <= bound);
                    prop_assert_eq!(rel_half_width(&values[..n]), Some(h));
                    for k in 3..n {
                        prop_assert!(rel_half_width(&values[..k]).unwrap() > bound);
                    }
                }
                None => {
                    for k in 3..=values.len() {
                        prop_assert!(rel_half_width(&values[..k]).unwrap() > bound);
                    }
                }
            }
        }
    }
}
