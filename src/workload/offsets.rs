//! Where each IO goes. Random offsets are uniform over the range and aligned to the block
//! size; a sequential stream walks its own slice of the range, so the streams of different
//! threads never overlap (two threads reading the same blocks would measure the cache).

/// One thread's offset stream.
pub struct Offsets {
    random: bool,
    sampler: super::distribution::Sampler,
    rng: fastrand::Rng,
    /// First byte of this stream's region.
    base: u64,
    /// Blocks in the region.
    blocks: u64,
    bs: u64,
    /// Sequential position of reads and of writes apart: a sequential mix is a read stream and
    /// a write stream over the region (as fio keeps a position per direction), not one stream
    /// whose blocks are alternately read and written.
    cursor: [u64; 2],
}

impl Offsets {
    /// Stream `thread` of `threads` over `[range_start, range_start + range_len)`.
    /// The caller guarantees `range_len / bs >= threads` (checked in `Spec::check_target`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        random: bool,
        distribution: super::Distribution,
        seed: u64,
        thread: u32,
        threads: u32,
        range_start: u64,
        range_len: u64,
        bs: u64,
    ) -> Offsets {
        let total = range_len / bs;
        let (base, blocks) = if random {
            (range_start, total)
        } else {
            let per = total / u64::from(threads);
            let first = per * u64::from(thread);
            let blocks = if thread + 1 == threads {
                total - first
            } else {
                per
            };
            (range_start + first * bs, blocks)
        };
        Offsets {
            random,
            sampler: super::distribution::Sampler::new(distribution, blocks.max(1)),
            rng: fastrand::Rng::with_seed(thread_seed(seed, thread)),
            base,
            blocks: blocks.max(1),
            bs,
            cursor: [0, 0],
        }
    }

    /// The next offset of a read, or with `write` of a write.
    #[inline]
    pub fn next_offset(&mut self, write: bool) -> u64 {
        let block = if self.random {
            self.sampler.block(&mut self.rng)
        } else {
            let c = &mut self.cursor[usize::from(write)];
            let b = *c;
            *c += 1;
            if *c == self.blocks {
                *c = 0;
            }
            b
        };
        self.base + block * self.bs
    }

    /// True with probability `pct`/100: whether the next IO of a mix reads.
    #[inline]
    pub fn coin(&mut self, pct: u8) -> bool {
        self.rng.u8(0..100) < pct
    }
}

/// Distinct, well-mixed seeds per thread from one user seed.
pub fn thread_seed(seed: u64, thread: u32) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (u64::from(thread) + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Regression (issue 10, item 7): a sequential `rw` mix shared one cursor, so reads and
    // writes took turns on one stream instead of each streaming through the region.
    #[test]
    fn a_sequential_mix_has_a_read_stream_and_a_write_stream() {
        let bs = 4096;
        let mut o = Offsets::new(
            false,
            crate::workload::Distribution::Uniform,
            1,
            0,
            1,
            0,
            64 * bs,
            bs,
        );
        let pattern = [false, true, true, false, true, false, false, false];
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        for &w in &pattern {
            let off = o.next_offset(w);
            if w {
                writes.push(off)
            } else {
                reads.push(off)
            }
        }
        assert_eq!(reads, [0, bs, 2 * bs, 3 * bs, 4 * bs]);
        assert_eq!(writes, [0, bs, 2 * bs]);
    }

    #[test]
    fn random_offsets_cover_the_range() {
        let bs = 4096;
        let blocks = 256;
        let mut o = Offsets::new(
            true,
            crate::workload::Distribution::Uniform,
            7,
            0,
            1,
            1 << 20,
            blocks * bs,
            bs,
        );
        let mut seen = vec![false; blocks as usize];
        for _ in 0..20_000 {
            let off = o.next_offset(false);
            seen[((off - (1 << 20)) / bs) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "every block is reached");
    }

    #[test]
    fn same_seed_same_offsets_other_seed_other_offsets() {
        let a: Vec<u64> = {
            let mut o = Offsets::new(
                true,
                crate::workload::Distribution::Uniform,
                42,
                0,
                1,
                0,
                1 << 30,
                4096,
            );
            (0..100).map(|_| o.next_offset(false)).collect()
        };
        let b: Vec<u64> = {
            let mut o = Offsets::new(
                true,
                crate::workload::Distribution::Uniform,
                42,
                0,
                1,
                0,
                1 << 30,
                4096,
            );
            (0..100).map(|_| o.next_offset(false)).collect()
        };
        let c: Vec<u64> = {
            let mut o = Offsets::new(
                true,
                crate::workload::Distribution::Uniform,
                43,
                0,
                1,
                0,
                1 << 30,
                4096,
            );
            (0..100).map(|_| o.next_offset(false)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn sequential_streams_do_not_overlap_and_cover_the_range() {
        let bs = 8192;
        let threads = 3;
        let range = 100 * bs;
        let mut owner = vec![None; 100];
        for t in 0..threads {
            let mut o = Offsets::new(
                false,
                crate::workload::Distribution::Uniform,
                1,
                t,
                threads,
                0,
                range,
                bs,
            );
            let first = o.next_offset(false);
            let mut prev = first;
            // Walk one full lap of the stream.
            loop {
                let b = (prev / bs) as usize;
                assert!(
                    owner[b].is_none() || owner[b] == Some(t),
                    "block {b} shared"
                );
                owner[b] = Some(t);
                let next = o.next_offset(false);
                if next == first {
                    break;
                }
                assert_eq!(next, prev + bs, "sequential");
                prev = next;
            }
        }
        assert!(
            owner.iter().all(|o| o.is_some()),
            "the streams cover the range"
        );
    }

    proptest! {
        #[test]
        fn offsets_are_aligned_and_in_range(
            random in any::<bool>(),
            seed in any::<u64>(),
            threads in 1u32..16,
            bs_shift in 9u32..21,
            blocks in 16u64..10_000,
            start_blocks in 0u64..1000,
        ) {
            let bs = 1u64 << bs_shift;
            prop_assume!(blocks >= u64::from(threads));
            let start = start_blocks * bs;
            for t in 0..threads {
                let mut o = Offsets::new(random, crate::workload::Distribution::Uniform, seed, t, threads, start, blocks * bs, bs);
                for _ in 0..200 {
                    let off = o.next_offset(false);
                    prop_assert_eq!(off % bs, 0);
                    prop_assert!(off >= start && off + bs <= start + blocks * bs);
                }
            }
        }

        #[test]
        fn mix_coin_matches_its_percentage(pct in 0u8..=100, seed in any::<u64>()) {
            let mut o = Offsets::new(true, crate::workload::Distribution::Uniform, seed, 0, 1, 0, 1 << 20, 4096);
            let n = 20_000;
            let reads = (0..n).filter(|_| o.coin(pct)).count() as f64;
            let expect = n as f64 * f64::from(pct) / 100.0;
            // Binomial sd at most sqrt(n)/2 = 71; allow 5 sd.
            prop_assert!((reads - expect).abs() < 360.0, "{} reads for {}%", reads, pct);
        }
    }
}
