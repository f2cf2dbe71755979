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
    /// Where the result's IO went, when not (only) to the run's target: a stream's own
    /// target (`--stream '… --target PATH'`), or on the sum every stream's, in order. The
    /// findings that judge IO against the run's stack (its devices, file system, memory)
    /// leave such a result out: its IO went elsewhere, or only partly there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
}

impl TogetherDoc {
    /// Whether the result's IO went (partly) to a target other than the run's.
    pub fn elsewhere(&self) -> bool {
        !self.targets.is_empty()
    }
}
