//! `iogauge compare`: runs side by side, workload by workload, with a verdict per metric, and
//! for runs that carry a numeric parameter (`--param disks=4`) where scaling stops.
//!
//! Matching: a result of the baseline (the first run) meets the result of another run with the
//! same cell name, else the same workload (rw, block size, threads, IOs in flight, read mix,
//! sync, O_DSYNC, engine, direct IO); two runs of one result each are compared whatever their
//! workloads, since that is what the user asked for (QD1 against QD32), and the differences are
//! named.
//!
//! Verdict (`iogauge_stats::verdict`, criterion.rs's rule): "faster" or "slower" only when
//! Welch's t-test on the repeats gives p < 0.05 *and* the change exceeds `--noise`; otherwise
//! "no significant change". Without repeats on both sides there is no variance to test, and the
//! verdict says so. Lower latency is "faster".
//!
//! Where scaling stops is `scaling`; whether a sweep's device changed while it ran, `drift`.

mod drift;
mod scaling;

pub use drift::{drift, iops_of, sweep_drift, AGAIN};
pub(crate) use scaling::Scaling;
use scaling::{scaling_of, scaling_param};

use crate::matching::differences;
use crate::model::ResultDoc;
use crate::store::Stored;
use iogauge_stats::{Verdict, DEFAULT_ALPHA};
use serde_json::{json, Value};

/// The metrics compared, and whether more is better.
const METRICS: [(&str, bool); 4] = [
    ("iops", true),
    ("bw_bytes", true),
    ("lat_p50_ns", false),
    ("lat_p99_ns", false),
];

pub const CANNOT_JUDGE: &str = "cannot judge significance (run with --repeat 3 or more)";

pub struct Report {
    pub(crate) runs: Vec<RunInfo>,
    pub(crate) groups: Vec<Group>,
    pub(crate) scaling: Vec<Scaling>,
    pub(crate) notes: Vec<String>,
}

pub(crate) struct RunInfo {
    pub(crate) id: i64,
    pub(crate) run_id: String,
    pub(crate) label: Option<String>,
    pub(crate) params: std::collections::BTreeMap<String, String>,
}

/// One baseline result and its counterparts.
pub(crate) struct Group {
    pub(crate) workload: String,
    /// Per run: what takes its result's number's meaning away (`model::caveats`).
    pub(crate) caveats: Vec<Vec<crate::model::caveats::Caveat>>,
    /// Per candidate run (index into `runs`): what differs from the baseline's workload.
    pub(crate) differences: Vec<(usize, Vec<String>)>,
    pub(crate) rows: Vec<MetricRow>,
}

pub(crate) struct MetricRow {
    pub(crate) metric: &'static str,
    /// Per run: the values (repeats, or the one headline value); `None` when the run has no
    /// matching result.
    pub(crate) sides: Vec<Option<Vec<f64>>>,
    /// Per run after the first: the comparison against the baseline.
    pub(crate) comparisons: Vec<Option<iogauge_stats::Comparison>>,
}

pub(crate) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The values of `metric` in `r`: one per repeat, or the headline value without repeats.
fn values(r: &ResultDoc, metric: &str) -> Vec<f64> {
    if metric == "nopm" {
        return match r.tpcc.as_ref() {
            Some(t) if !t.nopm_repeats.is_empty() => t.nopm_repeats.clone(),
            t => vec![t.map_or(0.0, |t| t.nopm)],
        };
    }
    let pick = |iops: f64, bw: f64, lat: &crate::measure::LatNs| match metric {
        "iops" | "tps" => iops,
        "bw_bytes" => bw,
        "lat_p50_ns" => lat.p50 as f64,
        _ => lat.p99 as f64,
    };
    if r.repeats.is_empty() {
        vec![pick(r.iops, r.bw_bytes, &r.lat_ns)]
    } else {
        r.repeats
            .iter()
            .map(|x| pick(x.iops, x.bw_bytes, &x.lat_ns))
            .collect()
    }
}

/// How a result's IOs were waited for, as a comparison says it.
fn waited(batch: u32) -> String {
    match batch {
        1 => "waited for each completion".into(),
        n => format!("waited for up to {n} completions at a time"),
    }
}

