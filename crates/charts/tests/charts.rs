//! Chart-level tests through the public API: the SVG is well formed and self-contained, every
//! input point shows up where the scale says, and bad input degrades instead of panicking.
//! No XML parser: a small tag checker and attribute reader below are enough for our own output.
#![allow(clippy::disallowed_methods)] // fixtures; clippy.toml binds the program only

use iogauge_charts::{format_bytes, Axis, Band, Bar, BarChart, BarSeries, LineChart, Mark, Series};

// ---- a tiny checker and reader for the SVG we emit ----------------------------------------

/// Panics unless tags balance, there is a single `<svg>` root, and every `&` starts an entity.
fn assert_well_formed(svg: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut rest = svg.trim();
    assert!(rest.starts_with("<svg"), "does not start with <svg");
    while let Some(lt) = rest.find('<') {
        check_text(&rest[..lt]);
        rest = &rest[lt..];
        let end = tag_end(rest).unwrap_or_else(|| panic!("unterminated tag: {:.60}", rest));
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().unwrap_or_else(|| panic!("stray </{name}>"));
            assert_eq!(open, name.trim(), "mismatched close tag");
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        assert!(!name.is_empty(), "bad tag <{tag}>");
        check_attrs(tag);
        if stack.is_empty() {
            roots += 1;
        }
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    check_text(rest);
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert_eq!(roots, 1, "more than one root element");
}

/// Index of the `>` that ends the tag starting at `s[0]`, skipping quoted attribute values.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (None, '"') | (None, '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '<') => panic!("'<' inside a tag: {:.80}", s),
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

fn check_text(text: &str) {
    assert!(!text.contains('>'), "raw '>' in text: {text}");
    check_entities(text);
}

fn check_attrs(tag: &str) {
    for value in tag.split('"').skip(1).step_by(2) {
        assert!(!value.contains('<'), "raw '<' in attribute: {value}");
        check_entities(value);
    }
}

fn check_entities(s: &str) {
    for (i, _) in s.match_indices('&') {
        let tail = &s[i..];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| tail.starts_with(e)),
            "bare '&' in: {s}"
        );
    }
}

/// Start tags of elements whose tag is `name` and that carry `class="{class}"`.
fn elements<'a>(svg: &'a str, name: &str, class: &str) -> Vec<&'a str> {
    let class = format!(r#"class="{class}""#);
    svg.split('<')
        .filter(|t| t.starts_with(name) && t[name.len()..].starts_with(' '))
        .map(|t| &t[..t.find('>').unwrap_or(t.len())])
        .filter(|t| t.contains(&class))
        .collect()
}

fn attr<'a>(element: &'a str, name: &str) -> &'a str {
    let key = format!(r#" {name}=""#);
    let start = element
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {element}"))
        + key.len();
    let len = element[start..].find('"').unwrap();
    &element[start..start + len]
}

fn num_attr(element: &str, name: &str) -> f64 {
    attr(element, name).parse().unwrap()
}

/// Centres of the circle markers (series 0 draws circles), in input order after sorting by x.
fn circle_markers(svg: &str) -> Vec<(f64, f64)> {
    elements(svg, "circle", "marker")
        .iter()
        .map(|e| (num_attr(e, "cx"), num_attr(e, "cy")))
        .collect()
}

fn count(svg: &str, pattern: &str) -> usize {
    svg.matches(pattern).count()
}

