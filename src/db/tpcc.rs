//! `iogauge db tpcc`: a TPC-C-derived load of iogauge's own on a throwaway server (MariaDB or
//! PostgreSQL, as `db sysbench`), the OLTP load the "Solid State Disk Benchmarking" study ran
//! with DBT2. Warehouses are loaded (about 100 MB each), then terminals — one connection
//! each, a home warehouse and district each — run the five transactions in the standard mix.
//! Not a TPC-C result: no pricing, no audit, keying and think times off unless asked.
//!
//! What it measures, over a window that begins once the rate has settled:
//! - new orders per minute from the districts' next order ids (as HammerDB counts NOPM), and
//!   the terminals' own count of committed New-Orders beside it;
//! - transactions per minute as the server counts commits and rollbacks (as HammerDB's TPM);
//! - each kind's latency percentiles from the terminals' histograms merged;
//! - the database's size at both edges, the driver's and the server's CPU;
//! - the consistency conditions of clause 3.3.2.1 to 3.3.2.4 after the run: a run that fails
//!   them fails.
//!
//! Modules: `sql` (one connection to either server, text protocol), `gen` (the
//! specification's random values), `schema` (tables and the load), `txn` (the five
//! transactions and the mix), `drive` (terminals and the window), `check` (the conditions).

mod check;
mod drive;
mod gen;
mod procs;
mod schema;
mod sql;
mod txn;

