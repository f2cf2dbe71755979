//! Every finding kind on synthetic results and runs, built here from formulas whose answer is
//! known without running the checks; and the fixtures the report's tests build on.

use super::*;
use crate::measure::LatNs;
use crate::model::{
    CpuDoc, EngineDoc, FineDoc, ResultDoc, RunDoc, Sample, StatsDoc, TargetDoc, WorkloadDoc,
};
use crate::workload::Rw;
use iogauge_sysinfo::SystemInfo;
use serde_json::Value;

const GIB: u64 = 1 << 30;

pub(crate) fn system(mem: u64) -> SystemInfo {
    SystemInfo {
        kernel: Some("6.1.0-test".into()),
        hostname: Some("bench <1>".into()),
        cpu_model: Some("Test CPU".into()),
        cpu_count: Some(8),
        mem_total_bytes: Some(mem),
        target: None,
        streams: Vec::new(),
    }
}

/// A steady result of `iops` for 10 s: 1 s samples, 100 ms bins, mean latency by Little's law
/// (threads × iodepth in flight).
pub(crate) fn result(rw: Rw, bs: u64, threads: u32, iodepth: u32, iops: f64) -> ResultDoc {
    let in_flight = f64::from(threads * iodepth);
    let mean_ns = in_flight / iops * 1e9;
    let lat = LatNs {
        min: (mean_ns / 4.0) as u64,
        mean: mean_ns,
        p50: mean_ns as u64,
        p90: (mean_ns * 1.5) as u64,
        p99: (mean_ns * 3.0) as u64,
        p999: (mean_ns * 6.0) as u64,
        p9999: (mean_ns * 10.0) as u64,
        max: (mean_ns * 20.0) as u64,
    };
    let ios = (iops * 10.0) as u64;
    ResultDoc {
        name: None,
        workload: WorkloadDoc {
            rw,
            bs,
            bs_mix: None,
            seq_run: None,
            seq_skip: None,
            offset_increment: None,
            threads,
            iodepth,
            engine: "io_uring".into(),
            direct: true,
            mix_read_pct: 50,
            sync: None,
            sync_every: None,
            odsync: false,
            atomic: false,
            seed: 1,
            time_s: Some(10.0),
            data_bytes: None,
            ramp_s: 0.0,
            interval_s: 1.0,
            distribution: "uniform".into(),
            think: None,
            prio: None,
            flow: None,
            placement: None,
            zones: None,
            zbd: None,
            sprandom: None,
            content: None,
            rate_iops: None,
            rate_process: None,
        },
        target: TargetDoc {
            absolute_path: None,
            device: None,
            path: "/nonexistent/iogauge-test-target".into(),
            kind: "file".into(),
            created: false,
            offset_bytes: 0,
            range_bytes: 64 * GIB,
            logical_block_size: 512,
            files: 1,
        },
        iops,
        bw_bytes: iops * bs as f64,
        ios,
        bytes: ios * bs,
        runtime_s: 10.0,
        lat_ns: lat,
        lat_hist: Vec::new(),
        read: None,
        write: None,
        trim: None,
        sync: None,
        service_lat_ns: None,
        cpu: CpuDoc::default(),
        timeseries: (1..=10)
            .map(|t| Sample {
                t_s: f64::from(t),
                iops,
                bw_bytes: iops * bs as f64,
                lat_p50_ns: lat.p50,
                lat_p99_ns: lat.p99,
            })
            .collect(),
        interval_hists: Vec::new(),
        fine: FineDoc {
            bin_s: 0.1,
            ios: vec![(iops / 10.0) as u32; 100],
            cpu_run: Vec::new(),
            cpu_wait: Vec::new(),
            cpu_others: Vec::new(),
            ..FineDoc::default()
        },
        engine: EngineDoc::default(),
        interrupted: false,
        error: None,
        io_path: "direct".into(),
        findings: Vec::new(),
        repeats: Vec::new(),
        devices: Vec::new(),
        others: None,
        kernel_threads: Vec::new(),
        stats: Default::default(),
        pg: None,
        sysbench: None,
        tpcc: None,
        tps: None,
        verify: None,
        timeline: None,
        together: None,
        fill: None,
        ignored_errors: None,
    }
}

