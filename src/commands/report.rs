//! `iogauge report`: one self-contained HTML file with the studies' graphs, from stored runs or
//! run documents in JSON files, and optionally each chart as its own SVG file.

use crate::cli::ReportArgs;
use crate::report::{self, Input};
use anyhow::{Context, Result};
use iogauge_analyze::Thresholds;
use std::path::Path;

pub fn run(args: &ReportArgs) -> Result<()> {
    if args.list_thresholds {
        let defaults = Thresholds::default().entries();
        return Ok(crate::ui::out(&crate::present::findings::thresholds(
            &defaults,
        ))?);
    }
    // The report is HTML: a file named for another format would be opened by the wrong program.
    let ext = args
        .output
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if !matches!(ext.as_deref(), Some("html" | "htm")) {
        return Err(crate::error::usage(format!(
            "-o {}: the report is one HTML file; name it .html (print it to PDF from a browser if you need one)",
            args.output.display()
        )));
    }
    crate::target::gate::output_file(
        "-o",
        &args.output,
        "give the report a file path on a file system",
    )?;
    if let Some(dir) = &args.charts {
        crate::target::gate::output_dir(
            "--charts",
            dir,
            "give a directory on a file system for the chart files",
        )?;
    }
    let thresholds = match &args.thresholds {
        Some(path) => Some(read_thresholds(path)?),
        None => None,
    };
    let mut runs = Vec::new();
    if !args.runs.is_empty() {
        let stored = crate::store::load_runs(args.db.path(), &args.runs)?;
        // A sweep whose baseline moved while it ran: said on the report, as on the sweep's
        // own table and in compare.
        let drift = crate::compare::sweep_drift(&stored.iter().collect::<Vec<_>>());
        for s in stored {
            let name = run_name(&s.doc, s.id);
            runs.push(Input { name, doc: s.doc });
        }
        if let (Some(w), Some(first)) = (drift, runs.first_mut()) {
            first.doc.notes.insert(0, w);
        }
    }
    for path in &args.from_json {
        let doc = read_doc(path)?;
        let name = doc.label.clone().unwrap_or_else(|| doc.run_id.clone());
        runs.push(Input { name, doc });
    }
    if runs.is_empty() {
        return Err(crate::error::usage(
            "no runs to report on; name stored runs (ids, labels or `last`) or give --from-json FILE",
        ));
    }
    for r in &mut runs {
        match &thresholds {
            Some(th) => reanalyze(&mut r.doc, th),
            // Documents from before findings were computed get them here.
            None if r.doc.findings.is_empty() => crate::analysis::annotate(&mut r.doc, None),
            None => {}
        }
    }
    let built = report::build(&runs);
    crate::target::files::replace(&args.output, built.html.as_bytes())
        .with_context(|| format!("cannot write the report to {}", args.output.display()))?;
    if let Some(dir) = &args.charts {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the charts directory {}", dir.display()))?;
        let png = report::png::fonts_available();
        if !png {
            say!("iogauge: no fonts found on this system, so the charts are written as SVG only (install fonts-dejavu-core for PNG files)");
        }
        for c in &built.charts {
            let file = dir.join(format!("{}.svg", c.slug));
            crate::target::files::replace(&file, c.svg.as_bytes())
                .with_context(|| format!("cannot write the chart {}", file.display()))?;
            if png {
                let file = dir.join(format!("{}.png", c.slug));
                let bytes = report::png::render(&c.svg)
                    .with_context(|| format!("rendering {}", file.display()))?;
                crate::target::files::replace(&file, &bytes)
                    .with_context(|| format!("cannot write the chart {}", file.display()))?;
            }
        }
    }
    if !built.absent.is_empty() {
        say!("iogauge: not drawn: {}", built.absent.join("; "));
    }
    say!(
        "iogauge: wrote {} ({} run{}, {} chart{}{})",
        args.output.display(),
        runs.len(),
        crate::units::plural(runs.len()),
        built.charts.len(),
        crate::units::plural(built.charts.len()),
        args.charts
            .as_ref()
            .map(|d| format!(", also as SVG and PNG files in {}", d.display()))
            .unwrap_or_default()
    );
    Ok(())
}

