//! The report page: one HTML file with its CSS and charts inline, laid out for a phone as well as
//! a desktop and for print. Everything from a run document is escaped on the way in.

use super::{figures, Chart, Input, Kind};
use crate::model::RunDoc;
use crate::units;
use iogauge_analyze::Finding;
use iogauge_charts::escape as esc;
use std::fmt::Write;

/// The sections of charts across runs, in page order: their anchor, heading and kind.
const ACROSS: [(&str, &str, Kind); 3] = [
    ("comparison", "Runs compared", Kind::Compare),
    ("scaling", "Scaling", Kind::Scaling),
    ("layouts", "Arrays by members and chunk", Kind::Layouts),
];

const CSS: &str = r#"
:root{--ink:#1f2328;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa;--warn:#b35900;--warnbg:#fff5e6;--info:#0a5cad;--infobg:#eaf3fc}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header,main,footer{max-width:84rem;margin:0 auto;padding:0 1rem}
header{padding-top:1.25rem}
h1{font-size:1.7rem;margin:0}
h2{font-size:1.35rem;margin:2.25rem 0 .75rem;padding-bottom:.3rem;border-bottom:2px solid var(--line)}
h3{font-size:1.05rem;margin:1.5rem 0 .5rem}
p{margin:.4rem 0}
.sub,.meta,.absent,figcaption,footer{color:var(--muted)}
.sub{margin:.2rem 0 0}
nav ol{list-style:none;padding:0;margin:.75rem 0 0;display:flex;flex-wrap:wrap;gap:.25rem .5rem}
nav a{display:inline-block;padding:.15rem .6rem;border:1px solid var(--line);border-radius:999px;background:#fff;color:var(--info);text-decoration:none;font-size:.9rem}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,36rem),1fr));gap:1rem}
figure.chart{margin:0;background:#fff;border:1px solid var(--line);border-radius:8px;padding:.5rem;break-inside:avoid}
figure.chart svg{display:block;height:auto}
figcaption{font-size:.85rem;padding:.3rem .25rem 0}
.table-wrap{overflow-x:auto;-webkit-overflow-scrolling:touch;border:1px solid var(--line);border-radius:8px;background:#fff}
table{border-collapse:collapse;font-size:.9rem;width:100%}
th,td{padding:.3rem .5rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f0f3f6;font-weight:600;white-space:nowrap}
tr:last-child td{border-bottom:none}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.wl{white-space:nowrap}
small{color:var(--muted)}
.spark{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre;color:var(--info);letter-spacing:-.05em}
.kv th{width:12rem}
.devices td{white-space:nowrap}
.devices td.layout{white-space:normal;min-width:18rem}
ul.findings{list-style:none;padding:0;margin:0}
li.finding{border-left:4px solid var(--info);border-radius:6px;padding:.55rem .8rem;margin:.5rem 0;background:var(--infobg)}
li.finding.warning{border-color:var(--warn);background:var(--warnbg)}
.badge{display:inline-block;font-size:.72rem;font-weight:700;text-transform:uppercase;letter-spacing:.04em;padding:.05rem .45rem;border-radius:4px;margin-right:.35rem;color:#fff;background:var(--info);vertical-align:.1em}
.warning .badge{background:var(--warn)}
.kind{font-weight:600;margin-right:.35rem}
.advice{margin:.3rem 0 0;font-size:.9rem;color:var(--muted)}
details{font-size:.85rem;margin-top:.25rem}
summary{cursor:pointer;color:var(--muted)}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em;overflow-wrap:anywhere}
footer{font-size:.85rem;padding:2rem 1rem}
@media (max-width:40rem){body{font-size:15px}h1{font-size:1.4rem}th,td{padding:.3rem .45rem}}
@media print{
body{background:#fff;font-size:10pt}
nav{display:none}
header,main,footer{max-width:none;padding:0}
.grid{display:block}
figure.chart{border:none;padding:0;margin:0 0 1rem;page-break-inside:avoid;break-inside:avoid}
section.run{break-before:page}
li.finding{break-inside:avoid;-webkit-print-color-adjust:exact;print-color-adjust:exact}
.table-wrap{overflow:visible;border:none}
a{color:inherit;text-decoration:none}
}
"#;

/// The whole page.
pub(super) fn page(runs: &[Input], charts: &[Chart], absent: &[String]) -> String {
    let mut s =
        String::with_capacity(64 * 1024 + charts.iter().map(|c| c.svg.len()).sum::<usize>());
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"iogauge {v}\">\n<title>iogauge report: {t}</title>\n\
         <style>{CSS}</style>\n</head>\n<body>\n",
        v = env!("CARGO_PKG_VERSION"),
        t = esc(&names.join(", "))
    );
    let findings: usize = runs.iter().map(|r| r.doc.findings.len()).sum();
    let _ = write!(
        s,
        "<header>\n<h1>iogauge report</h1>\n<p class=\"sub\">{} run{} · {} result{} · {} chart{} · {} finding{}</p>\n",
        runs.len(),
        crate::units::plural(runs.len()),
        runs.iter().map(|r| r.doc.results.len()).sum::<usize>(),
        crate::units::plural(runs.iter().map(|r| r.doc.results.len()).sum()),
        charts.len(),
        crate::units::plural(charts.len()),
        findings,
        crate::units::plural(findings)
    );
    s.push_str("<nav><ol><li><a href=\"#overview\">Overview</a></li>");
    let cross = |k: Kind| charts.iter().any(|c| c.run.is_none() && c.kind == k);
    for (id, title, kind) in ACROSS {
        if cross(kind) {
            let _ = write!(s, "<li><a href=\"#{id}\">{title}</a></li>");
        }
    }
    for (n, r) in runs.iter().enumerate() {
        let _ = write!(
            s,
            "<li><a href=\"#run-{}\">{}</a></li>",
            n + 1,
            esc(&r.name)
        );
    }
    s.push_str("</ol></nav>\n</header>\n<main>\n");

    overview(&mut s, runs, absent);
    for (id, title, kind) in ACROSS {
        let these: Vec<&Chart> = charts
            .iter()
            .filter(|c| c.run.is_none() && c.kind == kind)
            .collect();
        if !these.is_empty() {
            let _ = write!(s, "<section id=\"{id}\">\n<h2>{title}</h2>\n");
            grid(&mut s, &these);
            s.push_str("</section>\n");
        }
    }
    for (n, input) in runs.iter().enumerate() {
        let these: Vec<&Chart> = charts.iter().filter(|c| c.run == Some(n)).collect();
        run_section(&mut s, n, input, &these);
    }
    let _ = write!(
        s,
        "</main>\n<footer>Made by iogauge {} from the runs' stored documents. Rates are per second; \
         {}, latencies are completion latencies.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        match crate::units::bw_unit() {
            "MB/s" => "MB/s is SI (10<sup>6</sup> bytes)",
            _ => "MiB/s is IEC (2<sup>20</sup> bytes)",
        }
    );
    s
}

fn overview(s: &mut String, runs: &[Input], absent: &[String]) {
    s.push_str("<section id=\"overview\">\n<h2>Overview</h2>\n<div class=\"table-wrap\"><table>\n");
    s.push_str(
        "<thead><tr><th>Run</th><th>Started</th><th>Suite</th><th class=\"num\">Results</th>\
         <th class=\"num\">Findings</th><th>Parameters</th><th>Host</th></tr></thead><tbody>\n",
    );
    for (n, r) in runs.iter().enumerate() {
        let d = &r.doc;
        let warnings = d
            .findings
            .iter()
            .filter(|f| f.severity != iogauge_analyze::Severity::Info)
            .count();
        let params: Vec<String> = d.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(
            s,
            "<tr><td><a href=\"#run-{}\">{}</a>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{} ({} warning{})</td><td>{}</td><td>{}</td></tr>",
            n + 1,
            esc(&r.name),
            if d.interrupted { " (interrupted)" } else { "" },
            esc(&d.started_at),
            esc(d.suite.as_deref().unwrap_or("—")),
            d.results.len(),
            d.findings.len(),
            warnings,
            crate::units::plural(warnings),
            esc(&params.join(", ")),
            esc(d.system.hostname.as_deref().unwrap_or("—"))
        );
    }
    s.push_str("</tbody></table></div>\n");
    if !absent.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"absent\" id=\"absent\">Not drawn: {}.</p>",
            esc(&absent.join("; "))
        );
    }
    s.push_str("</section>\n");
}

fn grid(s: &mut String, charts: &[&Chart]) {
    s.push_str("<div class=\"grid\">\n");
    for c in charts {
        let _ = writeln!(
            s,
            "<figure class=\"chart\" id=\"{}\" data-kind=\"{}\">{}<figcaption>{}</figcaption></figure>",
            esc(&c.slug),
            c.kind.id(),
            c.svg.trim_end(),
            esc(&c.caption)
        );
    }
    s.push_str("</div>\n");
}

fn run_section(s: &mut String, n: usize, input: &Input, charts: &[&Chart]) {
    let d = &input.doc;
    let _ = write!(
        s,
        "<section class=\"run\" id=\"run-{}\">\n<h2>{}</h2>\n<p class=\"meta\">run id <code>{}</code> · started {}{}{}</p>\n",
        n + 1,
        esc(&input.name),
        esc(&d.run_id),
        esc(&d.started_at),
        d.suite
            .as_ref()
            .map(|x| format!(" · suite {}", esc(x)))
            .unwrap_or_default(),
        if d.interrupted {
            " · <strong>interrupted</strong>: the results cover what ran"
        } else {
            ""
        }
    );
    if !d.command.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"meta\"><code>{}</code></p>",
            esc(&d.command.join(" "))
        );
    }
    for note in &d.notes {
        let _ = writeln!(s, "<p class=\"meta\">Note: {}</p>", esc(note));
    }
    if d.results.iter().any(|r| !r.is_db()) {
        results_table(s, d);
    }
    transactions_table(s, d);
    devices_table(s, d);
    if !charts.is_empty() {
        s.push_str("<h3>Charts</h3>\n");
        grid(s, charts);
    }
    let _ = writeln!(s, "<h3 id=\"findings-{}\">Findings</h3>", n + 1);
    findings_list(s, d);
    let _ = writeln!(s, "<h3 id=\"system-{}\">System</h3>", n + 1);
    super::system::table(s, &d.system);
    s.push_str("</section>\n");
}

