//! `db pgbench` and `db sysbench` for people: what ran where, a table of TPS per buffer share
//! (shared_buffers, innodb_buffer_pool_size) with the transaction latencies and what the server
//! and the devices did, the storage figures of the same directory, then the notes and findings.
//! One table writer (`align`) and one tail (`storage_notes_findings`) serve both tools.

use crate::db::load::{Bin, ServerPlan};
use crate::db::sysbench::SysbenchPlan;
use crate::db::PgbenchPlan;
use crate::model::{ResultDoc, RunDoc};
use crate::units;
use std::fmt::Write;
use std::time::Duration;

/// The plan of a `db pgbench --dry-run`.
pub fn plan(p: &PgbenchPlan) -> String {
    let mut s = server_head("pgbench", &p.server);
    let _ = writeln!(
        s,
        "  pgbench {} · scale {} (about {}) · {} clients, {} jobs · {} per run{}",
        p.script.name(),
        p.scale,
        units::iec(u64::from(p.scale) * crate::db::BYTES_PER_SCALE + crate::db::EMPTY_DB_BYTES),
        p.clients,
        p.jobs,
        units::duration(p.server.time),
        match p.repeat {
            1 => String::new(),
            n => format!(" × {n} repeats"),
        }
    );
    server_tail(&p.server, p.clients, p.server.time, &mut s);
    s
}

pub fn run(p: &PgbenchPlan, doc: &RunDoc) -> String {
    let mut s = String::new();
    let pg: Vec<&ResultDoc> = doc.results.iter().filter(|r| r.pg.is_some()).collect();
    let storage: Vec<&ResultDoc> = doc.results.iter().filter(|r| r.pg.is_none()).collect();
    if let Some(first) = pg.first().and_then(|r| r.pg.as_ref()) {
        let short = first.version.split(" on ").next().unwrap_or(&first.version);
        let _ = writeln!(
            s,
            "pgbench {} on {} ({}) · {short} · server run as user {}",
            first.script,
            p.server.place.describe(),
            where_(doc),
            first.user
        );
        let _ = writeln!(
            s,
            "scale {} ({} of data) · {} clients, {} jobs · {} per run{}",
            first.scale,
            units::iec(first.data_bytes),
            first.clients,
            first.jobs,
            units::duration(p.server.time),
            match p.repeat {
                1 => String::new(),
                n => format!(" × {n} repeats"),
            }
        );
        let _ = writeln!(
            s,
            "{}{}\n",
            pg_settings(&first.settings),
            first
                .wal_dir
                .as_ref()
                .map(|w| format!(" · WAL in {w}"))
                .unwrap_or_default()
        );
        s.push_str(&table(&pg));
    } else {
        s.push_str("no pgbench run finished\n");
    }
    storage_notes_findings(doc, &storage, &mut s);
    s
}

/// The PostgreSQL settings that decide how its WAL and checkpoints reach the storage, on one
/// line.
fn pg_settings(settings: &std::collections::BTreeMap<String, String>) -> String {
    let set = |k: &str| settings.get(k).map_or("?", String::as_str);
    format!(
        "fsync={} synchronous_commit={} wal_sync_method={} full_page_writes={} checkpoint_timeout={} max_wal_size={}",
        set("fsync"),
        set("synchronous_commit"),
        set("wal_sync_method"),
        set("full_page_writes"),
        set("checkpoint_timeout"),
        set("max_wal_size"),
    )
}

