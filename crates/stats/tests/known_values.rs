//! Known answers: the seed studies' own numbers, textbook tables and published t-test output.
//! Each expectation is worked out by hand in the comment next to it, not taken from this crate.
#![allow(clippy::disallowed_methods)] // fixtures; clippy.toml binds the program only

use iogauge_stats::{
    mad_outliers, modified_z_scores, plateau, student_t_quantile, summarize, verdict, welch_t_test,
    Verdict, DEFAULT_ALPHA, DEFAULT_NOISE, OUTLIER_THRESHOLD,
};

fn assert_close(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: got {actual}, expected {expected} ± {tolerance}"
    );
}

#[test]
fn seed_001_outlier_run_is_flagged_and_set_aside() {
    // Five fsync runs, one disturbed. Median 7600; |x − 7600| = 4430, 0, 20, 50, 20, so
    // MAD = median(0, 20, 20, 50, 4430) = 20. z = 0.6745·4430/20 = 149.4 for run 0, and at most
    // 0.6745·50/20 = 1.69 for the others.
    let runs = [3170.0, 7600.0, 7580.0, 7650.0, 7620.0];
    let s = summarize(&runs).unwrap();
    assert_eq!(s.outliers, vec![0]);
    assert_eq!(s.median, 7600.0);
    assert_eq!((s.min, s.max), (3170.0, 7650.0));
    // 33620 / 5 with every run; (7600 + 7580 + 7650 + 7620) / 4 = 7612.5 without run 0.
    assert_close(s.mean, 6724.0, 1e-9, "mean");
    assert_close(
        s.mean_without_outliers,
        7612.5,
        1e-9,
        "mean without outliers",
    );

    let z = modified_z_scores(&runs).unwrap();
    assert_close(z[0], -0.6745 * 4430.0 / 20.0, 1e-9, "z of run 0");
    assert_close(z[3], 0.6745 * 50.0 / 20.0, 1e-12, "z of run 3");
}

#[test]
fn seed_001_hardware_raid_fsync_runs_match_the_authors_numbers() {
    // The study's five hardware-RAID fsync/s runs. The author reported a standard deviation of
    // 1871.27, which is the population one (divisor n); iogauge reports the sample one
    // (divisor n − 1), so ours times √(4/5) must give theirs.
    let runs = [3170.57, 7606.69, 8379.83, 7627.63, 7523.14];
    let s = summarize(&runs).unwrap();
    assert_close(
        s.stddev * (4.0_f64 / 5.0).sqrt(),
        1871.27,
        0.005,
        "population stddev",
    );
    // Sum 34307.86 / 5.
    assert_close(s.mean, 6861.572, 1e-9, "mean");
    // Median 7606.69; deviations 4436.12, 0, 773.14, 20.94, 83.55, so MAD = 83.55.
    // z = 0.6745·4436.12/83.55 = 35.8 for run 0 and 0.6745·773.14/83.55 = 6.24 for run 2
    // (the 8379.83 run, 10 % above the other three); the rest stay below 0.68. The author only
    // removed run 0, but by the Iglewicz–Hoaglin rule run 2 is an outlier too.
    assert_eq!(s.outliers, vec![0, 2]);
    // (7606.69 + 7627.63 + 7523.14) / 3 = 22757.46 / 3.
    assert_close(
        s.mean_without_outliers,
        7585.82,
        1e-9,
        "mean without outliers",
    );

    // The author's figures after removing run 0 by hand: mean 7784.32, stddev 346.03
    // (population again, so ours times √(3/4)).
    let s = summarize(&runs[1..]).unwrap();
    assert_close(s.mean, 7784.32, 0.005, "mean of the last four");
    assert_close(
        s.stddev * (3.0_f64 / 4.0).sqrt(),
        346.03,
        0.005,
        "their stddev",
    );
}

#[test]
fn confidence_interval_of_a_small_sample() {
    // 1, 2, 3, 4, 5: mean 3, sample variance (4+1+0+1+4)/4 = 2.5, s = 1.58114.
    // t(0.975, 4) = 2.7764 (table), half width 2.7764 · 1.58114 / √5 = 1.96324,
    // so the interval is (1.03676, 4.96324).
    let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_close(s.stddev, 2.5_f64.sqrt(), 1e-12, "stddev");
    assert_close(s.ci95.0, 1.03676, 1e-4, "ci low");
    assert_close(s.ci95.1, 4.96324, 1e-4, "ci high");
    // cv = 1.58114 / 3.
    assert_close(s.cv.unwrap(), 2.5_f64.sqrt() / 3.0, 1e-12, "cv");
    assert!(s.outliers.is_empty());
}

#[test]
fn single_and_identical_values_have_no_spread() {
    let s = summarize(&[42.0]).unwrap();
    assert_eq!(
        (s.n, s.stddev, s.ci95, s.cv),
        (1, 0.0, (42.0, 42.0), Some(0.0))
    );
    let s = summarize(&[0.1; 7]).unwrap();
    assert_eq!(
        (s.mean, s.median, s.stddev, s.ci95),
        (0.1, 0.1, 0.0, (0.1, 0.1))
    );
    assert!(s.outliers.is_empty());
    // A zero mean has no coefficient of variation.
    assert_eq!(summarize(&[-1.0, 1.0]).unwrap().cv, None);
}

