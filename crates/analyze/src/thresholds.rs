//! The limits every check compares against, with their defaults (tabled in the crate doc) and the
//! check of values a user typed.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Limits for all checks. `#[serde(default)]` lets a stored or typed configuration name only the
/// fields it changes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default)]
pub struct Thresholds {
    /// A bin is stalled when its rate is below this fraction of the run's median rate.
    pub stall_frac: f64,
    /// Shortest stall reported, in seconds.
    pub stall_min_s: f64,
    /// IOs a bin must hold at the median rate before single bins are judged; slower runs are
    /// judged on wider bins, because at a few IOs per bin empty bins are ordinary chance.
    pub stall_min_count: u32,
    /// Growth per doubling of x below which a metric counts as flat.
    pub ceiling_gain: f64,
    /// Doublings of x a flat stretch must span to be called a ceiling.
    pub ceiling_min_doublings: f64,
    /// Latency growing at least as x^this across a ceiling means a saturated fixed limit.
    pub ceiling_lat_elasticity: f64,
    /// A matrix cell below this fraction of its neighbours' trend is a gap.
    pub gap_frac: f64,
    /// Buffered IO measures the disk only with a working set above this many times RAM.
    pub cache_ram_factor: f64,
    /// Read bandwidth above the device maximum times this was served by a cache.
    pub cache_bw_margin: f64,
    /// A read target with more than this fraction in holes or unwritten extents is sparse.
    pub sparse_frac: f64,
    /// SNIA PTS data excursion limit, as a fraction of the window mean.
    pub steady_excursion: f64,
    /// SNIA PTS slope excursion limit, as a fraction of the window mean.
    pub steady_slope: f64,
    /// A change of regime moves the rate by at least this fraction of the higher level.
    pub regime_frac: f64,
    /// A database dip: TPS at least this fraction below the run's median.
    pub checkpoint_dip_frac: f64,
    /// Shortest database dip judged, in seconds.
    pub checkpoint_min_s: f64,
    /// A device this busy (0–1) during a dip was saturated.
    pub checkpoint_util: f64,
    /// A device with this many requests queued on average during a dip was saturated.
    pub checkpoint_queue: f64,
    /// A result of a fixed amount of data measured over less than this many seconds is short.
    pub short_s: f64,
    /// An array stops scaling where one more member adds less than this share of one member's
    /// worth (the fewest members' rate over their count).
    pub scaling_share: f64,
    /// A benchmark client on the machine under test that used more than this share of its
    /// CPUs measured itself beside the server (`client`).
    pub client_cpu_share: f64,
    /// A stream whose p99 latency beside other streams is at least this many times its p99
    /// alone is held back by them (`interference`).
    pub interference_ratio: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            stall_frac: 0.1,
            stall_min_s: 0.5,
            stall_min_count: 10,
            ceiling_gain: 0.05,
            ceiling_min_doublings: 2.0,
            ceiling_lat_elasticity: 0.5,
            gap_frac: 0.5,
            cache_ram_factor: 2.0,
            cache_bw_margin: 1.1,
            sparse_frac: 0.01,
            steady_excursion: 0.2,
            steady_slope: 0.1,
            regime_frac: 0.3,
            checkpoint_dip_frac: 0.3,
            checkpoint_min_s: 2.0,
            checkpoint_util: 0.9,
            checkpoint_queue: 4.0,
            short_s: 1.0,
            scaling_share: 0.25,
            client_cpu_share: 0.2,
            interference_ratio: 2.0,
        }
    }
}

/// A threshold as a user sees it: its name in a thresholds file, its value, what it means.
pub type Entry = (&'static str, f64, &'static str);

