//! The database commands' plans, built from what was typed and checked before anything runs:
//! `db pgbench`, and `db sysbench` and `db tpcc` on MariaDB or PostgreSQL.

use super::load::*;
use super::sysbench::{SysbenchPlan, BYTES_PER_ROW, DEFAULT_TABLE_SIZE};
use super::tpcc;
use super::*;
use crate::cli::{
    DbRunArgs, PgbenchArgs, PgbenchScript, ServerArgs, SysbenchArgs, SysbenchScript,
    SysbenchServer, TpccArgs,
};
use crate::units;
use std::path::Path;
use std::time::Duration;

/// What the user typed, checked: numbers, settings and directories, and where PostgreSQL is.
pub fn plan(a: &PgbenchArgs) -> Result<PgbenchPlan> {
    let scale = match (a.scale, a.data) {
        (Some(s), _) => s,
        (None, Some(d)) if d < BYTES_PER_SCALE => {
            return Err(usage(format!(
                "--data {}: the smallest pgbench database (scale 1) holds about {}; give more",
                units::iec(d),
                units::iec(BYTES_PER_SCALE + EMPTY_DB_BYTES)
            )))
        }
        (None, Some(d)) => u32::try_from(d.div_ceil(BYTES_PER_SCALE)).unwrap_or(u32::MAX),
        (None, None) => 10,
    };
    if a.interval < Duration::from_millis(100) || a.interval > a.run.time {
        return Err(usage(format!(
            "--interval must be from 100ms to --time ({}), e.g. --interval 1s",
            units::duration(a.run.time)
        )));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let jobs = match a.jobs {
        Some(j) if j > a.clients => {
            return Err(usage(format!(
                "--jobs {j} is more than --clients {}: pgbench gives each job at least one client",
                a.clients
            )))
        }
        Some(j) => j,
        None => a.clients.min(cpus),
    };
    let server = server_plan(
        a.target.as_deref(),
        &Asked {
            kind: ServerKind::Postgres,
            run: &a.run,
            settings: &a.pg_setting,
            setting_flag: "--pg-setting",
            log_dir: None,
        },
        &a.output,
        "pgbench",
    )?;
    check_free_space(
        &server,
        u64::from(scale) * BYTES_PER_SCALE + EMPTY_DB_BYTES,
        "--scale or --data",
    )?;
    Ok(PgbenchPlan {
        server,
        scale,
        clients: a.clients,
        jobs,
        script: a.script.into(),
        repeat: a.run.repeat,
        interval: a.interval,
    })
}

/// `0.25,1` (shares) or `25%,100%`.
fn ratios(list: &str) -> Result<Vec<f64>> {
    units::parse_list(list, |s| {
        let (v, scale) = match s.strip_suffix('%') {
            Some(p) => (p, 100.0),
            None => (s, 1.0),
        };
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{s} is not a share (0.25) or a percentage (25%)"))?;
        let r = v / scale;
        match r > 0.0 && r <= 16.0 {
            true => Ok(r),
            false => Err(format!(
                "{s} is not a share above 0 and at most 16 (a percentage is written with %, e.g. 25%)"
            )),
        }
    })
    .map_err(|e| usage(format!("--buffer-ratio {list}: {e}")))
}

/// What the user typed, checked: numbers, settings and directories, and where the server and
/// sysbench are.
pub fn sysbench_plan(a: &SysbenchArgs) -> Result<SysbenchPlan> {
    let server = server_plan(
        a.target.as_deref(),
        &Asked::of(&a.server),
        &a.output,
        "sysbench",
    )?;
    let (table_size, sized_by) = match (a.table_size, a.data) {
        (Some(n), _) => (n, format!("{n} rows per table")),
        (None, Some(d)) => {
            let rows = d / (BYTES_PER_ROW * u64::from(a.tables));
            if rows < 1000 {
                return Err(usage(format!(
                    "--data {} gives fewer than 1,000 rows per table at ~{BYTES_PER_ROW} bytes a row; give more data or fewer --tables",
                    units::iec(d)
                )));
            }
            (
                rows,
                format!(
                    "{rows} rows per table: --data {} at ~{BYTES_PER_ROW} bytes a row",
                    units::iec(d)
                ),
            )
        }
        (None, None) => (
            DEFAULT_TABLE_SIZE,
            format!("{DEFAULT_TABLE_SIZE} rows per table"),
        ),
    };
    check_free_space(
        &server,
        u64::from(a.tables) * table_size * BYTES_PER_ROW,
        "--tables, --table-size or --data",
    )?;
    let sysbench = mariadb::look("sysbench", "sysbench")?;
    Ok(SysbenchPlan {
        server,
        sysbench,
        script: a.script.into(),
        tables: a.tables,
        table_size,
        sized_by,
        threads: a.threads,
    })
}

/// `db tpcc` as typed, checked: the warehouses, the terminals and the ramp, with the server's
/// part as every load has it.
pub fn tpcc_plan(a: &TpccArgs) -> Result<tpcc::TpccPlan> {
    let (warehouses, sized_by) = match (a.warehouses, a.data) {
        (Some(w), _) => (w, format!("{w} warehouse{}", units::plural(w as usize))),
        (None, Some(d)) if d < tpcc::BYTES_PER_WAREHOUSE => {
            return Err(usage(format!(
                "--data {}: one warehouse holds about {}; give at least that",
                units::iec(d),
                units::iec(tpcc::BYTES_PER_WAREHOUSE)
            )))
        }
        (None, Some(d)) => {
            let w = u32::try_from(d / tpcc::BYTES_PER_WAREHOUSE).unwrap_or(u32::MAX);
            (
                w,
                format!(
                    "{w} warehouse{}: --data {} at about {} each",
                    units::plural(w as usize),
                    units::iec(d),
                    units::iec(tpcc::BYTES_PER_WAREHOUSE)
                ),
            )
        }
        (None, None) => (1, "1 warehouse".into()),
    };
    let terminals = match (a.terminals, a.keying_times) {
        (Some(t), _) => t,
        // The specification's ten terminals a warehouse, when they act as people.
        (None, true) => warehouses.saturating_mul(10).min(1000),
        (None, false) => 4,
    };
    if a.max_ramp < Duration::from_secs(6) {
        return Err(usage(
            "--max-ramp is under 6s; settling is judged over the last 5 seconds after the first, e.g. --max-ramp 2m",
        ));
    }
    let server = server_plan(
        a.target.as_deref(),
        &Asked::of(&a.server),
        &a.output,
        "tpcc",
    )?;
    check_free_space(
        &server,
        u64::from(warehouses) * tpcc::BYTES_PER_WAREHOUSE,
        "--warehouses or --data",
    )?;
    Ok(tpcc::TpccPlan {
        server,
        warehouses,
        terminals,
        keying: a.keying_times,
        max_ramp: a.max_ramp,
        sized_by,
    })
}

/// Refuses, before any server is made, a load whose data and the server's own files cannot fit
/// in the target directory's free space (the load would fail at the end of its loading, after
/// minutes). Only the certain part is counted — the data as loaded and the empty server — so a
/// run that fits is never refused; its growth over the run is the run's to meet. Built file
/// systems (`--scratch`) are checked by the sweep as it makes them.
fn check_free_space(server: &ServerPlan, data: u64, options: &str) -> Result<()> {
    let Place::Dir(dir) = &server.place else {
        return Ok(());
    };
    // What a fresh server's own files take before any data: PostgreSQL's catalogs and first
    // WAL segments, MariaDB's system tablespace, its 96 MiB redo log and system tables —
    // measured on Debian 12's servers (about 55 and 114 MiB) and rounded down.
    let base: u64 = match server.bin {
        Bin::Postgres(_) => 40 << 20,
        Bin::Mariadb(_) => 100 << 20,
    };
    // Each --fill level over the database as loaded: one passed already, or out of room.
    if !server.fill.is_empty() {
        crate::target::fill::plan(&server.fill, dir, base + data)?;
    }
    let Some(free) = std::fs::File::open(dir)
        .ok()
        .and_then(|f| iogauge_engine::sys::free_bytes(&f).ok())
    else {
        return Ok(());
    };
    if free >= base + data {
        return Ok(());
    }
    Err(usage(format!(
        "{} has {} free, and the database needs at least {} ({} of data and {} of the server's own files): give a larger file system or less data ({options})",
        dir.display(),
        units::iec(free),
        units::iec(base + data),
        units::iec(data),
        units::iec(base)
    )))
}

/// The server as asked: `db sysbench` and `db tpcc` name it and its log's directory, `db
/// pgbench` is PostgreSQL's with its own settings flag.
struct Asked<'a> {
    kind: ServerKind,
    run: &'a DbRunArgs,
    settings: &'a [String],
    setting_flag: &'static str,
    /// --log-dir (MariaDB's redo log), where the command has it.
    log_dir: Option<&'a Path>,
}

