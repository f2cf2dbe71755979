//! Comparing a candidate's runs against a baseline's: Welch's t-test and the verdict built on it.
//!
//! Welch's test (B. L. Welch, "The generalization of 'Student's' problem when several different
//! population variances are involved", Biometrika 34, 1947) does not assume equal variances,
//! which two storage setups rarely have:
//!
//! t = (mean_a − mean_b) / √(s_a²/n_a + s_b²/n_b), with the Welch–Satterthwaite degrees of
//! freedom ν = (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a − 1) + (s_b²/n_b)²/(n_b − 1)),
//!
//! and the two-sided p-value 2 · P(T_ν > |t|).
//!
//! The verdict follows criterion.rs: a difference counts only when it is statistically
//! significant (p < alpha) *and* larger than a noise threshold, because with enough runs any
//! tiny, meaningless difference becomes significant, and with few runs a large one may not be.

use std::fmt;

use crate::dist::upper_tail;
use crate::moments::{moments, saturate, Moments, Scale};

/// Significance level used unless the caller picks another.
pub const DEFAULT_ALPHA: f64 = 0.05;
/// Relative change below which a difference is treated as noise (2 %, as in criterion.rs).
pub const DEFAULT_NOISE: f64 = 0.02;

/// Result of Welch's unequal-variances t-test. All fields are finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// (mean_a − mean_b) / standard error; saturates at ±`f64::MAX` when the standard error is
    /// 0 and the means differ.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom, between min(n_a, n_b) − 1 and n_a + n_b − 2.
    pub dof: f64,
    /// Two-sided p-value in [0, 1].
    pub p_value: f64,
}

/// Welch's two-sample t-test of `a` against `b`. `None` when either side has fewer than two
/// values or holds a NaN or an infinity.
///
/// When both samples have zero variance the statistic is 0/0 or x/0, and the data settle the
/// question without a distribution: equal means give p = 1 and t = 0, different means p = 0
/// and t = ±`f64::MAX`. ν is then n_a + n_b − 2, the limit for equal variances.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    // One scale for both samples, so their means are comparable.
    let scale = Scale::for_values(a.iter().chain(b));
    Some(welch_from_moments(moments(a, scale), moments(b, scale)))
}

fn welch_from_moments(a: Moments, b: Moments) -> Welch {
    let (na, nb) = (a.n as f64, b.n as f64);
    let diff = a.mean - b.mean;
    // Standard errors of each mean; squaring them directly could overflow or underflow, so
    // the formulas below use them relative to the larger one.
    let se_a = a.stddev / na.sqrt();
    let se_b = b.stddev / nb.sqrt();
    let largest = se_a.max(se_b);
    if largest == 0.0 {
        let (t, p_value) = if diff == 0.0 {
            (0.0, 1.0)
        } else {
            (f64::MAX.copysign(diff), 0.0)
        };
        return Welch {
            t,
            dof: na + nb - 2.0,
            p_value,
        };
    }
    let (u, w) = ((se_a / largest).powi(2), (se_b / largest).powi(2));
    let t = saturate(diff / largest / (u + w).sqrt());
    let dof = ((u + w).powi(2) / (u.powi(2) / (na - 1.0) + w.powi(2) / (nb - 1.0)))
        .clamp(na.min(nb) - 1.0, na + nb - 2.0);
    let p_value = (2.0 * upper_tail(t.abs(), dof)).clamp(0.0, 1.0);
    Welch { t, dof, p_value }
}

/// What a comparison concluded, from the user's point of view: `Faster` means better (more
/// throughput, or less latency when lower is better).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The candidate is significantly better by more than the noise threshold.
    Faster,
    /// The candidate is significantly worse by more than the noise threshold.
    Slower,
    /// Not significant, or within the noise threshold.
    NoChange,
    /// Fewer than two runs on a side (or unusable input): variance, and so significance,
    /// cannot be estimated.
    CannotJudge,
}

impl Verdict {
    /// Text for tables and reports.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no significant change",
            Verdict::CannotJudge => "cannot judge: needs at least 2 runs on each side",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A candidate compared against a baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Candidate mean / baseline mean; `None` when a side is empty or holds a non-finite value,
    /// or the baseline mean is 0.
    pub ratio: Option<f64>,
    /// Welch's two-sided p-value; `None` when it cannot be computed (see [`welch_t_test`]).
    pub p_value: Option<f64>,
    /// The conclusion; see [`verdict`] for the rule.
    pub verdict: Verdict,
}

/// Compares `candidate` against `baseline`. `higher_is_better` is true for throughput and false
/// for latency. A change is `Faster` or `Slower` only when Welch's p < `alpha` and the relative
/// change exceeds `noise`; otherwise `NoChange`. `CannotJudge` when either side has fewer than
/// two values, or `alpha` or `noise` is not a finite non-negative number.
///
/// The relative change is |c − b| / min(|b|, |c|) for means b and c, i.e. the larger of the two
/// ratios minus one. For an improvement in throughput this is criterion's (c − b)/b; using the
/// same yardstick both ways makes the verdict symmetric: swapping baseline and candidate turns
/// `Faster` into `Slower` and leaves `NoChange` alone.
pub fn verdict(
    baseline: &[f64],
    candidate: &[f64],
    higher_is_better: bool,
    alpha: f64,
    noise: f64,
) -> Comparison {
    let finite = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_finite());
    if !finite(baseline) || !finite(candidate) {
        return Comparison {
            ratio: None,
            p_value: None,
            verdict: Verdict::CannotJudge,
        };
    }
    let scale = Scale::for_values(baseline.iter().chain(candidate));
    let (b, c) = (moments(baseline, scale), moments(candidate, scale));
    let ratio = (b.mean != 0.0).then(|| saturate(c.mean / b.mean));

    let params_ok = alpha.is_finite() && alpha >= 0.0 && noise.is_finite() && noise >= 0.0;
    if b.n < 2 || c.n < 2 || !params_ok {
        return Comparison {
            ratio,
            p_value: None,
            verdict: Verdict::CannotJudge,
        };
    }
    let welch = welch_from_moments(c, b);
    let smaller = b.mean.abs().min(c.mean.abs());
    let diff = c.mean - b.mean;
    // A zero-mean side makes any difference infinitely large relative to it.
    let relative = if diff == 0.0 {
        0.0
    } else if smaller == 0.0 {
        f64::INFINITY
    } else {
        diff.abs() / smaller
    };
    let verdict = if welch.p_value < alpha && relative > noise {
        if (diff > 0.0) == higher_is_better {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    } else {
        Verdict::NoChange
    };
    Comparison {
        ratio,
        p_value: Some(welch.p_value),
        verdict,
    }
}
