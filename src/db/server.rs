//! What the server says about itself: the settings that decide how its IO reaches the storage,
//! and its own IO counters (pg_stat_bgwriter, pg_stat_wal from 14, pg_stat_checkpointer from
//! 17, pg_stat_io from 16) read before and after a run, kept as the differences.

use super::cluster::Cluster;
use anyhow::Result;
use std::collections::BTreeMap;

/// Settings recorded with every run: the ones that decide when and how data and WAL are
/// written and synced, and how much the server caches.
pub const RECORDED: [&str; 14] = [
    "shared_buffers",
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "full_page_writes",
    "wal_buffers",
    "wal_level",
    "checkpoint_timeout",
    "checkpoint_completion_target",
    "max_wal_size",
    "min_wal_size",
    "effective_io_concurrency",
    "data_checksums",
    "huge_pages",
];

/// The version as the server reports it, e.g. "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on
/// x86_64-pc-linux-gnu, …", and as a number (150018).
pub fn version(c: &Cluster) -> Result<(String, u32)> {
    let v = c.query("SELECT version() || '|' || current_setting('server_version_num')")?;
    let (text, num) = v.rsplit_once('|').unwrap_or((&v, "0"));
    Ok((text.to_string(), num.trim().parse().unwrap_or(0)))
}

