//! The results store as people read it: `list`'s rows and `show`'s run with its system.

use super::table::table;
use crate::model::RunDoc;
use crate::store::RunRow;
use crate::units;
use std::fmt::Write as _;

/// The stored runs, a row each, fitting a terminal `width` columns wide (at least 120's worth):
/// long labels, sweep settings, names and targets are cut where they must be, and a wider
/// terminal shows more of them. `None` (a pipe, a file) cuts nothing: `list | grep` finds what
/// the row holds.
///
/// Runs from more than one machine (imported from another's database) get a host column.
pub fn list(runs: &[RunRow], width: Option<usize>) -> String {
    let hosts: std::collections::BTreeSet<Option<&str>> =
        runs.iter().map(|r| r.host.as_deref()).collect();
    let several = hosts.len() > 1;
    let room = width.map(|w| Room::of(w.saturating_sub(host_width(runs, several))));
    let mut head = vec!["id", "started (UTC)"];
    head.extend(several.then_some("host"));
    head.extend(["label", "what", "target", "IOPS", "bandwidth", "p99"]);
    let mut rows = vec![head.into_iter().map(String::from).collect::<Vec<_>>()];
    for r in runs {
        let mut row = list_row(r, room);
        if several {
            row.insert(2, r.host.clone().unwrap_or_else(|| "?".into()));
        }
        rows.push(row);
    }
    let mut right = vec![true, false];
    right.extend(several.then_some(false));
    right.extend([false, false, false, true, true, true]);
    table(&rows, &right)
}

/// The columns a host column takes (its widest name and the gap), where it is shown.
fn host_width(runs: &[RunRow], several: bool) -> usize {
    match several {
        true => {
            2 + runs
                .iter()
                .map(|r| r.host.as_deref().map_or(1, |h| h.chars().count()))
                .max()
                .unwrap_or(0)
        }
        false => 0,
    }
}

pub fn run_row_json(r: &RunRow) -> serde_json::Value {
    let results: Vec<serde_json::Value> = r
        .results
        .iter()
        .map(|x| {
            serde_json::json!({
                "name": x.name, "workload": x.workload, "target": x.target, "iops": x.iops,
                "bw_bytes": x.bw_bytes, "lat_p50_ns": x.lat_p50_ns, "lat_p99_ns": x.lat_p99_ns,
                "interrupted": x.interrupted,
            })
        })
        .collect();
    serde_json::json!({
        "id": r.id, "run_id": r.run_id, "label": r.label, "started_at": r.started_at,
        "finished_at": r.finished_at, "suite": r.suite, "interrupted": r.interrupted,
        "host": r.host, "params": r.params, "results": results,
    })
}

/// Characters the cut columns of `list` may take.
#[derive(Clone, Copy)]
struct Room {
    label: usize,
    what: usize,
    target: usize,
}

impl Room {
    /// 12, 27 and 14 characters in 120 columns; what a wider terminal has beyond that goes
    /// half to the label (where a sweep's setting is), a third to what ran, the rest to the
    /// target.
    fn of(width: usize) -> Room {
        let extra = width.saturating_sub(120);
        Room {
            label: 12 + extra / 2,
            what: 27 + extra / 3,
            target: 14 + extra - extra / 2 - extra / 3,
        }
    }
}

