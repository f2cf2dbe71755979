//! `db advise --prove`: the advice against the defaults, by the load itself. Each side runs on
//! a throwaway server of its own in the target directory, the sides alternating (ABBA…, so a
//! device that slows over time, or warms, weighs on both alike), and their rates are compared
//! with Welch's test and the noise threshold `compare` uses.

use crate::cli::{AdviseArgs, ProveLoad, SysbenchServer};
use crate::db::load::{self, Load};
use crate::error::usage;
use crate::model::{ProofDoc, ProofRun, ResultDoc, SettingDoc};
use anyhow::Result;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;
use std::time::Duration;

/// The proof's load, checked with the rest of the plan: the load's own arguments as its
/// command takes them, so every rule of `db tpcc|pgbench|sysbench` holds here too.
pub struct ProvePlan {
    pub load: ProveLoad,
    pub dir: PathBuf,
    pub window: Duration,
    pub runs: u32,
    /// The load's command line without the advice, for the plan's text and each side's run.
    argv: Vec<String>,
}

pub fn plan(args: &AdviseArgs) -> Result<ProvePlan> {
    let dir = match &args.target.target {
        Some(d) if d.is_dir() => d.clone(),
        Some(d) => {
            return Err(usage(format!(
                "--prove runs the server on a file system: {} is not a directory; give the directory the data would live in",
                d.display()
            )))
        }
        None => std::env::current_dir()?,
    };
    if let Some(w) = args.wal.as_ref().filter(|w| !w.is_dir()) {
        return Err(usage(format!(
            "--prove puts the servers' WAL or redo log in --wal, and {} is not a directory; give a directory on the WAL's file system",
            w.display()
        )));
    }
    let load = args.load.unwrap_or(ProveLoad::Tpcc);
    let window = args.prove_time.unwrap_or(Duration::from_secs(30));
    let p = ProvePlan {
        load,
        argv: argv(args, load, &dir, window),
        dir,
        window,
        runs: args.prove_repeat.unwrap_or(3),
    };
    // The load's own plan checked now, so a bad combination stops before a byte is written;
    // the advice's settings join it once they are known (names the rules write, values the
    // server takes).
    check(&p, &[])?;
    Ok(p)
}

fn argv(
    args: &AdviseArgs,
    load: ProveLoad,
    dir: &std::path::Path,
    window: Duration,
) -> Vec<String> {
    let mut v: Vec<String> = vec![
        match load {
            ProveLoad::Tpcc => "tpcc",
            ProveLoad::Pgbench => "pgbench",
            ProveLoad::Sysbench => "sysbench",
        }
        .into(),
        dir.display().to_string(),
        "--time".into(),
        match window.subsec_millis() {
            0 => format!("{}s", window.as_secs()),
            _ => format!("{}ms", window.as_millis()),
        },
        // The storage was measured already: the proof is the load's rate.
        "--no-storage".into(),
    ];
    if load != ProveLoad::Pgbench {
        v.push("--server".into());
        v.push(match args.server {
            SysbenchServer::Postgres => "postgres".into(),
            SysbenchServer::Mariadb => "mariadb".into(),
        });
    }
    if let Some(w) = &args.wal {
        v.push(match args.server {
            SysbenchServer::Postgres => "--wal-dir".into(),
            SysbenchServer::Mariadb => "--log-dir".into(),
        });
        v.push(w.display().to_string());
    }
    if let Some(b) = &args.pg_bin {
        v.extend(["--pg-bin".into(), b.display().to_string()]);
    }
    if let Some(db) = &args.db.db {
        v.extend(["--db".into(), db.display().to_string()]);
    }
    if args.no_store {
        v.push("--no-store".into());
    }
    v
}

/// The load's arguments for one side: the advice's changed settings as the load's server
/// settings.
fn side_argv(p: &ProvePlan, advised: &[SettingDoc]) -> Vec<String> {
    let flag = match p.load {
        ProveLoad::Pgbench => "--pg-setting",
        _ => "--db-setting",
    };
    let mut v = vec!["db".to_string()];
    v.extend(p.argv.iter().cloned());
    for s in advised.iter().filter(|s| s.changed()) {
        v.extend([flag.to_string(), format!("{}={}", s.name, s.value)]);
    }
    v
}

/// A planned side of the proof, as its command plans it.
enum Side {
    Tpcc(crate::db::tpcc::TpccPlan),
    Pgbench(crate::db::PgbenchPlan),
    Sysbench(crate::db::sysbench::SysbenchPlan),
}

impl Side {
    fn parts(&self) -> (&load::ServerPlan, &dyn Load) {
        match self {
            Side::Tpcc(p) => (&p.server, p),
            Side::Pgbench(p) => (&p.server, p),
            Side::Sysbench(p) => (&p.server, p),
        }
    }
}

fn parse<T: Args + FromArgMatches>(argv: &[String]) -> Result<T> {
    let cmd = T::augment_args(clap::Command::new("db").no_binary_name(true));
    // argv[0] is "db", argv[1] the load's name: the load's own arguments follow.
    let m = cmd
        .try_get_matches_from(&argv[2..])
        .map_err(|e| usage(format!("--prove: {}", e.kind())))?;
    Ok(T::from_arg_matches(&m)?)
}

fn check(p: &ProvePlan, advised: &[SettingDoc]) -> Result<Side> {
    let argv = side_argv(p, advised);
    Ok(match p.load {
        ProveLoad::Tpcc => Side::Tpcc(crate::db::tpcc_plan(&parse(&argv)?)?),
        ProveLoad::Pgbench => Side::Pgbench(crate::db::plan(&parse(&argv)?)?),
        ProveLoad::Sysbench => Side::Sysbench(crate::db::sysbench_plan(&parse(&argv)?)?),
    })
}

