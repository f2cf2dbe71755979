//! What the workers check under `--verify`: a read's block against this cell's writes, the
//! run's earlier cells, or the fill's stamps.

use iogauge_verify::{check, Class, Expect, RunKey, Tally, Tracker, Verdict, SECTOR};

/// What the workers do for `--verify`: stamp every write, check every read they can judge.
pub struct Verifier<'a> {
    pub key: RunKey,
    /// This cell's writes; `None` for a cell that only reads.
    pub tracker: Option<&'a Tracker>,
    /// The fill stamped every sector, so a block this cell did not write is still iogauge's
    /// and a read of it can be checked sector by sector.
    pub filled: bool,
    /// A worker stops at its first block that comes back wrong (fio's verify_fatal).
    pub fatal: bool,
    /// What the run's earlier cells wrote, for the reads of blocks this cell did not write.
    pub earlier: Option<Earlier<'a>>,
}

/// The generation each block was left at by the run's earlier cells (0: none wrote it), from
/// `offset` on in blocks of `block` bytes: what a later read of it must find.
#[derive(Clone, Copy)]
pub struct Earlier<'a> {
    pub offset: u64,
    pub block: u64,
    pub generations: &'a [u64],
}

impl Earlier<'_> {
    /// What the sector at byte `offset` must hold.
    pub fn expect(&self, offset: u64, filled: bool) -> Expect {
        let i = offset
            .checked_sub(self.offset)
            .map(|o| (o / self.block) as usize);
        match i.and_then(|i| self.generations.get(i)) {
            Some(&g) => kept(g, filled),
            None if filled => Expect::Written,
            None => Expect::Skip,
        }
    }
}

/// What a block left at generation `g` by a run must hold: a block no cell wrote is the
/// fill's (any intact block of the run) when the run filled the target, else not judged.
pub fn kept(g: u64, filled: bool) -> Expect {
    match g {
        0 if filled => Expect::Written,
        g => Expect::from_floor(g),
    }
}

/// Checks a block a read brought back, if the tracker says it can be judged: a block this cell
/// wrote as a whole (torn and lost need its generation), one it did not write sector by sector,
/// against what the run's earlier cells left there (or, when the fill stamped every sector,
/// as any intact sector of the run's own). What it found wrong, if anything.
pub(super) fn judge_read(
    tally: &mut Tally,
    v: &Verifier,
    buf: &[u8],
    at: u64,
    expect: Option<Expect>,
) -> Option<Class> {
    match expect {
        None => None,
        Some(Expect::Skip) => {
            let mut judged = false;
            let worst = buf
                .chunks_exact(SECTOR)
                .enumerate()
                .filter_map(|(i, s)| {
                    let off = at + (i * SECTOR) as u64;
                    let want = match v.earlier {
                        Some(e) => e.expect(off, v.filled),
                        None if v.filled => Expect::Written,
                        None => Expect::Skip,
                    };
                    let g = match want {
                        Expect::Skip => return None,
                        Expect::Written => None,
                        Expect::AtLeast(g) => Some(g),
                    };
                    judged = true;
                    Some(check(s, &v.key, off, g))
                })
                .find(|v| v.class().is_some());
            match judged {
                true => tally.record(at, worst.unwrap_or(Verdict::Ok { generation: 0 })),
                false => None,
            }
        }
        Some(Expect::Written) => tally.record(at, check(buf, &v.key, at, None)),
        Some(Expect::AtLeast(g)) => tally.record(at, check(buf, &v.key, at, Some(g))),
    }
}