fn list_row(r: &RunRow, room: Option<Room>) -> Vec<String> {
    // Labels stored by older versions (or by hand) may hold control characters.
    let mut label = crate::units::printable(r.label.as_deref().unwrap_or_default()).into_owned();
    // A sweep's setting first, by its value: it is what tells the sweep's runs apart
    // ("knob.schedu…" was all two settings said), the sweep's id and the knobs after it.
    let setting = r.params.get("sweep.setting");
    let params = setting.map(|s| ("", s)).into_iter().chain(
        r.params
            .iter()
            // A parameter without a value says nothing and only pushes the row wider.
            .filter(|(k, v)| k.as_str() != "sweep.setting" && !v.is_empty())
            .map(|(k, v)| (k.as_str(), v)),
    );
    for (k, v) in params {
        let sep = if label.is_empty() { "" } else { " " };
        match k {
            "" => label.push_str(&format!("{sep}{v}")),
            k => label.push_str(&format!("{sep}{k}={v}")),
        }
    }
    // A database run's transactions, apart from the storage cells beside them.
    let loads: Vec<&crate::store::ResultRow> = r
        .results
        .iter()
        .filter(|x| x.workload.as_ref().is_some_and(|w| w.is_db_load()))
        .collect();
    let what = match (&r.suite, r.results.as_slice()) {
        (Some(s), res) if !loads.is_empty() => format!(
            "{} ({} measurement{}{})",
            s.replacen('-', " ", 1),
            loads.len(),
            crate::units::plural(loads.len()),
            match res.len() - loads.len() {
                0 => String::new(),
                n => format!(", {n} storage cell{}", crate::units::plural(n)),
            }
        ),
        (Some(s), res) => format!(
            "suite {s} ({} result{})",
            res.len(),
            crate::units::plural(res.len())
        ),
        (None, [one]) => match (&one.name, &one.workload) {
            (Some(n), _) => n.clone(),
            (None, Some(w)) => w.short(),
            (None, None) => "?".into(),
        },
        (None, res) => format!("{} results", res.len()),
    };
    // Said whole, however much of the name must go.
    let mark = match (r.finished_at.is_none(), r.interrupted) {
        (true, _) => " (unfinished)",
        (false, true) => " (interrupted)",
        (false, false) => "",
    };
    let target = r
        .results
        .first()
        .map(|x| crate::units::printable(&x.target).into_owned())
        .unwrap_or_default();
    // The row fits 120 columns: long labels, sweep parameters and names are cut where they
    // stop telling runs apart (a path keeps its end); `show ID` has them whole.
    let what = crate::units::printable(&what).into_owned();
    let (label, what, target) = match room {
        Some(room) => (
            cut(&label, room.label),
            cut(&what, room.what - mark.chars().count()) + mark,
            cut_front(&target, room.target),
        ),
        None => (label, what + mark, target),
    };
    let (iops, bw, p99) = match (loads.as_slice(), r.results.as_slice()) {
        ([one], _) => (
            format!("{} TPS", units::count(one.iops)),
            String::new(),
            units::latency(one.lat_p99_ns as f64),
        ),
        ([_, ..], _) => (
            format!(
                "≤{} TPS",
                units::count(loads.iter().map(|x| x.iops).fold(0.0, f64::max))
            ),
            String::new(),
            String::new(),
        ),
        (_, []) => (String::new(), String::new(), String::new()),
        (_, [one]) => (
            units::count(one.iops),
            units::bw(one.bw_bytes),
            units::latency(one.lat_p99_ns as f64),
        ),
        // A suite's best result: "at most" this over its results.
        (_, many) => (
            format!(
                "≤{}",
                units::count(many.iter().map(|x| x.iops).fold(0.0, f64::max))
            ),
            format!(
                "≤{}",
                units::bw(many.iter().map(|x| x.bw_bytes).fold(0.0, f64::max))
            ),
            String::new(),
        ),
    };
    vec![
        r.id.to_string(),
        date(&r.started_at),
        label,
        what,
        target,
        iops,
        bw,
        p99,
    ]
}

/// At most `n` characters, the end replaced by "…" when cut.
fn cut(s: &str, n: usize) -> String {
    match s.chars().count() > n {
        true => s.chars().take(n - 1).chain(['…']).collect(),
        false => s.to_string(),
    }
}

/// At most `n` characters, the start replaced by "…" when cut: a path keeps its file name.
fn cut_front(s: &str, n: usize) -> String {
    let len = s.chars().count();
    match len > n {
        true => std::iter::once('…')
            .chain(s.chars().skip(len - (n - 1)))
            .collect(),
        false => s.to_string(),
    }
}

/// `2026-05-09T07:30:12Z` → `2026-05-09 07:30`.
pub fn date(rfc3339: &str) -> String {
    rfc3339.replacen('T', " ", 1).chars().take(16).collect()
}