/// A run document as `iogauge run --json` or `iogauge export` wrote it.
fn read_doc(path: &Path) -> Result<crate::model::RunDoc> {
    let text =
        crate::target::gate::read_input("run document", path, crate::target::gate::DOC_LIMIT)?;
    serde_json::from_str(&text).map_err(|e| {
        crate::error::usage(format!(
            "{} is not an iogauge run document ({e}); write one with `iogauge run --json` or `iogauge export`",
            path.display()
        ))
    })
}

/// Thresholds from a TOML file naming only the ones it changes, e.g. `gap_frac = 0.3`.
fn read_thresholds(path: &Path) -> Result<Thresholds> {
    let text =
        crate::target::gate::read_input("thresholds file", path, crate::target::gate::TEXT_LIMIT)?;
    let bad =
        |e: toml::de::Error| crate::error::usage(format!("{}: {}", path.display(), e.message()));
    // A misspelled name would otherwise be ignored, and the findings recomputed with the
    // default the user meant to change.
    let table: toml::Table = toml::from_str(&text).map_err(bad)?;
    if let Some(key) = table
        .keys()
        .find(|k| !Thresholds::names().any(|n| n == k.as_str()))
    {
        let (near, _) =
            crate::error::nearest(key, Thresholds::names()).expect("thresholds have names");
        return Err(crate::error::usage(format!(
            "{}: there is no threshold '{}'; the nearest is {near} (every name with its default: iogauge report --list-thresholds)",
            path.display(),
            crate::units::quoted(key, 60)
        )));
    }
    let th: Thresholds = toml::from_str(&text).map_err(bad)?;
    th.validate()
        .map_err(|e| crate::error::usage(format!("{}: {e}", path.display())))?;
    Ok(th)
}

/// Recomputes the findings with other thresholds. Sparse-file findings need the target as it was
/// during the run, so the stored ones are kept.
fn reanalyze(doc: &mut crate::model::RunDoc, th: &iogauge_analyze::Thresholds) {
    let kept: Vec<iogauge_analyze::Finding> = doc
        .findings
        .iter()
        .filter(|f| f.kind == iogauge_analyze::Kind::Sparse)
        .cloned()
        .collect();
    crate::analysis::annotate_with(doc, None, th);
    for f in kept {
        if let Some(r) = f.result.and_then(|i| doc.results.get_mut(i)) {
            r.findings.push(f.clone());
        }
        doc.findings.push(f);
    }
}

/// A stored run's name on the page. A sweep's runs are named by their setting, so its charts
/// read knob value by knob value (its runs share one --label, which tells them apart from
/// nothing); other runs by their label.
fn run_name(doc: &crate::model::RunDoc, id: i64) -> String {
    // A database run names its server: a PostgreSQL bar beside a MariaDB one must say which.
    let server = doc
        .params
        .iter()
        .find(|(k, v)| k.ends_with(".server") && !v.is_empty())
        .map(|(_, v)| v);
    let setting = doc.params.get("sweep.setting").or(doc.label.as_ref());
    match (setting, server) {
        (Some(l), Some(s)) => format!("{l} · {s} (run {id})"),
        (Some(l), None) => format!("{l} (run {id})"),
        (None, Some(s)) => format!("{s} (run {id})"),
        (None, None) => format!("run {id}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_sweep_run_is_named_by_its_setting_even_with_a_label() {
        let mut d = crate::analysis::tests::doc(Vec::new());
        d.label = Some("sw".into());
        assert_eq!(super::run_name(&d, 22), "sw (run 22)");
        d.params
            .insert("sweep.setting".into(), "scheduler=none".into());
        assert_eq!(super::run_name(&d, 22), "scheduler=none (run 22)");
        d.label = None;
        d.params.clear();
        assert_eq!(super::run_name(&d, 3), "run 3");
        d.params.insert("tpcc.server".into(), "MariaDB".into());
        assert_eq!(super::run_name(&d, 5), "MariaDB (run 5)");
        d.label = Some("redo on nvme".into());
        assert_eq!(super::run_name(&d, 5), "redo on nvme · MariaDB (run 5)");
    }
}