/// The `x` coordinates of a path's `M` and `L` commands.
fn path_xs(d: &str) -> Vec<f64> {
    d.split(['M', 'L'])
        .filter(|s| !s.is_empty())
        .map(|s| s.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

// ---- the six chart kinds -----------------------------------------------------------------

fn six_charts() -> Vec<String> {
    let bs: Vec<f64> = (0..14).map(|i| 512.0 * 2f64.powi(i)).collect();
    let iops: Vec<f64> = bs.iter().map(|b| 4e7 / (b + 1000.0)).collect();
    let block_size = LineChart::new("IOPS against block size")
        .x_axis(Axis::log2("Block size").format(format_bytes))
        .y_axis(Axis::linear("IOPS").from_zero())
        .series(Series::new(
            "1 thread",
            bs.iter().copied().zip(iops.clone()),
        ))
        .series(Series::new(
            "10 threads",
            bs.iter().copied().zip(iops.iter().map(|v| v * 2.0)),
        ));
    let q: [f64; 4] = [1.0, 2.0, 4.0, 8.0];
    let dual = LineChart::new("Orion")
        .x_axis(Axis::linear("Outstanding IO"))
        .y_axis(Axis::linear("IOPS"))
        .y2_axis(Axis::log10("Latency (ms)"))
        .series(Series::new(
            "IOPS",
            q.iter().map(|&x| (x, 1000.0 * x.sqrt())),
        ))
        .series(Series::new("latency", q.iter().map(|&x| (x, x * 0.7))).right_axis());
    let percentiles = LineChart::new("Latency percentiles")
        .x_axis(Axis::nines("Percentile"))
        .y_axis(Axis::log10("Latency (ms)"))
        .series(Series::new(
            "run 1",
            [
                (50.0, 0.2),
                (90.0, 0.4),
                (99.0, 1.0),
                (99.9, 4.0),
                (99.99, 11.0),
            ],
        ));
    let time = LineChart::new("Bandwidth over time")
        .x_axis(Axis::linear("Time (s)"))
        .y_axis(Axis::linear("MiB/s").from_zero())
        .series(Series::new(
            "write",
            (0..300).map(|i| (i as f64 * 0.2, 400.0 + (i % 7) as f64)),
        ))
        .band(Band::new(10.0, 20.0, "stall"));
    let bars = BarChart::new("Runs by workload")
        .groups(["read", "write"])
        .y_axis(Axis::linear("IOPS"))
        .series(BarSeries::new(
            "run 1",
            [Bar::new(10.0).ci(9.0, 11.0), Bar::new(5.0)],
        ))
        .series(BarSeries::new("run 2", [12.0, 6.0]));
    let scaling = LineChart::new("Scaling")
        .x_axis(Axis::linear("Disks"))
        .y_axis(Axis::linear("MB/s"))
        .series(Series::new(
            "read",
            (1..=12).map(|d| (d as f64, (d as f64).min(6.0) * 230.0)),
        ))
        .mark(Mark::new(6.0, 1380.0, "plateau starts here"));
    vec![
        block_size.to_svg(),
        dual.to_svg(),
        percentiles.to_svg(),
        time.to_svg(),
        bars.to_svg(),
        scaling.to_svg(),
    ]
}

#[test]
fn every_kind_is_well_formed_and_self_contained() {
    for svg in six_charts() {
        assert_well_formed(&svg);
        let root = &svg[..svg.find('>').unwrap()];
        assert!(root.contains(r#"width="100%""#), "{root}");
        assert!(root.contains("viewBox=\"0 0 "), "{root}");
        assert!(root.contains("preserveAspectRatio="), "{root}");
        assert!(root.contains(r#"font-family="system-ui, sans-serif""#));
        assert!(!root.contains(" height="), "fixed height: {root}");
        // Nothing that reaches outside the chart or leaks into the page around it.
        for banned in ["<style", "href", " id=", "<script", "url(", "@import"] {
            assert!(!svg.contains(banned), "contains {banned}");
        }
    }
}

#[test]
fn one_path_per_series_and_one_marker_per_point() {
    let svg = LineChart::new("counts")
        .series(Series::new("a", (0..5).map(|i| (i as f64, i as f64))))
        .series(Series::new("b", (0..4).map(|i| (i as f64, 2.0 * i as f64))))
        .series(Series::new("c", [(2.0, 1.0)]))
        .to_svg();
    assert_well_formed(&svg);
    let paths = elements(&svg, "path", "series");
    assert_eq!(paths.len(), 3);
    assert_eq!(count(&svg, r#"class="marker""#), 5 + 4 + 1);
    // A path visits each of its points once: one move and n-1 line commands.
    let d = attr(paths[0], "d");
    assert_eq!((count(d, "M"), count(d, "L")), (1, 4));
    // The legend has one entry (with a marker) per series.
    assert_eq!(count(&svg, r#"class="legend-marker""#), 3);
}

#[test]
fn a_lone_point_in_a_dense_series_still_shows() {
    // 100 points, but point 50 has no drawable neighbour: no line reaches it.
    let pts: Vec<(f64, f64)> = (0..100)
        .map(|i| (i as f64, if i == 49 || i == 51 { f64::NAN } else { 1.0 }))
        .collect();
    let svg = LineChart::new("t").series(Series::new("s", pts)).to_svg();
    let dots = elements(&svg, "circle", "dot");
    assert_eq!(dots.len(), 1);
    let d = attr(elements(&svg, "path", "series")[0], "d");
    let xs = path_xs(d);
    // The dot sits halfway between the first point (x=0) and the last (x=99) scaled: x=50.
    let (x0, x99) = (xs[0], *xs.last().unwrap());
    assert!((num_attr(dots[0], "cx") - (x0 + 50.0 / 99.0 * (x99 - x0))).abs() <= 0.02);
}

#[test]
fn dense_series_drop_markers_unless_asked() {
    let pts: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, (i % 10) as f64)).collect();
    let auto = LineChart::new("t")
        .series(Series::new("s", pts.clone()))
        .to_svg();
    assert_eq!(count(&auto, r#"class="marker""#), 0);
    assert_eq!(elements(&auto, "path", "series").len(), 1);
    let forced = LineChart::new("t")
        .series(Series::new("s", pts).markers(true))
        .to_svg();
    assert_eq!(count(&forced, r#"class="marker""#), 100);
}

#[test]
fn log2_puts_4kib_halfway_between_2kib_and_8kib() {
    let svg = LineChart::new("bs")
        .x_axis(Axis::log2("Block size").format(format_bytes))
        .series(Series::new(
            "s",
            [
                (512.0, 1.0),
                (2048.0, 2.0),
                (4096.0, 3.0),
                (8192.0, 4.0),
                (1048576.0, 5.0),
            ],
        ))
        .to_svg();
    let m = circle_markers(&svg);
    assert_eq!(m.len(), 5);
    let (x2, x4, x8) = (m[1].0, m[2].0, m[3].0);
    assert!(x2 < x4 && x4 < x8);
    // Coordinates are written with two decimals.
    assert!((x4 - (x2 + x8) / 2.0).abs() <= 0.01, "{x2} {x4} {x8}");
    // And the whole axis is proportional to log2: 512B→2KiB is two doublings, 2KiB→8KiB two.
    assert!(((x2 - m[0].0) - (x8 - x2)).abs() <= 0.02);
    assert!(svg.contains(">512 B<"));
    assert!(
        svg.contains(">2 KiB<"),
        "ticks should be labelled with the given formatter"
    );
}

#[test]
fn log10_y_spaces_decades_evenly() {
    let svg = LineChart::new("lat")
        .y_axis(Axis::log10("Latency (ms)"))
        .series(Series::new("s", [(1.0, 10.0), (2.0, 100.0), (3.0, 1000.0)]))
        .to_svg();
    let m = circle_markers(&svg);
    assert!((m[0].1 - m[1].1 - (m[1].1 - m[2].1)).abs() <= 0.02, "{m:?}");
    assert!(m[0].1 > m[2].1, "larger values must be higher up");
}

#[test]
fn nines_axis_spaces_p90_p99_p999_evenly() {
    let svg = LineChart::new("p")
        .x_axis(Axis::nines("Percentile"))
        .y_axis(Axis::log10("ms"))
        .series(Series::new(
            "s",
            [(50.0, 1.0), (90.0, 2.0), (99.0, 3.0), (99.9, 9.0)],
        ))
        .to_svg();
    let m = circle_markers(&svg);
    assert!(
        ((m[2].0 - m[1].0) - (m[3].0 - m[2].0)).abs() <= 0.02,
        "{m:?}"
    );
    for label in [">p50<", ">p90<", ">p99<", ">p99.9<"] {
        assert!(svg.contains(label), "missing tick {label}");
    }
}

#[test]
fn tick_labels_use_si_suffixes_and_given_ticks() {
    let svg = LineChart::new("si")
        .y_axis(Axis::linear("IOPS").from_zero())
        .series(Series::new("s", [(1.0, 11307.0), (2.0, 63751.0)]))
        .to_svg();
    assert!(
        svg.contains(">60k<") || svg.contains(">70k<"),
        "no SI tick label"
    );
    let given = LineChart::new("given")
        .x_axis(Axis::log2("bs").ticks([(512.0, "half K"), (2048.0, "two K")]))
        .series(Series::new("s", [(512.0, 1.0), (2048.0, 2.0)]))
        .to_svg();
    assert!(given.contains(">half K<") && given.contains(">two K<"));
}

#[test]
fn points_are_drawn_in_x_order() {
    let svg = LineChart::new("order")
        .series(Series::new("s", [(3.0, 1.0), (1.0, 2.0), (2.0, 3.0)]))
        .to_svg();
    let xs = path_xs(attr(elements(&svg, "path", "series")[0], "d"));
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
}

#[test]
fn text_is_escaped_everywhere() {
    let nasty = r#"<script>alert("x") & 'y'</script>"#;
    let line = LineChart::new(nasty)
        .x_axis(Axis::linear(nasty))
        .y_axis(Axis::linear(nasty))
        .series(Series::new(nasty, [(1.0, 1.0), (2.0, 2.0)]))
        .band(Band::new(1.2, 1.4, nasty))
        .mark(Mark::new(2.0, 2.0, nasty))
        .to_svg();
    let bars = BarChart::new(nasty)
        .groups([nasty])
        .x_title(nasty)
        .y_axis(Axis::linear(nasty))
        .series(BarSeries::new(nasty, [Bar::new(1.0).ci(0.5, 1.5)]))
        .to_svg();
    for svg in [line, bars] {
        assert_well_formed(&svg);
        assert!(!svg.contains("<script"));
        assert!(svg.contains("&lt;script&gt;alert(&quot;x&quot;) &amp; &apos;y&apos;"));
    }
}

#[test]
fn bands_sit_at_their_x() {
    // Data from 0 to 100 gives an axis from exactly 0 to 100, so the markers at 0 and 100 are
    // the plot's edges.
    let svg = LineChart::new("stalls")
        .x_axis(Axis::linear("Time (s)"))
        .series(Series::new("bw", [(0.0, 5.0), (50.0, 6.0), (100.0, 5.0)]))
        .band(Band::new(20.0, 30.0, "stall A"))
        .band(Band::new(75.0, 70.0, "stall B"))
        .to_svg();
    assert_well_formed(&svg);
    let m = circle_markers(&svg);
    let (left, right) = (m[0].0, m[2].0);
    let at = |v: f64| left + v / 100.0 * (right - left);
    let bands = elements(&svg, "rect", "band");
    assert_eq!(bands.len(), 2);
    assert!((num_attr(bands[0], "x") - at(20.0)).abs() <= 0.02);
    assert!((num_attr(bands[0], "width") - (at(30.0) - at(20.0))).abs() <= 0.02);
    // Reversed ends are put in order.
    assert!((num_attr(bands[1], "x") - at(70.0)).abs() <= 0.02);
    assert!(svg.contains(">stall A<") && svg.contains(">stall B<"));
}

#[test]
fn a_band_beyond_the_data_widens_the_axis() {
    let svg = LineChart::new("late stall")
        .series(Series::new("bw", [(0.0, 5.0), (50.0, 6.0), (100.0, 5.0)]))
        .band(Band::new(110.0, 130.0, "stall"))
        .to_svg();
    let m = circle_markers(&svg);
    let band = elements(&svg, "rect", "band")[0];
    assert!(
        num_attr(band, "x") > m[2].0,
        "band should lie right of the last point"
    );
    assert!(
        svg.contains(">140<") || svg.contains(">150<"),
        "axis not widened"
    );
}

#[test]
fn whiskers_only_where_a_ci_is_given() {
    let svg = BarChart::new("ci")
        .groups(["read", "write", "fsync"])
        .y_axis(Axis::linear("IOPS"))
        .series(BarSeries::new(
            "run 1",
            [
                Bar::new(100.0).ci(90.0, 110.0),
                Bar::new(50.0),
                Bar::new(20.0).ci(25.0, 15.0),
            ],
        ))
        .series(BarSeries::new(
            "run 2",
            [
                Bar::new(80.0).ci(70.0, 95.0),
                Bar::new(60.0).ci(f64::NAN, 70.0),
                Bar::new(30.0).ci(28.0, 33.0),
            ],
        ))
        .to_svg();
    assert_well_formed(&svg);
    let bars = elements(&svg, "rect", "bar");
    let whiskers = elements(&svg, "path", "whisker");
    assert_eq!(bars.len(), 6);
    assert_eq!(
        whiskers.len(),
        4,
        "a NaN interval end must not draw a whisker"
    );
    // The first whisker (run 1, read) spans 90..110 around the bar top at 100.
    let top = num_attr(bars[0], "y");
    let d = attr(whiskers[0], "d");
    let ys: Vec<f64> = d
        .split(['M', 'L'])
        .filter(|s| !s.is_empty())
        .map(|s| s.split(' ').nth(1).unwrap().parse().unwrap())
        .collect();
    let (y_lo, y_hi) = (ys[0], ys[1]);
    assert!(y_lo > top && top > y_hi, "{y_lo} {top} {y_hi}");
    assert!(
        ((y_lo - top) - (top - y_hi)).abs() <= 0.02,
        "symmetric CI, symmetric whisker"
    );
    // The whisker is centred on its bar.
    let centre = num_attr(bars[0], "x") + num_attr(bars[0], "width") / 2.0;
    assert!((path_xs(d)[0] - centre).abs() <= 0.02);
}

#[test]
fn bars_start_at_zero_and_grow_with_the_value() {
    let svg = BarChart::new("h")
        .groups(["a", "b"])
        .series(BarSeries::new("s", [100.0, 50.0]))
        .to_svg();
    let bars = elements(&svg, "rect", "bar");
    let (h0, h1) = (num_attr(bars[0], "height"), num_attr(bars[1], "height"));
    assert!(
        (h0 - 2.0 * h1).abs() <= 0.02,
        "{h0} vs {h1}: bars not proportional from zero"
    );
    let bottom0 = num_attr(bars[0], "y") + h0;
    let bottom1 = num_attr(bars[1], "y") + h1;
    assert!((bottom0 - bottom1).abs() <= 0.02);
}

#[test]
fn dual_axis_dashes_the_right_series_and_pairs_colours() {
    let q = [1.0, 2.0, 4.0];
    let svg = LineChart::new("orion")
        .y_axis(Axis::linear("IOPS"))
        .y2_axis(Axis::linear("Latency (ms)"))
        .series(Series::new("A IOPS", q.iter().map(|&x| (x, x * 100.0))))
        .series(Series::new("B IOPS", q.iter().map(|&x| (x, x * 90.0))))
        .series(Series::new("A lat", q.iter().map(|&x| (x, x * 0.5))).right_axis())
        .series(Series::new("B lat", q.iter().map(|&x| (x, x * 0.7))).right_axis())
        .to_svg();
    assert_well_formed(&svg);
    let paths = elements(&svg, "path", "series");
    assert_eq!(paths.len(), 4);
    for p in &paths[..2] {
        assert!(
            !p.contains("stroke-dasharray"),
            "left series should be solid"
        );
    }
    for p in &paths[2..] {
        assert!(
            p.contains("stroke-dasharray"),
            "right series should be dashed"
        );
    }
    assert_eq!(attr(paths[0], "stroke"), attr(paths[2], "stroke"));
    assert_eq!(attr(paths[1], "stroke"), attr(paths[3], "stroke"));
    assert_ne!(attr(paths[0], "stroke"), attr(paths[1], "stroke"));
    assert!(svg.contains(">Latency (ms)<"));
    // Both y axes span their own data: the top point of each series sits at the same height
    // only if each axis was fitted separately (IOPS 400 and latency 2 both end at a nice tick).
    let lat = LineChart::new("o")
        .y2_axis(Axis::linear("ms"))
        .series(Series::new("iops", [(1.0, 0.0), (2.0, 400.0)]))
        .series(Series::new("lat", [(1.0, 0.0), (2.0, 2.0)]).right_axis())
        .to_svg();
    let p = elements(&lat, "path", "series");
    let last_y = |d: &str| -> f64 { d.rsplit(' ').next().unwrap().parse().unwrap() };
    assert!((last_y(attr(p[0], "d")) - last_y(attr(p[1], "d"))).abs() <= 0.02);
}

#[test]
fn a_mark_rings_its_point() {
    let svg = LineChart::new("scaling")
        .series(Series::new(
            "read",
            (1..=8).map(|d| (d as f64, (d.min(5) * 100) as f64)),
        ))
        .mark(Mark::new(5.0, 500.0, "plateau starts here"))
        .to_svg();
    let ring = elements(&svg, "circle", "mark");
    assert_eq!(ring.len(), 1);
    let point = circle_markers(&svg)[4];
    assert!((num_attr(ring[0], "cx") - point.0).abs() <= 0.01);
    assert!((num_attr(ring[0], "cy") - point.1).abs() <= 0.01);
    assert!(svg.contains(">plateau starts here<"));
}

// ---- bad input -----------------------------------------------------------------------------

#[test]
fn empty_charts_say_no_data() {
    let charts = [
        LineChart::new("empty").to_svg(),
        LineChart::new("no points")
            .series(Series::new("s", []))
            .to_svg(),
        LineChart::new("all NaN")
            .series(Series::new("s", [(f64::NAN, 1.0), (1.0, f64::INFINITY)]))
            .to_svg(),
        LineChart::new("log of zero")
            .y_axis(Axis::log10("ms"))
            .series(Series::new("s", [(1.0, 0.0), (2.0, -1.0)]))
            .to_svg(),
        BarChart::new("no groups")
            .series(BarSeries::new("s", [1.0]))
            .to_svg(),
        BarChart::new("no series").groups(["a"]).to_svg(),
        BarChart::new("NaN bars")
            .groups(["a"])
            .series(BarSeries::new("s", [f64::NAN]))
            .to_svg(),
    ];
    for svg in &charts {
        assert_well_formed(svg);
        assert!(svg.contains(r#"class="no-data""#), "{svg}");
        assert_eq!(count(svg, r#"class="marker""#), 0);
    }
    assert!(
        charts[1].contains("s (no data)"),
        "legend should flag the empty series"
    );
}

#[test]
fn single_point_and_equal_values_get_a_range() {
    for svg in [
        LineChart::new("one")
            .series(Series::new("s", [(4096.0, 7.0)]))
            .to_svg(),
        LineChart::new("one log")
            .x_axis(Axis::log2("bs"))
            .y_axis(Axis::log10("ms"))
            .series(Series::new("s", [(4096.0, 7.0)]))
            .to_svg(),
        LineChart::new("flat")
            .series(Series::new("s", [(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]))
            .to_svg(),
        BarChart::new("zero bar")
            .groups(["a"])
            .series(BarSeries::new("s", [0.0]))
            .to_svg(),
    ] {
        assert_well_formed(&svg);
        assert!(!svg.contains("no-data"));
        // Ticks exist, so the range was padded rather than collapsed to a point.
        assert!(count(&svg, "<text") >= 4, "{svg}");
    }
    let one = LineChart::new("one")
        .series(Series::new("s", [(4096.0, 7.0)]))
        .to_svg();
    assert_eq!(count(&one, r#"class="marker""#), 1);
    let m = circle_markers(&one)[0];
    assert!(m.0.is_finite() && m.1.is_finite());
}

#[test]
fn skipped_points_break_the_line_and_are_counted() {
    let svg = LineChart::new("gaps")
        .x_axis(Axis::log2("bs"))
        .y_axis(Axis::log10("IOPS"))
        .series(Series::new(
            "s",
            [
                (512.0, 10.0),
                (1024.0, f64::NAN),
                (2048.0, 30.0),
                (4096.0, 0.0),
                (8192.0, 50.0),
                (0.0, 1.0),
                (16384.0, 60.0),
            ],
        ))
        .to_svg();
    assert_well_formed(&svg);
    assert_eq!(count(&svg, r#"class="marker""#), 4);
    let d = attr(elements(&svg, "path", "series")[0], "d");
    assert_eq!(
        count(d, "M"),
        3,
        "the line must break at each skipped point: {d}"
    );
    assert!(svg.contains("1 point not drawn: not a finite number."));
    assert!(svg.contains("2 points not drawn: zero or negative on a log axis."));
}

#[test]
fn extreme_values_do_not_panic() {
    let big = [f64::MAX, f64::MIN, f64::MIN_POSITIVE, -0.0, 1e-300, 1e300];
    for scale in [
        Axis::linear("x"),
        Axis::log2("x"),
        Axis::log10("x"),
        Axis::nines("x"),
    ] {
        let pts: Vec<(f64, f64)> = big
            .iter()
            .flat_map(|&a| big.iter().map(move |&b| (a, b)))
            .collect();
        let svg = LineChart::new("extreme")
            .x_axis(scale.clone())
            .y_axis(scale.clone())
            .series(Series::new("s", pts))
            .band(Band::new(f64::MIN, f64::MAX, "all"))
            .band(Band::new(f64::NAN, 1.0, "nan"))
            .mark(Mark::new(f64::NAN, 1.0, "nan"))
            .to_svg();
        assert_well_formed(&svg);
        assert!(!svg.contains("NaN\""), "NaN coordinate written");
    }
    let bars = BarChart::new("extreme")
        .groups(["a", "b", "c"])
        .series(BarSeries::new(
            "s",
            [
                Bar::new(f64::MAX).ci(f64::MIN, f64::MAX),
                Bar::new(-1e300),
                Bar::new(0.0),
            ],
        ))
        .series(BarSeries::new(
            "longer than groups",
            [1.0, 2.0, 3.0, 4.0, 5.0],
        ))
        .to_svg();
    assert_well_formed(&bars);
    assert!(bars.contains("2 value(s) beyond the last group not drawn."));
}

#[test]
fn negative_bars_hang_below_zero() {
    let svg = BarChart::new("change")
        .groups(["a", "b"])
        .y_axis(Axis::linear("change (%)"))
        .series(BarSeries::new("s", [10.0, -5.0]))
        .to_svg();
    let bars = elements(&svg, "rect", "bar");
    let bottom_pos = num_attr(bars[0], "y") + num_attr(bars[0], "height");
    let top_neg = num_attr(bars[1], "y");
    assert!(
        (bottom_pos - top_neg).abs() <= 0.02,
        "both bars should meet at zero"
    );
    assert!((num_attr(bars[0], "height") - 2.0 * num_attr(bars[1], "height")).abs() <= 0.02);
}

/// Values written on the bars (issue 12: a comparison stays readable when runs differ 100×).
#[test]
fn values_on_bars_are_written_above_each_bar() {
    let plain = BarChart::new("p")
        .groups(["8K"])
        .y_axis(Axis::linear("IOPS"))
        .series(BarSeries::new("qd1", [1200.0]))
        .series(BarSeries::new("qd32", [123_456.0]));
    let with = plain.clone().values_on_bars().to_svg();
    assert_well_formed(&with);
    assert_eq!(with.matches("<text class=\"value\"").count(), 2, "{with}");
    assert!(!plain.to_svg().contains("class=\"value\""));
}
