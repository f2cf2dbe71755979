//! What `db pgbench` and `db sysbench` share, whichever server they drive: the checks of what
//! the user typed about the server (settings, log directory, memory limit), how the page cache
//! was kept out (a note and a finding), the storage cells beside the TPS, a client run to its
//! end or to a Ctrl-C, the server's CPU from /proc, and the loop over buffer shares.

use super::backend::Cells;
use crate::error::usage;
use crate::model::{ResultDoc, RunDoc};
use crate::store::Recorder;
use crate::units;
use crate::workload::BlockSize;
use anyhow::Result;
use iogauge_analyze::{Finding, Kind as FindingKind};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A buffer (shared_buffers, innodb_buffer_pool_size) may take at most this share of a
/// --memory-limit: the rest is for the server's other memory and the page cache that makes the
/// limit mean something.
const BUFFER_OF_LIMIT: f64 = 0.75;

/// `KEY=VALUE` settings as typed after `flag`, keys as the server reads them (`key`: `None`
/// when it is no setting's name); a key the server would take for one iogauge sets (`owns`)
/// is refused with `why` (iogauge sets it, because …); `example` shows the form. A value
/// with a control character (a newline) is refused: it would end the line it is written on.
/// All checked before anything is written.
pub fn settings(
    typed: &[String],
    flag: &str,
    key: impl Fn(&str) -> Option<String>,
    owns: impl Fn(&str) -> bool,
    why: &str,
    example: &str,
) -> Result<Vec<(String, String)>> {
    typed
        .iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                let Some(k) = key(k.trim()) else {
                    return Err(usage(format!(
                        "{flag} '{}' is not a setting's name (letters, digits and _); write e.g. {flag} {example}",
                        k.trim().escape_debug()
                    )));
                };
                if owns(&k) {
                    return Err(usage(format!("{flag} {k}: iogauge sets it, {why}")));
                }
                let v = v.trim();
                if v.chars().any(char::is_control) {
                    return Err(usage(format!(
                        "{flag} {k}: the value holds a control character (a newline?); give it on one line"
                    )));
                }
                Ok((k, v.to_string()))
            }
            _ => Err(usage(format!(
                "{flag} '{}' is not KEY=VALUE; write e.g. {flag} {example}",
                s.escape_debug()
            ))),
        })
        .collect()
}

/// fio's JSON describes IO jobs: a database run, whose results are transactions, is refused
/// in that format before anything starts (fio-plot would draw zeros).
pub fn check_output(output: &crate::cli::OutputArgs) -> Result<()> {
    match output.format() {
        Some(crate::cli::OutputFormat::FioJson) => Err(usage(
            "--format fio-json: a database run's results are transactions, for which fio's JSON has no place; use --json or -o FILE.json",
        )),
        _ => Ok(()),
    }
}

/// A directory the user named for the server's log (--wal-dir, --log-dir): it must exist.
pub fn check_dir(flag: &str, dir: Option<&Path>) -> Result<()> {
    match dir {
        Some(d) if !d.is_dir() => Err(usage(format!(
            "{flag} {} is not a directory; create it first",
            d.display()
        ))),
        _ => Ok(()),
    }
}

/// --memory-limit needs root: the cgroup is made by iogauge.
pub fn check_memory_limit(limit: Option<u64>) -> Result<()> {
    match limit.is_some() && !super::is_root() {
        true => Err(usage(
            "--memory-limit puts the server in a memory cgroup, which needs root",
        )),
        false => Ok(()),
    }
}

/// Each buffer share of the data (`ratio`, its bytes) must leave room under the limit:
/// a server whose buffer alone fills its cgroup is killed or swaps, and measures neither.
pub fn check_room(limit: Option<u64>, buffer: &str, shares: &[(f64, u64)]) -> Result<()> {
    let Some(limit) = limit else { return Ok(()) };
    match shares
        .iter()
        .find(|(_, b)| *b as f64 > BUFFER_OF_LIMIT * limit as f64)
    {
        Some((r, b)) => Err(usage(format!(
            "--memory-limit {} leaves no room beside {buffer} of {} ({}% of the data); give a larger limit or a smaller ratio",
            units::iec(limit),
            units::iec(*b),
            r * 100.0
        ))),
        None => Ok(()),
    }
}

