//! Outlier detection with the modified z-score of B. Iglewicz and D. C. Hoaglin, *How to Detect
//! and Handle Outliers* (ASQC Basic References in Quality Control, vol. 16, 1993):
//!
//! z_i = 0.6745 · (x_i − median) / MAD, with MAD = median(|x_i − median|),
//!
//! and |z_i| > 3.5 marks x_i as a likely outlier. The constant 0.6745 is the 0.75 quantile of
//! the standard normal distribution, so that for normal data E[MAD]/0.6745 = σ and z is on the
//! scale of an ordinary z-score. Median and MAD are unmoved by a few wild runs, which is the
//! point: in "PostgreSQL Server Benchmarks — Disks" one fsync run at 3170/s dragged the mean and inflated the standard
//! deviation that an ordinary z-score would have judged it by. hyperfine uses the same rule.
//!
//! A high score alone is not enough to call a repeat an outlier: repeats of a benchmark on a
//! quiet machine can agree so closely (MAD of a fraction of a percent) that a repeat 2% off
//! scores |z| > 3.5, while a comparison calls 2% noise. So an outlier must also be *material*:
//! at least [`MIN_SHIFT`] (10%) away from the median of the other repeats
//! ([`material_outliers`]); both rules are in [`OutlierRule`].
//!
//! When MAD is 0, more than half the values are identical and z as above is undefined. The
//! scale is then the mean absolute deviation about the median, as the modified z-score is
//! usually completed for that case (IBM SPSS, "Modified z-score"; E[MeanAD] = σ·√(2/π), hence
//! the constant 1.253314 = √(π/2)):
//!
//! z_i = (x_i − median) / (1.253314 · MeanAD).
//!
//! Identical repeats are what a rate-capped device gives (a cloud volume's provisioned IOPS, a
//! blkio throttle): without this, one repeat at half the rate of four identical others was never
//! named. With n values of which n − 1 are identical, the odd one scores n / 1.253314, so it can
//! pass 3.5 only from 5 repeats on; quantized measurements (latency percentiles read from
//! histogram buckets) that land one bucket apart are kept out by the material rule, since
//! neighbouring buckets lie far less than 10% apart.

use crate::moments::{median_of_sorted, saturate, sorted, Scale};

/// The cut-off Iglewicz and Hoaglin recommend for |modified z-score|.
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// The smallest relative distance from the median of the other values for an outlier.
pub const MIN_SHIFT: f64 = 0.10;

/// When a value is an outlier: |modified z-score| above `z` and at least `min_shift` (a
/// fraction) away from the median of the other values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutlierRule {
    /// The |modified z-score| to exceed.
    pub z: f64,
    /// The smallest relative distance from the median of the others.
    pub min_shift: f64,
}

impl Default for OutlierRule {
    fn default() -> Self {
        OutlierRule {
            z: OUTLIER_THRESHOLD,
            min_shift: MIN_SHIFT,
        }
    }
}

/// Indices (ascending) of the values that are outliers by `rule`: a high modified z-score and
/// a material distance from the median of the others. `None` if any value is not finite.
pub fn material_outliers(values: &[f64], rule: OutlierRule) -> Option<Vec<usize>> {
    let flagged = mad_outliers(values, rule.z)?;
    Some(
        flagged
            .into_iter()
            .filter(|&i| {
                let others: Vec<f64> = values
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, &v)| v)
                    .collect();
                if others.is_empty() {
                    return false;
                }
                let m = median_of_sorted(&sorted(&others));
                let shift = if m == 0.0 {
                    f64::INFINITY
                } else {
                    ((values[i] - m) / m).abs()
                };
                shift >= rule.min_shift
            })
            .collect(),
    )
}

/// 0.75 quantile of the standard normal distribution, Φ⁻¹(0.75) = 0.6744897…, rounded as in the
/// reference.
const NORMAL_Q3: f64 = 0.6745;

/// √(π/2): the mean absolute deviation of normal data is σ·√(2/π).
const MEAN_AD_TO_SIGMA: f64 = 1.253314;