pub(crate) fn doc(results: Vec<ResultDoc>) -> RunDoc {
    RunDoc {
        schema: crate::model::SCHEMA.into(),
        run_id: "test-0001".into(),
        label: None,
        started_at: "2024-01-01T00:00:00Z".into(),
        command: vec!["iogauge".into(), "suite".into(), "matrix".into()],
        suite: Some("matrix".into()),
        system: system(64 * GIB),
        results,
        findings: Vec::new(),
        interrupted: false,
        notes: Vec::new(),
        params: Default::default(),
        rounds: None,
        fleet: None,
        rebuild: None,
        advice: None,
        verify: None,
    }
}

/// Block sizes 4 KiB … 1 MiB.
pub(crate) const SIZES: [u64; 9] = [
    4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576,
];

/// A bm-flash matrix for `rw`: IOPS = 20,000 × threads^0.5 × (4 KiB / bs)^0.5, a power law in
/// block size so that log–log interpolation predicts every cell exactly.
pub(crate) fn matrix(rw: Rw, threads: &[u32]) -> Vec<ResultDoc> {
    let mut out = Vec::new();
    for &bs in &SIZES {
        for &t in threads {
            let iops = 20_000.0 * f64::from(t).sqrt() * (4096.0 / bs as f64).sqrt();
            out.push(result(rw, bs, t, 1, iops));
        }
    }
    out
}

fn th() -> Thresholds {
    Thresholds::default()
}

fn kinds(v: &[Finding]) -> Vec<&str> {
    v.iter().map(|f| f.kind.as_str()).collect()
}

/// The findings as their JSON, for assertions on what the document stores.
fn json(v: &[Finding]) -> Vec<Value> {
    v.iter().map(|f| serde_json::to_value(f).unwrap()).collect()
}

fn of_kind(v: &[Finding], kind: &str) -> Vec<Value> {
    let picked: Vec<Finding> = v
        .iter()
        .filter(|f| f.kind.as_str() == kind)
        .cloned()
        .collect();
    json(&picked)
}

fn near(got: &Value, want: f64, tol: f64) {
    let g = got.as_f64().unwrap_or(f64::NAN);
    assert!((g - want).abs() <= tol, "got {g}, want {want} ± {tol}");
}

#[test]
fn steady_result_has_only_a_steady_info() {
    let r = result(Rw::Randread, 4096, 1, 1, 10_000.0);
    let found = result_findings(&r, &system(64 * GIB), None, &th());
    assert_eq!(kinds(&found), ["steady"], "{found:#?}");
    assert_eq!(json(&found)[0]["severity"], "info");
}

#[test]
fn a_freeze_in_the_fine_bins_is_a_stall_timed_within_half_a_second() {
    let mut r = result(Rw::Randwrite, 4096, 1, 1, 10_000.0);
    // Nothing completes from 3.0 s to 6.0 s.
    for b in &mut r.fine.ios[30..60] {
        *b = 0;
    }
    r.name = Some("randwrite 4K".into());
    let found = result_findings(&r, &system(64 * GIB), None, &th());
    let stalls = of_kind(&found, "stall");
    assert_eq!(stalls.len(), 1, "{found:#?}");
    near(&stalls[0]["evidence"]["start_s"], 3.0, 0.5);
    near(&stalls[0]["evidence"]["duration_s"], 3.0, 0.5);
    assert_eq!(stalls[0]["evidence"]["depth"], 0.0);
    assert!(stalls[0]["summary"]
        .as_str()
        .unwrap()
        .starts_with("randwrite 4K: "));
}