/// What follows the database table in both tools: the storage cells of the same directory,
/// whether the run was interrupted, the notes and the findings.
fn storage_notes_findings(doc: &RunDoc, storage: &[&ResultDoc], s: &mut String) {
    if !storage.is_empty() {
        let _ = writeln!(
            s,
            "\nThe storage of the same directory (iogauge, O_DIRECT, {}):",
            storage[0].workload.engine
        );
        for r in storage {
            let name = r.name.clone().unwrap_or_default();
            let line = match &r.sync {
                Some(sy) => format!(
                    "{} syncs/s · sync p50 {} · p99 {}",
                    units::count(sy.per_s),
                    units::latency(sy.lat_ns.p50 as f64),
                    units::latency(sy.lat_ns.p99 as f64)
                ),
                None => format!(
                    "{} IOPS · {} · p50 {} · p99 {}",
                    units::count(r.iops),
                    units::bw(r.bw_bytes),
                    units::latency_known(r.lat_ns.p50 as f64),
                    units::latency(r.lat_ns.p99 as f64)
                ),
            };
            let _ = writeln!(s, "  {name:<34} {line}");
        }
    }
    if doc.interrupted {
        match doc.results.iter().find(|r| r.interrupted) {
            Some(r) => {
                let secs = |x: f64| units::duration(std::time::Duration::from_secs_f64(x));
                let _ = writeln!(
                    s,
                    "\n(interrupted: the last result is the {} of its {} window that ran)",
                    secs(r.runtime_s),
                    secs(r.workload.time_s.unwrap_or(r.runtime_s))
                );
            }
            None => s.push_str("\n(interrupted: the results hold the runs that finished)\n"),
        }
    }
    s.push('\n');
    for n in &doc.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s.push_str(&crate::present::findings::text(&doc.findings));
}

/// TPS against shared_buffers, with what explains it: latencies, checkpoints, WAL written, and
/// what the device read and wrote.
fn table(rows: &[&ResultDoc]) -> String {
    let head = [
        "shared_buffers",
        "of data",
        "TPS",
        "txn p50",
        "txn p99",
        "txn p99.9",
        "checkpoints",
        "WAL written",
        "device read",
        "device written",
    ];
    let mut cells: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let Some(pg) = &r.pg else { continue };
        let wal = pg
            .server_io
            .get("pg_stat_wal")
            .and_then(|m| m.get("wal_bytes"))
            .map_or("-".into(), |b| units::iec(*b as u64));
        let dev = r.devices.first();
        let bytes = |b: Option<u64>| b.map_or("-".into(), units::iec);
        let tps = match r.stats.get("iops") {
            Some(st) => format!(
                "{}{}",
                units::count(r.iops),
                crate::units::plus_minus(st.mean, st.ci95, units::count)
                    .unwrap_or_else(|| format!(" ({})", crate::units::TOO_FEW))
            ),
            None => units::count(r.iops),
        };
        cells.push(vec![
            pg.settings
                .get("shared_buffers")
                .cloned()
                .unwrap_or_default(),
            match pg.buffer_ratio {
                Some(x) => crate::db::pct(x),
                None => format!(
                    "{:.1}%",
                    crate::units::parse_size(pg.settings.get("shared_buffers").map_or("", |s| s))
                        .map_or(0.0, |b| b as f64 * 100.0 / pg.data_bytes.max(1) as f64)
                ),
            },
            tps,
            units::latency_known(r.lat_ns.p50 as f64),
            units::latency(r.lat_ns.p99 as f64),
            units::latency_known(r.lat_ns.p999 as f64),
            pg.checkpoints.map_or("-".into(), |c| c.to_string()),
            wal,
            bytes(dev.and_then(|d| d.read_bytes)),
            bytes(dev.and_then(|d| d.write_bytes)),
        ]);
    }
    let shown = rows.iter().filter(|r| r.pg.is_some());
    let mut s = with_fill(cells, shown.copied().collect());
    if rows.iter().any(|r| !r.stats.is_empty()) {
        s.push_str("  (TPS ± the half-width of its 95% confidence interval over the repeats)\n");
    }
    s
}

/// The table, led by the use of the file system holding the database when it was filled to
/// levels (`--fill`); `rows` are the results its rows came from, in order.
fn with_fill(mut cells: Vec<Vec<String>>, rows: Vec<&ResultDoc>) -> String {
    if rows.iter().any(|r| r.fill.is_some()) {
        cells[0].insert(0, "file system used".into());
        for (row, r) in cells[1..].iter_mut().zip(&rows) {
            row.insert(
                0,
                r.fill
                    .map_or("as found".into(), |f| format!("{:.1}%", f.used_pct)),
            );
        }
    }
    super::table::labelled(&cells)
}

