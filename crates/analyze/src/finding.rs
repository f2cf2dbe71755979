//! The finding value every check returns, and the metric a series or matrix holds.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Declares the finding kinds once: each variant with its name (in JSON, in `--thresholds`
/// files, in the docs), and from that the enum, its serde names, [`Kind::ALL`] and
/// [`Kind::as_str`].
macro_rules! kinds {
    ($($(#[doc = $doc:literal])* $kind:ident => $name:literal,)+) => {
        /// What kind of problem a finding names; serialized by its name (`"stall"`,
        /// `"other-io"`, …).
        #[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($(#[doc = $doc])* #[serde(rename = $name)] $kind,)+
        }

        impl Kind {
            /// Every kind, for documentation checks.
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Kind::$kind => $name,)+
                }
            }
        }
    };
}

kinds! {
    Stall => "stall",
    Ceiling => "ceiling",
    Gap => "gap",
    Outlier => "outlier",
    Cache => "cache",
    Sparse => "sparse",
    Steady => "steady",
    /// The device saw more, smaller requests than were issued.
    Split => "split",
    /// The device saw fewer, larger requests than were issued.
    Merged => "merged",
    /// Direct IO that never reached a device below the target.
    Absorbed => "absorbed",
    /// The devices counted markedly more IO than was issued, and other processes did it.
    OtherIo => "other-io",
    /// The devices counted markedly more IO than was issued, and no other process did it: the
    /// kernel wrote (or read) it on iogauge's behalf — journal, log tree, metadata,
    /// copy-on-write. What each byte (or sync) costs the device.
    Amplification => "amplification",
    /// The device's queue held far fewer IOs than were kept in flight.
    Queue => "queue",
    /// The members of a stripe (md, dm, LVM) did unequal shares of the work.
    Imbalance => "imbalance",
    /// A parity array (RAID5/6) read from its members while iogauge only wrote.
    ReadModifyWrite => "read-modify-write",
    /// One member of an array much slower than the others.
    SlowMember => "slow-member",
    /// A rate-controlled run fell short of its rate.
    Rate => "rate",
    /// `--verify` read back something other than what was written.
    Integrity => "integrity",
    /// The rate moved to another level and stayed there (burst credits, an SLC cache).
    Regime => "regime",
    /// One host of a run on many (MPI) far from the others.
    Straggler => "straggler",
    /// A database's transactions dipped while it flushed its pages onto a saturated device.
    Checkpoint => "checkpoint",
    /// A fixed amount of data moved in less time than numbers can be quoted from.
    Short => "short",
    /// A device or a file system placed off the array's (or the disk's) natural boundaries.
    Misaligned => "misaligned",
    /// Across member counts of an array, the count after which one more member adds little.
    Scaling => "scaling",
    /// An array rebuilt a member while the cells ran: how long, at what rate, and which cells
    /// it ran under (their members' IO beyond iogauge's is the rebuild's).
    Rebuild => "rebuild",
    /// A device of the stack ran at a cgroup's IO limit: the result measured the limit.
    Limit => "limit",
    /// The benchmark's own client took so much of the machine's CPU that the rate measures the
    /// client beside the server.
    Client => "client",
    /// A stream's latency beside other streams far above its latency alone: the others'
    /// IO (a database's page reads or checkpoint beside its WAL) held it back.
    Interference => "interference",
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `info` describes the measurement; `warning` says it may not mean what it seems to; `error`
/// says the storage did something wrong (the run fails).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One named problem with the numbers behind it and what to try next.
///
/// `evidence` keys carry their unit as a suffix (`start_s`, `bs_bytes`, `median_iops`); keys
/// without one are ratios or indices. Values are always finite, so the map survives JSON.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Finding {
    pub kind: Kind,
    pub severity: Severity,
    /// One line, with units.
    pub summary: String,
    pub evidence: BTreeMap<String, f64>,
    /// What to try next.
    pub advice: String,
    /// Index of the result the finding belongs to; the checks leave it `None` because only the
    /// caller knows which result it passed in.
    pub result: Option<usize>,
    /// For a finding about one measure of repeats (an outlier): which (`iops`, `lat_p99_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

impl Finding {
    pub fn new(kind: Kind, severity: Severity, summary: String, advice: impl Into<String>) -> Self {
        Finding {
            kind,
            severity,
            summary,
            evidence: BTreeMap::new(),
            advice: advice.into(),
            result: None,
            metric: None,
        }
    }

    /// Adds one number to the evidence; a non-finite value is left out rather than stored,
    /// because JSON has no NaN and a reader cannot act on one.
    pub fn with(mut self, key: &str, value: f64) -> Self {
        if value.is_finite() {
            self.evidence.insert(key.to_owned(), value);
        }
        self
    }

    /// Ties the finding to the result at `index` in the caller's list.
    pub fn for_result(mut self, index: usize) -> Self {
        self.result = Some(index);
        self
    }
}

/// Which measure a series or matrix holds; decides units in summaries and, for [`crate::gaps`],
/// how an edge cell's expectation is drawn from its one neighbour.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// IOs per second.
    Iops,
    /// Bytes per second.
    Bandwidth,
}

impl Metric {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Bandwidth => "bandwidth",
        }
    }

    pub(crate) fn format(self, value: f64) -> String {
        match self {
            Metric::Iops => format!("{} IOPS", crate::fmt::count(value)),
            Metric::Bandwidth => crate::fmt::rate(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_severities_serialize_lowercase() {
        let f = Finding::new(Kind::Stall, Severity::Warning, "s".into(), "a").for_result(3);
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["kind"], "stall");
        assert_eq!(json["severity"], "warning");
        assert_eq!(json["result"], 3);
        for kind in [
            Kind::Stall,
            Kind::Ceiling,
            Kind::Gap,
            Kind::Outlier,
            Kind::Cache,
            Kind::Sparse,
            Kind::Steady,
        ] {
            let text = serde_json::to_string(&kind).unwrap();
            assert_eq!(text, format!("\"{}\"", kind.as_str()));
            assert_eq!(text, text.to_lowercase());
        }
        assert_eq!(serde_json::to_string(&Severity::Info).unwrap(), "\"info\"");
    }

    #[test]
    fn finding_round_trips_through_json() {
        let f = Finding::new(Kind::Gap, Severity::Info, "x".into(), "y")
            .with("bs_bytes", 65536.0)
            .with("ratio", 0.25);
        let back: Finding = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn non_finite_evidence_is_left_out() {
        let f = Finding::new(Kind::Gap, Severity::Info, "x".into(), "y")
            .with("nan", f64::NAN)
            .with("inf", f64::INFINITY)
            .with("ok", 1.0);
        assert_eq!(f.evidence.keys().collect::<Vec<_>>(), vec!["ok"]);
    }
}