/// Compares `runs` (the first is the baseline unless a scaling parameter orders them).
pub fn compare(runs: &[Stored], noise: f64) -> Report {
    let mut notes = Vec::new();
    if runs.is_empty() {
        notes.push("no runs to compare".to_string());
        return Report {
            runs: Vec::new(),
            groups: Vec::new(),
            scaling: Vec::new(),
            notes,
        };
    }
    let mut runs: Vec<&Stored> = runs.iter().collect();
    let param = scaling_param(&runs);
    if let Some((key, xs)) = &param {
        let mut order: Vec<usize> = (0..runs.len()).collect();
        order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
        runs = order.iter().map(|&i| runs[i]).collect();
        notes.push(format!("runs ordered by {key}; the first is the baseline"));
    }
    notes.extend(sweep_drift(&runs));
    let base = runs[0];
    if base.doc.results.is_empty() {
        notes.push(format!(
            "the baseline, run {}, has no results to compare",
            base.id
        ));
    }
    let mut groups = Vec::new();
    for br in &base.doc.results {
        let counterparts: Vec<Option<&ResultDoc>> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if i == 0 {
                    return Some(br);
                }
                crate::matching::counterpart(&base.doc, br, &r.doc).map(|j| &r.doc.results[j])
            })
            .collect();
        // Latencies timed two ways do not compare: a batched wait makes each IO's time late by
        // up to the batch (issue 42: the same command waited for 16 once and for each
        // completion four times).
        for (i, c) in counterparts.iter().enumerate().skip(1) {
            let (a, b) = (
                br.engine.complete_batch,
                c.map_or(0, |c| c.engine.complete_batch),
            );
            if a > 0 && b > 0 && a != b {
                notes.push(format!(
                    "{}: run {} {}, run {} {}: their latencies were timed differently and do not compare (their IOPS do); give both --complete-batch 1 for exact per-IO latency",
                    br.display_name(),
                    base.id,
                    waited(a),
                    runs[i].id,
                    waited(b)
                ));
            }
        }
        let differences = counterparts
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(i, c)| c.map(|c| (i, differences(br, c))))
            .filter(|(_, d)| !d.is_empty())
            .collect();
        // A database result's rate is transactions (and a TPC-C-derived one's new orders);
        // it moves no bandwidth of its own.
        let metrics: Vec<(&str, bool)> = match br.is_db() {
            true => std::iter::once(("tps", true))
                .chain(br.tpcc.is_some().then_some(("nopm", true)))
                .chain(METRICS.iter().copied().filter(|m| m.0.starts_with("lat_")))
                .collect(),
            false => METRICS.to_vec(),
        };
        let rows = metrics
            .iter()
            .map(|&(metric, higher_is_better)| {
                let sides: Vec<Option<Vec<f64>>> = counterparts
                    .iter()
                    .map(|c| c.map(|r| values(r, metric)))
                    .collect();
                let base_values = sides[0].clone().unwrap_or_default();
                let comparisons = sides
                    .iter()
                    .skip(1)
                    .map(|s| {
                        s.as_ref().map(|v| {
                            iogauge_stats::verdict(
                                &base_values,
                                v,
                                higher_is_better,
                                DEFAULT_ALPHA,
                                noise,
                            )
                        })
                    })
                    .collect();
                MetricRow {
                    metric,
                    sides,
                    comparisons,
                }
            })
            .collect();
        groups.push(Group {
            workload: br.display_name(),
            caveats: counterparts
                .iter()
                .zip(&runs)
                .map(|(c, r)| {
                    c.and_then(|c| r.doc.results.iter().position(|x| std::ptr::eq(x, c)))
                        .map_or_else(Vec::new, |j| crate::model::caveats::of_result(&r.doc, j))
                })
                .collect(),
            differences,
            rows,
        });
    }
    for (i, r) in runs.iter().enumerate().skip(1) {
        let unmatched: Vec<String> = r
            .doc
            .results
            .iter()
            .filter(|c| {
                !base
                    .doc
                    .results
                    .iter()
                    .any(|b| crate::matching::matches(b, c))
            })
            .filter(|_| !(base.doc.results.len() == 1 && r.doc.results.len() == 1))
            .map(ResultDoc::display_name)
            .collect();
        if !unmatched.is_empty() {
            notes.push(format!(
                "run {} has results the baseline lacks: {}",
                runs[i].id,
                unmatched.join("; ")
            ));
        }
    }
    let scaling = match &param {
        Some((key, _)) => scaling_of(&runs, key, &groups),
        None => Vec::new(),
    };
    Report {
        runs: runs
            .iter()
            .map(|r| RunInfo {
                id: r.id,
                run_id: r.doc.run_id.clone(),
                label: r.doc.label.clone(),
                params: r.doc.params.clone(),
            })
            .collect(),
        groups,
        scaling,
        notes,
    }
}