fn results_table(s: &mut String, d: &RunDoc) {
    s.push_str(&"<h3>Results</h3>\n<div class=\"table-wrap\"><table>\n<thead><tr><th>#</th><th>Workload</th>\
        <th class=\"num\">IOPS</th><th class=\"num\">BW_UNIT</th><th class=\"num\">mean</th>\
        <th class=\"num\">p50</th><th class=\"num\">p99</th><th class=\"num\">p99.9</th>\
        <th class=\"num\">time</th><th>IOPS over time</th></tr></thead><tbody>\n"
        .replace("BW_UNIT", crate::units::bw_unit()));
    for (i, r) in d.results.iter().enumerate() {
        // Transactions are no IOs: they have their own table below.
        if r.is_db() {
            continue;
        }
        let ci = r
            .stats
            .get("iops")
            .filter(|st| st.n >= 2)
            .map(|st| {
                let pm = crate::units::plus_minus(st.mean, st.ci95, units::count)
                    .unwrap_or_else(|| format!(" {}", crate::units::TOO_FEW));
                format!(
                    "<br><small title=\"95% confidence interval of the mean over {n} repeats\">{} (n = {n})</small>",
                    pm.trim_start(),
                    n = st.n
                )
            })
            .unwrap_or_default();
        let spark: Vec<f64> = r.timeseries.iter().map(|x| x.iops).collect();
        let _ = writeln!(
            s,
            "<tr><td class=\"num\">{}</td><td class=\"wl\">{}{}</td><td class=\"num\">{}{ci}</td><td class=\"num\">{:.1}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{:.1} s</td><td class=\"spark\">{}</td></tr>",
            i + 1,
            esc(&figures::label(r)),
            if r.interrupted { " (interrupted)" } else { "" },
            units::count(r.iops),
            crate::units::bw_value(r.bw_bytes),
            units::latency(r.lat_ns.mean),
            units::latency(r.lat_ns.p50 as f64),
            units::latency(r.lat_ns.p99 as f64),
            units::latency(r.lat_ns.p999 as f64),
            r.runtime_s,
            esc(&super::sparkline_fit(&spark, 20))
        );
    }
    s.push_str("</tbody></table></div>\n");
}

