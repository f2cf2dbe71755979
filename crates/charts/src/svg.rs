//! Writing SVG text: XML escaping, compact coordinates and the handful of elements the charts
//! draw. Everything is inline attributes: a `<style>` element inside inline SVG would leak into
//! the HTML report around it, and an `id` could collide with another chart's.

use std::fmt::Write;

/// Escapes text for XML content and attribute values. Control characters that XML 1.0 forbids
/// are dropped, since a single one makes the whole report unreadable to an XML parser.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with at most two decimals: enough for any screen, and it keeps the output small.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_string();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Estimated width of `s` in `system-ui` at `size` px. Average glyphs are about 0.55 em wide;
/// 0.6 errs towards more room, which only costs a little whitespace.
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// Where a text's x coordinate sits relative to the text.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn as_str(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

pub(crate) const INK: &str = "#222222";
pub(crate) const GRID: &str = "#dddddd";

/// An SVG document being written.
pub(crate) struct Svg {
    buf: String,
}

impl Svg {
    /// Opens the root element. The width follows the page and the height the aspect ratio, so
    /// the chart shrinks onto a phone screen and prints at the page width.
    pub(crate) fn new(width: f64, height: f64, title: &str) -> Svg {
        let mut buf = String::with_capacity(8192);
        let t = escape(title);
        let _ = write!(
            buf,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="100%" preserveAspectRatio="xMidYMid meet" role="img" aria-label="{t}" font-family="system-ui, sans-serif">"#,
            num(width),
            num(height)
        );
        let _ = write!(buf, "<title>{t}</title>");
        // A white background keeps the chart readable when the page around it is dark.
        let _ = write!(
            buf,
            r##"<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>"##,
            num(width),
            num(height)
        );
        Svg { buf }
    }

    pub(crate) fn finish(mut self) -> String {
        self.buf.push_str("</svg>\n");
        self.buf
    }

    /// Appends markup the caller has already escaped.
    pub(crate) fn raw(&mut self, s: &str) {
        self.buf.push_str(s);
    }

    pub(crate) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = write!(
            self.buf,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{}"/>"#,
            num(x1),
            num(y1),
            num(x2),
            num(y2),
            num(width)
        );
    }

    /// Writes text; `extra` is appended to the attributes verbatim (already escaped).
    pub(crate) fn text(&mut self, x: f64, y: f64, s: &str, size: f64, anchor: Anchor, extra: &str) {
        let _ = write!(
            self.buf,
            r#"<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{INK}"{}{}>{}</text>"#,
            num(x),
            num(y),
            num(size),
            anchor.as_str(),
            if extra.is_empty() { "" } else { " " },
            extra,
            escape(s)
        );
    }
}

/// Splits `s` at spaces into lines no wider than `max_width`; a single word wider than that
/// gets a line of its own rather than being cut.
pub(crate) fn wrap(s: &str, size: f64, max_width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in s.split_whitespace() {
        let candidate = if current.is_empty() {
            word.to_string()
        } else {
            format!("{current} {word}")
        };
        if text_width(&candidate, size) <= max_width || current.is_empty() {
            current = candidate;
        } else {
            lines.push(std::mem::take(&mut current));
            current = word.to_string();
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_the_five_xml_specials() {
        assert_eq!(escape(r#"a&b<c>d"e'f"#), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
    }

    #[test]
    fn escape_drops_forbidden_control_characters() {
        assert_eq!(escape("a\u{0}b\u{1b}c\nd"), "abc d");
    }

    #[test]
    fn num_is_compact() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.256), "1.26");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(f64::NAN), "0");
    }

    #[test]
    fn wrap_respects_the_width() {
        let lines = wrap("random read IOPS against block size", 10.0, 100.0);
        assert!(lines.len() > 1);
        for l in &lines {
            assert!(text_width(l, 10.0) <= 100.0, "{l}");
        }
        assert_eq!(lines.join(" "), "random read IOPS against block size");
    }
}
