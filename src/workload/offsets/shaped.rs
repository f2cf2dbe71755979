//! The shaped path of [`Offsets`]: a workload with a [`Shape`](crate::workload::Shape) — a
//! block-size mix, fio's `:N`, or per-thread regions (`offset_increment`) — takes it, chosen
//! once per IO by one branch, so the plain fixed-size path stays as it was. On it, each IO's
//! size is drawn from its direction's [`Table`] with the same seeded RNG; random offsets are in
//! units of the smallest size of the mix and aligned down to the smallest size of their
//! direction (fio's `blockalign` default), never so close to the end that the largest size
//! would not fit; sequential offsets follow the previous IO of their direction (plus the `:N`
//! skip) and wrap to the region's start.

use super::{thread_seed, Offsets};
use crate::workload::blocks::Table;
use crate::workload::Spec;

/// Per direction (index 0 reads, 1 writes) unless said otherwise.
pub(super) struct Shaped {
    /// Sizes drawn per IO, or `None` for one size, `fixed`.
    tables: [Option<Table>; 2],
    fixed: [u32; 2],
    /// Random offsets are aligned down to this.
    align: [u64; 2],
    /// Bytes of this stream's region.
    pub(super) region: u64,
    /// Random patterns: IOs per random offset (`:N`), and how many sequential ones are left
    /// before the next — one count for both directions, as fio keeps one per job.
    run: u32,
    left: u32,
    /// Where the next sequential IO starts, relative to the region.
    next: [u64; 2],
    /// Bytes skipped after a sequential IO; negative walks backwards.
    skip: i64,
}

impl Offsets {
    /// Thread `thread`'s shaped stream of `spec` over `[range_start, range_start + range_len)`.
    /// The caller guarantees what `Spec::check_target` checks.
    pub(super) fn shaped(spec: &Spec, thread: u32, range_start: u64, range_len: u64) -> Offsets {
        let shape = &spec.shape;
        let dir = |write: bool| -> (Option<Table>, u32, u64) {
            match &shape.mix {
                Some(m) => match m.dir(write) {
                    [one] => (None, one.bs as u32, one.bs),
                    many => (Some(Table::new(many)), 0, m.min_of(write)),
                },
                None => (None, spec.bs.bytes() as u32, spec.bs.bytes()),
            }
        };
        let (tr, fr, ar) = dir(false);
        let (tw, fw, aw) = dir(true);
        // fio's blockalign, where the job gave one.
        let (ar, aw) = match shape.mix.as_ref().and_then(|m| m.align) {
            Some(a) => (a, a),
            None => (ar, aw),
        };
        let unit = shape
            .mix
            .as_ref()
            .map_or(spec.bs.bytes(), |m| m.min())
            .max(1);
        let largest = spec.max_bs();
        let (base, region) = match shape.stride {
            Some(s) => (
                range_start + s * u64::from(thread),
                spec.region_bytes(range_len),
            ),
            None if spec.rw.random() => (range_start, range_len),
            None => {
                let total = range_len / unit;
                let per = total / u64::from(spec.threads.max(1));
                let first = per * u64::from(thread);
                let units = if thread + 1 == spec.threads {
                    total - first
                } else {
                    per
                };
                (range_start + first * unit, units * unit)
            }
        };
        // Random offsets in units of the smallest size, none so late the largest would not fit.
        let blocks = (region.saturating_sub(largest) / unit + 1).max(1);
        Offsets {
            random: spec.rw.random(),
            sampler: crate::workload::distribution::Sampler::new(spec.distribution, blocks),
            rng: fastrand::Rng::with_seed(thread_seed(spec.seed, thread)),
            base,
            blocks,
            bs: unit,
            cursor: [0, 0],
            zone: None,
            zbd: None,
            trims: false,
            spr: None,
            shaped: Some(Box::new(Shaped {
                tables: [tr, tw],
                fixed: [fr, fw],
                align: [ar.max(1), aw.max(1)],
                region,
                run: if spec.rw.random() { shape.seq_run } else { 0 },
                // fio starts a run's count at N, so its first N − 1 IOs follow the region's start.
                left: if spec.rw.random() {
                    shape.seq_run.saturating_sub(1)
                } else {
                    0
                },
                next: [0, 0],
                skip: if spec.rw.random() { 0 } else { shape.seq_skip },
            })),
        }
    }

