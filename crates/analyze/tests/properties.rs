//! Properties every check keeps for arbitrary input: no panic, no NaN or infinity in evidence,
//! and each check's own invariants (stalls disjoint and inside the run, a planted freeze found
//! where it was planted, power laws free of gaps).
#![allow(clippy::disallowed_methods)] // fixtures; clippy.toml binds the program only

use iogauge_analyze::{
    cache, ceiling, gaps, outliers, sparse, stalls, steady, CeilingPoint, CpuBins, Finding, Matrix,
    Metric, Thresholds, STEADY_WINDOW,
};
use proptest::prelude::*;

fn assert_finite(findings: &[Finding]) {
    for f in findings {
        for (k, v) in &f.evidence {
            assert!(v.is_finite(), "{k} = {v} in {f:?}");
        }
        assert!(!f.summary.is_empty() && !f.advice.is_empty());
        assert!(
            !f.summary.contains('\n'),
            "summary is one line: {}",
            f.summary
        );
    }
}

/// Any f64, with the awkward values well represented.
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e6f64..1e9,
        1 => Just(0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => any::<f64>(),
    ]
}

fn any_thresholds() -> impl Strategy<Value = Thresholds> {
    (
        prop::collection::vec(any_f64(), 12),
        prop_oneof![Just(0u32), Just(10u32), any::<u32>()],
    )
        .prop_map(|(v, count)| Thresholds {
            stall_frac: v[0],
            stall_min_s: v[1],
            stall_min_count: count,
            ceiling_gain: v[2],
            ceiling_min_doublings: v[3],
            ceiling_lat_elasticity: v[4],
            gap_frac: v[5],
            cache_ram_factor: v[6],
            cache_bw_margin: v[7],
            sparse_frac: v[8],
            steady_excursion: v[9],
            steady_slope: v[10],
            regime_frac: v[11],
            ..Thresholds::default()
        })
}

/// CPU seconds per second: mostly a plausible share, sometimes zero, tiny or anything at all.
fn cpu_share() -> impl Strategy<Value = f32> {
    prop_oneof![6 => 0.0f32..64.0, 1 => Just(0.0f32), 1 => Just(f32::MIN_POSITIVE), 1 => any::<f32>()]
}

