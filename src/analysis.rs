//! Findings for iogauge's documents: turns results and runs into the plain numbers the checks of
//! `crates/analyze` take, and their findings back into the JSON the run document stores.
//!
//! Per result ([`result_findings`]): `stall` from the 100 ms completion bins, `steady` from the
//! per-interval IOPS (SNIA PTS window), `cache` from buffered IO against RAM, `integrity` from
//! `--verify`'s checks, `sparse` from the
//! data the read target holds. Across the results of a run ([`run_findings`]): `ceiling` along
//! threads, queue depth or block size within groups of otherwise identical workloads, `gap` in
//! block size × threads tables, `outlier` from the statistics over repeats. [`annotate`] does both
//! and puts each finding where it belongs: all in the run's list, and those about one result also
//! in that result's list.
mod devices;
pub use devices::{misaligned, scaling_evidence};
mod integrity;
mod limits;
pub use limits::io_limit;
mod rebuild;
pub mod run;
pub mod source;
pub mod streams;

use crate::model::{ResultDoc, RunDoc, WorkloadDoc};
use crate::units;
use iogauge_analyze::{CeilingPoint, Finding, Matrix, Metric, Thresholds};
use iogauge_sysinfo::SystemInfo;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Findings about one result: stall, steady, cache and sparse. `data_bytes` is how much of the
/// target range holds data by SEEK_DATA/SEEK_HOLE, when known (`Target::data_bytes`); without it
/// there is no sparse check.
pub fn result_findings(
    r: &ResultDoc,
    system: &SystemInfo,
    data_bytes: Option<u64>,
    th: &Thresholds,
) -> Vec<Finding> {
    let mut found = Vec::new();
    // Judged against the stack its IO went to: the run's target's, or for a stream or a cell
    // on a target of its own that target's (`system.streams`); the sum of streams on several
    // targets against none, since no one stack saw it all.
    let elsewhere = r.together.as_ref().is_some_and(|t| t.elsewhere());
    let own = |path: &str| system.streams.iter().find(|s| s.path == path);
    let stack = match r.together.as_ref().filter(|t| t.elsewhere()) {
        Some(t) if t.sum => None,
        Some(t) => t.targets.first().and_then(|p| own(p)),
        None => own(&r.target.path).or(system.target.as_ref()),
    };
    let swapped;
    let system = match stack.map(|t| &t.path) == system.target.as_ref().map(|t| &t.path) {
        true => system,
        false => {
            swapped = SystemInfo {
                target: stack.cloned(),
                ..system.clone()
            };
            &swapped
        }
    };
    let cpu = iogauge_analyze::CpuBins {
        run: &r.fine.cpu_run,
        wait: &r.fine.cpu_wait,
        others: &r.fine.cpu_others,
        cpus: r.fine.cpus.or(system.cpu_count).map_or(0.0, f64::from),
        machine: match r.fine.cpus {
            Some(_) => system.cpu_count.map_or(0.0, f64::from),
            None => 0.0,
        },
        in_flight: &r.fine.in_flight,
        worker: system.target.as_ref().is_some_and(|t| t.worker_completes()),
    };
    found.extend(iogauge_analyze::stalls(&r.fine.ios, r.fine.bin_s, cpu, th));
    // A fixed amount of data moved in a moment (a timed result is as long as it was asked to be).
    found.extend(iogauge_analyze::short(
        r.runtime_s,
        r.ios,
        r.workload.time_s.is_some() || r.is_db(),
        th,
    ));
    // A pgbench result's rate is transactions, which have no size.
    let bytes_per_io = (r.iops > 0.0 && !r.is_db()).then(|| r.bw_bytes / r.iops);
    // Repeats run one after another with their 100 ms bins joined: a step where one repeat ends
    // and the next begins is a repeat unlike the others (the `outlier` check's to name), not a
    // device changing its rate while it ran.
    let joints: Vec<f64> = r
        .repeats
        .iter()
        .scan(0.0, |t, x| {
            *t += x.runtime_s;
            Some(*t)
        })
        .take(r.repeats.len().saturating_sub(1))
        .collect();
    let at_joint = |f: &Finding| {
        let at = f.evidence.get("change_s").copied().unwrap_or(f64::NAN);
        let slack = f.evidence.get("bin_s").copied().unwrap_or(0.0).max(1.0);
        joints.iter().any(|j| (at - j).abs() <= slack)
    };
    found.extend(
        iogauge_analyze::regime(
            &r.fine.ios,
            r.fine.bin_s,
            bytes_per_io,
            r.write.as_ref().is_some_and(|w| w.ios > 0),
            system.target.as_ref().and_then(|t| t.filesystem.as_deref()),
            cpu,
            th,
        )
        .into_iter()
        .filter(|f| !at_joint(f)),
    );
    let (iops, interval_s) = whole_intervals(r);
    let w = &r.workload;
    found.extend(iogauge_analyze::steady(
        &iops,
        interval_s,
        iogauge_analyze::STEADY_WINDOW,
        w.rw.writes(w.mix_read_pct) && !r.is_db(),
        th,
    ));
    // On a device in memory a rate that moved is the CPU's, not the device's state.
    if let Some(memory) = system.target.as_ref().and_then(|t| t.memory()) {
        iogauge_analyze::on_memory(&mut found, &memory);
    }
    let read_bw = r
        .read
        .as_ref()
        .map_or_else(|| if reads(w) { r.bw_bytes } else { 0.0 }, |o| o.bw_bytes);
    // The null engine moves nothing through the page cache: no cache to warn of.
    found.extend(iogauge_analyze::cache(
        !w.direct && w.engine != "null",
        r.target.all_bytes(),
        system.mem_total_bytes.unwrap_or(0),
        read_bw,
        // No device rating is known; the RAM check is the one that applies.
        None,
        th,
    ));
    if let Some(data) = data_bytes.filter(|_| reads(w) && r.target.kind == "file") {
        let range = r.target.range_bytes;
        found.extend(iogauge_analyze::sparse(
            range,
            allocated_bytes(&r.target.path, range).unwrap_or(data),
            Some(data),
            th,
        ));
    }
    // A stream of several that ran at once has no devices of its own: the devices saw the
    // sum, which is judged as one result — unless its streams went to targets of their own,
    // where the run's stack saw only part of it (docs/streams.md).
    if r.together.as_ref().is_none_or(|t| t.sum && !elsewhere) {
        found.extend(devices::findings(r, system));
        found.extend(limits::findings(r, system));
    }
    found.extend(rate_shortfall(r));
    found.extend(integrity::findings(r));
    if let Some(t) = &r.timeline {
        found.extend(checkpoint_findings(t, th));
        // A stall inside a dip that a checkpoint finding explains is the same event: it is
        // named once, with its cause (a second of slack: the two clocks are the run's, read
        // from different counters).
        let explained: Vec<(f64, f64)> = found
            .iter()
            .filter(|f| f.kind == iogauge_analyze::Kind::Checkpoint)
            .filter_map(|f| Some((*f.evidence.get("start_s")?, *f.evidence.get("end_s")?)))
            .collect();
        found.retain(|f| {
            let (Some(&s), Some(&d)) = (f.evidence.get("start_s"), f.evidence.get("duration_s"))
            else {
                return true;
            };
            f.kind != iogauge_analyze::Kind::Stall
                || !explained
                    .iter()
                    .any(|&(a, b)| s < b + 1.0 && s + d > a - 1.0)
        });
    }
    found.extend(client_finding(r, th));
    if r.is_db() {
        // A pgbench result counts transactions: its rates are TPS, not IOPS.
        for f in found.iter_mut().filter(|f| {
            matches!(
                f.kind,
                iogauge_analyze::Kind::Steady
                    | iogauge_analyze::Kind::Stall
                    | iogauge_analyze::Kind::Regime
            )
        }) {
            f.summary = f.summary.replace("IOPS", "TPS");
            if f.kind == iogauge_analyze::Kind::Steady
                && f.severity == iogauge_analyze::Severity::Warning
            {
                f.advice = "Transactions per second had not settled: run longer (--time), so checkpoints, autovacuum and a warming buffer cache are inside the measurement rather than at its edge.".into();
            }
        }
    }
    found
        .into_iter()
        .map(|f| named(f, r.name.as_deref()))
        .collect()
}