/// The database's own page-cache finding in place of the generic one: the generic check of a
/// buffered result knows nothing of the cgroup. `db_results` are the first results, the
/// database's; `own` is `None` when the server does not read through the page cache.
fn replace_cache_finding(doc: &mut RunDoc, db_results: usize, own: Option<&Finding>) {
    let of_db =
        |f: &Finding| f.kind == FindingKind::Cache && f.result.is_some_and(|i| i < db_results);
    doc.findings.retain(|f| !of_db(f));
    for r in doc.results.iter_mut().take(db_results) {
        r.findings.retain(|f| f.kind != FindingKind::Cache);
    }
    if let (true, Some(f)) = (db_results > 0, own) {
        doc.findings.push(f.clone());
    }
}

/// Measures `cells` on `target` over a file as large as the database, each for `time`; the
/// storage results and notes, as a run document of their own.
pub fn storage(
    cells: &Cells,
    target: &Path,
    output: &crate::plan::Output,
    data_bytes: u64,
    time: Duration,
    hooks: &dyn crate::exec::Hooks,
) -> Result<RunDoc> {
    use crate::suite::{Group, Layout, Length, Op, Suite};
    let group = |title: &str, op, bs, threads, sync, range, layout| Group {
        title: title.into(),
        layout,
        origin: None,
        ops: vec![op],
        read_pct: Vec::new(),
        bs: vec![bs],
        threads: vec![threads],
        iodepth: vec![1],
        sync,
        odsync: false,
        direct: None,
        length: Length::Time(time),
        range,
        options: Vec::new(),
        shape: Default::default(),
        together: None,
        rate: None,
        think: None,
        prio: None,
        flow: None,
        placement: None,
        engine: None,
        distribution: None,
        beside: Default::default(),
        no_readback: false,
        tolerate: None,
        atomic: false,
    };
    let page = units::iec(cells.page).replace(".0", "");
    let suite = Suite {
        name: "db-storage".into(),
        description: format!(
            "the storage under the database: the commit's writes + syncs, {page} random reads"
        ),
        size: None,
        groups: vec![
            group(
                &cells.commit_title,
                Op::Write,
                BlockSize::known(cells.commit_bs),
                1,
                Some((cells.commit_sync, 1)),
                Some(16 << 20),
                Layout::Fsync,
            ),
            group(
                &format!("{page} random reads at the clients' concurrency"),
                Op::Randread,
                BlockSize::known(cells.page),
                cells.threads,
                None,
                None,
                Layout::Plain,
            ),
        ],
        rounds: None,
    };
    let plan = crate::plan::storage_cells(suite, target, data_bytes, output)?;
    say!("storage cells on {}:", target.display());
    crate::exec::measure(&plan, hooks)
}

/// The end of a database run, after its server has gone: the storage cells (unless the run
/// failed or was interrupted; a failure of theirs is a note), the findings with the database's
/// own page-cache finding, and the document stored — the same for pgbench and sysbench.
pub struct Ending<'a> {
    pub header: RunDoc,
    pub rec: Recorder,
    /// The database's results, each stored already.
    pub results: Vec<ResultDoc>,
    pub notes: Vec<String>,
    pub failure: Option<anyhow::Error>,
    /// How the page cache was kept out, when the server reads through it.
    pub cache: Option<Finding>,
    /// Per database result: the server's buffer in bytes, as it reported it, and the
    /// setting's name ([`buffer_finding`]).
    pub buffers: Vec<Option<u64>>,
    pub buffer_name: &'static str,
    pub cells: Cells,
    pub target: &'a Path,
    pub output: &'a crate::plan::Output,
    pub data_bytes: u64,
    /// Length of each storage cell; `None`: no cells.
    pub storage: Option<Duration>,
    /// The executor's hooks for the storage cells.
    pub hooks: &'a dyn crate::exec::Hooks,
}

