//! Counting verdicts: how many of each class, and the first few with their offsets as evidence.

use crate::Verdict;
use std::fmt;

/// The kinds of failure, in the order a report lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Corrupt,
    Misdirected,
    Lost,
    Torn,
    Unwritten,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::Corrupt,
        Class::Misdirected,
        Class::Lost,
        Class::Torn,
        Class::Unwritten,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Corrupt => "corrupt",
            Class::Misdirected => "misdirected",
            Class::Lost => "lost",
            Class::Torn => "torn",
            Class::Unwritten => "unwritten",
        }
    }

    /// What the class means, for a finding's text.
    pub fn meaning(self) -> &'static str {
        match self {
            Class::Corrupt => "checksum mismatch: the data changed after it was written",
            Class::Misdirected => {
                "a valid block from another offset: written or read at the wrong place"
            }
            Class::Lost => {
                "an older version than the last one acknowledged: a write that never landed"
            }
            Class::Torn => "sectors of different writes inside one block: a write that half landed",
            Class::Unwritten => "zeros or foreign data where iogauge wrote",
        }
    }
}

impl Verdict {
    /// The failure class, or `None` for [`Verdict::Ok`].
    pub fn class(&self) -> Option<Class> {
        match self {
            Verdict::Ok { .. } => None,
            Verdict::Corrupt { .. } => Some(Class::Corrupt),
            Verdict::Misdirected { .. } => Some(Class::Misdirected),
            Verdict::Lost { .. } => Some(Class::Lost),
            Verdict::Torn { .. } => Some(Class::Torn),
            Verdict::Unwritten => Some(Class::Unwritten),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gen =
            |g: &Option<u64>| g.map_or("never written".to_string(), |g| Generation(g).to_string());
        match self {
            Verdict::Ok { generation } => write!(f, "ok ({})", Generation(*generation)),
            Verdict::Corrupt { sector } => {
                write!(
                    f,
                    "corrupt: checksum mismatch in 4 KiB sector {sector} of the block"
                )
            }
            Verdict::Misdirected { stored_offset } => write!(
                f,
                "misdirected: holds the block written at offset {stored_offset}"
            ),
            Verdict::Lost { found, expected } => write!(
                f,
                "lost: holds {} where {} was acknowledged",
                Generation(*found),
                Generation(*expected)
            ),
            Verdict::Torn {
                sector,
                first,
                other,
            } => write!(
                f,
                "torn: sector 0 is {}, sector {sector} is {}",
                gen(first),
                gen(other)
            ),
            Verdict::Unwritten => f.write_str("unwritten: zeros or foreign data"),
        }
    }
}

/// A generation as people read it. Writers that number their phases put the phase in the high
/// 32 bits (iogauge: a suite's cell, 0 for the fill), the write's count in the low ones.
struct Generation(u64);

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0 >> 32, self.0 & 0xffff_ffff) {
            (0, 0) => f.write_str("the fill's data"),
            (0, n) => write!(f, "write {n}"),
            (phase, n) => write!(f, "write {n} of cell {phase}"),
        }
    }
}

/// One failed block: where, and what was found there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub offset: u64,
    pub verdict: Verdict,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {}: {}", self.offset, self.verdict)
    }
}

/// Verdicts counted per class, with the first `keep` failures. Recording allocates nothing:
/// the list is reserved up front.
#[derive(Clone, Debug)]
pub struct Tally {
    checked: u64,
    counts: [u64; 5],
    first: Vec<Failure>,
    keep: usize,
}

impl Tally {
    pub fn new(keep: usize) -> Self {
        Tally {
            checked: 0,
            counts: [0; 5],
            first: Vec::with_capacity(keep),
            keep,
        }
    }

    /// Counts one block's verdict; returns its failure class, if any.
    pub fn record(&mut self, offset: u64, verdict: Verdict) -> Option<Class> {
        self.checked += 1;
        let class = verdict.class()?;
        self.counts[class as usize] += 1;
        if self.first.len() < self.keep {
            self.first.push(Failure { offset, verdict });
        }
        Some(class)
    }

    /// Adds another tally (a second thread's, say); its failures come after this one's.
    pub fn merge(&mut self, other: &Tally) {
        self.checked += other.checked;
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        let room = self.keep.saturating_sub(self.first.len());
        self.first.extend(other.first.iter().take(room));
    }

    /// Blocks checked, good or bad.
    pub fn checked(&self) -> u64 {
        self.checked
    }

    pub fn count(&self, class: Class) -> u64 {
        self.counts[class as usize]
    }

    /// Blocks that failed, of any class.
    pub fn failed(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn is_clean(&self) -> bool {
        self.failed() == 0
    }

    /// The first failures recorded, in the order they were met.
    pub fn first(&self) -> &[Failure] {
        &self.first
    }
}
