//! A database run's documents: the server behind a result (pgbench on PostgreSQL, sysbench on
//! MariaDB or PostgreSQL) and the database and its storage second by second.

use super::ResultDoc;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A database run on one time axis: transactions, the server's flushing and what the devices
/// under its data and WAL did, per step (one second unless `--interval` says otherwise), and
/// the server's checkpoints (or InnoDB's flush bursts) as intervals on the same axis. Seconds
/// count from the first transaction's start, as the result's `timeseries` does.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimelineDoc {
    /// Time zero (the first transaction's start) in seconds since the Unix epoch, to hold the
    /// timeline against other logs of the machine.
    pub started_unix_s: f64,
    pub step_s: f64,
    /// The devices of each row's `devices`, in order: the stacks under the data and WAL
    /// directories.
    pub devices: Vec<String>,
    /// Where the server's numbers come from, e.g. "pg_stat_bgwriter, pg_stat_wal".
    pub server_source: String,
    pub rows: Vec<TimelineRow>,
    /// PostgreSQL: checkpoints from the server log (`log_checkpoints`); InnoDB: seconds of
    /// page flushing well above the run's usual rate.
    pub flushes: Vec<FlushDoc>,
}

/// One step of a [`TimelineDoc`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimelineRow {
    /// End of the step.
    pub t_s: f64,
    pub tps: f64,
    pub lat_p99_ns: u64,
    /// The server's counters as rates per second (`_per_s`) and its levels as they were
    /// (e.g. `Innodb_checkpoint_age`); missing when a sample could not be taken.
    pub server: BTreeMap<String, f64>,
    /// One entry per device of [`TimelineDoc::devices`]; `None` when unread.
    pub devices: Vec<Option<DeviceStep>>,
}

/// What one device did in one step (from /sys/class/block/DEV/stat).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceStep {
    pub read_bytes_s: f64,
    pub write_bytes_s: f64,
    /// Requests completed per second, reads and writes.
    pub iops: f64,
    /// Share of the step the device was busy (io_ticks), 0–1.
    pub util: f64,
    /// Mean requests in the queue (time_in_queue over the step, iostat's aqu-sz).
    pub queue: f64,
    /// Mean time a request took, in ms; 0 with no requests.
    pub lat_ms: f64,
}

/// A stretch of the server flushing its pages: a checkpoint, or a burst of InnoDB page writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlushDoc {
    /// "checkpoint" or "page flushing".
    pub what: String,
    /// 1, 2, … in the run.
    pub n: u32,
    pub start_s: f64,
    /// Its end; for a checkpoint still running when the run ended, the run's end.
    pub end_s: f64,
    /// Why it started, as the server said ("time", "wal", "immediate force wait").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub trigger: String,
    /// Pages (buffers) it wrote, when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u64>,
    /// Whether its end was seen (a checkpoint's "complete" line).
    pub complete: bool,
}

impl ResultDoc {
    /// What to call this result wherever one is named: its cell's name, else its workload in
    /// a few words.
    pub fn display_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.workload.short())
    }

    /// Whether this result counts database transactions (pgbench, sysbench) rather than IOs.
    pub fn is_db(&self) -> bool {
        self.pg.is_some() || self.sysbench.is_some() || self.tpcc.is_some()
    }

    /// The buffer as a share of the data, when `--buffer-ratio` set it for this result.
    pub fn buffer_ratio(&self) -> Option<f64> {
        self.pg
            .as_ref()
            .and_then(|p| p.buffer_ratio)
            .or(self.sysbench.as_ref().and_then(|x| x.buffer_ratio))
            .or(self.tpcc.as_ref().and_then(|x| x.buffer_ratio))
    }

    /// The server a database result ran on ("PostgreSQL", "MariaDB").
    pub fn db_server(&self) -> Option<&str> {
        match (&self.pg, &self.sysbench, &self.tpcc) {
            (Some(_), _, _) => Some("PostgreSQL"),
            (_, Some(s), _) => Some(&s.server),
            (_, _, Some(t)) => Some(&t.server),
            _ => None,
        }
    }
}

/// The engine names of the database loads: a result with one of them counts transactions,
/// not IOs (a stored row knows only its workload, not its sections).
pub const DB_LOADS: [&str; 3] = ["pgbench", "sysbench", "tpcc"];