impl Asked<'_> {
    fn of(a: &ServerArgs) -> Asked<'_> {
        Asked {
            kind: ServerKind::from(a.server),
            run: &a.run,
            settings: &a.db_setting,
            setting_flag: "--db-setting",
            log_dir: a.log_dir.as_deref(),
        }
    }
}

/// The server's part of a load's plan, checked the same for every load: the target, the
/// measurement's length, the server and its programs, its settings, buffer shares, log
/// directory and memory limit, the storage cells and the output. `load` names the command in
/// messages (`db LOAD`).
fn server_plan(
    target: Option<&Path>,
    asked: &Asked,
    output: &crate::cli::OutputArgs,
    load: &str,
) -> Result<ServerPlan> {
    let a = asked.run;
    let flag = asked.setting_flag;
    common::check_output(output)?;
    let place = place(target, &a.build, output, load)?;
    let fill = crate::target::fill::levels(a.build.fill.as_deref())?;
    if !fill.is_empty() && matches!(place, Place::Built(_)) {
        return Err(usage(format!(
            "--fill fills the file system holding TARGET_DIR, and --scratch builds its own for each run: one change per run; give iogauge db {load} DIR --fill, or run a sweep of what --scratch builds"
        )));
    }
    if a.time < Duration::from_secs(1) {
        return Err(usage(format!(
            "--time is under 1s; db {load} measures whole seconds, e.g. --time 60s"
        )));
    }
    // The log's directory and the settings are each server's own.
    let (log_dir, settings, buffer) = match asked.kind {
        ServerKind::Mariadb => {
            if a.wal_dir.is_some() {
                return Err(usage(
                    "--wal-dir is PostgreSQL's (--server postgres); MariaDB's redo log goes elsewhere with --log-dir",
                ));
            }
            if a.pg_bin.is_some() {
                return Err(usage("--pg-bin goes with --server postgres"));
            }
            common::check_dir("--log-dir", asked.log_dir)?;
            let settings = common::settings(
                asked.settings,
                flag,
                mariadb::setting_name,
                mariadb::owns,
                "to keep the server and its files private (--log-dir moves the redo log)",
                "innodb_flush_log_at_trx_commit=2",
            )?;
            (
                asked.log_dir.map(Path::to_path_buf),
                settings,
                "innodb_buffer_pool_size",
            )
        }
        ServerKind::Postgres => {
            if asked.log_dir.is_some() {
                return Err(usage(
                    "--log-dir is MariaDB's redo log; PostgreSQL's WAL goes elsewhere with --wal-dir",
                ));
            }
            common::check_dir("--wal-dir", a.wal_dir.as_deref())?;
            let settings = common::settings(
                asked.settings,
                flag,
                cluster::setting_name,
                cluster::owns,
                "to keep the server on a private socket with TCP off and its checkpoints logged for the timeline",
                "synchronous_commit=off",
            )?;
            (a.wal_dir.clone(), settings, "shared_buffers")
        }
    };
    let ratios = match &a.buffer_ratio {
        None => Vec::new(),
        Some(list) => {
            if settings.iter().any(|(k, _)| k == buffer) {
                return Err(usage(format!(
                    "--buffer-ratio sets {buffer} for each run; leave out {flag} {buffer}"
                )));
            }
            ratios(list)?
        }
    };
    common::check_memory_limit(a.memory_limit)?;
    if a.storage_time.is_zero() && !a.no_storage {
        return Err(usage(
            "--storage-time 0: give e.g. --storage-time 10s, or --no-storage",
        ));
    }
    if output.baseline {
        return Err(usage(
            "--baseline names a storage result's later level after a change of regime; db runs report transactions: drop it",
        ));
    }
    let (bin, owner, runs_as) = match asked.kind {
        ServerKind::Mariadb => (
            Bin::Mariadb(mariadb::find()?),
            cluster::owner_among(&["mysql", "nobody"], "MariaDB (mariadbd refuses root)")?,
            "MariaDB runs as user {} (mariadbd refuses root)",
        ),
        ServerKind::Postgres => (
            Bin::Postgres(cluster::find(a.pg_bin.as_deref())?),
            cluster::owner()?,
            "PostgreSQL runs as user {} (initdb refuses root)",
        ),
    };
    // A file system built for the server is checked as it is mounted (load::OnBuilt).
    let dir = match &place {
        Place::Dir(d) => Some(d.as_path()),
        Place::Built(_) => None,
    };
    for d in dir.into_iter().chain(log_dir.as_deref()) {
        cluster::check_reachable_by(d, &owner, runs_as)?;
    }
    Ok(ServerPlan {
        place,
        runs_as,
        setting_flag: flag,
        bin,
        owner,
        time: a.time,
        settings,
        ratios,
        log_dir,
        memory_limit: a.memory_limit,
        storage: (!a.no_storage).then_some(a.storage_time),
        fill,
        keep: a.keep,
        repeat: a.repeat,
        ram: iogauge_engine::sys::total_memory(),
        file: crate::plan::output_file(output)?,
        output: crate::plan::Output::of(output),
    })
}

