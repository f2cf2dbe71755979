//! `iogauge db advise`: a database server's IO settings from measurements of the storage its
//! data would live on. The measurements are a suite the program carries (suites/advise/), run
//! as `suite` runs one — the same gate, target, findings and store; the rules (`rules`) turn
//! the run's numbers into settings when the run is whole and before it is stored, so the
//! stored run holds its advice; `--prove` then runs the load on throwaway servers with the
//! defaults and with the advice (`prove`).

pub mod prove;
pub mod rules;

use crate::cli::{AdviseArgs, ProveLoad, SysbenchServer};
use crate::error::usage;
use crate::model::{AdviceDoc, ResultDoc, RunDoc};
use crate::plan::Plan;
use crate::workload::{Rw, SyncKind};
use anyhow::Result;
use rules::{Commit, Depth};
use std::path::PathBuf;

pub use prove::ProvePlan;

const POSTGRES: &str = include_str!("../../suites/advise/postgres.toml");
/// How much of a block device is measured when --size does not say.
const DEVICE_RANGE: u64 = 1 << 30;
/// How much of the WAL's target is used: its cells append within 16 MiB.
const WAL_RANGE: u64 = 64 << 20;
const MARIADB: &str = include_str!("../../suites/advise/mariadb.toml");

/// What `db advise` will do, checked before anything is written.
pub struct AdvisePlan {
    pub server: SysbenchServer,
    /// The server's version as its programs say it, "" when it is not installed here.
    pub version: String,
    /// The measurements: a suite on the target.
    pub measure: Plan,
    /// The commits' cells, with pwrite and a sync call as the servers write their WAL and redo
    /// log: on `--wal`'s target, else on the data's.
    pub commits: Plan,
    /// `-o FILE`: the snippet.
    pub snippet: Option<PathBuf>,
    pub prove: Option<ProvePlan>,
}

impl AdvisePlan {
    pub fn server_name(&self) -> &'static str {
        name(self.server)
    }

    /// The suites in the order they run: the data's, then the commits'.
    pub fn plans(&self) -> [&Plan; 2] {
        [&self.measure, &self.commits]
    }
}

fn name(server: SysbenchServer) -> &'static str {
    match server {
        SysbenchServer::Postgres => "PostgreSQL",
        SysbenchServer::Mariadb => "MariaDB",
    }
}

