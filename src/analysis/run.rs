//! The findings a run's executor knows of beyond each result's own: where sequential data came
//! from, stability, the cache probe's knee, steady state by rounds.

use crate::analysis::source::{working_set, Source};
use crate::model::{ResultDoc, RunDoc};
use crate::plan::{Plan, Until};
use crate::suite::cells::Cell;
use crate::suite::stable::{self, Rule};
use crate::suite::{Layout, Op};
use crate::target::Target;
use crate::units;
use iogauge_analyze::{Finding, Kind as FindingKind, Severity};
use std::collections::BTreeMap;
use std::time::Duration;

/// One cell's `--until-stable` figures.
pub struct Stability {
    /// Index of the result in the run document.
    pub result: usize,
    pub name: String,
    /// How long the cell ran.
    pub ran: Duration,
    /// When it met the rule, and the half-width then.
    pub stable: Option<(Duration, f64)>,
    /// The half-width over the whole run.
    pub full: Option<f64>,
}

/// What the executor saw besides the document, for the run's own findings.
pub struct Seen<'a> {
    /// Cell index of each result.
    pub cell_of: &'a [usize],
    /// A cache `probe cache` found on this stack earlier: run id, bytes, device.
    pub known_cache: Option<(i64, f64, String)>,
    /// `--latency-target`: the search's answer.
    pub latency: Option<Latency>,
}

/// A `--latency-target` search's answer in words, the best rate that met the target, and
/// when none did, the lowest rate asked with the IOPS and latency it achieved.
pub struct Latency {
    pub answer: String,
    pub best: Option<f64>,
    pub lowest: Option<(f64, f64, f64)>,
}

/// A finished run's findings: each result's and the run's (`annotate`), then what only the
/// executor knows of — a cache found earlier, the probe's knee, the latency search's answer,
/// steady state by rounds, and where each suite cell's data came from and when it was stable.
/// Returns the stability judged per result under `--until-stable`.
pub fn judge(doc: &mut RunDoc, plan: &Plan, target: &Target, seen: Seen) -> Option<Vec<Stability>> {
    crate::analysis::annotate(doc, target.data_bytes);
    if let Some((id, bytes, dev)) = &seen.known_cache {
        if (target.all_bytes() as f64) <= *bytes {
            let f = Finding {
                kind: FindingKind::Cache,
                severity: Severity::Warning,
                summary: format!(
                    "the working set ({}) fits inside the cache of about {} that `iogauge probe cache` found in front of {dev} (run {id}): these numbers may come from that cache",
                    units::iec(target.all_bytes()),
                    units::iec(*bytes as u64)
                ),
                evidence: BTreeMap::from([
                    ("working_set_bytes".to_string(), target.all_bytes() as f64),
                    ("cache_bytes".to_string(), *bytes),
                ]),
                advice: "Use a --size well beyond the cache so the device answers.".into(),
                result: None,
                metric: None,
            };
            doc.findings.push(f);
        }
    }
    if plan.probe {
        // Each step of a probe measures a cache on purpose: its own cache warnings say nothing.
        let own_cache = |f: &Finding| f.kind == FindingKind::Cache && f.result.is_some();
        doc.findings.retain(|f| !own_cache(f));
        for r in &mut doc.results {
            r.findings.retain(|f| f.kind != FindingKind::Cache);
        }
        // The sequential passes that warm each working set are no results of the probe's: a
        // stall while one filled the cache says nothing of the answer, and is not shown.
        let warming = |r: &crate::model::ResultDoc| r.workload.rw != crate::workload::Rw::Randread;
        let warm: Vec<bool> = doc.results.iter().map(warming).collect();
        doc.findings.retain(|f| {
            !f.result
                .is_some_and(|i| warm.get(i).copied().unwrap_or(false))
        });
        for r in doc.results.iter_mut().filter(|r| warming(r)) {
            r.findings.clear();
        }
        if let Some(f) = probe_finding(&plan.cells, seen.cell_of, &doc.results, target, &doc.system)
        {
            doc.findings.push(f);
        }
    }
    if let Some(Latency {
        answer,
        best,
        lowest,
    }) = seen.latency
    {
        let mut f = finding(FindingKind::Ceiling, answer, 0);
        f.result = None;
        f.severity = match best {
            Some(_) => Severity::Info,
            None => Severity::Warning,
        };
        if let Some(b) = best {
            f.evidence.insert("best_iops".into(), b);
        }
        if let (None, Some((rate, iops, lat))) = (best, lowest) {
            f.evidence.insert("lowest_rate_iops".into(), rate);
            f.evidence.insert("lowest_achieved_iops".into(), iops);
            f.evidence.insert("lowest_latency_ns".into(), lat);
            f.advice = "Even a slow, paced rate missed the target: the latency comes from the device (or what lies between), not from queueing; relax the target or look for what adds latency at low load (power saving, a remote or throttled volume).".into();
        }
        doc.findings.push(f);
    }
    if let Some(f) = doc.rounds.as_ref().and_then(rounds_finding) {
        doc.findings.push(f);
    }
    let stability =
        (plan.until == Until::Stable).then(|| stability(&plan.cells, seen.cell_of, &doc.results));
    add_findings(
        doc,
        &plan.cells,
        seen.cell_of,
        stability.as_deref(),
        plan.env.ram,
    );
    stability
}