pub fn show(id: i64, doc: &RunDoc) -> String {
    let mut s = String::new();
    let _ = write!(s, "run {id} ({})", doc.run_id);
    if let Some(l) = &doc.label {
        let _ = write!(s, " · label {}", crate::units::printable(l));
    }
    if let Some(suite) = &doc.suite {
        let _ = write!(s, " · suite {suite}");
    }
    let _ = writeln!(s, " · started {} UTC", date(&doc.started_at));
    if !doc.params.is_empty() {
        let p: Vec<String> = doc.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "params: {}", p.join(" "));
    }
    if !doc.command.is_empty() {
        let _ = writeln!(s, "command: {}", doc.command.join(" "));
    }
    if doc.interrupted {
        let _ = writeln!(s, "interrupted: the results cover the part that ran");
    }
    s.push('\n');
    // A run on many hosts (MPI) shows its hosts side by side with the aggregate.
    if doc.fleet.is_some() {
        s.push_str(&crate::present::fleet::text(doc));
        s.push('\n');
        s.push_str(&system_text(&doc.system));
        return s;
    }
    s.push_str(&crate::present::summary::run(doc));
    for r in &doc.results {
        let t = crate::present::timeline::text(r);
        if !t.is_empty() {
            s.push('\n');
            s.push_str(&t);
        }
    }
    let rb = crate::present::timeline::rebuild(doc);
    if !rb.is_empty() {
        s.push('\n');
        s.push_str(&rb);
    }
    for (i, r) in doc.results.iter().enumerate() {
        if !r.stats.is_empty() {
            s.push('\n');
            s.push_str(&crate::present::stats::text(i, r));
        }
    }
    s.push_str(&crate::present::findings::text(&doc.findings));
    // `db advise`: the settings its measurements gave.
    if let Some(a) = &doc.advice {
        s.push_str(&crate::present::advise::text(a, &a.target));
    }
    s.push('\n');
    s.push_str(&system_text(&doc.system));
    s
}

/// The machine, the target's file system and its device stack: what "100K+ IOPS on semi-commodity hardware" asks to write down
/// for every run.
fn system_text(sys: &iogauge_sysinfo::SystemInfo) -> String {
    let unknown = || "unknown".to_string();
    let mut s = String::from("system:\n");
    let _ = writeln!(
        s,
        "  host        {} · kernel {} · {} × {} · {} RAM",
        sys.hostname.clone().unwrap_or_else(unknown),
        sys.kernel.clone().unwrap_or_else(unknown),
        sys.cpu_count.map_or_else(unknown, |n| n.to_string()),
        sys.cpu_model
            .clone()
            .unwrap_or_else(|| "unknown CPU".into()),
        sys.mem_total_bytes.map_or_else(unknown, units::iec),
    );
    let Some(t) = &sys.target else {
        return s;
    };
    let mut line = format!("  target      {}", crate::units::printable(&t.path));
    if let Some(fs) = &t.filesystem {
        let _ = write!(line, " · {fs}");
    }
    if let Some(mp) = &t.mount_point {
        let _ = write!(line, " on {mp}");
    }
    if let Some(src) = &t.mount_source {
        let _ = write!(line, " from {src}");
    }
    if let Some(b) = t.fs_block_size {
        let _ = write!(line, " · fs block {}", units::iec(b));
    }
    let _ = writeln!(s, "{line}");
    if let Some(o) = &t.mount_options {
        let _ = writeln!(s, "  mount       {o}");
    }
    for (i, line) in crate::report::stack::tree(t).iter().enumerate() {
        let _ = writeln!(s, "  {:<12}{line}", if i == 0 { "stack" } else { "" });
    }
    for d in &t.devices {
        let _ = writeln!(s, "  device      {}", device_line(d));
    }
    for l in &t.io_limits {
        let _ = writeln!(s, "  limit       {}", crate::analysis::io_limit(t, l));
    }
    s
}

