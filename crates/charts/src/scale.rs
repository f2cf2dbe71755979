//! Axes: the public [`Axis`] description, the mapping of data values onto a scale (linear, log2,
//! log10 or "nines"), and the choice of the axis range and its ticks.
//!
//! Linear ticks follow Heckbert's "nice numbers" (P. Heckbert, "Nice Numbers for Graph Labels",
//! Graphics Gems, 1990): the step is 1, 2 or 5 times a power of ten and the range is widened to
//! whole steps, so the first and last ticks enclose the data. Log10 axes use 1-2-5 ticks within
//! each decade when the data span few decades, whole decades otherwise. The percentile ("nines")
//! scale maps p (in percent) to -log10(1 - p/100), which spaces p90, p99, p99.9 evenly.

use crate::format::{format_for_step, format_percentile, format_si};

/// How data values are placed along an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values; ticks at 1-2-5 steps.
    Linear,
    /// Powers of two evenly spaced (block sizes, thread counts); values ≤ 0 are not drawn.
    Log2,
    /// Powers of ten evenly spaced (latency, IOPS over decades); values ≤ 0 are not drawn.
    Log10,
    /// Percentiles in percent on a "nines" scale, -log10(1 - p/100): p90, p99, p99.9 and p99.99
    /// are evenly spaced. Values outside 0 ≤ p < 100 are not drawn.
    Nines,
}

impl Scale {
    /// Maps a data value into the scale's straight space, or `None` if it has no place there.
    pub(crate) fn forward(self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        let t = match self {
            Scale::Linear => v,
            Scale::Log2 if v > 0.0 => v.log2(),
            Scale::Log10 if v > 0.0 => v.log10(),
            Scale::Nines if (0.0..100.0).contains(&v) => -((100.0 - v) / 100.0).log10(),
            _ => return None,
        };
        t.is_finite().then_some(t)
    }

    /// Like [`Scale::forward`] but sends finite values that fall off the scale to its ends, for
    /// things like shaded bands that may start "before zero" on a log axis.
    pub(crate) fn forward_clamped(self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        match self.forward(v) {
            Some(t) => Some(t),
            None if self == Scale::Nines && v >= 100.0 => Some(f64::INFINITY),
            None => Some(f64::NEG_INFINITY),
        }
    }

    pub(crate) fn inverse(self, t: f64) -> f64 {
        match self {
            Scale::Linear => t,
            Scale::Log2 => t.exp2(),
            Scale::Log10 => 10f64.powf(t),
            Scale::Nines => 100.0 * (1.0 - 10f64.powf(-t)),
        }
    }

    /// Why a value was not drawn on this scale, for the chart's footnote.
    pub(crate) fn rejection(self, v: f64) -> &'static str {
        if !v.is_finite() {
            return "not a finite number";
        }
        match self {
            Scale::Nines => "outside 0 to 100 on the percentile axis",
            _ => "zero or negative on a log axis",
        }
    }
}

/// One axis of a chart: its title (with units), its scale, and optionally how ticks are labelled.
///
/// ```
/// use iogauge_charts::{format_bytes, Axis};
/// let x = Axis::log2("Block size").format(format_bytes);
/// let y = Axis::linear("IOPS").from_zero();
/// # let _ = (x, y);
/// ```
#[derive(Clone, Debug)]
pub struct Axis {
    pub(crate) title: String,
    pub(crate) scale: Scale,
    pub(crate) format: Option<fn(f64) -> String>,
    pub(crate) ticks: Option<Vec<(f64, String)>>,
    pub(crate) include: Vec<f64>,
}

impl Axis {
    /// An axis with the given scale; the title should carry the unit, e.g. `"Bandwidth (MiB/s)"`.
    pub fn new(title: impl Into<String>, scale: Scale) -> Axis {
        Axis {
            title: title.into(),
            scale,
            format: None,
            ticks: None,
            include: Vec::new(),
        }
    }

    /// A linear axis.
    pub fn linear(title: impl Into<String>) -> Axis {
        Axis::new(title, Scale::Linear)
    }

    /// A log2 axis, ticks at powers of two.
    pub fn log2(title: impl Into<String>) -> Axis {
        Axis::new(title, Scale::Log2)
    }

    /// A log10 axis.
    pub fn log10(title: impl Into<String>) -> Axis {
        Axis::new(title, Scale::Log10)
    }

    /// A percentile axis on the "nines" scale; data values are percentiles in percent (99.9).
    pub fn nines(title: impl Into<String>) -> Axis {
        Axis::new(title, Scale::Nines)
    }

    /// Labels the automatic ticks (and tooltips) with `f` instead of the default
    /// ([`format_si`], or [`format_percentile`] on a nines axis).
    pub fn format(mut self, f: fn(f64) -> String) -> Axis {
        self.format = Some(f);
        self
    }

