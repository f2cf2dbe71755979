//! Line charts: one line per series against a shared x axis, with an optional right-hand axis
//! (dashed lines), shaded vertical bands (stalls) and marked points ("plateau starts here").
//! This one type draws five of the report's figures: metric against block size, IOPS and
//! latency against outstanding IO, latency percentiles, time series and scaling curves.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::frame::{Frame, LegendEntry, Rect, Swatch, XSpec, YSpec, SMALL_FONT};
use crate::scale::{resolve, Axis, Resolved};
use crate::style;
use crate::svg::{escape, num, text_width, Anchor, Svg, INK};

/// Series with at most this many drawable points get a marker at each point; denser ones (time
/// series) are drawn as bare lines, where markers would merge into a smear.
pub const AUTO_MARKER_LIMIT: usize = 60;

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

/// A shaded vertical band from x `from` to x `to`, labelled at its top; for stalls or phases.
/// Bands widen the x range to show themselves; an edge that has no place on a log axis is drawn
/// at the axis end.
#[derive(Clone, Debug)]
pub struct Band {
    from: f64,
    to: f64,
    label: String,
}

impl Band {
    pub fn new(from: f64, to: f64, label: impl Into<String>) -> Band {
        Band {
            from,
            to,
            label: label.into(),
        }
    }
}

/// A ringed point with a label, on the left axis: "plateau starts here".
#[derive(Clone, Debug)]
pub struct Mark {
    x: f64,
    y: f64,
    label: String,
}

impl Mark {
    pub fn new(x: f64, y: f64, label: impl Into<String>) -> Mark {
        Mark {
            x,
            y,
            label: label.into(),
        }
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
}

impl LineChart {
    pub fn new(title: impl Into<String>) -> LineChart {
        LineChart {
            title: title.into(),
            x: Axis::linear(""),
            y: Axis::linear(""),
            y2: None,
            series: Vec::new(),
            bands: Vec::new(),
            marks: Vec::new(),
        }
    }

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

    pub fn series(mut self, series: Series) -> LineChart {
        self.series.push(series);
        self
    }

    pub fn band(mut self, band: Band) -> LineChart {
        self.bands.push(band);
        self
    }

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

        // Sorted points, with None where a point cannot be drawn.
        let mut skipped: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut lines: Vec<Vec<Option<(f64, f64)>>> = Vec::with_capacity(self.series.len());
        for s in &self.series {
            let ya = axis_for(s.right);
            let mut pts = s.points.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mapped = pts
                .iter()
                .map(
                    |&(x, y)| match (self.x.scale.forward(x), ya.scale.forward(y)) {
                        (Some(_), Some(_)) => Some((x, y)),
                        (None, _) => {
                            *skipped.entry(self.x.scale.rejection(x)).or_default() += 1;
                            None
                        }
                        (_, None) => {
                            *skipped.entry(ya.scale.rejection(y)).or_default() += 1;
                            None
                        }
                    },
                )
                .collect();
            lines.push(mapped);
        }
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
        let mut notes: Vec<String> = skipped
            .iter()
            .map(|(why, n)| {
                let s = if *n == 1 { "point" } else { "points" };
                format!("{n} {s} not drawn: {why}.")
            })
            .collect();
        let dropped_marks = self.marks.len() - marks.len();
        if dropped_marks > 0 {
            notes.push(format!(
                "{dropped_marks} marked point(s) not drawn: no place on the axes."
            ));
        }

        let (mut n_left, mut n_right) = (0, 0);
        let styles: Vec<(usize, &'static str)> = self
            .series
            .iter()
            .map(|s| {
                let counter = if s.right { &mut n_right } else { &mut n_left };
                let k = *counter;
                *counter += 1;
                let d = if dual && !s.right {
                    ""
                } else {
                    style::dash(k, s.right)
                };
                (k, d)
            })
            .collect();
        let legend = self
            .series
            .iter()
            .zip(&lines)
            .zip(&styles)
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
            .collect();

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
        };
        frame.render(|svg, plot| {
            let Some(xr) = &x_res else { return };
            self.draw_bands(svg, plot, xr);
            let mut drawn = Vec::new();
            for (i, (s, pts)) in self.series.iter().zip(&lines).enumerate() {
                let yr = if s.right { &y2_res } else { &y_res };
                if let Some(yr) = yr {
                    let axes = (xr, yr, axis_for(s.right));
                    drawn.push(self.draw_series(svg, plot, axes, s, pts, styles[i]));
                }
            }
            if let Some(yr) = &y_res {
                for m in &marks {
                    draw_mark(svg, plot, xr, yr, m, &drawn);
                }
            }
        })
    }

    fn markers_on(&self, s: &Series, drawable: usize) -> bool {
        s.markers.unwrap_or(drawable <= AUTO_MARKER_LIMIT)
    }

