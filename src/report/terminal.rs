//! Sparklines: a time series in one line of Unicode block characters, for `iogauge show` and the
//! report's result tables.

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One character per value, the height proportional to the value on a scale from zero to the
/// largest value (so a dip to half reads as half, not as the bottom). Zero, negative and
/// non-finite values print as a space: a stall shows as a hole in the line. Any positive value
/// gets at least the lowest block.
pub fn sparkline(values: &[f64]) -> String {
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    values
        .iter()
        .map(|&v| {
            if !(v.is_finite() && v > 0.0 && max > 0.0) {
                return ' ';
            }
            let level = ((v / max) * BLOCKS.len() as f64).ceil() as usize;
            BLOCKS[level.clamp(1, BLOCKS.len()) - 1]
        })
        .collect()
}

/// [`sparkline`] in at most `width` characters: neighbouring values are averaged (non-finite ones
/// left out) when there are more values than that. A `width` of 0 gives an empty string.
pub fn sparkline_fit(values: &[f64], width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    if values.len() <= width {
        return sparkline(values);
    }
    let k = values.len().div_ceil(width);
    let means: Vec<f64> = values
        .chunks(k)
        .map(|c| {
            let finite: Vec<f64> = c.iter().copied().filter(|v| v.is_finite()).collect();
            if finite.is_empty() {
                f64::NAN
            } else {
                finite.iter().sum::<f64>() / finite.len() as f64
            }
        })
        .collect();
    sparkline(&means)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heights_are_proportional_from_zero() {
        // 8 levels over 0..=8: value v is exactly level v.
        let v: Vec<f64> = (1..=8).map(f64::from).collect();
        assert_eq!(sparkline(&v), "▁▂▃▄▅▆▇█");
        // Half the maximum is the fourth block, not the bottom, however high the floor is.
        assert_eq!(sparkline(&[1000.0, 2000.0]), "▄█");
    }

    #[test]
    fn zero_and_missing_values_are_holes() {
        assert_eq!(sparkline(&[5.0, 0.0, f64::NAN, -1.0, 5.0]), "█   █");
        assert_eq!(sparkline(&[0.0, 0.0]), "  ");
        assert_eq!(sparkline(&[]), "");
        // A tiny positive value is still visible.
        assert_eq!(sparkline(&[1e-9, 1e9]), "▁█");
        assert_eq!(sparkline(&[f64::INFINITY, 1.0]), " █");
    }

    #[test]
    fn fit_averages_into_the_width() {
        let v: Vec<f64> = (0..100)
            .map(|i| if (40..60).contains(&i) { 0.0 } else { 8.0 })
            .collect();
        let s = sparkline_fit(&v, 10);
        assert_eq!(s.chars().count(), 10);
        // Buckets 4 and 5 cover the stall exactly.
        assert_eq!(s, "████  ████");
        assert_eq!(sparkline_fit(&[1.0, 2.0], 10), sparkline(&[1.0, 2.0]));
        assert_eq!(sparkline_fit(&v, 0), "");
        assert!(sparkline_fit(&v, 7).chars().count() <= 7);
    }
}
