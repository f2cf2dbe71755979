//! The parts every chart shares: page layout (title, plot area, margins sized to the tick
//! labels), grid, axes with ticks and titles, the legend below the plot, footnotes and the
//! "no data" note. Chart types describe their axes as [`Frame`] and draw their data inside the
//! plot rectangle it hands back.

use crate::style::{self, Hatch, Marker};
use crate::svg::{num, text_width, wrap, Anchor, Svg, GRID, INK};

/// Width of the viewBox. Fonts are sized for it so that, scaled onto a 360 px phone screen,
/// tick labels are still about 7 px.
pub(crate) const WIDTH: f64 = 640.0;
pub(crate) const PLOT_HEIGHT: f64 = 280.0;
pub(crate) const TICK_FONT: f64 = 13.0;
pub(crate) const SMALL_FONT: f64 = 11.5;
const PAD: f64 = 10.0;
const TITLE_FONT: f64 = 17.0;
const AXIS_FONT: f64 = 14.0;
const LEGEND_FONT: f64 = 13.0;
const LEGEND_ROW: f64 = 20.0;
const LEGEND_SWATCH: f64 = 30.0;
/// Category labels wider than their slot are turned by this angle rather than cut.
const SLANT_DEGREES: f64 = 35.0;

/// The plot area in viewBox coordinates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rect {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
}

impl Rect {
    pub(crate) fn right(&self) -> f64 {
        self.x + self.w
    }
    pub(crate) fn bottom(&self) -> f64 {
        self.y + self.h
    }
}

/// What a legend entry shows next to its label.
#[derive(Clone, Debug)]
pub(crate) enum Swatch {
    Line {
        color: &'static str,
        dash: &'static str,
        marker: Option<Marker>,
    },
    Bar {
        color: &'static str,
        hatch: Hatch,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct LegendEntry {
    pub(crate) label: String,
    pub(crate) swatch: Swatch,
}

/// A vertical axis: title and ticks at fractions of the plot height (0 bottom, 1 top).
#[derive(Clone, Debug, Default)]
pub(crate) struct YSpec {
    pub(crate) title: String,
    pub(crate) ticks: Vec<(f64, String)>,
}

/// The horizontal axis: ticks at fractions of the plot width, or one slot per category.
#[derive(Clone, Debug)]
pub(crate) enum XSpec {
    Continuous(Vec<(f64, String)>),
    Categories(Vec<String>),
}

#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub(crate) title: String,
    pub(crate) x_title: String,
    pub(crate) x: XSpec,
    pub(crate) y: YSpec,
    pub(crate) y2: Option<YSpec>,
    pub(crate) legend: Vec<LegendEntry>,
    pub(crate) notes: Vec<String>,
    pub(crate) no_data: bool,
    /// The least left and right margins: panels stacked on one time axis share them, so their
    /// plots line up whatever their tick labels.
    pub(crate) sides: (f64, f64),
}

/// The smallest `k` such that labelling every k-th tick leaves no two labels touching; a steady
/// rhythm reads better than skipping whichever label happens to collide. `placed` holds each
/// label's centre and half width.
fn label_stride(placed: &[(f64, f64)]) -> usize {
    (1..placed.len().max(1))
        .find(|&k| {
            let kept: Vec<&(f64, f64)> = placed.iter().step_by(k).collect();
            kept.windows(2)
                .all(|w| w[1].0 - w[1].1 >= w[0].0 + w[0].1 + 8.0)
        })
        .unwrap_or(placed.len().max(1))
}

fn widest(labels: impl Iterator<Item = impl AsRef<str>>, size: f64) -> f64 {
    labels
        .map(|l| text_width(l.as_ref(), size))
        .fold(0.0, f64::max)
}

impl Frame {
    /// Lays the chart out, lets `draw` paint the data into the plot rectangle (above the grid,
    /// below the axes), and returns the finished SVG.
    pub(crate) fn render(&self, draw: impl FnOnce(&mut Svg, Rect)) -> String {
        let title_lines = wrap(&self.title, TITLE_FONT, WIDTH - 2.0 * PAD);
        let top = PAD + title_lines.len() as f64 * TITLE_FONT * 1.25 + 14.0;
        let plot = self.plot_rect(top);
        let x_labels = self.x_labels(plot);
        let below = self.below(plot, x_labels.height);

        let mut svg = Svg::new(WIDTH, below.height, &self.title);
        for (i, line) in title_lines.iter().enumerate() {
            let y = PAD + TITLE_FONT + i as f64 * TITLE_FONT * 1.25;
            svg.text(
                WIDTH / 2.0,
                y,
                line,
                TITLE_FONT,
                Anchor::Middle,
                r#"font-weight="600""#,
            );
        }

        // Grid first so data is drawn over it.
        for (f, _) in &self.y.ticks {
            let y = plot.bottom() - f * plot.h;
            svg.line(plot.x, y, plot.right(), y, GRID, 1.0);
        }
        if let XSpec::Continuous(ticks) = &self.x {
            for (f, _) in ticks {
                let x = plot.x + f * plot.w;
                svg.line(x, plot.y, x, plot.bottom(), "#eeeeee", 1.0);
            }
        }

        draw(&mut svg, plot);

        if self.no_data {
            svg.text(
                plot.x + plot.w / 2.0,
                plot.y + plot.h / 2.0,
                "no data",
                16.0,
                Anchor::Middle,
                r##"class="no-data" fill-opacity="0.7""##,
            );
        }

        self.axes(&mut svg, plot, &x_labels, below.x_title_base);
        draw_legend(&mut svg, &below.legend_rows, below.legend_top);
        draw_notes(&mut svg, &below.note_lines, below.notes_top);
        svg.finish()
    }