/// The recorded settings and any others named, with their units as the server shows them.
pub fn settings(c: &Cluster, also: &[String]) -> Result<BTreeMap<String, String>> {
    let names: Vec<String> = RECORDED
        .iter()
        .map(|s| s.to_string())
        .chain(also.iter().cloned())
        .map(|n| format!("'{}'", n.to_ascii_lowercase().replace('\'', "''")))
        .collect();
    let rows = c.query(&format!(
        "SELECT name || '|' || current_setting(name) FROM pg_settings WHERE name IN ({})",
        names.join(",")
    ))?;
    Ok(rows
        .lines()
        .filter_map(|l| l.split_once('|'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The size of the database pgbench fills, in bytes.
pub fn database_bytes(c: &Cluster) -> Result<u64> {
    let v = c.query("SELECT pg_database_size('postgres')")?;
    v.trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("pg_database_size gave '{v}'"))
}

/// Each view's numeric counters at one moment.
pub type Snapshot = BTreeMap<String, BTreeMap<String, f64>>;

/// The server's IO counters now, from the views this version has.
pub fn snapshot(c: &Cluster, version_num: u32) -> Result<Snapshot> {
    let mut views: Vec<(&str, &str)> = vec![("pg_stat_bgwriter", "SELECT * FROM pg_stat_bgwriter")];
    if version_num >= 140000 {
        views.push(("pg_stat_wal", "SELECT * FROM pg_stat_wal"));
    }
    if version_num >= 170000 {
        views.push(("pg_stat_checkpointer", "SELECT * FROM pg_stat_checkpointer"));
    }
    if version_num >= 160000 {
        // Summed over backend types, objects and contexts: what the server read, wrote,
        // extended and synced of its relations.
        views.push((
            "pg_stat_io",
            "SELECT sum(reads) AS reads, sum(writes) AS writes, sum(extends) AS extends, \
             sum(fsyncs) AS fsyncs, sum(hits) AS hits, sum(evictions) AS evictions FROM pg_stat_io",
        ));
    }
    let mut out = Snapshot::new();
    for (name, sql) in views {
        let row = c.query(&format!("SELECT row_to_json(t) FROM ({sql}) t"))?;
        out.insert(name.to_string(), numbers(&row));
    }
    Ok(out)
}

/// The server's flush counters now, for the timeline: checkpoints and the pages they wrote,
/// the background writer's and the backends' own writes, and the WAL written and synced; one
/// short query. Empty when the server could not be asked (the timeline shows a gap).
pub fn flush_counters(c: &Cluster, version_num: u32) -> BTreeMap<String, f64> {
    let sql = match version_num {
        // 17 moved the checkpoint counters to pg_stat_checkpointer and dropped buffers_backend.
        v if v >= 170000 => {
            "SELECT c.num_timed AS checkpoints_timed, c.num_requested AS checkpoints_req, \
             c.buffers_written AS buffers_checkpoint, b.buffers_clean, w.wal_bytes, w.wal_write, \
             w.wal_sync FROM pg_stat_checkpointer c, pg_stat_bgwriter b, pg_stat_wal w"
        }
        v if v >= 140000 => {
            "SELECT b.checkpoints_timed, b.checkpoints_req, b.buffers_checkpoint, \
             b.buffers_clean, b.buffers_backend, w.wal_bytes, w.wal_write, w.wal_sync \
             FROM pg_stat_bgwriter b, pg_stat_wal w"
        }
        _ => {
            "SELECT checkpoints_timed, checkpoints_req, buffers_checkpoint, buffers_clean, \
             buffers_backend FROM pg_stat_bgwriter"
        }
    };
    c.query(&format!("SELECT row_to_json(t) FROM ({sql}) t"))
        .map(|row| numbers(&row))
        .unwrap_or_default()
}

/// Where [`flush_counters`] reads from.
pub fn flush_source(version_num: u32) -> &'static str {
    match version_num {
        v if v >= 170000 => "pg_stat_checkpointer, pg_stat_bgwriter, pg_stat_wal",
        v if v >= 140000 => "pg_stat_bgwriter, pg_stat_wal",
        _ => "pg_stat_bgwriter",
    }
}

/// The numeric fields of one JSON row.
fn numbers(json: &str) -> BTreeMap<String, f64> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    v.as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| {
                    let n = v
                        .as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))?;
                    Some((k.clone(), n))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `after - before`, counter by counter.
pub fn delta(before: &Snapshot, after: &Snapshot) -> Snapshot {
    after
        .iter()
        .map(|(view, counters)| {
            let base = before.get(view);
            let d = counters
                .iter()
                .map(|(k, v)| {
                    let b = base.and_then(|m| m.get(k)).copied().unwrap_or(0.0);
                    (k.clone(), v - b)
                })
                .collect();
            (view.clone(), d)
        })
        .collect()
}

/// Checkpoints in a delta: pg_stat_checkpointer's from 17, pg_stat_bgwriter's before.
pub fn checkpoints(d: &Snapshot) -> Option<u64> {
    let sum = |view: &str, a: &str, b: &str| {
        let m = d.get(view)?;
        Some((m.get(a)? + m.get(b)?) as u64)
    };
    sum("pg_stat_checkpointer", "num_timed", "num_requested")
        .or_else(|| sum("pg_stat_bgwriter", "checkpoints_timed", "checkpoints_req"))
}

/// CPU seconds (user, system) the server's processes have used so far, from /proc: the
/// postmaster, its children alive (backends, checkpointer, writers) and those it has reaped
/// (their time is added to its cutime/cstime). Taken before and after a run, the difference is
/// what the server spent on it, reaped backends included. `None` when the server's pid or its
/// /proc entries cannot be read.
pub fn cpu(c: &Cluster) -> Option<(f64, f64)> {
    super::process::cpu_of(c.postmaster_pid()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_become_differences() {
        let row = |j: &str| {
            let mut s = Snapshot::new();
            s.insert("pg_stat_bgwriter".into(), numbers(j));
            s
        };
        let a = row(
            r#"{"checkpoints_timed":1,"checkpoints_req":2,"buffers_alloc":10,"stats_reset":"2026-11-22T14:04:41+00:00"}"#,
        );
        let b = row(
            r#"{"checkpoints_timed":1,"checkpoints_req":5,"buffers_alloc":"25","stats_reset":"x"}"#,
        );
        let d = delta(&a, &b);
        assert_eq!(d["pg_stat_bgwriter"]["buffers_alloc"], 15.0);
        assert!(!d["pg_stat_bgwriter"].contains_key("stats_reset"));
        assert_eq!(checkpoints(&d), Some(3));
    }
}
