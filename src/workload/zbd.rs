//! fio's zonemode=zbd on a target that is not zoned, as fio emulates it: the range is cut into
//! zones whose write pointers iogauge keeps in memory, every zone empty at the start. A write
//! goes to a zone's write pointer (randomly chosen zones for random writes, the zones in turn
//! for sequential ones), so the device sees appends inside each zone. A full zone chosen again
//! is reset (in memory: nothing reaches the device, as in fio) and written from its start. With
//! `max_open_zones`, writes go to at most that many zones at a time, a zone leaving the set
//! when it fills; with `zone_reset_threshold` and `zone_reset_frequency`, once the zones hold
//! that share of the range, one write in every 1/frequency resets its zone first.
//!
//! One table serves all the threads of a job, as fio's clones share their file's write
//! pointers: lock-free, a few atomic operations per write, nothing allocated after setup. Jobs
//! of one file share one table for the whole run ([`shared`]), carried from one job to the next
//! and shared by jobs that run together, as fio keeps one per file: a trimming job's trims
//! (`rw=trim`, `randtrim`) reset the zones the writing jobs write.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The zones as a workload asks for them (fio's zbd options, whole blocks of one size).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zbd {
    /// Bytes in a zone (`zonesize`).
    pub zone: u64,
    /// Zones written at once (`max_open_zones`); 0 for no limit.
    pub max_open: u32,
    /// `zone_reset_threshold` and `zone_reset_frequency`, when the frequency is above 0.
    pub reset: Option<(f64, f64)>,
    /// The run's table this job uses with the other jobs of its file (1 and up), or 0 for a
    /// table of its own.
    pub table: u32,
    /// The block the table counts its write pointers in: the writing jobs' one block size
    /// (a trimming job's blocks are whole zones); 0 for the job's own.
    pub unit: u64,
}

/// The run's shared tables, by [`Zbd::table`]. Locked only when a cell sets up.
static SHARED: Mutex<Vec<(u32, Arc<ZoneTable>)>> = Mutex::new(Vec::new());

/// Table `id` of the run, made by `make` for the first job that uses it.
pub fn shared(id: u32, make: impl FnOnce() -> ZoneTable) -> Arc<ZoneTable> {
    let mut all = SHARED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, t)) = all.iter().find(|(k, _)| *k == id) {
        return t.clone();
    }
    let t = Arc::new(make());
    all.push((id, t.clone()));
    t
}

/// The table a job's threads write at: the run's table of its file, or one of its own, over
/// its range, counted in the writers' block (`bs`, the job's own, when it is the writer).
pub fn table_for(z: Zbd, range_start: u64, range_bytes: u64, bs: u64) -> Arc<ZoneTable> {
    let unit = if z.unit > 0 { z.unit } else { bs };
    let make = || ZoneTable::new(z, range_start, range_bytes, unit);
    match z.table {
        0 => Arc::new(make()),
        id => shared(id, make),
    }
}

/// A new run starts with every zone empty again, as a new fio invocation does.
pub fn forget_shared() {
    SHARED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
}

/// A slot of the open set that holds no zone.
const EMPTY: u32 = u32::MAX;

/// The write pointers of one job's zones, shared by its threads.
pub struct ZoneTable {
    base: u64,
    bs: u64,
    /// Blocks in a zone.
    per_zone: u64,
    /// Blocks written in each zone since its last reset (above `per_zone` while writers race
    /// past a full zone; only one of them resets it).
    wp: Box<[AtomicU64]>,
    /// The zones being written (`max_open_zones`); empty without a limit.
    open: Box<[AtomicU32]>,
    /// The zone sequential writes are in, and the next zone a sequential trim resets.
    current: AtomicU32,
    trim_next: AtomicU32,
    /// Blocks that hold data in all the zones, when resets follow a threshold.
    data: AtomicU64,
    /// Writes left before the next threshold reset, and how many between two.
    countdown: AtomicU32,
    every: u32,
    threshold: u64,
    resets: AtomicU64,
}

