//! The loop every load on a throwaway database server runs through: a [`Load`] (pgbench,
//! sysbench, the TPC-C-derived one) × a [`Backend`] (PostgreSQL, MariaDB), as the engine crate
//! is engines. The server is created in the target directory, the load makes and fills its
//! database, then one measurement per buffer share of the data (`--buffer-ratio`:
//! innodb_buffer_pool_size or shared_buffers, the buffer-pool-to-data sweep of the "Solid State
//! Disk Benchmarking" study), each after a restart so the buffer starts cold; each result stored
//! as it comes; then the server is stopped and removed and the storage cells of the same
//! directory (the server's commit and its page's random reads) stand beside the transactions.

use super::backend::{self, Backend};
use super::cluster::{self, PgBin};
use super::common;
use super::mariadb::{MyBin, Server};
use crate::model::ResultDoc;
use crate::store::{Recorder, Store};
use crate::units;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Which server sysbench drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    Mariadb,
    Postgres,
}

/// The server's programs, found.
#[derive(Debug)]
pub enum Bin {
    Mariadb(MyBin),
    Postgres(PgBin),
}

impl Bin {
    /// What the buffer is called, that --buffer-ratio sizes.
    pub fn buffer_name(&self) -> &'static str {
        match self {
            Bin::Mariadb(_) => "innodb_buffer_pool_size",
            Bin::Postgres(_) => "shared_buffers",
        }
    }

    /// What the log is called, that --wal-dir or --log-dir moves.
    pub fn log_name(&self) -> &'static str {
        match self {
            Bin::Mariadb(_) => "InnoDB's redo log (innodb_log_group_home_dir)",
            Bin::Postgres(_) => "WAL (initdb --waldir)",
        }
    }

    /// The storage cells beside this server's TPS.
    pub fn cells(&self, threads: u32) -> backend::Cells {
        match self {
            Bin::Mariadb(_) => backend::mariadb::mariadb_cells(threads),
            Bin::Postgres(_) => backend::postgres::postgres_cells(threads),
        }
    }

    /// "MariaDB 10.11.19-MariaDB-0+deb12u1 (/usr/sbin/mariadbd)", for the plan and the log.
    pub fn describe(&self) -> String {
        match self {
            Bin::Mariadb(b) => format!("MariaDB {} ({})", b.version, b.mariadbd.display()),
            Bin::Postgres(b) => format!("PostgreSQL {} ({})", b.version, b.dir.display()),
        }
    }
}

/// What every load on a throwaway server shares, checked before anything is created: the
/// server, its settings and buffer shares, its log's directory, the measurement's length, the
/// storage cells, and where the run goes.
#[derive(Debug)]
pub struct ServerPlan {
    pub place: Place,
    /// Who the server runs as and why, e.g. "PostgreSQL runs as user {} (initdb refuses
    /// root)", for a directory it cannot enter.
    pub runs_as: &'static str,
    /// The option that gave the settings, named when the server refuses one.
    pub setting_flag: &'static str,
    pub bin: Bin,
    pub owner: cluster::Owner,
    pub time: Duration,
    /// --db-setting pairs, in order.
    pub settings: Vec<(String, String)>,
    /// The buffer as fractions of the data, one run each; empty: one run.
    pub ratios: Vec<f64>,
    /// The server's log (PostgreSQL's WAL, InnoDB's redo) in a directory of its own under this.
    pub log_dir: Option<PathBuf>,
    pub memory_limit: Option<u64>,
    /// Length of each storage cell; `None` with --no-storage.
    pub storage: Option<Duration>,
    /// `--fill` levels of use (percent) of the file system holding the server, each measured
    /// over the database as loaded; empty: as found.
    pub fill: Vec<f64>,
    pub keep: bool,
    /// Runs of each measurement (`--repeat`).
    pub repeat: u32,
    pub ram: u64,
    pub output: crate::plan::Output,
    pub file: Option<(PathBuf, crate::plan::Format)>,
}

/// Where the server goes: the directory given, or each file system or array built on blank
/// devices (`--scratch`), one run each, as `sweep` builds them.
#[derive(Debug)]
pub enum Place {
    Dir(PathBuf),
    Built(crate::plan::axes::Built),
}