pub fn plan(args: &AdviseArgs) -> Result<AdvisePlan> {
    if args.target.buffered {
        return Err(usage(
            "db advise measures the storage without the page cache (the settings are about the storage, not the cache): drop --buffered",
        ));
    }
    if args.target.engine != crate::cli::EngineArg::IoUring {
        return Err(usage(
            "db advise does its IO as the server does (pread/pwrite for PostgreSQL, io_uring for InnoDB): drop --engine",
        ));
    }
    // io_uring's own flags would change nothing where the cells use pread/pwrite (all of
    // PostgreSQL's, and every server's commits), and --hipri cannot poll those.
    let t = &args.target;
    let uring_flag = [
        (t.sqpoll, "--sqpoll"),
        (t.hipri, "--hipri"),
        (t.no_register, "--no-register"),
    ]
    .into_iter()
    .find(|(given, flag)| {
        *given && (args.server == SysbenchServer::Postgres || *flag == "--hipri")
    });
    if let Some((_, flag)) = uring_flag {
        return Err(usage(format!(
            "{flag} is io_uring's, and db advise does this server's IO (or its commits) with pread/pwrite as the server does: drop {flag}"
        )));
    }
    let (text, origin) = match args.server {
        SysbenchServer::Postgres => (POSTGRES, "suites/advise/postgres.toml"),
        SysbenchServer::Mariadb => (MARIADB, "suites/advise/mariadb.toml"),
    };
    let suite = crate::suite::schema::parse(text, origin)
        .map_err(|e| anyhow::anyhow!("the advise suite carried in the program: {e}"))?;
    // The commits (the groups that sync) are a suite of their own: done with pwrite and a sync
    // call, as both servers write their WAL and redo log, on --wal where the WAL would live.
    if let Some(w) = &args.wal {
        let data = args
            .target
            .target
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        let same =
            |a: &std::path::Path, b: &std::path::Path| match (a.canonicalize(), b.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => a == b,
            };
        if same(&data, w) {
            return Err(usage(format!(
                "--wal {} is the target itself: drop --wal (the commits are measured with the data then)",
                w.display()
            )));
        }
    }
    let (commits, data): (Vec<_>, Vec<_>) = suite
        .groups
        .iter()
        .cloned()
        .partition(|g| g.sync.is_some() || g.odsync);
    let wal_suite = crate::suite::Suite {
        name: format!("{}-commits", suite.name),
        groups: commits,
        ..suite.clone()
    };
    let suite = crate::suite::Suite {
        groups: data,
        ..suite
    };
    let suite_args = crate::cli::SuiteArgs {
        name: None,
        file: None,
        target: args.target.clone(),
        cell_time: Some(args.cell_time),
        ramp: std::time::Duration::ZERO,
        until_stable: false,
        sizes: None,
        threads: None,
        read_pct: None,
        qd: None,
        files: None,
        seed: 1,
        max_rounds: None,
        stream_target: Vec::new(),
        repeat: crate::cli::RepeatArgs {
            repeat: None,
            precondition: false,
            drop_caches: false,
            param: Vec::new(),
            until_change: None,
        },
        output: crate::cli::OutputArgs {
            json: args.json,
            label: args.label.clone(),
            no_store: args.no_store,
            output: None,
            format: None,
            fio_output_format: None,
            dry_run: args.dry_run,
            baseline: false,
            db: args.db.clone(),
        },
    };
    // A device is measured over its first GiB unless --size says otherwise: every block read
    // is written first (the fill), and a whole disk's fill would take hours.
    let mut suite_args = suite_args;
    if args.server == SysbenchServer::Postgres {
        suite_args.target.engine = crate::cli::EngineArg::Psync;
    }
    let device = suite_args
        .target
        .target
        .as_deref()
        .is_some_and(crate::target::is_block_device);
    let whole = suite_args
        .target
        .target
        .as_deref()
        .and_then(crate::target::device_bytes);
    let range = whole.map_or(DEVICE_RANGE, |w| {
        w.saturating_sub(args.target.offset).min(DEVICE_RANGE)
    });
    if device && suite_args.target.size.is_none() {
        suite_args.target.size = Some(range);
    }
    let mut measure = crate::plan::from_suite_with(&suite_args, suite)?;
    if device && args.target.size.is_none() && whole.is_some_and(|w| w > range) {
        measure.notes.push(format!(
            "the device is measured over its first {} (--size to change): a rotating disk seeks less there than over its whole surface",
            crate::units::iec(range)
        ));
    }
    let commits = {
        let mut on = suite_args.clone();
        on.target.engine = crate::cli::EngineArg::Psync;
        if let Some(w) = &args.wal {
            (on.target.target, on.target.offset) = (Some(w.clone()), 0);
        }
        let whole = on
            .target
            .target
            .as_deref()
            .and_then(crate::target::device_bytes);
        on.target.size = Some(whole.map_or(WAL_RANGE, |b| {
            b.saturating_sub(on.target.offset).min(WAL_RANGE)
        }));
        crate::plan::from_suite_with(&on, wal_suite)?
    };
    if let Some(path) = &args.output {
        crate::plan::writable_output(
            path,
            "give a file path on a file system for the settings (stdout has them too)",
        )?;
    }
    if args.load == Some(ProveLoad::Pgbench) && args.server == SysbenchServer::Mariadb {
        return Err(usage(
            "--load pgbench drives PostgreSQL only: give --load tpcc or --load sysbench with --server mariadb",
        ));
    }
    if args.pg_bin.is_some() && args.server == SysbenchServer::Mariadb {
        return Err(usage(
            "--pg-bin names PostgreSQL's programs; --server mariadb does not use them: drop it",
        ));
    }
    if args
        .prove_time
        .is_some_and(|t| t < std::time::Duration::from_secs(1))
    {
        return Err(usage(
            "--prove-time is under a second: each side's window needs at least 1s (e.g. --prove-time 30s)",
        ));
    }
    // The defaults differ between versions: they are the installed server's. A --pg-bin that
    // names no installation is the user's mistake, said; none installed is said in the notes.
    let version = match args.server {
        SysbenchServer::Postgres if args.pg_bin.is_some() => {
            crate::db::cluster::find(args.pg_bin.as_deref())?.version
        }
        SysbenchServer::Postgres => crate::db::cluster::find(None)
            .map(|b| b.version)
            .unwrap_or_default(),
        SysbenchServer::Mariadb => crate::db::mariadb::find()
            .map(|b| b.version)
            .unwrap_or_default(),
    };
    let prove = match args.prove {
        true => Some(prove::plan(args)?),
        false => None,
    };
    Ok(AdvisePlan {
        server: args.server,
        version,
        measure,
        commits,
        snippet: args.output.clone(),
        prove,
    })
}

