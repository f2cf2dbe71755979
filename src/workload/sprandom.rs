//! fio's sprandom (SanDisk random preconditioning, fio's sprandom.c): random writes that leave a
//! flash device in the state a long random workload would, in one pass. The writes are cut into
//! `regions` windows of equal length; a share of each window's blocks (its invalid share, from
//! the over-provisioning `op`) is written again at the start of the next window, so the blocks
//! the device holds in each window end with the validity its garbage collector would find.
//! In all, the logical range plus `op` of it is written: each block once in a random order,
//! the rewritten ones again.
//!
//! iogauge walks the blocks in a permutation of its own and draws its own coins, so the same
//! shares of blocks are rewritten as by fio, not the same blocks. Nothing is allocated per
//! write: the rewrite queue is sized once, as fio sizes its buffer (6 standard deviations).

use std::collections::VecDeque;

/// fio's sprandom options: the over-provisioning (`spr_op`) and the regions (`spr_num_regions`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spr {
    pub op: f64,
    pub regions: u32,
}

/// fio's invalid shares in 1/10000: the validity of its regions is spaced evenly on the curve of
/// blocks written against validity, from the garbage collector's (`1 − 1/WAF`, WAF = 0.5/op +
/// 0.7) to 1, and read in reverse (region 0 the least valid). fio's compute_validity_dist.
pub fn invalid_pct(s: Spr) -> Vec<u32> {
    let n = s.regions.max(1) as usize;
    let waf = 0.5 / s.op + 0.7;
    let gc = 1.0 - 1.0 / waf;
    let validity = linspace(1.0, gc, n);
    let mut acc = Vec::with_capacity(n);
    let mut sum = 0.0;
    for v in &validity {
        sum += 1.0 / v;
        acc.push(sum);
    }
    let resampled: Vec<f64> = linspace(acc[0], acc[n - 1], n)
        .into_iter()
        .map(|x| interpolate(x, &acc, &validity))
        .collect();
    resampled
        .iter()
        .rev()
        .map(|v| ((1.0 - v) * 10_000.0).round() as u32)
        .collect()
}

fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![a];
    }
    (0..n)
        .map(|i| a + (b - a) * i as f64 / (n - 1) as f64)
        .collect()
}

/// `ys` at `x` on the line through the points (`xs`, `ys`), the nearest end's outside them.
fn interpolate(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let last = xs.len() - 1;
    if x <= xs[0] {
        return ys[0];
    }
    if x >= xs[last] {
        return ys[last];
    }
    let i = xs.partition_point(|v| *v <= x).clamp(1, last) - 1;
    if (xs[i + 1] - xs[i]).abs() < 1e-9 {
        return ys[i];
    }
    ys[i] + (ys[i + 1] - ys[i]) * (x - xs[i]) / (xs[i + 1] - xs[i])
}

/// The bytes fio's sprandom writes over `logical` bytes: `logical` and `op` of it, in whole
/// blocks of `bs`.
pub fn physical_bytes(logical: u64, op: f64, bs: u64) -> u64 {
    let size = logical + (logical as f64 * op).ceil() as u64;
    size - size % bs.max(1)
}

/// Every block of `0..n` once, in an order drawn from a seed: a bijection of the next power of
/// two (an odd multiply and xor-shifts, each invertible), walked again from a value past `n`
/// until it falls inside (cycle walking keeps it a bijection of `0..n`).
struct Permutation {
    n: u64,
    next: u64,
    mask: u64,
    bits: u32,
    keys: [u64; 3],
}

impl Permutation {
    fn new(n: u64, seed: u64) -> Permutation {
        let bits = (64 - n.max(2).saturating_sub(1).leading_zeros()).max(1);
        let mut rng = fastrand::Rng::with_seed(seed);
        Permutation {
            n,
            next: 0,
            mask: if bits >= 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            },
            bits,
            keys: [rng.u64(..) | 1, rng.u64(..), rng.u64(..) | 1],
        }
    }

    #[inline]
    fn mix(&self, mut x: u64) -> u64 {
        let half = self.bits.div_ceil(2);
        x = (x ^ self.keys[1]) & self.mask;
        x = x.wrapping_mul(self.keys[0]) & self.mask;
        x ^= x >> half;
        x = x.wrapping_mul(self.keys[2]) & self.mask;
        x ^= x >> half;
        x
    }

    /// The next block, or `None` once every block has come.
    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.next >= self.n {
            return None;
        }
        let mut x = self.mix(self.next);
        while x >= self.n {
            x = self.mix(x);
        }
        self.next += 1;
        Some(x)
    }
}

/// One job's sprandom sequence of block indices (fio's sprandom_get_next_offset without a
/// cache size).
pub struct SpRandom {
    pct: Box<[u32]>,
    /// Writes in a region (fio's region_write_count), those left of new blocks in this one.
    per_region: u64,
    remaining: u64,
    region: usize,
    phase: usize,
    /// Blocks to write again: the first `committed` of them now, the rest from the next region.
    again: VecDeque<u64>,
    committed: usize,
    /// Blocks queued to be written again, in each phase.
    queued: [u64; 2],
    /// Writes in all: the physical size, fio's byte limit.
    left: u64,
    order: Permutation,
    coin: fastrand::Rng,
}

