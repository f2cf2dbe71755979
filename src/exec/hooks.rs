//! What the caller of the executor adds at its fixed points, criterion's `Report` shape: every
//! hook has a no-op default, the executor calls them and never knows who listens. A run on one
//! host passes the command line's (`present::Shown`, which says the findings made before a run); a rank of a run under MPI passes `fleet`'s, which make every rank check,
//! start and stop together. The executor holds no state of its callers and imports neither.

use anyhow::Result;
use iogauge_analyze::Finding;

pub trait Hooks: Sync {
    /// The stack was looked at before anything is measured: what it found (a partition off its
    /// boundaries), said now rather than only after a long run.
    fn found_before_run(&self, _findings: &[Finding]) {}

    /// The target is checked and nothing is written yet: under MPI every rank's verdict, so a
    /// refusal anywhere stops all before any rank writes.
    fn checked(&self) -> Result<()> {
        Ok(())
    }

    /// The target is ready (its test file made and filled) and nothing is measured yet: what
    /// the caller sets up around it goes here (a sweep's filler beside it), with the parameters
    /// the run records of it.
    fn realized(
        &self,
        _target: &std::path::Path,
        _params: &mut std::collections::BTreeMap<String, String>,
    ) -> Result<()> {
        Ok(())
    }

    /// Right before a cell measures: under MPI a barrier, so every rank starts it at once.
    fn before_cell(&self) -> Result<()> {
        Ok(())
    }

    /// Whether another participant may end a cell early (`--stonewall first`): the cell then
    /// polls [`Hooks::peer_done`].
    fn peer_may_stop(&self) -> bool {
        false
    }

    /// Whether another participant has finished its cell; polled at every tick of the cell
    /// (about 100 ms) on the thread that runs the executor, so it never waits.
    fn peer_done(&self) -> bool {
        false
    }

    /// The cell ended here; `stopped_by_peer` when [`Hooks::peer_done`] ended it.
    fn cell_done(&self, _stopped_by_peer: bool) {}

    /// Every cell has run (or the run was cut) and the document is whole but not yet judged
    /// or stored: what the caller watched beside the cells joins it here (an array's rebuild).
    fn measured(&self, _doc: &mut crate::model::RunDoc) {}
}
