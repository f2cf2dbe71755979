//! A sweep's table and verdicts, as people read them.

use crate::sweep::SweepDoc;
use crate::units;
use std::fmt::Write;

/// The sweep table: per knob (or for the file systems), each cell's IOPS with its 95% CI under
/// each setting, marked against the baseline, and the verdict.
pub fn text(doc: &SweepDoc) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sweep {} · {} {} · {}: {} · ▲ faster ▼ slower · no significant change, against the first column that ran: Welch p < {} and a change above {:.0}%",
        doc.sweep,
        match doc.suite.starts_with("db-") {
            true => "load",
            false => "suite",
        },
        doc.suite,
        doc.rate,
        match doc.repeats {
            1 => "one run of each setting",
            _ => "mean of the repeats (± half the 95% CI, Student t)",
        },
        doc.alpha,
        doc.noise * 100.0
    );
    for g in &doc.groups {
        let _ = writeln!(s, "\n{}", g.title);
        if g.cells.is_empty() {
            let _ = writeln!(s, "  nothing was measured");
        }
        let w0 = g
            .cells
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(4)
            .max(4)
            + 2;
        // Each column as wide as its longest head (an array's "md raid5 × 4 · chunk 512 KiB").
        let w = g
            .settings
            .iter()
            .map(|h| h.head.chars().count() + 2)
            .max()
            .unwrap_or(24)
            .max(24);
        if !g.cells.is_empty() {
            let _ = write!(s, "  {:<w0$}", "cell");
            for h in &g.settings {
                let _ = write!(s, "{:>w$}", h.head);
            }
            let _ = writeln!(s);
        }
        for (ci, cell) in g.cells.iter().enumerate() {
            let pad = w0.saturating_sub(cell.chars().count());
            let _ = write!(s, "  {cell}{:pad$}", "");
            for set in &g.settings {
                let text = match (&set.skipped, &set.iops[ci]) {
                    (Some(_), _) => "skipped".to_string(),
                    (None, None) => "—".to_string(),
                    (None, Some(c)) => {
                        let mut t = units::count(c.mean);
                        if let Some([lo, hi]) = c.ci95 {
                            let _ = write!(t, " ±{}", units::count((hi - lo) / 2.0));
                        }
                        match c.vs_baseline.as_deref() {
                            Some("faster") => t.push_str(" ▲"),
                            Some("slower") => t.push_str(" ▼"),
                            Some(_) => t.push_str(" ·"),
                            None => {}
                        }
                        t
                    }
                };
                let _ = write!(s, "{text:>w$}");
            }
            let _ = writeln!(s);
        }
        // The verdict names how many settings it judged, so a skipped one is never read as
        // having lost.
        let skipped: Vec<&str> = g
            .settings
            .iter()
            .filter(|x| x.skipped.is_some())
            .map(|x| x.head.as_str())
            .collect();
        let among = match skipped.is_empty() {
            true => String::new(),
            false => format!(
                " (among the {} settings that ran; not {}, skipped)",
                g.settings.len() - skipped.len(),
                skipped.join(", ")
            ),
        };
        if let (Some(best), Some(base)) = (&g.best, &g.baseline) {
            let verdict = if best == base {
                format!(
                    "{best} is best in {} of {} cells{among}: no other setting beats it",
                    g.best_in,
                    g.cells.len()
                )
            } else {
                format!(
                    "{best} is best in {} of {} cells{among} and beats {base} in {} of them",
                    g.best_in,
                    g.cells.len(),
                    g.beats_baseline_in
                )
            };
            let _ = writeln!(s, "  verdict: {verdict}");
        }
        if let Some(why) = &g.no_verdict {
            let _ = writeln!(s, "  no verdict: {why}");
        }
        for set in &g.settings {
            if let Some(why) = &set.skipped {
                let _ = writeln!(s, "  {}: skipped, {why}", set.label);
            }
        }
    }
    if !doc.scaling.is_empty() {
        let _ = writeln!(s, "\nwhere scaling stops");
        for f in &doc.scaling {
            let _ = writeln!(
                s,
                "  {} {}: {}\n    try: {}",
                f.severity, f.kind, f.summary, f.advice
            );
        }
    }
    if !doc.damaged.is_empty() {
        let _ = writeln!(
            s,
            "\nwith a member missing or rebuilding, against the same array whole\n  {}",
            doc.damaged.join("\n  ")
        );
    }
    if !doc.drift.is_empty() {
        let _ = writeln!(
            s,
            "\nwarning: the settings as found measured differently at the start and at the end of the sweep, so the device changed while it ran and the columns above are not comparable:\n  {}\n  try: fill or precondition the target first (--precondition writes it twice over), or run the sweep twice and keep the second",
            doc.drift.join("\n  ")
        );
    }
    // Said only of what is true: settings ran, and they were stored.
    if doc.stored && doc.anything_ran() {
        let _ = writeln!(
            s,
            "\nEach setting that ran is stored as a run tagged sweep={0}: iogauge list, iogauge compare sweep:{0}, iogauge report sweep:{0}",
            doc.sweep
        );
    }
    s
}
