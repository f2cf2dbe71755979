//! `iogauge fsync-check`: does a sync that returned survive a power cut? The test of Brad
//! Fitzpatrick's diskchecker.pl, which PostgreSQL's documentation recommends, end to end.
//!
//! The machine under test writes blocks at random places, each with its own sync, and tells a
//! listener on another machine, over TCP, which block and generation it is about to write and
//! then that the sync returned. After the power is cut and the machine rebooted, `verify` asks
//! the listener what was acknowledged and reads it back: a block that holds an older version
//! than its acknowledged one is a durable write the storage lost, so its sync lied. A block
//! whose write was in flight at the cut may hold either version, or a mix of both.
//!
//! Blocks carry iogauge-verify's self-checking sectors, so the listener only has to keep 17
//! bytes per message and the reader can tell a stale block from a damaged or misplaced one.

mod listen;
mod protocol;
mod verify;
mod write;

pub use listen::run as listen;
pub use verify::{run as verify, Outcome};
pub use write::run as write;
