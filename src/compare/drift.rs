//! A sweep's drift: the setting it started with, measured again at its end, against its first
//! measurement. When they differ significantly the device changed while the sweep ran, and its
//! runs do not compare; the sweep's table, `compare` and `report` say so by this one rule.

use crate::model::ResultDoc;
use crate::store::Stored;
use iogauge_stats::{Verdict, DEFAULT_ALPHA};

/// A sweep's last setting: the one it started with, measured again at its end.
pub const AGAIN: &str = "as found, again";

/// A result's IOPS per repeat (one value without repeats): from its statistics, else from its
/// repeats.
pub fn iops_of(r: &ResultDoc) -> Vec<f64> {
    match r.stats.get("iops") {
        Some(s) if !s.values.is_empty() => s.values.clone(),
        _ if r.repeats.len() > 1 => r.repeats.iter().map(|x| x.iops).collect(),
        _ => vec![r.iops],
    }
}

/// The cells whose IOPS differ significantly between the same setting measured at a sweep's
/// start and at its end: the device changed while the sweep ran, so its columns do not
/// compare. One rule for the sweep's own table and for `compare`/`report sweep:ID`.
pub fn drift(first: &[ResultDoc], last: &[ResultDoc]) -> Vec<String> {
    first
        .iter()
        .zip(last)
        .filter_map(|(a, b)| {
            let c = iogauge_stats::verdict(
                &iops_of(a),
                &iops_of(b),
                true,
                DEFAULT_ALPHA,
                iogauge_stats::DEFAULT_NOISE,
            );
            matches!(c.verdict, Verdict::Faster | Verdict::Slower).then(|| {
                format!(
                    "{}: {} IOPS at the start, {} at the end",
                    a.display_name(),
                    crate::units::count(a.iops),
                    crate::units::count(b.iops)
                )
            })
        })
        .collect()
}

/// Among `runs`, a sweep's baseline measured again at its end (`AGAIN`) against its first run:
/// the warning when they differ, so that `compare` and `report` of a sweep's runs say what the
/// sweep's own table says.
pub fn sweep_drift(runs: &[&Stored]) -> Option<String> {
    let setting = |r: &Stored| r.doc.params.get("sweep.setting").cloned();
    let again = runs.iter().find(|r| setting(r).as_deref() == Some(AGAIN))?;
    let sweep = again.doc.params.get("sweep");
    let first = runs
        .iter()
        .filter(|r| r.doc.params.get("sweep") == sweep && r.id != again.id)
        .min_by_key(|r| r.id)?;
    let drift = drift(&first.doc.results, &again.doc.results);
    (!drift.is_empty()).then(|| {
        format!(
            "warning: the settings as found measured differently at the start (run {}) and at the end (run {}) of sweep {}, so the device changed while it ran and these runs do not compare: {}",
            first.id,
            again.id,
            sweep.map_or("", String::as_str),
            drift.join("; ")
        )
    })
}
