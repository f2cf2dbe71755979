//! Charts as PNG files, for a blog post or a ticket: the report's SVG rendered by resvg with the
//! system's fonts, at twice the SVG's own size so text stays sharp.

use anyhow::{anyhow, Result};
use std::sync::OnceLock;

/// Fonts are loaded once per process: scanning the system's fonts takes tens of milliseconds.
fn options() -> &'static resvg::usvg::Options<'static> {
    static OPTIONS: OnceLock<resvg::usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut opt = resvg::usvg::Options::default();
        let db = opt.fontdb_mut();
        db.load_system_fonts();
        // The charts ask for system-ui, then sans-serif; point the generic name at a sans face
        // the machine really has.
        let families: Vec<String> = db
            .faces()
            .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
            .collect();
        if let Some(sans) = [
            "DejaVu Sans",
            "Liberation Sans",
            "Noto Sans",
            "Arial",
            "Helvetica",
        ]
        .iter()
        .find(|want| families.iter().any(|f| f == *want))
        {
            db.set_sans_serif_family(*sans);
            opt.font_family = (*sans).to_string();
        }
        opt
    })
}

/// True when at least one font was found: without fonts a PNG would have no text.
pub fn fonts_available() -> bool {
    !options().fontdb.is_empty()
}

/// Renders one SVG document to PNG bytes.
pub fn render(svg: &str) -> Result<Vec<u8>> {
    let tree = resvg::usvg::Tree::from_str(svg, options())
        .map_err(|e| anyhow!("cannot read the chart's SVG: {e}"))?;
    let scale = 2.0;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil() as u32,
        (size.height() * scale).ceil() as u32,
    );
    let mut pixmap = resvg::tiny_skia::Pixmap::new(w.max(1), h.max(1))
        .ok_or_else(|| anyhow!("chart too large to render ({w}×{h} pixels)"))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| anyhow!("cannot encode the PNG: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_renders_to_a_png_with_ink_on_it() {
        let svg = iogauge_charts::LineChart::new("IOPS by block size")
            .x_axis(iogauge_charts::Axis::log2("Block size"))
            .y_axis(iogauge_charts::Axis::linear("IOPS"))
            .series(iogauge_charts::Series::new(
                "1 thread",
                [(4096.0, 1000.0), (8192.0, 900.0), (65536.0, 400.0)],
            ))
            .to_svg();
        let png = render(&svg).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // Decode it back and count non-white pixels: lines, axes and (with fonts) text.
        let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert!(pixmap.width() >= 600, "rendered at twice the SVG size");
        let inked = pixmap
            .pixels()
            .iter()
            .filter(|p| p.red() < 200 || p.green() < 200 || p.blue() < 200)
            .count();
        let share = inked as f64 / pixmap.pixels().len() as f64;
        assert!(share > 0.005 && share < 0.5, "ink share {share}");
    }

    #[test]
    fn broken_svg_is_an_error_not_a_panic() {
        assert!(render("<svg").is_err());
        assert!(render("not svg at all").is_err());
    }
}