    /// The plot rectangle below the title's `top`: margins wide enough for the y axes' labels
    /// and titles and for the x labels at the plot's edges, at least `sides`.
    fn plot_rect(&self, top: f64) -> Rect {
        let y_label_w = widest(self.y.ticks.iter().map(|t| &t.1), TICK_FONT);
        let y_title_w = if self.y.title.is_empty() {
            0.0
        } else {
            AXIS_FONT + 8.0
        };
        let mut left = PAD + y_title_w + y_label_w + 10.0;
        let mut right = match &self.y2 {
            Some(y2) => {
                let w = widest(y2.ticks.iter().map(|t| &t.1), TICK_FONT);
                let t = if y2.title.is_empty() {
                    0.0
                } else {
                    AXIS_FONT + 8.0
                };
                PAD + t + w + 10.0
            }
            None => PAD + 6.0,
        };
        // The first and last x labels are centred on the plot's edges; leave them room.
        if let XSpec::Continuous(ticks) = &self.x {
            if let Some((f, l)) = ticks.first() {
                if *f <= 0.05 {
                    left = left.max(PAD + text_width(l, TICK_FONT) / 2.0);
                }
            }
            if let Some((f, l)) = ticks.last() {
                if *f >= 0.95 {
                    right = right.max(PAD + text_width(l, TICK_FONT) / 2.0);
                }
            }
        }
        // A slanted first category label runs down and left from its slot's centre.
        if let XSpec::Categories(cats) = &self.x {
            let slot = (WIDTH - left - right) / cats.len().max(1) as f64;
            if widest(cats.iter(), TICK_FONT) > slot - 6.0 {
                let first = cats.first().map_or(0.0, |c| text_width(c, TICK_FONT));
                let reach = first * SLANT_DEGREES.to_radians().cos() - slot / 2.0;
                left = left.max(PAD + reach);
            }
        }
        left = left.max(self.sides.0);
        right = right.max(self.sides.1);
        Rect {
            x: left,
            y: top,
            w: (WIDTH - left - right).max(120.0),
            h: PLOT_HEIGHT,
        }
    }

    /// X labels: thin continuous ones so they do not overlap; slant categories that do not
    /// fit their slot.
    fn x_labels(&self, plot: Rect) -> XLabels {
        let mut x_labels: Vec<(f64, String)> = Vec::new();
        let mut slant = false;
        let mut x_label_h = TICK_FONT + 4.0;
        match &self.x {
            XSpec::Continuous(ticks) => {
                let placed: Vec<(f64, f64)> = ticks
                    .iter()
                    .map(|(f, l)| (plot.x + f * plot.w, text_width(l, TICK_FONT) / 2.0))
                    .collect();
                let stride = label_stride(&placed);
                for (f, label) in ticks.iter().step_by(stride) {
                    x_labels.push((plot.x + f * plot.w, label.clone()));
                }
            }
            XSpec::Categories(cats) => {
                let slot = plot.w / cats.len().max(1) as f64;
                let w = widest(cats.iter(), TICK_FONT);
                slant = w > slot - 6.0;
                if slant {
                    let a = SLANT_DEGREES.to_radians();
                    x_label_h = w * a.sin() + TICK_FONT * a.cos() + 4.0;
                }
                for (i, c) in cats.iter().enumerate() {
                    x_labels.push((plot.x + (i as f64 + 0.5) * slot, c.clone()));
                }
            }
        }
        XLabels {
            at: x_labels,
            slant,
            height: x_label_h,
        }
    }

