//! How iogauge writes a number for people, one rule each, shared by the tables (the binary),
//! the findings (`iogauge-analyze`) and the charts (`iogauge-charts`), so that one number never
//! reads two ways: counts with thousands separators (`52,341`), sizes in IEC units with a space
//! and at most one decimal (`4 KiB`, `1.5 GiB`), bandwidth with one decimal in the one
//! convention the user chose for the whole process (`4,961.8 MiB/s`, or `5,202.8 MB/s` with
//! `--bandwidth-units si`), latencies to three significant digits in the unit that fits (`812 ns`,
//! `45.1 µs`), durations as people say them (`850 ms`, `4 min 05 s`).
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests

use std::time::Duration;

/// IEC size: `4 KiB`, `1.5 GiB`; exact powers print without decimals.
pub fn iec(bytes: u64) -> String {
    iec_f64(bytes as f64)
}

/// [`iec`] of a measured (fractional) number of bytes; 1023.96 bytes are `1 KiB`, not
/// `1024 B`.
pub fn iec_f64(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "? B".to_string();
    }
    let sign = if bytes < 0.0 { "-" } else { "" };
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes.abs();
    let mut u = 0;
    // Rounded before the unit is chosen, so 1023.96 goes up to the next unit.
    while (v * 10.0).round() / 10.0 >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    // One decimal, none when it is 0: 4095 bytes are "4 KiB" as 4096 are, never "4.0 KiB"
    // beside "4 KiB".
    let text = format!("{v:.1}");
    format!(
        "{sign}{} {}",
        text.strip_suffix(".0").unwrap_or(&text),
        UNITS[u]
    )
}

/// Short block-size label for tables: `512B`, `4K`, `1M` (IEC, as bm-flash prints them).
pub fn bs_label(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{}G", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => format!("{b}B"),
    }
}

/// Whether bandwidth is written in SI MB/s rather than IEC MiB/s: chosen once, before anything
/// is printed (`--bandwidth-units`), and the same for every line, table, finding and chart.
static SI_BANDWIDTH: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Chooses the bandwidth convention for the process: SI MB/s (`true`) or IEC MiB/s.
pub fn set_si_bandwidth(si: bool) {
    SI_BANDWIDTH.store(si, std::sync::atomic::Ordering::Relaxed);
}

/// Bandwidth as the user chose to read it: [`mib_s`] by default, [`mb_s`] with SI.
pub fn bw(bytes_per_s: f64) -> String {
    match SI_BANDWIDTH.load(std::sync::atomic::Ordering::Relaxed) {
        true => mb_s(bytes_per_s),
        false => mib_s(bytes_per_s),
    }
}

/// The unit [`bw`] writes, for a column's head: `MiB/s` or `MB/s`.
pub fn bw_unit() -> &'static str {
    match SI_BANDWIDTH.load(std::sync::atomic::Ordering::Relaxed) {
        true => "MB/s",
        false => "MiB/s",
    }
}

/// [`bw`]'s number alone, in its unit, for a chart's axis.
pub fn bw_value(bytes_per_s: f64) -> f64 {
    match SI_BANDWIDTH.load(std::sync::atomic::Ordering::Relaxed) {
        true => bytes_per_s / 1e6,
        false => bytes_per_s / (1024.0 * 1024.0),
    }
}

/// Bandwidth in IEC MiB/s.
pub fn mib_s(bytes_per_s: f64) -> String {
    format!("{} MiB/s", decimal(bytes_per_s / (1024.0 * 1024.0), 1))
}

/// Bandwidth in SI MB/s.
pub fn mb_s(bytes_per_s: f64) -> String {
    format!("{} MB/s", decimal(bytes_per_s / 1e6, 1))
}

/// A number with `places` decimals and its whole part in thousands, as counts are printed:
/// `4,961.8`.
pub fn decimal(v: f64, places: usize) -> String {
    let s = format!("{:.*}", places, v.abs());
    let (whole, frac) = s.split_once('.').unwrap_or((&s, ""));
    let whole = count(whole.parse::<f64>().unwrap_or(0.0));
    let sign = if v < 0.0 && s.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        "-"
    } else {
        ""
    };
    match frac.is_empty() {
        true => format!("{sign}{whole}"),
        false => format!("{sign}{whole}.{frac}"),
    }
}

/// "s" after a count that is not one: `format!("{n} table{}", plural(n))`.
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A rate with thousands separators, e.g. `52,341`.
pub fn count(v: f64) -> String {
    if v < 0.0 {
        return format!("-{}", count(-v));
    }
    let n = v.round() as u64;
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A latency given in nanoseconds, in the unit that keeps 3 significant digits: `812 ns`,
/// `45.1 µs`, `2.31 ms`, `1.20 s`.
pub fn latency(ns: f64) -> String {
    if ns < 0.0 {
        // Only a confidence bound can be negative.
        return format!("-{}", latency(-ns));
    }
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// A latency that may not have been measured (0): `–` then, else as [`latency`].
pub fn latency_known(ns: f64) -> String {
    match ns > 0.0 {
        true => latency(ns),
        false => "–".into(),
    }
}

/// A duration for humans: `850 ms`, `12.3 s`, `4 min 05 s`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        let m = (s / 60.0).floor();
        format!("{} min {:02.0} s", m as u64, s - m * 60.0)
    } else {
        let whole = s.round() as u64;
        format!("{} h {:02} min", whole / 3600, (whole % 3600) / 60)
    }
}

/// A number without unit where small ones matter: as [`count`] from 1,000 and for whole
/// numbers, three significant digits below (`12.5`, `0.420`) — for ratios and small rates in
/// findings, which [`count`] would round away.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "?".to_string();
    }
    if v.abs() >= 1000.0 || v.fract() == 0.0 {
        return count(v);
    }
    let a = v.abs();
    if a >= 100.0 {
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
    fn one_rule_a_kind() {
        assert_eq!(iec(4096), "4 KiB");
        assert_eq!(iec(4095), "4 KiB");
        assert_eq!(iec_f64(1023.96), "1 KiB");
        assert_eq!(iec_f64(1.5 * 1024.0 * 1024.0 * 1024.0), "1.5 GiB");
        assert_eq!(iec(512), "512 B");
        assert_eq!(mib_s(1731.2 * 1024.0 * 1024.0), "1,731.2 MiB/s");
        assert_eq!(count(52_340.6), "52,341");
        assert_eq!(number(12.5), "12.5");
        assert_eq!(number(65_000.0), "65,000");
        assert_eq!(latency(85_000.0), "85.0 µs");
        assert_eq!(latency(812.0), "812 ns");
        assert_eq!(duration(Duration::from_secs(16929)), "4 h 42 min");
    }
}