    /// Uses these ticks, `(value, label)`, instead of automatic ones. Ticks outside the range
    /// the data need are left out; the range is not widened for them.
    pub fn ticks<S: Into<String>>(mut self, ticks: impl IntoIterator<Item = (f64, S)>) -> Axis {
        self.ticks = Some(ticks.into_iter().map(|(v, s)| (v, s.into())).collect());
        self
    }

    /// Makes the axis reach `v` even if no data does (ignored if `v` has no place on the scale).
    pub fn include(mut self, v: f64) -> Axis {
        self.include.push(v);
        self
    }

    /// Makes a linear axis start at zero, so heights compare honestly.
    pub fn from_zero(self) -> Axis {
        self.include(0.0)
    }

    pub(crate) fn label(&self, v: f64) -> String {
        match (self.format, self.scale) {
            (Some(f), _) => f(v),
            (None, Scale::Nines) => format_percentile(v),
            (None, _) => format_si(v),
        }
    }
}

/// An axis with its range fixed: `lo..hi` in the scale's straight space, and ticks placed there.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) scale: Scale,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    /// `(position in straight space, label)`.
    pub(crate) ticks: Vec<(f64, String)>,
}

impl Resolved {
    /// Where straight-space `t` falls between pixel `p0` (at `lo`) and `p1` (at `hi`).
    pub(crate) fn px(&self, t: f64, p0: f64, p1: f64) -> f64 {
        let span = self.hi - self.lo;
        if span <= 0.0 || !span.is_finite() {
            return (p0 + p1) / 2.0;
        }
        let t = t.clamp(self.lo, self.hi);
        p0 + (t - self.lo) / span * (p1 - p0)
    }

    /// Maps a data value, `None` if it has no place on the scale.
    pub(crate) fn map(&self, v: f64, p0: f64, p1: f64) -> Option<f64> {
        self.scale.forward(v).map(|t| self.px(t, p0, p1))
    }
}

/// Fixes the range and ticks of `axis` for data `values` (data space, unfiltered), aiming at
/// about `target` intervals on linear scales. `None` when no value has a place on the scale.
pub(crate) fn resolve(
    axis: &Axis,
    values: impl IntoIterator<Item = f64>,
    target: usize,
) -> Option<Resolved> {
    let scale = axis.scale;
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut any_data = false;
    for t in values.into_iter().filter_map(|v| scale.forward(v)) {
        lo = lo.min(t);
        hi = hi.max(t);
        any_data = true;
    }
    if !any_data {
        return None;
    }
    for t in axis.include.iter().filter_map(|&v| scale.forward(v)) {
        lo = lo.min(t);
        hi = hi.max(t);
    }
    let (lo, hi, auto) = match scale {
        Scale::Linear => linear_ticks(lo, hi, target),
        Scale::Log2 => power_ticks(lo, hi, 16),
        Scale::Log10 => log10_ticks(lo, hi),
        Scale::Nines => nines_ticks(lo, hi),
    };
    let ticks = match &axis.ticks {
        Some(given) => given
            .iter()
            .filter_map(|(v, label)| Some((scale.forward(*v)?, label.clone())))
            .filter(|(t, _)| *t >= lo - 1e-9 * (hi - lo) && *t <= hi + 1e-9 * (hi - lo))
            .collect(),
        None => label_ticks(axis, &auto),
    };
    Some(Resolved {
        scale,
        lo,
        hi,
        ticks,
    })
}

/// Labels automatic ticks; if the formatter gives two ticks the same label (a narrow range far
/// from zero, say 1000000 and 1000001), falls back to plain decimals that tell them apart.
fn label_ticks(axis: &Axis, ticks: &[f64]) -> Vec<(f64, String)> {
    let values: Vec<f64> = ticks.iter().map(|&t| axis.scale.inverse(t)).collect();
    let labels: Vec<String> = values.iter().map(|&v| axis.label(v)).collect();
    let distinct = labels.windows(2).all(|w| w[0] != w[1]);
    if distinct || axis.scale != Scale::Linear {
        return ticks.iter().copied().zip(labels).collect();
    }
    let step = values.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    ticks
        .iter()
        .zip(&values)
        .map(|(&t, &v)| (t, format_for_step(v, step)))
        .collect()
}