    /// Where the x title, the legend and the notes go below the plot, and the page's height.
    fn below(&self, plot: Rect, x_label_h: f64) -> Below<'_> {
        let x_labels_bottom = plot.bottom() + 6.0 + x_label_h;
        let x_title_base = x_labels_bottom + AXIS_FONT + 4.0;
        let mut y_cursor = if self.x_title.is_empty() {
            x_labels_bottom
        } else {
            x_title_base + 4.0
        };

        let legend_rows = self.legend_rows(plot.x);
        let legend_top = y_cursor + 10.0;
        if !legend_rows.is_empty() {
            y_cursor = legend_top + legend_rows.len() as f64 * LEGEND_ROW;
        }
        let note_lines: Vec<String> = self
            .notes
            .iter()
            .flat_map(|n| wrap(n, SMALL_FONT, WIDTH - 2.0 * PAD))
            .collect();
        let notes_top = y_cursor + 8.0;
        if !note_lines.is_empty() {
            y_cursor = notes_top + note_lines.len() as f64 * (SMALL_FONT + 4.0);
        }
        let height = (y_cursor + PAD).ceil();
        Below {
            x_title_base,
            legend_rows,
            legend_top,
            note_lines,
            notes_top,
            height,
        }
    }

    /// Axes over the data: both lines, the y axes' ticks and titles, the x labels, ticks and
    /// title.
    fn axes(&self, svg: &mut Svg, plot: Rect, x_labels: &XLabels, x_title_base: f64) {
        svg.line(plot.x, plot.y, plot.x, plot.bottom(), INK, 1.0);
        svg.line(plot.x, plot.bottom(), plot.right(), plot.bottom(), INK, 1.0);
        self.y_axis(svg, plot, &self.y, false);
        if let Some(y2) = &self.y2 {
            svg.line(plot.right(), plot.y, plot.right(), plot.bottom(), INK, 1.0);
            self.y_axis(svg, plot, y2, true);
        }
        let label_top = plot.bottom() + 6.0;
        for (cx, label) in &x_labels.at {
            if x_labels.slant {
                let y = label_top + TICK_FONT * 0.7;
                let rot = format!(
                    r#"transform="rotate(-{SLANT_DEGREES} {} {})""#,
                    num(*cx),
                    num(y)
                );
                svg.text(*cx, y, label, TICK_FONT, Anchor::End, &rot);
            } else {
                svg.text(
                    *cx,
                    label_top + TICK_FONT,
                    label,
                    TICK_FONT,
                    Anchor::Middle,
                    "",
                );
            }
        }
        if let XSpec::Continuous(ticks) = &self.x {
            for (f, _) in ticks {
                let x = plot.x + f * plot.w;
                svg.line(x, plot.bottom(), x, plot.bottom() + 4.0, INK, 1.0);
            }
        }
        if !self.x_title.is_empty() {
            svg.text(
                plot.x + plot.w / 2.0,
                x_title_base,
                &self.x_title,
                AXIS_FONT,
                Anchor::Middle,
                "",
            );
        }
    }