/// The database results: TPS and transaction latency, with the buffer's share of the data.
fn transactions_table(s: &mut String, d: &RunDoc) {
    if !d.results.iter().any(crate::model::ResultDoc::is_db) {
        return;
    }
    s.push_str("<h3>Transactions</h3>\n<div class=\"table-wrap\"><table>\n<thead><tr><th>#</th><th>Workload</th>\
        <th class=\"num\">buffer of data</th><th class=\"num\">TPS</th><th class=\"num\">p50</th>\
        <th class=\"num\">p99</th><th class=\"num\">p99.9</th><th class=\"num\">time</th></tr></thead><tbody>\n");
    for (i, r) in d.results.iter().enumerate().filter(|(_, r)| r.is_db()) {
        let ratio = r
            .buffer_ratio()
            .map_or("—".to_string(), |x| format!("{:.0}%", x * 100.0));
        let _ = writeln!(
            s,
            "<tr><td class=\"num\">{}</td><td class=\"wl\">{}</td><td class=\"num\">{ratio}</td><td class=\"num\">{} TPS</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1} s</td></tr>",
            i + 1,
            esc(&figures::label(r)),
            units::count(r.iops),
            units::latency(r.lat_ns.p50 as f64),
            units::latency(r.lat_ns.p99 as f64),
            units::latency(r.lat_ns.p999 as f64),
            r.runtime_s
        );
    }
    s.push_str("</tbody></table></div>\n");
}