/// Where the server goes: the directory given (checked by the target rules of run and suite,
/// so one path is refused alike by every command), or each file system or array built on blank
/// devices with `--scratch`, by the rules of `sweep`.
fn place(
    target: Option<&Path>,
    build: &crate::cli::BuildArgs,
    output: &crate::cli::OutputArgs,
    load: &str,
) -> Result<Place> {
    let built = crate::plan::built(build)?;
    match (target, built.scratch.is_empty()) {
        (Some(_), false) => Err(usage(format!(
            "with --scratch the server goes in the file systems built there; give no TARGET_DIR (iogauge db {load} --scratch DEV --fs ext4)"
        ))),
        (Some(t), true) => {
            crate::target::gate::target(t)?;
            if !t.is_dir() {
                return Err(usage(format!(
                    "{} is not a directory: give the directory under test, e.g. iogauge db {load} /mnt/data",
                    t.display()
                )));
            }
            Ok(Place::Dir(t.to_path_buf()))
        }
        (None, true) => Err(usage(format!(
            "give the directory under test, e.g. iogauge db {load} /mnt/data, or blank devices to build on with --scratch"
        ))),
        (None, false) => {
            // A server needs a directory: btrfs layouts are their own file system, anything
            // else (md, LVM, a single device) needs one made on it.
            let own_fs = !built.layouts.is_empty()
                && built
                    .layouts
                    .iter()
                    .all(|l| l.kind == crate::plan::axes::Kind::Btrfs);
            if built.fss.is_empty() && !own_fs {
                return Err(usage(
                    "a database server needs a file system on what --scratch builds: add --fs ext4 (or xfs)",
                ));
            }
            if output.output.is_some() {
                return Err(usage(
                    "with --scratch each file system or array is a run of its own, stored as it ends; leave out --output and export them afterwards (iogauge export RUN…)",
                ));
            }
            Ok(Place::Built(built))
        }
    }
}

