//! Small, self-contained SVG charts for iogauge's HTML reports.
//!
//! Each chart is a builder that ends in `to_svg()`, which returns one `<svg>` element ready to be
//! pasted inline into a page: no scripts, no external fonts or stylesheets, no `id`s that could
//! clash with another chart. The viewBox is fixed and the width is `100%` with no height, so a
//! chart shrinks onto a phone screen and prints at page width. Series differ in colour
//! (Okabe–Ito, colour-blind safe) and also in dash pattern, marker or hatch, so a black and white
//! print still tells them apart.
//!
//! The figures of the seed studies map onto two types:
//!
//! | figure | how |
//! |---|---|
//! | IOPS or bandwidth against block size, a line per thread count | [`LineChart`], x [`Axis::log2`] with [`format_bytes`] |
//! | IOPS and latency against outstanding IO (Orion) | [`LineChart`] with [`LineChart::y2_axis`] and [`Series::right_axis`] |
//! | latency percentiles, a line per run | [`LineChart`], x [`Axis::nines`], y [`Axis::log10`] |
//! | a metric against time with stalls shaded | [`LineChart`] with [`Band`]s |
//! | runs × workloads with confidence intervals | [`BarChart`] with [`Bar::ci`] |
//! | scaling with the number of disks, plateau marked | [`LineChart`] with a [`Mark`] |
//! | hosts of a run under MPI over time | [`HeatMap`], a row per host |
//! | a database and its devices on one time axis, checkpoints shaded | [`stack`] of [`LineChart`]s with [`Band`]s |
//!
//! Bad input never panics: non-finite values, and values that have no place on a log or
//! percentile axis (zero, negative, p ≥ 100), are left out and counted in a footnote; a chart
//! with nothing to draw says "no data"; a single point or all-equal values get a padded range;
//! all text is escaped for XML.
//!
//! ```
//! use iogauge_charts::{format_bytes, Axis, LineChart, Series};
//! let svg = LineChart::new("Random read, RAID0 of 12 SSDs")
//!     .x_axis(Axis::log2("Block size").format(format_bytes))
//!     .y_axis(Axis::linear("IOPS").from_zero())
//!     .series(Series::new("1 thread", [(512.0, 11307.0), (8192.0, 30170.0), (65536.0, 13589.0)]))
//!     .to_svg();
//! assert!(svg.contains("viewBox"));
//! ```
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests

mod annotate;
mod bar;
mod format;
mod frame;
mod heat;
mod line;
mod scale;
mod stack;
mod style;
mod svg;

pub use annotate::{Band, Mark};
pub use bar::{Bar, BarChart, BarSeries};
pub use format::{format_bytes, format_percentile, format_si};
pub use heat::{HeatMap, HeatRow};
pub use line::{LineChart, Series, AUTO_MARKER_LIMIT};
pub use scale::{Axis, Scale};
pub use stack::stack;
pub use svg::escape;