#[test]
fn unusable_input_gives_none() {
    assert_eq!(summarize(&[]), None);
    assert_eq!(summarize(&[1.0, f64::NAN]), None);
    assert_eq!(summarize(&[f64::INFINITY]), None);
    assert_eq!(modified_z_scores(&[1.0, f64::NEG_INFINITY]), None);
    assert_eq!(mad_outliers(&[], OUTLIER_THRESHOLD), Some(vec![]));
}

#[test]
fn mad_of_zero_falls_back_to_the_mean_absolute_deviation() {
    // Four identical runs and one different: MAD = 0, so the scale is 1.253314 · MeanAD
    // (MeanAD = 95 / 5 = 19): z = 95 / (1.253314 · 19) = 5 / 1.253314 ≈ 3.99.
    assert_eq!(
        mad_outliers(&[5.0, 5.0, 5.0, 5.0, 100.0], 3.5),
        Some(vec![4])
    );
    // Three runs, two identical: z = 3 / 1.253314 ≈ 2.39, no outlier.
    let z = modified_z_scores(&[5.0, 5.0, 9.0]).unwrap();
    assert!((z[2] - 3.0 / 1.253314).abs() < 1e-12, "{z:?}");
    assert_eq!(mad_outliers(&[5.0, 5.0, 9.0], 3.5), Some(vec![]));
    // All identical: no spread, no scores.
    assert_eq!(modified_z_scores(&[7.0; 4]), Some(vec![0.0; 4]));
}

#[test]
fn welch_matches_r_t_test_output() {
    // R: t.test(c(11,9,10,11,10,12,9,11,12,9), c(11,13,10,13,12,9,11,12,12,11)) prints
    // t = -1.8325, df = 17.9, p-value = 0.08356, 95 percent CI -2.1469104 0.1469104.
    // By hand: means 10.4 and 11.4, variances 12.4/9 and 14.4/9, se² = 0.137778 + 0.16,
    // se = 0.545690, t = −1/se; ν = 0.297778² / (0.137778²/9 + 0.16²/9) = 17.9003.
    let a = [11.0, 9.0, 10.0, 11.0, 10.0, 12.0, 9.0, 11.0, 12.0, 9.0];
    let b = [11.0, 13.0, 10.0, 13.0, 12.0, 9.0, 11.0, 12.0, 12.0, 11.0];
    let w = welch_t_test(&a, &b).unwrap();
    assert_close(w.t, -1.8325, 5e-5, "t");
    assert_close(w.dof, 17.9003, 1e-4, "dof");
    assert_close(w.p_value, 0.08356, 5e-6, "p");
    // The CI half width is t(0.975, ν) · se.
    let se = (12.4 / 90.0 + 14.4 / 90.0_f64).sqrt();
    assert_close(student_t_quantile(0.975, w.dof) * se, 1.1469104, 1e-6, "CI");
}

#[test]
fn welch_with_two_degrees_of_freedom_matches_the_closed_form() {
    // a = 1, 3 and b = 4, 6: both variances 2, se = √(2/2 + 2/2) = √2, t = −3/√2;
    // ν = (1 + 1)² / (1/1 + 1/1) = 2. For ν = 2, P(|T| > t) = 1 − t/√(2 + t²)
    // = 1 − 2.1213203/√6.5 = 0.1679497.
    let w = welch_t_test(&[1.0, 3.0], &[4.0, 6.0]).unwrap();
    assert_close(w.t, -3.0 / 2.0_f64.sqrt(), 1e-12, "t");
    assert_close(w.dof, 2.0, 1e-12, "dof");
    assert_close(w.p_value, 0.1679497, 1e-7, "p");
}

