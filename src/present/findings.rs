//! A run's findings as people read them: warnings first, alike information once with a
//! count, each piece of advice once; and the thresholds they are judged by.

use iogauge_analyze::{Finding, Severity};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Warnings of one kind and advice said one by one; more are counted on the last of them.
const WARNINGS_ALIKE: usize = 3;

/// The findings for a terminal: one line each, `warning stall …`, and what to try next after
/// the first finding that gives that advice. Warnings come first, the first [`WARNINGS_ALIKE`]
/// of a kind and advice each on its line and the rest of them counted on the last (an
/// interrupted matrix gave 45 `steady` warnings one by one; the run document keeps them all,
/// each with its cell); information alike (same kind and advice, e.g. `steady` for every cell
/// of a matrix) is one line with a count. Empty input gives an empty string.
pub fn text(findings: &[Finding]) -> String {
    titled("findings", findings)
}

/// [`text`] under another heading (`before the run` for the placements judged up front).
pub fn titled(title: &str, findings: &[Finding]) -> String {
    let mut s = String::new();
    if findings.is_empty() {
        return s;
    }
    let warning = |f: &Finding| f.severity != Severity::Info;
    let mut lines: Vec<(&Finding, usize)> = Vec::new();
    for f in findings.iter().filter(|f| warning(f)) {
        let alike: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].0.kind == f.kind && lines[i].0.advice == f.advice)
            .collect();
        match alike.len() >= WARNINGS_ALIKE {
            true => lines[alike[alike.len() - 1]].1 += 1,
            false => lines.push((f, 1)),
        }
    }
    for f in findings.iter().filter(|f| !warning(f)) {
        let alike = |g: &Finding| !warning(g) && g.kind == f.kind && g.advice == f.advice;
        match lines.iter_mut().find(|(g, _)| alike(g)) {
            Some(line) => line.1 += 1,
            None => lines.push((f, 1)),
        }
    }
    let _ = writeln!(s, "\n{title}:");
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

/// `report --list-thresholds`: each threshold's name, default and meaning, one a row.
pub fn thresholds(entries: &[iogauge_analyze::ThresholdEntry]) -> String {
    let mut rows = vec![vec!["name".into(), "default".into(), "meaning".into()]];
    rows.extend(entries.iter().map(|(name, value, meaning)| {
        vec![name.to_string(), value.to_string(), meaning.to_string()]
    }));
    super::table::table(&rows, &[false, true, false])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::run_findings;
    use crate::analysis::tests::{doc, matrix};
    use crate::workload::Rw;

    #[test]
    fn printed_findings_give_each_advice_once() {
        let mut results = matrix(Rw::Randwrite, &[1, 10]);
        for r in results.iter_mut().filter(|r| r.workload.threads == 10) {
            if r.workload.bs == 16384 || r.workload.bs == 262144 {
                r.iops /= 10.0;
            }
        }
        let found = run_findings(&doc(results), &Default::default());
        assert_eq!(
            found
                .iter()
                .filter(|f| f.kind == iogauge_analyze::Kind::Gap)
                .count(),
            2,
            "{found:#?}"
        );
        let said = text(&found);
        assert_eq!(said.matches("warning gap").count(), 2, "{said}");
        assert_eq!(said.matches("try: ").count(), 1, "{said}");
        assert!(text(&[]).is_empty());
        // Every cell's steady-state information is one line; warnings come before it.
        let mut results = matrix(Rw::Randread, &[1, 10]);
        for b in &mut results[17].fine.ios[50..80] {
            *b = 0;
        }
        let mut d = doc(results);
        crate::analysis::annotate(&mut d, None);
        let said = text(&d.findings);
        assert_eq!(said.matches("info    steady").count(), 1, "{said}");
        assert!(said.contains("(and 17 more alike)"), "{said}");
        let (stall, steady) = (said.find("warning stall"), said.find("info    steady"));
        assert!(stall.is_some() && stall < steady, "{said}");
    }

    /// Ten cells stalled: three warnings said, the other seven counted on the third, the advice
    /// once; the document keeps all ten.
    #[test]
    fn many_warnings_alike_are_three_lines_and_a_count() {
        let mut results = matrix(Rw::Randread, &[1, 10]);
        for r in results.iter_mut().take(10) {
            for b in &mut r.fine.ios[50..80] {
                *b = 0;
            }
        }
        let mut d = doc(results);
        crate::analysis::annotate(&mut d, None);
        let stalls = d
            .findings
            .iter()
            .filter(|f| f.kind == iogauge_analyze::Kind::Stall)
            .count();
        assert_eq!(stalls, 10);
        let said = text(&d.findings);
        assert_eq!(said.matches("warning stall").count(), 3, "{said}");
        assert!(said.contains("(and 7 more alike)"), "{said}");
    }
}
