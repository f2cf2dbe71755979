//! `--until-stable`: when a cell has measured enough. A cell is stable once the 95% confidence
//! interval of its mean rate is within ±3% of that mean, after at least the minimum time; at
//! the maximum time it stops whatever the interval says.
//!
//! The samples are 100 ms rates, read live from the workers' counters. Consecutive samples of a
//! storage device are correlated (caches fill, garbage collection comes in bursts), and a t
//! interval over correlated samples is too narrow; with one-second samples and a t quantile for
//! few of them, it was too wide to ever stop a 10 s cell early. So the interval is computed by
//! the method of batch means (B. Schmeiser, "Batch size effects in the analysis of simulation
//! output", Operations Research 30(3), 1982; A. Law and W. Kelton, Simulation Modeling and
//! Analysis, ch. 9): the samples are grouped into batches, the batch size doubled until the
//! lag-1 autocorrelation of the batch means is under [`MAX_LAG1`] (or only [`MIN_BATCHES`]
//! batches would remain), and the Student t interval taken over the batch means, which are then
//! nearly independent. Negative correlation (alternating samples) only makes the interval
//! conservative, so it does not grow the batches.
//!
//! Checking after every sample is a sequential test, which stops early on a lucky streak more
//! often than 5% of the time: the rule is a stopping heuristic with an honest interval, and the
//! interval each cell reached is reported with it.

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

/// Batch means whose lag-1 autocorrelation is under this are taken as independent.
pub const MAX_LAG1: f64 = 0.2;
/// Fewest batches an interval is computed from once batching starts.
pub const MIN_BATCHES: usize = 10;

/// Half-width of the 95% confidence interval of the mean, relative to the mean, by batch means
/// (see the module documentation); `None` when it cannot be estimated (fewer than two samples,
/// a non-positive mean, a non-finite value).
pub fn rel_half_width(iops: &[f64]) -> Option<f64> {
    if iops.len() < 2 || iops.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut batch = 1;
    while iops.len() / (batch * 2) >= MIN_BATCHES && lag1(&batch_means(iops, batch)) > MAX_LAG1 {
        batch *= 2;
    }
    let means = batch_means(iops, batch);
    if means.len() < 2 {
        return None;
    }
    let s = iogauge_stats::summarize(&means)?;
    if s.mean <= 0.0 {
        return None;
    }
    Some((s.ci95.1 - s.ci95.0) / 2.0 / s.mean)
}

/// Means of consecutive batches of `size` samples (a partial last batch is left out).
fn batch_means(xs: &[f64], size: usize) -> Vec<f64> {
    xs.chunks_exact(size)
        .map(|c| c.iter().sum::<f64>() / size as f64)
        .collect()
}

/// Lag-1 autocorrelation; 0 when undefined (constant or too short).
fn lag1(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 3 {
        return 0.0;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
    if var == 0.0 {
        return 0.0;
    }
    let cov: f64 = xs.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    cov / var
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

    // Issue 16: correlated samples must not give a falsely narrow interval. An AR(1) series
    // with φ = 0.9 around 1000: batch means widen the interval over the naive one.
    #[test]
    fn correlated_samples_are_batched() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut x = 0.0f64;
        let values: Vec<f64> = (0..400)
            .map(|_| {
                x = 0.9 * x + (rng.f64() - 0.5) * 40.0;
                1000.0 + x
            })
            .collect();
        let naive = {
            let s = iogauge_stats::summarize(&values).unwrap();
            (s.ci95.1 - s.ci95.0) / 2.0 / s.mean
        };
        let batched = rel_half_width(&values).unwrap();
        assert!(
            batched > 1.5 * naive,
            "batched {batched} against naive {naive}"
        );
        // Independent samples are not batched: the interval is the textbook one.
        let iid: Vec<f64> = (0..400)
            .map(|_| 1000.0 + (rng.f64() - 0.5) * 40.0)
            .collect();
        let s = iogauge_stats::summarize(&iid).unwrap();
        let textbook = (s.ci95.1 - s.ci95.0) / 2.0 / s.mean;
        assert!((rel_half_width(&iid).unwrap() - textbook).abs() < 0.3 * textbook);
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
