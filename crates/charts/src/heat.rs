//! Heat maps: rows × time with each cell's value as a shade, for many hosts at once (a run
//! under MPI: one row per host, one column per interval). One hue from light to dark, so the
//! order of values survives colour blindness and a black and white print; the value of every
//! cell is in its tooltip (`<title>`), and the legend gives the scale's ends.

use std::fmt::Write;

use crate::svg::{escape, num, Anchor, Svg, INK};

const WIDTH: f64 = 800.0;
const ROW: f64 = 22.0;
const LABEL_W: f64 = 150.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;

/// One row: its label and a value per column (non-finite values are left blank).
#[derive(Clone, Debug)]
pub struct HeatRow {
    label: String,
    values: Vec<f64>,
}

impl HeatRow {
    pub fn new(label: impl Into<String>, values: impl IntoIterator<Item = f64>) -> HeatRow {
        HeatRow {
            label: label.into(),
            values: values.into_iter().collect(),
        }
    }
}

/// A heat map of rows over time.
///
/// ```
/// use iogauge_charts::{HeatMap, HeatRow};
/// let svg = HeatMap::new("IOPS per host", "s", "IOPS", 1.0)
///     .row(HeatRow::new("db1", [4000.0, 4100.0, 3900.0]))
///     .row(HeatRow::new("db2", [1000.0, 1010.0, 990.0]))
///     .to_svg();
/// assert!(svg.contains("db2") && svg.contains("<rect"));
/// ```
#[derive(Clone, Debug)]
pub struct HeatMap {
    title: String,
    time_unit: String,
    value_name: String,
    step: f64,
    rows: Vec<HeatRow>,
    format: fn(f64) -> String,
}

impl HeatMap {
    /// `step` is the length of a column in `time_unit`s; `value_name` names the shaded value.
    pub fn new(title: &str, time_unit: &str, value_name: &str, step: f64) -> HeatMap {
        HeatMap {
            title: title.into(),
            time_unit: time_unit.into(),
            value_name: value_name.into(),
            step,
            rows: Vec::new(),
            format: crate::format_si,
        }
    }

    pub fn row(mut self, r: HeatRow) -> HeatMap {
        self.rows.push(r);
        self
    }

    /// How values are written in tooltips and the legend.
    pub fn format(mut self, f: fn(f64) -> String) -> HeatMap {
        self.format = f;
        self
    }

    pub fn to_svg(&self) -> String {
        let cols = self.rows.iter().map(|r| r.values.len()).max().unwrap_or(0);
        let height = TOP + ROW * self.rows.len().max(1) as f64 + BOTTOM;
        let mut svg = Svg::new(WIDTH, height, &self.title);
        svg.text(
            WIDTH / 2.0,
            22.0,
            &self.title,
            15.0,
            Anchor::Middle,
            "font-weight=\"600\"",
        );
        let finite = || {
            self.rows
                .iter()
                .flat_map(|r| r.values.iter().copied())
                .filter(|v| v.is_finite())
        };
        let (lo, hi) = (
            finite().fold(f64::INFINITY, f64::min),
            finite().fold(f64::NEG_INFINITY, f64::max),
        );
        if cols == 0 || !lo.is_finite() {
            svg.text(
                WIDTH / 2.0,
                height / 2.0,
                "no data",
                13.0,
                Anchor::Middle,
                "",
            );
            return svg.finish();
        }
        let plot_w = WIDTH - LABEL_W - 20.0;
        let cell_w = plot_w / cols as f64;
        let span = (hi - lo).max(f64::MIN_POSITIVE);
        for (i, r) in self.rows.iter().enumerate() {
            let y = TOP + i as f64 * ROW;
            svg.text(
                LABEL_W - 6.0,
                y + ROW * 0.68,
                &r.label,
                12.0,
                Anchor::End,
                "",
            );
            for (k, &v) in r.values.iter().enumerate() {
                if !v.is_finite() {
                    continue;
                }
                let x = LABEL_W + k as f64 * cell_w;
                let tip = format!(
                    "{}, {}–{} {}: {} {}",
                    r.label,
                    crate::format_si(k as f64 * self.step),
                    crate::format_si((k + 1) as f64 * self.step),
                    self.time_unit,
                    (self.format)(v),
                    self.value_name
                );
                svg.raw(&format!(
                    r#"<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>"#,
                    num(x),
                    num(y + 1.0),
                    num(cell_w + 0.3),
                    num(ROW - 2.0),
                    shade((v - lo) / span),
                    escape(&tip)
                ));
            }
        }
        // Time along the bottom, and the legend's two ends.
        let base = TOP + ROW * self.rows.len() as f64;
        svg.line(LABEL_W, base + 2.0, LABEL_W + plot_w, base + 2.0, INK, 1.0);
        svg.text(LABEL_W, base + 18.0, "0", 11.0, Anchor::Start, "");
        let end = format!(
            "{} {}",
            crate::format_si(cols as f64 * self.step),
            self.time_unit
        );
        svg.text(LABEL_W + plot_w, base + 18.0, &end, 11.0, Anchor::End, "");
        let mut legend = String::new();
        let _ = write!(
            legend,
            "{}: light {} · dark {}",
            self.value_name,
            (self.format)(lo),
            (self.format)(hi)
        );
        svg.text(LABEL_W, base + 40.0, &legend, 12.0, Anchor::Start, "");
        svg.raw(&format!(
            r#"<rect x="{}" y="{}" width="60" height="10" fill="{}"/><rect x="{}" y="{}" width="60" height="10" fill="{}"/>"#,
            num(LABEL_W + plot_w - 120.0),
            num(base + 31.0),
            shade(0.0),
            num(LABEL_W + plot_w - 60.0),
            num(base + 31.0),
            shade(1.0)
        ));
        svg.finish()
    }
}

/// A shade of blue for `t` in 0..=1, light to dark (lightness alone carries the value).
fn shade(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (a, b) = ((0xde, 0xeb, 0xf7), (0x08, 0x30, 0x6b));
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_host_is_the_light_row_and_every_cell_has_its_value() {
        let svg = HeatMap::new("IOPS per host", "s", "IOPS", 1.0)
            .row(HeatRow::new("fast", [4000.0, 4000.0]))
            .row(HeatRow::new("slow <b>", [1000.0, f64::NAN]))
            .to_svg();
        assert_eq!(svg.matches("class=\"cell\"").count(), 3);
        assert!(svg.contains(&shade(1.0)) && svg.contains(&shade(0.0)));
        assert!(svg.contains("slow &lt;b&gt;"));
        let legend = format!(
            "IOPS: light {} · dark {}",
            crate::format_si(1000.0),
            crate::format_si(4000.0)
        );
        assert!(svg.contains(&legend), "{svg}");
        assert!(HeatMap::new("x", "s", "IOPS", 1.0)
            .to_svg()
            .contains("no data"));
    }
}
