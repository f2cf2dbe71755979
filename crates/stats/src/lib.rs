//! Statistics for iogauge's repeated runs: summaries with confidence intervals and outliers,
//! comparisons with a verdict, and where a scaling series levels off. Pure functions on `f64`
//! slices, no dependencies; the main crate adds serialization.
//!
//! Why it exists: in "PostgreSQL Server Benchmarks — Disks" each test was run five times and averaged by hand; one fsync
//! run at 3170/s against about 7600/s for the rest pulled the mean down by 12 % and was only
//! found by eye. Here every metric gets its spread, its interval and its suspicious runs, and a
//! comparison says "no significant change" unless the data support more.
//!
//! Methods and references (each module repeats its own):
//! - [`summarize`]: sample mean and standard deviation (n − 1), median, coefficient of variation,
//!   95 % Student-t confidence interval for the mean.
//! - [`modified_z_scores`], [`mad_outliers`]: modified z-score, z = 0.6745 (x − median)/MAD,
//!   outlier when |z| > 3.5 (B. Iglewicz and D. C. Hoaglin, *How to Detect and Handle
//!   Outliers*, ASQC 1993); when MAD is 0, scaled by 1.253314 · the mean absolute deviation.
//! - [`welch_t_test`]: Welch's t-test with Welch–Satterthwaite degrees of freedom (B. L. Welch,
//!   Biometrika 34, 1947).
//! - [`verdict`]: significant *and* beyond a noise threshold, as criterion.rs decides changes.
//! - [`student_t_cdf`], [`student_t_quantile`]: through the regularized incomplete beta function
//!   (continued fraction of Abramowitz & Stegun 26.5.8 by the modified Lentz method, *Numerical
//!   Recipes* 3rd ed. §6.4) and a Lanczos log-gamma; the normal limit through the incomplete
//!   gamma function.
//! - [`plateau`]: the first point no later point beats by more than a relative gain.
//!
//! Nothing here panics, and every number in a [`Summary`], [`Welch`] or [`Comparison`] is finite
//! (magnitudes beyond `f64::MAX` saturate), because they end up in JSON.
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests
#![warn(missing_docs)]

mod compare;
mod dist;
mod moments;
mod outliers;
mod scaling;
mod special;
mod summary;

pub use compare::{
    verdict, welch_t_test, Comparison, Verdict, Welch, DEFAULT_ALPHA, DEFAULT_NOISE,
};
pub use dist::{student_t_cdf, student_t_quantile};
pub use outliers::{
    mad_outliers, material_outliers, modified_z_scores, OutlierRule, MIN_SHIFT, OUTLIER_THRESHOLD,
};
pub use scaling::plateau;
pub use summary::{summarize, Summary};
