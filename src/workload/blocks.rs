//! Block-size mixes: a workload that issues more than one size (fio's `bs=R,W`, `bsrange`,
//! `bssplit`). A [`BsMix`] is the description (sizes and weights per direction, kept in the
//! result); a [`Table`] is what a worker draws from per IO — a slice of sizes in proportion
//! to their weights, built once before the run, indexed by the worker's seeded RNG, so a draw
//! costs one random number and one load.
//!
//! fio's rules, followed here (io_u.c `get_next_buflen`, with `bs_unaligned` off): a `bsrange`
//! draws `min + U·max` aligned down to `min` and capped at `max`, so the sizes are the
//! multiples of `min` up to `max` with equal weights (the last one's share cut where `max` is
//! not a multiple); a `bssplit` draws each size with its percentage; offsets are aligned to the
//! smallest size of their direction.

use serde::{Deserialize, Serialize};

/// One size of a mix and its weight (a percentage for `bssplit`, a share for `bsrange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsWeight {
    pub bs: u64,
    pub weight: u64,
}

/// The sizes reads and writes draw from; a direction the workload does not issue still has
/// its sizes (fio keeps them too), they are just never drawn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsMix {
    pub read: Vec<BsWeight>,
    pub write: Vec<BsWeight>,
    /// What random offsets are aligned to, when not each direction's smallest size (fio's
    /// `blockalign`: JESD219 draws 512 B to 64 KiB IOs at 4 KiB-aligned offsets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<u64>,
}

/// Slots of a table at most: enough for any `bssplit` (weights are percentages, 100 slots are
/// exact) and for a `bsrange` of up to 4096 sizes exactly; beyond, weights are rounded.
const MAX_SLOTS: u64 = 4096;

impl BsMix {
    /// Whether reads and writes both issue one and the same size: then it is no mix.
    pub fn fixed(&self) -> Option<u64> {
        let one = |d: &[BsWeight]| match d {
            [w] => Some(w.bs),
            _ => None,
        };
        match (one(&self.read), one(&self.write)) {
            (Some(r), Some(w)) if r == w => Some(r),
            _ => None,
        }
    }

    /// The smallest size of a direction (`write`) — what its offsets are aligned to.
    pub fn min_of(&self, write: bool) -> u64 {
        self.dir(write).iter().map(|w| w.bs).min().unwrap_or(0)
    }

    pub fn min(&self) -> u64 {
        self.min_of(false).min(self.min_of(true))
    }

    pub fn max(&self) -> u64 {
        self.all().map(|w| w.bs).max().unwrap_or(0)
    }

    /// Every size of both directions.
    pub fn all(&self) -> impl Iterator<Item = &BsWeight> {
        self.read.iter().chain(self.write.iter())
    }

    pub fn dir(&self, write: bool) -> &[BsWeight] {
        if write {
            &self.write
        } else {
            &self.read
        }
    }

    /// The mean size of the IOs of a workload reading `read_pct`% of the time.
    pub fn mean(&self, read_pct: u8) -> f64 {
        let mean = |d: &[BsWeight]| {
            let total: u64 = d.iter().map(|w| w.weight).sum();
            d.iter().map(|w| w.bs as f64 * w.weight as f64).sum::<f64>() / total.max(1) as f64
        };
        let r = f64::from(read_pct) / 100.0;
        mean(&self.read) * r + mean(&self.write) * (1.0 - r)
    }

    /// `4K/50:64K/50`, or `read 4K, write 64K/50:1M/50` when the directions differ.
    pub fn label(&self) -> String {
        let one = |d: &[BsWeight]| match d {
            [w] => crate::units::bs_label(w.bs),
            _ => {
                let total: u64 = d.iter().map(|w| w.weight).sum::<u64>().max(1);
                d.iter()
                    .map(|w| {
                        let pct = w.weight as f64 * 100.0 / total as f64;
                        format!("{}/{}", crate::units::bs_label(w.bs), round_pct(pct))
                    })
                    .collect::<Vec<_>>()
                    .join(":")
            }
        };
        let sizes = if self.read == self.write {
            one(&self.read)
        } else {
            format!("read {}, write {}", one(&self.read), one(&self.write))
        };
        match self.align {
            Some(a) => format!("{sizes} at {} offsets", crate::units::bs_label(a)),
            None => sizes,
        }
    }

    /// The mix as fio's `bssplit` writes it (`4k/50:64k/50`, `,` between reads and writes when
    /// they differ), weights as percentages.
    pub fn fio_split(&self) -> String {
        let one = |d: &[BsWeight]| {
            let total: u64 = d.iter().map(|w| w.weight).sum::<u64>().max(1);
            d.iter()
                .map(|w| {
                    let pct = (w.weight as f64 * 100.0 / total as f64).round() as u64;
                    format!("{}/{pct}", crate::units::bs_label(w.bs).to_lowercase())
                })
                .collect::<Vec<_>>()
                .join(":")
        };
        if self.read == self.write {
            one(&self.read)
        } else {
            format!("{},{}", one(&self.read), one(&self.write))
        }
    }

    /// fio's `bsrange=min-max` sizes: the multiples of `min` up to `max`, each with the share of
    /// `min + U·max` that falls on it (see the module doc).
    pub fn range(min: u64, max: u64) -> Vec<BsWeight> {
        let mut out: Vec<BsWeight> = Vec::new();
        let mut k = 0u64;
        while min > 0 && k * min < max {
            let lo = k * min;
            let hi = ((k + 1) * min).min(max);
            let bs = (min + k * min).min(max);
            match out.last_mut() {
                Some(last) if last.bs == bs => last.weight += hi - lo,
                _ => out.push(BsWeight {
                    bs,
                    weight: hi - lo,
                }),
            }
            k += 1;
        }
        if out.is_empty() {
            out.push(BsWeight { bs: min, weight: 1 });
        }
        out
    }
}