/// A TPC-C-derived run whose driver (iogauge's own terminals, on this machine) used more than
/// `client_cpu_share` of the machine's CPU over the window: the server did not have the machine
/// to itself, so the NOPM measures the client too.
fn client_finding(r: &ResultDoc, th: &Thresholds) -> Option<Finding> {
    let t = r.tpcc.as_deref()?;
    let machine = t.window_s * f64::from(t.cpus.max(1));
    let share = |cpu_s: f64| cpu_s / machine.max(1e-9);
    let driver = share(t.driver_cpu_s);
    (t.window_s > 0.0 && driver > th.client_cpu_share).then(|| {
        Finding::new(
            iogauge_analyze::Kind::Client,
            iogauge_analyze::Severity::Warning,
            format!(
                "the TPC-C driver (iogauge's terminals) used {:.0}% of this machine's {} CPUs over the window ({:.0} µs a transaction), against the server's {:.0}%: the server did not have the machine to itself, so the NOPM measures the client too",
                driver * 100.0,
                t.cpus,
                t.driver_cpu_us_per_txn,
                share(t.server_cpu_s) * 100.0
            ),
            "Read the NOPM as the driver's and the server's together, or give the server the machine: fewer terminals, or --keying-times (terminals that think between transactions take little CPU).",
        )
        .with("driver_cpu_share", driver)
        .with("server_cpu_share", share(t.server_cpu_s))
        .with("cpus", f64::from(t.cpus))
    })
}