impl super::WorkloadDoc {
    /// Whether this is a database load's: its rate is transactions per second, and it has
    /// neither a block size nor a depth of its own.
    pub fn is_db_load(&self) -> bool {
        DB_LOADS.contains(&self.engine.as_str())
    }
}

/// A TPC-C-derived run (`iogauge db tpcc`): the load's shape, what the schema and the
/// server counted over the measured window, each transaction kind's latencies and counts,
/// and the consistency conditions checked after the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpccDoc {
    /// "MariaDB" or "PostgreSQL".
    pub server: String,
    pub version: String,
    pub warehouses: u32,
    pub terminals: u32,
    /// Keying and think times on (`--keying-times`).
    pub keying_times: bool,
    /// With keying and think times: the most new orders per minute the terminals can enter
    /// (12.86 per warehouse with 10 terminals each), which a run at the cap is bound by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_nopm: Option<f64>,
    /// New orders per minute over the measured window, from the districts' next order ids
    /// (the count HammerDB calls NOPM). With `--repeat`: the mean of the repeats'.
    pub nopm: f64,
    /// With `--repeat`: each repeat's `nopm`, for compare's significance test. The rates below
    /// are then the repeats' over their windows together, the counts their sums; the latency
    /// percentiles per kind and the ramp are the first repeat's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nopm_repeats: Vec<f64>,
    /// New-Order transactions the terminals saw commit in the window, per minute: the same
    /// number counted by the driver, a cross-check of `nopm`.
    pub driver_nopm: f64,
    /// Transactions per minute as the server counts them: PostgreSQL's xact_commit +
    /// xact_rollback of the database, MariaDB's Com_commit + Com_rollback.
    pub tpm: f64,
    /// Where `tpm` was read, e.g. "pg_stat_database (tpcc): xact_commit + xact_rollback".
    pub tpm_source: String,
    /// The driver's own count of transactions per minute (all five kinds, rollbacks included).
    pub driver_tpm: f64,
    /// Seconds from the terminals' start to the measurement's start.
    pub ramp_s: f64,
    /// Whether the rate had settled when the measurement began (false: the ramp's limit came
    /// first).
    pub settled: bool,
    /// The measured window's length, in seconds.
    pub window_s: f64,
    /// Each transaction kind over the window, in the standard mix's order.
    pub kinds: Vec<TpccKind>,
    /// New-Orders rolled back on purpose (the 1% with an unused item), in the window.
    pub rollbacks: u64,
    /// Transactions tried again after a deadlock or a serialization failure.
    pub retries: u64,
    /// The database's size on storage at the start and the end of the measurement: PostgreSQL's
    /// relation pages, InnoDB's tablespace files.
    pub db_bytes_start: u64,
    pub db_bytes_end: u64,
    /// The loaded database's size.
    pub data_bytes: u64,
    /// The driver's CPU seconds (user + system) over the window, and per transaction.
    pub driver_cpu_s: f64,
    pub driver_cpu_us_per_txn: f64,
    /// The server's CPU seconds over the window.
    pub server_cpu_s: f64,
    /// The statements the server received from its clients over the window, per transaction:
    /// MariaDB's `Questions` (a procedure's call is one). PostgreSQL does not count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements_per_txn: Option<f64>,
    /// CPUs of this machine, for the shares of it the driver and the server used.
    pub cpus: u32,
    /// Per second from the terminals' start: [t_s, New-Order, Payment, Order-Status,
    /// Delivery, Stock-Level] transactions completed in that second; the window starts at
    /// `ramp_s`.
    pub seconds: Vec<[f64; 6]>,
    /// The consistency conditions checked after the run.
    pub checks: Vec<TpccCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_ratio: Option<f64>,
    pub settings: BTreeMap<String, String>,
    /// The server's IO counters over the window, as differences.
    pub status: BTreeMap<String, f64>,
    pub user: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_dir: Option<String>,
}

/// One transaction kind of a TPC-C-derived run, over the measured window.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpccKind {
    /// "New-Order", "Payment", "Order-Status", "Delivery" or "Stock-Level".
    pub name: String,
    pub count: u64,
    /// Its share of all transactions in the window, in percent.
    pub share_pct: f64,
    /// Latency percentiles in microseconds, from the terminals' histograms merged.
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// One consistency condition of the TPC-C specification (clause 3.3.2), checked after a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpccCheck {
    /// "3.3.2.1" to "3.3.2.4".
    pub clause: String,
    /// What it requires, e.g. "W_YTD = sum(D_YTD)".
    pub condition: String,
    /// Places checked (warehouses or districts).
    pub checked: u64,
    /// Where it did not hold, and by how much; empty when it held.
    pub failures: Vec<String>,
}