/// The verdict in words, as the table and the JSON give it.
pub(crate) fn verdict_text(c: &iogauge_stats::Comparison) -> &'static str {
    match c.verdict {
        Verdict::CannotJudge => CANNOT_JUDGE,
        v => v.label(),
    }
}

impl Report {
    pub fn json(&self) -> Value {
        let mut comparisons = Vec::new();
        for g in &self.groups {
            for row in &g.rows {
                let Some(base) = &row.sides[0] else { continue };
                for (j, c) in row.comparisons.iter().enumerate() {
                    let (Some(c), Some(cand)) = (c, &row.sides[j + 1]) else {
                        continue;
                    };
                    let diff = g
                        .differences
                        .iter()
                        .find(|(i, _)| *i == j + 1)
                        .map(|(_, d)| d.clone())
                        .unwrap_or_default();
                    comparisons.push(json!({
                        "workload": g.workload,
                        "metric": row.metric,
                        "baseline": mean(base),
                        "candidate": mean(cand),
                        "ratio": c.ratio,
                        "p_value": c.p_value,
                        "verdict": verdict_text(c),
                        "baseline_run": self.runs[0].id,
                        "candidate_run": self.runs[j + 1].id,
                        "baseline_n": base.len(),
                        "candidate_n": cand.len(),
                        "baseline_caveats": g.caveats[0],
                        "candidate_caveats": g.caveats[j + 1],
                        "differences": diff,
                    }));
                }
            }
        }
        let scaling: Vec<Value> = self
            .scaling
            .iter()
            .map(|s| {
                json!({
                    "workload": s.workload,
                    "metric": s.metric,
                    "param": s.param,
                    "points": s.points.iter().map(|(x, y)| json!({"value": x, "mean": y})).collect::<Vec<_>>(),
                    "plateau_at": s.plateau,
                })
            })
            .collect();
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| json!({"id": r.id, "run_id": r.run_id, "label": r.label, "params": r.params}))
            .collect();
        json!({ "runs": runs, "comparisons": comparisons, "scaling": scaling, "notes": self.notes })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{RepeatDoc, RunDoc};

    /// A result whose repeats have the given IOPS (none: one headline value of `iops`), 4 KiB
    /// blocks, and latency inversely proportional to IOPS.
    pub(crate) fn result(iops: f64, repeats: &[f64]) -> ResultDoc {
        let lat = |iops: f64| crate::measure::LatNs {
            p50: (1e9 / iops) as u64,
            p99: (2e9 / iops) as u64,
            ..Default::default()
        };
        let doc = json!({
            "name": null,
            "workload": {"rw": "randread", "bs": 4096, "threads": 1, "iodepth": 1, "engine": "null",
                "direct": true, "mix_read_pct": 50, "sync": null, "sync_every": null, "odsync": false,
                "seed": 1, "time_s": 1.0, "data_bytes": null, "ramp_s": 0.0, "interval_s": 1.0},
            "target": {"path": "/tmp/x", "kind": "file", "created": true, "offset_bytes": 0,
                "range_bytes": 1048576, "logical_block_size": 512},
            "iops": iops, "bw_bytes": iops * 4096.0, "ios": 1, "bytes": 4096, "runtime_s": 1.0,
            "lat_ns": lat(iops), "read": null, "write": null, "sync": null,
            "cpu": {"user_s": 0.0, "sys_s": 0.0, "per_io_us": 0.0}, "timeseries": [],
            "fine": {"bin_s": 0.1, "ios": []}, "engine": {"name": "null", "flags": [], "refused": [],
                "registered_buffers": false, "registered_files": false},
            "interrupted": false, "io_path": "direct", "findings": [],
        });
        let mut r: ResultDoc = serde_json::from_value(doc).expect("test result document");
        r.repeats = repeats
            .iter()
            .map(|&v| RepeatDoc {
                iops: v,
                bw_bytes: v * 4096.0,
                lat_ns: lat(v),
                ..Default::default()
            })
            .collect();
        r
    }

