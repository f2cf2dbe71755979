//! Student's t distribution (any real dof > 0) and the standard normal distribution as its limit.
//!
//! The upper tail of t with ν degrees of freedom is P(T > t) = ½ · I_x(ν/2, ½) with
//! x = ν / (ν + t²) (Abramowitz & Stegun 26.7.1 and 26.5.27), I being the regularized incomplete
//! beta function. Above a million degrees of freedom a normalizing transformation to the normal
//! distribution takes over (see `large_dof_upper_tail`). The normal upper tail is
//! ½ · erfc(z/√2) = ½ · Q(½, z²/2) (A&S 7.1.2, 6.5.17), Q the regularized incomplete gamma.
//! Quantiles invert the upper tail by doubling to a bracket and bisecting it: slower than
//! Newton's method but immune to its overshoot in the heavy tails of small ν, and iogauge asks
//! for a handful of quantiles per report.

use crate::special::{beta_reg, gamma_q};

/// P(T ≤ t) for Student's t with `dof` degrees of freedom; `dof = f64::INFINITY` gives the
/// standard normal distribution.
///
/// Returns NaN when `t` is NaN or `dof` is not positive (NaN included), like the special
/// functions of `f64`.
pub fn student_t_cdf(t: f64, dof: f64) -> f64 {
    if t.is_nan() || dof.is_nan() || dof <= 0.0 {
        return f64::NAN;
    }
    if t < 0.0 {
        upper_tail(-t, dof)
    } else {
        1.0 - upper_tail(t, dof)
    }
}

/// P(T > t) for t ≥ 0; stays accurate far into the tail, where 1 − cdf would round to zero.
pub(crate) fn upper_tail(t: f64, dof: f64) -> f64 {
    if t == 0.0 {
        return 0.5;
    }
    if dof.is_infinite() {
        normal_upper_tail(t)
    } else if dof > LARGE_DOF {
        large_dof_upper_tail(t, dof)
    } else {
        beta_upper_tail(t, dof)
    }
}

/// Above this many degrees of freedom `large_dof_upper_tail` takes over: the beta route's error
/// grows like ν · 1e-16 · (a few) because its continued fraction needs 1 − x ≈ t²/ν and gets it
/// from x, which rounds; the transformation's error shrinks like 0.01/ν². Both are near 1e-12
/// (absolute) here.
const LARGE_DOF: f64 = 1e6;

fn beta_upper_tail(t: f64, dof: f64) -> f64 {
    let t2 = t * t;
    // Both written so that t² = ∞ and t² = 0 give the right limits instead of ∞/∞.
    let x = 1.0 / (1.0 + t2 / dof);
    let y = 1.0 / (1.0 + dof / t2);
    0.5 * beta_reg(0.5 * dof, 0.5, x, y)
}

/// For large ν, T is mapped to a standard normal Z by z² = (ν − 1)²/(ν − 1.5) · ln(1 + t²/ν).
/// Expanding the logarithm gives t = z + (z³ + z)/(4ν) + O(ν⁻²), the first term of the
/// Cornish–Fisher expansion of t (Abramowitz & Stegun 26.7.5), so the error is O(ν⁻²); the tests
/// measure it against the beta route.
fn large_dof_upper_tail(t: f64, dof: f64) -> f64 {
    let factor = (dof - 1.0) * ((dof - 1.0) / (dof - 1.5));
    let z2 = factor * (t * t / dof).ln_1p();
    0.5 * gamma_q(0.5, 0.5 * z2)
}

/// P(Z > z) = ½ erfc(z/√2) = ½ Q(½, z²/2).
fn normal_upper_tail(z: f64) -> f64 {
    0.5 * gamma_q(0.5, 0.5 * z * z)
}

/// The `p`-quantile of Student's t with `dof` degrees of freedom: the t with P(T ≤ t) = p.
/// `dof = f64::INFINITY` gives the standard normal quantile.
///
/// Returns −∞ for p = 0 and +∞ for p = 1 (also when the quantile exceeds `f64::MAX`, which
/// happens for tiny dof), and NaN when p is outside [0, 1] or `dof` is not positive.
pub fn student_t_quantile(p: f64, dof: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) || dof.is_nan() || dof <= 0.0 {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    // Work on the smaller tail: 1 − p is exact for p ≥ ½ (Sterbenz), while p < ½ keeps all of
    // its digits, so quantiles far in either tail stay accurate.
    if p < 0.5 {
        -upper_tail_inverse(p, dof)
    } else {
        upper_tail_inverse(1.0 - p, dof)
    }
}