/// A sysbench OLTP run on a MariaDB server on the target (`iogauge db sysbench`): what ran,
/// what sysbench itself reported, how the server was set up and what InnoDB counted.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SysbenchDoc {
    /// "MariaDB" or "PostgreSQL".
    pub server: String,
    /// The server's `VERSION()`, e.g. "10.11.19-MariaDB-0+deb12u1".
    pub version: String,
    /// oltp_read_write, oltp_read_only, oltp_write_only or oltp_point_select.
    pub script: String,
    pub tables: u32,
    /// Rows per table.
    pub table_size: u64,
    pub threads: u32,
    /// The tables' size after prepare (data + indexes, information_schema), bytes.
    pub data_bytes: u64,
    /// innodb_buffer_pool_size as a fraction of `data_bytes`, when `--buffer-ratio` set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_ratio: Option<f64>,
    /// innodb_buffer_pool_size, innodb_log_file_size, innodb_flush_method, … and any set with
    /// --db-setting, as `SHOW GLOBAL VARIABLES` reported them.
    pub settings: BTreeMap<String, String>,
    /// sysbench's own final report: transactions and queries with its "per sec." rates,
    /// queries by kind, ignored errors, reconnects, its total time and latencies (ms). With
    /// `--repeat`: the counts and times summed over the repeats, the rates over their whole
    /// time, the latencies the first repeat's.
    pub transactions: u64,
    pub sysbench_tps: f64,
    pub queries: u64,
    pub qps: f64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub total_time_s: f64,
    pub sysbench_p99_ms: f64,
    pub sysbench_avg_ms: f64,
    /// Per second, from sysbench's interval lines: [t_s, tps, qps, p99 ms, err/s, reconn/s].
    pub seconds: Vec<[f64; 6]>,
    /// InnoDB's counters (`SHOW GLOBAL STATUS`) over the measurement, as differences (summed
    /// over the repeats).
    pub status: BTreeMap<String, f64>,
    /// The operating-system user the server ran as.
    pub user: String,
    /// The server's memory cgroup limit (`--memory-limit`), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// Where the server's log was (PostgreSQL's WAL: `--wal-dir`; InnoDB's redo: `--log-dir`),
    /// when not in the data directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_dir: Option<String>,
}

/// A PostgreSQL run on the target (`iogauge db pgbench`): what ran, how the server was set up,
/// and what the server itself counted of its IO.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PgDoc {
    /// The server's `version()`, e.g. "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on …".
    pub version: String,
    /// pgbench's built-in script: tpcb-like, simple-update or select-only.
    pub script: String,
    pub scale: u32,
    pub clients: u32,
    pub jobs: u32,
    /// The database's size after `pgbench -i`, in bytes.
    pub data_bytes: u64,
    /// shared_buffers as a fraction of `data_bytes`, when `--buffer-ratio` set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_ratio: Option<f64>,
    /// shared_buffers, fsync, synchronous_commit, wal_sync_method, the checkpoint settings and
    /// any set with --pg-setting, as the server reported them.
    pub settings: BTreeMap<String, String>,
    /// pgbench's own "tps = … (without initial connection time)"; `iops` is the same number.
    pub pgbench_tps: f64,
    pub failed_transactions: u64,
    /// Checkpoints the server made during the measurement.
    pub checkpoints: Option<u64>,
    /// The server's IO counters over the measurement, per view (pg_stat_bgwriter, pg_stat_wal,
    /// pg_stat_checkpointer, pg_stat_io summed), as differences.
    pub server_io: BTreeMap<String, BTreeMap<String, f64>>,
    /// How the page cache was kept from answering for the storage, or that it was not.
    pub page_cache: String,
    /// The server's memory cgroup limit (`--memory-limit`), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// Where the WAL was (`--wal-dir`), when not in the data directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_dir: Option<String>,
    /// The operating-system user the server ran as.
    pub user: String,
}

/// A `--fill` level: as asked, and as statvfs counted it once the filler was synced (used/size,
/// as df shows it), in percent.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct FillDoc {
    pub asked_pct: f64,
    pub used_pct: f64,
}
