//! Number formatting for finding summaries: counts, sizes, rates and times with their units.

/// A count or rate without unit: thousands separated above 1000 ("65,000"), whole numbers as
/// such ("8"), three significant digits otherwise ("12.5", "0.420") — the shared rule.
pub(crate) fn count(v: f64) -> String {
    iogauge_units::number(v)
}

/// Bytes in binary units, as the tables print sizes: "512 B", "64 KiB", "1.5 GiB".
pub(crate) fn bytes(v: f64) -> String {
    iogauge_units::iec_f64(v)
}

/// Bytes per second in MiB/s with one decimal, as the tables print bandwidth: "1,731.2 MiB/s".
pub(crate) fn rate(v: f64) -> String {
    if !v.is_finite() {
        return format!("? {}", iogauge_units::bw_unit());
    }
    iogauge_units::bw(v)
}

/// Seconds with one decimal: "12.0 s".
pub(crate) fn secs(v: f64) -> String {
    format!("{v:.1} s")
}

/// A latency given in seconds, as the tables print latencies: "85.0 µs", "1.20 ms", "2.00 s".
pub(crate) fn latency(s: f64) -> String {
    if !s.is_finite() {
        return "?".to_owned();
    }
    iogauge_units::latency(s * 1e9)
}

/// A fraction as a whole percentage: "37%"; a small non-zero one as "under 1%", so that it does
/// not read as none at all.
pub(crate) fn pct(frac: f64) -> String {
    if frac > 0.0 && frac < 0.005 {
        "under 1%".to_owned()
    } else {
        format!("{:.0}%", frac * 100.0)
    }
}

/// A change as a signed whole percentage: "+12%", "−6%" (a minus sign, not a hyphen); one under
/// half a percent either way as "within 1%".
pub fn signed_pct(frac: f64) -> String {
    match frac {
        f if f.abs() < 0.005 => "within 1%".to_owned(),
        f if f < 0.0 => format!("−{}", pct(-f)),
        f => format!("+{}", pct(f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_signed_with_a_minus_sign() {
        assert_eq!(signed_pct(0.12), "+12%");
        assert_eq!(signed_pct(-0.26), "−26%");
        assert_eq!(signed_pct(0.004), "within 1%");
    }

    #[test]
    fn counts_group_thousands() {
        assert_eq!(count(65000.0), "65,000");
        assert_eq!(count(1_234_567.4), "1,234,567");
        assert_eq!(count(-2500.0), "-2,500");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(12.5), "12.5");
        assert_eq!(count(8.0), "8");
        assert_eq!(count(0.0), "0");
    }

    #[test]
    fn sizes_use_binary_units() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(65536.0), "64 KiB");
        assert_eq!(bytes(1.5 * 1024.0 * 1024.0 * 1024.0), "1.5 GiB");
        assert_eq!(rate(4.0 * 1024.0 * 1024.0), "4.0 MiB/s");
        assert_eq!(rate(1731.2 * 1024.0 * 1024.0), "1,731.2 MiB/s");
    }

    #[test]
    fn latencies_pick_a_readable_unit() {
        assert_eq!(latency(85e-6), "85.0 µs");
        assert_eq!(latency(1.2e-3), "1.20 ms");
        assert_eq!(latency(2.0), "2.00 s");
    }
}
