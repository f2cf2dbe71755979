//! `run` on many hosts at once, under MPI: `mpirun -n N --host a,b,c iogauge run …` (or
//! `srun`) makes each rank a participant; without MPI nothing here runs.
//!
//! The protocol, IOR's: every rank plans and checks its own target (placeholders `{host}`,
//! `{rank}` in the target give each its own), and they agree — one refusal stops all, with its
//! host named — before anyone writes; rank 0 measures each rank's clock offset by ping-pong;
//! a barrier starts the cell everywhere at once (fixed time: all stop together; `--data`: each
//! moves the same amount, and the first and last to finish are reported); then every rank's
//! document goes to rank 0, which sums the histograms bucket by bucket, counts the aggregate
//! rate over the window in which every rank was measuring, merges the per-interval histograms
//! into the cluster's percentiles over time, names a straggler, stores and prints one run.
//!
//! Every exchange is the same collective ([`Comm::all_bytes`]) reached in the same order on
//! every rank, carrying "ok" or a rank's error: a rank that fails says so at the next exchange,
//! the others see it there and stop, and nobody waits for a rank that has given up. A rank cut
//! short by a signal stops at once (its test file is removed on the way out) and mpirun ends
//! the others, which clean up the same way.

// Without the `mpi` feature only the refusal and the hooks' no-ops are reachable; the
// reduction is still built and unit-tested.
#![cfg_attr(not(feature = "mpi"), allow(dead_code, unused_imports))]

mod combine;
#[cfg(feature = "mpi")]
mod comm;

pub use combine::{combine, Part};

use crate::error::usage;
use crate::exec::Hooks;
use crate::model::RunDoc;
use anyhow::Result;
/// The world size a launcher gave this process, when it was started by one: OpenMPI's mpirun,
/// MPICH's and Slurm's PMI.
fn launched_size() -> Option<u32> {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_SIZE",
        "SLURM_NTASKS",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.parse::<u32>().ok())
}

/// A rank's failure as the others learn it: they stop without another exchange.
#[derive(Debug)]
pub struct PeerFailed(pub String);

impl std::fmt::Display for PeerFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PeerFailed {}

/// Under mpirun or srun, commands other than `run` would run once per rank, each on its own:
/// refused before anything runs.
pub fn only_run(is_run: bool) -> Result<()> {
    match launched_size() {
        Some(n) if n > 1 && !is_run => Err(usage(format!(
            "started as one of {n} MPI ranks: only `iogauge run` takes part in a run on many hosts; run other commands without mpirun"
        ))),
        _ => Ok(()),
    }
}

pub use crate::plan::Launch;

/// Each rank's plan, from its rank, the world's size and its host (for the placeholders).
pub type PlanFor<'a> = dyn Fn(u32, u32, &str) -> Result<crate::plan::Plan> + 'a;

/// Whether this process is one rank of a world of several started by mpirun or srun.
pub fn launched() -> Option<u32> {
    launched_size().filter(|&n| n > 1)
}

/// `iogauge run` as one rank of a run under MPI (see [`launched`]): rank 0 gets the combined
/// run's document (stored unless told not to) to present, the others `None`. `shown` are the
/// hooks of the command line, which this rank's own hooks hand what is said before the run.
#[cfg(not(feature = "mpi"))]
pub fn run(
    _launch: &Launch,
    _plan_for: &PlanFor,
    size: u32,
    _shown: &dyn Hooks,
) -> Result<Option<RunDoc>> {
    Err(usage(format!(
        "started as one of {size} MPI ranks, but this iogauge was built without MPI, so each would run on its own: build it with cargo build --release --features mpi"
    )))
}

/// `iogauge run` as one rank of a run under MPI (see [`launched`]): rank 0 gets the combined
/// run's document (stored unless told not to) to present, the others `None`. `shown` are the
/// hooks of the command line, which this rank's own hooks hand what is said before the run.
#[cfg(feature = "mpi")]
pub fn run(
    launch: &Launch,
    plan_for: &PlanFor,
    _size: u32,
    shown: &dyn Hooks,
) -> Result<Option<RunDoc>> {
    let comm = comm::Comm::init()?;
    crate::ui::label(format!("{} (rank {})", comm.host, comm.rank));
    ranked::run(launch, plan_for, comm, shown)
}

