//! Grouped bar charts with error whiskers: one group per category (workload), one bar per series
//! (run) in each group, and a whisker for the bar's confidence interval when it has one.

use std::fmt::Write;

use crate::frame::{Frame, LegendEntry, Swatch, XSpec, YSpec};
use crate::scale::{resolve, Axis, Scale};
use crate::style;
use crate::svg::{escape, num, INK};

/// One bar: a value and optionally its confidence interval `(lo, hi)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    value: f64,
    ci: Option<(f64, f64)>,
}

impl Bar {
    /// A bar of height `value` (negative values hang below zero).
    pub fn new(value: f64) -> Bar {
        Bar { value, ci: None }
    }

    /// Adds a confidence interval, drawn as a whisker from `lo` to `hi` (swapped if reversed;
    /// left out if either end is not finite).
    pub fn ci(mut self, lo: f64, hi: f64) -> Bar {
        self.ci = Some((lo, hi));
        self
    }

    fn whisker(&self) -> Option<(f64, f64)> {
        // Ordered only after the check: f64::min would quietly drop a NaN end.
        let (lo, hi) = self.ci?;
        (lo.is_finite() && hi.is_finite()).then(|| (lo.min(hi), lo.max(hi)))
    }
}

impl From<f64> for Bar {
    fn from(value: f64) -> Bar {
        Bar::new(value)
    }
}

/// One run: a label and one bar per group, in the order of [`BarChart::groups`].
#[derive(Clone, Debug)]
pub struct BarSeries {
    label: String,
    bars: Vec<Bar>,
}

impl BarSeries {
    /// Bars beyond the number of groups are ignored; a missing or non-finite value leaves an
    /// empty slot.
    pub fn new<B: Into<Bar>>(label: impl Into<String>, bars: impl IntoIterator<Item = B>) -> Self {
        BarSeries {
            label: label.into(),
            bars: bars.into_iter().map(Into::into).collect(),
        }
    }
}

/// A grouped bar chart.
///
/// The value axis is always linear and includes zero: a bar's length is its message, and on a
/// log axis it would have none. An [`Axis`] given with another scale is drawn linear; its title
/// and formatter are kept.
///
/// ```
/// use iogauge_charts::{Axis, Bar, BarChart, BarSeries};
/// let svg = BarChart::new("Random read 8KiB")
///     .groups(["1 thread", "10 threads"])
///     .y_axis(Axis::linear("IOPS"))
///     .series(BarSeries::new("mdadm", [Bar::new(30170.0).ci(29800.0, 30500.0), Bar::new(61824.0)]))
///     .series(BarSeries::new("lvm2", [27100.0, 56000.0]))
///     .to_svg();
/// assert!(svg.contains("class=\"whisker\""));
/// ```
#[derive(Clone, Debug)]
pub struct BarChart {
    title: String,
    x_title: String,
    groups: Vec<String>,
    y: Axis,
    series: Vec<BarSeries>,
    values: bool,
}

impl BarChart {
    /// An empty chart; add [`BarChart::groups`] and [`BarChart::series`].
    pub fn new(title: impl Into<String>) -> BarChart {
        BarChart {
            title: title.into(),
            x_title: String::new(),
            groups: Vec::new(),
            y: Axis::linear(""),
            series: Vec::new(),
            values: false,
        }
    }

    /// Writes each bar's value above it, so a reader needs no axis to compare runs.
    pub fn values_on_bars(mut self) -> BarChart {
        self.values = true;
        self
    }

    /// The category names along the x axis.
    pub fn groups<S: Into<String>>(mut self, groups: impl IntoIterator<Item = S>) -> BarChart {
        self.groups = groups.into_iter().map(Into::into).collect();
        self
    }

    /// A title under the categories, e.g. "Workload".
    pub fn x_title(mut self, title: impl Into<String>) -> BarChart {
        self.x_title = title.into();
        self
    }

    /// The value axis: title, formatter and [`Axis::include`] are used; the scale is linear.
    pub fn y_axis(mut self, axis: Axis) -> BarChart {
        self.y = axis;
        self
    }

    /// Adds a run; each series gets one bar in every group, styled in the order added.
    pub fn series(mut self, series: BarSeries) -> BarChart {
        self.series.push(series);
        self
    }

    /// The bar in `group` of `series`, if it has a finite value.
    fn bar(&self, series: usize, group: usize) -> Option<&Bar> {
        let bar = self.series.get(series)?.bars.get(group)?;
        bar.value.is_finite().then_some(bar)
    }

