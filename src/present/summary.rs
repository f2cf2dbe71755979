//! The human summary of a result: compact, aligned, and a unit on every number.

use crate::model::{EngineDoc, OpDoc, ResultDoc, RunDoc, TpccDoc};
use crate::units;
use std::fmt::Write;

/// One line naming the workload, e.g.
/// `randread · 4K blocks · 1 thread × 32 in flight · io_uring · O_DIRECT · 10 s`.
pub fn workload_line(r: &ResultDoc) -> String {
    let w = &r.workload;
    let mut s = String::new();
    if r.is_db() {
        // A database load has no block size or depth of its own: its name says what ran.
        let _ = write!(
            s,
            "{} · {} · {}",
            r.name.as_deref().unwrap_or(&w.engine),
            r.io_path,
            match w.time_s {
                Some(t) if r.interrupted => format!(
                    "ran {} of {}",
                    units::duration(std::time::Duration::from_secs_f64(r.runtime_s)),
                    units::duration(std::time::Duration::from_secs_f64(t))
                ),
                _ => format!(
                    "{} measured",
                    units::duration(std::time::Duration::from_secs_f64(r.runtime_s))
                ),
            }
        );
        return s;
    }
    let _ = write!(s, "{}", w.rw.name());
    if matches!(w.rw.name(), "rw" | "randrw") {
        let _ = write!(s, " {}% reads", w.mix_read_pct);
    }
    let _ = write!(
        s,
        " · {} blocks · {} thread{} × {} in flight · {} · {}",
        units::bs_label(w.bs),
        w.threads,
        crate::units::plural(w.threads as usize),
        w.iodepth,
        w.engine,
        if w.direct { "O_DIRECT" } else { "buffered" }
    );
    if let (Some(kind), Some(n)) = (w.sync, w.sync_every) {
        let name = match kind {
            crate::workload::SyncKind::Fsync => "fsync",
            crate::workload::SyncKind::Fdatasync => "fdatasync",
        };
        let _ = write!(
            s,
            " · {name} every {n} write{}",
            crate::units::plural(n as usize)
        );
    }
    if w.odsync {
        s.push_str(" · O_DSYNC");
    }
    if w.atomic {
        s.push_str(" · atomic writes (RWF_ATOMIC)");
    }
    if w.distribution != "uniform" {
        let _ = write!(s, " · {}", w.distribution);
    }
    let secs = |t: f64| units::duration(std::time::Duration::from_secs_f64(t));
    match (w.time_s, w.data_bytes) {
        // A run cut short says how long it ran, not how long it was asked to.
        (Some(t), _) if r.interrupted => {
            let _ = write!(s, " · ran {} of {}", secs(r.runtime_s), secs(t));
        }
        (Some(t), _) => {
            let _ = write!(s, " · {}", secs(t));
        }
        (_, Some(d)) => {
            let _ = write!(s, " · {} of data", units::iec(d));
        }
        _ => {}
    }
    s
}

fn lat_line(l: &crate::measure::LatNs) -> String {
    format!(
        "min {} · mean {} · p50 {} · p90 {} · p99 {} · p99.9 {} · p99.99 {} · max {}",
        // No latency is 0: a 0 was not measured (a report that gave no histogram).
        units::latency_known(l.min as f64),
        units::latency_known(l.mean),
        units::latency_known(l.p50 as f64),
        units::latency_known(l.p90 as f64),
        units::latency_known(l.p99 as f64),
        units::latency_known(l.p999 as f64),
        units::latency_known(l.p9999 as f64),
        units::latency_known(l.max as f64)
    )
}

fn op_line(o: &OpDoc) -> String {
    format!(
        "{} IOPS · {} · p50 {} · p99 {}",
        units::count(o.iops),
        units::bw(o.bw_bytes),
        units::latency(o.lat_ns.p50 as f64),
        units::latency(o.lat_ns.p99 as f64)
    )
}

/// The bytes a target's IO used: "256 MiB", or for several files "4 files × 256 MiB".
pub fn files_of(files: u32, each: u64) -> String {
    match files {
        0 | 1 => units::iec(each),
        n => format!("{n} files × {}", units::iec(each)),
    }
}