impl Place {
    /// For the plan: the directory, or the devices built on.
    pub fn describe(&self) -> String {
        match self {
            Place::Dir(d) => d.display().to_string(),
            Place::Built(b) => format!(
                "each file system built on {}",
                b.scratch
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// One load on a server: it makes and fills its database, then measures it once per buffer
/// share; [`run`] does the rest (the server, the restarts, the store, the storage cells).
pub trait Load: Sync {
    /// The run's command in the store, e.g. "db-sysbench".
    fn command(&self) -> &'static str;
    /// What is loaded, said before the load, e.g. "sysbench oltp_read_write prepare, 4 tables".
    fn loading(&self) -> String;
    /// Its database made on a fresh server and filled; the names of its tables.
    fn prepare(&self, s: &dyn Backend) -> Result<Vec<String>>;
    /// The database `prepare` made.
    fn database(&self) -> &'static str;
    /// The run's parameters, for the store's `params`.
    fn params(&self) -> BTreeMap<String, String>;
    /// The load for one measurement's line, e.g. "sysbench oltp_read_write · 8 threads".
    fn describe(&self) -> String;
    /// One measurement on the started server; `None` when interrupted.
    fn measure(&self, s: &dyn Backend, at: &At) -> Result<Option<ResultDoc>>;
    /// Connections, for the storage cells' concurrency.
    fn threads(&self) -> u32;
    /// The loaded data's size, which the buffer shares are of.
    fn data_bytes(&self, s: &dyn Backend) -> Result<u64> {
        s.data_bytes(self.database())
    }
    /// The load's own notes on the data.
    fn notes(&self, data_bytes: u64, server: &str) -> Vec<String>;
    /// Whether `measure` runs the plan's repeats itself (pgbench, which merges its repeats'
    /// transaction logs); otherwise [`run`] repeats it and joins the results.
    fn repeats_itself(&self) -> bool {
        false
    }
    /// A measurement that ran but failed a check of the load's own (stored all the same).
    fn failed(&self, _r: &ResultDoc) -> Option<anyhow::Error> {
        None
    }
}

/// One measurement's circumstances, as [`run`] set them up.
pub struct At<'a> {
    pub plan: &'a ServerPlan,
    /// The data directory's stack, and the timeline's devices.
    pub devices: (&'a [String], &'a [String]),
    /// A name for this measurement's files, unique in the run.
    pub tag: String,
    pub ratio: Option<f64>,
    /// The server's settings as it reports them.
    pub settings: BTreeMap<String, String>,
    pub version: &'a str,
    pub data_bytes: u64,
    /// How the page cache was kept out, when the server reads through it.
    pub page_cache: Option<String>,
}

/// `e` (a client's "connection closed", a load's failure) with its cause in front when the
/// kernel's OOM killer killed part of the server in its memory cgroup: the cause, not the
/// symptom, is what the user acts on.
fn by_cause(server: &dyn Backend, e: anyhow::Error) -> anyhow::Error {
    match server.cgroup().and_then(|d| super::cgroup::oom_kills(&d)) {
        Some(o) => anyhow::anyhow!("{} (what failed: {e:#})", o.said(server.name())),
        None => e,
    }
}

/// The server of the plan in `target`, created (its directories, cgroup and initdb or
/// install-db), not started.
fn create(p: &ServerPlan, target: &Path) -> Result<Box<dyn Backend>> {
    let site = cluster::Site {
        owner: &p.owner,
        target,
        log_dir: p.log_dir.as_deref(),
        memory_limit: p.memory_limit,
        keep: p.keep,
    };
    Ok(match &p.bin {
        Bin::Mariadb(bin) => Box::new(backend::mariadb::Mariadb(Server::create(bin, &site)?)),
        Bin::Postgres(bin) => Box::new(backend::postgres::Postgres::create(
            bin,
            &site,
            p.setting_flag,
        )?),
    })
}

/// The `--fill` levels in turn, or the file system as found when there are none.
fn levels(fill: &[f64]) -> Vec<Option<f64>> {
    match fill.is_empty() {
        true => vec![None],
        false => fill.iter().map(|&l| Some(l)).collect(),
    }
}

/// One `--fill` level over the database as loaded: the filler beside the server's directory
/// (none when the use is there already), held while the level's measurements last — dropping
/// it removes the file — and the level it reached, measured once the filler was synced.
struct Level {
    _filler: Option<crate::target::Target>,
    asked: f64,
    reached: f64,
}

impl Level {
    fn fill(target: &Path, level: Option<f64>) -> Result<Option<Level>> {
        let Some(asked) = level else {
            return Ok(None);
        };
        let dir = crate::target::fill::beside(Some(target))?;
        // Random data of its own: a device that deduplicates must store the filler too.
        let seed = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        let (filler, reached) = crate::target::fill::fill_to(&dir, asked, seed)?;
        say!(
            "the file system holding {} is {reached:.1}% used (--fill {asked}%) as the measurements begin",
            dir.display()
        );
        Ok(Some(Level {
            _filler: filler,
            asked,
            reached,
        }))
    }

    /// The result named with the level it was measured at, and the level recorded.
    fn name(&self, r: &mut ResultDoc) {
        r.name = Some(format!(
            "{} · file system {:.1}% used (--fill {}%)",
            r.name.as_deref().unwrap_or("database run"),
            self.reached,
            self.asked
        ));
        r.fill = Some(crate::model::FillDoc {
            asked_pct: self.asked,
            used_pct: self.reached,
        });
    }
}

/// What tags one run beyond the load's own: a sweep's id, the setting and what it built.
#[derive(Default)]
pub struct Tags {
    pub params: BTreeMap<String, String>,
    pub notes: Vec<String>,
}

/// Runs `load` on the plan's server in `target`: the server, the load, one measurement per
/// ratio (each a cell to `hooks`), the storage cells; stored as it goes. The caller presents
/// the document, then ends as [`super::Outcome::result`] says.
pub fn run(
    p: &ServerPlan,
    load: &dyn Load,
    target: &Path,
    tags: Tags,
    hooks: &dyn crate::exec::Hooks,
) -> Result<super::Outcome> {
    // Opened before the server: a results database that cannot be written is told at once.
    let store = match p.output.no_store {
        true => None,
        false => Some(Store::open(p.output.db.as_deref())?),
    };
    say!(
        "{}; the server runs as user {}",
        p.bin.describe(),
        p.owner.name
    );
    let started = SystemTime::now();
    let mut server = create(p, target)?;
    say!("server in {}", server.work().display());
    server.restart(&p.settings, &p.settings)?;
    let version = server.version()?;
    say!("loading: {}", load.loading());
    let loading = Instant::now();
    let tables = load
        .prepare(server.as_ref())
        .map_err(|e| by_cause(server.as_ref(), e))?;
    server
        .settle(load.database(), &tables)
        .map_err(|e| by_cause(server.as_ref(), e))?;
    let data_bytes = load
        .data_bytes(server.as_ref())
        .map_err(|e| by_cause(server.as_ref(), e))?;
    say!(
        "loaded {} in {}",
        units::iec(data_bytes),
        units::duration(loading.elapsed())
    );
    let buffers: Vec<(f64, u64)> = p
        .ratios
        .iter()
        .map(|&r| (r, server.buffer(data_bytes, r).2))
        .collect();
    common::check_room(p.memory_limit, server.buffer(data_bytes, 1.0).0, &buffers)?;
    // Whether the page cache can answer for the storage: only when the server reads through it.
    let first = server.settings(&p.settings)?;
    let page_cache = (!server.direct(&first))
        .then(|| super::memory::page_cache(p.memory_limit, p.ram, data_bytes, server.name()));

    let system = iogauge_sysinfo::capture(Some(server.data()));
    let device_names = common::device_names(&system);
    let timeline_devices = common::timeline_devices(&system, server.log_dir());
    let mut params = load.params();
    params.extend(tags.params);
    if !p.fill.is_empty() {
        let asked: Vec<String> = p.fill.iter().map(|l| format!("{l}%")).collect();
        params.insert("fill".into(), asked.join(","));
    }
    params.insert(
        format!("{}.server", load.command().trim_start_matches("db-")),
        server.name().into(),
    );
    let header = super::header(&p.output, load.command(), started, system, params);
    let mut rec = Recorder::start(store, &header)?;
    crate::interrupt::measuring();
    let mut results = Vec::new();
    let mut buffers = Vec::new();
    let mut failure = None;
    for level in levels(&p.fill) {
        if failure.is_some() || crate::interrupt::requested().is_some() {
            break;
        }
        let filled = match Level::fill(target, level) {
            Ok(f) => f,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        failure = common::sweep(&p.ratios, &mut rec, &mut results, |i, n, ratio| {
            let mut set = p.settings.clone();
            if let Some(r) = ratio {
                let (k, v, _) = server.buffer(data_bytes, r);
                set.push((k.into(), v));
            }
            server.restart(&set, &p.settings)?;
            let recorded = server.settings(&p.settings)?;
            say!(
                "[{}/{n}] {} · {} {}{}",
                i + 1,
                load.describe(),
                server.buffer(data_bytes, 1.0).0,
                server
                    .buffer_bytes(&recorded)
                    .map_or("?".into(), units::iec),
                ratio.map_or(String::new(), |r| format!(
                    " ({} of the data)",
                    super::pct(r)
                ))
            );
            // Each measurement is a cell to the hooks: a rebuild starts under the first, after the
            // load, and keeps each one's window.
            hooks.before_cell()?;
            let mut at = At {
                plan: p,
                devices: (device_names.as_slice(), timeline_devices.as_slice()),
                tag: i.to_string(),
                ratio,
                settings: recorded,
                version: &version,
                data_bytes,
                page_cache: page_cache.as_ref().map(|c| c.0.clone()),
            };
            // `--repeat`: the same measurement again on the same loaded database, settled as after
            // the load (VACUUM ANALYZE, ANALYZE TABLE), the repeats joined into one result.
            let mut repeated = || -> Result<Option<ResultDoc>> {
                if load.repeats_itself() || p.repeat < 2 {
                    return load.measure(server.as_ref(), &at);
                }
                let mut runs = Vec::new();
                for k in 0..p.repeat {
                    if crate::interrupt::requested().is_some() {
                        break;
                    }
                    if k > 0 {
                        server.settle(load.database(), &tables)?;
                    }
                    say!("repeat {}/{}", k + 1, p.repeat);
                    at.tag = format!("{i}-{k}");
                    match load.measure(server.as_ref(), &at)? {
                        Some(r) => runs.push(r),
                        None => break,
                    }
                }
                Ok(super::repeats::repeated(runs))
            };
            let mut measured = repeated();
            if let (Ok(Some(r)), Some(f)) = (&mut measured, &filled) {
                f.name(r);
            }
            hooks.cell_done(false);
            if let Ok(Some(_)) = &measured {
                buffers.push(server.buffer_bytes(&at.settings));
            }
            measured
        })?;
    }
    failure = failure.map(|e| by_cause(server.as_ref(), e));
    if failure.is_none() {
        failure = results.iter().find_map(|r| load.failed(r));
    }
    let kept = server.kept().then(|| server.work().to_path_buf());
    // A kept server comes with the commands that use it, said and written beside it.
    let again = match server.kept() {
        true => {
            let a = server.again(load.database(), &p.settings);
            let script = super::backend::start_script(server.name(), &a);
            server
                .work_dir()?
                .replace(super::backend::START_SCRIPT, None)
                .and_then(|mut f| Ok(std::io::Write::write_all(&mut f, script.as_bytes())?))?;
            Some(a)
        }
        false => None,
    };
    let cgroup = server.cgroup();
    let cells = p.bin.cells(load.threads());
    let name = server.name();
    drop(server); // stopped and removed before the storage cells need the space
    let mut notes = tags.notes;
    notes.extend(common::server_notes(
        kept.as_deref().zip(again.as_ref()),
        cgroup.as_deref(),
        p.memory_limit,
    ));
    if let Some((note, _)) = &page_cache {
        notes.push(note.clone());
    }
    notes.extend(load.notes(data_bytes, name));
    common::Ending {
        header,
        rec,
        results,
        notes,
        failure,
        cache: page_cache.map(|c| c.1),
        buffers,
        buffer_name: p.bin.buffer_name(),
        cells,
        target,
        output: &p.output,
        data_bytes,
        storage: p.storage,
        hooks,
    }
    .finish()
}
