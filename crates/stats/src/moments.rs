//! Overflow-safe building blocks shared by the summary and the comparison: mean, sample standard
//! deviation and median of finite values of any magnitude.
//!
//! Values near `f64::MAX` would overflow sums, differences and squares. Everything here works
//! on the values times a power of two (`Scale`), which is exact, and keeps differences of
//! scaled values below `f64::MAX / 2`; the standard deviation is computed as D · √(Σ(d/D)² /
//! (n − 1)) with D the largest deviation, as BLAS `nrm2` does, so squares cannot overflow
//! either. Results that do not fit are saturated to ±`f64::MAX` by [`saturate`].

/// A power of two that keeps a sample's values at most `f64::MAX / 4` in magnitude.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scale(f64);

impl Scale {
    pub(crate) fn for_values<'a>(values: impl IntoIterator<Item = &'a f64>) -> Scale {
        let largest = values.into_iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        Scale(if largest > f64::MAX / 4.0 { 0.25 } else { 1.0 })
    }

    pub(crate) fn down(self, v: f64) -> f64 {
        v * self.0
    }

    /// Back to the caller's units, saturating at ±`f64::MAX`.
    pub(crate) fn up(self, v: f64) -> f64 {
        saturate(v / self.0)
    }
}

/// Clamp infinities to ±`f64::MAX`, because summaries end up in JSON, which has no infinity.
pub(crate) fn saturate(v: f64) -> f64 {
    v.clamp(-f64::MAX, f64::MAX)
}

/// Mean and sample standard deviation (n − 1) of `values`, in scaled units.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Moments {
    pub(crate) n: usize,
    pub(crate) mean: f64,
    pub(crate) stddev: f64,
}

/// Requires at least one value, all finite.
pub(crate) fn moments(values: &[f64], scale: Scale) -> Moments {
    // A running mean never holds a sum larger than the values themselves, and returns v exactly
    // when all values are v.
    let mut mean = 0.0;
    for (i, &v) in values.iter().enumerate() {
        mean += (scale.down(v) - mean) / (i + 1) as f64;
    }
    let n = values.len();
    let stddev = if n < 2 {
        0.0
    } else {
        let largest = values
            .iter()
            .fold(0.0_f64, |m, &v| m.max((scale.down(v) - mean).abs()));
        if largest == 0.0 {
            0.0
        } else {
            let sum: f64 = values
                .iter()
                .map(|&v| ((scale.down(v) - mean) / largest).powi(2))
                .sum();
            largest * (sum / (n - 1) as f64).sqrt()
        }
    };
    Moments { n, mean, stddev }
}

/// Median of values sorted ascending (requires at least one).
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        // `midpoint` neither overflows nor leaves [a, b].
        sorted[n / 2 - 1].midpoint(sorted[n / 2])
    }
}

pub(crate) fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_of_a_hand_computed_sample() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 40/8 = 5, squared deviations 9+1+1+1+0+0+4+16 = 32,
        // sample variance 32/7, stddev √(32/7) = 2.138089935299395.
        let values = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let m = moments(&values, Scale::for_values(&values));
        assert_eq!(m.n, 8);
        assert!((m.mean - 5.0).abs() < 1e-15);
        assert!((m.stddev - (32.0_f64 / 7.0).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn huge_values_do_not_overflow() {
        // Mean of ±MAX is 0 and the sample stddev is MAX·√2, which saturates.
        let values = [f64::MAX, -f64::MAX];
        let scale = Scale::for_values(&values);
        let m = moments(&values, scale);
        assert_eq!(scale.up(m.mean), 0.0);
        assert_eq!(scale.up(m.stddev), f64::MAX);
        // Three copies of MAX: mean MAX exactly, stddev 0.
        let values = [f64::MAX; 3];
        let scale = Scale::for_values(&values);
        let m = moments(&values, scale);
        assert_eq!(scale.up(m.mean), f64::MAX);
        assert_eq!(m.stddev, 0.0);
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median_of_sorted(&[1.0, 2.0, 10.0]), 2.0);
        assert_eq!(median_of_sorted(&[1.0, 2.0, 4.0, 10.0]), 3.0);
        assert_eq!(median_of_sorted(&[f64::MAX, f64::MAX]), f64::MAX);
    }
}
