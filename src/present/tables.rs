//! A suite's results as text: one table per group in the layout its study used — bm-flash's
//! "Read Tests:"/"Write Tests:" grids, Orion's read % × outstanding IO tables, dd's MiB/s by
//! block size, sysbench's syncs/s — then a summary a newcomer can read. Numbers go through
//! `units` like everywhere else; this file only lays them out.

pub use crate::analysis::run::Stability;
pub use crate::analysis::source::{working_set, Source};
use crate::model::ResultDoc;
use crate::suite::cells::Cell;
use crate::suite::{Layout, Op, Suite};
use crate::units;
use std::fmt::Write;
use std::time::Duration;

/// A cell and what became of it.
pub struct Outcome<'a> {
    pub cell: &'a Cell,
    pub result: Option<&'a ResultDoc>,
    /// Why the cell did not run, when it was skipped.
    pub skipped: Option<&'a str>,
}

/// Every group's tables, in suite order; groups with nothing measured are left out. `results`
/// are the run's, where the sums of cells of several streams are found.
pub fn render(suite: &Suite, outcomes: &[Outcome], ram: u64, results: &[ResultDoc]) -> String {
    let mut s = String::new();
    // Groups of one plain cell each (fio's jobs: KDiskMark's eight presets) read as one table
    // of a row each, as their users expect, not a table per job.
    if jobs_only(suite) {
        let mut rows = vec![["Job", "Test", "IOPS", "bandwidth", "p50", "p99", "p99.9"]
            .map(String::from)
            .to_vec()];
        for o in outcomes {
            // The cell is named `JOB: pattern …`: the job's name first, as the file names it
            // (a stream's result adds what it ran beside).
            let name = o
                .result
                .and_then(|r| r.name.clone())
                .unwrap_or_else(|| o.cell.name());
            let (job, test) = match name.split_once(": ") {
                Some((j, t)) => (j.to_string(), t.to_string()),
                None => (suite.groups[o.cell.group].title.clone(), name.clone()),
            };
            let numbers = |r: &ResultDoc| {
                [
                    units::count(r.iops),
                    units::bw(r.bw_bytes),
                    units::latency(r.lat_ns.p50 as f64),
                    units::latency(r.lat_ns.p99 as f64),
                    units::latency(r.lat_ns.p999 as f64),
                ]
            };
            let mut line = vec![job.clone(), test];
            match o.result {
                Some(r) => line.extend(numbers(r)),
                None => line.push(missing(Some(o))),
            }
            rows.push(line);
            // After the last stream of jobs that ran at once, their sum.
            let together = o.result.and_then(|r| r.together.as_ref());
            if let Some(t) = together.filter(|t| t.streams.last() == Some(&job)) {
                let sum = results.iter().find(|r| {
                    r.together
                        .as_ref()
                        .is_some_and(|x| x.sum && x.cell == t.cell)
                });
                if let Some(sum) = sum {
                    let mut line = vec![t.cell.clone(), "at the same time".to_string()];
                    line.extend(numbers(sum));
                    rows.push(line);
                }
            }
        }
        let right = [false, false, true, true, true, true, true];
        for l in super::table::table(&rows, &right).lines() {
            let _ = writeln!(s, "  {l}");
        }
        s.push('\n');
        return s;
    }
    for (gi, g) in suite.groups.iter().enumerate() {
        let mine: Vec<&Outcome> = outcomes.iter().filter(|o| o.cell.group == gi).collect();
        if mine.iter().all(|o| o.result.is_none()) {
            continue;
        }
        let title = match &g.origin {
            Some(o) => format!("{o}: {}", g.title),
            None => g.title.clone(),
        };
        let _ = writeln!(s, "{title}\n");
        let body = match g.layout {
            Layout::Matrix => matrix(&mine),
            Layout::Mixes => mixes(&mine),
            Layout::Seq => seq(&mine, ram),
            Layout::Fsync => fsync(&mine),
            Layout::Plain => plain(&mine),
            Layout::Snia => snia(&mine),
        };
        s.push_str(&body);
        s.push('\n');
    }
    s
}

