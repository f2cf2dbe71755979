//! Charts stacked on one x axis — a database's transactions above what its devices did, in the
//! same seconds — as one SVG: every panel gets the union of the panels' x ranges and the same
//! margins, so a moment is at the same horizontal place in each.

use crate::frame::WIDTH;
use crate::svg::{num, Svg};
use crate::LineChart;

/// Left and right margins of a stacked panel: room for a y title and labels like "12,500" on
/// either side, so no panel's labels push its plot off the others'.
const SIDE: f64 = 96.0;

/// `panels` from top to bottom under `title`, as one `<svg>`. Panels keep their own titles,
/// legends and y axes; their x axes are made the same.
pub fn stack(title: &str, panels: Vec<LineChart>) -> String {
    let extent = panels.iter().filter_map(LineChart::x_extent).fold(
        None,
        |acc: Option<(f64, f64)>, (lo, hi)| match acc {
            None => Some((lo, hi)),
            Some((a, b)) => Some((a.min(lo), b.max(hi))),
        },
    );
    let drawn: Vec<(String, f64)> = panels
        .into_iter()
        .map(|p| {
            let p = match extent {
                Some((lo, hi)) => p.x_including(lo, hi),
                None => p,
            };
            let svg = p.margins(SIDE, SIDE).to_svg();
            let h = height(&svg);
            (svg, h)
        })
        .collect();
    let total: f64 = drawn.iter().map(|d| d.1).sum();
    let mut out = Svg::new(WIDTH, total, title);
    let mut y = 0.0;
    for (svg, h) in &drawn {
        // The panel's own root element becomes a group moved down to its place.
        let body = svg
            .split_once('>')
            .map_or("", |(_, rest)| rest)
            .trim_end()
            .trim_end_matches("</svg>");
        out.raw(&format!(r#"<g transform="translate(0 {})">"#, num(y)));
        out.raw(body);
        out.raw("</g>");
        y += h;
    }
    out.finish()
}

/// The height of a chart's viewBox ("0 0 640 H").
fn height(svg: &str) -> f64 {
    svg.split_once("viewBox=\"")
        .and_then(|(_, rest)| rest.split('"').next())
        .and_then(|v| v.split_whitespace().nth(3))
        .and_then(|h| h.parse().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Axis, Band, Series};

    #[test]
    fn panels_share_one_time_axis_and_stack_their_heights() {
        let top = LineChart::new("TPS")
            .y_axis(Axis::linear("TPS"))
            .series(Series::new("TPS", [(1.0, 3400.0), (25.0, 3300.0)]))
            .band(Band::new(14.0, 22.0, "checkpoint 1"));
        let bottom = LineChart::new("device")
            .y_axis(Axis::linear("MiB/s"))
            .series(Series::new("loop1", [(5.0, 15.0), (9.0, 16.0)]));
        let hs = [height(&top.to_svg()), height(&bottom.to_svg())];
        let svg = stack("one run", vec![top, bottom]);
        assert_eq!(svg.matches("<svg").count(), 1, "one root element");
        assert!(
            (height(&svg) - hs[0] - hs[1]).abs() < 1.0,
            "{}",
            height(&svg)
        );
        assert!(svg.contains(r#"<g transform="translate(0 "#));
        assert!(svg.contains("checkpoint 1"));
        // The bottom panel's x axis reaches 25 s as the top one's does.
        let bottom_part = svg.rsplit_once("<g transform").unwrap().1;
        assert!(
            bottom_part.contains(">25<") || bottom_part.contains(">24<"),
            "{bottom_part}"
        );
    }
}
