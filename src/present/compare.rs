//! `compare`'s report as people read it: per workload a table of each metric across the runs
//! with the verdict against the baseline, then where scaling stops.

use crate::compare::{mean, verdict_text, Report};
use crate::present::stats::{metric_label, metric_value};
use crate::present::table::table;
use std::fmt::Write as _;

/// The width a terminal gives a table: 120 columns.
const WIDTH: usize = 120;
/// A label's share of a row name.
const LABEL: usize = 24;

fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 1e-4 => "<0.0001".into(),
        Some(p) => format!("{p:.4}"),
        None => String::new(),
    }
}

/// `4`, `4.5`: a parameter value as typed.
fn param_text(x: f64) -> String {
    format!("{x}")
}

impl Report {
    /// The run as a table's row names it: its id and label, cut to fit; its parameters are
    /// said once, above the tables.
    fn run_name(&self, i: usize) -> String {
        let r = &self.runs[i];
        match &r.label {
            Some(l) => format!("run {} {}", r.id, crate::units::quoted(l, LABEL)),
            None => format!("run {}", r.id),
        }
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        let mut used = Vec::new();
        // Each run once, with what was set for it (values given only), a line within the width.
        for r in &self.runs {
            let params: Vec<String> = r
                .params
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let mut line = format!("run {}", r.id);
            if let Some(l) = &r.label {
                let _ = write!(line, " · {l}");
            }
            if !params.is_empty() {
                let _ = write!(line, " · {}", params.join(" "));
            }
            let _ = writeln!(s, "{}", crate::units::quoted(&line, WIDTH - 1));
        }
        for (gi, g) in self.groups.iter().enumerate() {
            if gi > 0 {
                s.push('\n');
            }
            let _ = writeln!(s, "{}", g.workload);
            for (i, d) in &g.differences {
                let _ = writeln!(s, "  {} differs: {}", self.run_name(*i), d.join(", "));
            }
            let mut rows = vec![["", "run", "mean", "n", "ratio", "p", "verdict"]
                .map(String::from)
                .to_vec()];
            for row in &g.rows {
                for (i, side) in row.sides.iter().enumerate() {
                    let metric = if i == 0 {
                        metric_label(row.metric).to_string()
                    } else {
                        String::new()
                    };
                    let Some(v) = side else {
                        rows.push(vec![metric, self.run_name(i), "no matching result".into()]);
                        continue;
                    };
                    let marks = crate::model::caveats::marks(&g.caveats[i]);
                    used.extend(g.caveats[i].iter().copied());
                    let mut cells = vec![
                        metric,
                        self.run_name(i),
                        format!("{}{marks}", metric_value(row.metric, mean(v))),
                        v.len().to_string(),
                    ];
                    if let Some(Some(c)) = i.checked_sub(1).and_then(|j| row.comparisons.get(j)) {
                        cells.push(c.ratio.map_or(String::new(), |r| format!("{r:.3}×")));
                        cells.push(p_text(c.p_value));
                        cells.push(verdict_text(c).to_string());
                    }
                    rows.push(cells);
                }
            }
            for line in table(&rows, &[false, false, true, true, true, true, false]).lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
        if !self.scaling.is_empty() {
            let _ = writeln!(s, "\nscaling");
            for sc in &self.scaling {
                let points: Vec<String> = sc
                    .points
                    .iter()
                    .map(|(x, y)| {
                        format!(
                            "{}={} {}",
                            sc.param,
                            param_text(*x),
                            metric_value(sc.metric, *y)
                        )
                    })
                    .collect();
                let verdict = match sc.plateau {
                    Some(x) => format!("no gain beyond {}={}", sc.param, param_text(x)),
                    None => format!(
                        "still growing at {}={}",
                        sc.param,
                        param_text(sc.points.last().map_or(0.0, |p| p.0))
                    ),
                };
                let _ = writeln!(
                    s,
                    "  {} {}: {} — {verdict}",
                    sc.workload,
                    metric_label(sc.metric),
                    points.join(" · ")
                );
            }
        }
        for line in crate::model::caveats::legend(used) {
            let _ = writeln!(s, "{line}");
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }
}
