//! What the writers know while they write: per block, how many writes were issued, how many
//! are in flight, and the newest write that is certainly the last to land.
//!
//! Two writes of the same block that are in flight together may reach the medium in either
//! order; only a write issued when no other write of its block was in flight is ordered after
//! all earlier ones. The tracker's `floor` is the newest such write, so the verify pass can say
//! "lost" only of a block older than a write that had to win, never of a legal reordering.
//!
//! Writers and readers share one tracker without a lock: each IO costs one or two atomic
//! operations on its block's word.

use crate::Expect;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Low bits of a block's word: writes issued; high bits: writes in flight.
const ISSUED_BITS: u32 = 40;
const ISSUED_MASK: u64 = (1 << ISSUED_BITS) - 1;
const IN_FLIGHT_ONE: u64 = 1 << ISSUED_BITS;

/// The write side of one cell of a run: blocks of `block` bytes from `start`, and the
/// generation numbers this cell writes, `base + 1` onwards.
pub struct Tracker {
    start: u64,
    block: u64,
    base: u64,
    words: Box<[AtomicU64]>,
    floor: Box<[AtomicU32]>,
}

/// A write issued: the generation to stamp, and whether it is ordered after every earlier
/// write of its block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ticket {
    pub generation: u64,
    pub ordered: bool,
}

impl Tracker {
    /// Memory the tracker needs per block, to check a target's size against RAM beforehand.
    pub const BYTES_PER_BLOCK: u64 = 12;

    /// A tracker for `bytes` from `start` in blocks of `block`; this cell's generations begin
    /// after `base` (so a block left from an earlier cell or the fill is older than any of its
    /// own).
    pub fn new(start: u64, bytes: u64, block: u64, base: u64) -> Tracker {
        let n = (bytes / block) as usize;
        Tracker {
            start,
            block,
            base,
            words: (0..n).map(|_| AtomicU64::new(0)).collect(),
            floor: (0..n).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    pub fn block(&self) -> u64 {
        self.block
    }

    fn index(&self, offset: u64) -> Option<usize> {
        let i = (offset.checked_sub(self.start)? / self.block) as usize;
        (i < self.words.len()).then_some(i)
    }

    /// Call before a write of the block at `offset` is queued; stamp it with the ticket's
    /// generation.
    pub fn write_begin(&self, offset: u64) -> Ticket {
        let Some(i) = self.index(offset) else {
            return Ticket::default();
        };
        let prev = self.words[i].fetch_add(1 + IN_FLIGHT_ONE, Ordering::AcqRel);
        Ticket {
            generation: self.base + (prev & ISSUED_MASK) + 1,
            ordered: prev >> ISSUED_BITS == 0,
        }
    }

    /// Call once the write has completed in full.
    pub fn write_end(&self, offset: u64, ticket: Ticket) {
        let Some(i) = self.index(offset) else {
            return;
        };
        if ticket.ordered {
            let rel = (ticket.generation - self.base) as u32;
            self.floor[i].fetch_max(rel, Ordering::AcqRel);
        }
        self.words[i].fetch_sub(IN_FLIGHT_ONE, Ordering::AcqRel);
    }

    /// Call before a read of `offset` is queued; hand the value to [`Tracker::read_expect`].
    pub fn read_begin(&self, offset: u64) -> u64 {
        self.index(offset)
            .map_or(u64::MAX, |i| self.words[i].load(Ordering::Acquire))
    }

    /// What a completed read of `offset` may be checked against: `None` when a write of the
    /// block was in flight or issued while the read was (it may have seen either version, or
    /// half of each), `Skip` when this cell never wrote the block.
    pub fn read_expect(&self, offset: u64, at_begin: u64) -> Option<Expect> {
        let Some(i) = self.index(offset) else {
            return Some(Expect::Skip);
        };
        let now = self.words[i].load(Ordering::Acquire);
        if now != at_begin || now >> ISSUED_BITS != 0 {
            return None;
        }
        if now & ISSUED_MASK == 0 {
            return Some(Expect::Skip);
        }
        Some(self.settled(i))
    }

    /// What the verify pass, after every write has completed, expects at `offset`.
    pub fn expect(&self, offset: u64) -> Expect {
        match self.index(offset) {
            Some(i) if self.words[i].load(Ordering::Acquire) & ISSUED_MASK > 0 => self.settled(i),
            _ => Expect::Skip,
        }
    }

    fn settled(&self, i: usize) -> Expect {
        match self.floor[i].load(Ordering::Acquire) {
            0 => Expect::Written,
            rel => Expect::AtLeast(self.base + u64::from(rel)),
        }
    }

    /// Blocks this cell wrote at least once.
    pub fn written(&self) -> u64 {
        self.words
            .iter()
            .filter(|w| w.load(Ordering::Relaxed) & ISSUED_MASK > 0)
            .count() as u64
    }

    /// Per block, what a later check expects, encoded for keeping with a run: 0 not written by
    /// this cell, 1 written (no generation certain), else the generation it must at least hold
    /// (a cell's generations start above its `base`, so give cells bases above 1).
    pub fn floors(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.words.len()).map(|i| match self.expect(self.start + i as u64 * self.block) {
            Expect::Skip => 0,
            Expect::Written => 1,
            Expect::AtLeast(g) => g,
        })
    }

    /// The offset of the first block and the number of blocks.
    pub fn span(&self) -> (u64, usize) {
        (self.start, self.words.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_write_sets_the_floor_and_a_concurrent_one_does_not() {
        let t = Tracker::new(4096, 4 * 8192, 8192, 1 << 32);
        let a = t.write_begin(4096);
        assert_eq!(
            a,
            Ticket {
                generation: (1 << 32) + 1,
                ordered: true
            }
        );
        let b = t.write_begin(4096);
        assert!(!b.ordered, "issued while the first was in flight");
        t.write_end(4096, b);
        t.write_end(4096, a);
        // Either may have landed last: both are fine, nothing older is.
        assert_eq!(t.expect(4096), Expect::AtLeast((1 << 32) + 1));
        let c = t.write_begin(4096);
        assert!(c.ordered);
        t.write_end(4096, c);
        assert_eq!(t.expect(4096), Expect::AtLeast((1 << 32) + 3));
        assert_eq!(t.expect(4096 + 8192), Expect::Skip, "never written");
        assert_eq!(t.expect(0), Expect::Skip, "before the range");
        assert_eq!(t.written(), 1);
    }

    #[test]
    fn only_concurrent_writes_leave_any_version_acceptable() {
        let t = Tracker::new(0, 8192, 8192, 0);
        let a = t.write_begin(0);
        let b = t.write_begin(0);
        t.write_end(0, b);
        assert_eq!(
            t.expect(0),
            Expect::Written,
            "b was not ordered, a is in flight"
        );
        t.write_end(0, a);
        assert_eq!(t.expect(0), Expect::AtLeast(1));
    }

    #[test]
    fn a_read_that_overlapped_a_write_is_not_judged() {
        let t = Tracker::new(0, 8192, 4096, 0);
        let w = t.write_begin(0);
        t.write_end(0, w);
        let r = t.read_begin(0);
        assert_eq!(t.read_expect(0, r), Some(Expect::AtLeast(1)));
        let r = t.read_begin(0);
        let w = t.write_begin(0);
        assert_eq!(t.read_expect(0, r), None, "a write began during the read");
        t.write_end(0, w);
        assert_eq!(t.read_expect(0, r), None, "and ended during it");
        let r = t.read_begin(4096);
        assert_eq!(
            t.read_expect(4096, r),
            Some(Expect::Skip),
            "never written by this cell"
        );
    }
}
