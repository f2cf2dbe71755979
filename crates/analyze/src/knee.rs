//! The size of a cache from latency against working set (`iogauge probe cache`).
//!
//! Uniform random reads over a working set of w bytes, with a cache of C bytes in front of a
//! slower device, hit the cache with probability h = min(1, C/w) once the set has been read
//! through (an LRU or clock cache keeps a C-sized random part of it). The mean latency is then
//! L(w) = h·t_hit + (1 − h)·t_miss. Medians would be useless here: they switch from t_hit to
//! t_miss at w = 2C, not at C. So C is fitted: t_hit is the fastest step's mean, and for each
//! candidate C on a fine logarithmic grid t_miss follows by least squares (L is linear in it);
//! the C with the smallest relative squared error wins. A cache is named only when misses are
//! at least [`MIN_SPEEDUP`] times slower than hits.

/// Misses must be at least this many times slower than hits for a cache to be named.
pub const MIN_SPEEDUP: f64 = 2.0;
/// Candidates per doubling of the working set.
const GRID: f64 = 32.0;

/// A cache found in the stack.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knee {
    pub cache_bytes: f64,
    pub hit_ns: f64,
    pub miss_ns: f64,
}

/// Fits the cache size from working sets (bytes, increasing) and the mean latency at each (ns).
/// `None` when the latencies do not rise enough for a cache to show, or the input is not a
/// series; a cache at least as large as the largest set is reported as that set.
pub fn cache_knee(ws: &[f64], mean_ns: &[f64]) -> Option<Knee> {
    let valid = ws.len() == mean_ns.len()
        && ws.len() >= 3
        && ws.windows(2).all(|p| p[0] < p[1])
        && ws.iter().chain(mean_ns).all(|v| v.is_finite() && *v > 0.0);
    if !valid {
        return None;
    }
    let hit = mean_ns.iter().copied().fold(f64::INFINITY, f64::min);
    let (lo, hi) = (ws[0] / 2.0, ws[ws.len() - 1]);
    let steps = ((hi / lo).log2() * GRID).ceil() as usize;
    let mut best: Option<(f64, Knee)> = None;
    for k in 0..=steps {
        let c = lo * 2f64.powf(k as f64 / GRID);
        let hs: Vec<f64> = ws.iter().map(|&w| (c / w).min(1.0)).collect();
        let (num, den) = hs.iter().zip(mean_ns).fold((0.0, 0.0), |(n, d), (&h, &l)| {
            (n + (1.0 - h) * (l - hit * h), d + (1.0 - h) * (1.0 - h))
        });
        if den <= 0.0 {
            continue;
        }
        let miss = num / den;
        let err: f64 = hs
            .iter()
            .zip(mean_ns)
            .map(|(&h, &l)| ((h * hit + (1.0 - h) * miss - l) / l).powi(2))
            .sum();
        if best.is_none_or(|(e, _)| err < e) {
            best = Some((
                err,
                Knee {
                    cache_bytes: c,
                    hit_ns: hit,
                    miss_ns: miss,
                },
            ));
        }
    }
    best.map(|(_, k)| k)
        .filter(|k| k.miss_ns >= MIN_SPEEDUP * k.hit_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(c: f64, hit: f64, miss: f64) -> (Vec<f64>, Vec<f64>) {
        let ws: Vec<f64> = (0..7).map(|k| (16u64 << 20 << k) as f64).collect();
        let lat = ws
            .iter()
            .map(|&w| {
                let h = (c / w).min(1.0);
                h * hit + (1.0 - h) * miss
            })
            .collect();
        (ws, lat)
    }

    #[test]
    fn a_cache_between_the_steps_is_found_within_a_few_percent() {
        for c in [100e6, 256.0 * 1048576.0, 300e6] {
            let (ws, lat) = series(c, 3_000.0, 120_000.0);
            let k = cache_knee(&ws, &lat).unwrap();
            assert!((k.cache_bytes / c - 1.0).abs() < 0.05, "{c}: {k:?}");
            assert!((k.miss_ns / 120_000.0 - 1.0).abs() < 0.05, "{k:?}");
        }
    }

    #[test]
    fn flat_latency_names_no_cache() {
        let ws: Vec<f64> = (0..6).map(|k| (16u64 << 20 << k) as f64).collect();
        assert!(cache_knee(&ws, &[100.0; 6]).is_none());
        assert!(cache_knee(&ws[..2], &[1.0, 2.0]).is_none(), "too few steps");
    }
}