#[test]
fn drifting_iops_is_not_steady() {
    let mut r = result(Rw::Randwrite, 4096, 1, 1, 10_000.0);
    // Falls 10% per interval: the last five span far more than 20% of their mean.
    for (i, s) in r.timeseries.iter_mut().enumerate() {
        s.iops = 10_000.0 * 0.9f64.powi(i as i32);
    }
    let found = result_findings(&r, &system(64 * GIB), None, &th());
    let steady = of_kind(&found, "steady");
    assert_eq!(steady[0]["severity"], "warning");
    assert!(steady[0]["summary"].as_str().unwrap().contains("drifting"));
}

#[test]
fn a_short_last_interval_does_not_count_as_drift() {
    let mut r = result(Rw::Randread, 4096, 1, 1, 10_000.0);
    // The run ended 30 ms into an 11th interval, which holds a handful of IOs.
    r.timeseries.push(Sample {
        t_s: 10.03,
        iops: 1_000.0,
        ..Sample::default()
    });
    let found = result_findings(&r, &system(64 * GIB), None, &th());
    assert_eq!(of_kind(&found, "steady")[0]["severity"], "info");
}

#[test]
fn buffered_io_over_a_working_set_in_ram_is_a_cache_finding() {
    let mut r = result(Rw::Randread, 4096, 1, 1, 500_000.0);
    r.workload.direct = false;
    r.target.range_bytes = GIB;
    let found = result_findings(&r, &system(16 * GIB), None, &th());
    let cache = of_kind(&found, "cache");
    assert_eq!(cache.len(), 1, "{found:#?}");
    near(&cache[0]["evidence"]["ram_ratio"], 1.0 / 16.0, 1e-12);
    // The same run with O_DIRECT measured the device.
    r.workload.direct = true;
    assert!(of_kind(
        &result_findings(&r, &system(16 * GIB), None, &th()),
        "cache"
    )
    .is_empty());
}

#[test]
fn reads_of_a_half_empty_file_are_a_sparse_finding() {
    let r = result(Rw::Randread, 4096, 1, 1, 10_000.0);
    let half = r.target.range_bytes / 2;
    let found = result_findings(&r, &system(64 * GIB), Some(half), &th());
    let sparse = of_kind(&found, "sparse");
    assert_eq!(sparse.len(), 1, "{found:#?}");
    near(&sparse[0]["evidence"]["unbacked_frac"], 0.5, 1e-12);
    // Writes fill holes rather than read them; a full file has none.
    let w = result(Rw::Randwrite, 4096, 1, 1, 10_000.0);
    assert!(of_kind(
        &result_findings(&w, &system(64 * GIB), Some(half), &th()),
        "sparse"
    )
    .is_empty());
    let full = result_findings(&r, &system(64 * GIB), Some(r.target.range_bytes), &th());
    assert!(of_kind(&full, "sparse").is_empty());
}

#[test]
fn iops_flat_from_eight_threads_is_a_ceiling_starting_there() {
    // A device that serves 10,000 IOPS per thread up to 65,000 ("100K+ IOPS on semi-commodity hardware"'s barrier); latency
    // follows Little's law, so it grows with the threads past the limit.
    let results: Vec<ResultDoc> = capped_thread_sweep();
    let d = doc(results);
    let found = run_findings(&d, &th());
    let ceilings = of_kind(&found, "ceiling");
    assert_eq!(ceilings.len(), 1, "{found:#?}");
    let c = &ceilings[0];
    near(&c["evidence"]["starts_at_x"], 8.0, 0.0);
    near(&c["evidence"]["plateau_value"], 65_000.0, 1e-6);
    // Points at the result where the plateau starts (threads = 8 is index 3).
    assert_eq!(c["result"], 3);
    assert!(c["summary"]
        .as_str()
        .unwrap()
        .starts_with("randread 4K, iodepth 1: "));
    assert!(c["summary"].as_str().unwrap().contains("saturated"));
}