impl Ending<'_> {
    pub fn finish(self) -> Result<super::Outcome> {
        let Ending {
            header,
            mut rec,
            mut results,
            mut notes,
            failure,
            ..
        } = self;
        let db_results = results.len();
        let run_cells = self
            .storage
            .filter(|_| failure.is_none() && crate::interrupt::requested().is_none());
        if let Some(t) = run_cells {
            match storage(
                &self.cells,
                self.target,
                self.output,
                self.data_bytes,
                t,
                &CellsOnly(self.hooks),
            ) {
                Ok(doc) => {
                    for r in doc.results {
                        rec.add(&r)?;
                        results.push(r);
                    }
                    notes.extend(doc.notes.into_iter().map(|n| format!("storage cells: {n}")));
                }
                Err(e) => notes.push(format!("the storage cells did not run: {e:#}")),
            }
        }
        let interrupted = failure.is_some() || crate::interrupt::requested().is_some();
        let mut doc = RunDoc {
            results,
            interrupted,
            notes,
            ..header
        };
        // What the caller watched beside the transactions and the storage cells (a rebuild)
        // joins the whole run, before its findings are made.
        self.hooks.measured(&mut doc);
        crate::analysis::annotate(&mut doc, None);
        replace_cache_finding(&mut doc, db_results, self.cache.as_ref());
        for (i, b) in self.buffers.iter().enumerate().take(db_results) {
            let held =
                b.and_then(|b| super::memory::buffer_finding(self.buffer_name, b, self.data_bytes));
            if let Some(f) = held.map(|f| f.for_result(i)) {
                doc.results[i].findings.push(f.clone());
                doc.findings.push(f);
            }
        }
        super::Outcome::conclude(rec, doc, failure)
    }
}

/// The caller's hooks for the storage cells, as cells of the database's run: what it watched
/// joins the run's whole document ([`Ending::finish`]), not the cells' own.
struct CellsOnly<'a>(&'a dyn crate::exec::Hooks);

impl crate::exec::Hooks for CellsOnly<'_> {
    fn found_before_run(&self, f: &[Finding]) {
        self.0.found_before_run(f)
    }

    fn checked(&self) -> Result<()> {
        self.0.checked()
    }

    fn before_cell(&self) -> Result<()> {
        self.0.before_cell()
    }

    fn peer_may_stop(&self) -> bool {
        self.0.peer_may_stop()
    }

    fn peer_done(&self) -> bool {
        self.0.peer_done()
    }

    fn cell_done(&self, stopped_by_peer: bool) {
        self.0.cell_done(stopped_by_peer)
    }
}

/// The notes of a server that has gone: kept (--keep) and its memory cgroup.
pub fn server_notes(
    kept: Option<(&Path, &super::backend::Again)>,
    cgroup: Option<&Path>,
    memory_limit: Option<u64>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some((k, a)) = kept {
        notes.push(format!(
            "the server's directory was kept (--keep) in {}: start it with `sh {}`, connect with `{}`, stop it with `{}` (on its own socket, TCP off; the commands are in {} too)",
            k.display(),
            super::backend::sh_word(&k.join(super::backend::START_SCRIPT).display().to_string()),
            a.connect,
            a.stop,
            super::backend::START_SCRIPT
        ));
    }
    if let (Some(dir), Some(limit)) = (cgroup, memory_limit) {
        notes.push(format!(
            "the server ran in the memory cgroup {} limited to {} (page cache included)",
            dir.display(),
            units::iec(limit)
        ));
    }
    notes
}

