//! Where a result's data came from: the device, or a page cache that may have answered.

use crate::model::ResultDoc;

/// Where a result's data came from, as dd and bonnie++ users must ask ("PostgreSQL Server Benchmarks — Disks"'s bonnie++
/// writes twice the RAM for this reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// O_DIRECT: the device, past the page cache.
    Direct,
    /// Buffered over a working set that fits in RAM: likely the page cache.
    Cache,
    /// Buffered over a working set larger than RAM: mostly the device.
    LargerThanRam,
}

impl Source {
    pub fn of(direct: bool, working_set: u64, ram: u64) -> Source {
        if direct {
            Source::Direct
        } else if ram > 0 && working_set > ram {
            Source::LargerThanRam
        } else {
            Source::Cache
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Source::Direct => "direct",
            Source::Cache => "cache",
            Source::LargerThanRam => ">RAM",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Source::Direct => "read and written with O_DIRECT: the device, not the page cache",
            Source::Cache => "buffered over a working set that fits in RAM: the page cache may have answered instead of the device",
            Source::LargerThanRam => "buffered over a working set larger than RAM: mostly the device answered",
        }
    }
}

/// The working set of a result: the bytes it could touch, at most the bytes it moved.
pub fn working_set(r: &ResultDoc) -> u64 {
    r.target.all_bytes().min(r.bytes.max(1))
}