impl ZoneTable {
    /// The whole zones of `[range_start, range_start + range_len)` in blocks of `bs`.
    /// The caller guarantees at least one zone and a zone of whole blocks (`Spec::check_target`).
    pub fn new(z: Zbd, range_start: u64, range_len: u64, bs: u64) -> ZoneTable {
        let zones = (range_len / z.zone).clamp(1, u64::from(EMPTY - 1)) as usize;
        let (every, threshold) = match z.reset {
            // fio counts down from 1/frequency (write_cnt), and resets at zero.
            Some((t, f)) => (
                (1.0 / f).clamp(1.0, f64::from(u32::MAX)) as u32,
                (t * (zones as u64 * (z.zone / bs)) as f64) as u64,
            ),
            None => (0, 0),
        };
        ZoneTable {
            base: range_start,
            bs,
            per_zone: (z.zone / bs).max(1),
            wp: (0..zones).map(|_| AtomicU64::new(0)).collect(),
            open: (0..(z.max_open as usize).min(zones))
                .map(|_| AtomicU32::new(EMPTY))
                .collect(),
            current: AtomicU32::new(0),
            trim_next: AtomicU32::new(0),
            data: AtomicU64::new(0),
            countdown: AtomicU32::new(every),
            every,
            threshold,
            resets: AtomicU64::new(0),
        }
    }

    pub fn zones(&self) -> u32 {
        self.wp.len() as u32
    }

    #[cfg(test)]
    /// Zones reset so far (full zones written again, and threshold resets of zones that held
    /// data), as fio counts its "zone resets".
    pub fn resets(&self) -> u64 {
        self.resets.load(Relaxed)
    }

    /// The offset of the next write: at the write pointer of a random zone (`random`) or of
    /// the zone sequential writes are in.
    #[inline]
    pub fn write(&self, rng: &mut fastrand::Rng, random: bool) -> u64 {
        let zones = self.zones();
        let mut z = if random {
            self.open_one(rng.u32(0..zones), rng)
        } else {
            self.current.load(Relaxed)
        };
        if self.threshold_reset() {
            self.reset(z);
        }
        loop {
            let b = self.wp[z as usize].fetch_add(1, Relaxed);
            if b < self.per_zone {
                if self.every > 0 {
                    self.data.fetch_add(1, Relaxed);
                }
                if b + 1 == self.per_zone {
                    self.filled(z);
                }
                return self.base + (u64::from(z) * self.per_zone + b) * self.bs;
            }
            // Full. A random write resets the zone it chose and writes it from its start (one
            // of racing writers resets it; the others take the blocks after); a sequential
            // one goes on to the next zone, reset first when full (the wrap past the last).
            if !random {
                let _ = self
                    .current
                    .compare_exchange(z, (z + 1) % zones, Relaxed, Relaxed);
                z = self.current.load(Relaxed);
                if self.wp[z as usize].load(Relaxed) < self.per_zone {
                    continue;
                }
            }
            self.reset(z);
        }
    }

    /// A trim, as fio's on zones it emulates: the zone reset in memory (nothing reaches the
    /// device) and its offset. Sequential trims reset the zones in turn; a random one the zone
    /// nearest a random zone that holds data, or, when none does, none (`None`: fio's end of
    /// the job).
    #[inline]
    pub fn trim(&self, rng: &mut fastrand::Rng, random: bool) -> Option<u64> {
        let zones = self.zones();
        let z = if random {
            let pick = rng.u32(0..zones);
            let holds = |z: &u32| self.wp[*z as usize].load(Relaxed) > 0;
            (0..zones).find_map(|d| {
                let below = pick.checked_sub(d).filter(holds);
                below.or_else(|| Some(pick + d).filter(|z| *z < zones && holds(z)))
            })?
        } else {
            self.trim_next
                .fetch_update(Relaxed, Relaxed, |z| Some((z + 1) % zones))
                .unwrap_or(0)
        };
        self.reset(z);
        // A reset zone leaves the zones being written (fio's zbd_reset_zone).
        self.filled(z);
        Some(self.base + u64::from(z) * self.per_zone * self.bs)
    }

    /// A zone that may be written: `z` when it is open or a slot is free for it, else one of
    /// the open zones (fio's pick among its write zones when the limit is reached).
    #[inline]
    fn open_one(&self, z: u32, rng: &mut fastrand::Rng) -> u32 {
        if self.open.is_empty() {
            return z;
        }
        loop {
            if self.open.iter().any(|s| s.load(Relaxed) == z) {
                return z;
            }
            if self
                .open
                .iter()
                .any(|s| s.compare_exchange(EMPTY, z, Relaxed, Relaxed).is_ok())
            {
                return z;
            }
            let other = self.open[rng.usize(0..self.open.len())].load(Relaxed);
            if other != EMPTY {
                return other;
            }
        }
    }