/// The advice, from a whole run's results: at its hook, before the run is judged and stored.
/// The data's run comes first (`last` false: it only measures) and the commits' run derives
/// from both (`earlier`, the data's results).
pub struct Derive<'a> {
    pub plan: &'a AdvisePlan,
    pub inner: &'a dyn crate::exec::Hooks,
    pub earlier: &'a [ResultDoc],
    /// The devices under the data, from the data's run (the commits' may be on another).
    pub devices: &'a [iogauge_sysinfo::BlockDevice],
    pub last: bool,
}

impl crate::exec::Hooks for Derive<'_> {
    fn found_before_run(&self, found: &[iogauge_analyze::Finding]) {
        self.inner.found_before_run(found)
    }

    fn measured(&self, doc: &mut RunDoc) {
        if !self.last {
            return;
        }
        let mut all = self.earlier.to_vec();
        all.extend(doc.results.iter().cloned());
        let mut advice = derive(&all, self.plan.server, &self.plan.version);
        advice.target = self
            .plan
            .measure
            .target
            .path
            .as_ref()
            .map_or("the current directory".into(), |t| t.display().to_string());
        // Said before what the storage cannot tell, which closes the notes.
        if let Some(note) = stack_note(self.devices) {
            let at = advice.notes.len().saturating_sub(1);
            advice.notes.insert(at, note);
        }
        doc.advice = Some(advice);
    }
}

/// One result of the run by its workload, when it measured to its end.
fn find(results: &[ResultDoc], pick: impl Fn(&ResultDoc) -> bool) -> Option<&ResultDoc> {
    results
        .iter()
        .find(|r| !r.interrupted && r.error.is_none() && r.ios > 0 && pick(r))
}

fn curve(results: &[ResultDoc], bs: u64) -> Vec<Depth> {
    results
        .iter()
        .filter(|r| !r.interrupted && r.error.is_none() && r.ios > 0)
        .filter(|r| r.workload.rw == Rw::Randread && r.workload.bs == bs)
        .map(|r| Depth {
            in_flight: r.workload.iodepth * r.workload.threads,
            iops: r.iops,
        })
        .collect()
}

/// A commit's cost in a result of writes made durable one by one: the rate of writes, the
/// writes' latency and the sync calls' (none with O_DSYNC, where the write is durable).
fn commit(r: &ResultDoc, method: &'static str) -> Commit {
    let write = r.write.as_ref().map_or(r.lat_ns, |w| w.lat_ns);
    Commit {
        method,
        per_s: r.iops,
        write_ns: (write.p50, write.p99),
        sync_ns: r
            .sync
            .as_ref()
            .filter(|s| s.count > 0)
            .map(|s| (s.lat_ns.p50, s.lat_ns.p99)),
    }
}

