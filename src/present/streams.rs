//! Streams that ran at once, as their users ask of them: the commits' latency alone and beside
//! each other load, in one table (the studies' WAL question).

use crate::model::ResultDoc;
use crate::units;

/// Every syncing stream of a run that ran streams at once, alone and beside the others: how
/// many commits a second, and how long each write and its sync took. `None` when no syncing
/// stream ran beside another.
pub fn commits(results: &[ResultDoc]) -> Option<String> {
    let cases = crate::analysis::streams::commit_cases(results);
    if !cases.iter().any(|(_, beside, _)| beside != "alone") {
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
    for (stream, beside, r) in cases {
        let (Some(w), Some(s)) = (r.write.as_ref(), r.sync.as_ref()) else {
            continue;
        };
        table.push(vec![
            stream,
            beside,
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