    /// Renders the chart. Never panics: with no groups or no finite values it renders empty
    /// axes and a "no data" note.
    pub fn to_svg(&self) -> String {
        let mut axis = self.y.clone();
        axis.scale = Scale::Linear;
        let axis = axis.from_zero();
        let n_groups = self.groups.len();
        let n_series = self.series.len();

        let mut values = Vec::new();
        let mut missing = 0usize;
        for s in 0..n_series {
            for g in 0..n_groups {
                match self.bar(s, g) {
                    Some(bar) => {
                        values.push(bar.value);
                        if let Some((lo, hi)) = bar.whisker() {
                            values.extend([lo, hi]);
                        }
                    }
                    None => missing += 1,
                }
            }
        }
        let y_res = resolve(&axis, values, 6);
        let mut notes = Vec::new();
        if y_res.is_some() && missing > 0 {
            let s = if missing == 1 { "bar" } else { "bars" };
            notes.push(format!("{missing} {s} not drawn: no finite value."));
        }
        let extra: usize = self
            .series
            .iter()
            .map(|s| s.bars.len().saturating_sub(n_groups))
            .sum();
        if extra > 0 {
            notes.push(format!("{extra} value(s) beyond the last group not drawn."));
        }

        let legend = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| LegendEntry {
                label: s.label.clone(),
                swatch: Swatch::Bar {
                    color: style::color(i),
                    hatch: style::hatch(i),
                },
            })
            .collect();
        let y_ticks = y_res
            .as_ref()
            .map(|r| {
                r.ticks
                    .iter()
                    .map(|(t, l)| (r.px(*t, 0.0, 1.0), l.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let frame = Frame {
            title: self.title.clone(),
            x_title: self.x_title.clone(),
            x: XSpec::Categories(self.groups.clone()),
            y: YSpec {
                title: axis.title.clone(),
                ticks: y_ticks,
            },
            y2: None,
            legend,
            notes,
            no_data: y_res.is_none(),
            sides: (0.0, 0.0),
        };
        frame.render(|svg, plot| {
            let Some(yr) = &y_res else { return };
            let slot = plot.w / n_groups.max(1) as f64;
            let bw = slot * 0.8 / n_series.max(1) as f64;
            let y0 = yr.px(0.0, plot.bottom(), plot.y);
            let mut out = String::new();
            for (si, s) in self.series.iter().enumerate() {
                let color = style::color(si);
                for g in 0..n_groups {
                    let Some(bar) = self.bar(si, g) else { continue };
                    let x = plot.x + g as f64 * slot + slot * 0.1 + si as f64 * bw;
                    let yv = yr.px(bar.value, plot.bottom(), plot.y);
                    let (top, h) = (yv.min(y0), (yv - y0).abs());
                    let mut tip = format!(
                        "{} — {}: {}",
                        escape(&s.label),
                        escape(&self.groups[g]),
                        escape(&axis.label(bar.value))
                    );
                    if let Some((lo, hi)) = bar.whisker() {
                        let _ = write!(
                            tip,
                            " (CI {} to {})",
                            escape(&axis.label(lo)),
                            escape(&axis.label(hi))
                        );
                    }
                    // A hairline gap between neighbouring bars keeps their edges visible.
                    let w = (bw - 1.0).max(0.5);
                    let _ = write!(
                        out,
                        r##"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{color}" stroke="#222222" stroke-width="0.6"><title>{tip}</title></rect>"##,
                        num(x),
                        num(top),
                        num(w),
                        num(h)
                    );
                    let d = style::hatch_path(style::hatch(si), x, top, w, h);
                    if !d.is_empty() {
                        let _ = write!(
                            out,
                            r##"<path class="hatch" d="{d}" stroke="#ffffff" stroke-width="1.5" fill="none"/>"##
                        );
                    }
                    if self.values {
                        let above = bar.whisker().map_or(top, |(_, hi)| {
                            yr.px(hi, plot.bottom(), plot.y).min(top)
                        });
                        let _ = write!(
                            out,
                            r##"<text class="value" x="{}" y="{}" text-anchor="middle" font-size="11" fill="{INK}">{}</text>"##,
                            num(x + w / 2.0),
                            num(above - 4.0),
                            escape(&axis.label(bar.value))
                        );
                    }
                    if let Some((lo, hi)) = bar.whisker() {
                        let cx = x + w / 2.0;
                        let cap = (w * 0.3).min(7.0);
                        let (ylo, yhi) = (
                            yr.px(lo, plot.bottom(), plot.y),
                            yr.px(hi, plot.bottom(), plot.y),
                        );
                        let d = format!(
                            "M{cx} {ylo}L{cx} {yhi}M{l} {ylo}L{r} {ylo}M{l} {yhi}L{r} {yhi}",
                            cx = num(cx),
                            ylo = num(ylo),
                            yhi = num(yhi),
                            l = num(cx - cap),
                            r = num(cx + cap)
                        );
                        // A white underlay keeps the whisker visible over a dark bar.
                        let _ = write!(
                            out,
                            r##"<path d="{d}" stroke="#ffffff" stroke-width="3.5" fill="none"/><path class="whisker" d="{d}" stroke="#000000" stroke-width="1.5" fill="none"><title>{tip}</title></path>"##
                        );
                    }
                }
            }
            svg.raw(&out);
            if y0 < plot.bottom() - 0.5 {
                // Negative bars hang from a zero line inside the plot.
                svg.line(plot.x, y0, plot.x + plot.w, y0, INK, 1.0);
            }
        })
    }
}
