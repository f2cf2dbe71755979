//! Steady state: whether a run's IOPS had settled before it was measured, by the steady-state
//! test of the SNIA Solid State Storage Performance Test Specification (SSS PTS; the same
//! definition of Steady State from PTS Enterprise 1.0 of 2011 to PTS 2.0.2 of 2020): over a
//! measurement window of the last 5 rounds,
//! - the data excursion, max − min, is at most 20% of the window's mean, and
//! - the slope excursion of the least-squares line, |slope| × (window − 1), is at most 10% of it.
//!
//! SNIA's rounds are whole passes of a workload; here they are the run's reporting intervals, so
//! the test says whether the last intervals agree, not that the device was preconditioned.
//!
//! One-second intervals are not rounds: a device that one CPU drives (a RAM disk, zram, a fast
//! NVMe drive) moves by 10–40% from one second to the next with the scheduler, and five such
//! values fail SNIA's 20% range and 10% trend by noise alone while the level holds (precision
//! suite at real length, issue 37: `randwrite 4K` on a RAM loop "still drifting" at −1,220
//! IOPS/s over its last five seconds of 29,187 … 25,183, when the five before averaged within
//! 6% of them). So a window that fails the test is called drifting only when the level itself
//! moved: its mean differs from the window before it by more than the trend limit, and by more
//! than the two windows' own spread explains (Welch's t at 99%). Otherwise it is a steady level
//! with noisy intervals, and says so.

use crate::fmt::{count, pct, signed_pct};
use crate::{Finding, Kind, Severity, Thresholds};
use iogauge_stats::{student_t_quantile, welch_t_test};

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

/// How the last window's level compares with the window before it: the means, and whether the
/// difference is beyond what the intervals' own spread explains (Welch's t-test, two-sided 99%:
/// a warning must be rare and true). Windows with no spread at all differ exactly when their
/// means do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelChange {
    pub before: f64,
    pub after: f64,
    /// Welch's t of the difference (∞ when neither window has spread and the means differ).
    pub t: f64,
    /// The t the difference must exceed at 99% with Welch–Satterthwaite degrees of freedom.
    pub t_limit: f64,
}

impl LevelChange {
    pub fn of(before: &[f64], after: &[f64]) -> LevelChange {
        let mean = |ys: &[f64]| ys.iter().sum::<f64>() / ys.len().max(1) as f64;
        // Windows too short for a spread (under two intervals) are never "beyond the noise".
        let (t, dof) = welch_t_test(after, before).map_or((0.0, 1.0), |w| (w.t.abs(), w.dof));
        LevelChange {
            before: mean(before),
            after: mean(after),
            t,
            t_limit: student_t_quantile(0.995, dof.max(1.0)),
        }
    }

