//! A run as fio's JSON (`fio --output-format=json`): the part that fio-plot,
//! PerfKitBenchmarker, kubestr and KDiskMark read, so tools built on fio's output read
//! iogauge's. One job per result; `"fio version"` says iogauge made it, so nobody mistakes it
//! for fio's.
//!
//! What iogauge measures maps to fio's names as follows. Bandwidth `bw` is KiB/s and
//! `runtime` is ms, as in fio. Latency is counted from submission to completion, which is
//! fio's `clat_ns`; `lat_ns` (fio: submission latency + clat) is the same numbers, except with
//! a rate (`rate_iops`), where `lat_ns` counts from each IO's planned start and `clat_ns` is the
//! device's service time. `slat_ns` is zero: iogauge does not time submission alone. The full
//! percentile list comes from the result's histogram; a mixed job's directions have only the
//! percentiles iogauge keeps per direction, and the whole job's standard deviation.

use crate::measure::LatNs;
use crate::model::{OpDoc, ResultDoc, RunDoc};
use serde_json::{json, Map, Value};

/// fio's default percentile list (`percentile_list`).
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The document, one job per result; jobs that ran at once are each a job, as fio reports
/// them, and their sum is not one (its devices' counters are the run's disk_util).
pub fn run(doc: &RunDoc) -> String {
    let mut jobs: Vec<Value> = doc
        .results
        .iter()
        .filter(|r| !r.together.as_ref().is_some_and(|t| t.sum))
        .map(|r| job(r, &jobname(doc, r)))
        .collect();
    // A suite in rounds (SNIA PTS) judged steady state on one tracked cell: its job carries
    // fio's `steadystate` block, filled with the SNIA test's own numbers.
    if let Some(rounds) = &doc.rounds {
        let tracked = doc
            .results
            .iter()
            .position(|r| r.name.as_deref() == Some(rounds.tracked.as_str()))
            .unwrap_or(0);
        if let Some(j) = jobs.get_mut(tracked) {
            j["steadystate"] = steadystate(rounds);
        }
    }
    // fio's disk_util covers the whole run: each device's counts summed over every result's
    // window, its utilisation weighted by how long each window was (the first result's alone
    // gave KDiskMark's run 12,390 reads of its 504,148).
    // Ticks (ms) as the kernel counts them: each request's time, and in_queue the requests in
    // flight integrated over time, both from the window's averages.
    let mut disks: Vec<Disk> = Vec::new();
    for r in &doc.results {
        for d in &r.devices {
            let at = match disks.iter().position(|v| v.0 == d.name) {
                Some(i) => i,
                None => {
                    disks.push((d.name.clone(), [0; 4], [0.0; 3], 0.0, 0.0));
                    disks.len() - 1
                }
            };
            let e = &mut disks[at];
            for (sum, n) in
                e.1.iter_mut()
                    .zip([d.reads, d.writes, d.read_merges, d.write_merges])
            {
                *sum += n.unwrap_or(0);
            }
            let ms = |n: Option<u64>, per: Option<f64>| n.unwrap_or(0) as f64 * per.unwrap_or(0.0);
            e.2[0] += ms(d.reads, d.read_ms_per_io);
            e.2[1] += ms(d.writes, d.write_ms_per_io);
            e.2[2] += d.avg_queue_depth.unwrap_or(0.0) * d.elapsed_s * 1000.0;
            e.3 += d.util.unwrap_or(0.0) * d.elapsed_s;
            e.4 += d.elapsed_s;
        }
    }
    let disks: Vec<Value> = disks
        .into_iter()
        .map(|(name, [r, w, rm, wm], [rt, wt, q], busy, secs)| {
            json!({
                "name": name,
                "read_ios": r,
                "write_ios": w,
                "read_merges": rm,
                "write_merges": wm,
                "read_ticks": rt.round() as u64,
                "write_ticks": wt.round() as u64,
                "in_queue": q.round() as u64,
                "util": if secs > 0.0 { busy / secs * 100.0 } else { 0.0 },
            })
        })
        .collect();
    let secs = humantime::parse_rfc3339(&doc.started_at)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let v = json!({
        "fio version": format!("iogauge-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": secs,
        "timestamp_ms": secs * 1000,
        "time": doc.started_at,
        "iogauge run_id": doc.run_id,
        "global options": global_options(&jobs),
        "jobs": jobs,
        "disk_util": disks,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

/// One device over the whole run: its name; reads, writes and their merges; read and write
/// ticks and in_queue (ms); busy seconds and seconds watched.
type Disk = (String, [u64; 4], [f64; 3], f64, f64);

/// What every job sets alike (but its name), as fio lists a job file's `[global]` section; each
/// job's `job options` still holds them too, so a reader of one job finds all it ran with.
fn global_options(jobs: &[Value]) -> Value {
    let opts = |j: &Value| j["job options"].as_object().cloned().unwrap_or_default();
    let mut common = jobs.first().map(opts).unwrap_or_default();
    common.remove("name");
    for j in jobs.iter().skip(1) {
        let o = opts(j);
        common.retain(|k, v| o.get(k) == Some(v));
    }
    Value::Object(common)
}

/// fio's `steadystate` block for SNIA PTS rounds: the window's IOPS per round, whether the
/// test passed, its range (fio's max_deviation) and slope excursion, and the criterion as a
/// share of the window's mean.
fn steadystate(r: &crate::model::RoundsDoc) -> Value {
    let window: Vec<f64> = r
        .iops_per_round
        .iter()
        .rev()
        .take(r.window)
        .rev()
        .copied()
        .collect();
    let mean = match window.len() {
        0 => 0.0,
        n => window.iter().sum::<f64>() / n as f64,
    };
    json!({
        "ss": "iops (SNIA PTS: range within 20% and slope within 10% of the window's mean)",
        "duration": window.len(),
        "steadystate_ramptime": 0,
        "attained": u8::from(r.steady_at_round.is_some()),
        "criterion": format!("{:.2}%", r.excursion_frac.unwrap_or(0.0) * 100.0),
        "max_deviation": r.excursion_frac.unwrap_or(0.0) * mean,
        "slope": r.slope_excursion_frac.unwrap_or(0.0) * mean,
        "data": {
            "cap": 0,
            "iops_mean": mean,
            "iops": window,
        },
    })
}

/// The fio job a result came from: `iogauge fio` names its cells `JOB: pattern …` (the job's
/// name as the cell's origin); other results keep their own name, or their pattern.
fn jobname(doc: &RunDoc, r: &ResultDoc) -> String {
    let from_fio = doc.suite.as_deref().is_some_and(|s| s.starts_with("fio "));
    match (&r.name, from_fio) {
        (Some(n), true) => n
            .split_once(": ")
            .map_or(n.as_str(), |(j, _)| j)
            .to_string(),
        (Some(n), false) => n.clone(),
        (None, _) => r.workload.rw.name().to_string(),
    }
}

fn job(r: &ResultDoc, name: &str) -> Value {
    let w = &r.workload;
    let mut opts = Map::new();
    let mut opt = |k: &str, v: String| {
        opts.insert(k.into(), Value::String(v));
    };
    opt("name", name.to_string());
    let suffix = match (w.seq_run, w.seq_skip) {
        (Some(n), _) => format!(":{n}"),
        (_, Some(b)) => format!(":{b}"),
        _ => String::new(),
    };
    opt("rw", format!("{}{suffix}", w.rw.name()));
    if let Some(i) = w.offset_increment {
        opt("offset_increment", i.to_string());
    }
    if matches!(w.rw, crate::workload::Rw::Rw | crate::workload::Rw::Randrw) {
        opt("rwmixread", w.mix_read_pct.to_string());
    }
    // As a job file writes it: fio-plot labels its bars with this.
    opt(
        "bs",
        match w.bs {
            b if b % (1 << 20) == 0 => format!("{}m", b >> 20),
            b if b % 1024 == 0 => format!("{}k", b >> 10),
            b => b.to_string(),
        },
    );
    if let Some(m) = &w.bs_mix {
        opt("bssplit", m.fio_split());
    }
    opt("iodepth", w.iodepth.to_string());
    opt("numjobs", w.threads.to_string());
    opt("ioengine", w.engine.clone());
    opt("direct", u8::from(w.direct).to_string());
    if let Some(t) = w.time_s {
        opt("runtime", format!("{}ms", (t * 1000.0).round()));
        opt("time_based", "1".into());
    }
    if let Some(d) = w.data_bytes {
        opt("size", d.to_string());
    }
    if w.ramp_s > 0.0 {
        opt("ramp_time", format!("{}ms", (w.ramp_s * 1000.0).round()));
    }
    if let Some(r) = w.rate_iops {
        opt(
            "rate_iops",
            format!("{}", (r / f64::from(w.threads.max(1))).round()),
        );
    }
    if let Some(p) = &w.rate_process {
        opt("rate_process", p.clone());
    }
    if let (Some(k), Some(n)) = (w.sync, w.sync_every) {
        let key = match k {
            crate::workload::SyncKind::Fsync => "fsync",
            crate::workload::SyncKind::Fdatasync => "fdatasync",
        };
        opt(key, n.to_string());
    }
    opt("filename", r.target.path.clone());
    if r.target.files > 1 {
        opt("nrfiles", r.target.files.to_string());
    }
    let runtime_ms = (r.runtime_s * 1000.0).round() as u64;
    let both = r.read.is_some() && r.write.is_some();
    let dir = |o: &Option<OpDoc>| match o {
        Some(o) => direction(r, o, both, runtime_ms),
        None => direction(r, &OpDoc::default(), true, 0),
    };
    let pct = |s: f64| {
        if r.runtime_s > 0.0 {
            s * 100.0 / r.runtime_s
        } else {
            0.0
        }
    };
    let mut job = json!({
        "jobname": name,
        "groupid": 0,
        "error": i32::from(r.error.is_some()),
        "eta": 0,
        "elapsed": r.runtime_s.round() as u64,
        "job options": opts,
        "read": dir(&r.read),
        "write": dir(&r.write),
        "trim": dir(&r.trim),
        "job_runtime": runtime_ms,
        "usr_cpu": pct(r.cpu.user_s),
        "sys_cpu": pct(r.cpu.sys_s),
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "sync": sync(r),
        // fio's latency_target search (not run here: its defaults, as fio writes them).
        "latency_depth": w.iodepth,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
        "latency_ns": buckets(&r.lat_hist, 1, &LAT_KEYS[..10]),
        "latency_us": buckets(&r.lat_hist, 1_000, &LAT_KEYS[..10]),
        "latency_ms": buckets(&r.lat_hist, 1_000_000, &LAT_KEYS),
    });
    // fio writes these for a job with continue_on_error.
    if let (Some(e), Some(o)) = (&r.ignored_errors, job.as_object_mut()) {
        o.insert("total_err".into(), json!(e.count));
        o.insert("first_error".into(), json!(e.errno));
    }
    job
}

/// fio's `sync` section: the fsync/fdatasync calls and their latency (no histogram of syncs
/// is kept in a result, so no standard deviation).
fn sync(r: &ResultDoc) -> Value {
    let (n, l) = r
        .sync
        .as_ref()
        .map_or((0, LatNs::default()), |s| (s.count, s.lat_ns));
    json!({
        "total_ios": n,
        "lat_ns": {
            "min": l.min,
            "max": l.max,
            "mean": l.mean,
            "N": n,
        },
    })
}

/// fio's latency distribution keys (`latency_ns`, `latency_us` use the first ten; `latency_ms`
/// adds 2000 and `>=2000`).
const LAT_KEYS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// The share (%) of IOs in each of fio's latency buckets of one unit: an IO of `v` ns falls in
/// the unit whose range holds it (ns below 1 µs, µs below 1 ms, ms above) and in the first
/// bucket at or above it, as fio's `lat (usec): 250=..., 500=...` lines count.
fn buckets(pairs: &[[u64; 2]], unit: u64, keys: &[u64]) -> Value {
    let total: u64 = pairs.iter().map(|[_, c]| c).sum();
    let mut m = Map::new();
    for k in keys {
        m.insert(k.to_string(), json!(0.0));
    }
    if unit == 1_000_000 {
        m.insert(">=2000".into(), json!(0.0));
    }
    if total == 0 {
        return Value::Object(m);
    }
    for [v, c] in pairs {
        let home = match *v {
            v if v < 1_000 => 1,
            v if v < 1_000_000 => 1_000,
            _ => 1_000_000,
        };
        if home != unit {
            continue;
        }
        let x = v.div_ceil(unit);
        let key = match keys.iter().find(|k| **k >= x) {
            Some(k) => k.to_string(),
            None if unit == 1_000_000 => ">=2000".into(),
            None => keys[keys.len() - 1].to_string(),
        };
        let share = *c as f64 * 100.0 / total as f64;
        if let Some(Value::Number(n)) = m.get(&key) {
            let now = n.as_f64().unwrap_or(0.0) + share;
            m.insert(key, json!(now));
        }
    }
    Value::Object(m)
}

/// One direction; `partial` when the result's histogram holds more than this direction.
fn direction(r: &ResultDoc, o: &OpDoc, partial: bool, runtime_ms: u64) -> Value {
    let whole = stats_of(&r.lat_hist);
    let (lat, clat, stddev, percentiles) = match partial {
        // Only the summaries kept per direction.
        true => {
            let p = |l: &LatNs| {
                let mut m = Map::new();
                if o.ios > 0 {
                    for (q, v) in [
                        (50.0, l.p50),
                        (90.0, l.p90),
                        (99.0, l.p99),
                        (99.9, l.p999),
                        (99.99, l.p9999),
                    ] {
                        m.insert(key(q), json!(v));
                    }
                }
                m
            };
            (o.lat_ns, o.lat_ns, whole.1, p(&o.lat_ns))
        }
        false => {
            let mut m = Map::new();
            for q in PERCENTILES {
                m.insert(key(q), json!(quantile(&r.lat_hist, q / 100.0)));
            }
            (r.lat_ns, r.service_lat_ns.unwrap_or(r.lat_ns), whole.1, m)
        }
    };
    let n = o.ios;
    let summary = |l: &LatNs, with: bool| {
        let mut v = json!({
            "min": l.min,
            "max": l.max,
            "mean": l.mean,
            "stddev": if n > 0 { stddev } else { 0.0 },
            "N": n,
        });
        // fio writes no percentiles for a direction without samples (stat.c,
        // add_ddir_lat_json), not an empty object.
        if with && n > 0 {
            v["percentile"] = Value::Object(percentiles.clone());
        }
        v
    };
    // The per-second samples, in this direction's share of the IOs.
    let share = if r.ios > 0 {
        o.ios as f64 / r.ios as f64
    } else {
        0.0
    };
    // A direction without IO has no samples, as in fio.
    let samples = match n {
        0 => &[][..],
        _ => &r.timeseries[..],
    };
    let iops: Vec<f64> = samples.iter().map(|s| s.iops * share).collect();
    let bw: Vec<f64> = samples
        .iter()
        .map(|s| s.bw_bytes * share / 1024.0)
        .collect();
    let (iops_min, iops_max, iops_mean, iops_sd) = spread(&iops);
    let (bw_min, bw_max, bw_mean, bw_sd) = spread(&bw);
    json!({
        "io_bytes": o.bytes,
        "io_kbytes": o.bytes / 1024,
        "bw_bytes": o.bw_bytes.round() as u64,
        "bw": (o.bw_bytes / 1024.0).round() as u64,
        "iops": o.iops,
        "runtime": if n > 0 { runtime_ms } else { 0 },
        "total_ios": n,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": summary(&clat, true),
        "lat_ns": summary(&lat, false),
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": if n > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_sd,
        "bw_samples": bw.len(),
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_sd,
        "iops_samples": iops.len(),
    })
}

/// fio's percentile keys: `"99.000000"`.
fn key(q: f64) -> String {
    format!("{q:.6}")
}

/// Mean and standard deviation of a histogram given as [value, count] pairs.
fn stats_of(pairs: &[[u64; 2]]) -> (f64, f64) {
    let n: f64 = pairs.iter().map(|[_, c]| *c as f64).sum();
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let mean = pairs
        .iter()
        .map(|[v, c]| *v as f64 * *c as f64)
        .sum::<f64>()
        / n;
    let var = pairs
        .iter()
        .map(|[v, c]| (*v as f64 - mean).powi(2) * *c as f64)
        .sum::<f64>()
        / n;
    (mean, var.sqrt())
}

/// The smallest recorded value with at least `q` of the counts at or below it (pairs are in
/// increasing value, as `measure::buckets` writes them).
pub(crate) fn quantile(pairs: &[[u64; 2]], q: f64) -> u64 {
    let n: u64 = pairs.iter().map(|[_, c]| c).sum();
    let want = ((q * n as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for [v, c] in pairs {
        seen += c;
        if seen >= want {
            return *v;
        }
    }
    pairs.last().map_or(0, |p| p[0])
}

/// Minimum, maximum, mean and sample standard deviation.
fn spread(xs: &[f64]) -> (f64, f64, f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = match xs.len() {
        1 => 0.0,
        _ => (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
    };
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max, mean, sd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::{doc, result};
    use crate::workload::Rw;

    /// The keys fio-plot, PerfKitBenchmarker and kubestr read, with fio's units, from a result
    /// of known numbers: 1000 IOPS of 8 KiB for 10 s, one sample a second.
    /// disk_util covers the whole run: two results' windows on one device add up, and its
    /// utilisation is weighted by each window's length.
    #[test]
    fn disk_util_sums_every_results_window() {
        let dev = |reads: u64, util: f64, secs: f64| crate::model::DeviceDoc {
            name: "vda".into(),
            elapsed_s: secs,
            reads: Some(reads),
            util: Some(util),
            ..Default::default()
        };
        let mut a = result(Rw::Randread, 4096, 1, 1, 10.0);
        a.devices = vec![dev(10, 0.5, 1.0)];
        let mut b = result(Rw::Randread, 8192, 1, 1, 10.0);
        b.devices = vec![dev(30, 1.0, 3.0)];
        let v: Value = serde_json::from_str(&run(&doc(vec![a, b]))).unwrap();
        let disks = v["disk_util"].as_array().unwrap();
        assert_eq!(disks.len(), 1, "{disks:?}");
        assert_eq!(disks[0]["read_ios"], 40);
        assert!(
            (disks[0]["util"].as_f64().unwrap() - 87.5).abs() < 1e-9,
            "{disks:?}"
        );
    }

    /// SNIA PTS rounds give the tracked cell's job fio's steadystate block.
    #[test]
    fn rounds_give_the_tracked_job_a_steadystate_block() {
        let mut r = result(Rw::Randwrite, 4096, 1, 32, 1000.0);
        r.name = Some("tracked".into());
        let mut d = doc(vec![result(Rw::Randread, 4096, 1, 1, 10.0), r]);
        d.rounds = Some(crate::model::RoundsDoc {
            tracked: "tracked".into(),
            iops_per_round: vec![2000.0, 1000.0, 1010.0, 990.0, 1000.0, 1000.0],
            window: 5,
            max_rounds: 25,
            steady_at_round: Some(6),
            excursion_frac: Some(0.02),
            slope_excursion_frac: Some(0.01),
            precondition_s: None,
        });
        let v: Value = serde_json::from_str(&run(&d)).unwrap();
        assert!(v["jobs"][0].get("steadystate").is_none());
        let ss = &v["jobs"][1]["steadystate"];
        assert_eq!(ss["attained"], 1);
        assert_eq!(ss["duration"], 5);
        assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 5);
        assert!((ss["data"]["iops_mean"].as_f64().unwrap() - 1000.0).abs() < 1e-9);
        assert!((ss["max_deviation"].as_f64().unwrap() - 20.0).abs() < 1e-9);
    }

    #[test]
    fn the_shape_fio_readers_expect() {
        let mut r = result(Rw::Randread, 8192, 2, 4, 1000.0);
        r.name = Some("db-reads: randread 8K × 2 threads · QD 4".into());
        r.lat_hist = vec![[100_000, 9_000], [200_000, 900], [5_000_000, 100]];
        r.read = Some(OpDoc {
            ios: r.ios,
            bytes: r.bytes,
            iops: r.iops,
            bw_bytes: r.bw_bytes,
            lat_ns: r.lat_ns,
        });
        r.cpu = crate::model::CpuDoc::new(1.0, 2.5, r.ios);
        let mut d = doc(vec![r]);
        d.suite = Some("fio db.fio".into());
        let v: Value = serde_json::from_str(&run(&d)).unwrap();
        assert_eq!(
            v["fio version"],
            format!("iogauge-{}", env!("CARGO_PKG_VERSION"))
        );
        let j = &v["jobs"][0];
        assert_eq!(
            j["jobname"], "db-reads",
            "the fio job's name, not the cell's"
        );
        let o = &j["job options"];
        assert_eq!(
            (&o["rw"], &o["bs"], &o["iodepth"], &o["numjobs"]),
            (&json!("randread"), &json!("8k"), &json!("4"), &json!("2"))
        );
        let rd = &j["read"];
        assert_eq!(rd["io_bytes"], 10_000 * 8192);
        assert_eq!(rd["bw_bytes"], 8_192_000);
        assert_eq!(rd["bw"], 8000, "KiB/s");
        assert_eq!(rd["iops"], 1000.0);
        assert_eq!(rd["runtime"], 10_000, "ms");
        assert_eq!(rd["total_ios"], 10_000);
        assert_eq!(rd["iops_samples"], 10);
        let clat = &rd["clat_ns"];
        assert_eq!(clat["percentile"]["50.000000"], 100_000);
        assert_eq!(clat["percentile"]["95.000000"], 200_000);
        assert_eq!(clat["percentile"]["99.000000"], 200_000);
        assert_eq!(clat["percentile"]["99.500000"], 5_000_000);
        assert_eq!(clat["percentile"].as_object().unwrap().len(), 17);
        assert!(f(&clat["stddev"]) > 0.0);
        for k in ["min", "max", "mean", "stddev"] {
            assert_eq!(rd["lat_ns"][k], clat[k], "no rate: lat is clat");
        }
        assert_eq!(j["write"]["total_ios"], 0);
        assert_eq!(j["write"]["iops_samples"], 0);
        assert_eq!(j["usr_cpu"], 10.0, "percent of the runtime");
        assert_eq!(j["sys_cpu"], 25.0);
        // 90% at 100 µs, 9% at 200 µs, 1% at 5 ms.
        assert_eq!(j["latency_us"]["100"], 90.0);
        assert_eq!(j["latency_us"]["250"], 9.0);
        assert_eq!(j["latency_ms"]["10"], 1.0);
    }

    fn f(v: &Value) -> f64 {
        v.as_f64().unwrap()
    }

    #[test]
    fn quantiles_and_spread_of_a_histogram() {
        let pairs = [[100, 50], [200, 40], [1000, 10]];
        assert_eq!(quantile(&pairs, 0.5), 100);
        assert_eq!(quantile(&pairs, 0.51), 200);
        assert_eq!(quantile(&pairs, 0.90), 200);
        assert_eq!(quantile(&pairs, 0.99), 1000);
        assert_eq!(quantile(&[], 0.5), 0);
        let (mean, sd) = stats_of(&pairs);
        assert!((mean - 230.0).abs() < 1e-9);
        // E[x²] = (50·10⁴ + 40·4·10⁴ + 10·10⁶)/100 = 121000; var = 121000 − 230² = 68100.
        assert!((sd - 68100f64.sqrt()).abs() < 1e-9);
        assert_eq!(key(99.0), "99.000000");
        assert_eq!(key(99.95), "99.950000");
        // 1.5 µs and 300 µs land in the µs buckets 2 and 500, 3 ms in the ms bucket 4.
        let b = [[1_500, 1], [300_000, 2], [3_000_000, 1]];
        let us = buckets(&b, 1_000, &LAT_KEYS[..10]);
        assert_eq!(
            (us["2"].as_f64(), us["500"].as_f64()),
            (Some(25.0), Some(50.0))
        );
        let ms = buckets(&b, 1_000_000, &LAT_KEYS);
        assert_eq!(ms["4"].as_f64(), Some(25.0));
        assert_eq!(ms[">=2000"].as_f64(), Some(0.0));
        assert_eq!(buckets(&b, 1, &LAT_KEYS[..10])["1000"].as_f64(), Some(0.0));
        let (lo, hi, m, s) = spread(&[1.0, 3.0]);
        assert_eq!((lo, hi, m), (1.0, 3.0, 2.0));
        assert!((s - 2f64.sqrt()).abs() < 1e-12);
    }
}
