//! Short: a result that moved a fixed amount of data (`--data`, a suite's `data = "range"`
//! cells, an fio job with size= and no runtime) so fast that its numbers rest on a moment —
//! `suite seq --size 256m` measured `write 1M` over 61 ms and said nothing. A timed result is
//! as long as its author asked (and shorter than 100 ms is refused before it runs); a result of
//! a fixed amount of data is as long as the device made it, so its length is told when it is
//! too short to quote.

use crate::fmt::count;
use crate::{Finding, Kind, Severity, Thresholds};

const ADVICE: &str = "Move more data (a larger --size or --data), or run for a time (--time, \
--cell-time), for numbers to quote: over a fraction of a second a page fault, a timer tick or \
the device's first IOs move the result.";

/// A result of a fixed amount of data (`timed` false) with `ios` IOs over `runtime_s`, judged
/// against `th.short_s`. Evidence: `runtime_s`, `ios`, `short_s`.
pub fn short(runtime_s: f64, ios: u64, timed: bool, th: &Thresholds) -> Option<Finding> {
    // A runtime that is not a number (never measured) is not judged.
    if timed || ios == 0 || runtime_s.is_nan() || runtime_s >= th.short_s {
        return None;
    }
    let ms = runtime_s * 1e3;
    let took = match ms < 10.0 {
        true => format!("{ms:.1} ms"),
        false => format!("{ms:.0} ms"),
    };
    Some(
        Finding::new(
            Kind::Short,
            Severity::Info,
            format!(
                "measured over only {took} ({} IOs): the data was moved faster than numbers can be quoted from",
                count(ios as f64)
            ),
            ADVICE,
        )
        .with("runtime_s", runtime_s)
        .with("ios", ios as f64)
        .with("short_s", th.short_s),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_amount_moved_in_a_moment_is_short_and_a_second_is_not() {
        let th = Thresholds::default();
        let f = short(0.061, 256, false, &th).unwrap();
        assert_eq!(f.kind, Kind::Short);
        assert!(
            f.summary.starts_with("measured over only 61 ms (256 IOs)"),
            "{}",
            f.summary
        );
        // The near misses: a second or more; a timed result; nothing moved.
        assert!(short(1.0, 256, false, &th).is_none());
        assert!(short(0.061, 256, true, &th).is_none());
        assert!(short(0.061, 0, false, &th).is_none());
    }
}
