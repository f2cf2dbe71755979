//! Where scaling stops: for runs that differ in one numeric parameter (`--param disks=4`),
//! each throughput metric against it, and the value past which it no longer grows.

use super::{mean, Group};
use crate::store::Stored;

pub(crate) struct Scaling {
    pub(crate) workload: String,
    pub(crate) metric: &'static str,
    pub(crate) param: String,
    pub(crate) points: Vec<(f64, f64)>,
    /// The parameter value beyond which the metric stops growing, or `None` if it still grows.
    pub(crate) plateau: Option<f64>,
}

/// The one parameter the runs differ in, when it is numeric in every run.
pub(super) fn scaling_param(runs: &[&Stored]) -> Option<(String, Vec<f64>)> {
    let first = &runs.first()?.doc.params;
    let mut varying = first.keys().filter(|k| {
        let vals: Vec<Option<&String>> = runs.iter().map(|r| r.doc.params.get(*k)).collect();
        vals.iter().any(|v| *v != vals[0])
    });
    let key = varying.next()?.clone();
    if varying.next().is_some() {
        return None;
    }
    let xs = runs
        .iter()
        .map(|r| {
            r.doc
                .params
                .get(&key)?
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
        })
        .collect::<Option<Vec<f64>>>()?;
    Some((key, xs))
}

/// For throughput metrics, the point after which no later run gains more than the ceiling
/// finding's gain per doubling of the parameter (`iogauge_analyze::levels_off`): one rule for
/// "flat" across compare, the report and the findings.
pub(super) fn scaling_of(runs: &[&Stored], key: &str, groups: &[Group]) -> Vec<Scaling> {
    let gain = iogauge_analyze::Thresholds::default().ceiling_gain;
    let xs: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.doc.params.get(key)?.trim().parse().ok())
        .collect();
    let mut out = Vec::new();
    for g in groups {
        for row in g
            .rows
            .iter()
            .filter(|r| matches!(r.metric, "iops" | "bw_bytes"))
        {
            let Some(ys) = row
                .sides
                .iter()
                .map(|s| s.as_deref().map(mean))
                .collect::<Option<Vec<f64>>>()
            else {
                continue;
            };
            let positive = xs.iter().all(|&x| x > 0.0);
            let plateau = positive
                .then(|| iogauge_analyze::levels_off(&xs, &ys, gain))
                .flatten()
                .map(|i| xs[i]);
            out.push(Scaling {
                workload: g.workload.clone(),
                metric: row.metric,
                param: key.to_string(),
                points: xs.iter().copied().zip(ys).collect(),
                plateau,
            });
        }
    }
    out
}