/// The plan of a `db sysbench --dry-run`: what iogauge will start, with which settings, and
/// what it measures.
pub fn sysbench_plan(p: &SysbenchPlan) -> String {
    let mut s = server_head("sysbench", &p.server);
    let _ = writeln!(
        s,
        "  sysbench {} · {} table{}, {} (about {} at ~{} bytes a row) · {} thread{} · {} per run",
        p.script.name(),
        p.tables,
        units::plural(p.tables as usize),
        p.sized_by,
        units::iec(u64::from(p.tables) * p.table_size * crate::db::sysbench::BYTES_PER_ROW),
        crate::db::sysbench::BYTES_PER_ROW,
        p.threads,
        units::plural(p.threads as usize),
        units::duration(p.server.time)
    );
    server_tail(&p.server, p.threads, p.server.time, &mut s);
    s
}

/// The plan of a `db tpcc --dry-run`.
pub fn tpcc_plan(p: &crate::db::tpcc::TpccPlan) -> String {
    let mut s = server_head("tpcc", &p.server);
    let _ = writeln!(
        s,
        "  TPC-C-derived load · {} (about {}) · {} terminal{}, one connection each · New-Order 45%, Payment 43%, Order-Status, Delivery, Stock-Level 4% each",
        p.sized_by,
        units::iec(u64::from(p.warehouses) * crate::db::tpcc::BYTES_PER_WAREHOUSE),
        p.terminals,
        units::plural(p.terminals as usize),
    );
    let _ = writeln!(
        s,
        "  each run: a ramp until the transactions per second settle (at most {}), then {} measured; the consistency conditions checked after it",
        units::duration(p.max_ramp),
        units::duration(p.server.time)
    );
    match p.cap_nopm() {
        Some(cap) => {
            let _ = writeln!(
                s,
                "  keying and think times on: the terminals can enter at most {cap:.1} new orders per minute"
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  keying and think times off: each terminal starts its next transaction at once"
            );
        }
    }
    server_tail(&p.server, p.terminals, p.max_ramp + p.server.time, &mut s);
    s
}

/// A load's plan, its first lines: the server, where it lives, its log.
fn server_head(load: &str, p: &ServerPlan) -> String {
    let mut s = format!(
        "plan: db {load} — {}, server run as user {}\n",
        p.bin.describe(),
        p.owner.name
    );
    let own = match &p.bin {
        Bin::Mariadb(_) => format!(
            "mariadbd --no-defaults --skip-networking {}",
            crate::db::mariadb::DEFAULT_SETTINGS.join(" ")
        ),
        Bin::Postgres(_) => {
            "initdb --auth=trust; listen_addresses='' log_checkpoints=on log_timezone=UTC".into()
        }
    };
    let _ = writeln!(
        s,
        "  server: a directory of its own in {}, private socket, no TCP ({own}); removed afterwards{}",
        p.place.describe(),
        if p.keep { " (kept: --keep)" } else { "" }
    );
    if let Some(d) = &p.log_dir {
        let _ = writeln!(
            s,
            "  {}: a directory of its own in {}",
            p.bin.log_name(),
            d.display()
        );
    }
    s
}

/// A load's plan, its last lines: settings, buffer shares, memory cgroup, storage cells, and
/// the time it takes beyond the load (`per_run`: one run's longest, at each buffer share).
fn server_tail(p: &ServerPlan, threads: u32, per_run: Duration, s: &mut String) {
    let per_run = per_run * p.repeat;
    if p.repeat > 1 {
        let _ = writeln!(
            s,
            "  each measurement {} times on the same loaded database, settled again before each (--repeat)",
            p.repeat
        );
    }
    if !p.settings.is_empty() {
        let set: Vec<String> = p.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "  server settings: {}", set.join(" "));
    }
    if !p.ratios.is_empty() {
        let r: Vec<String> = p.ratios.iter().map(|&r| crate::db::pct(r)).collect();
        let _ = writeln!(
            s,
            "  {}: {} of the data, one run each after a restart",
            p.bin.buffer_name(),
            r.join(", ")
        );
    }
    if let Some(l) = p.memory_limit {
        let _ = writeln!(s, "  memory cgroup: {}", units::iec(l));
    }
    if let Some(t) = p.storage {
        let c = p.bin.cells(threads);
        let _ = writeln!(
            s,
            "  storage cells: {}; {} random reads × {} threads; {} each",
            c.commit_title,
            units::iec(c.page),
            c.threads,
            units::duration(t)
        );
    }
    let runs = p.ratios.len().max(1) as u32;
    // A server restart before each run, and the two storage cells after.
    let cells = p.storage.map_or(Duration::ZERO, |t| t * 2);
    let _ = writeln!(
        s,
        "  time: the load, then at most {} ({runs} run{} of at most {} each{})",
        units::duration(per_run * runs + cells),
        units::plural(runs as usize),
        units::duration(per_run),
        match p.storage {
            Some(_) => ", then the storage cells",
            None => "",
        }
    );
}