use super::backend::Backend;
use super::load::{At, Load, ServerPlan};
use crate::error::usage;
use crate::model::{ResultDoc, TpccDoc, TpccKind};
use crate::units;
use anyhow::{anyhow, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bytes of a loaded warehouse, data and indexes (measured: PostgreSQL 15 and MariaDB 10.11
/// keep 95–120 MB for one).
pub const BYTES_PER_WAREHOUSE: u64 = 100_000_000;
/// The database's name on the server, and its user's.
const DATABASE: &str = "tpcc";

/// Everything `db tpcc` will do, checked before anything is created.
#[derive(Debug)]
pub struct TpccPlan {
    pub server: ServerPlan,
    pub warehouses: u32,
    pub terminals: u32,
    pub keying: bool,
    pub max_ramp: Duration,
    /// How the warehouses were chosen, for the plan.
    pub sized_by: String,
}

impl TpccPlan {
    fn shape(&self) -> drive::Shape {
        drive::Shape {
            warehouses: self.warehouses,
            terminals: self.terminals,
            keying: self.keying,
            time: self.server.time,
            max_ramp: self.max_ramp,
        }
    }

    /// With keying and think times, the most new orders per minute the terminals can enter:
    /// each terminal's cycle is the mix's keying and mean think times, and 45% of its
    /// transactions are New-Orders (12.86 per warehouse at 10 terminals each).
    pub fn cap_nopm(&self) -> Option<f64> {
        self.keying.then(|| {
            let cycle: f64 = txn::KINDS
                .iter()
                .map(|k| {
                    let (key, think) = k.keying_think();
                    f64::from(k.share()) / 100.0 * (key + think)
                })
                .sum();
            f64::from(self.terminals) * f64::from(txn::Kind::NewOrder.share()) / 100.0 * 60.0
                / cycle
        })
    }
}

impl Load for TpccPlan {
    fn command(&self) -> &'static str {
        "db-tpcc"
    }
    fn loading(&self) -> String {
        format!(
            "TPC-C-derived schema, {} warehouse{} (about {})",
            self.warehouses,
            units::plural(self.warehouses as usize),
            units::iec(u64::from(self.warehouses) * BYTES_PER_WAREHOUSE)
        )
    }
    fn database(&self) -> &'static str {
        DATABASE
    }
    fn prepare(&self, s: &dyn Backend) -> Result<Vec<String>> {
        s.create_database(DATABASE)?;
        let ep = s.endpoint(DATABASE);
        let mut conn = sql::Conn::open(&ep)?;
        schema::create(&mut conn)?;
        let rows = AtomicU64::new(0);
        let next = AtomicU64::new(1);
        let done = AtomicU64::new(0);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let loaders = cpus.min(u64::from(self.warehouses)).max(1);
        let w_total = u64::from(self.warehouses);
        std::thread::scope(|scope| -> Result<()> {
            let items = scope.spawn(|| schema::load_items(&ep, &rows));
            let workers: Vec<_> = (0..loaders)
                .map(|_| {
                    scope.spawn(|| -> Result<()> {
                        loop {
                            let w = next.fetch_add(1, Ordering::SeqCst);
                            if w > w_total || crate::interrupt::requested().is_some() {
                                return Ok(());
                            }
                            schema::load_warehouse(&ep, w, &rows)?;
                            let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                            say!(
                                "loading: warehouse {n}/{w_total} done, {} rows so far",
                                units::count(rows.load(Ordering::Relaxed) as f64)
                            );
                        }
                    })
                })
                .collect();
            items
                .join()
                .map_err(|_| anyhow!("the item loader panicked"))??;
            for w in workers {
                w.join().map_err(|_| anyhow!("a loader panicked"))??;
            }
            Ok(())
        })?;
        if let Some(sig) = crate::interrupt::requested() {
            return Err(anyhow!("interrupted by {sig} while loading"));
        }
        schema::index(&mut conn)?;
        procs::create(&mut conn)?;
        Ok(schema::TABLES.iter().map(|t| t.to_string()).collect())
    }
    fn params(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("tpcc.warehouses".into(), self.warehouses.to_string()),
            ("tpcc.terminals".into(), self.terminals.to_string()),
            ("tpcc.keying_times".into(), self.keying.to_string()),
        ])
    }
    fn describe(&self) -> String {
        format!(
            "TPC-C-derived · {} warehouse{} · {} terminal{}",
            self.warehouses,
            units::plural(self.warehouses as usize),
            self.terminals,
            units::plural(self.terminals as usize)
        )
    }
    fn measure(&self, s: &dyn Backend, at: &At) -> Result<Option<ResultDoc>> {
        let ep = s.endpoint(DATABASE);
        let before = s.counters()?;
        let mark = s.log_mark();
        let probe = || {
            let cpu = s.cpu().unwrap_or((0.0, 0.0));
            (s.stored_bytes(DATABASE).unwrap_or(0), cpu)
        };
        let (driven, w) = super::timeline::watch(s, at.devices.0, at.devices.1, || {
            drive::drive(&ep, self.shape(), &probe)
        });
        let d = driven?;
        let (Some(t0), Some(t1)) = (d.begin.at, d.end.at) else {
            // Cut short before the window ended: nothing whole was measured.
            return Ok(None);
        };
        say!("checking the database's consistency (the specification's clause 3.3.2)");
        let checks = check::check(&mut sql::Conn::open(&ep)?)?;
        let after = s.counters()?;
        let window_s = (t1 - t0).as_secs_f64();
        let per_min = |x: f64| x * 60.0 / window_s.max(1e-9);
        let total: u64 = d.counts.iter().sum();
        let kinds = txn::KINDS
            .iter()
            .map(|&k| {
                let h = &d.hists[k as usize];
                let q = |p: f64| h.value_at_quantile(p) as f64 / 1e3;
                TpccKind {
                    name: k.name().into(),
                    count: d.counts[k as usize],
                    share_pct: 100.0 * d.counts[k as usize] as f64 / total.max(1) as f64,
                    p50_us: q(0.5),
                    p90_us: q(0.9),
                    p99_us: q(0.99),
                    p999_us: q(0.999),
                    max_us: h.max() as f64 / 1e3,
                }
            })
            .collect();
        let driver_cpu_s = d.end.driver_cpu - d.begin.driver_cpu;
        let server_cpu = super::common::cpu_since(Some(d.begin.server_cpu), Some(d.end.server_cpu))
            .unwrap_or((0.0, 0.0));
        let doc = TpccDoc {
            server: s.name().into(),
            version: at.version.into(),
            warehouses: self.warehouses,
            terminals: self.terminals,
            keying_times: self.keying,
            cap_nopm: self.cap_nopm(),
            nopm: per_min(d.end.next_o - d.begin.next_o),
            nopm_repeats: Vec::new(),
            driver_nopm: per_min(d.new_orders as f64),
            tpm: per_min(d.end.commits - d.begin.commits),
            tpm_source: drive::commits_query(&ep).1,
            driver_tpm: per_min(total as f64),
            ramp_s: d.ramp_s,
            settled: d.settled,
            window_s,
            kinds,
            rollbacks: d.rollbacks,
            retries: d.retries,
            db_bytes_start: d.begin.db_bytes,
            db_bytes_end: d.end.db_bytes,
            data_bytes: at.data_bytes,
            driver_cpu_s,
            driver_cpu_us_per_txn: driver_cpu_s * 1e6 / total.max(1) as f64,
            server_cpu_s: server_cpu.0 + server_cpu.1,
            statements_per_txn: d
                .begin
                .statements
                .zip(d.end.statements)
                .map(|(b, e)| (e - b) / total.max(1) as f64),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            seconds: d
                .seconds
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    [
                        (i + 1) as f64,
                        c[0] as f64,
                        c[1] as f64,
                        c[2] as f64,
                        c[3] as f64,
                        c[4] as f64,
                    ]
                })
                .collect(),
            checks,
            buffer_ratio: at.ratio,
            settings: at.settings.clone(),
            status: super::common::counter_delta(&before, &after),
            user: at.plan.owner.name.clone(),
            memory_limit_bytes: at.plan.memory_limit,
            log_dir: s.log_dir().map(|d| d.display().to_string()),
        };
        let mut all = crate::measure::run_hist();
        for h in &d.hists {
            let _ = all.add(h);
        }
        let series: Vec<crate::model::Sample> = d
            .seconds
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // Each second's latencies from every terminal, merged as the IO runner merges
                // its intervals; a second with nothing completed has none.
                let q = |p: f64| {
                    d.second_hists
                        .get(i)
                        .filter(|h| !h.is_empty())
                        .map_or(0, |h| h.value_at_quantile(p))
                };
                crate::model::Sample {
                    t_s: (i + 1) as f64,
                    iops: c.iter().sum::<u64>() as f64,
                    bw_bytes: 0.0,
                    lat_p50_ns: q(0.5),
                    lat_p99_ns: q(0.99),
                }
            })
            .collect();
        // The timeline shows the ramp too; the result's own series is the window's seconds,
        // which its findings (steady state, stalls) judge.
        let timeline = w.timeline(s, mark, &series, at.devices.1);
        let ramp = d.ramp_s as usize;
        let window_series: Vec<crate::model::Sample> = series
            .iter()
            .skip(ramp)
            .map(|x| crate::model::Sample {
                t_s: x.t_s - ramp as f64,
                ..*x
            })
            .collect();
        let buffer = match s.name() {
            "PostgreSQL" => "shared_buffers",
            _ => "buffer pool",
        };
        let mut name = format!(
            "TPC-C-derived · {} warehouse{} · {} terminal{}",
            self.warehouses,
            units::plural(self.warehouses as usize),
            self.terminals,
            units::plural(self.terminals as usize)
        );
        if let Some(x) = at.ratio {
            name += &format!(" · {buffer} {} of data", super::pct(x));
        }
        let mut r = super::common::transactions_result(super::common::Transactions {
            name,
            server: s,
            settings: &at.settings,
            data_bytes: at.data_bytes,
            clients: self.terminals,
            time: at.plan.time,
            transactions: total,
            runtime_s: window_s,
            hist: &all,
            timeseries: window_series,
            cpu: Some(server_cpu),
            devices: super::devices_of(&[w.windows.as_slice()]),
            timeline,
            engine: "tpcc",
            // Order-Status and Stock-Level read only: 8% of the mix.
            mix_read_pct: 8,
        });
        r.tpcc = Some(Box::new(doc));
        if d.cut_short {
            super::common::cut_short(&mut r, Duration::from_secs_f64(window_s), at.plan.time);
        }
        Ok(Some(r))
    }
    fn threads(&self) -> u32 {
        self.terminals
    }
    fn notes(&self, data_bytes: u64, server: &str) -> Vec<String> {
        vec![format!(
            "the TPC-C-derived database: {} (data and indexes, as {server} counts them) for {} warehouse{}",
            units::iec(data_bytes),
            self.warehouses,
            units::plural(self.warehouses as usize)
        )]
    }
    fn failed(&self, r: &ResultDoc) -> Option<anyhow::Error> {
        failure(&r.tpcc.as_ref()?.checks)
    }
}