fn device_line(d: &iogauge_sysinfo::BlockDevice) -> String {
    let mut parts = vec![format!(
        "{} ({})",
        d.name,
        serde_json::to_value(d.role)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    )];
    let mut add = |p: Option<String>| parts.extend(p);
    add(d.model.clone());
    add(d.size_bytes.map(units::iec));
    add(d.rotational.map(|r| {
        if r {
            "rotational".into()
        } else {
            "non-rotational".into()
        }
    }));
    add(match (d.logical_block_size, d.physical_block_size) {
        (Some(l), Some(p)) => Some(format!("blocks {l}/{p} B logical/physical")),
        _ => None,
    });
    add(Some(format!(
        "scheduler {}",
        d.scheduler.as_deref().unwrap_or("unknown")
    )));
    add(d.nr_requests.map(|n| format!("nr_requests {n}")));
    add(d.read_ahead_kb.map(|n| format!("read_ahead {n} KiB")));
    add(d.write_cache.as_ref().map(|w| format!("cache {w}")));
    add(d.queue_depth.map(|n| format!("queue depth {n}")));
    add(d.partition_start_bytes.map(|b| {
        let yes = |x: Option<bool>| match x {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "?",
        };
        format!(
            "starts at {} (aligned to 1 MiB: {}, to the physical block: {})",
            units::iec(b),
            yes(d.aligned_1mib),
            yes(d.aligned_physical)
        )
    }));
    add(d.md_level.clone());
    add(d.md_chunk_bytes.map(|c| format!("chunk {}", units::iec(c))));
    if !d.md_members.is_empty() {
        add(Some(format!(
            "{} members: {}",
            d.md_members.len(),
            d.md_members.join(", ")
        )));
    }
    add(d
        .loop_backing_file
        .as_ref()
        .map(|f| format!("backed by {f}")));
    add(d.dm_name.as_ref().map(|n| format!("dm {n}")));
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_without_a_value_is_not_pushed_into_the_label() {
        let row = RunRow {
            id: 1,
            run_id: "r1".into(),
            label: Some("mine".into()),
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: None,
            suite: None,
            interrupted: false,
            params: [("db.note", ""), ("disks", "4")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            host: None,
            results: Vec::new(),
        };
        let text = list(&[row], None);
        assert!(text.contains("mine disks=4"), "{text}");
        assert!(!text.contains("db.note"), "{text}");
    }

    #[test]
    fn table_aligns_by_characters() {
        let rows = vec![
            vec!["a".to_string(), "45.1 µs".to_string()],
            vec!["long".to_string(), "1 ms".to_string()],
        ];
        let t = table(&rows, &[false, true]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0].chars().count(), lines[1].chars().count());
        assert!(lines[1].ends_with("   1 ms"));
    }

    #[test]
    fn show_lists_repeat_statistics_throughput_first_with_outliers() {
        // "PostgreSQL Server Benchmarks — Disks"'s fsync rates: repeats 1 and 3 are outliers by the modified z-score (worked
        // out by hand in repeats.rs).
        let mut r =
            crate::compare::tests::result(0.0, &[3170.57, 7606.69, 8379.83, 7627.63, 7523.14]);
        r.stats = crate::repeats::stats_for(&r.repeats);
        let run = crate::compare::tests::run(7, vec![r], &[("disks", "4")]);
        let text = show(run.id, &run.doc);
        assert!(
            text.contains("statistics over 5 repeats of result 1"),
            "{text}"
        );
        assert!(text.contains("params: disks=4"), "{text}");
        let stats: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("statistics"))
            .collect();
        let line = |m: &str| {
            stats
                .iter()
                .position(|l| l.trim_start().starts_with(m))
                .unwrap()
        };
        assert!(line("IOPS ") < line("bandwidth ") && line("bandwidth ") < line("latency p99 "));
        let iops = stats[line("IOPS ")];
        assert!(
            iops.contains("6,862 IOPS") && iops.contains("#1, #3"),
            "{iops}"
        );
    }

    #[test]
    fn dates_drop_seconds_and_the_t() {
        assert_eq!(date("2026-05-09T07:30:12Z"), "2026-05-09 07:30");
    }
}