/// A `db sysbench` run for people.
pub fn sysbench_run(p: &SysbenchPlan, doc: &RunDoc) -> String {
    let mut s = String::new();
    let db: Vec<&ResultDoc> = doc
        .results
        .iter()
        .filter(|r| r.sysbench.is_some())
        .collect();
    let storage: Vec<&ResultDoc> = doc.results.iter().filter(|r| !r.is_db()).collect();
    match db.first().and_then(|r| r.sysbench.as_deref()) {
        Some(first) => {
            let pg = first.server == "PostgreSQL";
            let version = match pg {
                true => first.version.split(" on ").next().unwrap_or(&first.version),
                false => &first.version,
            };
            let server = match version.starts_with(&first.server) {
                true => version.to_string(),
                false => format!("{} {version}", first.server),
            };
            let _ = writeln!(
                s,
                "sysbench {} on {} ({}) · {server} · server run as user {}",
                first.script,
                p.server.place.describe(),
                where_(doc),
                first.user
            );
            let _ = writeln!(
                s,
                "{} table{} × {} rows ({} of data) · {} thread{} · {} per run",
                first.tables,
                units::plural(first.tables as usize),
                first.table_size,
                units::iec(first.data_bytes),
                first.threads,
                units::plural(first.threads as usize),
                units::duration(p.server.time)
            );
            let set = |k: &str| first.settings.get(k).map_or("?", String::as_str);
            let mut line = match pg {
                true => pg_settings(&first.settings),
                false => format!(
                    "innodb_flush_method={} innodb_flush_log_at_trx_commit={} innodb_doublewrite={} innodb_log_file_size={} sync_binlog={}",
                    set("innodb_flush_method"),
                    set("innodb_flush_log_at_trx_commit"),
                    set("innodb_doublewrite"),
                    set("innodb_log_file_size")
                        .parse::<u64>()
                        .map_or_else(|_| set("innodb_log_file_size").to_string(), units::iec),
                    set("sync_binlog"),
                ),
            };
            if let Some(d) = &first.log_dir {
                let _ = write!(line, " · {} in {d}", if pg { "WAL" } else { "redo log" });
            }
            if let Some(l) = first.memory_limit_bytes {
                let _ = write!(line, " · memory cgroup {}", units::iec(l));
            }
            let _ = writeln!(s, "{line}\n");
            s.push_str(&sysbench_table(&db, pg));
            for r in &db {
                s.push_str(&crate::present::stats::load_repeats_line(r));
            }
        }
        None => s.push_str("no sysbench run finished\n"),
    }
    storage_notes_findings(doc, &storage, &mut s);
    s
}

/// The target's file system and first device, e.g. "ext4 on vda".
fn where_(doc: &RunDoc) -> String {
    doc.system
        .target
        .as_ref()
        .map(|t| {
            let fs = t.filesystem.as_deref().unwrap_or("?");
            match t.devices.first() {
                Some(d) => format!("{fs} on {}", d.name),
                None => fs.to_string(),
            }
        })
        .unwrap_or_default()
}