/// A database run's timeline judged for TPS dips that a checkpoint (or InnoDB's flushing) on a
/// saturated device explains.
fn checkpoint_findings(t: &crate::model::TimelineDoc, th: &Thresholds) -> Vec<Finding> {
    let flushes: Vec<iogauge_analyze::Flush> = t
        .flushes
        .iter()
        .map(|f| iogauge_analyze::Flush {
            label: format!("{} {}", f.what, f.n),
            start_s: f.start_s,
            end_s: f.end_s,
            rebuild: false,
        })
        .collect();
    dips(t, &flushes, th)
}

/// The timeline's TPS dips that `flushes` and a saturated device explain (the `checkpoint`
/// rule; a rebuild's dips by the same rule).
pub(crate) fn dips(
    t: &crate::model::TimelineDoc,
    flushes: &[iogauge_analyze::Flush],
    th: &Thresholds,
) -> Vec<Finding> {
    let tps: Vec<f64> = t.rows.iter().map(|r| r.tps).collect();
    // Per device: utilisation, queue and writes per step; an unread step counts as idle.
    let series: Vec<[Vec<f64>; 3]> = (0..t.devices.len())
        .map(|i| {
            let col = |g: fn(&crate::model::DeviceStep) -> f64| -> Vec<f64> {
                t.rows
                    .iter()
                    .map(|r| r.devices.get(i).copied().flatten().map_or(0.0, |d| g(&d)))
                    .collect()
            };
            [col(|d| d.util), col(|d| d.queue), col(|d| d.write_bytes_s)]
        })
        .collect();
    let devices: Vec<iogauge_analyze::DeviceSeries> = t
        .devices
        .iter()
        .zip(&series)
        .map(|(name, [util, queue, w])| iogauge_analyze::DeviceSeries {
            name,
            util,
            queue,
            write_bytes_s: w,
        })
        .collect();
    iogauge_analyze::checkpoint(t.step_s, &tps, flushes, &devices, th)
}

/// Share of a `--rate` below which the run is said to have fallen short.
const RATE_MET: f64 = 0.98;

/// A rate-controlled run that could not keep its schedule.
fn rate_shortfall(r: &ResultDoc) -> Option<iogauge_analyze::Finding> {
    let target = r.workload.rate_iops?;
    (r.iops < RATE_MET * target).then(|| {
        iogauge_analyze::Finding::new(
            iogauge_analyze::Kind::Rate,
            iogauge_analyze::Severity::Warning,
            format!(
                "the rate fell short: {} IOPS of the {} asked ({:.0}%); every IO late to its planned start counts that wait in its latency",
                crate::units::count(r.iops),
                crate::units::count(target),
                r.iops / target * 100.0
            ),
            "Lower --rate to what the storage sustains, or find what held it back (the latency over time, stalls).",
        )
        .with("target_iops", target)
        .with("achieved_iops", r.iops)
    })
}

/// Replaces, in each result of `doc` whose rate fell to another level and stayed (a `regime`
/// finding), the IOPS and bandwidth by that later level — what the device sustains — and its
/// repeats' in the same proportion. The names of the results changed.
pub fn use_baseline(doc: &mut RunDoc) -> Vec<String> {
    let mut changed = Vec::new();
    for r in &mut doc.results {
        let later = r.findings.iter().find_map(|f| {
            let e = &f.evidence;
            (f.kind == iogauge_analyze::Kind::Regime && e.contains_key("ios_above_later"))
                .then(|| e.get("after_iops").copied())
                .flatten()
        });
        let Some(after) = later.filter(|a| *a > 0.0 && r.iops > 0.0) else {
            continue;
        };
        let ratio = after / r.iops;
        r.iops = after;
        r.bw_bytes *= ratio;
        for x in &mut r.repeats {
            x.iops *= ratio;
            x.bw_bytes *= ratio;
        }
        changed.push(
            r.name
                .clone()
                .unwrap_or_else(|| r.workload.rw.name().to_string()),
        );
    }
    changed
}