/// Per result: when its IOPS met the stability rule, judged on the same 100 ms samples the
/// live rule saw (the fine bins of the result).
pub(crate) fn stability(
    cells: &[Cell],
    cell_of: &[usize],
    results: &[ResultDoc],
) -> Vec<Stability> {
    results
        .iter()
        .zip(cell_of)
        .enumerate()
        .filter_map(|(i, (r, &ci))| {
            let max = cells[ci].planned_time()?;
            let bin = r.fine.bin_s.max(1e-3);
            // The samples the live rule judged, when it ran: its verdict is the cell's, so
            // the finding never says "not stable" of a cell the rule stopped as stable.
            // Otherwise (older documents) the bins: whole ones only, as a run stopped mid-bin
            // leaves a short last one, and not the first, which holds the workers' start that
            // the live rule (starting at its first tick) never saw either.
            let whole = ((r.runtime_s / bin) + 1e-6).floor() as usize;
            let iops: Vec<f64> = match r.fine.rule.is_empty() {
                false => r.fine.rule.clone(),
                true => r
                    .fine
                    .ios
                    .iter()
                    .take(whole)
                    .skip(1)
                    .map(|&n| f64::from(n) / bin)
                    .collect(),
            };
            let rule = Rule::new(max);
            Some(Stability {
                result: i,
                name: cells[ci].name(),
                ran: Duration::from_secs_f64(r.runtime_s),
                stable: rule.stable_after(&iops, Duration::from_secs_f64(bin)),
                full: stable::rel_half_width(&iops),
            })
        })
        .collect()
}

/// The suite's own findings: where a seq result's data came from, and when a cell was stable.
pub(crate) fn add_findings(
    doc: &mut RunDoc,
    cells: &[Cell],
    cell_of: &[usize],
    stab: Option<&[Stability]>,
    ram: u64,
) {
    for (i, &ci) in cell_of.iter().enumerate() {
        let mut new = Vec::new();
        let r = &doc.results[i];
        let has_cache = r.findings.iter().any(|f| f.kind == FindingKind::Cache);
        if cells[ci].layout == Layout::Seq && !has_cache {
            let ws = working_set(r);
            let src = Source::of(r.workload.direct, ws, ram);
            let mut f = finding(FindingKind::Cache, src.describe().to_string(), i);
            f.evidence.insert("working_set_bytes".into(), ws as f64);
            f.evidence.insert("mem_total_bytes".into(), ram as f64);
            if src == Source::Cache {
                f.severity = Severity::Warning;
                f.advice =
                    "Use --direct, or a --size larger than RAM, so the device answers.".into();
            }
            new.push(f);
        }
        if let Some(s) = stab.and_then(|all| all.iter().find(|s| s.result == i)) {
            let summary = match s.stable {
                Some((t, h)) => format!(
                    "IOPS stable (±{:.1}% at 95% confidence) after {} of {}",
                    h * 100.0,
                    units::duration(t),
                    units::duration(s.ran)
                ),
                None => format!("IOPS not stable to ±3% within {}", units::duration(s.ran)),
            };
            let mut f = finding(FindingKind::Steady, summary, i);
            f.evidence.insert("ran_s".into(), s.ran.as_secs_f64());
            if let Some((t, h)) = s.stable {
                f.evidence.insert("stable_after_s".into(), t.as_secs_f64());
                f.evidence.insert("ci95_half_width_frac".into(), h);
            }
            if let Some(h) = s.full {
                f.evidence.insert("ci95_half_width_frac_at_end".into(), h);
            }
            new.push(f);
        }
        for f in new {
            doc.results[i].findings.push(f.clone());
            doc.findings.push(f);
        }
    }
}

