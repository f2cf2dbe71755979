//! What rank 0 of a run under MPI prints and stores: the hosts side by side, the aggregate, the
//! cluster's p99 over time, then the notes and findings, as every run ends.

use crate::model::RunDoc;
use crate::units;
use anyhow::Result;
use std::fmt::Write;

/// Prints the run (JSON with `json`).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn emit(doc: &RunDoc, json: bool) -> Result<()> {
    let text = match json {
        true => serde_json::to_string_pretty(doc)? + "\n",
        false => text(doc),
    };
    Ok(crate::ui::out(&text)?)
}

pub fn text(doc: &RunDoc) -> String {
    let mut s = String::new();
    let Some(agg) = doc.results.first() else {
        return s;
    };
    let fleet = doc.fleet.as_ref();
    let _ = writeln!(s, "{}", crate::present::summary::workload_line(agg));
    let _ = writeln!(
        s,
        "{} ranks · stonewall: {}\n",
        doc.results.len().saturating_sub(1),
        fleet.map_or("time", |f| f.stonewall.as_str())
    );
    let rows: Vec<[String; 7]> = doc
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let host = fleet.and_then(|f| i.checked_sub(1).and_then(|k| f.hosts.get(k)));
            [
                r.name.clone().unwrap_or_default(),
                host.map_or_else(|| r.target.path.clone(), |h| h.target.clone()),
                format!("{} IOPS", units::count(r.iops)),
                units::bw(r.bw_bytes),
                format!("p50 {}", units::latency(r.lat_ns.p50 as f64)),
                format!("p99 {}", units::latency(r.lat_ns.p99 as f64)),
                host.filter(|h| h.rank > 0).map_or_else(String::new, |h| {
                    format!(
                        "clock {:+.3} ms ±{}",
                        h.clock_offset_ns as f64 / 1e6,
                        units::latency(h.rtt_ns as f64 / 2.0)
                    )
                }),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (v, w))| match c {
                0 | 1 | 6 => format!("{v:<w$}"),
                _ => format!("{v:>w$}"),
            })
            .collect();
        let _ = writeln!(s, "  {}", cells.join("  ").trim_end());
        if i == 0 {
            let _ = writeln!(s);
        }
    }
    if let Some(f) = fleet {
        let _ = writeln!(
            s,
            "\n  common window {:.2}–{:.2} s · first done at {:.2} s, last at {:.2} s",
            f.window_s[0], f.window_s[1], f.first_done_s, f.last_done_s
        );
    }
    if !agg.timeseries.is_empty() {
        let step = agg.workload.interval_s;
        let p99: Vec<String> = agg
            .timeseries
            .iter()
            .map(|t| units::latency(t.lat_p99_ns as f64))
            .collect();
        let _ = writeln!(
            s,
            "  cluster p99 over time (per {}): {}",
            units::duration(std::time::Duration::from_secs_f64(step)),
            p99.join(" · ")
        );
    }
    for n in &doc.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s.push_str(&crate::present::findings::text(&doc.findings));
    s
}