/// What `--baseline` did, in one line: said either way, so a number is never read as the
/// other level.
pub fn baseline_said(used: &[String]) -> String {
    match used.is_empty() {
        // A rise, or a change the CPU made or may have made, is no level the device sustains.
        true => "--baseline: no result fell to a later level the device held, so every value is the run's whole average\n".into(),
        false => format!(
            "--baseline: IOPS and bandwidth are the later level after a change of regime for {}; the others are whole averages\n",
            used.join(", ")
        ),
    }
}

/// Findings across the results of a run: ceiling, gap and outlier.
pub fn run_findings(doc: &RunDoc, th: &Thresholds) -> Vec<Finding> {
    // Streams that ran at once shared the device: none of them, nor their sum, is a point of a
    // curve measured alone.
    let usable: Vec<usize> = (0..doc.results.len())
        .filter(|&i| {
            let r = &doc.results[i];
            !r.interrupted && r.ios > 0 && r.together.is_none()
        })
        .collect();
    let mut out = Vec::new();
    for dim in [Dim::Threads, Dim::Iodepth, Dim::Bs] {
        for (key, members) in groups(doc, &usable, &[dim]) {
            out.extend(ceiling(doc, &key, dim, &members, th));
        }
    }
    for (key, members) in groups(doc, &usable, &[Dim::Bs, Dim::Threads]) {
        out.extend(gaps(doc, &key, &members, th));
    }
    for (i, r) in doc.results.iter().enumerate() {
        for f in crate::repeats::outlier_findings(i, &r.stats) {
            out.push(named(f, r.name.as_deref()));
        }
    }
    out.extend(streams::interference(doc, th));
    out
}

/// Computes every finding of `doc` and stores them: all in `doc.findings` (each with its result
/// index when it is about one result), and in each result's own `findings` those about it.
/// `data_bytes` is as for [`result_findings`] and applies to every result (one target per run).
pub fn annotate(doc: &mut RunDoc, data_bytes: Option<u64>) {
    annotate_with(doc, data_bytes, &Thresholds::default());
}

/// [`annotate`] with the given thresholds.
pub fn annotate_with(doc: &mut RunDoc, data_bytes: Option<u64>, th: &Thresholds) {
    let mut all = Vec::new();
    // A suite of SNIA PTS rounds judges steady state across its rounds (`rounds_finding`); a
    // second verdict per cell from its own time series could only contradict it.
    let rounds = doc.rounds.is_some();
    // `probe cache` reads a fixed count of IOs at each working set, and warms each with a
    // pass: short by design, its answer the latencies, not a rate to quote.
    let probe = doc.suite.as_deref() == Some("probe-cache");
    for i in 0..doc.results.len() {
        let mut own = result_findings(&doc.results[i], &doc.system, data_bytes, th);
        if rounds {
            own.retain(|f| f.kind != iogauge_analyze::Kind::Steady);
        }
        if probe {
            own.retain(|f| f.kind != iogauge_analyze::Kind::Short);
        }
        for f in &mut own {
            f.result = Some(i);
        }
        all.extend(own.iter().cloned());
        doc.results[i].findings = own;
    }
    // Placement is the stack's, before any IO: about the run, not one result.
    all.extend(misaligned(&doc.system));
    // A rebuild under the cells: its own IO on the members is told as the rebuild's, in place
    // of what those cells' device findings said of it.
    // Those cells' findings are rewritten in place: taken again from them.
    let (rebuilt, under) = rebuild::findings(doc, th);
    all.retain(|f| !f.result.is_some_and(|i| under.contains(&i)));
    for &i in &under {
        all.extend(doc.results[i].findings.iter().cloned());
    }
    all.extend(rebuilt);
    for mut f in run_findings(doc, th) {
        use iogauge_analyze::Kind;
        // Rounds of a window that never reached steady state are a device still drifting, which
        // the `steady` warning says once; each of them unlike the others is that drift, not an
        // odd round (a 5-round window that never settled gave 20 outlier warnings).
        if f.kind == Kind::Outlier
            && doc
                .rounds
                .as_ref()
                .is_some_and(|r| r.steady_at_round.is_none())
        {
            continue;
        }
        // SNIA PTS runs are rounds, not repeats, and say so, numbered as the rounds table
        // numbers them (the window's third of five after six rounds is round 4).
        if let (Some(r), Kind::Outlier, Some(i)) = (&doc.rounds, f.kind, f.result) {
            let n = doc.results.get(i).map_or(0, |x| x.repeats.len());
            let k = f.evidence.get("repeat").copied().unwrap_or(0.0) as usize;
            let first = r.first_in_window();
            f.summary = f.summary.replacen(
                &format!("repeat {} of {n}", k + 1),
                &format!("round {} (of rounds {first}–{})", first + k, first + n - 1),
                1,
            );
        }
        // A gap or an outlier is about one cell; a ceiling is about a whole group.
        if let (Kind::Gap | Kind::Outlier | Kind::Interference, Some(i)) = (f.kind, f.result) {
            if let Some(r) = doc.results.get_mut(i) {
                r.findings.push(f.clone());
            }
        }
        all.push(f);
    }
    doc.findings = all;
}