/// The major version in a version string ("15.18 (Debian …)", "18beta1", "19devel").
fn major(version: &str) -> Option<u32> {
    let digits: String = version.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The settings from a run's results, by the rules; a setting whose measurement is missing
/// (a cell cut short) is named in the notes instead.
pub fn derive(results: &[ResultDoc], server: SysbenchServer, version: &str) -> AdviceDoc {
    let mut doc = AdviceDoc {
        server: name(server).into(),
        version: version.into(),
        ..AdviceDoc::default()
    };
    let mut missing = Vec::new();
    match server {
        SysbenchServer::Postgres => {
            doc.page_bytes = 8192;
            let seq = find(results, |r| {
                r.workload.rw == Rw::Read && r.workload.bs == 128 << 10
            });
            let random = find(results, |r| {
                r.workload.rw == Rw::Randread
                    && r.workload.bs == 8192
                    && r.workload.iodepth * r.workload.threads == 1
            });
            doc.settings.push(rules::seq_page_cost());
            match (seq, random) {
                (Some(s), Some(r)) => doc
                    .settings
                    .push(rules::random_page_cost(s.bw_bytes / 8192.0, r.iops)),
                _ => missing.push("random_page_cost"),
            }
            // PostgreSQL 18 raised both defaults to 16.
            let defaults = match major(version) {
                Some(v) if v >= 18 => (16, 16),
                _ => (1, 10),
            };
            let mut found = rules::io_concurrency(&curve(results, 8192), defaults);
            if found.is_empty() {
                missing.push("effective_io_concurrency");
            }
            // maintenance_io_concurrency came in PostgreSQL 13: a server before it would refuse
            // to start with the line.
            if major(version).is_some_and(|v| v < 13) {
                found.retain(|s| s.name != "maintenance_io_concurrency");
            }
            doc.settings.extend(found);
            let wal = |r: &ResultDoc| r.workload.rw == Rw::Write && r.workload.bs == 8192;
            let commits: Vec<Commit> = [
                (Some(SyncKind::Fdatasync), false, "fdatasync"),
                (Some(SyncKind::Fsync), false, "fsync"),
                (None, true, "open_datasync"),
            ]
            .into_iter()
            .filter_map(|(sync, odsync, method)| {
                find(results, |r| {
                    wal(r) && r.workload.sync == sync && r.workload.odsync == odsync
                })
                .map(|r| commit(r, method))
            })
            .collect();
            match rules::wal_sync_method(&commits) {
                Some(s) => doc.settings.push(s),
                None => missing.push("wal_sync_method"),
            }
            doc.settings.extend(rules::pg_load_bound());
            match major(version) {
                Some(v) if v >= 18 => doc.notes.push(
                    "io_method and io_workers are left at their defaults: which serves better depends on the load's CPU as much as the storage".into(),
                ),
                _ => doc.notes.push(format!(
                    "io_method and io_workers: PostgreSQL {} has none (they came in 18)",
                    major(version).map_or("here".into(), |v| v.to_string())
                )),
            }
        }
        SysbenchServer::Mariadb => {
            doc.page_bytes = 16384;
            let random_write = find(results, |r| {
                r.workload.rw == Rw::Randwrite && r.workload.bs == 16384
            });
            match random_write.map(sustained) {
                Some(rate) => doc.settings.extend(rules::io_capacity(rate)),
                None => missing.push("innodb_io_capacity"),
            }
            let seq_write = find(results, |r| {
                r.workload.rw == Rw::Write && r.workload.bs == 16384
            });
            match (seq_write, random_write) {
                (Some(s), Some(r)) => doc.settings.push(rules::flush_neighbors(s.iops, r.iops)),
                _ => missing.push("innodb_flush_neighbors"),
            }
            // Every cell asks for direct IO; one that could not have it fails the run, so a
            // whole run's results say whether it works here.
            match results.is_empty() {
                true => missing.push("innodb_flush_method"),
                false => {
                    let direct = results.iter().all(|r| r.io_path == "direct");
                    doc.settings
                        .push(rules::flush_method(direct, mariadb_before(version, 10, 6)));
                }
            }
            let found = rules::io_threads(&curve(results, 16384));
            if found.is_empty() {
                missing.push("innodb_read_io_threads");
            }
            doc.settings.extend(found);
            match find(results, |r| {
                r.workload.rw == Rw::Write
                    && r.workload.bs == 4096
                    && r.workload.sync == Some(SyncKind::Fdatasync)
            }) {
                Some(r) => doc
                    .settings
                    .push(rules::flush_log_at_trx_commit(&commit(r, "fdatasync"))),
                None => missing.push("innodb_flush_log_at_trx_commit"),
            }
            doc.settings.push(rules::log_file_size());
        }
    }
    if !missing.is_empty() {
        doc.notes.push(format!(
            "not advised, their measurements did not run to their end: {}",
            missing.join(", ")
        ));
    }
    if version.is_empty() {
        doc.notes.push(format!(
            "{} is not installed here: the defaults are those of Debian 12's version",
            name(server)
        ));
    }
    doc.notes.push(
        "what the storage alone cannot tell: the load's real access pattern, the memory other processes take, and a cache that lies about durability (`iogauge fsync-check` finds one)".into(),
    );
    doc
}

/// The devices under the target as the kernel describes them: what a rule cannot measure but a
/// reader weighs the advice by (a rotating disk; a volatile write cache every sync flushes).
fn stack_note(devices: &[iogauge_sysinfo::BlockDevice]) -> Option<String> {
    let said: Vec<String> = devices
        .iter()
        .map(|d| {
            let mut parts = Vec::new();
            match d.rotational {
                Some(true) => parts.push("rotational".to_string()),
                Some(false) => parts.push("not rotational".to_string()),
                None => {}
            }
            if let Some(c) = &d.write_cache {
                parts.push(format!("write cache {c}"));
            }
            format!("{} ({})", d.name, parts.join(", "))
        })
        .collect();
    (!said.is_empty()).then(|| {
        format!(
            "the devices under the data, as the kernel describes them: {}",
            said.join(", ")
        )
    })
}

/// What random writes sustain once a first burst is over: the median of the per-interval
/// rates over the second half of the result; a result of one interval is taken whole, and says
/// so.
fn sustained(r: &ResultDoc) -> rules::Sustained {
    let n = r.timeseries.len();
    if n < 2 {
        return rules::Sustained {
            iops: r.iops,
            seconds: r.runtime_s,
            burst_left_out: false,
        };
    }
    let mut later: Vec<f64> = r.timeseries[n / 2..].iter().map(|s| s.iops).collect();
    later.sort_by(f64::total_cmp);
    rules::Sustained {
        // The lower middle of an even count: what the device sustains, never the better half.
        iops: later[(later.len() - 1) / 2],
        seconds: later.len() as f64 * r.workload.interval_s,
        burst_left_out: true,
    }
}

/// Whether a MariaDB version string is before MAJOR.MINOR (unknown: not before).
fn mariadb_before(version: &str, major: u32, minor: u32) -> bool {
    let mut parts = version.split(['.', '-']).map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) < (major, minor),
        _ => false,
    }
}