/// Whether every group is one plain cell, and there are several: a file of fio jobs.
fn jobs_only(suite: &Suite) -> bool {
    suite.groups.len() > 1 && suite.groups.iter().all(|g| g.layout == Layout::Plain)
}

/// Distinct values in order of first appearance.
fn distinct<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = Vec::new();
    for i in items {
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v
}

fn find<'a>(cells: &[&'a Outcome<'a>], pred: impl Fn(&Cell) -> bool) -> Option<&'a Outcome<'a>> {
    cells.iter().copied().find(|o| pred(o.cell))
}

/// The text of a table cell that has no number: why, or nothing if it never ran.
fn missing(o: Option<&Outcome>) -> String {
    match o.and_then(|o| o.skipped) {
        Some(_) => "skipped".into(),
        None => String::new(),
    }
}

fn tests_title(op: Op, read_pct: u8) -> String {
    match op {
        Op::Randread | Op::Read => "Read Tests:".into(),
        Op::Randwrite | Op::Write => "Write Tests:".into(),
        Op::Rw | Op::Randrw => format!("{read_pct}% Read Tests:"),
        Op::Copy => "Copy Tests:".into(),
        Op::Trim | Op::Randtrim => "Trim Tests:".into(),
    }
}

/// bm-flash's table: block sizes down, thread counts across, IOPS and bandwidth under each.
fn matrix(cells: &[&Outcome]) -> String {
    let mut s = String::new();
    for (op, pct) in distinct(cells.iter().map(|o| (o.cell.op, o.cell.read_pct))) {
        let mine: Vec<&Outcome> = cells
            .iter()
            .copied()
            .filter(|o| o.cell.op == op && o.cell.read_pct == pct)
            .collect();
        let sizes = distinct(mine.iter().map(|o| o.cell.bs.bytes()));
        let cols = distinct(mine.iter().map(|o| (o.cell.threads, o.cell.iodepth)));
        let deep = cols.iter().any(|c| c.1 > 1);
        let label = |(t, d): (u32, u32)| {
            let mut l = format!("{t} thread{}", crate::units::plural(t as usize));
            if deep {
                l.push_str(&format!(" × QD {d}"));
            }
            l
        };
        // Each column: (iops text, bw text) per row, and its widths.
        let mut grid: Vec<Vec<(String, String)>> = Vec::new();
        for &col in &cols {
            let mut column = Vec::new();
            for &bs in &sizes {
                let o = find(&mine, |c| {
                    c.bs.bytes() == bs && (c.threads, c.iodepth) == col
                });
                column.push(match o.and_then(|o| o.result) {
                    Some(r) => (units::count(r.iops), units::bw(r.bw_bytes)),
                    None => (String::new(), missing(o)),
                });
            }
            grid.push(column);
        }
        let widths: Vec<(usize, usize)> = grid
            .iter()
            .zip(&cols)
            .map(|(column, &col)| {
                let iw = column
                    .iter()
                    .map(|c| c.0.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(4);
                let bw = column
                    .iter()
                    .map(|c| c.1.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(2);
                // Wide enough for the column's label too.
                let extra = label(col).chars().count().saturating_sub(iw + 1 + bw);
                (iw + extra, bw)
            })
            .collect();
        let rw = sizes
            .iter()
            .map(|&b| units::bs_label(b).len())
            .max()
            .unwrap_or(0)
            .max(5);
        let mut lines = vec![
            format!("{:>rw$} |", "Block"),
            format!("{:>rw$} |", "Size"),
            format!("{:rw$} |", ""),
        ];
        for (j, &col) in cols.iter().enumerate() {
            let (iw, bw) = widths[j];
            let w = iw + 1 + bw;
            let sep = if j + 1 < cols.len() { " |" } else { "" };
            lines[0].push_str(&format!(" {:^w$}{sep}", label(col)));
            lines[1].push_str(&format!(" {:>iw$} {:>bw$}{sep}", "IOPS", "BW"));
            lines[2].push_str(&format!(" {:w$}{sep}", ""));
        }
        for (i, &bs) in sizes.iter().enumerate() {
            let mut line = format!("{:>rw$} |", units::bs_label(bs));
            for (j, column) in grid.iter().enumerate() {
                let (iw, bw) = widths[j];
                let sep = if j + 1 < cols.len() { " |" } else { "" };
                line.push_str(&format!(" {:>iw$} {:>bw$}{sep}", column[i].0, column[i].1));
            }
            lines.push(line);
        }
        let _ = writeln!(s, "{}\n", tests_title(op, pct));
        for l in lines {
            let _ = writeln!(s, "{}", l.trim_end());
        }
        s.push('\n');
    }
    s
}

/// Columns right-aligned under their headers, two spaces apart; the first left-aligned.
fn grid(header: &[String], rows: &[Vec<String>]) -> String {
    let all: Vec<Vec<String>> = std::iter::once(header.to_vec())
        .chain(rows.iter().cloned())
        .collect();
    super::table::labelled(&all)
}

/// How one table of a group reads its number from a result.
type Column = fn(&ResultDoc) -> String;

/// Orion's tables: outstanding IOs down, read percentages across; IOPS, then latencies.
fn mixes(cells: &[&Outcome]) -> String {
    let mut s = String::new();
    for bs in distinct(cells.iter().map(|o| o.cell.bs.bytes())) {
        let mine: Vec<&Outcome> = cells
            .iter()
            .copied()
            .filter(|o| o.cell.bs.bytes() == bs)
            .collect();
        let rows = distinct(mine.iter().map(|o| (o.cell.threads, o.cell.iodepth)));
        let cols = distinct(mine.iter().map(|o| o.cell.read_pct));
        let row_label = |(t, d): (u32, u32)| {
            if t == 1 {
                d.to_string()
            } else {
                format!("{t} × {d}")
            }
        };
        let tables: [(&str, Column); 3] = [
            ("IOPS", |r| units::count(r.iops)),
            ("mean latency", |r| units::latency(r.lat_ns.mean)),
            ("p99 latency", |r| units::latency(r.lat_ns.p99 as f64)),
        ];
        for (what, value) in tables {
            let mut header = vec![format!("{} {what} · in flight", units::bs_label(bs))];
            header.extend(cols.iter().map(|p| format!("{p}% reads")));
            let body = body(
                &mine,
                &rows,
                &cols,
                row_label,
                |c, row, p| (c.threads, c.iodepth) == row && c.read_pct == p,
                value,
            );
            s.push_str(&grid(&header, &body));
            s.push('\n');
        }
    }
    s
}

/// A grid's lines: per row value its label, then each column's value, or why the cell has
/// none.
fn body<R: Copy, C: Copy>(
    cells: &[&Outcome],
    rows: &[R],
    cols: &[C],
    label: impl Fn(R) -> String,
    at: impl Fn(&Cell, R, C) -> bool,
    value: Column,
) -> Vec<Vec<String>> {
    rows.iter()
        .map(|&row| {
            let mut line = vec![label(row)];
            for &col in cols {
                let o = find(cells, |c| at(c, row, col));
                line.push(match o.and_then(|o| o.result) {
                    Some(r) => value(r),
                    None => missing(o),
                });
            }
            line
        })
        .collect()
}

/// The SNIA PTS tables: block sizes down, read/write mixes across ("100/0" … "0/100").
fn snia(cells: &[&Outcome]) -> String {
    let mut s = String::new();
    let rows = distinct(cells.iter().map(|o| o.cell.bs.bytes()));
    let cols = distinct(cells.iter().map(|o| o.cell.read_pct));
    let tables: [(&str, Column); 4] = [
        ("IOPS", |r| units::count(r.iops)),
        (units::bw_unit(), |r| units::bw(r.bw_bytes)),
        ("mean latency", |r| units::latency(r.lat_ns.mean)),
        ("max latency", |r| units::latency(r.lat_ns.max as f64)),
    ];
    for (what, value) in tables {
        let mut header = vec![format!("{what} · block")];
        header.extend(cols.iter().map(|p| format!("{p}/{}", 100 - p)));
        let body = body(
            cells,
            &rows,
            &cols,
            units::bs_label,
            |c, bs, p| c.bs.bytes() == bs && c.read_pct == p,
            value,
        );
        s.push_str(&grid(&header, &body));
        s.push('\n');
    }
    s
}

/// dd's view: block sizes down, write / read / copy across, MiB/s and where the data was.
fn seq(cells: &[&Outcome], ram: u64) -> String {
    let ops = distinct(cells.iter().map(|o| o.cell.op));
    let sizes = distinct(cells.iter().map(|o| o.cell.bs.bytes()));
    let mut header = vec!["Block".to_string()];
    for op in &ops {
        header.push(match op {
            Op::Copy => "copy (copied)".into(),
            op => op.name().to_string(),
        });
    }
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .map(|&bs| {
            let mut line = vec![units::bs_label(bs)];
            for &op in &ops {
                let o = find(cells, |c| c.bs.bytes() == bs && c.op == op);
                line.push(match o.and_then(|o| o.result) {
                    Some(r) => {
                        // A copy moves every byte twice (read and write); cp users count once.
                        let bw = if op == Op::Copy {
                            r.bw_bytes / 2.0
                        } else {
                            r.bw_bytes
                        };
                        let src = Source::of(r.workload.direct, working_set(r), ram);
                        format!("{} · {}", units::bw(bw), src.label())
                    }
                    None => missing(o),
                });
            }
            line
        })
        .collect();
    let mut s = grid(&header, &rows);
    let moved = distinct(cells.iter().filter_map(|o| o.result).map(|r| {
        let per = if r.workload.rw.name() == "rw" {
            r.bytes / 2
        } else {
            r.bytes
        };
        units::iec(per)
    }));
    if let Some(m) = moved.first().filter(|_| moved.len() == 1) {
        let _ = writeln!(
            s,
            "  each cell moved {m} (a copy read and wrote half that each)"
        );
    }
    s
}

/// sysbench's fsync view: how many syncs a second, and how long each waited.
fn fsync(cells: &[&Outcome]) -> String {
    let header: Vec<String> = [
        "Test",
        "writes/s",
        "syncs/s",
        "write p50",
        "sync p50",
        "sync p99",
        "sync max",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|o| {
            let mut line = vec![o.cell.name()];
            match o.result {
                Some(r) => {
                    let w = r.write.as_ref();
                    line.push(units::count(w.map_or(r.iops, |w| w.iops)));
                    match &r.sync {
                        Some(sy) => {
                            line.push(units::count(sy.per_s));
                            line.push(units::latency(
                                w.map_or(r.lat_ns.p50, |w| w.lat_ns.p50) as f64
                            ));
                            line.push(units::latency(sy.lat_ns.p50 as f64));
                            line.push(units::latency(sy.lat_ns.p99 as f64));
                            line.push(units::latency(sy.lat_ns.max as f64));
                        }
                        None => {
                            // O_DSYNC: each write is its own commit.
                            line.push("-".into());
                            line.push(units::latency(r.lat_ns.p50 as f64));
                            line.extend(["-", "-", "-"].map(String::from));
                        }
                    }
                }
                None => line.push(missing(Some(o))),
            }
            line
        })
        .collect();
    grid(&header, &rows)
}

fn plain(cells: &[&Outcome]) -> String {
    let header: Vec<String> = ["Test", "IOPS", "bandwidth", "p50", "p99", "p99.9"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|o| {
            let mut line = vec![o.cell.name()];
            match o.result {
                Some(r) => {
                    line.push(units::count(r.iops));
                    line.push(units::bw(r.bw_bytes));
                    line.push(units::latency(r.lat_ns.p50 as f64));
                    line.push(units::latency(r.lat_ns.p99 as f64));
                    line.push(units::latency(r.lat_ns.p999 as f64));
                }
                None => line.push(missing(Some(o))),
            }
            line
        })
        .collect();
    grid(&header, &rows)
}

/// A few lines a newcomer can read: per group its best cells, or its cells when it has few.
pub fn summary(suite: &Suite, outcomes: &[Outcome]) -> String {
    // A table of jobs is its own summary: a line per job again would only repeat it.
    if jobs_only(suite) {
        return String::new();
    }
    let mut s = String::from("Summary\n");
    for (gi, g) in suite.groups.iter().enumerate() {
        let done: Vec<(&Cell, &ResultDoc)> = outcomes
            .iter()
            .filter(|o| o.cell.group == gi)
            .filter_map(|o| o.result.map(|r| (o.cell, r)))
            .collect();
        if done.is_empty() {
            continue;
        }
        match g.layout {
            Layout::Matrix | Layout::Mixes | Layout::Seq => {
                for (op, pct) in distinct(done.iter().map(|(c, _)| (c.op, c.read_pct))) {
                    let mine: Vec<&(&Cell, &ResultDoc)> = done
                        .iter()
                        .filter(|(c, _)| c.op == op && c.read_pct == pct)
                        .collect();
                    let best = |key: fn(&ResultDoc) -> f64| {
                        mine.iter()
                            .copied()
                            .max_by(|a, b| key(a.1).total_cmp(&key(b.1)))
                            .copied()
                    };
                    let (Some((ci, ri)), Some((cb, rb))) = (best(|r| r.iops), best(|r| r.bw_bytes))
                    else {
                        continue;
                    };
                    let what = match op {
                        Op::Copy => "copy".to_string(),
                        op if op.mixed() => format!("{} {}/{}", op.name(), pct, 100 - pct),
                        op => op.name().to_string(),
                    };
                    let line = match g.layout {
                        // Sequential work is judged by bandwidth alone.
                        Layout::Seq => format!(
                            "best {} ({})",
                            units::bw(if op == Op::Copy {
                                rb.bw_bytes / 2.0
                            } else {
                                rb.bw_bytes
                            }),
                            short(cb)
                        ),
                        // One block size: IOPS and latency tell it all.
                        Layout::Mixes => format!(
                            "most IOPS {} ({}, mean {}, p99 {})",
                            units::count(ri.iops),
                            short(ci),
                            units::latency(ri.lat_ns.mean),
                            units::latency(ri.lat_ns.p99 as f64)
                        ),
                        _ => format!(
                            "most IOPS {} ({}, p99 {}); most bandwidth {} ({})",
                            units::count(ri.iops),
                            short(ci),
                            units::latency(ri.lat_ns.p99 as f64),
                            units::bw(rb.bw_bytes),
                            short(cb),
                        ),
                    };
                    let _ = writeln!(s, "  {what:<12} {line}");
                }
            }
            Layout::Fsync => {
                for (c, r) in &done {
                    let line = match &r.sync {
                        Some(sy) => format!(
                            "{} syncs/s, sync p99 {}",
                            units::count(sy.per_s),
                            units::latency(sy.lat_ns.p99 as f64)
                        ),
                        None => format!(
                            "{} durable writes/s, write p99 {}",
                            units::count(r.iops),
                            units::latency(r.lat_ns.p99 as f64)
                        ),
                    };
                    let _ = writeln!(s, "  {}: {line}", c.name());
                }
            }
            Layout::Snia => {
                // The specification's headline cells: the extremes of the table.
                let pick = |bs: u64, pct: u8| {
                    done.iter()
                        .find(|(c, _)| c.bs.bytes() == bs && c.read_pct == pct)
                };
                for (bs, pct) in [
                    (4096, 100),
                    (4096, 0),
                    (131_072, 100),
                    (131_072, 0),
                    (1 << 20, 100),
                    (1 << 20, 0),
                ] {
                    if let Some((c, r)) = pick(bs, pct) {
                        let _ = writeln!(
                            s,
                            "  {}: {} IOPS, {}, mean {}, max {}",
                            c.name(),
                            units::count(r.iops),
                            units::bw(r.bw_bytes),
                            units::latency(r.lat_ns.mean),
                            units::latency(r.lat_ns.max as f64)
                        );
                    }
                }
            }
            Layout::Plain => {
                for (c, r) in &done {
                    let _ = writeln!(
                        s,
                        "  {}: {} IOPS, {}, p99 {}",
                        c.name(),
                        units::count(r.iops),
                        units::bw(r.bw_bytes),
                        units::latency(r.lat_ns.p99 as f64)
                    );
                }
            }
        }
    }
    s
}

/// Where in its group a cell sits, for the summary: `4K × 8 threads`, `QD 16`.
fn short(c: &Cell) -> String {
    let mut s = units::bs_label(c.bs.bytes());
    if c.threads > 1 {
        s.push_str(&format!(" × {} threads", c.threads));
    }
    if c.iodepth > 1 {
        s.push_str(&format!(" · QD {}", c.iodepth));
    }
    s
}

/// The `--until-stable` table and its totals.
pub fn stability(rows: &[Stability]) -> String {
    let header: Vec<String> = [
        "Cell",
        "ran",
        "stable after",
        "±95% CI then",
        "±95% CI at end",
    ]
    .map(String::from)
    .to_vec();
    let pct = |h: Option<f64>| h.map_or("-".to_string(), |h| format!("{:.1}%", h * 100.0));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                units::duration(r.ran),
                r.stable
                    .map_or("not stable".into(), |(t, _)| units::duration(t)),
                pct(r.stable.map(|s| s.1)),
                pct(r.full),
            ]
        })
        .collect();
    let mut s = grid(&header, &body);
    let ran: Duration = rows.iter().map(|r| r.ran).sum();
    let needed: Duration = rows
        .iter()
        .map(|r| r.stable.map_or(r.ran, |s| s.0.min(r.ran)))
        .sum();
    let stable = rows.iter().filter(|r| r.stable.is_some()).count();
    let share = if ran.is_zero() {
        0.0
    } else {
        needed.as_secs_f64() / ran.as_secs_f64() * 100.0
    };
    let _ = writeln!(
        s,
        "  {stable} of {} cells met ±3% at 95% confidence; stopping each there takes {} of the {} measured ({share:.0}%)",
        rows.len(),
        units::duration(needed),
        units::duration(ran),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_follows_direct_and_ram() {
        assert_eq!(Source::of(true, 1 << 40, 1 << 30), Source::Direct);
        assert_eq!(Source::of(false, 1 << 29, 1 << 30), Source::Cache);
        assert_eq!(
            Source::of(false, 1 << 30, 1 << 30),
            Source::Cache,
            "equal still fits"
        );
        assert_eq!(
            Source::of(false, (1 << 30) + 1, 1 << 30),
            Source::LargerThanRam
        );
    }

    #[test]
    fn grid_aligns_columns() {
        let t = grid(
            &["a".into(), "bb".into()],
            &[
                vec!["xyz".into(), "1".into()],
                vec!["q".into(), "22222".into()],
            ],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        // Right-aligned second column: every line ends at the same width.
        let ends: Vec<usize> = lines.iter().map(|l| l.chars().count()).collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{t}");
        assert!(lines[1].starts_with("  xyz"));
    }
}
