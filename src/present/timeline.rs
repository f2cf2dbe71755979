//! A database run's timeline as text (`show`): one line per step, or per few steps for a long
//! run so it stays under a screen or two — the time, TPS, p99, the checkpoint under way, and
//! what each device wrote and how many requests waited — then the checkpoints themselves.

use crate::model::{DeviceStep, ResultDoc, TimelineDoc, TimelineRow};
use crate::units;
use std::fmt::Write;

/// At most this many lines of steps; longer runs join neighbouring steps.
const MAX_LINES: usize = 60;

/// The timeline of `r`, or nothing when it has none.
pub fn text(r: &ResultDoc) -> String {
    let Some(t) = &r.timeline else {
        return String::new();
    };
    if t.rows.is_empty() {
        return String::new();
    }
    let per = t.rows.len().div_ceil(MAX_LINES);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "timeline of {} ({} per line; server counters from {})",
        r.name.as_deref().unwrap_or("the database run"),
        units::duration(std::time::Duration::from_secs_f64(t.step_s * per as f64)),
        t.server_source
    );
    let mut header = vec!["t".to_string(), "TPS".into(), "p99".into(), "flush".into()];
    for d in &t.devices {
        header.push(format!("{d} wr {}", units::bw_unit()));
        header.push("queue".into());
        header.push("util".into());
    }
    let mut lines = vec![header];
    for chunk in t.rows.chunks(per) {
        lines.push(line(t, chunk));
    }
    // Right-aligned but the flush column.
    let right: Vec<bool> = (0..lines.first().map_or(0, Vec::len))
        .map(|c| c != 3)
        .collect();
    s.push_str(&super::table::table(&lines, &right));
    for f in &t.flushes {
        let _ = writeln!(
            s,
            "{} {}{}: {:.1}–{:.1} s{}{}",
            f.what,
            f.n,
            match f.trigger.is_empty() {
                true => String::new(),
                false => format!(" ({})", f.trigger),
            },
            f.start_s,
            f.end_s,
            f.pages.map_or(String::new(), |p| format!(
                ", {} pages written",
                units::count(p as f64)
            )),
            if f.complete {
                ""
            } else {
                ", still running at the end"
            }
        );
    }
    s
}

/// One line for `rows` (consecutive steps): mean TPS and writes, the worst p99 and queue.
fn line(t: &TimelineDoc, rows: &[TimelineRow]) -> Vec<String> {
    let n = rows.len() as f64;
    let last = rows.last().map_or(0.0, |r| r.t_s);
    let first = last - t.step_s * n;
    let flush: Vec<String> = t
        .flushes
        .iter()
        .filter(|f| f.start_s < last && f.end_s > first)
        .map(|f| match f.what.as_str() {
            "checkpoint" => format!("ckpt {}", f.n),
            _ => format!("flush {}", f.n),
        })
        .collect();
    let mut out = vec![
        format!("{last:.0} s"),
        units::count(rows.iter().map(|r| r.tps).sum::<f64>() / n),
        // A load that times only whole runs (the TPC-C-derived one) has no p99 per step.
        match rows.iter().map(|r| r.lat_p99_ns).max().unwrap_or(0) {
            0 => "–".into(),
            p99 => units::latency(p99 as f64),
        },
        flush.join(","),
    ];
    for i in 0..t.devices.len() {
        let steps: Vec<DeviceStep> = rows
            .iter()
            .filter_map(|r| r.devices.get(i).copied().flatten())
            .collect();
        if steps.is_empty() {
            out.extend(["-".to_string(), "-".into(), "-".into()]);
            continue;
        }
        let k = steps.len() as f64;
        out.push(format!(
            "{:.1}",
            steps.iter().map(|d| d.write_bytes_s).sum::<f64>() / k / 1048576.0
        ));
        out.push(format!(
            "{:.1}",
            steps.iter().map(|d| d.queue).fold(0.0, f64::max)
        ));
        out.push(format!(
            "{:.0}%",
            steps.iter().map(|d| d.util).sum::<f64>() / k * 100.0
        ));
    }
    out
}