impl SpRandom {
    /// The sequence over `blocks` blocks of `bs` bytes, seeded by `seed`.
    pub fn new(s: Spr, blocks: u64, bs: u64, seed: u64) -> SpRandom {
        let pct = invalid_pct(s);
        let physical = physical_bytes(blocks * bs, s.op, bs) / bs.max(1);
        let per_region = physical / u64::from(s.regions.max(1));
        // fio's estimate_inv_capacity: the first region's expected rewrites and six sigmas.
        let v = 1.0 - f64::from(pct[0]) / 10_000.0;
        let n = per_region as f64;
        let capacity = (n * (1.0 - v) + 6.0 * (n * v * (1.0 - v)).sqrt()).ceil() as usize;
        SpRandom {
            pct: pct.into_boxed_slice(),
            per_region,
            remaining: per_region,
            region: 0,
            phase: 0,
            again: VecDeque::with_capacity(capacity + 1),
            committed: 0,
            queued: [0, 0],
            left: physical,
            order: Permutation::new(blocks, seed),
            coin: fastrand::Rng::with_seed(seed ^ 0x5350_5241_4E44_4F4D),
        }
    }

    /// The next block to write, or `None` when the sequence has ended (every block written,
    /// or the physical size).
    #[inline]
    pub fn next_block(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        // The blocks queued in the last region are written first in this one.
        if self.committed > 0 {
            let b = self.again.pop_front()?;
            self.committed -= 1;
            self.queue(b);
            self.left -= 1;
            return Some(b);
        }
        if self.remaining == 0 {
            if self.region >= self.pct.len() {
                return None;
            }
            self.queued[self.phase] = 0;
            self.region += 1;
            self.phase ^= 1;
            self.remaining = self.per_region.saturating_sub(self.queued[self.phase]);
            self.committed = self.again.len();
        }
        let b = self.order.next()?;
        self.remaining = self.remaining.saturating_sub(1);
        self.queue(b);
        self.left -= 1;
        Some(b)
    }

    /// Queues `b` to be written again in the next region with the region's invalid share
    /// (fio's coin: a draw of 0..=10000 at or below it). A queue already full (beyond six
    /// sigmas, where fio stops) skips it rather than grow.
    #[inline]
    fn queue(&mut self, b: u64) {
        let pct = self.pct[self.region.min(self.pct.len() - 1)];
        if self.coin.u32(0..=10_000) <= pct && self.again.len() < self.again.capacity() {
            self.again.push_back(b);
            self.queued[self.phase ^ 1] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's own distribution for its example (spr_op=0.15, 100 regions): region 0 rewrites
    /// 24.79% of its blocks, down to 0% in the last; the mean validity is 1/(1 + op).
    #[test]
    fn the_invalid_shares_are_fios() {
        let p = invalid_pct(Spr {
            op: 0.15,
            regions: 100,
        });
        assert_eq!(p[..5], [2479, 2458, 2436, 2414, 2392]);
        assert_eq!(p[95..], [114, 86, 57, 29, 0]);
        let mean = p.iter().map(|v| 1.0 - f64::from(*v) / 1e4).sum::<f64>() / 100.0;
        assert!((mean - 1.0 / 1.15).abs() < 0.001, "{mean}");
        assert_eq!(
            invalid_pct(Spr {
                op: 0.15,
                regions: 4
            }),
            [2479, 1730, 906, 0]
        );
        assert_eq!(physical_bytes(1 << 20, 0.15, 4096), 1_205_862 / 4096 * 4096);
    }

    #[test]
    fn the_permutation_gives_every_block_once() {
        for n in [1, 2, 3, 1000, 4096, 5000] {
            let mut p = Permutation::new(n, 7);
            let mut seen = vec![false; n as usize];
            while let Some(b) = p.next() {
                assert!(!seen[b as usize], "block {b} of {n} twice");
                seen[b as usize] = true;
            }
            assert!(seen.iter().all(|s| *s), "{n}");
        }
        // Not in order: a random walk, seeded.
        let a: Vec<u64> = std::iter::from_fn({
            let mut p = Permutation::new(1000, 7);
            move || p.next()
        })
        .collect();
        assert!(a.windows(2).filter(|w| w[1] == w[0] + 1).count() < 50);
    }

    /// The sequence: every block at least once, the physical size in all, and the rewrites of
    /// each region's share at the start of the next one (region 0's share, 24.8%, the most).
    #[test]
    fn each_region_rewrites_its_share_at_the_next_ones_start() {
        let s = Spr {
            op: 0.15,
            regions: 10,
        };
        let blocks = 20_000;
        let mut spr = SpRandom::new(s, blocks, 4096, 3);
        let mut order = Vec::new();
        while let Some(b) = spr.next_block() {
            order.push(b);
        }
        let physical = physical_bytes(blocks * 4096, 0.15, 4096) / 4096;
        assert!(order.len() as u64 <= physical);
        assert!(order.len() as u64 >= physical * 99 / 100, "{}", order.len());
        let mut count = vec![0u32; blocks as usize];
        for b in &order {
            count[*b as usize] += 1;
        }
        assert!(count.iter().all(|c| *c >= 1), "a block never written");
        // Region 1 starts with region 0's rewrites: blocks first written in region 0.
        let per = physical / 10;
        let region0: std::collections::HashSet<u64> =
            order[..per as usize].iter().copied().collect();
        // (Its first write is a new block: fio moves to the next region on a new write.)
        let replays = order[per as usize + 1..]
            .iter()
            .take_while(|b| region0.contains(b))
            .count();
        let share = replays as f64 / per as f64;
        let want = invalid_pct(s)[0] as f64 / 1e4;
        assert!(
            (share - want).abs() < 0.03,
            "{share} rewritten, fio's share {want}"
        );
        // Near miss: twice the over-provisioning, more rewrites.
        let rewrites = |op: f64| {
            let mut spr = SpRandom::new(Spr { op, regions: 10 }, blocks, 4096, 3);
            std::iter::from_fn(|| spr.next_block()).count() as u64 - blocks
        };
        let (a, b) = (rewrites(0.15), rewrites(0.3));
        assert!(b > a * 3 / 2, "{a} rewrites at 15%, {b} at 30%");
    }
}
