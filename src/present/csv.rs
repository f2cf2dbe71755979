//! A run as CSV (RFC 4180): one row per result, flat columns, the unit in every column name
//! (`bw_MiB_s`, `lat_p99_us`) so a spreadsheet needs no legend. Numbers are written in full
//! precision; an absent value (no writes, no syncs, no repeats) is an empty field.

use crate::model::{OpDoc, ResultDoc, RunDoc};

const MIB: f64 = 1024.0 * 1024.0;

/// The header and one line per result, each ending in CRLF as RFC 4180 asks.
pub fn run(doc: &RunDoc) -> String {
    runs([doc])
}

/// Several runs under one header: the columns are the same for every run, whatever its
/// parameters (they share one `params` column, `key=value` pairs joined by `;`), so exports
/// line up and concatenate.
pub fn runs<'a>(docs: impl IntoIterator<Item = &'a RunDoc>) -> String {
    let mut header: Vec<String> = ["run_id", "label", "started_at", "suite", "params"]
        .map(String::from)
        .to_vec();
    header.extend(RESULT_COLUMNS.iter().map(|c| c.to_string()));
    header.push("caveats".to_string());
    let mut out = line(&header);
    for doc in docs {
        let params: Vec<String> = doc.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for (i, r) in doc.results.iter().enumerate() {
            let mut row = vec![
                doc.run_id.clone(),
                doc.label.clone().unwrap_or_default(),
                doc.started_at.clone(),
                doc.suite.clone().unwrap_or_default(),
                params.join(";"),
            ];
            row.extend(result_fields(i, r));
            // What takes the number's meaning away, beside it (`model::caveats`).
            let caveats: Vec<&str> = crate::model::caveats::of_result(doc, i)
                .iter()
                .map(|c| c.name())
                .collect();
            row.push(caveats.join(";"));
            out.push_str(&line(&row));
        }
    }
    out
}

const RESULT_COLUMNS: &[&str] = &[
    "result",
    "name",
    "rw",
    "bs_bytes",
    "threads",
    "iodepth",
    "mix_read_pct",
    "engine",
    "direct",
    "sync",
    "sync_every",
    "odsync",
    "target",
    "runtime_s",
    "ios",
    "bytes",
    "iops",
    // A database load's transactions per second (its row has no IOs, blocks or bandwidth).
    "tps",
    "bw_MiB_s",
    "bw_MB_s",
    "lat_min_us",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p90_us",
    "lat_p99_us",
    "lat_p99_9_us",
    "lat_p99_99_us",
    "lat_max_us",
    "read_iops",
    "read_bw_MiB_s",
    "read_lat_p99_us",
    "write_iops",
    "write_bw_MiB_s",
    "write_lat_p99_us",
    "syncs_per_s",
    "sync_lat_p99_us",
    "cpu_user_s",
    "cpu_sys_s",
    "cpu_per_io_us",
    "repeats",
    "iops_mean",
    "iops_ci95_lo",
    "iops_ci95_hi",
    "iops_cv",
    "interrupted",
    // What the top device of the stack saw (empty when unknown).
    "dev_name",
    "dev_reads",
    "dev_writes",
    "dev_avg_read_request_bytes",
    "dev_avg_write_request_bytes",
    "dev_avg_queue_depth",
    "dev_util",
];

fn result_fields(i: usize, r: &ResultDoc) -> Vec<String> {
    let w = &r.workload;
    let dev = r.devices.first();
    let us = |ns: f64| num(ns / 1e3);
    let opt = |v: Option<String>| v.unwrap_or_default();
    let op = |o: &Option<OpDoc>| -> [String; 3] {
        match o {
            Some(o) => [num(o.iops), num(o.bw_bytes / MIB), us(o.lat_ns.p99 as f64)],
            None => Default::default(),
        }
    };
    let [read_iops, read_bw, read_p99] = op(&r.read);
    let [write_iops, write_bw, write_p99] = op(&r.write);
    let iops_stats = r.stats.get("iops");
    let l = &r.lat_ns;
    // A database load counts transactions: the IO columns stay empty rather than read as IOs.
    let db = r.is_db();
    let io = |v: String| if db { String::new() } else { v };
    let sync_name = w
        .sync
        .and_then(|k| serde_json::to_value(k).ok())
        .and_then(|v| v.as_str().map(String::from));
    vec![
        (i + 1).to_string(),
        r.name.clone().unwrap_or_default(),
        io(w.rw.name().to_string()),
        io(w.bs.to_string()),
        w.threads.to_string(),
        io(w.iodepth.to_string()),
        io(w.mix_read_pct.to_string()),
        w.engine.clone(),
        w.direct.to_string(),
        opt(sync_name),
        opt(w.sync_every.map(|n| n.to_string())),
        w.odsync.to_string(),
        r.target.path.clone(),
        num(r.runtime_s),
        r.ios.to_string(),
        io(r.bytes.to_string()),
        io(num(r.iops)),
        opt(db.then(|| num(r.iops))),
        io(num(r.bw_bytes / MIB)),
        io(num(r.bw_bytes / 1e6)),
        us(l.min as f64),
        us(l.mean),
        us(l.p50 as f64),
        us(l.p90 as f64),
        us(l.p99 as f64),
        us(l.p999 as f64),
        us(l.p9999 as f64),
        us(l.max as f64),
        read_iops,
        read_bw,
        read_p99,
        write_iops,
        write_bw,
        write_p99,
        opt(r.sync.as_ref().map(|s| num(s.per_s))),
        opt(r.sync.as_ref().map(|s| us(s.lat_ns.p99 as f64))),
        num(r.cpu.user_s),
        num(r.cpu.sys_s),
        num(r.cpu.per_io_us),
        if r.repeats.is_empty() {
            String::new()
        } else {
            r.repeats.len().to_string()
        },
        opt(iops_stats.map(|s| num(s.mean))),
        opt(iops_stats.map(|s| num(s.ci95[0]))),
        opt(iops_stats.map(|s| num(s.ci95[1]))),
        opt(iops_stats.map(|s| num(s.cv))),
        r.interrupted.to_string(),
        opt(dev.map(|d| d.name.clone())),
        opt(dev.and_then(|d| d.reads).map(|v| v.to_string())),
        opt(dev.and_then(|d| d.writes).map(|v| v.to_string())),
        opt(dev.and_then(|d| d.avg_read_request_bytes).map(num)),
        opt(dev.and_then(|d| d.avg_write_request_bytes).map(num)),
        opt(dev.and_then(|d| d.avg_queue_depth).map(num)),
        opt(dev.and_then(|d| d.util).map(num)),
    ]
}

/// Shortest text that reads back as the same f64.
fn num(v: f64) -> String {
    format!("{v}")
}

fn line(fields: &[String]) -> String {
    let mut s = fields
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(",");
    s.push_str("\r\n");
    s
}

/// Quotes a field holding a comma, quote or line break, doubling inner quotes (RFC 4180 §2).
fn field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_per_rfc_4180() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(line(&["a".into(), "b,c".into()]), "a,\"b,c\"\r\n");
    }

    #[test]
    fn every_result_row_has_a_field_per_column() {
        let r: ResultDoc =
            crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1000.0);
        assert_eq!(result_fields(0, &r).len(), RESULT_COLUMNS.len());
    }
}