/// The share of a result's read bytes that no device at the bottom of the target's stack read:
/// `None` when nothing lies under it or too little was read to tell.
fn never_reached(r: &ResultDoc, system: &iogauge_sysinfo::SystemInfo) -> Option<f64> {
    let t = system.target.as_ref()?;
    let bottom: Vec<&str> = t
        .devices
        .iter()
        .filter(|d| d.below.is_empty())
        .map(|d| d.name.as_str())
        .collect();
    let issued = r.read.as_ref()?.bytes as f64;
    if bottom.is_empty() || issued < (1u64 << 20) as f64 {
        return None;
    }
    let mut reached = 0.0;
    for name in bottom {
        reached += r.devices.iter().find(|d| d.name == name)?.read_bytes? as f64;
    }
    Some(1.0 - (reached / issued).min(1.0))
}

/// Of the largest working set's reads, this share or more never reaching the disk means every
/// set was served from a cache.
const ALL_CACHED: f64 = 0.95;

/// `probe cache`: the cache size fitted to the random reads' mean latency by working set.
pub(crate) fn probe_finding(
    cells: &[Cell],
    cell_of: &[usize],
    results: &[ResultDoc],
    target: &Target,
    system: &iogauge_sysinfo::SystemInfo,
) -> Option<Finding> {
    let probes: Vec<(f64, &ResultDoc)> = cell_of
        .iter()
        .zip(results)
        .filter(|(&c, r)| cells[c].op == Op::Randread && r.ios > 0)
        .filter_map(|(&c, r)| Some((cells[c].range? as f64, r)))
        .collect();
    let (lo, hi) = (probes.first()?.0, probes.last()?.0);
    // Each step's share of reads at or under a latency, from its histogram.
    let shares: Vec<Box<dyn Fn(f64) -> f64 + '_>> = probes
        .iter()
        .map(|(_, r)| {
            let total: u64 = r.lat_hist.iter().map(|b| b[1]).sum();
            Box::new(move |t: f64| {
                let under: u64 = r
                    .lat_hist
                    .iter()
                    .filter(|b| b[0] as f64 <= t)
                    .map(|b| b[1])
                    .sum();
                under as f64 / total.max(1) as f64
            }) as Box<dyn Fn(f64) -> f64>
        })
        .collect();
    let steps: Vec<iogauge_analyze::Step> = probes
        .iter()
        .zip(&shares)
        .map(|((w, r), f)| iogauge_analyze::Step {
            bytes: *w,
            median_ns: r.lat_ns.p50 as f64,
            p90_ns: r.lat_ns.p90 as f64,
            share_under: f.as_ref(),
        })
        .collect();
    let knee = iogauge_analyze::cache_knee(&steps);
    let on = target.device.as_deref().unwrap_or("the target");
    // The device's own counters outrank the latencies: when the largest working set's reads
    // (nearly) never reached the disk, every set was served from a cache, whatever latency
    // steps a page cache's lookups show between sizes (they read as a 32 MiB "cache" in front
    // of a loop device whose every read the page cache answered).
    // Counted here rather than taken from `absorbed`, whose minimum evidence a probe's short
    // steps do not meet by design.
    let never_reached = probes
        .last()
        .and_then(|(_, r)| never_reached(r, system))
        .filter(|&a| a >= ALL_CACHED);
    let knee = match never_reached {
        Some(_) => knee.map(|k| iogauge_analyze::Knee {
            cache_bytes: hi,
            ..k
        }),
        None => knee,
    };
    let mut f = match knee {
        _ if never_reached.is_some() => Finding {
            kind: FindingKind::Cache,
            severity: Severity::Info,
            summary: format!(
                "every working set tried, up to {}, was served from a cache in the stack of {on} ({:.0}% of the largest set's reads never reached the disk): the cache holds at least {}",
                units::iec(hi as u64),
                never_reached.unwrap_or(1.0) * 100.0,
                units::iec(hi as u64)
            ),
            evidence: BTreeMap::from([("cache_bytes".to_string(), hi)]),
            advice: "Measure with a working set larger than this (a larger --size) or with the cache out of the way (a loop device with --direct-io=on, --direct), or these results come from the cache.".into(),
            result: None,
            metric: None,
        },
        Some(k) if k.cache_bytes >= hi => Finding {
            kind: FindingKind::Cache,
            severity: Severity::Info,
            summary: format!(
                "random reads stay at {} up to the whole {} probed: a cache of at least that size sits in the stack of {on}",
                units::latency(k.hit_ns),
                units::iec(hi as u64)
            ),
            evidence: BTreeMap::new(),
            advice: "Measure with a working set larger than this (a larger --size), or these results come from the cache.".into(),
            result: None,
            metric: None,
        },
        Some(k) => Finding {
            kind: FindingKind::Cache,
            severity: Severity::Info,
            summary: format!(
                "reads within ~{} are served {:.0}× faster ({} against {}): a cache of about {} sits in the stack of {on}",
                units::iec(k.cache_bytes as u64),
                k.miss_ns / k.hit_ns,
                units::latency(k.hit_ns),
                units::latency(k.miss_ns),
                units::iec(k.cache_bytes as u64)
            ),
            evidence: BTreeMap::new(),
            advice: "Give runs on this stack a working set well beyond the cache (--size), or they measure the cache.".into(),
            result: None,
            metric: None,
        },
        None => Finding {
            kind: FindingKind::Cache,
            severity: Severity::Info,
            summary: format!(
                "no cache shows between {} and {}: random reads take about as long over every working set",
                units::iec(lo as u64),
                units::iec(hi as u64)
            ),
            evidence: BTreeMap::new(),
            advice: String::new(),
            result: None,
            metric: None,
        },
    };
    if let Some(k) = knee {
        f.evidence.insert("cache_bytes".into(), k.cache_bytes);
        f.evidence.insert("hit_ns".into(), k.hit_ns);
        f.evidence.insert("miss_ns".into(), k.miss_ns);
        f.evidence.insert("threshold_ns".into(), k.threshold_ns);
    }
    Some(f)
}