/// What each device of the stack saw, per result: the block layer's own counts next to the
/// IOs iogauge issued.
fn devices_table(s: &mut String, d: &RunDoc) {
    if d.results.iter().all(|r| r.devices.is_empty()) {
        return;
    }
    s.push_str("<h3>What the devices saw</h3>\n<div class=\"table-wrap\"><table>\n<thead><tr><th>#</th>\
        <th>Device</th><th class=\"num\">reads/s</th><th class=\"num\">avg read</th>\
        <th class=\"num\">writes/s</th><th class=\"num\">avg write</th><th class=\"num\">merges</th>\
        <th class=\"num\">queue depth</th><th class=\"num\">busy</th></tr></thead><tbody>\n");
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("?".to_string(), f);
    for (i, r) in d.results.iter().enumerate() {
        for dev in &r.devices {
            let secs = dev.elapsed_s.max(1e-9);
            let rate = |n: Option<u64>| opt(n.map(|n| n as f64 / secs), &|v| units::count(v));
            let size = |b: Option<f64>| opt(b, &|v| units::iec(v.round() as u64));
            let merges = match (dev.read_merges, dev.write_merges) {
                (Some(a), Some(b)) => units::count((a + b) as f64),
                _ => "?".into(),
            };
            let _ = writeln!(
                s,
                "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                i + 1,
                esc(&dev.name),
                rate(dev.reads),
                size(dev.avg_read_request_bytes),
                rate(dev.writes),
                size(dev.avg_write_request_bytes),
                merges,
                opt(dev.avg_queue_depth, &|v| format!("{v:.1}")),
                opt(dev.util, &|v| format!("{:.0}%", v * 100.0)),
            );
        }
    }
    s.push_str("</tbody></table></div>\n");
}

fn findings_list(s: &mut String, d: &RunDoc) {
    if d.findings.is_empty() {
        s.push_str("<p>None: no stalls, ceilings, gaps, outliers, cache or sparse-file effects were found.</p>\n");
        return;
    }
    let warning = |f: &Finding| f.severity != iogauge_analyze::Severity::Info;
    // Warnings first; information alike (same kind and advice, e.g. "steady" for every cell of a
    // matrix) as one item whose members open on demand.
    let mut items: Vec<Vec<&Finding>> = Vec::new();
    for f in d.findings.iter().filter(|f| warning(f)) {
        items.push(vec![f]);
    }
    for f in d.findings.iter().filter(|f| !warning(f)) {
        let alike = items
            .iter_mut()
            .find(|it| !warning(it[0]) && it[0].kind == f.kind && it[0].advice == f.advice);
        match alike {
            Some(it) => it.push(f),
            None => items.push(vec![f]),
        }
    }
    s.push_str("<ul class=\"findings\">\n");
    for it in items {
        let f = it[0];
        let severity = if warning(f) { "warning" } else { "info" };
        let kind = esc(f.kind.as_str());
        let _ = write!(
            s,
            "<li class=\"finding {severity}\" data-kind=\"{kind}\"><span class=\"badge\">{severity}</span>\
             <span class=\"kind\">{kind}</span>"
        );
        if it.len() == 1 {
            s.push_str(&esc(&f.summary));
        } else {
            let _ = write!(s, "{} findings alike", it.len());
        }
        if !f.advice.is_empty() {
            let _ = write!(s, "<p class=\"advice\">{}</p>", esc(&f.advice));
        }
        if it.len() > 1 {
            let all: Vec<String> = it.iter().map(|g| esc(&g.summary)).collect();
            let _ = write!(
                s,
                "<details><summary>each one</summary><ul><li>{}</li></ul></details>",
                all.join("</li><li>")
            );
        } else {
            let ev = &f.evidence;
            if !ev.is_empty() {
                let items: Vec<String> = ev
                    .iter()
                    .map(|(k, v)| format!("{}&nbsp;=&nbsp;{}", esc(k), esc(&evidence_value(*v))))
                    .collect();
                let _ = write!(
                    s,
                    "<details><summary>evidence</summary>{}</details>",
                    items.join(" · ")
                );
            }
        }
        s.push_str("</li>\n");
    }
    s.push_str("</ul>\n");
}

fn evidence_value(x: f64) -> String {
    match x.fract() == 0.0 && x.abs() < 1e15 {
        true => format!("{x:.0}"),
        false => format!("{x:.4}"),
    }
}
