//! A run's findings as people read them: warnings first, alike information once with a
//! count, each piece of advice once.

use iogauge_analyze::{Finding, Severity};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The findings for a terminal: one line each, `warning stall …`, and what to try next after
/// the first finding that gives that advice. Warnings come first; information alike (same kind
/// and advice, e.g. `steady` for every cell of a matrix) is one line with a count. Empty input
/// gives an empty string.
pub fn text(findings: &[Finding]) -> String {
    let mut s = String::new();
    if findings.is_empty() {
        return s;
    }
    let warning = |f: &Finding| f.severity != Severity::Info;
    let mut lines: Vec<(&Finding, usize)> = findings
        .iter()
        .filter(|f| warning(f))
        .map(|f| (f, 1))
        .collect();
    for f in findings.iter().filter(|f| !warning(f)) {
        let alike = |g: &Finding| !warning(g) && g.kind == f.kind && g.advice == f.advice;
        match lines.iter_mut().find(|(g, _)| alike(g)) {
            Some(line) => line.1 += 1,
            None => lines.push((f, 1)),
        }
    }
    let _ = writeln!(s, "\nfindings:");
    let mut advised = BTreeSet::new();
    for (f, n) in lines {
        let more = if n > 1 {
            format!(" (and {} more alike)", n - 1)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "  {:<7} {:<8} {}{more}",
            f.severity.to_string(),
            f.kind.as_str(),
            f.summary
        );
        let advice = &f.advice;
        if !advice.is_empty() && advised.insert(advice.clone()) {
            let _ = writeln!(s, "{:18}try: {advice}", "");
        }
    }
    s
}