#[cfg(feature = "mpi")]
mod ranked {
    //! The rank's side of the protocol; the communicator lives here for the run.
    use super::comm::{now_ns, Comm};
    use super::{combine, Hooks, Launch, Part, PeerFailed, PlanFor};
    use crate::model::RunDoc;
    use anyhow::Result;
    use serde::{Deserialize, Serialize};
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicI64, Ordering};

    // The communicator, for the run: MPI's handles may not cross threads, and every exchange
    // is made on the thread that runs the executor (the cell's stop test runs there too).
    thread_local! {
        static COMM: RefCell<Option<Comm>> = const { RefCell::new(None) };
    }

    /// This rank's hooks into the executor: every rank checks, starts and (with `--stonewall
    /// first`) stops its cell together; what is said before the run goes to the command
    /// line's hooks.
    struct Rank<'a> {
        shown: &'a dyn Hooks,
        stonewall_first: bool,
        /// When the barrier before the cell was passed, on this rank's clock.
        started_ns: AtomicI64,
        /// How long this rank waited at that barrier.
        waited_ns: AtomicI64,
    }

    impl Hooks for Rank<'_> {
        fn found_before_run(&self, findings: &[iogauge_analyze::Finding]) {
            self.shown.found_before_run(findings);
        }

        fn checked(&self) -> Result<()> {
            sync(Ok(()))
        }

        fn before_cell(&self) -> Result<()> {
            let arrived = now_ns();
            sync(Ok(()))?;
            let now = now_ns();
            self.started_ns.store(now, Ordering::Relaxed);
            self.waited_ns.store(now - arrived, Ordering::Relaxed);
            Ok(())
        }

        fn peer_may_stop(&self) -> bool {
            self.stonewall_first
        }

        fn peer_done(&self) -> bool {
            self.stonewall_first && peer_done()
        }

        /// A rank that moved all its data tells the others to stop (`--stonewall first`).
        fn cell_done(&self, stopped_by_peer: bool) {
            if self.stonewall_first && !stopped_by_peer {
                with(|c| c.send_done());
            }
        }
    }

    /// What each rank sends rank 0 at the end.
    #[derive(Serialize, Deserialize)]
    struct Report {
        host: String,
        started_ns: i64,
        /// How long this rank waited at the barrier before the cell.
        waited_ns: i64,
        doc: crate::model::RunDoc,
    }

    fn with<T>(f: impl FnOnce(&Comm) -> T) -> T {
        COMM.with(|c| {
            f(c.borrow()
                .as_ref()
                .expect("the communicator is set for the run"))
        })
    }

    /// A blocking exchange. Once inside, MPI cannot be left, and a rank that stopped makes the
    /// others wait there for good; so a signal that comes while this rank waits here ends it
    /// from the signal thread, test files removed (nothing is being measured), and one that
    /// came before is taken here without entering.
    fn exchange<T>(f: impl FnOnce(&Comm) -> T) -> Result<T> {
        crate::interrupt::waiting_for_others(true);
        if let Some(sig) = crate::interrupt::requested_now() {
            crate::interrupt::waiting_for_others(false);
            return Err(crate::error::Interrupted(sig).into());
        }
        let out = with(f);
        crate::interrupt::waiting_for_others(false);
        Ok(out)
    }

    /// One exchange: this rank's verdict out, everyone's in; the first failure (by rank) is
    /// this rank's error too.
    pub fn sync(mine: Result<(), String>) -> Result<()> {
        let said = mine.err().unwrap_or_default();
        let (all, hosts) =
            exchange(|c| (c.all_bytes(said.as_bytes()), c.all_bytes(c.host.as_bytes())))?;
        match all.iter().enumerate().find(|(_, e)| !e.is_empty()) {
            None => Ok(()),
            Some((r, e)) => Err(PeerFailed(format!(
                "{} (rank {r}): {}",
                String::from_utf8_lossy(&hosts[r]),
                String::from_utf8_lossy(e)
            ))
            .into()),
        }
    }

    fn peer_done() -> bool {
        with(|c| c.done_received())
    }

    pub fn run(
        launch: &Launch,
        plan_for: &PlanFor,
        comm: Comm,
        shown: &dyn Hooks,
    ) -> Result<Option<RunDoc>> {
        let (rank, size, host) = (comm.rank, comm.size, comm.host.clone());
        COMM.with(|c| *c.borrow_mut() = Some(comm));
        let hooks = Rank {
            shown,
            stonewall_first: launch.stonewall_first,
            started_ns: AtomicI64::new(0),
            waited_ns: AtomicI64::new(0),
        };
        let out = protocol(launch, plan_for, rank, size, &host, &hooks);
        // Stopped alone by a signal (its test file already removed): the others do not know,
        // so MPI_Finalize would wait for them; end the job instead, and mpirun stops the
        // other ranks with SIGTERM, on which they clean up the same way.
        // Any failure once a signal came counts: a rank that failed on its own and then found
        // the signal at the door of the exchange that would have told the others has told
        // nobody, and they would wait for it.
        if out.is_err() {
            let sig = match out.as_ref().err().and_then(|e| e.downcast_ref()) {
                Some(crate::error::Interrupted(sig)) => Some(*sig),
                _ => crate::interrupt::requested_now(),
            };
            if let Some(sig) = sig {
                say!("stopped by signal {sig}: ending every rank of the run");
                with(|c| c.abort(128 + sig));
            }
        }
        COMM.with(|c| c.borrow_mut().take());
        out
    }

    fn protocol(
        launch: &Launch,
        plan_for: &PlanFor,
        rank: u32,
        size: u32,
        host: &str,
        hooks: &Rank,
    ) -> Result<Option<RunDoc>> {
        let store = launch.store;
        let planned = plan_for(rank, size, host);
        let plan = match planned {
            Ok(p) => {
                sync(Ok(()))?;
                p
            }
            Err(e) => {
                // Said once, by the exchange, with the host: every rank then stops alike.
                let _ = sync(Err(format!("{e:#}")));
                return Err(e);
            }
        };
        let t = now_ns();
        let clocks = exchange(|c| c.clocks())?;
        let clocks_ns = now_ns() - t;
        let doc = match crate::exec::measure(&plan, hooks) {
            // Cut short by a signal (its numbers kept on the way): out at once, without
            // another exchange; mpirun ends the others, which do the same.
            Ok(_) if crate::interrupt::requested().is_some() => {
                let sig = crate::interrupt::requested().unwrap_or(libc::SIGTERM);
                return Err(crate::error::Interrupted(sig).into());
            }
            Ok(doc) => doc,
            Err(e) if e.downcast_ref::<PeerFailed>().is_some() => return Err(e),
            // Cut short by a signal: out at once (mpirun ends the others).
            Err(e) if crate::interrupt::requested().is_some() => return Err(e),
            Err(e) => {
                let _ = sync(Err(format!("{e:#}")));
                return Err(e);
            }
        };
        sync(Ok(()))?;
        // Every "done" was sent before that exchange: take the ones left waiting.
        let _ = peer_done();
        let report = Report {
            host: host.to_string(),
            started_ns: hooks.started_ns.load(Ordering::Relaxed),
            waited_ns: hooks.waited_ns.load(Ordering::Relaxed),
            doc,
        };
        let t = now_ns();
        let all = exchange(|c| c.all_bytes(&serde_json::to_vec(&report).unwrap_or_default()))?;
        let gather_ns = now_ns() - t;
        if rank != 0 {
            return Ok(None);
        }
        let t = now_ns();
        let mut parts = Vec::new();
        let mut waited = Vec::new();
        for (r, bytes) in all.iter().enumerate() {
            let rep: Report = serde_json::from_slice(bytes)
                .map_err(|e| anyhow::anyhow!("rank {r}'s result could not be read: {e}"))?;
            waited.push(rep.waited_ns);
            parts.push(Part {
                rank: r as u32,
                host: rep.host,
                started_ns: rep.started_ns,
                offset_ns: clocks[r].0,
                rtt_ns: clocks[r].1,
                doc: rep.doc,
            });
        }
        let mut doc = combine(parts)?;
        // What the exchanges cost, kept with the run (bench/mpi-overhead reads them).
        if let Some(f) = doc.fleet.as_mut() {
            let ms = |ns: i64| ns as f64 / 1e6;
            f.exchange_ms
                .insert("clock ping-pong".into(), ms(clocks_ns));
            f.exchange_ms.insert("gather".into(), ms(gather_ns));
            f.exchange_ms.insert("reduction".into(), ms(now_ns() - t));
            for (h, w) in f.hosts.iter_mut().zip(waited) {
                h.barrier_wait_ms = ms(w);
            }
        }
        if store {
            let mut rec = crate::store::Recorder::start(
                Some(crate::store::Store::open(launch.db.as_deref())?),
                &doc,
            )?;
            for r in &doc.results {
                rec.add(r)?;
            }
            rec.finish(&doc)?;
        }
        Ok(Some(doc))
    }
}
