//! Properties that must hold for any input: summaries stay finite and ordered, intervals shrink
//! with more runs, outliers behave, p-values are probabilities, verdicts are symmetric, and the
//! t distribution agrees with its closed forms and with itself.
#![allow(clippy::disallowed_methods)] // fixtures; clippy.toml binds the program only

use iogauge_stats::{
    mad_outliers, plateau, student_t_cdf, student_t_quantile, summarize, verdict, welch_t_test,
    Summary, Verdict, OUTLIER_THRESHOLD,
};
use proptest::prelude::*;
use std::f64::consts::PI;

/// Any finite f64, biased towards the awkward ones: huge, tiny, subnormal, zero, negative.
fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e6..1e6_f64,
        2 => proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
        1 => prop_oneof![
            Just(f64::MAX),
            Just(-f64::MAX),
            Just(f64::MIN_POSITIVE),
            Just(5e-324),
            Just(0.0),
        ],
    ]
}

/// Benchmark-like numbers: positive, moderate.
fn measurement() -> impl Strategy<Value = f64> {
    1e-3..1e7_f64
}

fn all_finite(s: &Summary) -> bool {
    [
        s.mean,
        s.median,
        s.stddev,
        s.ci95.0,
        s.ci95.1,
        s.min,
        s.max,
        s.mean_without_outliers,
    ]
    .iter()
    .chain(s.cv.iter())
    .all(|v| v.is_finite())
}

fn mirrored(v: Verdict) -> Verdict {
    match v {
        Verdict::Faster => Verdict::Slower,
        Verdict::Slower => Verdict::Faster,
        other => other,
    }
}

fn half_width(s: &Summary) -> f64 {
    (s.ci95.1 - s.ci95.0) / 2.0
}