impl Thresholds {
    /// Every threshold with its value and meaning, in the order the checks run: the one list
    /// behind `iogauge report --list-thresholds` and the names a thresholds file may use
    /// (a test keeps it equal to the fields).
    pub fn entries(&self) -> [Entry; 21] {
        [
            ("stall_frac", self.stall_frac, "a bin is stalled when its rate is below this fraction of the run's median rate (or zero)"),
            ("stall_min_s", self.stall_min_s, "shortest stall reported, in seconds"),
            ("stall_min_count", f64::from(self.stall_min_count), "IOs a bin must hold at the median rate; slower runs are judged on wider bins, so that chance gaps are not called stalls"),
            ("ceiling_gain", self.ceiling_gain, "growth per doubling of x below which IOPS or bandwidth counts as flat"),
            ("ceiling_min_doublings", self.ceiling_min_doublings, "how many doublings of x a flat stretch must span to be a ceiling"),
            ("ceiling_lat_elasticity", self.ceiling_lat_elasticity, "latency growing at least as x^this across a ceiling means a saturated fixed limit; below it, concurrency is not reaching the device"),
            ("gap_frac", self.gap_frac, "a matrix cell below this fraction of its neighbours' trend is a gap"),
            ("cache_ram_factor", self.cache_ram_factor, "buffered IO needs a working set above this many times RAM to measure the disk"),
            ("cache_bw_margin", self.cache_bw_margin, "read bandwidth above the device's maximum times this was served by a cache"),
            ("sparse_frac", self.sparse_frac, "a read target with more than this fraction in holes or unwritten extents is sparse"),
            ("steady_excursion", self.steady_excursion, "steady state: max - min over the window at most this fraction of its mean (SNIA PTS)"),
            ("steady_slope", self.steady_slope, "steady state: slope x (window - 1) at most this fraction of the mean (SNIA PTS)"),
            ("regime_frac", self.regime_frac, "a change of regime moves the rate by at least this fraction of the higher level"),
            ("checkpoint_dip_frac", self.checkpoint_dip_frac, "a database dip: TPS at least this fraction below the run's median"),
            ("checkpoint_min_s", self.checkpoint_min_s, "shortest database dip judged, in seconds"),
            ("checkpoint_util", self.checkpoint_util, "a device at least this busy (0 to 1) during a dip was saturated"),
            ("checkpoint_queue", self.checkpoint_queue, "a device with at least this many requests queued on average during a dip was saturated"),
            ("short_s", self.short_s, "a result of a fixed amount of data measured over less than this many seconds is said to be short"),
            ("scaling_share", self.scaling_share, "an array stops scaling where one more member adds less than this share of one member's worth, at the edges of the 95% confidence intervals"),
            ("client_cpu_share", self.client_cpu_share, "a benchmark client on the machine under test that used more than this share of its CPUs measured itself beside the server"),
            ("interference_ratio", self.interference_ratio, "a stream whose p99 latency beside other streams is at least this many times its p99 alone is held back by them"),
        ]
    }

    /// The names a thresholds file may use.
    pub fn names() -> impl Iterator<Item = &'static str> {
        Thresholds::default()
            .entries()
            .into_iter()
            .map(|(n, _, _)| n)
    }
}

/// A threshold outside the range where its check means anything.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdError {
    pub name: &'static str,
    pub value: f64,
    pub expected: &'static str,
}

impl fmt::Display for ThresholdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "threshold {} = {} is out of range: expected {}",
            self.name, self.value, self.expected
        )
    }
}

impl std::error::Error for ThresholdError {}

