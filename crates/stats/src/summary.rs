//! The per-metric summary of N repeated runs: location, spread, a 95 % confidence interval for
//! the mean and the runs that look like outliers.
//!
//! The interval is Student's: mean ± t(0.975, n − 1) · s/√n, with s the sample standard
//! deviation (divisor n − 1). It assumes roughly normal run-to-run noise; with five runs it is
//! wide on purpose. Outliers are flagged, never silently dropped: the mean keeps every run, and
//! `mean_without_outliers` is reported beside it so a reader sees how much they moved it.

use crate::dist::student_t_quantile;
use crate::moments::{median_of_sorted, moments, saturate, sorted, Scale};
use crate::outliers::{material_outliers, OutlierRule};

/// Summary statistics of one metric over repeated runs. Every field is finite, so it can go to
/// JSON as is: magnitudes that would overflow saturate at ±`f64::MAX`.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Number of runs.
    pub n: usize,
    /// The values as given, in run order (outlier indices refer to this order).
    pub values: Vec<f64>,
    /// Arithmetic mean of all runs, outliers included.
    pub mean: f64,
    /// Middle run (mean of the two middle runs for even n).
    pub median: f64,
    /// Sample standard deviation (divisor n − 1); 0 for a single value.
    pub stddev: f64,
    /// Coefficient of variation, stddev / |mean|; `None` when the mean is 0, where it has no
    /// meaning.
    pub cv: Option<f64>,
    /// 95 % confidence interval for the mean (Student t, n − 1 degrees of freedom). A single
    /// value gives (x, x): there is no spread to estimate, which `n` tells the reader.
    pub ci95: (f64, f64),
    /// Smallest run.
    pub min: f64,
    /// Largest run.
    pub max: f64,
    /// Indices into `values` whose modified z-score exceeds [`OUTLIER_THRESHOLD`].
    pub outliers: Vec<usize>,
    /// Mean of the values not in `outliers` (equal to `mean` when there are none). Never empty:
    /// at least half the values lie within one MAD of the median, where |z| ≤ 0.6745.
    pub mean_without_outliers: f64,
}

/// Summarizes repeated measurements of one metric. `None` when `values` is empty or holds a NaN
/// or an infinity.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let sorted = sorted(values);
    let min = sorted[0];
    let max = sorted[sorted.len() - 1];
    let median = median_of_sorted(&sorted);

    let scale = Scale::for_values(values);
    let m = moments(values, scale);
    // Rounding can put a mean one ulp outside the data; keep the obvious invariant.
    let mean = scale.up(m.mean).clamp(min, max);
    let stddev = scale.up(m.stddev);
    let cv = (m.mean != 0.0).then(|| saturate(m.stddev / m.mean.abs()));

    let ci95 = if m.n < 2 || m.stddev == 0.0 {
        (mean, mean)
    } else {
        let t = student_t_quantile(0.975, (m.n - 1) as f64);
        let half = saturate(t * m.stddev / (m.n as f64).sqrt());
        let lo = scale.up(saturate(m.mean - half));
        let hi = scale.up(saturate(m.mean + half));
        (lo.min(mean), hi.max(mean))
    };

    let outliers = material_outliers(values, OutlierRule::default())?;
    let mean_without_outliers = if outliers.is_empty() {
        mean
    } else {
        let kept: Vec<f64> = values
            .iter()
            .enumerate()
            .filter(|(i, _)| outliers.binary_search(i).is_err())
            .map(|(_, &v)| v)
            .collect();
        let kept_moments = moments(&kept, scale);
        scale.up(kept_moments.mean).clamp(min, max)
    };

    Some(Summary {
        n: m.n,
        values: values.to_vec(),
        mean,
        median,
        stddev,
        cv,
        ci95,
        min,
        max,
        outliers,
        mean_without_outliers,
    })
}