/// TPS against the buffer (innodb_buffer_pool_size, shared_buffers), with what explains it:
/// latencies, errors, the log written, pages flushed and syncs as the server counted them, its
/// CPU, and what the device read and wrote.
fn sysbench_table(rows: &[&ResultDoc], pg: bool) -> String {
    // The server's own counters for the log written, the pages flushed and the syncs.
    let (log, flushed, syncs): (&str, &[&str], &str) = match pg {
        true => (
            "pg_stat_wal.wal_bytes",
            &[
                "pg_stat_bgwriter.buffers_checkpoint",
                "pg_stat_bgwriter.buffers_clean",
                "pg_stat_bgwriter.buffers_backend",
                "pg_stat_checkpointer.buffers_written",
            ],
            "pg_stat_wal.wal_sync",
        ),
        false => (
            "Innodb_os_log_written",
            &["Innodb_buffer_pool_pages_flushed"],
            "Innodb_data_fsyncs",
        ),
    };
    let head = [
        if pg { "shared_buffers" } else { "buffer pool" },
        "of data",
        "TPS",
        "QPS",
        "txn p50",
        "txn p99",
        "txn p99.9",
        "errors",
        if pg { "WAL written" } else { "redo written" },
        if pg {
            "buffers written"
        } else {
            "pages flushed"
        },
        if pg { "WAL syncs" } else { "fsyncs" },
        "server CPU",
        "device read",
        "device written",
    ];
    let mut cells: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let Some(sb) = r.sysbench.as_deref() else {
            continue;
        };
        let setting = sb.settings.get(if pg {
            "shared_buffers"
        } else {
            "innodb_buffer_pool_size"
        });
        let pool = setting.and_then(|v| match pg {
            true => units::parse_size(v).ok(),
            false => v.parse::<u64>().ok(),
        });
        let counter = |k: &str| sb.status.get(k).copied();
        let summed: Vec<f64> = flushed.iter().filter_map(|k| counter(k)).collect();
        let dev = r.devices.first();
        let bytes = |b: Option<u64>| b.map_or("-".into(), units::iec);
        cells.push(vec![
            match pg {
                true => setting.cloned().unwrap_or_else(|| "?".into()),
                false => pool.map_or("?".into(), units::iec),
            },
            match sb.buffer_ratio {
                Some(x) => crate::db::pct(x),
                None => format!(
                    "{:.1}%",
                    pool.map_or(0.0, |b| b as f64 * 100.0 / sb.data_bytes.max(1) as f64)
                ),
            },
            units::count(r.iops),
            units::count(sb.qps),
            units::latency_known(r.lat_ns.p50 as f64),
            units::latency(r.lat_ns.p99 as f64),
            units::latency_known(r.lat_ns.p999 as f64),
            format!("{}/{}", sb.errors, sb.reconnects),
            bytes(counter(log).map(|b| b as u64)),
            match summed.is_empty() {
                true => "-".into(),
                false => format!("{:.0}", summed.iter().sum::<f64>()),
            },
            counter(syncs).map_or("-".into(), |n| format!("{n:.0}")),
            format!("{:.2} s", r.cpu.user_s + r.cpu.sys_s),
            bytes(dev.and_then(|d| d.read_bytes)),
            bytes(dev.and_then(|d| d.write_bytes)),
        ]);
    }
    let shown = rows.iter().filter(|r| r.sysbench.is_some());
    let mut s = with_fill(cells, shown.copied().collect());
    s.push_str("  (errors: ignored errors/reconnects as sysbench counted them; TPS: its transactions over its total time)\n");
    s
}

