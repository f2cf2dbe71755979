//! A sweep's table and verdicts, as people read them.

use crate::sweep::SweepDoc;
use crate::units;
use std::fmt::Write;

/// The row of a fill sweep's table that gives each setting's level of use (statvfs).
const USED: &str = "file system used";

/// The sweep table: per knob (or for the file systems), each cell's IOPS with its 95% CI under
/// each setting, marked against the baseline and with the warnings that take a number's
/// meaning away, and the verdict: only what the significance test allows.
pub fn text(doc: &SweepDoc) -> String {
    use crate::model::caveats;
    use crate::units::{plus_minus, TOO_FEW};
    let mut s = String::new();
    let judged = doc.repeats >= 2;
    let _ = writeln!(
        s,
        "sweep {} · {} {} · {}: {}",
        doc.sweep,
        match doc.suite.starts_with("db-") {
            true => "load",
            false => "suite",
        },
        doc.suite,
        doc.rate,
        match judged {
            false => "one run of each setting, so no marks and no verdict".to_string(),
            true => format!(
                "mean of {} repeats (± half the 95% CI, Student t) · ▲ faster ▼ slower · no significant change, against the first column that ran: Welch p < {} and a change above {:.0}%",
                doc.repeats,
                doc.alpha,
                doc.noise * 100.0
            ),
        },
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
            .max(match g.settings.iter().any(|x| x.used.is_some()) {
                true => USED.len(),
                false => 0,
            })
            + 2;
        let mut used = Vec::new();
        let mut too_few = false;
        let texts: Vec<Vec<String>> = (0..g.cells.len())
            .map(|ci| {
                g.settings
                    .iter()
                    .map(|set| match (&set.skipped, &set.iops[ci]) {
                        (Some(_), _) => "skipped".to_string(),
                        (None, None) => "—".to_string(),
                        (None, Some(c)) => {
                            let mut t = units::count(c.mean);
                            if let Some(ci95) = c.ci95 {
                                match plus_minus(c.mean, ci95, units::count) {
                                    Some(pm) => t.push_str(&pm),
                                    None => {
                                        too_few = true;
                                        t.push_str(" ±?");
                                    }
                                }
                            }
                            match c.vs_baseline.as_deref() {
                                Some("faster") => t.push_str(" ▲"),
                                Some("slower") => t.push_str(" ▼"),
                                Some(_) => t.push_str(" ·"),
                                None => {}
                            }
                            t.push_str(&caveats::marks(&c.caveats));
                            used.extend(c.caveats.iter().copied());
                            t
                        }
                    })
                    .collect()
            })
            .collect();
        // Each column as wide as its longest head (an array's "md raid5 × 4 · chunk 512 KiB")
        // or its longest number with its marks.
        let w = g
            .settings
            .iter()
            .map(|h| h.head.chars().count())
            .chain(texts.iter().flatten().map(|t| t.chars().count()))
            .max()
            .unwrap_or(22)
            .max(22)
            + 2;
        if !g.cells.is_empty() {
            let _ = write!(s, "  {:<w0$}", "cell");
            for h in &g.settings {
                let _ = write!(s, "{:>w$}", h.head);
            }
            let _ = writeln!(s);
        }
        for (cell, row) in g.cells.iter().zip(&texts) {
            let pad = w0.saturating_sub(cell.chars().count());
            let _ = write!(s, "  {cell}{:pad$}", "");
            for text in row {
                let _ = write!(s, "{text:>w$}");
            }
            let _ = writeln!(s);
        }
        // A fill sweep's level of use as each setting's cells began, under its column.
        if g.settings.iter().any(|x| x.used.is_some()) {
            let _ = write!(s, "  {USED:<w0$}");
            for set in &g.settings {
                let _ = write!(s, "{:>w$}", set.used.as_deref().unwrap_or("—"));
            }
            let _ = writeln!(s);
        }
        if too_few {
            let _ = writeln!(s, "  ±?: {TOO_FEW} (the 95% interval reaches zero)");
        }
        for line in caveats::legend(used) {
            let _ = writeln!(s, "  {line}");
        }
        if g.marked_cells > 0 && g.marked_cells == g.cells.len() {
            let _ = writeln!(
                s,
                "  every cell is marked: these numbers are not the storage's alone, and neither is the verdict"
            );
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
        match (&g.no_verdict, &g.baseline) {
            (Some(why), _) => {
                let _ = writeln!(s, "  no verdict: {why}");
            }
            (None, Some(base)) => {
                let _ = writeln!(s, "  verdict: {}{among}", verdict(g, base));
                if let Some(best) = &g.best {
                    let _ = writeln!(
                        s,
                        "  best: {best}, faster than another setting in {} of {} cells and slower than none in any",
                        g.best_in,
                        g.cells.len()
                    );
                }
            }
            (None, None) => {}
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

/// The significant differences against the baseline, setting by setting: "xfs is faster than
/// ext4 in 1 of 12 cells (randrw 70/30: +203%, p = 0.003); no other difference is significant".
fn verdict(g: &crate::sweep::GroupDoc, base: &str) -> String {
    /// Cells named per setting before the rest are counted.
    const NAMED: usize = 3;
    let n = g.cells.len();
    if g.differences.is_empty() {
        return format!("no setting differs significantly from {base} in any of the {n} cells");
    }
    let mut parts = Vec::new();
    for set in &g.settings {
        for way in ["faster", "slower"] {
            let d: Vec<_> = g
                .differences
                .iter()
                .filter(|d| d.setting == set.head && d.verdict == way)
                .collect();
            if d.is_empty() {
                continue;
            }
            let mut named: Vec<String> = d
                .iter()
                .take(NAMED)
                .map(|d| {
                    format!(
                        "{}: {}, {}",
                        d.cell,
                        iogauge_analyze::signed_pct(d.change),
                        p_value(d.p_value)
                    )
                })
                .collect();
            if d.len() > NAMED {
                named.push(format!("and {} more", d.len() - NAMED));
            }
            parts.push(format!(
                "{} is {way} than {base} in {} of {n} cells ({})",
                set.head,
                d.len(),
                named.join("; ")
            ));
        }
    }
    parts.push("no other difference is significant".to_string());
    parts.join("; ")
}

/// A p-value as a reader quotes it.
fn p_value(p: f64) -> String {
    match p {
        p if p < 0.001 => "p < 0.001".to_string(),
        p => format!("p = {p:.3}"),
    }
}
