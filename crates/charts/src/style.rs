//! How series tell themselves apart: colour, dash pattern, marker shape and bar hatching. Colours
//! are the Okabe–Ito palette (M. Okabe and K. Ito, "Color Universal Design", 2008), safe for the
//! common forms of colour blindness; dashes, markers and hatches differ as well so that a black
//! and white print still separates the series.

use std::fmt::Write;

use crate::svg::num;

/// Okabe–Ito, reordered so the first colours are the most distinct on white and yellow, the
/// faintest, comes last.
const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// Solid first; the rest differ in rhythm, not only in length, so they survive scaling.
const DASHES: [&str; 6] = ["", "7 4", "2 3", "10 3 2 3", "4 2", "12 3 3 3 3 3"];

/// Dashes for lines on a right-hand axis: all visibly dashed, since "dashed = right axis" is
/// what the reader is told.
const RIGHT_DASHES: [&str; 4] = ["7 4", "2 3", "10 3 2 3", "12 3 3 3 3 3"];

pub(crate) fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

pub(crate) fn dash(i: usize, right_axis: bool) -> &'static str {
    if right_axis {
        RIGHT_DASHES[i % RIGHT_DASHES.len()]
    } else {
        DASHES[i % DASHES.len()]
    }
}

/// ` stroke-dasharray="…"` or nothing for a solid line.
pub(crate) fn dash_attr(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
    HollowCircle,
}

const MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
    Marker::Plus,
    Marker::HollowCircle,
];

pub(crate) fn marker(i: usize) -> Marker {
    MARKERS[i % MARKERS.len()]
}

