//! Which warnings make a cell's number mean something other than the storage's rate: the one
//! rule that sweep tables, `compare`, the report and CSV/JSON use to mark a number, so a
//! warning travels with the figure it invalidates instead of staying in `show`.
//!
//! Only warnings (and errors) count: an `info` finding describes the measurement, it does not
//! take its meaning away.

use super::RunDoc;
use iogauge_analyze::{Finding, Kind, Severity};
use serde::Serialize;

/// Why a cell's number is not the storage's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Caveat {
    /// The reads came from memory (a cache, or direct IO a layer absorbed).
    Memory,
    /// Another process did IO on the same devices.
    OtherIo,
    /// The CPU, not the device, set the pace.
    Cpu,
    /// The rate moved to another level in the middle of the cell.
    Regime,
    /// A cgroup's IO limit set the rate.
    Limit,
}

impl Caveat {
    /// Every caveat, in the order legends list them.
    pub const ALL: [Caveat; 5] = [
        Caveat::Memory,
        Caveat::OtherIo,
        Caveat::Cpu,
        Caveat::Regime,
        Caveat::Limit,
    ];

    /// The mark beside a number in a table.
    pub fn letter(self) -> char {
        match self {
            Caveat::Memory => 'm',
            Caveat::OtherIo => 'o',
            Caveat::Cpu => 'c',
            Caveat::Regime => 'r',
            Caveat::Limit => 'l',
        }
    }

    /// The legend's words for the mark.
    pub fn means(self) -> &'static str {
        match self {
            Caveat::Memory => {
                "from memory, not the device (a cache, or direct IO a layer absorbed)"
            }
            Caveat::OtherIo => "another process did IO on the same devices",
            Caveat::Cpu => "the CPU set the pace, not the device",
            Caveat::Regime => "the rate moved to another level in the middle of the cell",
            Caveat::Limit => "a cgroup's IO limit set the rate",
        }
    }

    /// The name in JSON and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Caveat::Memory => "memory",
            Caveat::OtherIo => "other-io",
            Caveat::Cpu => "cpu",
            Caveat::Regime => "regime",
            Caveat::Limit => "limit",
        }
    }

    /// What `f` says of a cell's number, if it takes its meaning away.
    pub fn of(f: &Finding) -> Option<Caveat> {
        if f.severity < Severity::Warning {
            return None;
        }
        let cpu = [
            "cpu_wait",
            "others_cpus",
            "cpu_wait_before",
            "others_cpus_before",
        ]
        .iter()
        .any(|k| f.evidence.contains_key(*k));
        match f.kind {
            Kind::Cache | Kind::Absorbed => Some(Caveat::Memory),
            Kind::OtherIo => Some(Caveat::OtherIo),
            Kind::Stall | Kind::Regime if cpu => Some(Caveat::Cpu),
            Kind::Client => Some(Caveat::Cpu),
            Kind::Regime => Some(Caveat::Regime),
            Kind::Limit => Some(Caveat::Limit),
            _ => None,
        }
    }
}

/// In JSON by its one name ([`Caveat::name`]), as CSV writes it.
impl Serialize for Caveat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The caveats on result `i` of `doc`: its own findings, the run's about it, and the run's
/// about every result (a cache found in front of the whole target).
pub fn of_result(doc: &RunDoc, i: usize) -> Vec<Caveat> {
    let own = doc
        .results
        .get(i)
        .map(|r| r.findings.as_slice())
        .unwrap_or(&[]);
    let run = doc
        .findings
        .iter()
        .filter(|f| f.result.is_none_or(|r| r == i));
    let mut out: Vec<Caveat> = own.iter().chain(run).filter_map(Caveat::of).collect();
    out.sort();
    out.dedup();
    out
}

/// The marks of `caveats` as a table prints them: " m,o", or nothing.
pub fn marks(caveats: &[Caveat]) -> String {
    match caveats.is_empty() {
        true => String::new(),
        false => {
            let letters: Vec<String> = caveats.iter().map(|c| c.letter().to_string()).collect();
            format!(" {}", letters.join(","))
        }
    }
}

/// The legend for the marks used in `used`, one line each, or none when nothing is marked.
pub fn legend(used: impl IntoIterator<Item = Caveat>) -> Vec<String> {
    let used: std::collections::BTreeSet<Caveat> = used.into_iter().collect();
    Caveat::ALL
        .iter()
        .filter(|c| used.contains(c))
        .map(|c| format!("{}: {}", c.letter(), c.means()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: Kind, severity: Severity, evidence: &[&str]) -> Finding {
        let mut f = Finding::new(kind, severity, "x".into(), "y");
        for k in evidence {
            f = f.with(k, 1.0);
        }
        f
    }

    #[test]
    fn warnings_that_take_a_numbers_meaning_away_are_caveats_and_others_are_not() {
        use Severity::*;
        let c = |k, s, e: &[&str]| Caveat::of(&finding(k, s, e));
        assert_eq!(c(Kind::Absorbed, Warning, &[]), Some(Caveat::Memory));
        assert_eq!(c(Kind::Cache, Warning, &[]), Some(Caveat::Memory));
        // Said of the measurement, not against it.
        assert_eq!(c(Kind::Cache, Info, &[]), None);
        assert_eq!(c(Kind::OtherIo, Warning, &[]), Some(Caveat::OtherIo));
        assert_eq!(c(Kind::Stall, Warning, &["cpu_wait"]), Some(Caveat::Cpu));
        // A stall of the device is the device's number, not a caveat on it.
        assert_eq!(c(Kind::Stall, Warning, &["depth"]), None);
        assert_eq!(
            c(Kind::Regime, Warning, &["others_cpus_before"]),
            Some(Caveat::Cpu)
        );
        assert_eq!(
            c(Kind::Regime, Warning, &["change_s"]),
            Some(Caveat::Regime)
        );
        assert_eq!(c(Kind::Limit, Warning, &[]), Some(Caveat::Limit));
        assert_eq!(c(Kind::Steady, Warning, &[]), None);
        assert_eq!(c(Kind::Amplification, Warning, &[]), None);
    }

    #[test]
    fn marks_and_legend_list_only_what_is_used() {
        assert_eq!(serde_json::to_value(Caveat::OtherIo).unwrap(), "other-io");
        assert_eq!(marks(&[]), "");
        assert_eq!(marks(&[Caveat::Memory, Caveat::Limit]), " m,l");
        let l = legend([Caveat::Limit, Caveat::Memory, Caveat::Limit]);
        assert_eq!(l.len(), 2);
        assert!(l[0].starts_with("m: from memory"), "{l:?}");
        assert!(l[1].starts_with("l: a cgroup's IO limit"), "{l:?}");
    }
}