/// The per-interval IOPS of whole intervals and the interval length: a last interval shorter
/// than half the others is a rate over a few milliseconds and would read as drift.
fn whole_intervals(r: &ResultDoc) -> (Vec<f64>, f64) {
    let interval = r.workload.interval_s;
    let mut prev = 0.0;
    let mut iops = Vec::with_capacity(r.timeseries.len());
    for s in &r.timeseries {
        if s.t_s - prev >= 0.5 * interval {
            iops.push(s.iops);
        }
        prev = s.t_s;
    }
    (iops, interval)
}

fn reads(w: &WorkloadDoc) -> bool {
    w.rw.read_pct(w.mix_read_pct) > 0
}

/// Bytes allocated to the file (st_blocks × 512) when the range is the whole file; otherwise
/// the allocation cannot be matched to the range.
fn allocated_bytes(path: &str, range: u64) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.len() == range).then(|| meta.blocks().saturating_mul(512))
}

fn named(mut f: Finding, name: Option<&str>) -> Finding {
    if let Some(n) = name {
        f.summary = format!("{n}: {}", f.summary);
    }
    f
}

/// A workload dimension that suites sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dim {
    Threads,
    Iodepth,
    Bs,
    /// Percentage of reads (Orion's read/write mixes).
    ReadPct,
}

impl Dim {
    fn name(self) -> &'static str {
        match self {
            Dim::Threads => "threads",
            Dim::Iodepth => "iodepth",
            Dim::Bs => "block size",
            Dim::ReadPct => "read percentage",
        }
    }

    pub(crate) fn of(self, w: &WorkloadDoc) -> u64 {
        match self {
            Dim::Threads => u64::from(w.threads),
            Dim::Iodepth => u64::from(w.iodepth),
            Dim::Bs => w.bs,
            Dim::ReadPct => u64::from(w.rw.read_pct(w.mix_read_pct)),
        }
    }
}

/// Everything that makes two workloads comparable; the swept (free) dimensions are `None`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    random: bool,
    read_pct: Option<u64>,
    bs: Option<u64>,
    threads: Option<u64>,
    iodepth: Option<u64>,
    engine: String,
    direct: bool,
    sync: Option<(String, u32)>,
    odsync: bool,
    /// Empty when results on different targets should match (runs compared).
    pub(crate) target: String,
}

impl Key {
    pub(crate) fn of(r: &ResultDoc, free: &[Dim]) -> Key {
        let w = &r.workload;
        let fixed = |d: Dim| (!free.contains(&d)).then(|| d.of(w));
        Key {
            random: w.rw.random(),
            read_pct: fixed(Dim::ReadPct),
            bs: fixed(Dim::Bs),
            threads: fixed(Dim::Threads),
            iodepth: fixed(Dim::Iodepth),
            engine: w.engine.clone(),
            direct: w.direct,
            sync: w
                .sync
                .zip(w.sync_every)
                .map(|(k, n)| (format!("{k:?}").to_lowercase(), n)),
            odsync: w.odsync,
            target: r.target.path.clone(),
        }
    }

