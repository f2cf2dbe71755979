//! `rebuild`: an md array recovered a member while the cells ran (`sweep --rebuild`). Said once
//! for the run (how long, at what rate, under which cells), and once for each cell it ran under,
//! whose members then moved the rebuild's reads and writes beside iogauge's: those are the
//! rebuild's, not another process's (`other-io`) nor the kernel's on iogauge's behalf
//! (`amplification`), and members written unequally are the rebuild's doing (`imbalance`).

use crate::model::{RebuildDoc, RebuildSample, RunDoc};
use crate::units;
use iogauge_analyze::{Finding, Kind, Severity, Thresholds};
use std::collections::BTreeMap;

/// Device findings about IO beyond iogauge's, which a rebuild's own reads and writes explain.
pub const EXPLAINS: [Kind; 3] = [Kind::OtherIo, Kind::Amplification, Kind::Imbalance];

/// The run's rebuild finding, and the cells the rebuild ran under (indices into the results),
/// whose findings are rewritten in place: each gets its own rebuild finding, its device
/// findings that the rebuild's IO explains are taken out, and a database's dip in TPS while
/// the rebuild ran with a member saturated is named the rebuild's (the `checkpoint` rule), a
/// stall inside it with it, unless a checkpoint already explains that dip.
pub fn findings(doc: &mut RunDoc, th: &Thresholds) -> (Vec<Finding>, Vec<usize>) {
    let Some(rb) = doc.rebuild.clone() else {
        return (Vec::new(), Vec::new());
    };
    let end = rb.finished_s.unwrap_or(f64::INFINITY);
    let mut out = Vec::new();
    let mut under = Vec::new();
    if rb.cells.len() == doc.results.len() {
        for (i, (w, r)) in rb.cells.iter().zip(doc.results.iter_mut()).enumerate() {
            if w.from_s >= end {
                continue;
            }
            under.push(i);
            let (from, to) = (done_at(&rb, w.from_s), done_at(&rb, w.to_s.min(end)));
            let rate = median_kib(&rb, w.from_s, w.to_s.min(end));
            r.findings.retain(|f| !EXPLAINS.contains(&f.kind));
            // A rise when the rebuild ended inside the cell is the array whole again, not a
            // cache or a throttle: said so, as information (md's file is read once a second).
            let whole_at = rb.finished_s.filter(|&e| e < w.to_s).map(|e| e - w.from_s);
            for f in r.findings.iter_mut().filter(|f| f.kind == Kind::Regime) {
                let (Some(at), Some(&change), Some(&before), Some(&after)) = (
                    whole_at,
                    f.evidence.get("change_s"),
                    f.evidence.get("before_iops"),
                    f.evidence.get("after_iops"),
                ) else {
                    continue;
                };
                let slack = f.evidence.get("bin_s").copied().unwrap_or(0.0).max(1.0) + 1.0;
                let Some(head) = f.summary.find(" and stayed there").map(|p| &f.summary[..p])
                else {
                    continue;
                };
                if after > before && (change - at).abs() <= slack {
                    f.summary = format!(
                        "{head} as {} finished rebuilding {}: the rest of the cell measured the array whole",
                        rb.array, rb.member
                    );
                    f.severity = Severity::Info;
                    f.advice = "The cell measured the rebuilding array, then the whole one: quote them apart (iogauge show has the rebuild second by second).".into();
                }
            }
            if let Some(t) = &r.timeline {
                // The rebuild on the timeline's clock, which starts with the measurement (the
                // window opened just before it): one step either side is the rule's slack.
                let rebuilding = iogauge_analyze::Flush {
                    label: format!("the rebuild of {} into {}", rb.member, rb.array),
                    start_s: (0.0 - w.from_s).max(0.0),
                    end_s: rb.finished_s.unwrap_or(w.to_s) - w.from_s,
                    rebuild: true,
                };
                let span =
                    |f: &Finding| Some((*f.evidence.get("start_s")?, *f.evidence.get("end_s")?));
                let told: Vec<(f64, f64)> = r
                    .findings
                    .iter()
                    .filter(|f| f.kind == Kind::Checkpoint)
                    .filter_map(span)
                    .collect();
                for mut d in super::dips(t, std::slice::from_ref(&rebuilding), th) {
                    let Some((a, b)) = span(&d) else { continue };
                    if told.iter().any(|&(x, y)| a < y && b > x) {
                        continue;
                    }
                    // A stall inside the dip is the same event (as beside a checkpoint).
                    r.findings.retain(|f| {
                        let (Some(&s), Some(&l)) =
                            (f.evidence.get("start_s"), f.evidence.get("duration_s"))
                        else {
                            return true;
                        };
                        f.kind != Kind::Stall || !(s < b + 1.0 && s + l > a - 1.0)
                    });
                    d.result = Some(i);
                    r.findings.push(d);
                }
            }
            let mut f = Finding::new(
                Kind::Rebuild,
                Severity::Info,
                format!(
                    "{}: ran while {} rebuilt {} ({} → {}{}, {}): the members' reads and writes beyond the workload's are the rebuild's",
                    r.name.as_deref().unwrap_or("the cell"),
                    rb.array,
                    rb.member,
                    pct(from),
                    pct(to),
                    match w.to_s > end {
                        true => ", finished during the cell",
                        false => "",
                    },
                    kib_rate(rate)
                ),
                "Compare it with the whole array's run of the same sweep (iogauge compare sweep:ID).",
            );
            f.evidence = BTreeMap::from([
                ("done_from".to_string(), from),
                ("done_to".to_string(), to),
                ("rebuild_kib_s".to_string(), rate),
            ]);
            f.result = Some(i);
            r.findings.push(f);
        }
    }
    let cells = match (under.len(), doc.results.len()) {
        (0, _) => "before the first cell measured".to_string(),
        (u, n) if u == n => "under every cell".to_string(),
        (u, n) => format!("under the first {u} of {n} cells; the others measured the whole array"),
    };
    let limits = format!(
        "md's limits {}–{}{}",
        kib_rate(rb.speed_min_kib as f64),
        kib_rate(rb.speed_max_kib as f64),
        match rb.speed_set {
            true => ", set by --rebuild-speed",
            false => ", the system's",
        }
    );
    let last = rb.samples.last().map_or(0.0, |s| s.t_s);
    let summary = match rb.finished_s {
        Some(t) => format!(
            "{} rebuilt {} in {t:.1} s at {} ({limits}), {cells}",
            rb.array,
            rb.member,
            kib_rate(median_kib(&rb, 0.0, t)),
        ),
        None => format!(
            "{} had rebuilt {} of {} when sampling stopped after {last:.1} s at {} ({limits}), {cells}",
            rb.array,
            pct(done_at(&rb, last)),
            rb.member,
            kib_rate(median_kib(&rb, 0.0, last)),
        ),
    };
    let mut f = Finding::new(
        Kind::Rebuild,
        Severity::Info,
        summary,
        "A slower rebuild (--rebuild-speed) costs the workload less for longer; the window in which a second failure loses data grows with it.",
    );
    f.evidence = BTreeMap::from([
        ("rebuild_s".to_string(), rb.finished_s.unwrap_or(last)),
        (
            "finished".to_string(),
            f64::from(u8::from(rb.finished_s.is_some())),
        ),
        ("cells_under".to_string(), under.len() as f64),
    ]);
    out.insert(0, f);
    (out, under)
}

