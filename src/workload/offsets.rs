//! Where each IO goes. Random offsets are uniform over the range and aligned to the block
//! size; a sequential stream walks its own slice of the range, so the streams of different
//! threads never overlap (two threads reading the same blocks would measure the cache).
//!
//! A workload with a [`Shape`](super::Shape) — a block-size mix, fio's `:N`, or per-thread
//! regions (`offset_increment`) — takes the second path, `shaped`.

mod shaped;

use super::Spec;
use shaped::Shaped;

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
    /// The shaped path's state; `None` on the plain path.
    shaped: Option<Box<Shaped>>,
    /// fio's strided zones on the plain path: `base` and `blocks` are then the zone's.
    zone: Option<ZoneWalk>,
    /// fio's zonemode=zbd: the job's write pointers, which every write of the plain path
    /// goes to (reads keep the stream's own offsets).
    zbd: Option<std::sync::Arc<super::zbd::ZoneTable>>,
    /// The stream's IOs are trims of those zones (fio's `rw=trim` there).
    trims: bool,
    /// fio's sprandom: the blocks of the stream's writes, until its sequence ends.
    spr: Option<Box<super::sprandom::SpRandom>>,
}

/// Where a stream is in its strided zones (see [`super::Strided`]), in blocks of its region.
struct ZoneWalk {
    region_base: u64,
    region_blocks: u64,
    /// Blocks of a zone, of IO before the next zone, and skipped between two.
    range: u64,
    size: u64,
    skip: u64,
    /// The zone's first block in the region, and the blocks moved in it so far.
    first: u64,
    moved: u64,
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
            shaped: None,
            zone: None,
            zbd: None,
            trims: false,
            spr: None,
        }
    }

    /// The stream's writes at the write pointers of `table` (fio's zonemode=zbd).
    /// With `trims`, each IO resets a zone instead (fio's trims there), the stream's blocks
    /// being whole zones.
    pub fn at_write_pointers(
        mut self,
        table: std::sync::Arc<super::zbd::ZoneTable>,
        trims: bool,
    ) -> Offsets {
        self.zbd = Some(table);
        self.trims = trims;
        self
    }

    /// The stream in strided zones over its region: the first zone at the region's start.
    fn in_zones(mut self, z: super::Strided, distribution: super::Distribution) -> Offsets {
        let bs = self.bs;
        let range = (z.range / bs).clamp(1, self.blocks);
        self.zone = Some(ZoneWalk {
            region_base: self.base,
            region_blocks: self.blocks,
            range,
            size: (z.size / bs).max(1),
            skip: z.skip / bs,
            first: 0,
            moved: 0,
        });
        self.blocks = range;
        self.sampler = super::distribution::Sampler::new(distribution, range);
        self
    }

    /// After an IO in a zone: the next zone once `size` blocks have moved in this one (fio's
    /// setup_strided_zone_mode), clipped at the region's end, the first again past it.
    #[inline]
    fn zone_step(&mut self) {
        let Some(z) = &mut self.zone else {
            return;
        };
        z.moved += 1;
        if z.moved < z.size {
            return;
        }
        z.moved = 0;
        z.first += z.range + z.skip;
        if z.first >= z.region_blocks {
            z.first = 0;
        }
        self.base = z.region_base + z.first * self.bs;
        self.blocks = z.range.min(z.region_blocks - z.first);
        self.cursor = [0, 0];
    }

    /// Thread `thread`'s stream of `spec` over `[range_start, range_start + range_len)`: the
    /// plain stream of [`Offsets::new`] unless the spec has a shape.
    /// The caller guarantees what `Spec::check_target` checks.
    pub fn of(spec: &Spec, thread: u32, range_start: u64, range_len: u64) -> Offsets {
        if spec.shape.is_plain() {
            let o = Offsets::new(
                spec.rw.random(),
                spec.distribution,
                spec.seed,
                thread,
                spec.threads,
                range_start,
                range_len,
                spec.bs.bytes(),
            );
            return match (spec.shape.zones, spec.shape.spr) {
                (Some(z), _) => o.in_zones(z, spec.distribution),
                (None, Some(s)) => {
                    let seed = thread_seed(spec.seed, thread);
                    Offsets {
                        spr: Some(Box::new(super::sprandom::SpRandom::new(
                            s, o.blocks, o.bs, seed,
                        ))),
                        ..o
                    }
                }
                (None, None) => o,
            };
        }
        Offsets::shaped(spec, thread, range_start, range_len)
    }

    /// The next IO of a read, or with `write` of a write: its offset and its length.
    #[inline]
    pub fn next_io(&mut self, write: bool) -> (u64, u32) {
        if self.shaped.is_none() {
            // A stream whose sequence has ended gives an IO of no bytes: the worker stops.
            if let Some(s) = &mut self.spr {
                return match s.next_block() {
                    Some(b) => (self.base + b * self.bs, self.bs as u32),
                    None => (self.base, 0),
                };
            }
            if let (Some(t), true) = (&self.zbd, write) {
                if self.trims {
                    // No zone holding data to reset: fio's end of the job.
                    return match t.trim(&mut self.rng, self.random) {
                        Some(at) => (at, self.bs as u32),
                        None => (self.base, 0),
                    };
                }
                return (t.write(&mut self.rng, self.random), self.bs as u32);
            }
            let offset = self.next_offset(write);
            self.zone_step();
            return (offset, self.bs as u32);
        }
        self.next_shaped(write)
    }

    /// The next offset of a read, or with `write` of a write.
    #[inline]
    pub fn next_offset(&mut self, write: bool) -> u64 {
        let block = if self.random {
            // fio's sequence: the direction's own count of IOs picks the block (the cursor,
            // which a random stream does not walk).
            let b = match self.sampler.sequence() {
                Some(s) => {
                    let c = &mut self.cursor[usize::from(write)];
                    *c += 1;
                    s.block(*c - 1, self.blocks)
                }
                None => self.sampler.block(&mut self.rng),
            };
            // A zone clipped at the region's end is smaller than the sampler's.
            if b >= self.blocks {
                b % self.blocks
            } else {
                b
            }
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

impl Offsets {
    /// Thread `thread`'s stream in file `file` of a target of several files (fio's `nrfiles`):
    /// [`Offsets::of`] over the file's range, with a seed of the file's own so the files'
    /// random offsets differ. File 0's stream is the one-file stream.
    pub fn of_file(
        spec: &Spec,
        thread: u32,
        file: u32,
        range_start: u64,
        range_len: u64,
    ) -> Offsets {
        let mut o = Offsets::of(spec, thread, range_start, range_len);
        if file > 0 {
            let salt = (u64::from(file)).wrapping_mul(0x94D0_49BB_1331_11EB);
            o.rng = fastrand::Rng::with_seed(thread_seed(spec.seed ^ salt, thread));
        }
        o
    }

    /// IOs of one pass over this stream's region: what fio's `file_service_type=sequential`
    /// does in a file before the next.
    pub fn pass(&self) -> u64 {
        match self.shaped.as_deref() {
            Some(sh) => (sh.region / self.bs).max(1),
            None => self.blocks,
        }
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

    /// fio's zonemode=strided: 2 blocks moved in each zone of 3, 4 skipped between zones, back
    /// at the start past the region's end (16 blocks: zones at 0, 7, 14, the last clipped to 2).
    #[test]
    fn strided_zones_move_on_after_each_zones_share_and_wrap() {
        use crate::workload::{Rw, Shape, Strided};
        let bs = 4096;
        let zones = Strided {
            range: 3 * bs,
            size: 2 * bs,
            skip: 4 * bs,
        };
        let shape = Shape {
            zones: Some(zones),
            ..Default::default()
        };
        let mut o = Offsets::of(&spec(Rw::Read, 1, shape.clone()), 0, 0, 16 * bs);
        let blocks: Vec<u64> = (0..8).map(|_| o.next_io(false).0 / bs).collect();
        assert_eq!(blocks, [0, 1, 7, 8, 14, 15, 0, 1]);
        // More to move than a zone holds: the zone again from its start (fio keeps the zone).
        let shape = Shape {
            zones: Some(Strided {
                size: 5 * bs,
                ..zones
            }),
            ..Default::default()
        };
        let mut o = Offsets::of(&spec(Rw::Read, 1, shape), 0, 0, 16 * bs);
        let blocks: Vec<u64> = (0..6).map(|_| o.next_io(false).0 / bs).collect();
        assert_eq!(blocks, [0, 1, 2, 0, 1, 7]);
        // Random IO lands in the zone it is in.
        let shape = Shape {
            zones: Some(zones),
            ..Default::default()
        };
        let mut o = Offsets::of(&spec(Rw::Randread, 1, shape), 0, 0, 16 * bs);
        let blocks: Vec<u64> = (0..6).map(|_| o.next_io(false).0 / bs).collect();
        assert!(
            blocks[..2].iter().all(|b| *b < 3) && blocks[2..4].iter().all(|b| (7..10).contains(b)),
            "{blocks:?}"
        );
        assert!(
            blocks[4..].iter().all(|b| (14..16).contains(b)),
            "{blocks:?}"
        );
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

    pub(super) fn spec(
        rw: crate::workload::Rw,
        threads: u32,
        shape: crate::workload::Shape,
    ) -> Spec {
        Spec {
            rw,
            bs: crate::workload::BlockSize::known(shape.mix.as_ref().map_or(4096, |m| m.min())),
            threads,
            iodepth: 1,
            engine: iogauge_engine::EngineKind::Null,
            direct: true,
            mix_read_pct: rw.read_pct(50),
            sync: None,
            odsync: false,
            seed: 5,
            limit: crate::workload::Limit::Data(1 << 20),
            ramp: std::time::Duration::ZERO,
            interval: std::time::Duration::from_secs(1),
            uring: Default::default(),
            submit_batch: 1,
            complete_batch: 1,
            distribution: Default::default(),
            rate_per_thread: None,
            shape,
            file_service: Default::default(),
            interval_hists: false,
            tolerate: None,
            atomic: false,
            rate_poisson: false,
            think: None,
            prio: None,
            flow: None,
            placement: None,
        }
    }

    #[test]
    fn each_file_has_its_own_positions_and_random_sequence() {
        let s = spec(crate::workload::Rw::Randread, 1, Default::default());
        let mut f0 = Offsets::of_file(&s, 0, 0, 0, 1 << 20);
        let mut one = Offsets::of(&s, 0, 0, 1 << 20);
        let mut f1 = Offsets::of_file(&s, 0, 1, 0, 1 << 20);
        let a: Vec<u64> = (0..16).map(|_| f0.next_offset(false)).collect();
        let b: Vec<u64> = (0..16).map(|_| one.next_offset(false)).collect();
        let c: Vec<u64> = (0..16).map(|_| f1.next_offset(false)).collect();
        assert_eq!(a, b, "file 0 is the one-file stream");
        assert_ne!(a, c, "file 1 draws its own offsets");
        assert!(c.iter().all(|o| *o < 1 << 20 && o % 4096 == 0));
    }

    #[test]
    fn a_plain_spec_takes_the_plain_path_unchanged() {
        use crate::workload::Rw;
        for rw in [Rw::Randread, Rw::Read] {
            let s = spec(rw, 2, Default::default());
            let mut a = Offsets::of(&s, 1, 4096, 1 << 24);
            let mut b = Offsets::new(rw.random(), s.distribution, 5, 1, 2, 4096, 1 << 24, 4096);
            assert!(a.shaped.is_none());
            for _ in 0..1000 {
                let (off, len) = a.next_io(false);
                assert_eq!((off, len), (b.next_offset(false), 4096));
            }
        }
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