#[test]
fn a_growing_sweep_has_no_ceiling() {
    let results: Vec<ResultDoc> = [1, 2, 4, 8, 16]
        .iter()
        .map(|&qd| result(Rw::Randread, 4096, 1, qd, 10_000.0 * f64::from(qd)))
        .collect();
    assert!(of_kind(&run_findings(&doc(results), &th()), "ceiling").is_empty());
}

#[test]
fn a_cell_far_below_its_neighbours_is_a_gap_on_that_cell() {
    let mut results = matrix(Rw::Randwrite, &[1, 10]);
    // 64 KiB × 10 threads at a fifth of the trend: "One DVD per second"'s RAID5 write gap.
    let i = results
        .iter()
        .position(|r| r.workload.bs == 65536 && r.workload.threads == 10)
        .unwrap();
    results[i].iops /= 5.0;
    results[i].bw_bytes /= 5.0;
    let mut d = doc(results);
    let found = run_findings(&d, &th());
    let gaps = of_kind(&found, "gap");
    assert_eq!(gaps.len(), 1, "{found:#?}");
    assert_eq!(gaps[0]["result"], i);
    near(&gaps[0]["evidence"]["ratio"], 0.2, 1e-9);
    near(&gaps[0]["evidence"]["bs_bytes"], 65536.0, 0.0);
    // annotate puts it in the run's list and in the cell's own.
    annotate(&mut d, None);
    assert_eq!(of_kind(&d.findings, "gap").len(), 1);
    assert_eq!(of_kind(&d.results[i].findings, "gap").len(), 1);
    assert!(d
        .results
        .iter()
        .enumerate()
        .all(|(j, r)| j == i || of_kind(&r.findings, "gap").is_empty()));
}

#[test]
fn a_smooth_matrix_has_no_gap_and_no_ceiling() {
    let mut results = matrix(Rw::Randread, &[1, 10, 40]);
    results.extend(matrix(Rw::Randwrite, &[1, 10, 40]));
    let found = run_findings(&doc(results), &th());
    assert!(of_kind(&found, "gap").is_empty(), "{found:#?}");
    // Bandwidth grows as bs^0.5 and IOPS as threads^0.5: neither levels off.
    assert!(of_kind(&found, "ceiling").is_empty(), "{found:#?}");
}

/// `r`'s repeats' IOPS as the statistics give them, `outliers` flagged.
fn flag_repeats(r: &mut ResultDoc, values: &[f64], outliers: &[usize]) {
    r.stats.insert(
        "iops".into(),
        StatsDoc {
            n: values.len(),
            values: values.to_vec(),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            outliers: outliers.to_vec(),
            ..StatsDoc::default()
        },
    );
}

#[test]
fn flagged_repeats_are_outlier_findings_of_their_result() {
    let mut r = result(Rw::Randwrite, 4096, 1, 1, 6861.572);
    // "PostgreSQL Server Benchmarks — Disks"'s fsync rates; the statistics flagged the first repeat.
    flag_repeats(&mut r, &[3170.57, 7606.69, 6833.55, 7585.75, 7690.24], &[0]);
    let mut d = doc(vec![result(Rw::Randread, 4096, 1, 1, 1000.0), r]);
    let found = run_findings(&d, &th());
    let out = of_kind(&found, "outlier");
    assert_eq!(out.len(), 1, "{found:#?}");
    assert_eq!(out[0]["result"], 1);
    near(&out[0]["evidence"]["value"], 3170.57, 1e-9);
    // Mean of the other four, by hand: 29716.23 / 4.
    near(&out[0]["evidence"]["mean_without"], 7429.0575, 1e-9);
    annotate(&mut d, None);
    assert_eq!(of_kind(&d.results[1].findings, "outlier").len(), 1);
    assert!(of_kind(&d.results[0].findings, "outlier").is_empty());
}

