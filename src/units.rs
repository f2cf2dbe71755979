//! Parsing and printing of sizes, durations, rates and latencies.
//!
//! Input sizes follow fio and dd: `4k`, `4K`, `4KiB` and `4KB` all mean 4096 bytes (storage
//! people mean powers of two when they type a block size). Output names its system every time:
//! MiB/GiB are IEC (powers of 1024), MB/s and GB/s are SI (powers of 1000).

use std::time::Duration;

/// Parses a byte size such as `512`, `512B`, `4k`, `4KiB`, `1m`, `1.5GiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty size; write a number with an optional unit, e.g. 4k or 1GiB".into());
    }
    if t.starts_with('-') {
        return Err(format!(
            "size '{s}' is negative; sizes are counts of bytes, e.g. 4k"
        ));
    }
    parse_size::Config::new()
        .with_binary()
        .parse_size(t)
        .map_err(|_| format!("'{s}' is not a size; write e.g. 512, 4k, 64KiB, 1m or 2GiB"))
}

/// The longest duration any option takes: 30 days. Longer is a typo (or an attack on the
/// arithmetic: every duration is multiplied by counts of cells, rounds and threads), and
/// bounding it here keeps every product of durations and every buffer sized by one finite.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// Parses a duration such as `10s`, `500ms`, `2m`, `1h30m`, or a bare number of seconds, of
/// at most [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!(
            "{s}: a duration cannot be negative; write e.g. 10s, 500ms or 2m"
        ));
    }
    let d = match t.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => {
            Duration::try_from_secs_f64(secs.min(MAX_DURATION.as_secs_f64() * 2.0))
                .map_err(|_| format!("'{s}' is not a duration; write e.g. 10s, 500ms, 2m or 1h"))?
        }
        _ => humantime::parse_duration(t)
            .map_err(|_| format!("'{s}' is not a duration; write e.g. 10s, 500ms, 2m or 1h"))?,
    };
    if d > MAX_DURATION {
        return Err(format!(
            "'{s}' is longer than 30 days, the longest duration iogauge takes; give e.g. 10m, 2h or 7d"
        ));
    }
    Ok(d)
}

/// A run's label: printable text, since `list` and `show` print it on a terminal, and not a
/// word that names runs another way (a run id, `last`), or it could never be looked up.
pub fn parse_label(s: &str) -> Result<String, String> {
    if s.chars().any(char::is_control) {
        return Err(format!(
            "'{}' holds control characters (a newline, tab or terminal escape); give a label of printable text",
            s.escape_default()
        ));
    }
    let t = s.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("last") || t.parse::<i64>().is_ok() {
        return Err(format!(
            "'{s}' would be read as a run id or `last` by show and compare, so the run could not be found by it; give a label with a letter in it, e.g. ssd-{t}"
        ));
    }
    Ok(s.to_string())
}

/// A share in percent, `40%` or `40` (a decimal point allowed: `37.5%`), as a number of percent.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    match t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a percentage; write e.g. 40% or 80%")),
    }
}

/// A rate in IOs per second: a number with an optional k/m (thousands, millions), e.g. 5000,
/// 5k or 1.5m.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * mult <= 1e9 => Ok(v * mult),
        _ => Err(format!(
            "'{s}' is not a rate; give IOs per second above 0, e.g. 500, 5k or 1.5m"
        )),
    }
}

/// `s` with control characters (newlines, ANSI escapes) shown as escapes, for printing text a
/// user or a file supplied — labels, paths, a journal's contents — on a terminal.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    match s.chars().any(char::is_control) {
        false => std::borrow::Cow::Borrowed(s),
        true => std::borrow::Cow::Owned(s.chars().flat_map(char::escape_default).collect()),
    }
}

/// Text a user or a file supplied, as an error line quotes it: printable (see [`printable`])
/// and cut to `max` characters with an ellipsis, so one long value cannot flood the line.
pub fn quoted(s: &str, max: usize) -> String {
    let shown = printable(s);
    match shown.chars().count() > max {
        true => format!("{}…", shown.chars().take(max).collect::<String>()),
        false => shown.into_owned(),
    }
}

/// Parses a comma-separated list with `item`, e.g. block sizes `4k,64k,1m`.
pub fn parse_list<T>(s: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    let items: Vec<&str> = s.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(format!(
            "'{s}' has an empty item; separate values by single commas, e.g. 1,10,40"
        ));
    }
    items.into_iter().map(item).collect()
}

pub use iogauge_units::{
    bs_label, bw, bw_unit, bw_value, count, duration, iec, iec_f64, latency, latency_known, plural,
    set_si_bandwidth,
};