/// The full summary of one result.
pub fn result(r: &ResultDoc) -> String {
    let mut s = String::new();
    // A stream of several that ran at once is named (its cell is `NAME: pattern …`), and so
    // is their sum.
    let name = r.name.as_deref().unwrap_or_default();
    let _ = match r.together.as_ref() {
        Some(t) if t.sum => writeln!(s, "{} · at the same time · {}", t.cell, workload_line(r)),
        Some(_) => writeln!(
            s,
            "{} · {}",
            crate::analysis::streams::stream_of(name),
            workload_line(r)
        ),
        None => writeln!(s, "{}", workload_line(r)),
    };
    // A database result (db pgbench, db sysbench) counts transactions, which have no size.
    let (rate, unit, one) = match r.is_db() {
        true => ("TPS", "transactions", "transaction"),
        false => ("IOPS", "IOs", "IO"),
    };
    let _ = writeln!(s, "{}", target_line(r));
    let _ = writeln!(s);
    rate_rows(&mut s, r, rate);
    detail_rows(&mut s, r, unit);
    if let Some(t) = r.tpcc.as_deref() {
        tpcc_rows(&mut s, t);
    }
    // Whose CPU: iogauge's own for IO; for a database load, the server's (its processes,
    // from /proc), with TPC-C's driver — iogauge's terminals — apart.
    match r.together.as_ref().filter(|t| !t.sum) {
        // The process's CPU time holds every stream's work: it is the sum's to tell.
        Some(t) => row(
            &mut s,
            "CPU",
            format!("the streams' together: see {}", t.cell),
        ),
        None => row(
            &mut s,
            match r.is_db() {
                true => "server CPU",
                false => "CPU",
            },
            format!(
                "user {:.2} s · sys {:.2} s · {:.2} µs per {one}",
                r.cpu.user_s, r.cpu.sys_s, r.cpu.per_io_us
            ),
        ),
    }
    if let Some(t) = r.tpcc.as_deref() {
        row(
            &mut s,
            "driver CPU",
            format!(
                "{:.2} s over the window · {:.0} µs per transaction (iogauge's terminals)",
                t.driver_cpu_s, t.driver_cpu_us_per_txn
            ),
        );
    }
    row(&mut s, "engine", engine_line(&r.engine));
    for d in &r.devices {
        row(&mut s, "device", device_line(d));
    }
    // md's own threads work for the array beside iogauge's (raid5's on one CPU).
    if !r.kernel_threads.is_empty() {
        row(
            &mut s,
            "md thread",
            r.kernel_threads
                .iter()
                .map(|k| format!("{} on a CPU {:.0}% of the time", k.name, k.cpu * 100.0))
                .collect::<Vec<_>>()
                .join(" · "),
        );
    }
    if let Some(v) = &r.verify {
        row(&mut s, "verify", verify_line(v));
    }
    if r.interrupted {
        let _ = writeln!(s, "  (interrupted: these numbers cover the part that ran)");
    }
    s
}

/// One aligned row of the summary.
fn row(s: &mut String, k: &str, v: String) {
    let _ = writeln!(s, "  {k:<10}  {v}");
}

/// `target: PATH (what it is, the bytes used)`.
fn target_line(r: &ResultDoc) -> String {
    let t = &r.target;
    // The sum of streams on targets of their own went to all of them.
    if let Some(all) = r.together.as_ref().filter(|x| x.sum && x.elsewhere()) {
        let each: Vec<String> = all
            .targets
            .iter()
            .zip(&all.streams)
            .map(|(p, n)| format!("{p} ({n})"))
            .collect();
        return format!("targets: {}", each.join(", "));
    }
    format!(
        "target: {} ({}{}, {} used)",
        t.path,
        if r.is_db() {
            "database created and loaded by iogauge"
        } else if t.created && t.files > 1 {
            "test files created and filled by iogauge"
        } else if t.created {
            "test file created and filled by iogauge"
        } else {
            "existing "
        },
        if t.created {
            String::new()
        } else {
            t.kind.replace('_', " ")
        },
        files_of(t.files, t.range_bytes)
    )
}

