//! Streams that ran at once, as their users ask of them: the commits' latency alone and beside
//! each other load, in one table (the studies' WAL question).

use crate::model::ResultDoc;
use crate::units;

/// Every syncing stream of a run that ran streams at once, alone and beside the others: how
/// many commits a second, and how long each write and its sync took. `None` when no syncing
/// stream ran beside another.
pub fn commits(results: &[ResultDoc]) -> Option<String> {
    let syncing = |r: &&ResultDoc| r.sync.is_some() && !r.together.as_ref().is_some_and(|t| t.sum);
    let rows: Vec<&ResultDoc> = results.iter().filter(syncing).collect();
    if !rows.iter().any(|r| r.together.is_some()) {
        return None;
    }
    let mut table = vec![[
        "Commits",
        "beside",
        "commits/s",
        "write p50",
        "write p99",
        "sync p50",
        "sync p99",
    ]
    .map(String::from)
    .to_vec()];
    for r in rows {
        let name = r.name.as_deref().unwrap_or_default();
        let stream = crate::analysis::streams::alone_name(name);
        let beside = name
            .strip_prefix(stream)
            .and_then(|s| s.strip_prefix(" (beside "))
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or("alone");
        let (Some(w), Some(s)) = (r.write.as_ref(), r.sync.as_ref()) else {
            continue;
        };
        table.push(vec![
            stream.split(": ").next().unwrap_or(stream).to_string(),
            beside.to_string(),
            units::count(s.per_s),
            units::latency(w.lat_ns.p50 as f64),
            units::latency(w.lat_ns.p99 as f64),
            units::latency(s.lat_ns.p50 as f64),
            units::latency(s.lat_ns.p99 as f64),
        ]);
    }
    let right = [false, false, true, true, true, true, true];
    let mut out = String::new();
    for l in super::table::table(&table, &right).lines() {
        out.push_str("  ");
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
    Some(out)
}