fn round_pct(p: f64) -> String {
    if (p - p.round()).abs() < 0.05 {
        format!("{}", p.round() as u64)
    } else {
        format!("{p:.1}")
    }
}

/// A direction's sizes in proportion to their weights, drawn from with one random index.
#[derive(Clone, Debug)]
pub struct Table {
    slots: Box<[u32]>,
}

impl Table {
    /// The table of `sizes` (each at most 64 MiB, so it fits the engine's `u32` lengths):
    /// as many slots as the weights need to be exact, up to [`MAX_SLOTS`], where the largest
    /// remainders get the slots left (every size keeps at least one).
    pub fn new(sizes: &[BsWeight]) -> Table {
        let sizes: Vec<BsWeight> = sizes.iter().copied().filter(|w| w.weight > 0).collect();
        let g = sizes.iter().fold(0, |g, w| gcd(g, w.weight)).max(1);
        let total: u64 = sizes.iter().map(|w| w.weight / g).sum();
        let n = total.clamp(1, MAX_SLOTS.max(sizes.len() as u64));
        let exact: Vec<f64> = sizes
            .iter()
            .map(|w| (w.weight / g) as f64 * n as f64 / total as f64)
            .collect();
        let mut count: Vec<u64> = exact.iter().map(|e| (e.floor() as u64).max(1)).collect();
        let mut left = n.saturating_sub(count.iter().sum());
        let mut order: Vec<usize> = (0..sizes.len()).collect();
        order.sort_by(|&a, &b| {
            let ra = exact[a] - exact[a].floor();
            let rb = exact[b] - exact[b].floor();
            rb.total_cmp(&ra)
        });
        for &i in order.iter().cycle().take(sizes.len() * 2) {
            if left == 0 {
                break;
            }
            count[i] += 1;
            left -= 1;
        }
        let mut slots = Vec::with_capacity(count.iter().sum::<u64>() as usize);
        for (w, c) in sizes.iter().zip(&count) {
            slots.extend(std::iter::repeat_n(w.bs as u32, *c as usize));
        }
        if slots.is_empty() {
            slots.push(4096);
        }
        Table {
            slots: slots.into_boxed_slice(),
        }
    }

    /// One size, drawn with `rng`.
    #[inline]
    pub fn draw(&self, rng: &mut fastrand::Rng) -> u32 {
        self.slots[rng.usize(..self.slots.len())]
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.slots.len()
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(bs: u64, weight: u64) -> BsWeight {
        BsWeight { bs, weight }
    }

    #[test]
    fn a_split_is_drawn_in_its_proportions() {
        let t = Table::new(&[w(4096, 50), w(65536, 30), w(1 << 20, 20)]);
        assert_eq!(t.len(), 10, "50:30:20 needs ten slots");
        let mut rng = fastrand::Rng::with_seed(9);
        let n = 200_000;
        let mut seen = [0u32; 3];
        for _ in 0..n {
            match t.draw(&mut rng) {
                4096 => seen[0] += 1,
                65536 => seen[1] += 1,
                1048576 => seen[2] += 1,
                s => panic!("drew {s}"),
            }
        }
        for (got, want) in seen.iter().zip([0.5, 0.3, 0.2]) {
            let share = f64::from(*got) / f64::from(n);
            assert!((share - want).abs() < 0.01, "{share} for {want}");
        }
    }

    #[test]
    fn a_range_follows_fios_draw() {
        // 4k-64k: the sixteen multiples of 4k, equally likely.
        let r = BsMix::range(4096, 65536);
        assert_eq!(r.len(), 16);
        assert!(r.iter().all(|x| x.weight == 4096 && x.bs % 4096 == 0));
        assert_eq!((r[0].bs, r[15].bs), (4096, 65536));
        // 4k-10k: 4k and 8k, and 10k from the capped tail (half as likely).
        assert_eq!(
            BsMix::range(4096, 10240),
            vec![w(4096, 4096), w(8192, 4096), w(10240, 2048)]
        );
        assert_eq!(Table::new(&BsMix::range(4096, 10240)).len(), 5);
    }

    #[test]
    fn a_large_range_is_rounded_but_keeps_every_size() {
        let r = BsMix::range(512, 64 << 20);
        let t = Table::new(&r);
        assert!(t.len() >= r.len());
    }

    #[test]
    fn labels_say_the_mix() {
        let split = vec![w(4096, 50), w(65536, 50)];
        let m = BsMix {
            read: split.clone(),
            write: split.clone(),
            align: None,
        };
        assert_eq!(m.label(), "4K/50:64K/50");
        assert_eq!(m.fio_split(), "4k/50:64k/50");
        assert_eq!(m.mean(100), 34816.0);
        assert_eq!((m.min(), m.max()), (4096, 65536));
        let aligned = BsMix {
            align: Some(8192),
            ..m.clone()
        };
        assert_eq!(aligned.label(), "4K/50:64K/50 at 8K offsets");
        let m = BsMix {
            read: vec![w(4096, 1)],
            write: split,
            align: None,
        };
        assert_eq!(m.label(), "read 4K, write 4K/50:64K/50");
        assert_eq!(m.min_of(false), 4096);
        assert_eq!(m.fixed(), None);
    }
}