/// How fast: the rate (and bandwidth), the rate asked for, latency, and the rate over time.
fn rate_rows(s: &mut String, r: &ResultDoc, rate: &str) {
    row(s, rate, format!("{} {rate}", units::count(r.iops)));
    if !r.is_db() {
        row(s, "bandwidth", units::bw(r.bw_bytes));
    }
    match (&r.service_lat_ns, r.workload.rate_iops) {
        (Some(svc), Some(rate)) => {
            row(
                s,
                "rate",
                format!(
                    "{} IOPS asked{}, {} achieved ({:.1}%)",
                    units::count(rate),
                    match r.workload.rate_process.as_deref() {
                        Some("poisson") => " as Poisson arrivals",
                        _ => "",
                    },
                    units::count(r.iops),
                    r.iops / rate * 100.0
                ),
            );
            row(
                s,
                "latency",
                format!("{} (from each IO's planned start)", lat_line(&r.lat_ns)),
            );
            row(s, "service", format!("{} (from submission)", lat_line(svc)));
        }
        _ => row(s, "latency", lat_line(&r.lat_ns)),
    }
    if r.timeseries.len() >= 3 {
        let iops: Vec<f64> = r.timeseries.iter().map(|t| t.iops).collect();
        let peak = iops.iter().copied().fold(0.0, f64::max);
        row(
            s,
            "over time",
            format!(
                "{} (per {}, 0 … {} {rate})",
                crate::report::sparkline_fit(&iops, 60),
                units::duration(std::time::Duration::from_secs_f64(r.workload.interval_s)),
                units::count(peak)
            ),
        );
    }
}

/// Each direction, the syncs, and what was moved in all.
fn detail_rows(s: &mut String, r: &ResultDoc, unit: &str) {
    if let (Some(rd), Some(wr)) = (&r.read, &r.write) {
        row(s, "reads", op_line(rd));
        row(s, "writes", op_line(wr));
    }
    if let Some(sy) = &r.sync {
        row(
            s,
            "syncs",
            format!(
                "{} syncs/s ({} in all) · p50 {} · p99 {} · max {}",
                units::count(sy.per_s),
                units::count(sy.count as f64),
                units::latency(sy.lat_ns.p50 as f64),
                units::latency(sy.lat_ns.p99 as f64),
                units::latency(sy.lat_ns.max as f64)
            ),
        );
    }
    row(
        s,
        "transfer",
        match r.is_db() {
            true => format!(
                "{} {unit} in {:.2} s",
                units::count(r.ios as f64),
                r.runtime_s
            ),
            false => format!(
                "{} {unit} · {} in {:.2} s",
                units::count(r.ios as f64),
                units::iec(r.bytes),
                r.runtime_s
            ),
        },
    );
}

/// TPC-C's own numbers: new orders and transactions per minute, each kind, the checks.
fn tpcc_rows(s: &mut String, t: &TpccDoc) {
    row(
        s,
        "NOPM",
        format!(
            "{} new orders/min (the terminals counted {})",
            units::count(t.nopm),
            units::count(t.driver_nopm)
        ),
    );
    row(
        s,
        "TPM",
        format!(
            "{} transactions/min ({}; the terminals counted {})",
            units::count(t.tpm),
            t.tpm_source,
            units::count(t.driver_tpm)
        ),
    );
    for k in &t.kinds {
        row(
            s,
            &k.name,
            format!(
                "{} ({:.1}%) · p50 {} · p99 {} · max {}",
                units::count(k.count as f64),
                k.share_pct,
                units::latency(k.p50_us * 1e3),
                units::latency(k.p99_us * 1e3),
                units::latency(k.max_us * 1e3)
            ),
        );
    }
    let failed: Vec<&str> = t
        .checks
        .iter()
        .filter(|c| !c.failures.is_empty())
        .map(|c| c.clause.as_str())
        .collect();
    row(
        s,
        "checks",
        match failed.is_empty() {
            true => format!("consistency conditions 3.3.2.1–{} held", t.checks.len()),
            false => format!("FAILED: {}", failed.join(", ")),
        },
    );
}