/// Writes one marker centred on `(x, y)`. `class` lets tests and stylesheets find it;
/// `tooltip` (already escaped) becomes a `<title>` browsers show on hover.
pub(crate) fn draw_marker(
    out: &mut String,
    m: Marker,
    x: f64,
    y: f64,
    color: &str,
    class: &str,
    tooltip: &str,
) {
    let r = 4.0;
    // A white edge keeps overlapping markers apart.
    let filled = format!(r##"fill="{color}" stroke="#ffffff" stroke-width="1""##);
    let stroked = format!(r#"fill="none" stroke="{color}" stroke-width="2""#);
    let (tag, attrs) = match m {
        Marker::Circle => (
            "circle",
            format!(
                r#"cx="{}" cy="{}" r="{}" {filled}"#,
                num(x),
                num(y),
                num(r + 0.5)
            ),
        ),
        Marker::HollowCircle => (
            "circle",
            format!(
                r##"cx="{}" cy="{}" r="{}" fill="#ffffff" stroke="{color}" stroke-width="2""##,
                num(x),
                num(y),
                num(r)
            ),
        ),
        Marker::Square => (
            "rect",
            format!(
                r#"x="{}" y="{}" width="{}" height="{}" {filled}"#,
                num(x - r),
                num(y - r),
                num(2.0 * r),
                num(2.0 * r)
            ),
        ),
        Marker::TriangleUp | Marker::TriangleDown | Marker::Diamond => {
            let s = r * 1.3;
            let pts = match m {
                Marker::TriangleUp => [(0.0, -s), (s, s * 0.8), (-s, s * 0.8)].to_vec(),
                Marker::TriangleDown => [(0.0, s), (s, -s * 0.8), (-s, -s * 0.8)].to_vec(),
                _ => [(0.0, -s), (s, 0.0), (0.0, s), (-s, 0.0)].to_vec(),
            };
            let mut d = String::new();
            for (i, (dx, dy)) in pts.iter().enumerate() {
                let cmd = if i == 0 { 'M' } else { 'L' };
                let _ = write!(d, "{cmd}{} {}", num(x + dx), num(y + dy));
            }
            ("path", format!(r#"d="{d}Z" {filled}"#))
        }
        Marker::Cross | Marker::Plus => {
            let d = if m == Marker::Cross {
                format!(
                    "M{} {}L{} {}M{} {}L{} {}",
                    num(x - r),
                    num(y - r),
                    num(x + r),
                    num(y + r),
                    num(x - r),
                    num(y + r),
                    num(x + r),
                    num(y - r)
                )
            } else {
                let s = r * 1.25;
                format!(
                    "M{} {}L{} {}M{} {}L{} {}",
                    num(x - s),
                    num(y),
                    num(x + s),
                    num(y),
                    num(x),
                    num(y - s),
                    num(x),
                    num(y + s)
                )
            };
            ("path", format!(r#"d="{d}" {stroked}"#))
        }
    };
    if tooltip.is_empty() {
        let _ = write!(out, r#"<{tag} class="{class}" {attrs}/>"#);
    } else {
        let _ = write!(
            out,
            r#"<{tag} class="{class}" {attrs}><title>{tooltip}</title></{tag}>"#
        );
    }
}

/// Bar fills: a colour plus a white hatch, so bars stay apart when printed in grey.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hatch {
    Solid,
    Rising,
    Horizontal,
    Falling,
    Vertical,
    Grid,
}

const HATCHES: [Hatch; 6] = [
    Hatch::Solid,
    Hatch::Rising,
    Hatch::Horizontal,
    Hatch::Falling,
    Hatch::Vertical,
    Hatch::Grid,
];

pub(crate) fn hatch(i: usize) -> Hatch {
    HATCHES[i % HATCHES.len()]
}

/// Path data for the hatch lines inside the rectangle `(x, y, w, h)`. Drawn as plain lines
/// rather than an SVG `<pattern>`, whose `id` could clash with another chart on the same page.
pub(crate) fn hatch_path(h: Hatch, x: f64, y: f64, w: f64, hgt: f64) -> String {
    const GAP: f64 = 6.0;
    let mut d = String::new();
    let (x1, y1) = (x + w, y + hgt);
    let mut seg = |ax: f64, ay: f64, bx: f64, by: f64| {
        let _ = write!(d, "M{} {}L{} {}", num(ax), num(ay), num(bx), num(by));
    };
    if w <= 0.0 || hgt <= 0.0 || !(w * hgt).is_finite() {
        return d;
    }
    let horizontal = matches!(h, Hatch::Horizontal | Hatch::Grid);
    let vertical = matches!(h, Hatch::Vertical | Hatch::Grid);
    if horizontal {
        let mut yy = y + GAP / 2.0;
        while yy < y1 {
            seg(x, yy, x1, yy);
            yy += GAP;
        }
    }
    if vertical {
        let mut xx = x + GAP / 2.0;
        while xx < x1 {
            seg(xx, y, xx, y1);
            xx += GAP;
        }
    }
    // Diagonals at 45°: lines x + y = c (rising, in screen coordinates) or x - y = c (falling),
    // each cut to the rectangle.
    let step = GAP * std::f64::consts::SQRT_2;
    match h {
        Hatch::Rising => {
            let mut c = x + y + step / 2.0;
            while c < x1 + y1 {
                let xa = x.max(c - y1);
                let xb = x1.min(c - y);
                if xb > xa {
                    seg(xa, c - xa, xb, c - xb);
                }
                c += step;
            }
        }
        Hatch::Falling => {
            let mut c = x - y1 + step / 2.0;
            while c < x1 - y {
                let xa = x.max(c + y);
                let xb = x1.min(c + y1);
                if xb > xa {
                    seg(xa, xa - c, xb, xb - c);
                }
                c += step;
            }
        }
        _ => {}
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_series_differ_in_every_channel() {
        for i in 0..6 {
            for j in 0..i {
                assert_ne!(color(i), color(j));
                assert_ne!(dash(i, false), dash(j, false));
                assert_ne!(marker(i), marker(j));
                assert_ne!(hatch(i), hatch(j));
            }
        }
        for i in 0..4 {
            assert!(!dash(i, true).is_empty());
        }
    }

    #[test]
    fn hatch_lines_stay_inside_the_bar() {
        for h in HATCHES {
            let d = hatch_path(h, 10.0, 20.0, 30.0, 50.0);
            if h == Hatch::Solid {
                assert!(d.is_empty());
                continue;
            }
            assert!(d.contains('M'), "{h:?} drew nothing");
            let nums: Vec<f64> = d
                .split(['M', 'L', ' '])
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap())
                .collect();
            for xy in nums.chunks(2) {
                assert!((10.0..=40.0).contains(&xy[0]), "{h:?}: x {}", xy[0]);
                assert!((20.0..=70.0).contains(&xy[1]), "{h:?}: y {}", xy[1]);
            }
        }
    }
}