/// A rebuild under the cells (`sweep --rebuild`), second by second: md's rate and progress
/// beside the IOPS and p99 of the cell that ran in that second (from its own time series, on
/// the same clock); nothing for a run without one.
pub fn rebuild(doc: &crate::model::RunDoc) -> String {
    let Some(rb) = &doc.rebuild else {
        return String::new();
    };
    // A database's run: its transactions, then its storage cells, each rate in its own unit.
    let db = doc.results.iter().any(|r| r.workload.is_db_load());
    let mut rows = vec![vec![
        "t".to_string(),
        match db {
            true => "measuring".into(),
            false => "cell".into(),
        },
        match db {
            true => "rate".into(),
            false => "IOPS".into(),
        },
        "p99".into(),
        "rebuild".into(),
        "done".into(),
    ]];
    // Each window pairs with its result where the counts say they pair.
    let paired = rb.cells.len() == doc.results.len();
    for s in rb.samples.iter().skip(1) {
        let w = rb
            .cells
            .iter()
            .enumerate()
            .find(|(_, w)| s.t_s >= w.from_s && s.t_s <= w.to_s);
        let fg = w.filter(|_| paired).and_then(|(i, w)| {
            let since = s.t_s - w.from_s;
            let r = &doc.results[i];
            let unit = match (db, r.workload.is_db_load()) {
                (false, _) => "",
                (true, true) => " TPS",
                (true, false) => " IOPS",
            };
            // The last second's sample stands for a cell's last part second; a window that
            // outlasts its series by more (a database load's start and its log read after
            // pgbench stopped) measured nothing then.
            let ts = &r.timeseries;
            let step = match ts.as_slice() {
                [.., a, b] => b.t_s - a.t_s,
                _ => 1.0,
            };
            ts.iter()
                .find(|x| x.t_s >= since)
                .or(ts.last().filter(|l| since <= l.t_s + step))
                .map(|x| (x, unit))
        });
        rows.push(vec![
            format!("{:.1} s", s.t_s),
            w.and_then(|(_, w)| w.name.clone())
                .unwrap_or_else(|| "–".into()),
            fg.map_or("–".into(), |(x, unit)| units::count(x.iops) + unit),
            fg.map_or("–".into(), |(x, _)| units::latency(x.lat_p99_ns as f64)),
            match (s.degraded, s.speed_kib) {
                (0, _) => "whole".into(),
                (_, Some(k)) => units::bw(k as f64 * 1024.0),
                (_, None) => "–".into(),
            },
            match (s.degraded, s.done) {
                (0, _) => "100%".into(),
                (_, Some(d)) => format!("{:.0}%", d * 100.0),
                (_, None) => "–".into(),
            },
        ]);
    }
    let right = [false, false, true, true, true, true];
    format!(
        "rebuild of {} into {}, second by second ({}: the {} running then)\n{}",
        rb.member,
        rb.array,
        match db {
            true => "rate and p99",
            false => "IOPS and p99",
        },
        match db {
            true => "measurement",
            false => "cell",
        },
        super::table::table(&rows, &right)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FlushDoc;

    #[test]
    fn a_timeline_reads_as_one_line_per_step_with_its_checkpoints() {
        let rows: Vec<TimelineRow> = (1..=4)
            .map(|k| TimelineRow {
                t_s: k as f64,
                tps: if k == 3 { 1290.0 } else { 3400.0 },
                lat_p99_ns: 2_000_000,
                devices: vec![Some(DeviceStep {
                    write_bytes_s: 180.0 * 1048576.0,
                    queue: 31.0,
                    util: 1.0,
                    ..DeviceStep::default()
                })],
                ..TimelineRow::default()
            })
            .collect();
        let mut r = crate::analysis::tests::result(crate::workload::Rw::Randrw, 8192, 2, 1, 3000.0);
        r.timeline = Some(Box::new(TimelineDoc {
            started_unix_s: 0.0,
            step_s: 1.0,
            devices: vec!["loop1".into()],
            server_source: "pg_stat_bgwriter, pg_stat_wal".into(),
            rows,
            flushes: vec![FlushDoc {
                what: "checkpoint".into(),
                n: 2,
                start_s: 2.2,
                end_s: 3.4,
                trigger: "wal".into(),
                pages: Some(1834),
                complete: true,
            }],
        }));
        let s = text(&r);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 1 + 1 + 4 + 1, "{s}");
        assert!(lines[1].contains("loop1 wr MiB/s"), "{s}");
        assert!(
            lines[4].contains("1,290") && lines[4].contains("ckpt 2"),
            "{s}"
        );
        assert!(
            lines[5].contains("ckpt 2") && !lines[3].contains("ckpt"),
            "{s}"
        );
        assert!(
            lines[4].contains("180.0") && lines[4].contains("31.0"),
            "{s}"
        );
        assert_eq!(
            lines[6],
            "checkpoint 2 (wal): 2.2–3.4 s, 1,834 pages written"
        );
    }

    /// A measurement's window outlasts its series (pgbench starts, then its log is read): the
    /// last sample stands for the part second after it, and no longer.
    #[test]
    fn a_rebuild_row_past_a_measurements_series_shows_nothing() {
        use crate::model::{RebuildDoc, RebuildSample, RebuildWindow, Sample};
        let mut r = crate::analysis::tests::result(crate::workload::Rw::Randread, 4096, 1, 1, 1.0);
        r.timeseries = (1..=3)
            .map(|k| Sample {
                t_s: k as f64,
                iops: 100.0 * k as f64,
                ..Sample::default()
            })
            .collect();
        let mut doc = crate::analysis::tests::doc(vec![r]);
        doc.rebuild = Some(RebuildDoc {
            cells: vec![RebuildWindow {
                name: Some("c".into()),
                from_s: 0.0,
                to_s: 6.0,
            }],
            samples: (0..=6)
                .map(|t| RebuildSample {
                    t_s: t as f64,
                    degraded: 1,
                    speed_kib: Some(1024),
                    done: Some(t as f64 / 10.0),
                    ..RebuildSample::default()
                })
                .collect(),
            ..RebuildDoc::default()
        });
        let text = rebuild(&doc);
        let row = |t: &str| {
            text.lines()
                .find(|l| l.starts_with(t))
                .unwrap_or_else(|| panic!("no {t} row in\n{text}"))
                .split_whitespace()
                .nth(3)
                .unwrap()
                .to_string()
        };
        assert_eq!(row("3.0 s"), "300", "{text}");
        assert_eq!(row("4.0 s"), "300", "{text}");
        assert_eq!(row("5.0 s"), "–", "{text}");
        assert_eq!(row("6.0 s"), "–", "{text}");
    }
}