/// The 1-2-5 step at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let residual = raw / mag;
    let m = if residual <= 1.0 {
        1.0
    } else if residual <= 2.0 {
        2.0
    } else if residual <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Widens `lo..hi` to whole 1-2-5 steps and returns the ticks (Heckbert 1990, with the step
/// rounded up so there are at most about `target` intervals).
pub(crate) fn linear_ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>) {
    let (mut lo, mut hi) = (lo, hi);
    if lo == hi {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        lo -= pad;
        hi += pad;
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let step = nice_step(raw);
    if !step.is_finite() || step <= 0.0 {
        // A range too wide for f64 (e.g. -1e308..1e308): two ticks at the ends will do.
        return (lo, hi, vec![lo, hi]);
    }
    let k0 = (lo / step).floor();
    let k1 = (hi / step).ceil();
    let n = ((k1 - k0) as usize).min(100);
    let ticks: Vec<f64> = (0..=n).map(|i| (k0 + i as f64) * step).collect();
    let first = ticks.first().copied().unwrap_or(lo);
    let last = ticks.last().copied().unwrap_or(hi);
    (first.min(lo), last.max(hi), ticks)
}

/// Whole powers (integers in straight space) covering `lo..hi`, every `stride`-th one so there
/// are at most about `max_ticks`.
fn power_ticks(lo: f64, hi: f64, max_ticks: usize) -> (f64, f64, Vec<f64>) {
    let mut k0 = lo.floor();
    let mut k1 = hi.ceil();
    if k0 == k1 {
        k0 -= 1.0;
        k1 += 1.0;
    }
    let stride = ((k1 - k0) / max_ticks as f64).ceil().max(1.0);
    let n = ((k1 - k0) / stride).ceil();
    let k1 = k0 + n * stride;
    let ticks = (0..=(n as usize).min(200))
        .map(|i| k0 + i as f64 * stride)
        .collect();
    (k0, k1, ticks)
}

fn log10_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let (mut lo, mut hi) = (lo, hi);
    if lo == hi {
        lo -= 0.15;
        hi += 0.15;
    }
    if hi - lo > 2.5 {
        return power_ticks(lo, hi, 10);
    }
    let mut candidates = Vec::new();
    let d0 = lo.floor() as i64 - 1;
    let d1 = hi.ceil() as i64 + 1;
    for d in d0..=d1 {
        for m in [1.0f64, 2.0, 5.0] {
            candidates.push(m.log10() + d as f64);
        }
    }
    snap(lo, hi, &candidates)
}

fn nines_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    // p0, p50, p90, p99, p99.9, ... in straight space.
    let mut candidates = vec![0.0, 2f64.log10()];
    candidates.extend((1..=16).map(f64::from));
    let (mut lo, mut hi) = (lo, hi);
    if lo == hi {
        lo -= 0.1;
        hi += 0.1;
    }
    if hi > 16.0 {
        candidates.push(hi.ceil());
    }
    snap(lo, hi, &candidates)
}