    /// Ticks, labels and the rotated title of a vertical axis on the left or right.
    fn y_axis(&self, svg: &mut Svg, plot: Rect, axis: &YSpec, right: bool) {
        let (edge, dir, anchor) = if right {
            (plot.right(), 1.0, Anchor::Start)
        } else {
            (plot.x, -1.0, Anchor::End)
        };
        let mut widest_label: f64 = 0.0;
        for (f, label) in &axis.ticks {
            let y = plot.bottom() - f * plot.h;
            svg.line(edge, y, edge + dir * 4.0, y, INK, 1.0);
            svg.text(
                edge + dir * 7.0,
                y + TICK_FONT * 0.35,
                label,
                TICK_FONT,
                anchor,
                "",
            );
            widest_label = widest_label.max(text_width(label, TICK_FONT));
        }
        if axis.title.is_empty() {
            return;
        }
        let cy = plot.y + plot.h / 2.0;
        let (x, angle) = if right {
            (edge + 10.0 + widest_label + AXIS_FONT * 0.8, 90)
        } else {
            (edge - 10.0 - widest_label - AXIS_FONT * 0.35, -90)
        };
        let rot = format!(r#"transform="rotate({angle} {} {})""#, num(x), num(cy));
        svg.text(x, cy, &axis.title, AXIS_FONT, Anchor::Middle, &rot);
    }

    /// Packs legend entries into rows no wider than the space right of `left`; returns each
    /// row's entries with their x.
    fn legend_rows(&self, left: f64) -> Vec<Vec<(f64, &LegendEntry)>> {
        let mut rows: Vec<Vec<(f64, &LegendEntry)>> = Vec::new();
        let mut x = left;
        for entry in &self.legend {
            let w = LEGEND_SWATCH + 6.0 + text_width(&entry.label, LEGEND_FONT) + 18.0;
            if rows.is_empty() || (x + w > WIDTH - PAD && x > left) {
                rows.push(Vec::new());
                x = left;
            }
            if let Some(row) = rows.last_mut() {
                row.push((x, entry));
            }
            x += w;
        }
        rows
    }
}
/// The x axis's labels as placed: each one's centre, whether they are slanted, and the height
/// they take below the plot.
struct XLabels {
    at: Vec<(f64, String)>,
    slant: bool,
    height: f64,
}

/// Where the parts below the plot go, top to bottom, and the page's height.
struct Below<'a> {
    x_title_base: f64,
    legend_rows: Vec<Vec<(f64, &'a LegendEntry)>>,
    legend_top: f64,
    note_lines: Vec<String>,
    notes_top: f64,
    height: f64,
}

fn draw_legend(svg: &mut Svg, legend_rows: &[Vec<(f64, &LegendEntry)>], legend_top: f64) {
    for (row, entries) in legend_rows.iter().enumerate() {
        let cy = legend_top + row as f64 * LEGEND_ROW + LEGEND_ROW / 2.0;
        for (x, entry) in entries {
            draw_swatch(svg, *x, cy, &entry.swatch);
            svg.text(
                x + LEGEND_SWATCH + 6.0,
                cy + LEGEND_FONT * 0.35,
                &entry.label,
                LEGEND_FONT,
                Anchor::Start,
                "",
            );
        }
    }
}

fn draw_notes(svg: &mut Svg, note_lines: &[String], notes_top: f64) {
    for (i, line) in note_lines.iter().enumerate() {
        let y = notes_top + SMALL_FONT + i as f64 * (SMALL_FONT + 4.0);
        svg.text(
            PAD,
            y,
            line,
            SMALL_FONT,
            Anchor::Start,
            r#"class="note" font-style="italic""#,
        );
    }
}

fn draw_swatch(svg: &mut Svg, x: f64, cy: f64, swatch: &Swatch) {
    match swatch {
        Swatch::Line {
            color,
            dash,
            marker,
        } => {
            svg.raw(&format!(
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="2.5"{}/>"#,
                num(x),
                num(cy),
                num(x + LEGEND_SWATCH),
                num(cy),
                style::dash_attr(dash)
            ));
            if let Some(m) = marker {
                let mut s = String::new();
                style::draw_marker(
                    &mut s,
                    *m,
                    x + LEGEND_SWATCH / 2.0,
                    cy,
                    color,
                    "legend-marker",
                    "",
                );
                svg.raw(&s);
            }
        }
        Swatch::Bar { color, hatch } => {
            let (bx, by, s) = (x + LEGEND_SWATCH / 2.0 - 8.0, cy - 8.0, 16.0);
            svg.raw(&format!(
                r##"<rect x="{}" y="{}" width="{s}" height="{s}" fill="{color}" stroke="#222222" stroke-width="0.6"/>"##,
                num(bx),
                num(by)
            ));
            let d = style::hatch_path(*hatch, bx, by, s, s);
            if !d.is_empty() {
                svg.raw(&format!(
                    r##"<path d="{d}" stroke="#ffffff" stroke-width="1.5" fill="none"/>"##
                ));
            }
        }
    }
}