/// `iogauge db tpcc-check DIR`: the consistency conditions checked on the database of a server
/// an earlier `db tpcc --keep` left in DIR (its `iogauge-pg-N` or `iogauge-my-N` directory).
/// The server is started on it as it was left, asked, and stopped; nothing is removed. Only a
/// directory iogauge made and kept is taken: its name, its data directory, and the server's
/// account as its owner.
pub fn check_kept(dir: &Path, pg_bin: Option<&Path>) -> Result<Vec<crate::model::TpccCheck>> {
    use std::os::unix::fs::MetadataExt;
    let work = std::path::absolute(dir)?;
    let name = work
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let kept = |marker: &str| work.join("data").join(marker).exists();
    let owned_by = |owner: &super::cluster::Owner| -> Result<()> {
        let uid = std::fs::metadata(work.join("data"))?.uid();
        match owner.ids {
            Some((u, _)) if u != uid => Err(usage(format!(
                "{}: its data directory does not belong to {}, who runs the server: not a server iogauge kept",
                work.display(),
                owner.name
            ))),
            _ => Ok(()),
        }
    };
    if numbered("iogauge-pg-") && kept("PG_VERSION") {
        let bin = super::cluster::find(pg_bin)?;
        let owner = super::cluster::owner()?;
        owned_by(&owner)?;
        let cl = super::cluster::Cluster::reopen(&bin, &owner, &work)?;
        say!("starting the kept PostgreSQL server in {}", work.display());
        cl.start(&[])?;
        let ep = super::backend::Endpoint::Postgres {
            socket_dir: cl.socket_dir.clone(),
            port: super::cluster::PORT,
            user: super::cluster::ROLE.into(),
            database: DATABASE.into(),
        };
        let checks = check::check(&mut sql::Conn::open(&ep)?);
        drop(cl);
        checks
    } else if numbered("iogauge-my-") && kept("mysql") {
        if pg_bin.is_some() {
            return Err(usage(format!(
                "--pg-bin: {} holds a MariaDB server, not PostgreSQL; leave it out",
                work.display()
            )));
        }
        let bin = super::mariadb::find()?;
        let owner =
            super::cluster::owner_among(&["mysql", "nobody"], "MariaDB (mariadbd refuses root)")?;
        owned_by(&owner)?;
        let mut server = super::mariadb::Server::reopen(&bin, &owner, &work)?;
        say!("starting the kept MariaDB server in {}", work.display());
        server.start(&[], &[])?;
        let ep = super::backend::Endpoint::Mariadb {
            socket: server.socket.clone(),
            user: DATABASE.into(),
            database: DATABASE.into(),
        };
        let checks = check::check(&mut sql::Conn::open(&ep)?);
        drop(server);
        checks
    } else {
        Err(usage(format!(
            "{} is not a server directory db tpcc --keep left (iogauge-pg-N or iogauge-my-N with its data directory); give one, e.g. iogauge db tpcc-check /data/iogauge-pg-1234",
            dir.display()
        )))
    }
}

/// The failed conditions as the run's failure; `None` when all held.
pub fn failure(checks: &[crate::model::TpccCheck]) -> Option<anyhow::Error> {
    check::failure(checks).map(|f| anyhow!("{f}"))
}
