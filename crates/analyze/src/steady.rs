//! Steady state: whether a run's IOPS had settled before it was measured, by the steady-state
//! test of the SNIA Solid State Storage Performance Test Specification (SSS PTS; the same
//! definition of Steady State from PTS Enterprise 1.0 of 2011 to PTS 2.0.2 of 2020): over a
//! measurement window of the last 5 rounds,
//! - the data excursion, max − min, is at most 20% of the window's mean, and
//! - the slope excursion of the least-squares line, |slope| × (window − 1), is at most 10% of it.
//!
//! SNIA's rounds are whole passes of a workload; here they are the run's reporting intervals, so
//! the test says whether the last intervals agree, not that the device was preconditioned.

use crate::fmt::{count, pct};
use crate::{Finding, Kind, Severity, Thresholds};

/// Intervals in the SNIA PTS measurement window.
pub const STEADY_WINDOW: usize = 5;

const DRIFTING: &str = "The device had not settled: run longer, or precondition it first (SNIA \
PTS writes the device twice over with the workload before measuring) until the last intervals \
agree. SSD write results in particular fall for minutes once the spare area is used up.";
/// Reads do not wear a device into a new state; a read rate drifts with caches and other load.
const DRIFTING_READS: &str = "The rate had not settled: run longer until the last intervals \
agree (a cache warming up, or other load on the device, moves read rates).";

/// The fewest intervals a series needs before it is judged: twice the window, so the window
/// never holds the start of the run (a ramp, a cache filling) and a short cell is not called
/// drifting for what every run does in its first seconds.
pub fn min_intervals(window: usize) -> usize {
    2 * window.max(2)
}

/// The SNIA PTS numbers of a measurement window: its mean, data excursion (max − min), the
/// least-squares slope per step and the slope excursion |slope| × (window − 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub mean: f64,
    pub excursion: f64,
    pub slope: f64,
    pub slope_excursion: f64,
}

impl Window {
    /// Steady by the specification: excursion ≤ `th.steady_excursion` and slope excursion ≤
    /// `th.steady_slope` of the mean (20% and 10% by default).
    pub fn steady(&self, th: &Thresholds) -> bool {
        let limit = self.mean.abs();
        self.excursion <= th.steady_excursion * limit
            && self.slope_excursion <= th.steady_slope * limit
    }
}

/// The SNIA PTS numbers of `ys`, one value per round (or interval), at least two.
pub fn snia_window(ys: &[f64]) -> Window {
    let w = ys.len().max(1) as f64;
    let mean = ys.iter().sum::<f64>() / w;
    let (lo, hi) = ys
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &y| {
            (lo.min(y), hi.max(y))
        });
    let x_mean = (w - 1.0) / 2.0;
    let (sxy, sxx) = ys
        .iter()
        .enumerate()
        .fold((0.0, 0.0), |(sxy, sxx), (i, &y)| {
            let dx = i as f64 - x_mean;
            (sxy + dx * (y - mean), sxx + dx * dx)
        });
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    Window {
        mean,
        excursion: hi - lo,
        slope,
        slope_excursion: slope.abs() * (w - 1.0),
    }
}