    /// A sweep's baseline measured again at its end: halved, the comparison of the sweep's runs
    /// says they do not compare (as the sweep's table does); the same, it says nothing.
    #[test]
    fn a_sweep_whose_baseline_moved_is_said_not_to_compare() {
        let sweep = |id: i64, setting: &str, repeats: &[f64]| {
            run(
                id,
                vec![result(repeats[0], repeats)],
                &[("sweep", "s1"), ("sweep.setting", setting)],
            )
        };
        let steady = [1000.0, 1010.0, 990.0, 1005.0, 995.0];
        let halved = [500.0, 505.0, 495.0, 502.0, 498.0];
        let moved = compare(
            &[
                sweep(7, "as found", &steady),
                sweep(8, "scheduler=none", &steady),
                sweep(9, AGAIN, &halved),
            ],
            0.02,
        );
        let said = moved.notes.join("\n");
        assert!(
            said.contains("at the start (run 7) and at the end (run 9) of sweep s1"),
            "{said}"
        );
        let held = compare(
            &[sweep(7, "as found", &steady), sweep(9, AGAIN, &steady)],
            0.02,
        );
        assert!(
            !held.notes.join("").contains("measured differently"),
            "{:?}",
            held.notes
        );
    }

    /// Results timed two ways are said not to compare by latency; one way says nothing.
    #[test]
    fn latencies_timed_two_ways_are_said_not_to_compare() {
        let batched = |b: u32| {
            let mut r = result(1000.0, &[]);
            r.engine.complete_batch = b;
            r
        };
        let report = compare(
            &[
                run(3, vec![batched(16)], &[]),
                run(4, vec![batched(1)], &[]),
            ],
            0.02,
        );
        let said = report.notes.join("\n");
        assert!(
            said.contains("run 3 waited for up to 16 completions at a time, run 4 waited for each completion: their latencies were timed differently"),
            "{said}"
        );
        let same = compare(
            &[run(3, vec![batched(1)], &[]), run(4, vec![batched(1)], &[])],
            0.02,
        );
        assert!(
            !same.notes.join("").contains("timed differently"),
            "{:?}",
            same.notes
        );
    }

    pub(crate) fn run(id: i64, results: Vec<ResultDoc>, params: &[(&str, &str)]) -> Stored {
        let doc = json!({
            "schema": crate::model::SCHEMA, "run_id": format!("r{id}"), "label": null,
            "started_at": "2026-01-01T00:00:00Z", "command": [], "suite": null,
            "system": {"kernel": null, "hostname": null, "cpu_model": null, "cpu_count": null,
                "mem_total_bytes": null, "target": null},
            "results": [], "findings": [], "interrupted": false, "notes": [],
        });
        let mut doc: RunDoc = serde_json::from_value(doc).expect("test run document");
        doc.results = results;
        doc.params = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Stored { id, doc }
    }

    /// A long label and many parameters (some without a value) fit 120 columns: each run is
    /// said once above the tables, its empty parameters dropped, and named by its id and a
    /// label cut with an ellipsis in the rows.
    #[test]
    fn compare_fits_120_columns_whatever_the_labels_and_parameters() {
        let long = "a label somebody wrote to say everything about this run and then some more";
        let mut params: Vec<(&str, &str)> = vec![("db.note", ""), ("fs", "ext4")];
        let keys: Vec<String> = (0..20).map(|k| format!("knob.k{k}")).collect();
        params.extend(keys.iter().map(|k| (k.as_str(), "value")));
        let mut a = run(4, vec![result(100.0, &[99.0, 100.0, 101.0])], &params);
        a.doc.label = Some(long.into());
        let b = run(5, vec![result(200.0, &[199.0, 200.0, 201.0])], &params);
        let text = compare(&[a, b], 0.02).text();
        assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
        assert!(!text.contains("db.note"), "{text}");
        assert!(text.contains("fs=ext4"), "{text}");
        assert!(text.contains("run 4 a label somebody wrote t… "), "{text}");
    }