impl Thresholds {
    /// Checks every field; the checks themselves never panic on bad values, but a typo such as
    /// `gap_frac = 5` would silently flag every cell, so the CLI should refuse it up front.
    pub fn validate(&self) -> Result<(), ThresholdError> {
        const FRACTION: &str = "a number between 0 and 1";
        const POSITIVE: &str = "a finite number above 0";
        let checks: [Check; 20] = [
            (
                "interference_ratio",
                self.interference_ratio,
                "a finite number above 1",
                |v| v.is_finite() && v > 1.0,
            ),
            ("regime_frac", self.regime_frac, FRACTION, unit_interval),
            (
                "client_cpu_share",
                self.client_cpu_share,
                FRACTION,
                unit_interval,
            ),
            ("scaling_share", self.scaling_share, FRACTION, unit_interval),
            ("short_s", self.short_s, POSITIVE, positive),
            ("stall_frac", self.stall_frac, FRACTION, unit_interval),
            ("stall_min_s", self.stall_min_s, POSITIVE, positive),
            ("ceiling_gain", self.ceiling_gain, FRACTION, unit_interval),
            (
                "ceiling_min_doublings",
                self.ceiling_min_doublings,
                POSITIVE,
                positive,
            ),
            (
                "ceiling_lat_elasticity",
                self.ceiling_lat_elasticity,
                FRACTION,
                unit_interval,
            ),
            ("gap_frac", self.gap_frac, FRACTION, unit_interval),
            (
                "cache_ram_factor",
                self.cache_ram_factor,
                "a finite number of at least 1",
                |v| v.is_finite() && v >= 1.0,
            ),
            (
                "cache_bw_margin",
                self.cache_bw_margin,
                "a finite number of at least 1",
                |v| v.is_finite() && v >= 1.0,
            ),
            ("sparse_frac", self.sparse_frac, FRACTION, unit_interval),
            (
                "steady_excursion",
                self.steady_excursion,
                FRACTION,
                unit_interval,
            ),
            ("steady_slope", self.steady_slope, FRACTION, unit_interval),
            (
                "checkpoint_dip_frac",
                self.checkpoint_dip_frac,
                FRACTION,
                unit_interval,
            ),
            (
                "checkpoint_min_s",
                self.checkpoint_min_s,
                POSITIVE,
                positive,
            ),
            (
                "checkpoint_util",
                self.checkpoint_util,
                FRACTION,
                unit_interval,
            ),
            (
                "checkpoint_queue",
                self.checkpoint_queue,
                POSITIVE,
                positive,
            ),
        ];
        for (name, value, expected, ok) in checks {
            if !ok(value) {
                return Err(ThresholdError {
                    name,
                    value,
                    expected,
                });
            }
        }
        Ok(())
    }
}

/// Name, value, what a valid value looks like, and the test for it.
type Check = (&'static str, f64, &'static str, fn(f64) -> bool);

fn unit_interval(v: f64) -> bool {
    (0.0..=1.0).contains(&v)
}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        assert_eq!(Thresholds::default().validate(), Ok(()));
    }

    #[test]
    fn out_of_range_values_are_refused_by_name() {
        let th = Thresholds {
            gap_frac: 5.0,
            ..Thresholds::default()
        };
        assert_eq!(th.validate().unwrap_err().name, "gap_frac");
        let th = Thresholds {
            stall_min_s: f64::NAN,
            ..Thresholds::default()
        };
        let err = th.validate().unwrap_err();
        assert_eq!(err.name, "stall_min_s");
        assert!(err.to_string().contains("stall_min_s"));
        let th = Thresholds {
            cache_ram_factor: 0.5,
            ..Thresholds::default()
        };
        assert_eq!(th.validate().unwrap_err().name, "cache_ram_factor");
    }

    /// The list a user reads and a thresholds file is checked against is the struct itself:
    /// every field once, with its value.
    #[test]
    fn entries_are_the_fields() {
        let th = Thresholds::default();
        let fields = serde_json::to_value(&th).unwrap();
        let fields = fields.as_object().unwrap();
        let entries = th.entries();
        assert_eq!(entries.len(), fields.len());
        for (name, value, meaning) in entries {
            assert_eq!(fields[name].as_f64(), Some(value), "{name}");
            assert!(!meaning.is_empty(), "{name}");
        }
    }

    #[test]
    fn partial_configuration_keeps_other_defaults() {
        let th: Thresholds = serde_json::from_str(r#"{"gap_frac": 0.3}"#).unwrap();
        assert_eq!(th.gap_frac, 0.3);
        assert_eq!(th.stall_min_s, Thresholds::default().stall_min_s);
    }
}