/// The t ≥ 0 with P(T > t) = q, for 0 ≤ q < ½.
fn upper_tail_inverse(q: f64, dof: f64) -> f64 {
    if q == 0.0 {
        return f64::INFINITY;
    }
    let mut lo = 0.0;
    let mut hi = 1.0;
    while upper_tail(hi, dof) > q {
        lo = hi;
        hi *= 2.0;
        if hi.is_infinite() {
            return f64::INFINITY;
        }
    }
    // Invariant: upper_tail(lo) > q ≥ upper_tail(hi). Stop when no float lies between them.
    loop {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            return hi;
        }
        if upper_tail(mid, dof) > q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Two-sided 95 % and 99 % critical values as printed in textbook t tables (three decimals),
    /// e.g. NIST/SEMATECH e-Handbook of Statistical Methods, table 1.3.6.7.2.
    const TABLE: [(f64, f64, f64); 12] = [
        (0.975, 1.0, 12.706),
        (0.975, 2.0, 4.303),
        (0.975, 3.0, 3.182),
        (0.975, 4.0, 2.776),
        (0.975, 10.0, 2.228),
        (0.975, 30.0, 2.042),
        (0.975, 100.0, 1.984),
        (0.975, f64::INFINITY, 1.960),
        (0.995, 4.0, 4.604),
        (0.995, 10.0, 3.169),
        (0.95, 5.0, 2.015),
        (0.9995, 3.0, 12.924),
    ];

    #[test]
    fn quantiles_match_the_printed_table() {
        for &(p, dof, want) in &TABLE {
            let got = student_t_quantile(p, dof);
            assert!(
                (got - want).abs() <= 5e-4,
                "t({p}, {dof}) = {got}, table {want}"
            );
            let got = student_t_quantile(1.0 - p, dof);
            assert!((got + want).abs() <= 5e-4, "t({}, {dof}) = {got}", 1.0 - p);
        }
    }

    #[test]
    fn normal_quantiles_match_known_digits() {
        // z(0.975) = 1.959963984540054 and z(0.995) = 2.575829303549, A&S table 26.5.
        assert!((student_t_quantile(0.975, f64::INFINITY) - 1.959_963_984_540_054).abs() < 1e-12);
        assert!((student_t_quantile(0.995, f64::INFINITY) - 2.575_829_303_549).abs() < 1e-11);
    }

    /// The Cornish–Fisher expansion (A&S 26.7.5) with four terms; its truncation error is
    /// O(ν⁻⁵), below 1e-15 for ν ≥ 1000.
    fn cornish_fisher(z: f64, dof: f64) -> f64 {
        let g1 = (z.powi(3) + z) / 4.0;
        let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
        let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
        let g4 = (79.0 * z.powi(9) + 776.0 * z.powi(7) + 1482.0 * z.powi(5)
            - 1920.0 * z.powi(3)
            - 945.0 * z)
            / 92160.0;
        z + g1 / dof + g2 / dof.powi(2) + g3 / dof.powi(3) + g4 / dof.powi(4)
    }

    #[test]
    fn large_dof_quantiles_follow_cornish_fisher() {
        let z = student_t_quantile(0.975, f64::INFINITY);
        for &dof in &[1e3, 1e4, 1e5, 9e5, 1.1e6, 1e7, 1e9, 1e15, 1e300] {
            let got = student_t_quantile(0.975, dof);
            let want = cornish_fisher(z, dof);
            assert!(
                (got - want).abs() < 1e-10,
                "t(0.975, {dof}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn large_dof_transformation_error_shrinks_like_one_over_dof_squared() {
        for &dof in &[1e3, 1e4, 1e5] {
            for i in 1..=120 {
                let t = f64::from(i) * 0.05;
                let exact = beta_upper_tail(t, dof);
                let approx = large_dof_upper_tail(t, dof);
                let bound = 0.02 / (dof * dof);
                assert!(
                    (exact - approx).abs() < bound,
                    "ν = {dof}, t = {t}: {exact} vs {approx}"
                );
            }
        }
        // At the switch the two routes agree to about 1e-12.
        for i in 1..=120 {
            let t = f64::from(i) * 0.05;
            let diff = beta_upper_tail(t, LARGE_DOF) - large_dof_upper_tail(t, LARGE_DOF);
            assert!(diff.abs() < 1e-11, "t = {t}: {diff}");
        }
    }

    #[test]
    fn cdf_matches_the_closed_forms_for_one_and_two_dof() {
        // ν = 1 is the Cauchy distribution: F(t) = ½ + atan(t)/π.
        // ν = 2: F(t) = ½ + t / (2 √(2 + t²)).
        for &t in &[-1e6, -30.0, -2.0, -0.3, 0.0, 1e-9, 0.7, 4.0, 250.0] {
            let cauchy = 0.5 + f64::atan(t) / PI;
            assert!((student_t_cdf(t, 1.0) - cauchy).abs() < 1e-14, "ν=1, t={t}");
            let two = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!((student_t_cdf(t, 2.0) - two).abs() < 1e-14, "ν=2, t={t}");
        }
    }

    #[test]
    fn far_tails_keep_their_relative_precision() {
        // ν = 2: P(T > t) = ½ (1 − t/√(2 + t²)) = 1 / (√(2 + t²) (√(2 + t²) + t)), the second
        // form free of cancellation.
        let t: f64 = 1e5;
        let s = (2.0 + t * t).sqrt();
        let want = 1.0 / (s * (s + t));
        let got = upper_tail(t, 2.0);
        assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
        // And the quantile of that tail comes back to t.
        assert!((student_t_quantile(want, 2.0) + t).abs() <= 1e-9 * t);
    }

    #[test]
    fn bad_arguments_give_nan_or_infinities() {
        assert!(student_t_quantile(1.5, 3.0).is_nan());
        assert!(student_t_quantile(-0.1, 3.0).is_nan());
        assert!(student_t_quantile(0.5, 0.0).is_nan());
        assert!(student_t_quantile(f64::NAN, 3.0).is_nan());
        assert!(student_t_quantile(0.9, f64::NAN).is_nan());
        assert!(student_t_cdf(1.0, -2.0).is_nan());
        assert!(student_t_cdf(f64::NAN, 2.0).is_nan());
        assert_eq!(student_t_quantile(0.0, 3.0), f64::NEG_INFINITY);
        assert_eq!(student_t_quantile(1.0, 3.0), f64::INFINITY);
        assert_eq!(student_t_cdf(f64::INFINITY, 3.0), 1.0);
        assert_eq!(student_t_cdf(f64::NEG_INFINITY, 3.0), 0.0);
    }
}