/// SNIA PTS rounds: the results are the window's last five of six rounds, so the window's third
/// is round 4, as the rounds table numbers it — never "round 3 of 5". A window that never
/// reached steady state names no outlier round (issue 37: 20 warnings for one drift).
#[test]
fn an_outlier_round_is_named_by_its_round() {
    let mut r = result(Rw::Randwrite, 4096, 1, 1, 6000.0);
    r.repeats = vec![crate::model::RepeatDoc::default(); 5];
    flag_repeats(&mut r, &[7600.0, 7580.0, 3170.0, 7610.0, 7590.0], &[2]);
    let mut d = doc(vec![r]);
    d.rounds = Some(crate::model::RoundsDoc {
        tracked: "t".into(),
        iops_per_round: vec![1.0; 6],
        window: 5,
        max_rounds: 25,
        steady_at_round: Some(6),
        excursion_frac: None,
        slope_excursion_frac: None,
        precondition_s: None,
    });
    let drifting = {
        let mut d = d.clone();
        d.rounds.as_mut().unwrap().steady_at_round = None;
        annotate(&mut d, None);
        d
    };
    // The same rounds in a window that never settled: drift, which `steady` says once.
    assert!(of_kind(&drifting.results[0].findings, "outlier").is_empty());
    assert!(of_kind(&drifting.findings, "outlier").is_empty());
    annotate(&mut d, None);
    let out = of_kind(&d.results[0].findings, "outlier");
    assert_eq!(out.len(), 1);
    let summary = out[0]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("round 4 (of rounds 2–6): "),
        "{summary}"
    );
    let table = crate::present::stats::suite_table(&d.results, Some(2));
    assert!(table.contains("The window, rounds 2–6"), "{table}");
    assert!(table.contains("round 4"), "{table}");
}

/// Random reads at 1…32 threads, 10,000 IOPS a thread up to a fixed limit of 65,000 (seed
/// 004's ceiling).
fn capped_thread_sweep() -> Vec<ResultDoc> {
    [1, 2, 4, 8, 16, 32]
        .iter()
        .map(|&t| {
            result(
                Rw::Randread,
                4096,
                t,
                1,
                (10_000.0 * f64::from(t)).min(65_000.0),
            )
        })
        .collect()
}

#[test]
fn annotate_indexes_every_finding_and_keeps_ceilings_at_run_level() {
    let mut results: Vec<ResultDoc> = capped_thread_sweep();
    for b in &mut results[5].fine.ios[10..40] {
        *b = 0;
    }
    let mut d = doc(results);
    annotate(&mut d, None);
    assert!(
        d.findings.iter().all(|f| f.result.is_some()),
        "{:#?}",
        d.findings
    );
    assert_eq!(of_kind(&d.findings, "stall")[0]["result"], 5);
    assert_eq!(of_kind(&d.results[5].findings, "stall").len(), 1);
    assert_eq!(of_kind(&d.findings, "ceiling").len(), 1);
    assert!(d
        .results
        .iter()
        .all(|r| of_kind(&r.findings, "ceiling").is_empty()));
    // Every result's own findings are in the run's list too.
    let own: usize = d.results.iter().map(|r| r.findings.len()).sum();
    assert_eq!(own + 1, d.findings.len());
}

#[test]
fn interrupted_results_stay_out_of_sweeps() {
    let mut results: Vec<ResultDoc> = capped_thread_sweep();
    for r in &mut results[3..] {
        r.interrupted = true;
    }
    assert!(of_kind(&run_findings(&doc(results), &th()), "ceiling").is_empty());
}

#[test]
fn a_pgbench_result_speaks_of_transactions() {
    let mut r = result(Rw::Randwrite, 8192, 1, 1, 3_000.0);
    for (i, s) in r.timeseries.iter_mut().enumerate() {
        s.iops = 3_000.0 * 0.9f64.powi(i as i32);
    }
    let plain = result_findings(&r, &system(64 * GIB), None, &th());
    assert!(of_kind(&plain, "steady")[0]["summary"]
        .as_str()
        .unwrap()
        .contains(" IOPS"));
    r.pg = Some(Default::default());
    let found = result_findings(&r, &system(64 * GIB), None, &th());
    let summary = of_kind(&found, "steady")[0]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        summary.contains(" TPS") && !summary.contains("IOPS"),
        "{summary}"
    );
}