impl From<SysbenchServer> for crate::db::load::ServerKind {
    fn from(s: SysbenchServer) -> Self {
        use crate::db::load::ServerKind;
        match s {
            SysbenchServer::Mariadb => ServerKind::Mariadb,
            SysbenchServer::Postgres => ServerKind::Postgres,
        }
    }
}

impl From<SysbenchScript> for crate::db::sysbench::Script {
    fn from(s: SysbenchScript) -> Self {
        use crate::db::sysbench::Script;
        match s {
            SysbenchScript::ReadWrite => Script::ReadWrite,
            SysbenchScript::ReadOnly => Script::ReadOnly,
            SysbenchScript::WriteOnly => Script::WriteOnly,
            SysbenchScript::PointSelect => Script::PointSelect,
        }
    }
}

impl From<PgbenchScript> for super::pgbench::Script {
    fn from(s: PgbenchScript) -> Self {
        use super::pgbench::Script;
        match s {
            PgbenchScript::TpcbLike => Script::TpcbLike,
            PgbenchScript::SimpleUpdate => Script::SimpleUpdate,
            PgbenchScript::SelectOnly => Script::SelectOnly,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_ratios_are_shares_or_percentages() {
        assert_eq!(ratios("0.25,1").unwrap(), vec![0.25, 1.0]);
        assert_eq!(ratios("25%, 100%").unwrap(), vec![0.25, 1.0]);
        let e = ratios("0.25,0").unwrap_err().to_string();
        assert!(e.contains("above 0"), "{e}");
        assert_eq!(crate::error::exit_code(&ratios("x").unwrap_err()), 2);
    }
}