/// What the proof's load tells that the storage could not: PostgreSQL's max_wal_size from the
/// WAL the defaults' runs wrote a second.
pub fn from_proof(
    proof: &crate::model::ProofDoc,
    server: SysbenchServer,
) -> Option<crate::model::SettingDoc> {
    match (server, proof.wal_bytes_per_s) {
        (SysbenchServer::Postgres, Some(rate)) => Some(rules::max_wal_size(rate, 0.9)),
        _ => None,
    }
}

/// The changed settings as the server reads them: a postgresql.conf include, or a my.cnf
/// section.
pub fn snippet(a: &AdviceDoc, run_id: &str) -> String {
    let changed: Vec<_> = a.settings.iter().filter(|s| s.changed()).collect();
    let mut s = format!(
        "# iogauge db advise (run {run_id}): the {} settings this storage's measurements change from their defaults.\n",
        a.server
    );
    if changed.is_empty() {
        s.push_str("# None: the measurements justify every default.\n");
    }
    let quoted = a.server == "PostgreSQL";
    if !quoted && !changed.is_empty() {
        s.push_str("[mariadbd]\n");
    }
    for c in changed {
        s.push_str(&format!("# {}\n", c.why));
        match quoted {
            true if c.value.parse::<f64>().is_ok() => {
                s.push_str(&format!("{} = {}\n", c.name, c.value))
            }
            true => s.push_str(&format!("{} = '{}'\n", c.name, c.value)),
            false => s.push_str(&format!("{} = {}\n", c.name, c.value)),
        }
    }
    s
}

#[cfg(test)]
mod tests;