/// One measurement per buffer share (or one as configured, `None`), each by `measure`; every
/// result stored and said as it comes. Stops at a Ctrl-C, at a measurement that was
/// interrupted (`Ok(None)`) and at the first failure, which it returns.
pub fn sweep(
    ratios: &[f64],
    rec: &mut Recorder,
    results: &mut Vec<ResultDoc>,
    mut measure: impl FnMut(usize, usize, Option<f64>) -> Result<Option<ResultDoc>>,
) -> Result<Option<anyhow::Error>> {
    let steps: Vec<Option<f64>> = match ratios.is_empty() {
        true => vec![None],
        false => ratios.iter().map(|&r| Some(r)).collect(),
    };
    for (i, ratio) in steps.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        match measure(i, steps.len(), *ratio) {
            Ok(Some(r)) => {
                say!("[{}/{}] {}", i + 1, steps.len(), one_line(&r));
                rec.add(&r)?;
                results.push(r);
            }
            Ok(None) => break,
            Err(e) => return Ok(Some(e)),
        }
    }
    Ok(None)
}

/// How a benchmark client ended.
pub enum Ended {
    /// By itself, with its status.
    Itself(std::process::ExitStatus),
    /// At the user's interrupt: asked for its report so far, it gave it and ended with this
    /// status; `None` when it was killed (no report asked for, or none came).
    Stopped(Option<std::process::ExitStatus>),
}