    /// The level moved by more than `share` of the earlier mean, beyond the noise.
    pub fn moved(&self, share: f64) -> bool {
        (self.after - self.before).abs() > share * self.before.abs() && self.t > self.t_limit
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

/// `after` against `before` as a signed percentage ("−6%", "+12%", "within 1%"), or "from
/// nothing".
fn signed_change(after: f64, before: f64) -> String {
    match before.abs() > 0.0 {
        true => signed_pct(after / before - 1.0),
        false => "from nothing".to_owned(),
    }
}

/// Applies the SNIA PTS test to the last `window` values of `per_interval_iops` (one value per
/// interval of `interval_s` seconds). A `window` under 2 is taken as 2, the least a slope needs.
/// Empty input, fewer intervals than [`min_intervals`] (too short to judge: a limit of the
/// measurement, not of the storage, which the run says once in its notes), or a non-finite
/// value inside the window gives no finding. `writes`: the workload writes, so a drift may be
/// the device's own change of state (advice on preconditioning), not only the run's.
///
/// A window that fails the test is a warning only when its level moved from the window before
/// it ([`LevelChange::moved`] by the trend limit); otherwise an info that the level held.
///
/// Evidence: `window`, `window_mean_iops`, `excursion_iops`, `slope_excursion_iops`,
/// `slope_iops_per_interval`, `before_mean_iops`, `level_t`, `level_t_limit`, and when the mean is positive `excursion_frac` and
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
    let before = &per_interval_iops[n - 2 * window..n - window];
    let change = LevelChange::of(before, ys);
    let moved = !(flat && level) && change.moved(th.steady_slope);
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
    } else if !moved {
        Finding::new(
            Kind::Steady,
            Severity::Info,
            format!(
                "steady level, noisy intervals: the last {window} intervals average {} IOPS \
                 against {} for the {window} before ({}), within their spread; one interval to \
                 the next they span {} of the mean and trend {} (SNIA's {} and {} are meant for \
                 rounds of a whole pass)",
                count(change.after),
                count(change.before),
                signed_change(change.after, change.before),
                share(excursion),
                share(slope_excursion),
                pct(th.steady_excursion),
                pct(th.steady_slope),
            ),
            "The level held while single intervals swung (a device that a CPU drives moves with \
             the scheduler): the cell's mean is a fair measurement; its intervals are not.",
        )
    } else {
        Finding::new(
            Kind::Steady,
            Severity::Warning,
            format!(
                "still drifting: IOPS went from {} over {window} intervals to {} over the last \
                 {window} ({}, beyond the intervals' spread), changing by {per_s} (range {} of \
                 the mean {} IOPS, limit {}; trend {}, limit {})",
                count(change.before),
                count(change.after),
                signed_change(change.after, change.before),
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
        .with("slope_iops_per_interval", slope)
        .with("before_mean_iops", change.before)
        .with("level_t", change.t.min(f64::MAX))
        .with("level_t_limit", change.t_limit);
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

    /// Wide swings at one level fail SNIA's range but are no drift: an info that says the level
    /// held. A fall by a fifth under the same swings is still within their noise (an info too);
    /// a fall by two fifths is beyond it, and a drift.
    #[test]
    fn wide_swings_at_one_level_are_noise_and_a_moved_level_is_drift() {
        let th = Thresholds::default();
        let series = [10_000.0, 13_000.0, 10_000.0, 13_000.0, 10_000.0].repeat(2);
        let found = steady(&series, 1.0, STEADY_WINDOW, true, &th);
        assert_eq!(found[0].severity, Severity::Info, "{}", found[0].summary);
        assert!(found[0].summary.contains("steady level, noisy intervals"));
        assert_eq!(found[0].evidence["slope_iops_per_interval"], 0.0);
        let mut fell = series.clone();
        for y in &mut fell[5..] {
            *y *= 0.8;
        }
        let found = steady(&fell, 1.0, STEADY_WINDOW, true, &th);
        // The swings (±1,500 around 11,200) are wide against a fall of 2,240: Welch's t over
        // two windows of five is about 2.2, under its 99% limit — not beyond the noise.
        assert_eq!(found[0].severity, Severity::Info, "{}", found[0].summary);
        for y in &mut fell[5..] {
            *y *= 0.75;
        }
        let found = steady(&fell, 1.0, STEADY_WINDOW, true, &th);
        assert_eq!(found[0].severity, Severity::Warning, "{}", found[0].summary);
        assert!(
            found[0].summary.contains("went from 11,200"),
            "{}",
            found[0].summary
        );
    }

    /// The series that was called drifting on a RAM loop device (issue 37), one-second
    /// intervals of a 20-second randwrite 4K: the level wanders within ±10% and the last five
    /// seconds happen to fall; the five before average within 6% of them.
    #[test]
    fn a_ram_devices_wander_is_not_drift() {
        let series = [
            22_521.0, 24_025.0, 24_457.0, 25_016.0, 26_942.0, 26_689.0, 25_927.0, 27_434.0,
            25_137.0, 26_268.0, 25_451.0, 25_362.0, 24_203.0, 23_654.0, 26_172.0, 29_187.0,
            28_110.0, 26_064.0, 23_918.0, 25_183.0,
        ];
        let found = steady(&series, 1.0, STEADY_WINDOW, true, &Thresholds::default());
        assert_eq!(found[0].severity, Severity::Info, "{}", found[0].summary);
        assert!(found[0].summary.contains("(+6%)"), "{}", found[0].summary);
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