    /// Draws one series; `axes` is the resolved x, the resolved y and the y [`Axis`] (for
    /// tooltip labels), `pen` the style index and dash pattern.
    fn draw_series(
        &self,
        svg: &mut Svg,
        plot: Rect,
        (xr, yr, y_axis): (&Resolved, &Resolved, &Axis),
        s: &Series,
        pts: &[Option<(f64, f64)>],
        (k, dash): (usize, &str),
    ) -> Vec<Option<(f64, f64)>> {
        let color = style::color(k);
        let to_px = |(x, y): (f64, f64)| -> Option<(f64, f64)> {
            Some((
                xr.map(x, plot.x, plot.right())?,
                yr.map(y, plot.bottom(), plot.y)?,
            ))
        };
        let px: Vec<Option<(f64, f64)>> = pts.iter().map(|p| p.and_then(to_px)).collect();
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

    fn draw_bands(&self, svg: &mut Svg, plot: Rect, xr: &Resolved) {
        // Labels go on the first of three rows where they do not run into an earlier one.
        let mut row_ends = [f64::NEG_INFINITY; 3];
        for b in &self.bands {
            let (Some(t0), Some(t1)) = (
                xr.scale.forward_clamped(b.from),
                xr.scale.forward_clamped(b.to),
            ) else {
                continue;
            };
            let (t0, t1) = (t0.min(t1), t0.max(t1));
            let x0 = xr.px(t0, plot.x, plot.right());
            let mut x1 = xr.px(t1, plot.x, plot.right());
            // A short stall still deserves a visible sliver.
            if x1 - x0 < 1.5 {
                x1 = (x0 + 1.5).min(plot.right());
            }
            svg.raw(&format!(
                r##"<rect class="band" x="{}" y="{}" width="{}" height="{}" fill="#000000" fill-opacity="0.1"><title>{}</title></rect>"##,
                num(x0),
                num(plot.y),
                num(x1 - x0),
                num(plot.h),
                escape(&b.label)
            ));
            for x in [x0, x1] {
                svg.raw(&format!(
                    r##"<line class="band-edge" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#666666" stroke-width="1" stroke-dasharray="3 3"/>"##,
                    num(x),
                    num(plot.y),
                    num(x),
                    num(plot.bottom())
                ));
            }
            if b.label.is_empty() {
                continue;
            }
            let w = text_width(&b.label, SMALL_FONT);
            // Keep the label inside the plot even when the band hugs the right edge.
            let lx = (x0 + 3.0).min(plot.right() - w - 2.0).max(plot.x + 2.0);
            let row = row_ends.iter().position(|&end| lx > end + 4.0).unwrap_or(0);
            row_ends[row] = lx + w;
            let ly = plot.y + SMALL_FONT + 2.0 + row as f64 * (SMALL_FONT + 3.0);
            svg.text(lx, ly, &b.label, SMALL_FONT, Anchor::Start, HALO_CLASS_BAND);
        }
    }
}

const HALO_CLASS_BAND: &str =
    r##"class="band-label" paint-order="stroke" stroke="#ffffff" stroke-width="3""##;

/// Rings the marked point and puts its label on whichever side of it crosses the fewest drawn
/// lines; `drawn` holds each series' points in pixels.
fn draw_mark(
    svg: &mut Svg,
    plot: Rect,
    xr: &Resolved,
    yr: &Resolved,
    m: &Mark,
    drawn: &[Vec<Option<(f64, f64)>>],
) {
    let (Some(x), Some(y)) = (
        xr.map(m.x, plot.x, plot.right()),
        yr.map(m.y, plot.bottom(), plot.y),
    ) else {
        return;
    };
    svg.raw(&format!(
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{INK}" stroke-width="1" stroke-dasharray="2 3"/>"#,
        num(x),
        num(y + 8.0),
        num(x),
        num(plot.bottom())
    ));
    svg.raw(&format!(
        r#"<circle class="mark" cx="{}" cy="{}" r="8" fill="none" stroke="{INK}" stroke-width="1.5"><title>{}</title></circle>"#,
        num(x),
        num(y),
        escape(&m.label)
    ));
    if m.label.is_empty() {
        return;
    }
    let size = SMALL_FONT + 1.0;
    let w = text_width(&m.label, size);
    // Baseline positions: above right, above left, below right, below left.
    let candidates = [
        (x + 12.0, y - 14.0, Anchor::Start),
        (x - 12.0, y - 14.0, Anchor::End),
        (x + 12.0, y + 14.0 + size, Anchor::Start),
        (x - 12.0, y + 14.0 + size, Anchor::End),
    ];
    let samples: Vec<(f64, f64)> = drawn.iter().flat_map(|line| line_samples(line)).collect();
    let cost = |&(lx, ly, anchor): &(f64, f64, Anchor)| -> usize {
        let x0 = if matches!(anchor, Anchor::End) {
            lx - w
        } else {
            lx
        };
        let (x1, y0, y1) = (x0 + w, ly - size, ly + 3.0);
        let outside = x0 < plot.x || x1 > plot.right() || y0 < plot.y || y1 > plot.bottom();
        let crossings = samples
            .iter()
            .filter(|(sx, sy)| {
                *sx >= x0 - 2.0 && *sx <= x1 + 2.0 && *sy >= y0 - 2.0 && *sy <= y1 + 2.0
            })
            .count();
        crossings + if outside { 10_000 } else { 0 }
    };
    let mut best = candidates[0];
    let mut best_cost = usize::MAX;
    for c in &candidates {
        let k = cost(c);
        if k < best_cost {
            best = *c;
            best_cost = k;
        }
    }
    let (lx, ly, anchor) = best;
    svg.text(
        lx,
        ly,
        &m.label,
        size,
        anchor,
        r##"class="mark-label" font-weight="600" paint-order="stroke" stroke="#ffffff" stroke-width="3""##,
    );
}

/// Points every few pixels along a drawn line, to tell how many lines a label would cover.
fn line_samples(line: &[Option<(f64, f64)>]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for w in line.windows(2) {
        if let (Some((ax, ay)), Some((bx, by))) = (w[0], w[1]) {
            let steps = (((bx - ax).hypot(by - ay) / 3.0).ceil() as usize).clamp(1, 400);
            for i in 0..=steps {
                let f = i as f64 / steps as f64;
                out.push((ax + f * (bx - ax), ay + f * (by - ay)));
            }
        }
    }
    out.extend(line.iter().flatten().copied());
    out
}
