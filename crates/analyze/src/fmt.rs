//! Number formatting for finding summaries: counts, sizes, rates and times with their units.

/// A count or rate without unit: thousands separated above 1000 ("65,000"), whole numbers as
/// such ("8"), three significant digits otherwise ("12.5", "0.42").
pub(crate) fn count(v: f64) -> String {
    if !v.is_finite() {
        return "?".to_owned();
    }
    if v.abs() >= 1000.0 || v.fract() == 0.0 {
        let digits = format!("{:.0}", v.abs());
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if v < 0.0 {
            out.insert(0, '-');
        }
        out
    } else {
        significant(v)
    }
}

/// Bytes in binary units: "512 B", "64 KiB", "1.5 GiB".
pub(crate) fn bytes(v: f64) -> String {
    if !v.is_finite() {
        return "? B".to_owned();
    }
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = v;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    // As the tables print sizes: one decimal, none when it is 0 ("64 KiB", "1.5 GiB").
    let text = format!("{value:.1}");
    format!(
        "{} {}",
        text.strip_suffix(".0").unwrap_or(&text),
        UNITS[unit]
    )
}

/// Bytes per second in MiB/s with one decimal, as the tables print bandwidth: "1,731.2 MiB/s".
pub(crate) fn rate(v: f64) -> String {
    if !v.is_finite() {
        return "? MiB/s".to_owned();
    }
    let mib = v / (1024.0 * 1024.0);
    let tenths = format!("{:.1}", mib.abs());
    let (whole, frac) = tenths.split_once('.').unwrap_or((&tenths, "0"));
    let sign = if mib < 0.0 { "-" } else { "" };
    format!(
        "{sign}{}.{frac} MiB/s",
        count(whole.parse::<f64>().unwrap_or(0.0))
    )
}

/// Seconds with one decimal: "12.0 s".
pub(crate) fn secs(v: f64) -> String {
    format!("{v:.1} s")
}

/// A latency in the unit that keeps it readable: "85.0 µs", "1.20 ms", "2.00 s".
pub(crate) fn latency(s: f64) -> String {
    if !s.is_finite() {
        "?".to_owned()
    } else if s < 1e-3 {
        format!("{} µs", significant(s * 1e6))
    } else if s < 1.0 {
        format!("{} ms", significant(s * 1e3))
    } else {
        format!("{} s", significant(s))
    }
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

fn significant(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
