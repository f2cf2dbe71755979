//! The size of a cache from how many reads it answered (`iogauge probe cache`).
//!
//! Uniform random reads over a working set of w bytes, with a cache of C bytes in front of a
//! slower device, hit the cache with probability h = min(1, C/w) once the set has been read
//! through (an LRU or clock cache keeps a C-sized random part of it). So each working set gives
//! an estimate C = h·w, with h counted directly: the share of its reads faster than a threshold
//! halfway (geometrically) between the hit latency (the median of the smallest set) and the miss
//! latency (the 90th percentile of the largest). Counting reads on either side of a threshold,
//! instead of fitting mean latencies, keeps a busy CPU from moving the answer: a miss delayed by
//! the scheduler is still a miss. Sets whose hit share is between 5% and 95% give estimates, and
//! their median is the answer; medians of latency would be useless here, as they switch from
//! hit to miss at w = 2C, not at C.

/// Misses must be at least this many times slower than hits for a cache to be named.
pub const MIN_SPEEDUP: f64 = 2.0;

/// A cache found in the stack.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knee {
    pub cache_bytes: f64,
    pub hit_ns: f64,
    pub miss_ns: f64,
    /// The hit/miss threshold the shares were counted with.
    pub threshold_ns: f64,
}

/// One working set's reads: its size, and the share of its reads at or under a latency.
pub struct Step<'a> {
    pub bytes: f64,
    pub median_ns: f64,
    pub p90_ns: f64,
    pub share_under: &'a dyn Fn(f64) -> f64,
}

/// The cache the steps show (increasing sizes), or `None` when misses are not clearly slower
/// than hits. A cache holding every set is reported at the largest set's size.
pub fn cache_knee(steps: &[Step]) -> Option<Knee> {
    if steps.len() < 3 || steps.windows(2).any(|p| p[0].bytes >= p[1].bytes) {
        return None;
    }
    let hit = steps[0].median_ns;
    let last = &steps[steps.len() - 1];
    let miss = last.p90_ns;
    if !(hit > 0.0 && miss >= MIN_SPEEDUP * hit) {
        return None;
    }
    // Like against like: the same percentile must rise across the table. On a busy machine the
    // largest set's p90 was 21× the smallest set's median (1.58 ms against 75.9 µs) with no
    // knee anywhere — every set's p90 was that slow, the scheduler's delay, not a cache's edge.
    if last.p90_ns < MIN_SPEEDUP * steps[0].p90_ns {
        return None;
    }
    let threshold = (hit * miss).sqrt();
    let shares: Vec<f64> = steps.iter().map(|s| (s.share_under)(threshold)).collect();
    let mut estimates: Vec<f64> = steps
        .iter()
        .zip(&shares)
        .filter(|(_, &h)| (0.05..=0.95).contains(&h))
        .map(|(s, &h)| h * s.bytes)
        .collect();
    let cache = if estimates.is_empty() {
        // Every set all hits or all misses: the cache lies between the last all-hit set and
        // the first all-miss one, or holds them all.
        match shares.iter().position(|&h| h < 0.05) {
            Some(0) => return None,
            Some(k) => (steps[k - 1].bytes * steps[k].bytes).sqrt(),
            None => last.bytes,
        }
    } else {
        estimates.sort_by(f64::total_cmp);
        estimates[estimates.len() / 2]
    };
    Some(Knee {
        cache_bytes: cache,
        hit_ns: hit,
        miss_ns: miss,
        threshold_ns: threshold,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets of 16 MiB doubling to 1 GiB in front of a cache of `c` bytes: a share min(1, c/w)
    /// of reads take `hit` ns, the rest `miss` ns.
    fn check(c: f64, hit: f64, miss: f64) -> Option<Knee> {
        let ws: Vec<f64> = (0..7).map(|k| (16u64 << 20 << k) as f64).collect();
        let funcs: Vec<Box<dyn Fn(f64) -> f64>> = ws
            .iter()
            .map(|&w| {
                let h = (c / w).min(1.0);
                Box::new(move |t: f64| {
                    if t >= miss {
                        1.0
                    } else if t >= hit {
                        h
                    } else {
                        0.0
                    }
                }) as Box<dyn Fn(f64) -> f64>
            })
            .collect();
        let steps: Vec<Step> = ws
            .iter()
            .zip(&funcs)
            .map(|(&w, f)| {
                let h = (c / w).min(1.0);
                Step {
                    bytes: w,
                    median_ns: if h >= 0.5 { hit } else { miss },
                    p90_ns: if h >= 0.9 { hit } else { miss },
                    share_under: f.as_ref(),
                }
            })
            .collect();
        cache_knee(&steps)
    }

    /// The near miss from a busy machine: every set answers most reads in ~76 µs and a tenth
    /// or more in ~1.5 ms (the scheduler's delay, the same share at every size). No percentile
    /// rises across the sets, so there is no cache, though the largest set's p90 is 20× the
    /// smallest set's median.
    #[test]
    fn a_slow_tail_at_every_size_is_no_cache() {
        let ws: Vec<f64> = (0..7).map(|k| (16u64 << 20 << k) as f64).collect();
        let under = |t: f64| {
            if t >= 1_500_000.0 {
                1.0
            } else if t >= 76_000.0 {
                0.85
            } else {
                0.0
            }
        };
        let steps: Vec<Step> = ws
            .iter()
            .map(|&w| Step {
                bytes: w,
                median_ns: 76_000.0,
                p90_ns: 1_580_000.0,
                share_under: &under,
            })
            .collect();
        assert_eq!(cache_knee(&steps), None);
    }

    #[test]
    fn a_cache_between_the_steps_is_found() {
        for c in [100e6, 256.0 * 1048576.0, 300e6] {
            let k = check(c, 2_000.0, 60_000.0).unwrap();
            assert!((k.cache_bytes / c - 1.0).abs() < 0.01, "{c}: {k:?}");
        }
    }

    #[test]
    fn flat_latency_names_no_cache() {
        assert!(
            check(100e6, 2_000.0, 3_000.0).is_none(),
            "misses not slower"
        );
        let all = check(4e9, 2_000.0, 60_000.0);
        assert!(all.is_none(), "no miss at all: nothing to count against");
    }
}