/// The modified z-score of each value, in input order; scaled by the mean absolute deviation
/// when MAD is 0, and all 0 when every value is the same (see the module docs). `None` if any
/// value is NaN or infinite; an empty input gives an empty vector.
pub fn modified_z_scores(values: &[f64]) -> Option<Vec<f64>> {
    if values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if values.is_empty() {
        return Some(Vec::new());
    }
    // z is scale-free, so scaling by a power of two changes nothing but keeps x − median finite.
    let scale = Scale::for_values(values);
    let scaled: Vec<f64> = values.iter().map(|&v| scale.down(v)).collect();
    let median = median_of_sorted(&sorted(&scaled));
    let deviations: Vec<f64> = scaled.iter().map(|v| (v - median).abs()).collect();
    let mad = median_of_sorted(&sorted(&deviations));
    if mad == 0.0 {
        let mean_ad = deviations.iter().sum::<f64>() / deviations.len() as f64;
        if mean_ad == 0.0 {
            return Some(vec![0.0; values.len()]);
        }
        return Some(
            scaled
                .iter()
                .map(|v| saturate((v - median) / (MEAN_AD_TO_SIGMA * mean_ad)))
                .collect(),
        );
    }
    Some(
        scaled
            .iter()
            .map(|v| saturate(NORMAL_Q3 * (v - median) / mad))
            .collect(),
    )
}

/// Indices (ascending) of the values whose |modified z-score| exceeds `threshold`, usually
/// [`OUTLIER_THRESHOLD`]. `None` if any value is NaN or infinite. A NaN threshold flags
/// nothing.
pub fn mad_outliers(values: &[f64], threshold: f64) -> Option<Vec<usize>> {
    let scores = modified_z_scores(values)?;
    Some(
        scores
            .iter()
            .enumerate()
            .filter(|(_, z)| z.abs() > threshold)
            .map(|(i, _)| i)
            .collect(),
    )
}

#[cfg(test)]
mod material_tests {
    use super::*;

    // A rate-capped device (a blkio throttle in tests/outlier_gap.rs) gave four identical
    // repeats and one at 40%: MAD 0, and the slow repeat went unnamed.
    #[test]
    fn identical_repeats_and_one_far_off_name_that_one() {
        let capped = [1048.0, 1048.0, 422.5, 1048.0, 1048.0];
        // MeanAD = 625.5 / 5 = 125.1; z = −625.5 / (1.253314 · 125.1) = −5 / 1.253314.
        let z = modified_z_scores(&capped).unwrap();
        assert!((z[2] + 5.0 / 1.253314).abs() < 1e-9, "{z:?}");
        assert_eq!(z[0], 0.0);
        assert_eq!(
            material_outliers(&capped, OutlierRule::default()).unwrap(),
            vec![2]
        );
        // One bucket apart (1%) is no outlier, however identical the rest.
        let bucket = [1000.0, 1000.0, 1010.0, 1000.0, 1000.0];
        assert!(material_outliers(&bucket, OutlierRule::default())
            .unwrap()
            .is_empty());
        // Four repeats cannot name one: 4 / 1.253314 < 3.5.
        let four = [1048.0, 1048.0, 422.5, 1048.0];
        assert!(material_outliers(&four, OutlierRule::default())
            .unwrap()
            .is_empty());
    }

    // Regression (issue 10, item 7): `--repeat 3` called repeats 2% off the others outliers
    // while `compare` calls under 2% noise.
    #[test]
    fn a_repeat_two_percent_off_is_not_an_outlier_but_twenty_is() {
        let close = [1000.0, 1001.0, 999.0, 1000.0, 1020.0];
        assert_eq!(mad_outliers(&close, OUTLIER_THRESHOLD).unwrap(), vec![4]);
        assert!(material_outliers(&close, OutlierRule::default())
            .unwrap()
            .is_empty());
        let far = [1000.0, 1001.0, 999.0, 1000.0, 1200.0];
        assert_eq!(
            material_outliers(&far, OutlierRule::default()).unwrap(),
            vec![4]
        );
        let strict = OutlierRule {
            min_shift: 0.01,
            ..OutlierRule::default()
        };
        assert_eq!(material_outliers(&close, strict).unwrap(), vec![4]);
    }
}