/// Steady state by rounds, as the SNIA PTS states it: reached (and when), or not within the
/// rounds allowed, with the window's numbers.
pub(crate) fn rounds_finding(r: &crate::model::RoundsDoc) -> Option<Finding> {
    let (ex, sl) = (r.excursion_frac?, r.slope_excursion_frac?);
    let numbers = format!(
        "the last {} rounds of {} span {:.1}% of their mean (limit 20%) with a trend of {:.1}% (limit 10%)",
        r.window,
        r.tracked,
        ex * 100.0,
        sl * 100.0
    );
    let mut f = match r.steady_at_round {
        Some(n) => Finding {
            kind: FindingKind::Steady,
            severity: Severity::Info,
            summary: format!("steady state (SNIA PTS) in round {n}: {numbers}"),
            evidence: BTreeMap::new(),
            advice: "The results are the measurement window: the last rounds of every cell.".into(),
            result: None,
            metric: None,
        },
        None => Finding {
            kind: FindingKind::Steady,
            severity: Severity::Warning,
            summary: format!(
                "no steady state (SNIA PTS) within {} rounds: {numbers}",
                r.iops_per_round.len()
            ),
            evidence: BTreeMap::new(),
            advice: "Run more rounds (--max-rounds) or longer ones (--cell-time); a device still drifting after 25 rounds is reported as such by the specification.".into(),
            result: None,
            metric: None,
        },
    };
    f.evidence.insert("excursion_frac".into(), ex);
    f.evidence.insert("slope_excursion_frac".into(), sl);
    f.evidence
        .insert("rounds".into(), r.iops_per_round.len() as f64);
    Some(f)
}

pub(crate) fn finding(kind: FindingKind, summary: String, result: usize) -> Finding {
    Finding {
        kind,
        severity: Severity::Info,
        summary,
        evidence: BTreeMap::new(),
        advice: String::new(),
        result: Some(result),
        metric: None,
    }
}