proptest! {
    #[test]
    fn summaries_are_finite_and_ordered(values in prop::collection::vec(finite(), 1..40)) {
        let s = summarize(&values).unwrap();
        prop_assert!(all_finite(&s), "{s:?}");
        prop_assert_eq!(s.n, values.len());
        prop_assert!(s.min <= s.median && s.median <= s.max);
        prop_assert!(s.min <= s.mean && s.mean <= s.max);
        prop_assert!(s.min <= s.mean_without_outliers && s.mean_without_outliers <= s.max);
        prop_assert!(s.ci95.0 <= s.mean && s.mean <= s.ci95.1, "{s:?}");
        prop_assert!(s.stddev >= 0.0);
        prop_assert!(s.cv.is_none_or(|cv| cv >= 0.0));
        // Sorted, in range, and never more than half the runs (the median's half is safe).
        prop_assert!(s.outliers.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(s.outliers.iter().all(|&i| i < s.n));
        prop_assert!(s.outliers.len() <= s.n / 2);
    }

    #[test]
    fn identical_values_have_no_spread_and_no_outliers(v in finite(), n in 1usize..20) {
        let s = summarize(&vec![v; n]).unwrap();
        prop_assert_eq!(s.mean, v);
        prop_assert_eq!(s.median, v);
        prop_assert_eq!(s.stddev, 0.0);
        prop_assert_eq!(s.ci95, (v, v));
        prop_assert!(s.outliers.is_empty());
        prop_assert_eq!(s.mean_without_outliers, v);
    }

    #[test]
    fn more_runs_with_the_same_spread_narrow_the_interval(
        values in prop::collection::vec(measurement(), 2..20),
    ) {
        // Repeating the sample keeps its spread (the sample variance even drops a little, by
        // k(n − 1)/(kn − 1)), while √n grows and the t quantile falls with the dof.
        let once = summarize(&values).unwrap();
        prop_assume!(once.stddev > 0.0);
        let twice = summarize(&[values.clone(), values.clone()].concat()).unwrap();
        let thrice = summarize(&[values.clone(), values.clone(), values].concat()).unwrap();
        prop_assert!(half_width(&twice) < half_width(&once));
        prop_assert!(half_width(&thrice) < half_width(&twice));
    }

    #[test]
    fn a_majority_of_equal_runs_flags_only_runs_that_differ(
        v in measurement(),
        others in prop::collection::vec(finite(), 0..10),
        extra in 1usize..4,
    ) {
        // With more than half the runs equal, the median is that value and MAD is 0: the mean
        // absolute deviation scales the scores, and none of the equal runs scores at all.
        let mut values = vec![v; others.len() + extra];
        values.extend(&others);
        let flagged = mad_outliers(&values, OUTLIER_THRESHOLD).unwrap();
        prop_assert!(flagged.iter().all(|&i| values[i] != v), "{:?} {:?}", values, flagged);
    }

    #[test]
    fn evenly_spread_runs_have_no_outliers(
        start in -1e6..1e6_f64,
        step in 1e-3..1e3_f64,
        n in 1usize..60,
        rotate in 0usize..60,
    ) {
        // For an arithmetic sequence the farthest point is (n−1)/2 steps from the median and
        // MAD is about n/4 steps, so |z| ≤ about 0.6745 · 2 = 1.35.
        let mut values: Vec<f64> = (0..n).map(|i| start + step * i as f64).collect();
        values.rotate_left(rotate % n);
        prop_assert_eq!(mad_outliers(&values, OUTLIER_THRESHOLD), Some(vec![]));
    }

    #[test]
    fn a_far_away_run_is_flagged_wherever_it_sits(
        n in 3usize..50,
        at in 0usize..50,
        power in -20i32..20,
        shift in -1000i32..1000,
        negate in any::<bool>(),
    ) {
        // 0..n plus 10n: median near n/2, MAD near n/4, so the far run scores about
        // 0.6745 · 9.5n / (n/4) ≈ 25. Power-of-two scales and integer shifts are exact, so the
        // affine change must not move anything.
        let at = at % (n + 1);
        let mut values: Vec<f64> = (0..n).map(|i| i as f64).collect();
        values.insert(at, 10.0 * n as f64);
        let sign = if negate { -1.0 } else { 1.0 };
        let moved: Vec<f64> = values
            .iter()
            .map(|v| sign * v * 2f64.powi(power) + f64::from(shift))
            .collect();
        prop_assert_eq!(mad_outliers(&values, OUTLIER_THRESHOLD), Some(vec![at]));
        prop_assert_eq!(mad_outliers(&moved, OUTLIER_THRESHOLD), Some(vec![at]));
    }

    #[test]
    fn welch_p_values_are_probabilities_and_antisymmetric(
        a in prop::collection::vec(finite(), 2..15),
        b in prop::collection::vec(finite(), 2..15),
    ) {
        let ab = welch_t_test(&a, &b).unwrap();
        let ba = welch_t_test(&b, &a).unwrap();
        prop_assert!((0.0..=1.0).contains(&ab.p_value), "{ab:?}");
        prop_assert!(ab.t.is_finite() && ab.dof.is_finite());
        let (na, nb) = (a.len() as f64, b.len() as f64);
        prop_assert!(na.min(nb) - 1.0 <= ab.dof && ab.dof <= na + nb - 2.0, "{ab:?}");
        prop_assert_eq!(ab.t, -ba.t);
        prop_assert_eq!(ab.p_value, ba.p_value);
        prop_assert_eq!(ab.dof, ba.dof);
    }

    #[test]
    fn verdicts_are_symmetric(
        a in prop::collection::vec(finite(), 1..12),
        b in prop::collection::vec(finite(), 1..12),
        higher_is_better in any::<bool>(),
        alpha in 0.0..0.2_f64,
        noise in 0.0..0.1_f64,
    ) {
        let ab = verdict(&a, &b, higher_is_better, alpha, noise);
        let ba = verdict(&b, &a, higher_is_better, alpha, noise);
        prop_assert_eq!(ab.verdict, mirrored(ba.verdict));
        prop_assert_eq!(ab.p_value, ba.p_value);
        prop_assert!(ab.p_value.is_none_or(|p| (0.0..=1.0).contains(&p)));
        prop_assert!(ab.ratio.is_none_or(f64::is_finite));
        // Flipping what "better" means flips the verdict the same way.
        let flipped = verdict(&a, &b, !higher_is_better, alpha, noise);
        prop_assert_eq!(ab.verdict, mirrored(flipped.verdict));
    }

    #[test]
    fn verdicts_are_symmetric_near_the_noise_threshold(
        runs in prop::collection::vec(0.9999..1.0001_f64, 3..8),
        base in 1.0..1e6_f64,
        factor in 0.95..1.05_f64,
        higher_is_better in any::<bool>(),
    ) {
        // Quiet runs make every step significant, so only the noise rule decides; changes of
        // 2–2.04 % are where a one-sided relative change would break the symmetry.
        let a: Vec<f64> = runs.iter().map(|r| base * r).collect();
        let b: Vec<f64> = runs.iter().map(|r| base * factor * r).collect();
        let ab = verdict(&a, &b, higher_is_better, 0.05, 0.02);
        let ba = verdict(&b, &a, higher_is_better, 0.05, 0.02);
        prop_assert_eq!(ab.verdict, mirrored(ba.verdict));
    }

    #[test]
    fn clear_changes_in_quiet_data_are_detected(
        runs in prop::collection::vec(0.999..1.001_f64, 3..10),
        base in 1.0..1e6_f64,
        factor in 1.1..3.0_f64,
    ) {
        // ±0.1 % noise and at least a 10 % step: significant and above 2 % noise.
        let baseline: Vec<f64> = runs.iter().map(|r| base * r).collect();
        let candidate: Vec<f64> = runs.iter().rev().map(|r| base * factor * r).collect();
        let c = verdict(&baseline, &candidate, true, 0.05, 0.02);
        prop_assert_eq!(c.verdict, Verdict::Faster, "{:?}", c);
        let c = verdict(&baseline, &baseline, true, 0.05, 0.02);
        prop_assert_eq!(c.verdict, Verdict::NoChange);
    }

    #[test]
    fn t_matches_closed_forms_for_one_and_two_dof(p in 1e-9..(1.0 - 1e-9_f64)) {
        // ν = 1: tan(π(p − ½)); ν = 2: (2p − 1)/√(2p(1 − p)).
        let cauchy = (PI * (p - 0.5)).tan();
        let got = student_t_quantile(p, 1.0);
        prop_assert!((got - cauchy).abs() <= 1e-9 * cauchy.abs().max(1.0), "{got} vs {cauchy}");
        let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
        let got = student_t_quantile(p, 2.0);
        prop_assert!((got - two).abs() <= 1e-9 * two.abs().max(1.0), "{got} vs {two}");
    }

    #[test]
    fn t_quantile_inverts_the_cdf(p in 1e-12..(1.0 - 1e-12_f64), dof in 0.5..1e8_f64) {
        let t = student_t_quantile(p, dof);
        prop_assert!(t.is_finite());
        let back = student_t_cdf(t, dof);
        prop_assert!((back - p).abs() <= 1e-12 + 1e-9 * p.min(1.0 - p), "{back} vs {p}");
    }

    #[test]
    fn t_is_symmetric_and_heavier_tailed_with_fewer_dof(
        p in (0.5 + 1e-6)..(1.0 - 1e-9_f64),
        dof in 0.5..1e4_f64,
    ) {
        let upper = student_t_quantile(p, dof);
        let lower = student_t_quantile(1.0 - p, dof);
        prop_assert!((upper + lower).abs() <= 1e-9 * upper.abs().max(1.0));
        prop_assert!(upper >= student_t_quantile(p, dof * 2.0));
        prop_assert!(upper >= student_t_quantile(p, f64::INFINITY));
    }

    #[test]
    fn t_cdf_is_a_monotone_probability(t in -1e3..1e3_f64, step in 0.0..10.0_f64, dof in 0.1..1e9_f64) {
        let here = student_t_cdf(t, dof);
        prop_assert!((0.0..=1.0).contains(&here));
        prop_assert!(student_t_cdf(t + step, dof) >= here);
    }

    #[test]
    fn growing_series_never_plateau(
        start in 1.0..1e6_f64,
        gains in prop::collection::vec(0.06..1.0_f64, 1..12),
    ) {
        // Every step grows by more than 5 %, so each point is beaten by its successor.
        let mut ys = vec![start];
        for g in &gains {
            ys.push(ys[ys.len() - 1] * (1.0 + g));
        }
        let xs: Vec<f64> = (1..=ys.len()).map(|i| i as f64).collect();
        prop_assert_eq!(plateau(&xs, &ys, 0.05), None);
    }

    #[test]
    fn rising_then_flat_series_plateau_where_they_flatten(
        start in 1.0..1e6_f64,
        rising in 1usize..8,
        flat in 1usize..8,
    ) {
        // y doubles `rising` times, then stays put: the plateau is the first flat point.
        let mut ys: Vec<f64> = (0..=rising).map(|i| start * 2f64.powi(i as i32)).collect();
        let top = ys[rising];
        ys.extend(std::iter::repeat_n(top, flat));
        let xs: Vec<f64> = (0..ys.len()).map(|i| (i + 1) as f64).collect();
        prop_assert_eq!(plateau(&xs, &ys, 0.05), Some(rising));
    }

    #[test]
    fn plateau_is_the_first_point_no_later_point_beats(
        ys in prop::collection::vec(1.0..1000.0_f64, 2..15),
        gain in 0.0..0.3_f64,
    ) {
        let xs: Vec<f64> = (0..ys.len()).map(|i| i as f64).collect();
        let beaten = |i: usize| ys[i + 1..].iter().any(|&y| y > ys[i] + gain * ys[i]);
        match plateau(&xs, &ys, gain) {
            Some(i) => {
                prop_assert!(i + 1 < ys.len());
                prop_assert!(!beaten(i));
                prop_assert!((0..i).all(beaten));
            }
            None => prop_assert!((0..ys.len() - 1).all(beaten)),
        }
    }
}
