//! Line charts: one line per series against a shared x axis, with an optional right-hand axis
//! (dashed lines), shaded vertical bands (stalls) and marked points ("plateau starts here"),
//! drawn by `annotate`.
//! This one type draws five of the report's figures: metric against block size, IOPS and
//! latency against outstanding IO, latency percentiles, time series and scaling curves.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::annotate::{draw_bands, draw_mark, Band, Mark};
use crate::frame::{Frame, LegendEntry, Rect, Swatch, XSpec, YSpec};
use crate::scale::{resolve, Axis, Resolved};
use crate::style;
use crate::svg::{escape, num, Svg};

/// Series with at most this many drawable points get a marker at each point; denser ones (time
/// series) are drawn as bare lines, where markers would merge into a smear.
pub const AUTO_MARKER_LIMIT: usize = 60;

/// A series' points in x order, `None` where a point cannot be drawn (the line breaks there).
type Checked = Vec<Option<(f64, f64)>>;

/// One line: a label for the legend and `(x, y)` points.
///
/// Points are drawn in order of x. A point with a non-finite coordinate, or one that has no place
/// on a log or percentile axis (zero or negative; 100 or more on a percentile axis), is not
/// drawn: the line breaks there rather than bridging the gap, and the chart's footnote counts
/// such points.
#[derive(Clone, Debug)]
pub struct Series {
    label: String,
    points: Vec<(f64, f64)>,
    right: bool,
    markers: Option<bool>,
}

impl Series {
    /// A series on the left axis; `points` are `(x, y)` in data units (bytes, percent, ...).
    pub fn new(label: impl Into<String>, points: impl IntoIterator<Item = (f64, f64)>) -> Series {
        Series {
            label: label.into(),
            points: points.into_iter().collect(),
            right: false,
            markers: None,
        }
    }

    /// Plots this series against the right-hand axis ([`LineChart::y2_axis`]), dashed. In a
    /// chart with a right axis, the n-th left series and the n-th right series share colour and
    /// marker, so "IOPS run A" and "latency run A" read as a pair when added in the same order.
    pub fn right_axis(mut self) -> Series {
        self.right = true;
        self
    }

    /// Forces markers on or off; by default they are drawn when the series has at most
    /// [`AUTO_MARKER_LIMIT`] points.
    pub fn markers(mut self, on: bool) -> Series {
        self.markers = Some(on);
        self
    }
}

/// A line chart, built up and then turned into SVG with [`LineChart::to_svg`].
///
/// ```
/// use iogauge_charts::{format_bytes, Axis, LineChart, Series};
/// let svg = LineChart::new("Random read")
///     .x_axis(Axis::log2("Block size").format(format_bytes))
///     .y_axis(Axis::linear("IOPS").from_zero())
///     .series(Series::new("1 thread", [(512.0, 11307.0), (4096.0, 29158.0)]))
///     .series(Series::new("10 threads", [(512.0, 63751.0), (4096.0, 63088.0)]))
///     .to_svg();
/// assert!(svg.starts_with("<svg"));
/// ```
#[derive(Clone, Debug)]
pub struct LineChart {
    title: String,
    x: Axis,
    y: Axis,
    y2: Option<Axis>,
    series: Vec<Series>,
    bands: Vec<Band>,
    marks: Vec<Mark>,
    sides: (f64, f64),
}

impl LineChart {
    /// An empty chart with untitled linear axes.
    pub fn new(title: impl Into<String>) -> LineChart {
        LineChart {
            title: title.into(),
            x: Axis::linear(""),
            y: Axis::linear(""),
            y2: None,
            series: Vec::new(),
            bands: Vec::new(),
            marks: Vec::new(),
            sides: (0.0, 0.0),
        }
    }

    /// The horizontal axis.
    pub fn x_axis(mut self, axis: Axis) -> LineChart {
        self.x = axis;
        self
    }

    /// The left axis.
    pub fn y_axis(mut self, axis: Axis) -> LineChart {
        self.y = axis;
        self
    }

    /// The right axis, for series added with [`Series::right_axis`]. Without it such series get
    /// an untitled linear right axis.
    pub fn y2_axis(mut self, axis: Axis) -> LineChart {
        self.y2 = Some(axis);
        self
    }

    /// Adds a line; series are styled and listed in the legend in the order added.
    pub fn series(mut self, series: Series) -> LineChart {
        self.series.push(series);
        self
    }

    /// Adds a shaded interval.
    pub fn band(mut self, band: Band) -> LineChart {
        self.bands.push(band);
        self
    }

    /// The least left and right margins in viewBox units (640 wide), so that charts stacked on
    /// one time axis ([`crate::stack`]) put their plots at the same place.
    pub fn margins(mut self, left: f64, right: f64) -> LineChart {
        self.sides = (left, right);
        self
    }

