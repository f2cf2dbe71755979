//! Latency histograms with one fixed layout, and their summaries.
//!
//! Every histogram iogauge makes for a given purpose has the same bounds and precision, set by
//! the constants below, so histograms from threads — and later from other processes and hosts —
//! merge exactly (an HDR histogram merge is a bucket-wise sum when layouts match). Values above
//! the highest trackable latency are clamped to it and counted, never dropped.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Lowest latency told apart: 1 ns.
pub const LAT_LOWEST_NS: u64 = 1;
/// Highest latency tracked: 100 s. A longer IO is counted as 100 s.
pub const LAT_HIGHEST_NS: u64 = 100_000_000_000;
/// Significant digits of whole-run histograms: 0.1% worst-case value error.
pub const LAT_SIGFIG: u8 = 3;
/// Significant digits of per-interval histograms: 1% error is plenty for a time series, and
/// keeps each one at a tenth of the memory.
pub const INTERVAL_SIGFIG: u8 = 2;

pub type Hist = Histogram<u64>;

pub fn run_hist() -> Hist {
    Histogram::new_with_bounds(LAT_LOWEST_NS, LAT_HIGHEST_NS, LAT_SIGFIG)
        .expect("constant histogram bounds are valid")
}

pub fn interval_hist() -> Hist {
    Histogram::new_with_bounds(LAT_LOWEST_NS, LAT_HIGHEST_NS, INTERVAL_SIGFIG)
        .expect("constant histogram bounds are valid")
}

/// Adds `from` into `into`. Both come from the same constructor, so this cannot fail.
pub fn merge(into: &mut Hist, from: &Hist) {
    into.add(from)
        .expect("histograms of one layout always merge");
}

/// Latency summary in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatNs {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub p9999: u64,
    pub max: u64,
}

impl LatNs {
    pub fn of(h: &Hist) -> LatNs {
        if h.is_empty() {
            return LatNs::default();
        }
        LatNs {
            min: h.min(),
            mean: h.mean(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            p9999: h.value_at_quantile(0.9999),
            max: h.max(),
        }
    }
}

/// A histogram as (value, count) pairs of its non-empty buckets: re-recording each pair into a
/// histogram of the same layout rebuilds it exactly, so runs from other processes or hosts can
/// be merged later.
pub fn buckets(h: &Hist) -> Vec<[u64; 2]> {
    h.iter_recorded()
        .map(|v| [v.value_iterated_to(), v.count_at_value()])
        .collect()
}

/// The inverse of [`buckets`] for a whole-run histogram: exact, since the buckets were read
/// from one of the same layout.
pub fn from_buckets(pairs: &[[u64; 2]]) -> Hist {
    filled(run_hist(), pairs)
}

/// The inverse of [`buckets`] for a per-interval histogram.
pub fn interval_from_buckets(pairs: &[[u64; 2]]) -> Hist {
    filled(interval_hist(), pairs)
}

fn filled(mut h: Hist, pairs: &[[u64; 2]]) -> Hist {
    for [v, n] in pairs {
        h.saturating_record_n(*v, *n);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Merging per-thread histograms gives exactly the histogram of all values recorded in
        /// one: same count, same min/max, same value at every quantile.
        #[test]
        fn merge_is_exact(
            parts in proptest::collection::vec(
                proptest::collection::vec(1u64..LAT_HIGHEST_NS * 2, 0..200), 1..8)
        ) {
            let mut whole = run_hist();
            let mut merged = run_hist();
            for part in &parts {
                let mut h = run_hist();
                for &v in part {
                    h.saturating_record(v);
                    whole.saturating_record(v);
                }
                merge(&mut merged, &h);
            }
            prop_assert_eq!(merged.len(), whole.len());
            prop_assert_eq!(LatNs::of(&merged), LatNs::of(&whole));
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
                prop_assert_eq!(merged.value_at_quantile(q), whole.value_at_quantile(q));
            }
        }
    }

    #[test]
    fn buckets_round_trip_exactly() {
        let mut h = run_hist();
        for v in [
            1u64,
            7,
            1000,
            1001,
            123_456,
            9_999_999,
            5_000_000_000,
            u64::MAX,
        ] {
            h.saturating_record_n(v, v % 5 + 1);
        }
        let back = from_buckets(&buckets(&h));
        assert_eq!(back.len(), h.len());
        assert_eq!(back, h);
    }

    #[test]
    fn summary_is_within_precision() {
        let mut h = run_hist();
        for v in 1..=100_000u64 {
            h.record(v * 1000).unwrap(); // 1 µs .. 100 ms uniformly
        }
        let s = LatNs::of(&h);
        let close = |a: u64, b: f64| ((a as f64 - b) / b).abs() < 0.002;
        assert!(close(s.p50, 50_000_000.0), "{}", s.p50);
        assert!(close(s.p99, 99_000_000.0), "{}", s.p99);
        assert!(close(s.min, 1000.0));
        assert!(close(s.max, 100_000_000.0));
        // Clamped, not lost.
        h.saturating_record(u64::MAX);
        assert_eq!(h.len(), 100_001);
    }
}
