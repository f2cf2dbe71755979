//! What a line chart draws on top of its data: shaded bands for intervals such as stalls, and
//! ringed, labelled points such as "plateau starts here". Labels are placed where they cover the
//! fewest drawn lines.

use crate::frame::{Rect, SMALL_FONT};
use crate::scale::Resolved;
use crate::svg::{escape, num, text_width, Anchor, Svg, INK};

/// A shaded vertical band from x `from` to x `to`, labelled at its top; for stalls or phases.
/// Bands widen the x range to show themselves; an edge that has no place on a log axis is drawn
/// at the axis end.
#[derive(Clone, Debug)]
pub struct Band {
    pub(crate) from: f64,
    pub(crate) to: f64,
    pub(crate) label: String,
}

impl Band {
    /// A band between two x values, in either order.
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
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) label: String,
}

impl Mark {
    /// A mark at `(x, y)` in data units of the x axis and the left y axis.
    pub fn new(x: f64, y: f64, label: impl Into<String>) -> Mark {
        Mark {
            x,
            y,
            label: label.into(),
        }
    }
}

/// Shades each band across the plot height, dashed at its edges, with its label at the top.
pub(crate) fn draw_bands(svg: &mut Svg, plot: Rect, xr: &Resolved, bands: &[Band]) {
    // Labels go on the first of three rows where they do not run into an earlier one.
    let mut row_ends = [f64::NEG_INFINITY; 3];
    for b in bands {
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
        svg.text(
            lx,
            ly,
            &b.label,
            SMALL_FONT,
            Anchor::Start,
            BAND_LABEL_ATTRS,
        );
    }
}

/// A white outline behind the letters keeps a label legible where it crosses a line.
const BAND_LABEL_ATTRS: &str =
    r##"class="band-label" paint-order="stroke" stroke="#ffffff" stroke-width="3""##;

/// Rings the marked point and puts its label on whichever side of it crosses the fewest drawn
/// lines and covers no label placed before (`placed`: their boxes, x0, y0, x1, y1 in pixels);
/// `drawn` holds each series' points in pixels.
pub(crate) fn draw_mark(
    svg: &mut Svg,
    plot: Rect,
    xr: &Resolved,
    yr: &Resolved,
    m: &Mark,
    drawn: &[Vec<Option<(f64, f64)>>],
    placed: &mut Vec<(f64, f64, f64, f64)>,
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
    let bounds = |&(lx, ly, anchor): &(f64, f64, Anchor)| {
        let x0 = if matches!(anchor, Anchor::End) {
            lx - w
        } else {
            lx
        };
        (x0, ly - size, x0 + w, ly + 3.0)
    };
    let cost = |c: &(f64, f64, Anchor)| -> usize {
        let (x0, y0, x1, y1) = bounds(c);
        let outside = x0 < plot.x || x1 > plot.right() || y0 < plot.y || y1 > plot.bottom();
        let crossings = samples
            .iter()
            .filter(|(sx, sy)| {
                *sx >= x0 - 2.0 && *sx <= x1 + 2.0 && *sy >= y0 - 2.0 && *sy <= y1 + 2.0
            })
            .count();
        let covers = placed
            .iter()
            .filter(|(a0, b0, a1, b1)| x0 < *a1 && *a0 < x1 && y0 < *b1 && *b0 < y1)
            .count();
        crossings + covers * 1_000 + if outside { 10_000 } else { 0 }
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
    placed.push(bounds(&best));
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