/// The tightest candidates enclosing `lo..hi` (candidates sorted ascending), and every candidate
/// between them as ticks.
fn snap(lo: f64, hi: f64, candidates: &[f64]) -> (f64, f64, Vec<f64>) {
    let eps = 1e-9;
    let first = candidates
        .iter()
        .rev()
        .find(|&&c| c <= lo + eps)
        .copied()
        .unwrap_or(lo);
    let last = candidates
        .iter()
        .find(|&&c| c >= hi - eps)
        .copied()
        .unwrap_or(hi);
    let ticks = candidates
        .iter()
        .copied()
        .filter(|&c| c >= first - eps && c <= last + eps)
        .collect();
    (first, last, ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// True when `step` is 1, 2 or 5 times a power of ten.
    fn is_125(step: f64) -> bool {
        let mantissa = step / 10f64.powf(step.log10().floor());
        [1.0, 2.0, 5.0, 10.0]
            .iter()
            .any(|m| (mantissa - m).abs() < 1e-9)
    }

    #[test]
    fn linear_ticks_cover_the_data_with_125_steps() {
        let ranges = [
            (0.0, 1.0),
            (0.0, 63751.0),
            (11307.0, 30170.0),
            (5.5, 1747.3),
            (-3.2, 7.9),
            (0.001, 0.0042),
            (1_000_000.0, 1_000_003.0),
            (42.0, 42.0),
            (0.0, 0.0),
            (-5.0, -5.0),
        ];
        for (lo, hi) in ranges {
            let (first, last, ticks) = linear_ticks(lo, hi, 6);
            assert!(ticks.len() >= 2, "{lo}..{hi}: {ticks:?}");
            assert!(ticks[0] <= lo && *ticks.last().unwrap() >= hi, "{lo}..{hi}");
            assert!(first <= lo && last >= hi);
            assert!(ticks.len() <= 6 + 3, "{lo}..{hi}: too many ticks {ticks:?}");
            let step = ticks[1] - ticks[0];
            assert!(is_125(step), "{lo}..{hi}: step {step}");
            for w in ticks.windows(2) {
                assert!(((w[1] - w[0]) - step).abs() <= step * 1e-6, "{ticks:?}");
            }
            for t in &ticks {
                let k = t / step;
                assert!(
                    (k - k.round()).abs() < 1e-6,
                    "{t} is not a multiple of {step}"
                );
            }
        }
    }

    #[test]
    fn equal_values_get_a_padded_range() {
        let (lo, hi, _) = linear_ticks(42.0, 42.0, 6);
        assert!(lo < 42.0 && hi > 42.0);
        let axis = Axis::log10("lat");
        let r = resolve(&axis, [7.0, 7.0], 6).unwrap();
        assert!(r.lo < 7f64.log10() && r.hi > 7f64.log10());
        let r = resolve(&Axis::log2("bs"), [4096.0], 6).unwrap();
        assert!(r.lo < 12.0 && r.hi > 12.0);
    }

    #[test]
    fn log2_mapping_is_exact_at_powers() {
        let r = resolve(&Axis::log2("bs"), [512.0, 4.0 * 1048576.0], 6).unwrap();
        let x2 = r.map(2048.0, 100.0, 600.0).unwrap();
        let x4 = r.map(4096.0, 100.0, 600.0).unwrap();
        let x8 = r.map(8192.0, 100.0, 600.0).unwrap();
        assert!((x4 - (x2 + x8) / 2.0).abs() < 1e-9);
        assert_eq!(r.map(512.0, 100.0, 600.0), Some(100.0));
        assert_eq!(r.map(4.0 * 1048576.0, 100.0, 600.0), Some(600.0));
    }

    #[test]
    fn log_scales_reject_non_positive_values() {
        assert_eq!(Scale::Log2.forward(0.0), None);
        assert_eq!(Scale::Log10.forward(-1.0), None);
        assert_eq!(Scale::Linear.forward(f64::NAN), None);
        assert!(resolve(&Axis::log10("x"), [0.0, -3.0, f64::NAN], 6).is_none());
    }

    #[test]
    fn log10_ticks_are_125_or_decades() {
        let r = resolve(&Axis::log10("lat"), [0.3, 8.0], 6).unwrap();
        let labels: Vec<&str> = r.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0.2", "0.5", "1", "2", "5", "10"]);
        let r = resolve(&Axis::log10("lat"), [0.02, 3000.0], 6).unwrap();
        let labels: Vec<&str> = r.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10", "100", "1k", "10k"]);
    }

    #[test]
    fn nines_space_each_nine_evenly() {
        let r = resolve(&Axis::nines("p"), [50.0, 99.99], 6).unwrap();
        let x90 = r.map(90.0, 0.0, 400.0).unwrap();
        let x99 = r.map(99.0, 0.0, 400.0).unwrap();
        let x999 = r.map(99.9, 0.0, 400.0).unwrap();
        let x9999 = r.map(99.99, 0.0, 400.0).unwrap();
        assert!(((x99 - x90) - (x999 - x99)).abs() < 1e-6);
        assert!(((x9999 - x999) - (x999 - x99)).abs() < 1e-6);
        let labels: Vec<&str> = r.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["p50", "p90", "p99", "p99.9", "p99.99"]);
        assert_eq!(Scale::Nines.forward(100.0), None);
    }

    #[test]
    fn given_ticks_replace_automatic_ones() {
        let axis = Axis::log2("bs").ticks([(512.0, "512B"), (4096.0, "4K"), (1e12, "far")]);
        let r = resolve(&axis, [512.0, 65536.0], 6).unwrap();
        let labels: Vec<&str> = r.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["512B", "4K"]);
    }

    #[test]
    fn include_widens_the_range() {
        let r = resolve(&Axis::linear("iops").from_zero(), [500.0, 900.0], 6).unwrap();
        assert_eq!(r.lo, 0.0);
        assert!(r.hi >= 900.0);
    }

    #[test]
    fn duplicate_labels_fall_back_to_decimals() {
        let r = resolve(&Axis::linear("x"), [1_000_000.0, 1_000_003.0], 6).unwrap();
        let labels: Vec<&String> = r.ticks.iter().map(|(_, l)| l).collect();
        for w in labels.windows(2) {
            assert_ne!(w[0], w[1]);
        }
    }

    #[test]
    fn extreme_ranges_do_not_panic() {
        let _ = resolve(&Axis::linear("x"), [-1e308, 1e308], 6);
        let _ = resolve(&Axis::log10("x"), [1e-300, 1e300], 6);
        let _ = resolve(&Axis::log2("x"), [f64::MIN_POSITIVE, f64::MAX], 6);
        let _ = resolve(&Axis::nines("x"), [0.0, 99.999_999_999_999], 6);
    }
}