    /// "randread 4K, 1 thread, iodepth 1", naming the fixed dimensions of a group.
    pub(crate) fn describe(&self) -> String {
        let mut s = match (self.random, self.read_pct) {
            (true, Some(100)) => "randread".to_string(),
            (true, Some(0)) => "randwrite".to_string(),
            (true, Some(p)) => format!("randrw {p}% reads"),
            (true, None) => "random".to_string(),
            (false, Some(100)) => "read".to_string(),
            (false, Some(0)) => "write".to_string(),
            (false, Some(p)) => format!("rw {p}% reads"),
            (false, None) => "sequential".to_string(),
        };
        if let Some(bs) = self.bs {
            let _ = write!(s, " {}", units::bs_label(bs));
        }
        if let Some(t) = self.threads {
            let _ = write!(s, ", {t} thread{}", crate::units::plural(t as usize));
        }
        if let Some(d) = self.iodepth {
            let _ = write!(s, ", iodepth {d}");
        }
        if let Some((kind, n)) = &self.sync {
            let _ = write!(s, ", {kind} every {n}");
        }
        if self.odsync {
            s.push_str(", O_DSYNC");
        }
        if !self.direct {
            s.push_str(", buffered");
        }
        s
    }
}

/// Results `among` grouped by everything but the `free` dimensions, in key order.
pub(crate) fn groups(doc: &RunDoc, among: &[usize], free: &[Dim]) -> BTreeMap<Key, Vec<usize>> {
    let mut out: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for &i in among {
        out.entry(Key::of(&doc.results[i], free))
            .or_default()
            .push(i);
    }
    out
}

/// A ceiling along `dim` in one group: IOPS along threads and queue depth, bandwidth along
/// block size (where falling IOPS is the expected shape).
fn ceiling(doc: &RunDoc, key: &Key, dim: Dim, members: &[usize], th: &Thresholds) -> Vec<Finding> {
    let distinct: BTreeSet<u64> = members
        .iter()
        .map(|&i| dim.of(&doc.results[i].workload))
        .collect();
    if distinct.len() < 3 {
        return Vec::new();
    }
    let points: Vec<CeilingPoint> = members
        .iter()
        .map(|&i| {
            let r = &doc.results[i];
            CeilingPoint {
                x: dim.of(&r.workload) as f64,
                iops: r.iops,
                bw_bytes: r.bw_bytes,
                mean_lat_s: r.lat_ns.mean / 1e9,
            }
        })
        .collect();
    let metric = if dim == Dim::Bs {
        Metric::Bandwidth
    } else {
        Metric::Iops
    };
    iogauge_analyze::ceiling(&points, dim.name(), metric, th)
        .into_iter()
        .map(|mut f| {
            f.summary = format!("{}: {}", key.describe(), f.summary);
            let start = f.evidence.get("starts_at_x").copied();
            match members
                .iter()
                .find(|&&i| Some(dim.of(&doc.results[i].workload) as f64) == start)
            {
                Some(&i) => f.for_result(i),
                None => f,
            }
        })
        .collect()
}

/// Gaps in the block size × threads table of one group.
fn gaps(doc: &RunDoc, key: &Key, members: &[usize], th: &Thresholds) -> Vec<Finding> {
    let wl = |i: usize| &doc.results[i].workload;
    let rows: Vec<u64> = members
        .iter()
        .map(|&i| wl(i).bs)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if rows.len() < 3 {
        return Vec::new();
    }
    let cols: Vec<u32> = members
        .iter()
        .map(|&i| wl(i).threads)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let cell = |bs: u64, threads: u32| {
        members
            .iter()
            .copied()
            .find(|&i| wl(i).bs == bs && wl(i).threads == threads)
    };
    let matrix = Matrix {
        rows: rows.clone(),
        cols: cols
            .iter()
            .map(|t| format!("{t} thread{}", crate::units::plural(*t as usize)))
            .collect(),
        values: rows
            .iter()
            .map(|&bs| {
                cols.iter()
                    .map(|&t| cell(bs, t).map(|i| doc.results[i].iops))
                    .collect()
            })
            .collect(),
        metric: Metric::Iops,
    };
    iogauge_analyze::gaps(&matrix, th)
        .into_iter()
        .map(|mut f| {
            f.summary = format!("{}: {}", key.describe(), f.summary);
            let bs = f.evidence.get("bs_bytes").map(|&b| b as u64);
            let col = f.evidence.get("series").map(|&c| c as usize);
            let at = bs.zip(col.and_then(|c| cols.get(c).copied()));
            match at.and_then(|(bs, t)| cell(bs, t)) {
                Some(i) => f.for_result(i),
                None => f,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
