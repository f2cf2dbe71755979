//! A cell of several streams that ran at once (fio's jobs without `stonewall`, a WAL stream
//! beside data reads): each stream is a result of its own, and the cell's sum is one more.

use serde::{Deserialize, Serialize};

/// Where a result stands in a cell of several streams.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TogetherDoc {
    /// The cell's name, the same on each stream and on the sum (e.g. `reader-4k + reader-8k`).
    pub cell: String,
    /// The streams' names, in the cell's order.
    pub streams: Vec<String>,
    /// This result is the cell's sum: every stream's IO, and the devices' counters over them
    /// all. A stream's own result has no devices of its own: the device saw the sum.
    pub sum: bool,
}