#[test]
fn welch_edge_cases() {
    assert_eq!(welch_t_test(&[1.0], &[1.0, 2.0]), None);
    assert_eq!(welch_t_test(&[1.0, 2.0], &[]), None);
    assert_eq!(welch_t_test(&[1.0, 2.0], &[1.0, f64::NAN]), None);
    // No variance on either side: equal means are the same, different means differ for sure.
    let same = welch_t_test(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
    assert_eq!((same.t, same.p_value, same.dof), (0.0, 1.0, 3.0));
    let differ = welch_t_test(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
    assert_eq!((differ.t, differ.p_value), (-f64::MAX, 0.0));
}

#[test]
fn seed_001_hardware_raid_reads_faster() {
    // Sequential read KB/s per run from the study: hardware RAID is nearly twice as fast.
    // Means 320465 and 615134.8; ratio 615134.8 / 320465 = 1.919507.
    let software = [337376.0, 321752.0, 284567.0, 324414.0, 334216.0];
    let hardware = [655455.0, 617670.0, 557031.0, 659125.0, 586393.0];
    let c = verdict(&software, &hardware, true, DEFAULT_ALPHA, DEFAULT_NOISE);
    assert_eq!(c.verdict, Verdict::Faster);
    assert_close(c.ratio.unwrap(), 615134.8 / 320465.0, 1e-12, "ratio");
    assert!(c.p_value.unwrap() < 1e-4);
    // Read as latencies (lower is better), the same numbers are a slowdown.
    let c = verdict(&software, &hardware, false, DEFAULT_ALPHA, DEFAULT_NOISE);
    assert_eq!(c.verdict, Verdict::Slower);
}

#[test]
fn significant_but_small_changes_are_noise() {
    // A steady 1 % gain: means 100 and 101, spread ±0.1, so p is tiny, but 1 % < 2 %.
    let base = [100.0, 100.1, 99.9, 100.0];
    let cand = [101.0, 101.1, 100.9, 101.0];
    let c = verdict(&base, &cand, true, DEFAULT_ALPHA, DEFAULT_NOISE);
    assert!(c.p_value.unwrap() < 1e-4);
    assert_eq!(c.verdict, Verdict::NoChange);
    assert_eq!(
        verdict(&base, &cand, true, 0.05, 0.005).verdict,
        Verdict::Faster
    );
    // A lower latency is faster.
    assert_eq!(
        verdict(&cand, &base, false, 0.05, 0.005).verdict,
        Verdict::Faster
    );
}

#[test]
fn a_decrease_is_measured_like_the_matching_increase() {
    // 100 → 102.01 is +2.01 %, a change beyond 2 % noise. Back from 102.01 → 100 is −1.97 % of
    // the new baseline, but the same step: the noise rule uses the smaller mean as reference,
    // so both directions count it.
    let low = [99.99, 100.0, 100.01];
    let high = [102.0, 102.01, 102.02];
    assert_eq!(
        verdict(&low, &high, true, 0.05, 0.02).verdict,
        Verdict::Faster
    );
    assert_eq!(
        verdict(&high, &low, true, 0.05, 0.02).verdict,
        Verdict::Slower
    );
}

#[test]
fn large_but_noisy_changes_are_not_significant() {
    // Means 100 and 130 (+30 %), but the runs scatter over 60–170, so p is far above 0.05.
    let c = verdict(
        &[60.0, 140.0, 100.0],
        &[90.0, 170.0, 130.0],
        true,
        0.05,
        0.02,
    );
    assert!(c.p_value.unwrap() > 0.05);
    assert_eq!(c.verdict, Verdict::NoChange);
}

#[test]
fn one_run_cannot_be_judged() {
    let c = verdict(&[100.0], &[200.0, 210.0], true, 0.05, 0.02);
    assert_eq!(c.verdict, Verdict::CannotJudge);
    assert_eq!(c.p_value, None);
    // The ratio of means is still worth showing: 205 / 100.
    assert_eq!(c.ratio, Some(2.05));
    assert_eq!(verdict(&[], &[1.0, 2.0], true, 0.05, 0.02).ratio, None);
    // Parameters that make no sense do not produce a verdict either.
    let c = verdict(&[1.0, 2.0], &[3.0, 4.0], true, f64::NAN, 0.02);
    assert_eq!(c.verdict, Verdict::CannotJudge);
    assert!(Verdict::CannotJudge.to_string().contains("2 runs"));
}

#[test]
fn plateau_finds_where_disks_stop_scaling() {
    // "SSDs no longer scale after 4 disks" ("SSD Performance"): MB/s for 1..8 disks. After 4 disks the
    // best later point is 965, within 5 % of 950 (997.5); before, each point is beaten by
    // far more.
    let disks = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let ssd = [250.0, 500.0, 740.0, 950.0, 960.0, 955.0, 965.0, 962.0];
    assert_eq!(plateau(&disks, &ssd, 0.05), Some(3));
    // "HDDs continue to scale after 5 disks": no plateau.
    let hdd = [110.0, 220.0, 330.0, 430.0, 540.0, 650.0, 760.0, 860.0];
    assert_eq!(plateau(&disks, &hdd, 0.05), None);
    // One flat step followed by more growth is not a plateau.
    assert_eq!(
        plateau(&[1.0, 2.0, 3.0, 4.0], &[100.0, 200.0, 205.0, 400.0], 0.05),
        None
    );
    // A series that falls after its peak plateaus at the peak.
    assert_eq!(
        plateau(&[1.0, 2.0, 4.0, 8.0], &[100.0, 300.0, 200.0, 150.0], 0.05),
        Some(1)
    );
}

#[test]
fn plateau_rejects_what_is_not_a_series() {
    assert_eq!(plateau(&[1.0], &[1.0], 0.05), None);
    assert_eq!(plateau(&[1.0, 2.0], &[1.0], 0.05), None);
    assert_eq!(plateau(&[2.0, 1.0], &[1.0, 1.0], 0.05), None);
    assert_eq!(plateau(&[1.0, 1.0], &[1.0, 1.0], 0.05), None);
    assert_eq!(plateau(&[1.0, 2.0], &[1.0, f64::NAN], 0.05), None);
    assert_eq!(plateau(&[1.0, 2.0], &[1.0, 1.0], -0.1), None);
    // Valid and flat: plateau at the first point.
    assert_eq!(plateau(&[1.0, 2.0], &[1.0, 1.0], 0.0), Some(0));
}