/// A `db tpcc` run for people: per run its new orders and transactions per minute, the
/// cross-checks beside them, each kind's latencies, the window, the CPU, the size and the
/// consistency conditions; then the storage cells and the findings.
pub fn tpcc_run(p: &crate::db::tpcc::TpccPlan, doc: &RunDoc) -> String {
    let mut s = String::new();
    let db: Vec<&ResultDoc> = doc.results.iter().filter(|r| r.tpcc.is_some()).collect();
    let storage: Vec<&ResultDoc> = doc.results.iter().filter(|r| !r.is_db()).collect();
    let Some(first) = db.first().and_then(|r| r.tpcc.as_deref()) else {
        s.push_str("no TPC-C-derived run finished\n");
        storage_notes_findings(doc, &storage, &mut s);
        return s;
    };
    let version = first.version.split(" on ").next().unwrap_or(&first.version);
    let server = match version.starts_with(&first.server) {
        true => version.to_string(),
        false => format!("{} {version}", first.server),
    };
    let _ = writeln!(
        s,
        "TPC-C-derived load on {} ({}) · {server} · server run as user {}",
        p.server.place.describe(),
        where_(doc),
        first.user
    );
    let _ = writeln!(
        s,
        "{} warehouse{} ({} loaded) · {} terminal{} · keying and think times {} · {} measured per run\n",
        first.warehouses,
        units::plural(first.warehouses as usize),
        units::iec(first.data_bytes),
        first.terminals,
        units::plural(first.terminals as usize),
        if first.keying_times { "on" } else { "off" },
        units::duration(p.server.time)
    );
    for r in &db {
        let Some(t) = r.tpcc.as_deref() else { continue };
        let _ = writeln!(s, "{}", r.name.as_deref().unwrap_or("TPC-C-derived"));
        let _ = writeln!(
            s,
            "  {} new orders/min (NOPM, from the districts' order ids; the terminals counted {}) · {} transactions/min (TPM, {}; the terminals counted {})",
            units::count(t.nopm),
            units::count(t.driver_nopm),
            units::count(t.tpm),
            t.tpm_source,
            units::count(t.driver_tpm)
        );
        s.push_str(&crate::present::stats::load_repeats_line(r));
        let _ = writeln!(
            s,
            "  window: {} from {} after the start ({}) · {} New-Orders rolled back on purpose · {} retried after a conflict",
            units::duration(Duration::from_secs_f64(t.window_s)),
            units::duration(Duration::from_secs_f64(t.ramp_s)),
            if t.settled {
                "the rate had settled"
            } else {
                "the ramp's limit: the rate had not settled, and the window holds part of the ramp"
            },
            t.rollbacks,
            t.retries
        );
        if let Some(cap) = t.cap_nopm {
            let at_cap = t.nopm >= 0.9 * cap;
            let _ = writeln!(
                s,
                "  keying and think times: at most {cap:.1} new orders/min from these terminals{}",
                if at_cap {
                    " — this run is at that cap: the terminals, not the storage, set its pace"
                } else {
                    ""
                }
            );
        }
        let mut cells = vec![[
            "transaction",
            "count",
            "share",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()];
        for k in &t.kinds {
            cells.push(vec![
                k.name.clone(),
                units::count(k.count as f64),
                format!("{:.1}%", k.share_pct),
                units::latency(k.p50_us * 1e3),
                units::latency(k.p90_us * 1e3),
                units::latency(k.p99_us * 1e3),
                units::latency(k.p999_us * 1e3),
                units::latency(k.max_us * 1e3),
            ]);
        }
        s.push_str(&super::table::labelled(&cells));
        let share = |cpu: f64| 100.0 * cpu / (t.window_s.max(1e-9) * f64::from(t.cpus.max(1)));
        let _ = writeln!(
            s,
            "  CPU: driver {:.1} s ({:.0} µs a transaction, {:.0}% of this machine's {} CPUs) · server {:.1} s ({:.0}%){}",
            t.driver_cpu_s,
            t.driver_cpu_us_per_txn,
            share(t.driver_cpu_s),
            t.cpus,
            t.server_cpu_s,
            share(t.server_cpu_s),
            match t.statements_per_txn {
                Some(n) => format!(" · {n:.2} statements a transaction, as the server counted them"),
                None => String::new(),
            }
        );
        let _ = writeln!(
            s,
            "  database: {} at the window's start, {} at its end · device read {}, written {}",
            units::iec(t.db_bytes_start),
            units::iec(t.db_bytes_end),
            units::iec(r.devices.first().and_then(|d| d.read_bytes).unwrap_or(0)),
            units::iec(r.devices.first().and_then(|d| d.write_bytes).unwrap_or(0))
        );
        s.push_str(&tpcc_checks(&t.checks));
        s.push('\n');
    }
    storage_notes_findings(doc, &storage, &mut s);
    s
}

/// The consistency conditions, a line each: held in how many places, or where they failed.
pub fn tpcc_checks(checks: &[crate::model::TpccCheck]) -> String {
    let mut s = String::new();
    for c in checks {
        let _ = writeln!(
            s,
            "  consistency {} ({}): {}",
            c.clause,
            c.condition,
            match c.failures.first() {
                None => format!(
                    "held in {} place{}",
                    c.checked,
                    units::plural(c.checked as usize)
                ),
                Some(f) => format!("FAILED in {} of {}: {f}", c.failures.len(), c.checked),
            }
        );
    }
    s
}