fn bins() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(
        prop_oneof![3 => 0u32..300, 2 => Just(0u32), 1 => any::<u32>()],
        0..400,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn stalls_are_disjoint_and_inside_the_run(ios in bins(), bin_s in 0.001f64..2.0) {
        let found = stalls(&ios, bin_s, CpuBins::default(), &Thresholds::default());
        assert_finite(&found);
        let run_s = ios.len() as f64 * bin_s;
        let mut last_end = 0.0;
        for f in &found {
            let start = f.evidence["start_s"];
            let end = start + f.evidence["duration_s"];
            prop_assert!(start >= last_end - 1e-9, "overlap: {found:?}");
            prop_assert!(end <= run_s + 1e-9, "past the run: {found:?}");
            prop_assert!(f.evidence["duration_s"] > 0.0);
            prop_assert!(f.evidence["depth"] >= 0.0);
            last_end = end;
        }
    }

    #[test]
    fn stalls_survive_any_bin_width_and_thresholds(
        ios in bins(), bin_s in any_f64(), th in any_thresholds(),
        run in prop::collection::vec(any::<f32>(), 0..300),
        wait in prop::collection::vec(any::<f32>(), 0..300),
    ) {
        assert_finite(&stalls(&ios, bin_s, CpuBins { run: &run, wait: &wait, ..CpuBins::default() }, &th));
    }

    #[test]
    fn a_planted_freeze_is_found_where_it_was_planted(
        per_bin in 10u32..5000,
        before in 0usize..200,
        len in 5usize..200,
        after in 0usize..200,
    ) {
        let mut ios = vec![per_bin; before];
        ios.extend(std::iter::repeat_n(0, len));
        ios.extend(std::iter::repeat_n(per_bin, after));
        let found = stalls(&ios, 0.1, CpuBins::default(), &Thresholds::default());
        prop_assert_eq!(found.len(), 1, "{:?}", found);
        let f = &found[0];
        prop_assert!((f.evidence["start_s"] - before as f64 * 0.1).abs() < 1e-9);
        prop_assert!((f.evidence["duration_s"] - len as f64 * 0.1).abs() < 1e-9);
        prop_assert_eq!(f.evidence["depth"], 0.0);
    }

    #[test]
    fn ceiling_survives_anything(
        pts in prop::collection::vec((any_f64(), any_f64(), any_f64(), any_f64()), 0..12),
        th in any_thresholds(),
        bw in any::<bool>(),
    ) {
        let pts: Vec<CeilingPoint> = pts
            .into_iter()
            .map(|(x, iops, bw_bytes, mean_lat_s)| CeilingPoint { x, iops, bw_bytes, mean_lat_s })
            .collect();
        let metric = if bw { Metric::Bandwidth } else { Metric::Iops };
        assert_finite(&ceiling(&pts, "iodepth", metric, &th));
        let found = ceiling(&pts, "iodepth", metric, &Thresholds::default());
        assert_finite(&found);
        prop_assert!(found.len() <= 1);
        for f in &found {
            // The plateau starts at a measured x and its value is the best from there on.
            let start = f.evidence["starts_at_x"];
            let best = pts
                .iter()
                .filter(|p| p.x.is_finite() && p.x >= start)
                .map(|p| if bw { p.bw_bytes } else { p.iops })
                .filter(|v| v.is_finite() && *v > 0.0)
                .fold(f64::MIN, f64::max);
            prop_assert!(pts.iter().any(|p| p.x == start));
            prop_assert!(f.evidence["plateau_value"] <= best);
            // Left out only when x spans so many orders of magnitude that the ratio overflows.
            if let Some(g) = f.evidence.get("x_growth") {
                prop_assert!(*g >= 4.0 - 1e-9);
            }
        }
    }

    #[test]
    fn steady_growth_is_no_ceiling(gain in 0.06f64..1.0, start in 1.0f64..1e6, n in 2usize..10) {
        let pts: Vec<CeilingPoint> = (0..n)
            .map(|i| {
                let iops = start * (1.0 + gain).powi(i as i32);
                CeilingPoint { x: 2f64.powi(i as i32), iops, bw_bytes: iops * 4096.0, mean_lat_s: 1e-4 }
            })
            .collect();
        prop_assert!(ceiling(&pts, "iodepth", Metric::Iops, &Thresholds::default()).is_empty());
    }

    #[test]
    fn gaps_survive_anything(
        rows in prop::collection::vec(any::<u64>(), 0..8),
        values in prop::collection::vec(prop::collection::vec(prop::option::of(any_f64()), 0..4), 0..8),
        th in any_thresholds(),
    ) {
        let m = Matrix { rows, cols: vec!["a".into()], values, metric: Metric::Bandwidth };
        assert_finite(&gaps(&m, &th));
        for f in gaps(&m, &Thresholds::default()) {
            prop_assert!(f.evidence["value"] < 0.5 * f.evidence["expected"]);
        }
    }

    #[test]
    fn power_laws_have_no_gaps(
        c in 1e-3f64..1e9,
        p in -0.9f64..1.0,
        n in 1usize..14,
        iops in any::<bool>(),
    ) {
        let rows: Vec<u64> = (0..n).map(|i| 512u64 << i).collect();
        let values = rows.iter().map(|&b| vec![Some(c * (b as f64).powf(p))]).collect();
        // Interior cells lie on the log–log line exactly; an edge cell is a gap only if the law
        // falls by more than half per doubling (p < −1) or, at the small end, rises faster
        // than block size (p > 1), so exponents in between never are, whatever the metric.
        let metric = if iops { Metric::Iops } else { Metric::Bandwidth };
        let m = Matrix { rows, cols: vec![], values, metric };
        prop_assert!(gaps(&m, &Thresholds::default()).is_empty());
    }

    #[test]
    fn outliers_survive_anything(
        values in prop::collection::vec(any_f64(), 0..10),
        idx in prop::collection::vec(0usize..12, 0..6),
    ) {
        let found = outliers("IOPS", &values, &idx);
        assert_finite(&found);
        let valid: std::collections::BTreeSet<usize> = idx
            .iter()
            .copied()
            .filter(|&i| values.get(i).is_some_and(|v| v.is_finite()))
            .collect();
        // Fewer finite repeats than the minimum judge nothing.
        let finite = values.iter().filter(|v| v.is_finite()).count();
        let expected = if finite < iogauge_analyze::MIN_OUTLIER_REPEATS { 0 } else { valid.len() };
        prop_assert_eq!(found.len(), expected);
    }

    #[test]
    fn cache_survives_anything(
        buffered in any::<bool>(),
        ws in any::<u64>(),
        mem in any::<u64>(),
        bw in any_f64(),
        max in prop::option::of(any_f64()),
        th in any_thresholds(),
    ) {
        assert_finite(&cache(buffered, ws, mem, bw, max, &th));
        assert_finite(&cache(buffered, ws, mem, bw, max, &Thresholds::default()));
    }

    #[test]
    fn sparse_fraction_is_a_fraction(
        size in any::<u64>(),
        alloc in any::<u64>(),
        data in prop::option::of(any::<u64>()),
        th in any_thresholds(),
    ) {
        assert_finite(&sparse(size, alloc, data, &th));
        for f in sparse(size, alloc, data, &Thresholds::default()) {
            let frac = f.evidence["unbacked_frac"];
            prop_assert!(frac > 0.01 && frac <= 1.0);
        }
    }

    #[test]
    fn steady_survives_anything(
        series in prop::collection::vec(any_f64(), 0..20),
        interval in any_f64(),
        window in 0usize..10,
        th in any_thresholds(),
    ) {
        assert_finite(&steady(&series, interval, window, true, &th));
        prop_assert!(steady(&series, interval, window, false, &Thresholds::default()).len() <= 1);
    }

    #[test]
    fn regime_survives_anything(
        fine in bins(),
        bin_s in any_f64(),
        b in any_f64(),
        run in prop::collection::vec(cpu_share(), 400),
        wait in prop::collection::vec(cpu_share(), 400),
        short in 0usize..3,
        th in any_thresholds(),
    ) {
        // Mostly series that cover every bin, so the CPU's judgement runs; now and then one
        // bin short, or any f32 at all.
        let n = fine.len().saturating_sub(short / 2);
        let cpu = iogauge_analyze::CpuBins { run: &run[..n], wait: &wait[..n], ..Default::default() };
        let found = iogauge_analyze::regime(&fine, bin_s, Some(b), true, None, cpu, &th);
        assert_finite(&found);
        prop_assert!(found.len() <= 1);
    }

    #[test]
    fn a_constant_series_is_steady(level in 1.0f64..1e7, n in 10usize..30) {
        let found = steady(&vec![level; n], 1.0, STEADY_WINDOW, true, &Thresholds::default());
        prop_assert_eq!(found[0].severity, iogauge_analyze::Severity::Info);
    }
}
