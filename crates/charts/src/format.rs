//! Number formatters for tick labels and tooltips: SI suffixes (1.2k, 3.4M), binary byte sizes
//! (512B, 4KiB, 1MiB) and percentiles (p99.9). Each is a plain `fn(f64) -> String` so it can be
//! handed to [`crate::Axis::format`].

/// Formats a number with an SI suffix and at most four significant digits: `1234` → `1.234k`,
/// `3_400_000` → `3.4M`, `0.25` → `0.25`. Numbers below one keep three significant digits
/// without a suffix, because `m` (milli) next to `M` (mega) is too easy to misread in a chart.
pub fn format_si(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    if a < 1.0 {
        if a < 1e-6 {
            return format!("{sign}{}", trim_exponent(&format!("{a:.2e}")));
        }
        // Three significant digits: 0.5 → 3 decimals before trimming, 0.000123 → 6.
        let decimals = (2 - a.log10().floor() as i32).clamp(0, 9) as usize;
        return format!("{sign}{}", trim_zeros(&format!("{a:.decimals$}")));
    }
    const PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    for (i, prefix) in PREFIXES.iter().enumerate() {
        let scaled = a / 1000f64.powi(i as i32);
        let decimals = if scaled < 10.0 {
            3
        } else if scaled < 100.0 {
            2
        } else {
            1
        };
        let text = trim_zeros(&format!("{scaled:.decimals$}"));
        // 999.96 rounds to "1000.0"; the next prefix says it as "1k" instead.
        let rounded_up = text.parse::<f64>().is_ok_and(|r| r >= 1000.0);
        if !rounded_up {
            return format!("{sign}{text}{prefix}");
        }
    }
    format!("{sign}{}", trim_exponent(&format!("{a:.3e}")))
}

/// Formats a byte count as the rest of iogauge writes sizes (`iogauge-units`): `512` →
/// `512 B`, `4096` → `4 KiB`, `1536` → `1.5 KiB`, `1048576` → `1 MiB`.
pub fn format_bytes(v: f64) -> String {
    iogauge_units::iec_f64(v)
}

/// Formats a percentile given in percent: `50` → `p50`, `99.9` → `p99.9`.
pub fn format_percentile(p: f64) -> String {
    if !p.is_finite() {
        return format!("p{p}");
    }
    format!("p{}", trim_zeros(&format!("{p:.6}")))
}

/// Plain decimal with as many decimals as a tick step needs; the fallback when a formatter
/// would give two different ticks the same label.
pub(crate) fn format_for_step(v: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        6
    };
    trim_zeros(&format!("{v:.decimals$}"))
}

fn trim_zeros(s: &str) -> String {
    if !s.contains('.') {
        return normalise_zero(s);
    }
    let t = s.trim_end_matches('0').trim_end_matches('.');
    normalise_zero(t)
}

fn normalise_zero(s: &str) -> String {
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// `1.20e-7` → `1.2e-7`.
fn trim_exponent(s: &str) -> String {
    match s.split_once('e') {
        Some((mantissa, exp)) => format!("{}e{exp}", trim_zeros(mantissa)),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_suffixes() {
        assert_eq!(format_si(0.0), "0");
        assert_eq!(format_si(1.0), "1");
        assert_eq!(format_si(999.0), "999");
        assert_eq!(format_si(1000.0), "1k");
        assert_eq!(format_si(1200.0), "1.2k");
        assert_eq!(format_si(3_400_000.0), "3.4M");
        assert_eq!(format_si(-2_500.0), "-2.5k");
        assert_eq!(format_si(2e9), "2G");
        assert_eq!(format_si(0.25), "0.25");
        assert_eq!(format_si(0.000_123_4), "0.000123");
        assert_eq!(format_si(f64::NAN), "NaN");
    }

    #[test]
    fn si_rounding_moves_to_the_next_prefix() {
        assert_eq!(format_si(999_960.0), "1M");
        assert_eq!(format_si(999.96), "1k");
    }

    #[test]
    fn si_huge_and_tiny_use_exponents() {
        assert!(format_si(1e30).contains('e'));
        assert!(format_si(1e-9).contains('e'));
    }

    #[test]
    fn bytes_use_binary_units() {
        assert_eq!(format_bytes(512.0), "512 B");
        assert_eq!(format_bytes(1024.0), "1 KiB");
        assert_eq!(format_bytes(4096.0), "4 KiB");
        assert_eq!(format_bytes(1536.0), "1.5 KiB");
        assert_eq!(format_bytes(1_048_576.0), "1 MiB");
        assert_eq!(format_bytes(4.0 * 1_048_576.0), "4 MiB");
        assert_eq!(format_bytes(1023.999), "1 KiB");
    }

    #[test]
    fn percentiles() {
        assert_eq!(format_percentile(50.0), "p50");
        assert_eq!(format_percentile(99.9), "p99.9");
        assert_eq!(format_percentile(99.99), "p99.99");
    }

    #[test]
    fn step_formatting_separates_close_ticks() {
        assert_ne!(
            format_for_step(1_000_000.0, 1.0),
            format_for_step(1_000_001.0, 1.0)
        );
        assert_eq!(format_for_step(0.3000000000000004, 0.1), "0.3");
    }
}