    /// The least and greatest finite x of its lines and bands.
    pub(crate) fn x_extent(&self) -> Option<(f64, f64)> {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(self.bands.iter().flat_map(|b| [b.from, b.to]))
            .filter(|x| x.is_finite())
            .fold(None, |acc, x| match acc {
                None => Some((x, x)),
                Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
            })
    }

    /// Widens the x axis to hold `lo` and `hi`.
    pub(crate) fn x_including(mut self, lo: f64, hi: f64) -> LineChart {
        self.x = self.x.include(lo).include(hi);
        self
    }

    /// Adds a ringed, labelled point.
    pub fn mark(mut self, mark: Mark) -> LineChart {
        self.marks.push(mark);
        self
    }

    /// Renders the chart. Never panics: with nothing drawable it renders empty axes and a
    /// "no data" note.
    pub fn to_svg(&self) -> String {
        let dual = self.series.iter().any(|s| s.right);
        let default_y2 = Axis::linear("");
        let y2_axis = self.y2.as_ref().unwrap_or(&default_y2);
        let axis_for = |right: bool| if right && dual { y2_axis } else { &self.y };

        let (lines, skipped) = self.checked_points(axis_for);
        let drawable = |right: bool| {
            self.series
                .iter()
                .zip(&lines)
                .filter(move |(s, _)| s.right == right)
                .flat_map(|(_, l)| l.iter().flatten().copied())
        };
        let marks: Vec<&Mark> = self
            .marks
            .iter()
            .filter(|m| self.x.scale.forward(m.x).is_some() && self.y.scale.forward(m.y).is_some())
            .collect();
        let has_data = drawable(false).chain(drawable(true)).next().is_some();

        let band_edges = self
            .bands
            .iter()
            .flat_map(|b| [b.from, b.to])
            .filter(|v| v.is_finite());
        let xs = drawable(false)
            .chain(drawable(true))
            .map(|p| p.0)
            .chain(marks.iter().map(|m| m.x))
            .chain(band_edges);
        let x_res = if has_data {
            resolve(&self.x, xs, 7)
        } else {
            None
        };
        let y_res = resolve(
            &self.y,
            drawable(false)
                .map(|p| p.1)
                .chain(marks.iter().map(|m| m.y)),
            6,
        );
        let y2_res = if dual {
            resolve(y2_axis, drawable(true).map(|p| p.1), 6)
        } else {
            None
        };

        let frac_ticks = |r: &Option<Resolved>| -> Vec<(f64, String)> {
            r.as_ref()
                .map(|r| {
                    r.ticks
                        .iter()
                        .map(|(t, l)| (r.px(*t, 0.0, 1.0), l.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        let notes = notes(&skipped, self.marks.len() - marks.len());
        let pens = self.pens(dual);
        let legend = self.legend(&lines, &pens);

        let frame = Frame {
            title: self.title.clone(),
            x_title: self.x.title.clone(),
            x: XSpec::Continuous(frac_ticks(&x_res)),
            y: YSpec {
                title: self.y.title.clone(),
                ticks: frac_ticks(&y_res),
            },
            y2: dual.then(|| YSpec {
                title: y2_axis.title.clone(),
                ticks: frac_ticks(&y2_res),
            }),
            legend,
            notes,
            no_data: x_res.is_none(),
            sides: self.sides,
        };
        frame.render(|svg, plot| {
            let Some(xr) = &x_res else { return };
            draw_bands(svg, plot, xr, &self.bands);
            let mut drawn = Vec::new();
            for (i, (s, pts)) in self.series.iter().zip(&lines).enumerate() {
                let yr = if s.right { &y2_res } else { &y_res };
                if let Some(yr) = yr {
                    let axes = (xr, yr, axis_for(s.right));
                    drawn.push(self.draw_series(svg, plot, axes, s, pts, pens[i]));
                }
            }
            if let Some(yr) = &y_res {
                // Labels already placed, so the next one goes where it covers none of them.
                let mut placed = Vec::new();
                for m in &marks {
                    draw_mark(svg, plot, xr, yr, m, &drawn, &mut placed);
                }
            }
        })
    }

    /// Each series' points sorted by x, `None` where a point has no place on the axes, and how
    /// many points were left out for each reason.
    fn checked_points<'a>(
        &self,
        axis_for: impl Fn(bool) -> &'a Axis,
    ) -> (Vec<Checked>, BTreeMap<&'static str, usize>) {
        let mut skipped: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut lines = Vec::with_capacity(self.series.len());
        for s in &self.series {
            let ya = axis_for(s.right);
            let mut pts = s.points.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut checked = Vec::with_capacity(pts.len());
            for (x, y) in pts {
                let why = if self.x.scale.forward(x).is_none() {
                    Some(self.x.scale.rejection(x))
                } else if ya.scale.forward(y).is_none() {
                    Some(ya.scale.rejection(y))
                } else {
                    None
                };
                match why {
                    Some(why) => {
                        *skipped.entry(why).or_default() += 1;
                        checked.push(None);
                    }
                    None => checked.push(Some((x, y))),
                }
            }
            lines.push(checked);
        }
        (lines, skipped)
    }

    /// Style index and dash pattern of each series. Indices count left and right series
    /// separately so that pairs match; in a dual-axis chart left lines are solid.
    fn pens(&self, dual: bool) -> Vec<(usize, &'static str)> {
        let (mut n_left, mut n_right) = (0, 0);
        self.series
            .iter()
            .map(|s| {
                let counter = if s.right { &mut n_right } else { &mut n_left };
                let k = *counter;
                *counter += 1;
                let dash = if dual && !s.right {
                    ""
                } else {
                    style::dash(k, s.right)
                };
                (k, dash)
            })
            .collect()
    }

    fn legend(&self, lines: &[Checked], pens: &[(usize, &'static str)]) -> Vec<LegendEntry> {
        self.series
            .iter()
            .zip(lines)
            .zip(pens)
            .map(|((s, l), &(k, dash))| {
                let n = l.iter().flatten().count();
                LegendEntry {
                    label: if n == 0 {
                        format!("{} (no data)", s.label)
                    } else {
                        s.label.clone()
                    },
                    swatch: Swatch::Line {
                        color: style::color(k),
                        dash,
                        marker: self.markers_on(s, n).then(|| style::marker(k)),
                    },
                }
            })
            .collect()
    }

    fn markers_on(&self, s: &Series, drawable: usize) -> bool {
        s.markers.unwrap_or(drawable <= AUTO_MARKER_LIMIT)
    }

    /// Draws one series and returns its points in pixels. `axes` is the resolved x, the
    /// resolved y and the y [`Axis`] (for tooltip labels); then the style index and dash.
    fn draw_series(
        &self,
        svg: &mut Svg,
        plot: Rect,
        (xr, yr, y_axis): (&Resolved, &Resolved, &Axis),
        s: &Series,
        pts: &[Option<(f64, f64)>],
        (k, dash): (usize, &str),
    ) -> Checked {
        let color = style::color(k);
        let to_px = |(x, y): (f64, f64)| -> Option<(f64, f64)> {
            Some((
                xr.map(x, plot.x, plot.right())?,
                yr.map(y, plot.bottom(), plot.y)?,
            ))
        };
        let px: Checked = pts.iter().map(|p| p.and_then(to_px)).collect();
        let n = px.iter().flatten().count();
        if n == 0 {
            return px;
        }
        let markers = self.markers_on(s, n);
        let mut d = String::new();
        let mut isolated = Vec::new();
        for (i, p) in px.iter().enumerate() {
            let Some((x, y)) = p else { continue };
            let starts = i == 0 || px[i - 1].is_none();
            let _ = write!(
                d,
                "{}{} {}",
                if starts { 'M' } else { 'L' },
                num(*x),
                num(*y)
            );
            if starts && px.get(i + 1).copied().flatten().is_none() {
                isolated.push((*x, *y));
            }
        }
        // Round caps suit solid lines; on dashed ones they would fill the gaps of short dashes.
        let cap = if dash.is_empty() { "round" } else { "butt" };
        svg.raw(&format!(
            r#"<path class="series" d="{d}" fill="none" stroke="{color}" stroke-width="2.2" stroke-linejoin="round" stroke-linecap="{cap}"{}/>"#,
            style::dash_attr(dash)
        ));
        if markers {
            let mut out = String::new();
            let label = escape(&s.label);
            for (p, raw) in px.iter().zip(pts) {
                let (Some((x, y)), Some((dx, dy))) = (p, raw) else {
                    continue;
                };
                let tip = format!(
                    "{label}: {}, {}",
                    escape(&self.x.label(*dx)),
                    escape(&y_axis.label(*dy))
                );
                style::draw_marker(&mut out, style::marker(k), *x, *y, color, "marker", &tip);
            }
            svg.raw(&out);
        } else {
            // A point with no neighbour makes no visible line; give it a dot.
            for (x, y) in isolated {
                svg.raw(&format!(
                    r#"<circle class="dot" cx="{}" cy="{}" r="2" fill="{color}"/>"#,
                    num(x),
                    num(y)
                ));
            }
        }
        px
    }
}

/// Footnotes saying what was left out and why.
fn notes(skipped: &BTreeMap<&'static str, usize>, dropped_marks: usize) -> Vec<String> {
    let mut notes: Vec<String> = skipped
        .iter()
        .map(|(why, n)| {
            let s = if *n == 1 { "point" } else { "points" };
            format!("{n} {s} not drawn: {why}.")
        })
        .collect();
    if dropped_marks > 0 {
        notes.push(format!(
            "{dropped_marks} marked point(s) not drawn: no place on the axes."
        ));
    }
    notes
}