/// Applies the SNIA PTS test to the last `window` values of `per_interval_iops` (one value per
/// interval of `interval_s` seconds). A `window` under 2 is taken as 2, the least a slope needs.
/// Empty input, fewer intervals than [`min_intervals`] (too short to judge: a limit of the
/// measurement, not of the storage, which the run says once in its notes), or a non-finite
/// value inside the window gives no finding. `writes`: the workload writes, so a drift may be
/// the device's own change of state (advice on preconditioning), not only the run's.
///
/// Evidence: `window`, `window_mean_iops`, `excursion_iops`, `slope_excursion_iops`,
/// `slope_iops_per_interval`, and when the mean is positive `excursion_frac` and
/// `slope_excursion_frac`; with a valid `interval_s` also `slope_iops_per_s` and `window_start_s`.
pub fn steady(
    per_interval_iops: &[f64],
    interval_s: f64,
    window: usize,
    writes: bool,
    th: &Thresholds,
) -> Vec<Finding> {
    let window = window.max(2);
    let n = per_interval_iops.len();
    if n < min_intervals(window) {
        return Vec::new();
    }
    let ys = &per_interval_iops[n - window..];
    if ys.iter().any(|y| !y.is_finite()) {
        return Vec::new();
    }

    let Window {
        mean,
        excursion,
        slope,
        slope_excursion,
    } = snia_window(ys);
    let w = window as f64;
    let limit = mean.abs();
    let flat = excursion <= th.steady_excursion * limit;
    let level = slope_excursion <= th.steady_slope * limit;
    let valid_interval = interval_s.is_finite() && interval_s > 0.0;
    let per_s = if valid_interval {
        format!("{} IOPS/s", count(slope / interval_s))
    } else {
        format!("{} IOPS per interval", count(slope))
    };

    let share = |v: f64| {
        if limit > 0.0 {
            pct(v / limit)
        } else {
            "all".to_owned()
        }
    };
    let f = if flat && level {
        Finding::new(
            Kind::Steady,
            Severity::Info,
            format!(
                "steady state: the last {window} intervals span {} (limit {}) and the trend {} \
                 (limit {}) of the mean {} IOPS",
                share(excursion),
                pct(th.steady_excursion),
                share(slope_excursion),
                pct(th.steady_slope),
                count(mean)
            ),
            "The last intervals agree by the SNIA PTS test; results from them are a fair \
             steady-state measurement.",
        )
    } else {
        Finding::new(
            Kind::Steady,
            Severity::Warning,
            format!(
                "still drifting: IOPS changes by {per_s} over the last {window} intervals \
                 (range {} of the mean {} IOPS, limit {}; trend {}, limit {})",
                share(excursion),
                count(mean),
                pct(th.steady_excursion),
                share(slope_excursion),
                pct(th.steady_slope)
            ),
            if writes { DRIFTING } else { DRIFTING_READS },
        )
    };
    let mut f = f
        .with("window", w)
        .with("window_mean_iops", mean)
        .with("excursion_iops", excursion)
        .with("slope_excursion_iops", slope_excursion)
        .with("slope_iops_per_interval", slope);
    if limit > 0.0 {
        f = f
            .with("excursion_frac", excursion / limit)
            .with("slope_excursion_frac", slope_excursion / limit);
    }
    if valid_interval {
        f = f
            .with("slope_iops_per_s", slope / interval_s)
            .with("window_start_s", (n - window) as f64 * interval_s);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settled_series_is_steady() {
        // Falls from 30,000 and settles around 10,000 ± 2%.
        let mut series = vec![30_000.0, 20_000.0, 14_000.0, 11_000.0, 10_500.0];
        series.extend([10_100.0, 9_900.0, 10_200.0, 9_800.0, 10_000.0]);
        let found = steady(&series, 60.0, STEADY_WINDOW, true, &Thresholds::default());
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.kind, Kind::Steady);
        assert_eq!(f.severity, Severity::Info);
        assert!((f.evidence["window_mean_iops"] - 10_000.0).abs() < 1e-9);
        assert!((f.evidence["excursion_iops"] - 400.0).abs() < 1e-9);
        assert_eq!(f.evidence["window_start_s"], 5.0 * 60.0);
    }

    #[test]
    fn a_linear_drift_is_still_drifting_with_its_slope() {
        // Falls 300 IOPS per 10 s interval: 30 IOPS/s.
        let series: Vec<f64> = (0..12).map(|i| 12_000.0 - 300.0 * i as f64).collect();
        let found = steady(&series, 10.0, STEADY_WINDOW, true, &Thresholds::default());
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.advice.contains("precondition"), "{}", f.advice);
        // A read workload drifting the same way gets no advice about wearing the device.
        let reads = steady(&series, 10.0, STEADY_WINDOW, false, &Thresholds::default());
        assert!(
            !reads[0].advice.contains("spare area"),
            "{}",
            reads[0].advice
        );
        assert!((f.evidence["slope_iops_per_s"] + 30.0).abs() < 1e-9);
        assert!((f.evidence["slope_iops_per_interval"] + 300.0).abs() < 1e-9);
        // Last 5: 9,900 … 8,700, mean 9,300; slope excursion 1,200 = 12.9% > 10%.
        assert!((f.evidence["slope_excursion_iops"] - 1_200.0).abs() < 1e-9);
        assert!((f.evidence["slope_excursion_frac"] - 1_200.0 / 9_300.0).abs() < 1e-9);
        assert!(f.summary.contains("still drifting"));
        assert!(f.summary.contains("-30 IOPS/s"), "{}", f.summary);
    }

    #[test]
    fn wide_swings_without_trend_fail_the_excursion_test() {
        let series = [10_000.0, 13_000.0, 10_000.0, 13_000.0, 10_000.0].repeat(2);
        let found = steady(&series, 1.0, STEADY_WINDOW, true, &Thresholds::default());
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(found[0].evidence["slope_iops_per_interval"], 0.0);
    }

    /// A series shorter than twice the window is not judged at all (issue 23: 5-second cells
    /// were each called "still drifting" for their first seconds); the near miss one interval
    /// longer is.
    #[test]
    fn short_and_empty_series() {
        let th = Thresholds::default();
        assert!(steady(&[], 1.0, STEADY_WINDOW, true, &th).is_empty());
        let ramp: Vec<f64> = (1..=9).map(|i| 1000.0 * i as f64).collect();
        assert!(steady(&ramp, 1.0, STEADY_WINDOW, true, &th).is_empty());
        let ramp: Vec<f64> = (1..=10).map(|i| 1000.0 * i as f64).collect();
        assert_eq!(
            steady(&ramp, 1.0, STEADY_WINDOW, true, &th)[0].severity,
            Severity::Warning
        );
        let mut nan = vec![1.0; 10];
        nan[7] = f64::NAN;
        assert!(steady(&nan, 1.0, STEADY_WINDOW, true, &th).is_empty());
        // Window 0 is taken as 2: four intervals are enough.
        let two = steady(&[5.0, 5.0, 5.0, 5.0], 1.0, 0, true, &th);
        assert_eq!(two[0].severity, Severity::Info);
    }
}