/// What a table says in place of a ± that tells nothing.
pub const TOO_FEW: &str = "too few repeats to tell";

/// Whether the 95% interval `ci` around `mean` tells a reader anything. It does not when it
/// reaches zero: every figure here is a rate or a latency, never below zero, so the interval
/// was cut there ("54,815 ±169,485" from two repeats, "0.00 ns … 5.04 ms") and says only that
/// the repeats disagree. The stored document keeps the numbers.
pub fn interval_tells(mean: f64, ci: [f64; 2]) -> bool {
    ci[0] > 0.0 || (mean == 0.0 && ci[1] == 0.0)
}

/// " ±half" after a mean, in `v`'s unit, or `None` when the interval tells nothing
/// ([`interval_tells`]); a caller says [`TOO_FEW`] or its mark instead.
pub fn plus_minus(mean: f64, ci: [f64; 2], v: impl Fn(f64) -> String) -> Option<String> {
    interval_tells(mean, ci).then(|| format!(" ±{}", v((ci[1] - ci[0]) / 2.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn long_durations_in_hours() {
        assert_eq!(duration(Duration::from_secs(16929)), "4 h 42 min");
        assert_eq!(duration(Duration::from_secs(3599)), "59 min 59 s");
    }

    #[test]
    fn sizes_mean_powers_of_two() {
        for (s, v) in [
            ("512", 512),
            ("512B", 512),
            ("4k", 4096),
            ("4K", 4096),
            ("4KiB", 4096),
            ("4KB", 4096),
            ("1m", 1 << 20),
            ("1MiB", 1 << 20),
            ("64m", 64 << 20),
            ("2GiB", 2 << 30),
            ("1.5g", 3 << 29),
        ] {
            assert_eq!(parse_size(s), Ok(v), "{s}");
        }
        for bad in ["", "abc", "-4k", "4q", "4 kk", "1e999"] {
            assert!(parse_size(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("30days"), Ok(MAX_DURATION));
        for huge in [
            "99999999999999h",
            "18446744073709551615s",
            "5124095576030431h",
            "1000000h",
            "31days",
            "1e300",
        ] {
            let e = parse_duration(huge).unwrap_err();
            assert!(
                e.contains("30 days") || e.contains("not a duration"),
                "{huge}: {e}"
            );
        }
        assert_eq!(printable("a\nb\x1b[31m"), "a\\nb\\u{1b}[31m");
        assert_eq!(printable("plain · ok"), "plain · ok");
        assert_eq!(quoted("((((((((", 4), "((((…");
        assert_eq!(quoted("a\x1bb", 9), "a\\u{1b}b");
        assert_eq!(parse_rate("5k"), Ok(5000.0));
        assert_eq!(parse_rate("1.5m"), Ok(1.5e6));
        assert_eq!(parse_rate("250"), Ok(250.0));
        for bad in ["", "0", "-5", "k", "5x", "nan", "1e12"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        for bad in ["2", "last", "LAST", " 17 "] {
            assert!(parse_label(bad).is_err(), "{bad}");
        }
        assert!(parse_label("ssd-2").is_ok());
        for bad in ["-1s", "-5", "ten", "10 parsecs", "", "nan", "inf"] {
            assert!(parse_duration(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn lists() {
        assert_eq!(
            parse_list("1,10,40", |s| s.parse::<u32>().map_err(|e| e.to_string())),
            Ok(vec![1, 10, 40])
        );
        assert!(parse_list("1,,40", |s| s.parse::<u32>().map_err(|e| e.to_string())).is_err());
        assert_eq!(parse_list("4k, 1m", parse_size), Ok(vec![4096, 1 << 20]));
    }

    #[test]
    fn printing() {
        assert_eq!(iec(4096), "4 KiB");
        assert_eq!(iec(1 << 30), "1 GiB");
        assert_eq!(iec(1536 << 20), "1.5 GiB");
        assert_eq!(bs_label(512), "512B");
        assert_eq!(bs_label(4096), "4K");
        assert_eq!(bs_label(4 << 20), "4M");
        assert_eq!(count(52341.4), "52,341");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(1_000_000.0), "1,000,000");
        assert_eq!(count(-1234.0), "-1,234");
        assert_eq!(latency(-86_744.7), "-86.7 µs");
        assert_eq!(latency(812.0), "812 ns");
        assert_eq!(latency(45_100.0), "45.1 µs");
        assert_eq!(latency(2_310_000.0), "2.31 ms");
        assert_eq!(iogauge_units::mib_s(1048576.0 * 200.0), "200.0 MiB/s");
        assert_eq!(iogauge_units::mb_s(2e8), "200.0 MB/s");
    }

    proptest! {
        #[test]
        fn size_round_trips_through_every_suffix(n in 0u64..(1 << 20), shift in 0usize..4) {
            let suffix = ["", "k", "m", "g"][shift];
            let expect = n << (10 * shift);
            prop_assert_eq!(parse_size(&format!("{n}{suffix}")), Ok(expect));
            // A bare "iB" (no unit letter) is left to the parse-size crate: it reads it as bytes.
            if shift > 0 {
                prop_assert_eq!(parse_size(&format!("{n}{}iB", suffix.to_uppercase())), Ok(expect));
            }
        }

        #[test]
        fn size_parser_never_panics(s in ".{0,24}") {
            let _ = parse_size(&s);
        }

        #[test]
        fn duration_round_trips_in_ms(ms in 0u64..10_000_000) {
            prop_assert_eq!(parse_duration(&format!("{ms}ms")), Ok(Duration::from_millis(ms)));
        }

        #[test]
        fn duration_parser_never_panics(s in ".{0,24}") {
            let _ = parse_duration(&s);
        }
    }

    // Fuzzing of the three parsers (issue 6). CI runs the default 256 cases per property; the
    // documented long run is `PROPTEST_CASES=1000000 cargo test --release --bin iogauge units::`.

    /// Inputs shaped like what people type, so the fuzzer spends its cases near the grammar:
    /// signs, digits, fractions, exponents, separators, units and stray characters.
    const SIZE_LIKE: &str =
        "[ \t]{0,2}[-+]?[0-9_]{0,24}([.][0-9]{0,12})?([eE][-+]?[0-9]{1,4})?[ \t]{0,2}([kKmMgGtTpPeEbB]|[kKmMgGtTpPeE][iI]?[bB]?|[a-zµ%]{1,3})?[ \t]{0,2}";
    const DURATION_LIKE: &str =
        "[ \t]{0,2}[-+]?([0-9]{0,22}([.][0-9]{0,9})?[ ]?(ns|us|µs|ms|s|sec|m|min|h|hr|d|w|M|y|x)?){0,3}[ \t]{0,2}";

    /// What `shift` powers of 1024 are called, spelled the ways sizes are typed.
    fn unit(shift: usize, spelling: usize) -> String {
        let l = ["", "k", "m", "g", "t", "p", "e"][shift];
        let u = l.to_uppercase();
        match (shift, spelling % 5) {
            (0, 0) => String::new(),
            (0, 1 | 3) => "b".into(),
            (0, _) => "B".into(),
            (_, 0) => l.into(),
            (_, 1) => u,
            (_, 2) => format!("{u}iB"),
            (_, 3) => format!("{u}B"),
            _ => format!("{l}ib"),
        }
    }

    proptest! {
        #[test]
        fn size_parser_never_panics_on_any_text(s in any::<String>()) {
            let _ = parse_size(&s);
        }

        #[test]
        fn size_parser_never_panics_near_the_grammar(s in SIZE_LIKE) {
            let _ = parse_size(&s);
        }

        /// Every whole number in every unit: exactly n × 1024^k when that fits in 64 bits, an
        /// error when it does not — never a wrapped or saturated value.
        #[test]
        fn size_is_exact_or_refused(
            n in prop_oneof![any::<u64>(), 0u64..100_000],
            shift in 0usize..7,
            spelling in 0usize..5,
            space in any::<bool>(),
        ) {
            let text = format!("{n}{}{}", if space { " " } else { "" }, unit(shift, spelling));
            let exact = u128::from(n) << (10 * shift);
            match u64::try_from(exact) {
                Ok(v) => prop_assert_eq!(parse_size(&text), Ok(v), "{}", text),
                Err(_) => prop_assert!(parse_size(&text).is_err(), "{} overflows", text),
            }
        }

        /// A fraction of a unit rounds to one of the two whole bytes around its exact value.
        #[test]
        fn fractional_size_is_within_a_byte(
            whole in 0u64..1_000_000,
            frac in "[0-9]{1,6}",
            shift in 1usize..4,
        ) {
            let text = format!("{whole}.{frac}{}", unit(shift, 0));
            let scale = 10u128.pow(frac.len() as u32);
            let num = (u128::from(whole) * scale + frac.parse::<u128>().unwrap()) << (10 * shift);
            let (lo, hi) = (num / scale, num.div_ceil(scale));
            let got = u128::from(parse_size(&text).unwrap());
            prop_assert!(lo <= got && got <= hi, "{}: {} not in [{}, {}]", text, got, lo, hi);
        }

        /// A minus sign is always refused, whatever follows.
        #[test]
        fn negative_sizes_are_refused(s in SIZE_LIKE) {
            let text = format!("-{}", s.trim_start());
            prop_assert!(parse_size(&text).is_err(), "{}", text);
        }

        #[test]
        fn duration_parser_never_panics_on_any_text(s in any::<String>()) {
            let _ = parse_duration(&s);
        }

        #[test]
        fn duration_parser_never_panics_near_the_grammar(s in DURATION_LIKE) {
            let _ = parse_duration(&s);
        }

        /// n of a unit is exactly n × the unit up to MAX_DURATION; beyond, an error, never a
        /// wrapped or clipped value.
        #[test]
        fn duration_is_exact_or_refused(
            n in prop_oneof![any::<u64>(), 0u64..100_000],
            unit in 0usize..7,
        ) {
            let (name, ns): (&str, u128) = [
                ("ns", 1), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
                ("m", 60_000_000_000), ("h", 3_600_000_000_000), ("d", 86_400_000_000_000),
            ][unit];
            let exact = u128::from(n) * ns;
            let text = format!("{n}{name}");
            match parse_duration(&text) {
                Ok(d) => prop_assert!(d.as_nanos() == exact && d <= MAX_DURATION, "{}", text),
                Err(_) => prop_assert!(exact > MAX_DURATION.as_nanos(), "{} refused", text),
            }
        }

        /// A bare number is seconds, fractions included, to the nanosecond.
        #[test]
        fn bare_number_is_seconds(ms in 0u64..1_000_000_000) {
            let text = format!("{}.{:03}", ms / 1000, ms % 1000);
            prop_assert_eq!(parse_duration(&text), Ok(Duration::from_millis(ms)), "{}", text);
        }

        /// Parts add up: 1h30m is 90 minutes.
        #[test]
        fn compound_durations_add_up(h in 0u64..720, m in 0u64..60, s in 0u64..60) {
            prop_assert_eq!(
                parse_duration(&format!("{h}h{m}m{s}s")),
                Ok(Duration::from_secs(h * 3600 + m * 60 + s))
            );
        }

        #[test]
        fn negative_durations_are_refused(s in DURATION_LIKE) {
            let text = format!("-{}", s.trim_start());
            prop_assert!(parse_duration(&text).is_err(), "{}", text);
        }

        /// A list prints back to itself, whatever the spaces around its commas.
        #[test]
        fn list_round_trips(
            items in proptest::collection::vec((any::<u32>(), " {0,2}", " {0,2}"), 1..20),
        ) {
            let text = items
                .iter()
                .map(|(v, a, b)| format!("{a}{v}{b}"))
                .collect::<Vec<_>>()
                .join(",");
            let want: Vec<u32> = items.iter().map(|(v, _, _)| *v).collect();
            let got = parse_list(&text, |s| s.parse::<u32>().map_err(|e| e.to_string()));
            prop_assert_eq!(got, Ok(want), "{}", text);
        }

        /// An empty item anywhere — leading, trailing or doubled comma — is refused.
        #[test]
        fn list_with_an_empty_item_is_refused(
            items in proptest::collection::vec(0u32..1000, 0..10),
            at in any::<prop::sample::Index>(),
            blank in " {0,2}",
        ) {
            let mut parts: Vec<String> = items.iter().map(u32::to_string).collect();
            let i = at.index(parts.len() + 1);
            parts.insert(i, blank);
            let text = parts.join(",");
            prop_assert!(parse_list(&text, |s| s.parse::<u32>().map_err(|e| e.to_string())).is_err(), "{}", text);
        }

        /// A list of sizes is the sizes, item by item, with the item's own errors.
        #[test]
        fn size_list_is_its_items(
            items in proptest::collection::vec((0u64..1 << 20, 0usize..4, 0usize..5), 1..10),
        ) {
            let texts: Vec<String> = items.iter().map(|(n, s, sp)| format!("{n}{}", unit(*s, *sp))).collect();
            let want: Vec<u64> = items.iter().map(|(n, s, _)| n << (10 * s)).collect();
            prop_assert_eq!(parse_list(&texts.join(","), parse_size), Ok(want));
        }

        #[test]
        fn list_parser_never_panics(s in any::<String>()) {
            let _ = parse_list(&s, parse_size);
            let _ = parse_list(&s, parse_duration);
        }
    }
}