impl ProvePlan {
    /// The load as its command would be typed, for the plan.
    pub fn command(&self) -> String {
        format!("iogauge db {}", self.argv.join(" "))
    }

    pub fn unit(&self) -> &'static str {
        match self.load {
            ProveLoad::Tpcc => "NOPM",
            _ => "TPS",
        }
    }

    fn rate(&self, r: &ResultDoc) -> f64 {
        match (self.load, &r.tpcc) {
            (ProveLoad::Tpcc, Some(t)) => t.nopm,
            _ => r.iops,
        }
    }
}

/// Runs both sides `runs` times, alternating, and judges the advice's rate against the
/// defaults'.
pub fn run(
    p: &ProvePlan,
    advised: &[SettingDoc],
    hooks: &dyn crate::exec::Hooks,
) -> Result<ProofDoc> {
    let sides = [check(p, &[])?, check(p, advised)?];
    let mut runs: [Vec<ProofRun>; 2] = [Vec::new(), Vec::new()];
    let mut applied = std::collections::BTreeMap::new();
    let mut wal = Vec::new();
    for round in 0..p.runs {
        // ABBA: whichever side ran second last round runs first now.
        let order = match round % 2 {
            0 => [0, 1],
            _ => [1, 0],
        };
        for side in order {
            if let Some(sig) = crate::interrupt::requested() {
                return Err(crate::error::Interrupted(sig).into());
            }
            let what = ["defaults", "advice"][side];
            say!(
                "proof {}/{}: the load with the {what}",
                round as usize * 2 + usize::from(side != order[0]) + 1,
                p.runs * 2
            );
            let (server, load) = sides[side].parts();
            let tags = load::Tags {
                params: [("advice".to_string(), what.to_string())].into(),
                notes: Vec::new(),
            };
            // A run that failed or was cut short after measuring is no sample of its side: the
            // proof stops with its error rather than weigh it.
            let out = load::run(server, load, &p.dir, tags, hooks)?;
            let doc = out.doc.clone();
            out.result()?;
            let r = doc
                .results
                .iter()
                .find(|r| r.workload.is_db_load())
                .ok_or_else(|| anyhow::anyhow!("the load with the {what} measured nothing"))?;
            // The WAL the load writes with the defaults: what max_wal_size follows.
            if let (0, Some(pg)) = (side, &r.pg) {
                let bytes = pg
                    .server_io
                    .get("pg_stat_wal")
                    .and_then(|m| m.get("wal_bytes"));
                if let Some(b) = bytes.filter(|_| r.runtime_s > 0.0) {
                    wal.push(b / r.runtime_s);
                }
            }
            if side == 1 {
                let reported = r
                    .tpcc
                    .as_ref()
                    .map(|t| &t.settings)
                    .or(r.sysbench.as_ref().map(|t| &t.settings))
                    .or(r.pg.as_ref().map(|t| &t.settings));
                for s in advised.iter().filter(|s| s.changed()) {
                    let v = reported.and_then(|m| m.get(&s.name)).cloned();
                    applied.insert(s.name.clone(), v.unwrap_or_else(|| "(not reported)".into()));
                }
            }
            runs[side].push(ProofRun {
                run_id: doc.run_id.clone(),
                rate: p.rate(r),
                p99_ms: r.lat_ns.p99 as f64 / 1e6,
            });
        }
    }
    let [defaults, advised] = runs;
    let mut proof = judge(p.load, p.unit(), p.window, defaults, advised);
    proof.applied = applied;
    proof.wal_bytes_per_s = (!wal.is_empty()).then(|| wal.iter().sum::<f64>() / wal.len() as f64);
    Ok(proof)
}

/// The verdict: better or worse only when significant and beyond the noise, as `compare` says.
pub fn judge(
    load: ProveLoad,
    unit: &str,
    window: Duration,
    defaults: Vec<ProofRun>,
    advised: Vec<ProofRun>,
) -> ProofDoc {
    let rates = |v: &[ProofRun]| v.iter().map(|r| r.rate).collect::<Vec<f64>>();
    let p99s = |v: &[ProofRun]| v.iter().map(|r| r.p99_ms).collect::<Vec<f64>>();
    let (a, b) = (rates(&defaults), rates(&advised));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let change = mean(&b) / mean(&a).max(f64::MIN_POSITIVE) - 1.0;
    let p_value = iogauge_stats::welch_t_test(&b, &a).map(|w| w.p_value);
    let (pa, pb) = (p99s(&defaults), p99s(&advised));
    let p99_change = mean(&pb) / mean(&pa).max(f64::MIN_POSITIVE) - 1.0;
    let p99_p_value = iogauge_stats::welch_t_test(&pb, &pa).map(|w| w.p_value);
    let significant = p_value.is_some_and(|p| p < iogauge_stats::DEFAULT_ALPHA)
        && change.abs() > iogauge_stats::DEFAULT_NOISE;
    ProofDoc {
        load: format!("{load:?}").to_lowercase(),
        unit: unit.into(),
        window_s: window.as_secs_f64(),
        defaults,
        advised,
        change,
        p_value,
        verdict: match (significant, change > 0.0) {
            (false, _) => "same",
            (true, true) => "better",
            (true, false) => "worse",
        }
        .into(),
        applied: Default::default(),
        p99_change,
        p99_p_value,
        wal_bytes_per_s: None,
    }
}