/// How far the rebuild was at `t`, between the samples around it (1 once whole).
fn done_at(rb: &RebuildDoc, t: f64) -> f64 {
    let done = |s: &RebuildSample| match s.degraded {
        0 => 1.0,
        _ => s.done.unwrap_or(0.0),
    };
    let before = rb.samples.iter().take_while(|s| s.t_s <= t + 1e-9).last();
    let after = rb.samples.iter().find(|s| s.t_s > t + 1e-9);
    match (before, after) {
        (Some(a), Some(b)) if b.t_s > a.t_s => {
            done(a) + (done(b) - done(a)) * (t - a.t_s) / (b.t_s - a.t_s)
        }
        (Some(a), _) => done(a),
        (None, _) => 0.0,
    }
}

/// md's own rate over the samples between `from` and `to` and the one after (it covers the
/// seconds before it): their median, KiB/s. Readings within half a sampling interval of the
/// re-adding are left out: md's `sync_speed` then still holds an old average.
fn median_kib(rb: &RebuildDoc, from: f64, to: f64) -> f64 {
    let settled = EVERY_S / 2.0;
    let mut v: Vec<f64> = rb
        .samples
        .iter()
        .filter(|s| s.t_s >= from.max(settled) && s.t_s <= to + EVERY_S && s.degraded > 0)
        .filter_map(|s| s.speed_kib.filter(|k| *k > 0).map(|k| k as f64))
        .collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// How often the sweep reads md's files (sweep/rebuild.rs), seconds.
const EVERY_S: f64 = 1.0;

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn kib_rate(kib: f64) -> String {
    units::bw(kib * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RebuildWindow;

    /// One reading of md's files while it recovers.
    fn s(t: f64, done: Option<f64>, k: Option<u64>, degraded: u32) -> RebuildSample {
        RebuildSample {
            t_s: t,
            action: "recover".into(),
            done,
            speed_kib: k,
            degraded,
        }
    }

    fn rb(finished: Option<f64>) -> RebuildDoc {
        RebuildDoc {
            array: "md100".into(),
            member: "/dev/vdb".into(),
            speed_min_kib: 20480,
            speed_max_kib: 40960,
            speed_set: true,
            finished_s: finished,
            cells: vec![
                RebuildWindow {
                    name: None,
                    from_s: 0.0,
                    to_s: 1.9,
                },
                RebuildWindow {
                    name: None,
                    from_s: 2.0,
                    to_s: 3.9,
                },
            ],
            samples: vec![
                s(0.0, Some(0.0), Some(0), 1),
                s(1.0, Some(0.3), Some(40000), 1),
                s(2.0, Some(0.6), Some(41000), 1),
                s(3.0, Some(0.9), Some(42000), 1),
                s(3.5, None, None, 0),
            ],
        }
    }

    #[test]
    fn the_rebuild_is_timed_and_the_cells_under_it_named() {
        let d = rb(Some(3.5));
        assert!((done_at(&d, 1.5) - 0.45).abs() < 1e-9);
        assert_eq!(done_at(&d, 3.6), 1.0);
        assert_eq!(median_kib(&d, 0.0, 3.5), 41000.0);
    }

    /// The first cell ran under the rebuild, the second after it: only the first is said to,
    /// and only its member-IO findings are the rebuild's.
    #[test]
    fn a_rebuild_that_ended_before_a_cell_is_not_said_of_it() {
        let amp = || {
            Finding::new(
                Kind::Amplification,
                Severity::Info,
                "vda moved 40 MiB/s of reads".into(),
                "",
            )
        };
        let mut results = vec![
            crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1000.0),
            crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1000.0),
        ];
        for r in &mut results {
            r.findings.push(amp());
        }
        let mut doc = crate::analysis::tests::doc(results);
        let mut d = rb(Some(1.5));
        d.samples.truncate(2);
        d.samples.push(RebuildSample {
            t_s: 1.5,
            degraded: 0,
            ..Default::default()
        });
        doc.rebuild = Some(d);
        let (f, under) = findings(&mut doc, &Thresholds::default());
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(under, [0]);
        assert!(f[0].summary.starts_with("md100 rebuilt /dev/vdb in 1.5 s at 39.1 MiB/s (md's limits 20.0 MiB/s–40.0 MiB/s, set by --rebuild-speed), under the first 1 of 2 cells"), "{}", f[0].summary);
        let cell = &doc.results[0].findings[0];
        assert_eq!(cell.result, Some(0));
        assert!(
            cell.summary
                .contains("(0% → 100%, finished during the cell, 39.1 MiB/s)"),
            "{}",
            cell.summary
        );
        let kinds = |i: usize| {
            doc.results[i]
                .findings
                .iter()
                .map(|f| f.kind)
                .collect::<Vec<_>>()
        };
        assert_eq!(kinds(0), [Kind::Rebuild]);
        assert_eq!(kinds(1), [Kind::Amplification]);
    }

    /// md's files as a guest's RAID5 rebuild gave them: the reading at the re-adding still holds
    /// md's old average (352 KiB/s) and is left out of the rate; a cell's progress at its end is
    /// read between the samples around it (55%), not from the last one before (31%).
    #[test]
    fn a_guests_rebuild_reads_as_it_ran() {
        let d = RebuildDoc {
            samples: vec![
                s(0.0115, Some(0.0), Some(352), 1),
                s(1.0307, Some(0.31265), Some(41984), 1),
                s(2.0368, Some(0.56278), Some(38366), 1),
                s(3.0383, Some(0.87543), Some(39850), 1),
                s(3.9903, None, None, 0),
            ],
            finished_s: Some(3.9903),
            ..rb(None)
        };
        assert_eq!(median_kib(&d, 0.0017, 2.0008), (41984.0 + 38366.0) / 2.0);
        assert_eq!(median_kib(&d, 0.0, 3.9903), 39850.0);
        assert_eq!(pct(done_at(&d, 2.0008)), "55%");
    }

    /// A run cut before the array was whole says how far it got.
    #[test]
    fn an_unfinished_rebuild_says_how_far_it_got() {
        let mut doc = crate::analysis::tests::doc(vec![
            crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1000.0),
            crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1000.0),
        ]);
        let mut d = rb(None);
        d.samples.pop();
        doc.rebuild = Some(d);
        let (f, under) = findings(&mut doc, &Thresholds::default());
        assert!(
            f[0].summary
                .starts_with("md100 had rebuilt 90% of /dev/vdb when sampling stopped after 3.0 s"),
            "{}",
            f[0].summary
        );
        assert!(
            f[0].summary.ends_with("under every cell"),
            "{}",
            f[0].summary
        );
        assert_eq!(f.len(), 1);
        assert_eq!(under, [0, 1]);
    }

    /// A database's measurement under a rebuild that ended after 6 of its 12 seconds: TPS at
    /// 1,000 while md copied with vda saturated, 3,000 after. The dip is the rebuild's (a
    /// warning, with the rebuild's advice), and a stall inside it is the same event. The near
    /// misses: the same dip already named a checkpoint's is not named again, and with the
    /// members idle nothing is said of it.
    #[test]
    fn a_database_dip_while_the_array_rebuilt_is_the_rebuilds() {
        use crate::model::{DeviceStep, TimelineDoc, TimelineRow};
        let under = |util: f64, told: Option<Kind>| {
            let mut r =
                crate::analysis::tests::result(crate::workload::Rw::Randrw, 8192, 2, 1, 2000.0);
            r.timeline = Some(Box::new(TimelineDoc {
                step_s: 1.0,
                devices: vec!["vda".into()],
                rows: (1..=12)
                    .map(|k| TimelineRow {
                        t_s: k as f64,
                        tps: if k <= 6 { 1000.0 } else { 3000.0 },
                        devices: vec![Some(DeviceStep {
                            util: if k <= 6 { util } else { 0.3 },
                            queue: 1.0,
                            ..DeviceStep::default()
                        })],
                        ..TimelineRow::default()
                    })
                    .collect(),
                ..TimelineDoc::default()
            }));
            let mut stall = Finding::new(Kind::Stall, Severity::Warning, "a stall".into(), "");
            stall.evidence = BTreeMap::from([("start_s".into(), 2.0), ("duration_s".into(), 1.0)]);
            r.findings.push(stall);
            if let Some(k) = told {
                let mut f = Finding::new(k, Severity::Warning, "checkpoint 1".into(), "");
                f.evidence = BTreeMap::from([("start_s".into(), 0.0), ("end_s".into(), 6.0)]);
                r.findings.push(f);
            }
            let mut doc = crate::analysis::tests::doc(vec![r]);
            doc.rebuild = Some(RebuildDoc {
                cells: vec![RebuildWindow {
                    name: None,
                    from_s: 0.2,
                    to_s: 12.5,
                }],
                samples: vec![
                    s(0.0, Some(0.0), Some(40000), 1),
                    s(3.0, Some(0.5), Some(40000), 1),
                    s(6.2, None, None, 0),
                ],
                finished_s: Some(6.2),
                ..rb(None)
            });
            findings(&mut doc, &Thresholds::default());
            doc.results.remove(0).findings
        };
        let dips = |f: &[Finding]| {
            f.iter()
                .filter(|f| f.kind == Kind::Rebuild && f.severity == Severity::Warning)
                .map(|f| f.summary.clone())
                .collect::<Vec<_>>()
        };
        let f = under(1.0, None);
        assert_eq!(dips(&f).len(), 1, "{f:#?}");
        assert!(
            dips(&f)[0].starts_with(
                "TPS fell 67% (3,000 → 1,000) during the rebuild of /dev/vdb into md100"
            ),
            "{f:#?}"
        );
        assert!(!f.iter().any(|f| f.kind == Kind::Stall), "{f:#?}");
        let f = under(1.0, Some(Kind::Checkpoint));
        assert!(dips(&f).is_empty(), "{f:#?}");
        assert!(dips(&under(0.2, None)).is_empty());
        assert!(under(0.2, None).iter().any(|f| f.kind == Kind::Stall));
    }

    /// A cell's rate rose when the rebuild ended inside it: the array whole again, said as
    /// such (information, not a cache or a throttle). The near miss: a rise 4 s before the
    /// rebuild ended keeps its warning. The rise is the `regime` rule's own finding, so a
    /// change of its words that the rewrite no longer reads fails here.
    #[test]
    fn a_rise_when_the_rebuild_ended_is_the_array_whole_again() {
        let at = |change_s: f64| {
            let mut r =
                crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1000.0);
            // 100 ms bins: 1,000 IOPS until `change_s`, 2,000 after, over 10 s.
            let bins: Vec<u32> = (0..100)
                .map(|k| {
                    if (k as f64) < change_s * 10.0 {
                        100
                    } else {
                        200
                    }
                })
                .collect();
            let rose = iogauge_analyze::regime(
                &bins,
                0.1,
                None,
                false,
                None,
                iogauge_analyze::CpuBins::default(),
                &Thresholds::default(),
            );
            assert_eq!(rose.len(), 1, "{rose:#?}");
            r.findings.extend(rose);
            let mut doc = crate::analysis::tests::doc(vec![r]);
            doc.rebuild = Some(RebuildDoc {
                cells: vec![RebuildWindow {
                    name: None,
                    from_s: 1.0,
                    to_s: 11.0,
                }],
                finished_s: Some(7.0),
                ..rb(None)
            });
            findings(&mut doc, &Thresholds::default());
            doc.results
                .remove(0)
                .findings
                .into_iter()
                .find(|f| f.kind == Kind::Regime)
                .unwrap()
        };
        let f = at(6.0);
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.summary.ends_with("IOPS rose from 1,000 to 2,000 (+100%) as md100 finished rebuilding /dev/vdb: the rest of the cell measured the array whole"),
            "{}",
            f.summary
        );
        assert_eq!(at(2.0).severity, Severity::Warning);
    }
}
