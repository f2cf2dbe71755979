//! Self-checking block contents: every 4 KiB sector iogauge writes says what it is, so a read
//! can tell a good block from a damaged, misplaced, stale, torn or never-written one without
//! anything kept in memory.
//!
//! A sector is a 40-byte header and a payload:
//!
//! | bytes    | field                                                        |
//! |----------|--------------------------------------------------------------|
//! | 0..8     | magic `iogVRFY1`                                             |
//! | 8..16    | run id (little endian, as every field)                       |
//! | 16..24   | the byte offset this sector was written to                   |
//! | 24..32   | generation: how many times the block had been written        |
//! | 32..36   | crc32c (Castagnoli) over bytes 0..32 and 36..4096            |
//! | 36..40   | zero                                                         |
//! | 40..4096 | payload: a keyed pseudo-random stream of (seed, offset, gen) |
//!
//! The payload is incompressible (a compressing or deduplicating device cannot shortcut it) and
//! can be regenerated from the run's seed, so a check needs only the [`RunKey`], the offset and
//! what generation to expect. [`stamp`] and [`check`] allocate nothing and format nothing: they
//! are meant for the IO loop itself.
//!
//! The failure classes ([`Class`]) follow what database servers have met in the field: a bad
//! checksum, InnoDB's "page n:o stored in the page read in is X, should be Y" (a block that
//! came back from the wrong place), a write that never landed (an older generation), a block
//! whose sectors come from different writes, and zeros where data was written.
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests

mod range;
mod sector;
mod tally;
mod tracker;

pub use range::{verify_range, Expect, VerifyOptions};
pub use sector::{check, run_id_of, stamp, RunKey, Verdict, HEADER, SECTOR};
pub use tally::{Class, Failure, Tally};
pub use tracker::{Ticket, Tracker};