/// Waits for a benchmark client to end, a measurement of `time`, its progress shown with the
/// last second's TPS when `tps` can say it. At an interrupt the client is sent `report` (a
/// signal name for `kill`) when it has one that makes it print what it measured so far and
/// end, else killed.
pub fn wait_client(
    mut child: std::process::Child,
    time: Duration,
    tps: &dyn Fn() -> Option<f64>,
    report: Option<&str>,
) -> Result<Ended> {
    let progress = super::progress::Progress::start(time);
    let began = std::time::Instant::now();
    let mut next = began;
    loop {
        if std::time::Instant::now() >= next {
            progress.at(began.elapsed(), tps());
            next += Duration::from_secs(1);
        }
        if let Some(s) = child.try_wait()? {
            return Ok(Ended::Itself(s));
        }
        if crate::interrupt::requested().is_some() {
            if let Some(sig) = report {
                let asked = std::process::Command::new("kill")
                    .arg(format!("-{sig}"))
                    .arg(child.id().to_string())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                // The report is printed at once; a client that has not ended within a few
                // seconds is killed, its report given up for.
                let until = std::time::Instant::now() + Duration::from_secs(5);
                while asked && std::time::Instant::now() < until {
                    if let Some(s) = child.try_wait()? {
                        return Ok(Ended::Stopped(Some(s)));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Ended::Stopped(None));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A window a Ctrl-C cut short, kept as what it is: the result says it was interrupted, and its
/// name how much of the window ran.
pub fn cut_short(doc: &mut ResultDoc, ran: Duration, window: Duration) {
    doc.interrupted = true;
    doc.name = doc.name.take().map(|n| {
        format!(
            "{n} · {} of the {} window (interrupted)",
            units::duration(ran),
            units::duration(window)
        )
    });
}

/// The devices the timeline follows: the data directory's stack, then the log directory's
/// devices not already in it.
pub fn timeline_devices(system: &iogauge_sysinfo::SystemInfo, log: Option<&Path>) -> Vec<String> {
    let mut names = device_names(system);
    if let Some(w) = log {
        for n in device_names(&iogauge_sysinfo::capture(Some(w))) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

/// The devices under the target of `system`, top of the stack first.
pub fn device_names(system: &iogauge_sysinfo::SystemInfo) -> Vec<String> {
    system
        .target
        .as_ref()
        .map(|t| t.devices.iter().map(|d| d.name.clone()).collect())
        .unwrap_or_default()
}

/// One database result, for the log on stderr (as `exec` logs each cell).
fn one_line(r: &ResultDoc) -> String {
    format!(
        "{} TPS · transaction p50 {} · p99 {}",
        units::count(r.iops),
        units::latency_known(r.lat_ns.p50 as f64),
        units::latency(r.lat_ns.p99 as f64)
    )
}

/// Why a database client (pgbench, sysbench) failed, as one line: a full file system under the
/// server's directories is named as such first (the server then dies and the client says
/// "Can't connect", or writes nothing at all, its own output being on the same disk), else the
/// client's own last lines, or that it said nothing.
pub fn client_failed(tool: &str, said: &str, dirs: &[&Path]) -> anyhow::Error {
    /// Below this, a file system is full for a database (its next WAL segment does not fit).
    const FULL: u64 = 1 << 20;
    let full = dirs.iter().find(|d| {
        std::fs::File::open(d)
            .and_then(|f| iogauge_engine::sys::free_bytes(&f))
            .is_ok_and(|free| free < FULL)
    });
    if let Some(d) = full {
        return anyhow::anyhow!(
            "{tool} failed because the file system under {} is full (no space left on the device); give the database a target with more room, or a smaller load",
            d.display()
        );
    }
    let said = super::process::last_lines(said, 3);
    // The space came back when the server rolled the statement back, but the client says why.
    const NO_SPACE: [&str; 4] = [
        "No space left on device",
        "Check free disk space",
        "could not extend file",
        "The table is full",
    ];
    if NO_SPACE.iter().any(|m| said.contains(m)) {
        return anyhow::anyhow!(
            "{tool} failed because the file system under {} ran out of space ({}); give the database a target with more room, or a smaller load",
            dirs.first().map(|d| d.display().to_string()).unwrap_or_default(),
            crate::units::quoted(&said, 300)
        );
    }
    match said.is_empty() {
        true => anyhow::anyhow!("{tool} failed and printed nothing"),
        false => anyhow::anyhow!("{tool} failed: {}", crate::units::quoted(&said, 400)),
    }
}

/// CPU seconds (user, system) between two readings of [`cpu_of`].
pub fn cpu_since(before: Option<(f64, f64)>, after: Option<(f64, f64)>) -> Option<(f64, f64)> {
    match (before, after) {
        (Some(b), Some(a)) => Some(((a.0 - b.0).max(0.0), (a.1 - b.1).max(0.0))),
        _ => None,
    }
}

/// What running counters moved between two readings, by name.
pub fn counter_delta(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect()
}

/// One measurement of a load on a server, as every load has it, for [`transactions_result`].
pub struct Transactions<'a> {
    /// The result's name, e.g. "sysbench oltp_read_write · 4 × 100000 rows · 8 threads".
    pub name: String,
    pub server: &'a dyn super::backend::Backend,
    pub settings: &'a BTreeMap<String, String>,
    pub data_bytes: u64,
    pub clients: u32,
    pub time: Duration,
    pub transactions: u64,
    pub runtime_s: f64,
    /// Whole transactions' latencies, in nanoseconds.
    pub hist: &'a crate::measure::Hist,
    /// Transactions per second, second by second.
    pub timeseries: Vec<crate::model::Sample>,
    pub cpu: Option<(f64, f64)>,
    /// What each device of the data directory's stack did.
    pub devices: Vec<crate::model::DeviceDoc>,
    pub timeline: crate::model::TimelineDoc,
    /// The load's name as its engine, e.g. "sysbench", "tpcc".
    pub engine: &'a str,
    /// The share of its transactions that only read, in percent.
    pub mix_read_pct: u8,
}

/// A load's measurement as a result: `iops` are its transactions per second, its latencies
/// whole transactions, its CPU the server's, its target the server's data directory. Each
/// load adds its own section.
pub fn transactions_result(t: Transactions) -> ResultDoc {
    use crate::measure::{self, LatNs};
    use crate::model::{CpuDoc, EngineDoc, FineDoc, TargetDoc, WorkloadDoc};
    let s = t.server;
    let devices = t.devices;
    let (user, sys) = t.cpu.unwrap_or((0.0, 0.0));
    ResultDoc {
        name: Some(t.name),
        workload: WorkloadDoc {
            rw: match t.mix_read_pct {
                100 => crate::workload::Rw::Randread,
                _ => crate::workload::Rw::Randrw,
            },
            bs: s.page(),
            bs_mix: None,
            seq_run: None,
            seq_skip: None,
            offset_increment: None,
            threads: t.clients,
            iodepth: 1,
            engine: t.engine.into(),
            direct: s.direct(t.settings),
            mix_read_pct: t.mix_read_pct,
            sync: None,
            sync_every: None,
            odsync: false,
            atomic: false,
            seed: 0,
            time_s: Some(t.time.as_secs_f64()),
            data_bytes: None,
            ramp_s: 0.0,
            interval_s: 1.0,
            rate_iops: None,
            rate_process: None,
            distribution: "uniform".into(),
            think: None,
            prio: None,
            flow: None,
            placement: None,
            zones: None,
            zbd: None,
            sprandom: None,
            content: None,
        },
        target: TargetDoc {
            path: s.data().display().to_string(),
            absolute_path: Some(s.data().display().to_string()),
            device: devices.first().map(|d| d.name.clone()),
            kind: "directory".into(),
            created: true,
            offset_bytes: 0,
            range_bytes: t.data_bytes,
            logical_block_size: iogauge_sysinfo::logical_block_size_for(s.data()).unwrap_or(512),
            files: 1,
        },
        iops: t.transactions as f64 / t.runtime_s.max(1e-9),
        tps: Some(t.transactions as f64 / t.runtime_s.max(1e-9)),
        bw_bytes: 0.0,
        ios: t.transactions,
        bytes: 0,
        runtime_s: t.runtime_s,
        lat_ns: LatNs::of(t.hist),
        lat_hist: measure::buckets(t.hist),
        read: None,
        write: None,
        trim: None,
        sync: None,
        service_lat_ns: None,
        cpu: CpuDoc::new(user, sys, t.transactions),
        timeseries: t.timeseries,
        interval_hists: Vec::new(),
        // The loads report whole seconds only: no finer bins to time a stall by.
        fine: FineDoc::default(),
        engine: EngineDoc {
            name: t.engine.into(),
            ..EngineDoc::default()
        },
        interrupted: false,
        error: None,
        io_path: s.io_path(t.settings),
        findings: Vec::new(),
        repeats: Vec::new(),
        devices,
        others: None,
        kernel_threads: Vec::new(),
        stats: BTreeMap::new(),
        pg: None,
        sysbench: None,
        tpcc: None,
        verify: None,
        timeline: Some(Box::new(t.timeline)),
        together: None,
        fill: None,
        ignored_errors: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_pairs_and_own_ones_are_refused() {
        let low = |k: &str| Some(k.to_ascii_lowercase());
        let port = |k: &str| k == "port";
        let typed = vec!["Shared_Buffers = 1MB".to_string()];
        let s = settings(&typed, "--x", low, port, "because", "a=b").unwrap();
        assert_eq!(s, vec![("shared_buffers".into(), "1MB".into())]);
        let e = settings(&["port=1".into()], "--x", low, port, "because", "a=b");
        assert!(e.unwrap_err().to_string().contains("iogauge sets it"));
        let e = settings(&["a=1\nport=2".into()], "--x", low, port, "", "a=b").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(!e.to_string().contains('\n'), "{e}");
        let e = settings(&["a b=1".into()], "--x", |_| None, port, "", "a=b").unwrap_err();
        assert!(e.to_string().contains("is not a setting's name"), "{e}");
        let e = settings(&["nonsense".into()], "--x", low, port, "", "a=b").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e
            .to_string()
            .contains("is not KEY=VALUE; write e.g. --x a=b"));
    }

    #[test]
    fn a_buffer_must_leave_room_under_the_limit() {
        assert!(check_room(None, "b", &[(1.0, u64::MAX)]).is_ok());
        assert!(check_room(Some(100), "b", &[(0.5, 75)]).is_ok());
        let e = check_room(Some(100), "shared_buffers", &[(0.5, 75), (1.0, 76)]).unwrap_err();
        assert!(
            e.to_string()
                .contains("shared_buffers of 76 B (100% of the data)"),
            "{e}"
        );
    }
}