/// The engine and what it was set to: flags, registrations, refusals, completion batches.
fn engine_line(e: &EngineDoc) -> String {
    let mut eng = e.name.clone();
    if !e.flags.is_empty() || e.registered_buffers || e.registered_files {
        let mut parts: Vec<String> = e.flags.clone();
        if e.registered_buffers {
            parts.push("registered buffers".into());
        }
        if e.registered_files {
            parts.push("registered file".into());
        }
        let _ = write!(eng, " ({})", parts.join(", "));
    }
    if !e.refused.is_empty() {
        let _ = write!(eng, "; kernel refused {}", e.refused.join(", "));
    }
    if e.looked {
        eng.push_str("; io_uring's workers did the IO, so waits looked for each completion");
    }
    if !e.buffers.is_empty() {
        let _ = write!(eng, "; buffers on {}", e.buffers);
    }
    if e.complete_batch > 1 {
        // Each thread chooses for itself: the batch shown is the largest any chose.
        let why = match e.complete_trial {
            Some(t) => format!(
                ", chosen: in a trial waiting for half of those in flight moved {:.2}×, and for all {:.2}×, the IOs per second of waiting for each",
                t.gain(false),
                t.gain(true)
            ),
            None => String::new(),
        };
        let _ = write!(
            eng,
            "; completions reaped up to {} at a time{why} (an IO's latency may be late by up to {} completions)",
            e.complete_batch,
            e.complete_batch - 1
        );
    }
    eng
}

/// What `--verify` checked and found, e.g. `4,012 blocks written · 4,012 read back · 0 reads
/// checked · all intact`.
pub fn verify_line(v: &crate::model::VerifyDoc) -> String {
    let mut line = format!(
        "{} blocks written · {} read back",
        units::count(v.written_blocks as f64),
        units::count(v.pass_checks as f64)
    );
    if v.sample < 1.0 && v.written_blocks > 0 {
        let _ = write!(line, " (a {:.3}% sample)", v.sample * 100.0);
    }
    let _ = write!(
        line,
        " · {} reads checked during the run",
        units::count(v.read_checks as f64)
    );
    if v.failures() == 0 {
        line.push_str(" · all intact");
    } else {
        let classes: Vec<String> = v
            .failed
            .iter()
            .map(|(c, n)| format!("{} {c}", units::count(*n as f64)))
            .collect();
        let _ = write!(line, " · FAILED: {}", classes.join(", "));
    }
    line
}

/// What one device saw, e.g. `vda: 5,390 reads/s of 1 MiB · 0 writes/s · queue 3.9 · busy 99%`.
fn device_line(d: &crate::model::DeviceDoc) -> String {
    let secs = d.elapsed_s.max(1e-9);
    let dir = |n: Option<u64>, size: Option<f64>, what: &str| match (n, size) {
        (Some(n), Some(sz)) if n > 0 => format!(
            "{} {what}/s of {}",
            units::count(n as f64 / secs),
            units::iec(sz.round() as u64)
        ),
        (Some(_), _) => format!("0 {what}/s"),
        (None, _) => format!("{what}: unknown"),
    };
    let mut s = format!(
        "{}: {} · {}",
        d.name,
        dir(d.reads, d.avg_read_request_bytes, "reads"),
        dir(d.writes, d.avg_write_request_bytes, "writes")
    );
    if let (Some(q), Some(u)) = (d.avg_queue_depth, d.util) {
        s.push_str(&format!(" · queue {q:.1} · busy {:.0}%", u * 100.0));
    }
    s
}

/// Every result of a run, then its notes.
pub fn run(doc: &RunDoc) -> String {
    let mut s = String::new();
    for (i, r) in doc.results.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&result(r));
    }
    for n in &doc.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

#[cfg(test)]
mod header_tests {
    use super::*;

    // Issue 12: the header of an interrupted run gave the time asked, not the time it ran.
    #[test]
    fn an_interrupted_run_says_how_long_it_ran() {
        let mut r = crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1e3);
        r.workload.time_s = Some(10.0);
        r.runtime_s = 3.2;
        assert!(
            workload_line(&r).ends_with("· 10.0 s"),
            "{}",
            workload_line(&r)
        );
        r.interrupted = true;
        assert!(
            workload_line(&r).ends_with("· ran 3.2 s of 10.0 s"),
            "{}",
            workload_line(&r)
        );
    }
}