    pub(super) fn next_shaped(&mut self, write: bool) -> (u64, u32) {
        let d = usize::from(write);
        let Some(sh) = self.shaped.as_deref_mut() else {
            return (self.base, self.bs as u32);
        };
        let len = match &sh.tables[d] {
            Some(t) => t.draw(&mut self.rng),
            None => sh.fixed[d],
        };
        let len64 = u64::from(len);
        let rel = if self.random {
            if sh.left > 0 && sh.next[d] + len64 <= sh.region {
                sh.left -= 1;
                sh.next[d]
            } else {
                sh.left = sh.run.saturating_sub(1);
                let r = self.sampler.block(&mut self.rng) * self.bs;
                r - r % sh.align[d]
            }
        } else if sh.next[d] + len64 > sh.region {
            0
        } else {
            sh.next[d]
        };
        // Walking backwards past the region's start goes on from its end, as fio's does: the
        // next IO starts the skip's length before the end (`read:-8k` of 4 KiB: 0, end − 8k,
        // end − 12k …). `check_target` keeps the skip within the region.
        sh.next[d] = match (rel + len64).checked_add_signed(sh.skip) {
            Some(n) => n,
            None => sh.region.saturating_sub(sh.skip.unsigned_abs()),
        };
        (self.base + rel, len)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::*;

    fn split(sizes: &[(u64, u64)]) -> crate::workload::BsMix {
        let d: Vec<_> = sizes
            .iter()
            .map(|&(bs, weight)| crate::workload::blocks::BsWeight { bs, weight })
            .collect();
        crate::workload::BsMix {
            read: d.clone(),
            write: d,
            align: None,
        }
    }

    #[test]
    fn a_mix_draws_its_sizes_aligned_and_inside_the_range() {
        use crate::workload::Rw;
        let shape = crate::workload::Shape {
            mix: Some(split(&[(4096, 50), (65536, 30), (1 << 20, 20)])),
            ..Default::default()
        };
        let (start, len) = (1 << 20, 64 << 20);
        let s = spec(Rw::Randrw, 1, shape.clone());
        let mut o = Offsets::of(&s, 0, start, len);
        let mut n = [0u32; 3];
        let draws = 100_000;
        for i in 0..draws {
            let (off, l) = o.next_io(i % 2 == 0);
            assert!(
                off >= start && off + u64::from(l) <= start + len,
                "{off}+{l}"
            );
            assert_eq!((off - start) % 4096, 0, "aligned to the smallest size");
            n[match l {
                4096 => 0,
                65536 => 1,
                1048576 => 2,
                _ => panic!("size {l}"),
            }] += 1;
        }
        for (got, want) in n.iter().zip([0.5, 0.3, 0.2]) {
            let share = f64::from(*got) / f64::from(draws);
            assert!((share - want).abs() < 0.01, "{share} for {want}");
        }
        // Sequential streams of a mix: each IO follows the last, inside each thread's slice.
        let s = spec(Rw::Read, 3, shape);
        for t in 0..3 {
            let mut o = Offsets::of(&s, t, start, len);
            let slice = len / 3 / 4096 * 4096;
            let (mut prev, mut plen) = o.next_io(false);
            assert_eq!(prev, start + u64::from(t) * slice);
            for _ in 0..500 {
                let (off, l) = o.next_io(false);
                assert!(off == prev + u64::from(plen) || off == start + u64::from(t) * slice);
                assert!(off + u64::from(l) <= start + (u64::from(t) + 1) * slice);
                (prev, plen) = (off, l);
            }
        }
    }

    /// fio's blockalign (JESD219): 512 B to 64 KiB IOs, every one at a 4 KiB offset, and
    /// still every 4 KiB offset used.
    #[test]
    fn a_mix_with_an_alignment_puts_every_io_on_it() {
        let mut mix = split(&[(512, 10), (4096, 60), (65536, 30)]);
        mix.align = Some(4096);
        let shape = crate::workload::Shape {
            mix: Some(mix),
            ..Default::default()
        };
        let s = spec(crate::workload::Rw::Randrw, 1, shape);
        let mut o = Offsets::of(&s, 0, 0, 16 << 20);
        let mut small = 0;
        let mut seen = std::collections::HashSet::new();
        for i in 0..20_000 {
            let (off, l) = o.next_io(i % 2 == 1);
            assert_eq!(off % 4096, 0, "{off}");
            assert!(off + u64::from(l) <= 16 << 20);
            small += u32::from(l == 512);
            seen.insert(off);
        }
        assert!(small > 1000, "the 512 B IOs are drawn: {small}");
        assert!(
            seen.len() > 3000,
            "offsets spread over the range: {}",
            seen.len()
        );
    }

    #[test]
    fn each_direction_aligns_to_its_own_smallest_size() {
        use crate::workload::blocks::BsWeight;
        let shape = crate::workload::Shape {
            mix: Some(crate::workload::BsMix {
                read: vec![BsWeight {
                    bs: 4096,
                    weight: 1,
                }],
                write: vec![
                    BsWeight {
                        bs: 65536,
                        weight: 1,
                    },
                    BsWeight {
                        bs: 131072,
                        weight: 1,
                    },
                ],
                align: None,
            }),
            ..Default::default()
        };
        let s = spec(crate::workload::Rw::Randrw, 1, shape);
        let mut o = Offsets::of(&s, 0, 0, 16 << 20);
        let mut unaligned_reads = 0;
        for i in 0..10_000 {
            let write = i % 2 == 1;
            let (off, l) = o.next_io(write);
            if write {
                assert_eq!(off % 65536, 0);
                assert!(l == 65536 || l == 131072);
            } else {
                assert_eq!(l, 4096);
                unaligned_reads += u32::from(off % 65536 != 0);
            }
        }
        assert!(unaligned_reads > 4000, "reads use every 4k offset");
    }

    #[test]
    fn a_random_run_of_n_follows_each_random_offset() {
        use crate::workload::Rw;
        let shape = crate::workload::Shape {
            seq_run: 4,
            ..Default::default()
        };
        let s = spec(Rw::Randread, 1, shape);
        let mut o = Offsets::of(&s, 0, 0, 1 << 30);
        let offs: Vec<u64> = (0..4003).map(|_| o.next_io(false).0).collect();
        // fio's count starts at N: the first three follow the region's start.
        assert_eq!(offs[..3], [0, 4096, 8192]);
        let mut jumps = 0;
        for (i, w) in offs[3..].windows(2).enumerate() {
            if (i + 1) % 4 == 0 {
                jumps += u32::from(w[1] != w[0] + 4096);
            } else {
                assert_eq!(w[1], w[0] + 4096, "IO {} follows the one before", i + 4);
            }
        }
        assert!(
            jumps > 900,
            "a new random offset every 4 IOs: {jumps} of 1000"
        );
    }

    #[test]
    fn a_sequential_skip_leaves_holes_and_wraps() {
        let shape = crate::workload::Shape {
            seq_skip: 8192,
            ..Default::default()
        };
        let s = spec(crate::workload::Rw::Write, 1, shape);
        let mut o = Offsets::of(&s, 0, 1 << 20, 10 * 4096);
        let offs: Vec<u64> = (0..5).map(|_| o.next_io(true).0 - (1 << 20)).collect();
        // 0, 12k, 24k, 36k (the last block of the 40k range), then back to the start.
        assert_eq!(offs, [0, 12288, 24576, 36864, 0]);
    }

    /// fio's backwards-read.fio (`rw=read:-8k` of 4 KiB blocks): the first block, then from the
    /// end backwards, a block before the last each time, and from the end again past the start.
    #[test]
    fn a_negative_skip_walks_backwards_from_the_end() {
        let shape = crate::workload::Shape {
            seq_skip: -8192,
            ..Default::default()
        };
        let s = spec(crate::workload::Rw::Read, 1, shape);
        let mut o = Offsets::of(&s, 0, 1 << 20, 4 * 4096);
        let offs: Vec<u64> = (0..6).map(|_| o.next_io(false).0 - (1 << 20)).collect();
        assert_eq!(offs, [0, 8192, 4096, 0, 8192, 4096]);
    }

    #[test]
    fn offset_increment_gives_each_thread_its_region() {
        use crate::workload::Rw;
        let shape = crate::workload::Shape {
            stride: Some(8 << 20),
            ..Default::default()
        };
        // Four regions of 1 MiB, 8 MiB apart, after a start of 4 KiB: a span of 25 MiB.
        let (start, span) = (4096, (1 << 20) + 3 * (8 << 20));
        for rw in [Rw::Randwrite, Rw::Write] {
            let s = spec(rw, 4, shape.clone());
            assert_eq!(s.region_bytes(span), 1 << 20);
            for t in 0..4u64 {
                let mut o = Offsets::of(&s, t as u32, start, span);
                let lo = start + t * (8 << 20);
                let first = o.next_io(true).0;
                if !rw.random() {
                    assert_eq!(first, lo, "a sequential clone starts at its region");
                }
                for _ in 0..2000 {
                    let (off, len) = o.next_io(true);
                    assert!(
                        off >= lo && off + u64::from(len) <= lo + (1 << 20),
                        "{rw:?} {t}: {off}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_threads_region_must_hold_the_largest_size() {
        use crate::workload::Rw;
        let shape = crate::workload::Shape {
            mix: Some(split(&[(4096, 50), (1 << 20, 50)])),
            ..Default::default()
        };
        // Two sequential slices of 768 KiB cannot hold a 1 MiB IO; one random region can.
        let range = 3 << 19;
        assert!(spec(Rw::Read, 2, shape.clone())
            .check_target(range, 512)
            .is_err_and(|e| e.to_string().contains("largest block (1M)")));
        assert!(spec(Rw::Randread, 2, shape.clone())
            .check_target(range, 512)
            .is_ok());
        // A size that O_DIRECT cannot issue on a 4 KiB-sector device is refused.
        let odd = crate::workload::Shape {
            mix: Some(split(&[(4096, 50), (6144, 50)])),
            ..Default::default()
        };
        assert!(spec(Rw::Randread, 1, odd)
            .check_target(1 << 20, 4096)
            .is_err());
        // offset_increment regions that leave nothing are refused.
        let wide = crate::workload::Shape {
            stride: Some(1 << 20),
            ..Default::default()
        };
        assert!(spec(Rw::Randread, 4, wide)
            .check_target(3 << 20, 512)
            .is_err());
    }
}
