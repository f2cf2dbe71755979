//! Reports: one self-contained HTML page per `iogauge report` with the seed studies' figures —
//! IOPS and bandwidth by block size, Orion's IOPS and latency by outstanding IO, latency
//! percentiles, time series with stalls shaded, runs compared with confidence intervals, scaling
//! with a run parameter — each run's system and every finding; and the terminal's sparkline.
//!
//! A chart is drawn only when the data holds what it shows; the page says in one line which
//! charts are absent and why. Charts are inline SVG from `crates/charts`, so the page needs no
//! network, and each can also be written as its own file (`--charts DIR`).

mod across;
mod db;
mod figures;
mod html;
pub mod png;
pub mod stack;
mod system;
mod terminal;

use crate::model::RunDoc;
pub use terminal::sparkline_fit;
// For `iogauge show` (commands/results.rs), which prints a run's time series in the terminal.
#[allow(unused_imports)]
pub use terminal::sparkline;

/// The run parameter a layout sweep gives each of its runs (sweep.rs), and its member count and
/// chunk.
const LAYOUT: &str = "layout";
const MEMBERS: &str = "layout.members";
const CHUNK: &str = "layout.chunk";

/// One run to report on, with the name the page gives it (its label, or its store id).
pub struct Input {
    pub name: String,
    pub doc: RunDoc,
}

/// The kinds of figure, each with a stable id for the page (`data-kind`) and the file names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    BsIops,
    BsBw,
    Orion,
    Latency,
    TimeSeries,
    Compare,
    Scaling,
    Convergence,
    /// Hosts × time of a run under MPI.
    Hosts,
    /// A database's transactions by its buffer's share of the data (`--buffer-ratio`).
    Buffers,
    /// A layout sweep's arrays: throughput by member count per layout, layout × chunk bars.
    Layouts,
}

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::BsIops,
        Kind::BsBw,
        Kind::Orion,
        Kind::Latency,
        Kind::TimeSeries,
        Kind::Compare,
        Kind::Scaling,
        Kind::Convergence,
        Kind::Hosts,
        Kind::Buffers,
        Kind::Layouts,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Kind::BsIops => "bs-iops",
            Kind::BsBw => "bs-bw",
            Kind::Orion => "orion",
            Kind::Latency => "latency",
            Kind::TimeSeries => "timeseries",
            Kind::Compare => "compare",
            Kind::Scaling => "scaling",
            Kind::Convergence => "convergence",
            Kind::Hosts => "hosts",
            Kind::Buffers => "buffers",
            Kind::Layouts => "layouts",
        }
    }

    /// Why the page has no chart of this kind.
    fn absent_reason(self, runs: usize) -> &'static str {
        match self {
            Kind::BsIops | Kind::BsBw => {
                "IOPS and bandwidth by block size: no run has a workload at two or more block sizes"
            }
            Kind::Orion => {
                "IOPS and latency by outstanding IO: no run sweeps threads or iodepth outside a \
                 block-size table (the mixes suite does)"
            }
            Kind::Latency => "latency percentiles: no result has latencies",
            Kind::TimeSeries => "time series: no result has per-interval samples",
            Kind::Compare if runs < 2 => "runs compared: needs two or more runs",
            Kind::Compare => "runs compared: the runs share no workload",
            Kind::Convergence => {
                "steady-state convergence: no run went in rounds (the snia-iops, snia-latency and \
                 snia-throughput suites do)"
            }
            Kind::Scaling => {
                "scaling: needs two or more runs with a numeric run parameter that differs \
                 (e.g. --param disks=4)"
            }
            Kind::Hosts => "hosts over time: no run ran on many hosts (under MPI)",
            Kind::Buffers => {
                "transactions by buffer size: no database run measured two or more --buffer-ratio values"
            }
            Kind::Layouts => {
                "arrays by member count and chunk: the layout sweep tried one member count and one chunk (sweep --layout … --members 2,4 or --chunk 64k,512k)"
            }
        }
    }
}

/// One chart: its SVG, what it shows, and the run it belongs to (`None` for charts across runs).
#[derive(Clone, Debug)]
pub struct Chart {
    pub kind: Kind,
    pub run: Option<usize>,
    pub title: String,
    pub svg: String,
    pub caption: String,
    /// Unique within the report: the figure's HTML id and its file name without `.svg`.
    pub slug: String,
}

impl Chart {
    fn new(kind: Kind, run: Option<usize>, title: String, svg: String, caption: &str) -> Chart {
        Chart {
            kind,
            run,
            title,
            svg,
            caption: caption.to_string(),
            slug: String::new(),
        }
    }
}

/// A finished report.
pub struct Report {
    pub html: String,
    pub charts: Vec<Chart>,
    /// One entry per chart kind that is absent or drawn only in part, saying why.
    pub absent: Vec<String>,
}

/// Builds the report of `runs`, in the order given.
pub fn build(runs: &[Input]) -> Report {
    let mut charts = Vec::new();
    let mut omitted = Vec::new();
    if runs.len() >= 2 {
        charts.extend(across::compare_charts(runs));
        charts.extend(across::scaling_charts(runs));
        charts.extend(across::layout_charts(runs));
    }
    for (n, input) in runs.iter().enumerate() {
        let prefix = if runs.len() > 1 {
            format!("{}: ", input.name)
        } else {
            String::new()
        };
        let (c, o) = figures::run_charts(n, input, &prefix);
        charts.extend(c);
        omitted.push(o);
    }
    for (i, c) in charts.iter_mut().enumerate() {
        c.slug = format!("{:02}-{}-{}", i + 1, c.kind.id(), slugify(&c.title));
    }
    let lat: usize = omitted.iter().map(|o| o.latency).sum();
    let ts: usize = omitted.iter().map(|o| o.timeseries).sum();
    let mut absent: Vec<String> = Kind::ALL
        .iter()
        .filter(|k| !charts.iter().any(|c| c.kind == **k))
        // Left out by a cap rather than for want of data: said below.
        .filter(|k| !(**k == Kind::TimeSeries && ts > 0))
        // Drawn together, absent together: one reason for both.
        .filter(|k| **k != Kind::BsBw)
        // Only a run on many hosts has one; its absence from any other is no news.
        .filter(|k| **k != Kind::Hosts)
        // Only a database run can have one.
        .filter(|k| {
            **k != Kind::Buffers
                || runs.iter().any(|r| {
                    r.doc
                        .results
                        .iter()
                        .any(|x| x.pg.is_some() || x.sysbench.is_some())
                })
        })
        // Only a layout sweep can have one.
        .filter(|k| **k != Kind::Layouts || runs.iter().any(|r| r.doc.params.contains_key(LAYOUT)))
        .map(|k| k.absent_reason(runs.len()).to_string())
        .collect();
    if lat > 0 {
        absent.push(format!(
            "latency percentiles of {lat} more result{} (at most {} lines per run)",
            crate::units::plural(lat),
            figures::LAT_LINES * figures::LAT_CHARTS
        ));
    }
    if ts > 0 {
        absent.push(format!(
            "time series of {ts} result{} without stalls (drawn for every result only in runs of up to {})",
            crate::units::plural(ts),
            figures::TS_ALL_UP_TO
        ));
    }
    let html = html::page(runs, &charts, &absent);
    Report {
        html,
        charts,
        absent,
    }
}

/// Lower-case letters and digits joined by single dashes, at most 60 bytes: safe in an HTML id
/// and a file name on any system.
fn slugify(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    out.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests;
