//! Streams that ran at once, judged against themselves alone: a stream whose latency beside
//! the others is far above its latency in a cell of its own in the same run was held back by
//! them (a database's commits beside its page reads or its checkpoint). Its syncs' latency is
//! judged where it syncs (a commit waits for its sync), its IOs' otherwise.

use crate::model::{ResultDoc, RunDoc};
use crate::units;
use iogauge_analyze::{Finding, Kind, Severity, Thresholds};

/// Fewest latencies on each side for a p99 to be read: below it the p99 is a handful of IOs.
const MIN_SAMPLES: u64 = 100;

/// The name a stream has when it runs alone: its own without `(beside …)`.
pub fn alone_name(name: &str) -> &str {
    name.split(" (beside ").next().unwrap_or(name)
}

pub(super) fn interference(doc: &RunDoc, th: &Thresholds) -> Vec<Finding> {
    let usable = |r: &ResultDoc| !r.interrupted && r.ios > 0;
    let mut out = Vec::new();
    for (i, r) in doc.results.iter().enumerate() {
        let Some(t) = r.together.as_ref().filter(|t| !t.sum && usable(r)) else {
            continue;
        };
        let Some(name) = r.name.as_deref() else {
            continue;
        };
        let base = alone_name(name);
        let alone = doc
            .results
            .iter()
            .find(|a| a.together.is_none() && usable(a) && a.name.as_deref() == Some(base));
        let Some(a) = alone else { continue };
        let (what, beside, by_itself, n) = match (&r.sync, &a.sync) {
            (Some(s), Some(sa)) => ("sync", s.lat_ns, sa.lat_ns, s.count.min(sa.count)),
            _ => ("IO", r.lat_ns, a.lat_ns, r.ios.min(a.ios)),
        };
        if n < MIN_SAMPLES || by_itself.p99 == 0 {
            continue;
        }
        let ratio = beside.p99 as f64 / by_itself.p99 as f64;
        if ratio < th.interference_ratio {
            continue;
        }
        let stream = base.split(": ").next().unwrap_or(base);
        let others: Vec<&str> = t
            .streams
            .iter()
            .map(String::as_str)
            .filter(|s| *s != stream)
            .collect();
        let mut f = Finding::new(
            Kind::Interference,
            Severity::Warning,
            format!(
                "{stream}'s {what} latency beside {} is {ratio:.1}× its latency alone: p99 {} against {} (p50 {} against {}); the other streams' IO held it back",
                others.join(" + "),
                units::latency(beside.p99 as f64),
                units::latency(by_itself.p99 as f64),
                units::latency(beside.p50 as f64),
                units::latency(by_itself.p50 as f64),
            ),
            "Give this stream a device of its own (a database's WAL apart from its data, as the PostgreSQL and MySQL studies tested), or read its latency here as what it gets beside the others.",
        )
        .with("p99_beside_ns", beside.p99 as f64)
        .with("p99_alone_ns", by_itself.p99 as f64)
        .with("p50_beside_ns", beside.p50 as f64)
        .with("p50_alone_ns", by_itself.p50 as f64)
        .with("ratio", ratio);
        f.result = Some(i);
        out.push(f);
    }
    out
}