    /// A zone just filled leaves the open set.
    #[inline]
    fn filled(&self, z: u32) {
        for s in self.open.iter() {
            if s.compare_exchange(z, EMPTY, Relaxed, Relaxed).is_ok() {
                return;
            }
        }
    }

    /// Whether this write resets its zone first: once the zones hold the threshold's share of
    /// the range, every `every`-th write (fio's zbd_dec_and_reset_write_cnt).
    #[inline]
    fn threshold_reset(&self) -> bool {
        if self.every == 0 || self.data.load(Relaxed) < self.threshold {
            return false;
        }
        let every = self.every;
        let before = self
            .countdown
            .fetch_update(Relaxed, Relaxed, |c| {
                Some(if c <= 1 { every } else { c - 1 })
            })
            .unwrap_or(every);
        before <= 1
    }

    /// The zone's write pointer back at its start (when it held data; one of racing resets).
    #[inline]
    fn reset(&self, z: u32) {
        let w = &self.wp[z as usize];
        let held = w.load(Relaxed);
        if held == 0 || w.compare_exchange(held, 0, Relaxed, Relaxed).is_err() {
            return;
        }
        self.resets.fetch_add(1, Relaxed);
        if self.every > 0 {
            let _ = self.data.fetch_sub(held.min(self.per_zone), Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: u64 = 4096;

    fn table(zones: u64, per_zone: u64, max_open: u32, reset: Option<(f64, f64)>) -> ZoneTable {
        let z = Zbd {
            zone: per_zone * BS,
            max_open,
            reset,
            table: 0,
            unit: 0,
        };
        ZoneTable::new(z, 1 << 20, zones * per_zone * BS, BS)
    }

    /// (zone, block in zone) of an offset of `table`.
    fn at(t: &ZoneTable, off: u64) -> (u64, u64) {
        let b = (off - t.base) / BS;
        (b / t.per_zone, b % t.per_zone)
    }

    /// Random writes append: each zone's writes are its blocks in order from its start, a
    /// full zone chosen again starts over at its start, and never more than max_open zones
    /// are part-written at once (fio's write zones; a zone leaves the set when it fills).
    #[test]
    fn random_writes_append_in_at_most_max_open_zones() {
        let t = table(16, 4, 3, None);
        let mut rng = fastrand::Rng::with_seed(7);
        let mut next = [0u64; 16];
        let mut zones_seen = std::collections::BTreeSet::new();
        for _ in 0..400 {
            let (z, b) = at(&t, t.write(&mut rng, true));
            let expected = next[z as usize] % 4;
            assert_eq!(
                b, expected,
                "zone {z}: block {b} where its pointer was {expected}"
            );
            next[z as usize] = b + 1;
            zones_seen.insert(z);
            let part_written = next.iter().filter(|n| **n % 4 != 0).count();
            assert!(part_written <= 3, "{part_written} zones open: {next:?}");
        }
        // Random: the writes went all over the range, not to three zones.
        assert!(zones_seen.len() >= 12, "{zones_seen:?}");
        assert!(t.resets() > 0);
        // Near miss: without a limit, more zones are part-written at once.
        let t = table(16, 4, 0, None);
        let mut rng = fastrand::Rng::with_seed(7);
        let mut most = 0;
        let mut next = [0u64; 16];
        for _ in 0..400 {
            let (z, b) = at(&t, t.write(&mut rng, true));
            next[z as usize] = b + 1;
            most = most.max(next.iter().filter(|n| **n % 4 != 0).count());
        }
        assert!(most > 3, "{most}");
    }

    /// Sequential writes fill each zone in turn and, past the last, start over at the first.
    #[test]
    fn sequential_writes_walk_the_zones_and_wrap() {
        let t = table(3, 2, 0, None);
        let mut rng = fastrand::Rng::with_seed(1);
        let offs: Vec<(u64, u64)> = (0..8).map(|_| at(&t, t.write(&mut rng, false))).collect();
        assert_eq!(
            offs,
            [
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (2, 0),
                (2, 1),
                (0, 0),
                (0, 1)
            ]
        );
        assert_eq!(t.resets(), 1);
    }

    /// Once the zones hold the threshold's share, one write in every 1/frequency starts its
    /// zone over (fio's zone_reset_threshold=0.5, zone_reset_frequency=0.25: every fourth).
    #[test]
    fn the_threshold_resets_one_write_in_every_1_over_frequency() {
        let t = table(4, 64, 0, Some((0.5, 0.25)));
        let mut rng = fastrand::Rng::with_seed(3);
        let mut next = [0u64; 4];
        let (mut past, mut late) = (0, 0);
        for i in 0..3000 {
            let held: u64 = next.iter().sum();
            let (z, b) = at(&t, t.write(&mut rng, true));
            // A write at the start of a zone that was neither empty nor full: a threshold reset.
            let reset = b == 0 && next[z as usize] != 0 && next[z as usize] != 64;
            if held < 128 {
                assert!(
                    !reset,
                    "write {i}: a reset below the threshold ({held} of 256)"
                );
            } else {
                past += 1;
                // The count runs on only past the threshold: every fourth such write.
                assert!(
                    !reset || past % 4 == 0,
                    "a reset at write {past} past the threshold"
                );
                late += u32::from(reset);
            }
            next[z as usize] = b + 1;
        }
        // A reset takes the data below the threshold again, so writes past it come in short
        // runs; a reset of an empty zone is not seen here.
        assert!(
            past >= 100 && late >= past / 8,
            "{late} resets in {past} writes"
        );
        // Near miss: without the rule, a zone starts over only when it was full.
        let t = table(4, 64, 0, None);
        let mut next = [0u64; 4];
        for _ in 0..600 {
            let (z, b) = at(&t, t.write(&mut rng, true));
            assert!(b == 0 && (next[z as usize] % 64 == 0) || b == next[z as usize]);
            next[z as usize] = b + 1;
        }
    }

    /// Threads share the write pointers: four threads writing exactly the zones' capacity
    /// write every block once, none twice (fio's clones append under a zone's lock).
    #[test]
    fn threads_share_the_write_pointers() {
        for max_open in [0, 2] {
            let t = table(8, 64, max_open, None);
            let offs: Vec<u64> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..4)
                    .map(|i| {
                        let t = &t;
                        s.spawn(move || {
                            let mut rng = fastrand::Rng::with_seed(i);
                            (0..128)
                                .map(|_| t.write(&mut rng, false))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
            });
            let distinct: std::collections::BTreeSet<u64> = offs.iter().copied().collect();
            assert_eq!(distinct.len(), 512, "max_open {max_open}");
            assert_eq!(t.resets(), 0);
        }
    }

    /// A random trim resets the zone nearest a random one that holds data, and the next write
    /// there starts at its start; with no zone holding data there is nothing to trim (fio's
    /// end of the job). Sequential trims reset the zones in turn, empty or not.
    #[test]
    fn trims_reset_the_nearest_zone_holding_data() {
        let t = table(8, 4, 2, None);
        let mut rng = fastrand::Rng::with_seed(5);
        assert_eq!(t.trim(&mut rng, true), None, "every zone starts empty");
        let first: Vec<(u64, u64)> = (0..2).map(|_| at(&t, t.write(&mut rng, false))).collect();
        assert_eq!(first, [(0, 0), (0, 1)]);
        // Wherever the random pick lands, the nearest zone holding data is zone 0.
        assert_eq!(at(&t, t.trim(&mut rng, true).unwrap()), (0, 0));
        assert_eq!(t.resets(), 1);
        assert_eq!(
            t.trim(&mut rng, true),
            None,
            "the one zone with data was reset"
        );
        assert_eq!(at(&t, t.write(&mut rng, false)), (0, 0));
        let s = table(3, 4, 0, None);
        let zones: Vec<u64> = (0..4)
            .map(|_| at(&s, s.trim(&mut rng, false).unwrap()).0)
            .collect();
        assert_eq!(zones, [0, 1, 2, 0]);
        assert_eq!(s.resets(), 0, "empty zones: nothing was reset");
    }
}