    fn verdicts(report: &Report, metric: &str) -> Vec<String> {
        report.json()["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["metric"] == metric)
            .map(|c| c["verdict"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn clearly_different_repeats_are_faster_and_latency_agrees() {
        let a = run(1, vec![result(0.0, &[100.0, 101.0, 99.0])], &[]);
        let b = run(2, vec![result(0.0, &[200.0, 202.0, 198.0])], &[]);
        let r = compare(&[a.clone(), b.clone()], 0.02);
        assert_eq!(verdicts(&r, "iops"), ["faster"]);
        assert_eq!(verdicts(&r, "bw_bytes"), ["faster"]);
        assert_eq!(
            verdicts(&r, "lat_p50_ns"),
            ["faster"],
            "lower latency is faster"
        );
        let c = &r.json()["comparisons"][0];
        assert_eq!(c["baseline"], 100.0);
        assert_eq!(c["candidate"], 200.0);
        assert_eq!(c["ratio"], 2.0);
        assert!(c["p_value"].as_f64().unwrap() < 0.05);
        // Swapped, the same data reads the other way.
        let r = compare(&[b, a], 0.02);
        assert_eq!(verdicts(&r, "iops"), ["slower"]);
        assert_eq!(verdicts(&r, "lat_p99_ns"), ["slower"]);
    }

    #[test]
    fn overlapping_repeats_and_changes_within_noise_are_no_change() {
        // Means 100 and 101, spread ±10: Welch's p is far above 0.05.
        let a = run(1, vec![result(0.0, &[90.0, 100.0, 110.0])], &[]);
        let b = run(2, vec![result(0.0, &[91.0, 101.0, 111.0])], &[]);
        assert_eq!(
            verdicts(&compare(&[a, b], 0.02), "iops"),
            ["no significant change"]
        );
        // Significant (tiny spread) but only 1% apart: within the 2% noise threshold.
        let a = run(1, vec![result(0.0, &[100.0, 100.1, 99.9])], &[]);
        let b = run(2, vec![result(0.0, &[101.0, 101.1, 100.9])], &[]);
        let r = compare(&[a.clone(), b.clone()], 0.02);
        assert!(r.json()["comparisons"][0]["p_value"].as_f64().unwrap() < 0.05);
        assert_eq!(verdicts(&r, "iops"), ["no significant change"]);
        // With a 0.5% threshold the same 1% is real.
        assert_eq!(verdicts(&compare(&[a, b], 0.005), "iops"), ["faster"]);
    }

    #[test]
    fn without_repeats_significance_cannot_be_judged() {
        let r = compare(
            &[
                run(1, vec![result(100.0, &[])], &[]),
                run(2, vec![result(300.0, &[])], &[]),
            ],
            0.02,
        );
        assert_eq!(verdicts(&r, "iops"), [CANNOT_JUDGE]);
        assert_eq!(r.json()["comparisons"][0]["ratio"], 3.0);
        assert!(r.json()["comparisons"][0]["p_value"].is_null());
    }

    #[test]
    fn results_match_by_workload_and_single_results_pair_with_differences_named() {
        let mut qd32 = result(0.0, &[400.0, 401.0, 399.0]);
        qd32.workload.iodepth = 32;
        let r = compare(
            &[
                run(1, vec![result(0.0, &[100.0, 101.0, 99.0])], &[]),
                run(2, vec![qd32.clone()], &[]),
            ],
            0.02,
        );
        let c = &r.json()["comparisons"][0];
        assert_eq!(c["differences"], json!(["iodepth 1 → 32"]));
        assert_eq!(c["verdict"], "faster");
        // In a run of two results, the QD32 one meets its own kind, not the QD1 baseline.
        let mut qd1 = result(0.0, &[120.0, 121.0, 119.0]);
        qd1.workload.iodepth = 1;
        let r = compare(
            &[
                run(1, vec![result(0.0, &[100.0, 101.0, 99.0])], &[]),
                run(2, vec![qd32, qd1], &[]),
            ],
            0.02,
        );
        let j = r.json();
        let iops: Vec<&Value> = j["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["metric"] == "iops")
            .collect();
        assert_eq!(iops.len(), 1);
        assert_eq!(iops[0]["candidate"], 120.0);
        assert_eq!(
            j["notes"].as_array().unwrap().len(),
            1,
            "the QD32 result is named as unmatched"
        );
    }

    #[test]
    fn scaling_orders_by_the_parameter_and_names_the_plateau() {
        // "SSD Performance"'s shape: growth up to 6 disks, then flat. Given out of order on purpose.
        let runs = [
            run(10, vec![result(81000.0, &[])], &[("disks", "8")]),
            run(11, vec![result(40000.0, &[])], &[("disks", "4")]),
            run(12, vec![result(80000.0, &[])], &[("disks", "6")]),
            run(13, vec![result(80500.0, &[])], &[("disks", "12")]),
        ];
        let r = compare(&runs, 0.02);
        let j = r.json();
        let ids: Vec<i64> = j["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [11, 12, 10, 13]);
        let iops = j["scaling"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["metric"] == "iops")
            .unwrap()
            .clone();
        assert_eq!(iops["plateau_at"], 6.0);
        assert!(r.text().contains("no gain beyond disks=6"), "{}", r.text());
        // Still growing at the last point: no plateau.
        let growing = [
            run(1, vec![result(100.0, &[])], &[("disks", "1")]),
            run(2, vec![result(200.0, &[])], &[("disks", "2")]),
        ];
        assert!(compare(&growing, 0.02)
            .text()
            .contains("still growing at disks=2"));
    }
}