/// `compare --baseline` (issue 28): a result whose rate fell and stayed is compared at its
/// later level, its repeats scaled alike; a rise, or no regime, leaves the result as it was.
#[test]
fn the_baseline_is_the_later_level_of_a_fall() {
    let mut fell = result(Rw::Randread, 4096, 1, 1, 2000.0);
    let regime = || {
        Finding::new(
            iogauge_analyze::Kind::Regime,
            iogauge_analyze::Severity::Warning,
            String::new(),
            "",
        )
    };
    fell.findings.push(
        regime()
            .with("before_iops", 3000.0)
            .with("after_iops", 1000.0)
            .with("ios_above_later", 82000.0),
    );
    let mut rose = result(Rw::Randread, 4096, 1, 4, 2000.0);
    rose.findings.push(
        regime()
            .with("before_iops", 1000.0)
            .with("after_iops", 3000.0),
    );
    let plain = result(Rw::Randwrite, 4096, 1, 1, 2000.0);
    let mut d = doc(vec![fell, rose, plain]);
    let changed = use_baseline(&mut d);
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(d.results[0].iops, 1000.0);
    assert_eq!(d.results[0].bw_bytes, 1000.0 * 4096.0);
    assert_eq!(d.results[1].iops, 2000.0, "a rise keeps the average");
    assert_eq!(d.results[2].iops, 2000.0);
}

/// Repeats joined end to end: a slower last repeat steps down where it begins, which is an
/// outlier repeat and no change of regime; the same fall inside one repeat is one.
#[test]
fn a_step_between_repeats_is_no_regime_but_one_inside_a_repeat_is() {
    let mut r = result(Rw::Randread, 4096, 1, 1, 8_000.0);
    let bins = |n: usize, per_bin: u32| std::iter::repeat_n(per_bin, n);
    r.fine = crate::model::FineDoc {
        bin_s: 0.1,
        ios: bins(100, 1000).chain(bins(50, 400)).collect(),
        cpu_run: Vec::new(),
        cpu_wait: Vec::new(),
        cpu_others: Vec::new(),
        ..crate::model::FineDoc::default()
    };
    r.repeats = (0..3)
        .map(|_| crate::model::RepeatDoc {
            runtime_s: 5.0,
            ..Default::default()
        })
        .collect();
    let judged = |r: &crate::model::ResultDoc| {
        kinds(&result_findings(r, &system(64 * GIB), None, &th())).contains(&"regime")
    };
    assert!(!judged(&r), "the step where repeat 3 begins is no regime");
    // The same fall halfway through repeat 2 (at 7.5 s): a regime within a repeat.
    let mut inside = r.clone();
    inside.fine.ios = bins(75, 1000).chain(bins(75, 400)).collect();
    assert!(judged(&inside), "a fall inside repeat 2 is a regime");
    // One run of 15 s with the same fall at 10 s: a regime.
    r.repeats.clear();
    assert!(judged(&r), "a fall inside a run is a regime");
}

/// The split rule's view of the buffers follows what the engine writes in the document: only a
/// pool wholly on huge pages keeps a large IO in one piece of memory.
#[test]
fn buffers_on_huge_pages_are_read_from_the_engines_own_words() {
    use iogauge_engine::Backing;
    let on = |b: Backing| {
        crate::model::EngineDoc {
            buffers: b.describe(),
            ..Default::default()
        }
        .buffers_on_huge_pages()
    };
    assert!(on(Backing::HugeTlb));
    assert!(on(Backing::Thp {
        huge: 4 << 20,
        total: 4 << 20
    }));
    assert!(!on(Backing::Thp {
        huge: 2 << 20,
        total: 4 << 20
    }));
    assert!(!on(Backing::Pages));
}

/// A run on a device in memory (a loop device over a file in tmpfs, as sysinfo records it):
/// a fall of its rate inside the run, and a drift at its end, are said as the CPU's pace, at
/// info. The same run with a cgroup limiting that device keeps both warnings: the limit, not
/// the CPU, may have moved it.
#[test]
fn a_change_on_a_device_in_memory_is_the_cpus_unless_a_cgroup_limits_it() {
    let mut r = result(Rw::Randwrite, 4096, 1, 1, 10_000.0);
    for (i, s) in r.timeseries.iter_mut().enumerate() {
        s.iops = 10_000.0 * 0.9f64.powi(i as i32);
    }
    let bins = |n: usize, per_bin: u32| std::iter::repeat_n(per_bin, n);
    r.fine = crate::model::FineDoc {
        bin_s: 0.1,
        ios: bins(50, 1000).chain(bins(50, 400)).collect(),
        ..crate::model::FineDoc::default()
    };
    let mut sys = system(64 * GIB);
    let mut target: iogauge_sysinfo::TargetInfo = serde_json::from_value(serde_json::json!({
        "path": "/dev/loop3", "devices": [{
            "name": "loop3", "dev": "7:3", "role": "loop",
            "loop_backing_file": "/dev/shm/d.img", "loop_backing_fs": "tmpfs"
        }]
    }))
    .unwrap();
    sys.target = Some(target.clone());
    let found = result_findings(&r, &sys, None, &th());
    let said: Vec<Value> = ["regime", "steady"]
        .iter()
        .flat_map(|k| of_kind(&found, k))
        .collect();
    assert_eq!(said.len(), 2, "{said:#?}");
    for f in &said {
        assert_eq!(f["severity"], "info", "{f:#}");
        let summary = f["summary"].as_str().unwrap();
        assert!(
            summary.contains("on loop3 (a file in tmpfs), which is memory"),
            "{summary}"
        );
    }
    target.io_limits = serde_json::from_value(
        serde_json::json!([{"dev": "7:3", "what": "write_iops", "value": 1000}]),
    )
    .unwrap();
    sys.target = Some(target);
    let found = result_findings(&r, &sys, None, &th());
    for k in ["regime", "steady"] {
        let f = &of_kind(&found, k)[0];
        assert_eq!(f["severity"], "warning", "{f:#}");
        assert!(!f["summary"].as_str().unwrap().contains("memory"), "{f:#}");
    }
}

/// A TPC-C-derived result whose driver used `driver_s` CPU-seconds of a 2-CPU machine over a
/// 10 s window: the `client` warning above a fifth of the machine (4 s), not at 3.9 s.
#[test]
fn a_driver_taking_a_fifth_of_the_machine_is_named_and_just_under_it_is_not() {
    let client = |driver_s: f64| {
        let mut r = result(Rw::Randrw, 8192, 4, 1, 500.0);
        r.workload.engine = "tpcc".into();
        r.tpcc = Some(Box::new(crate::model::TpccDoc {
            window_s: 10.0,
            cpus: 2,
            driver_cpu_s: driver_s,
            server_cpu_s: 12.0,
            statements_per_txn: None,
            driver_cpu_us_per_txn: driver_s * 1e6 / 5_000.0,
            ..Default::default()
        }));
        let th = iogauge_analyze::Thresholds::default();
        super::result_findings(&r, &system(8 << 30), None, &th)
            .into_iter()
            .filter(|f| f.kind == iogauge_analyze::Kind::Client)
            .collect::<Vec<_>>()
    };
    let found = client(5.0);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .summary
            .contains("used 25% of this machine's 2 CPUs")
            && found[0].summary.contains("against the server's 60%"),
        "{}",
        found[0].summary
    );
    assert!(client(3.9).is_empty());
}
