//! The MPI side of a run on many hosts (cargo feature `mpi`, rsmpi over the system's MPI:
//! Debian's OpenMPI). Every exchange is one collective that every rank reaches the same number
//! of times, or the ping-pong between rank 0 and one other rank; nothing here formats or
//! decides, it only moves bytes and clock readings.

use anyhow::{anyhow, Result};
use mpi::datatype::PartitionMut;
use mpi::traits::*;
use mpi::Count;
use std::time::{SystemTime, UNIX_EPOCH};

/// Rounds of the clock ping-pong; the one with the smallest round trip is kept (Cristian's
/// algorithm: the offset is then known to within half that round trip).
const PING_PONGS: usize = 16;
/// The tag of "I have moved my data" (`--stonewall first`); the ping-pong uses the default.
const DONE_TAG: mpi::Tag = 7;

pub struct Comm {
    world: mpi::topology::SimpleCommunicator,
    pub rank: u32,
    pub size: u32,
    pub host: String,
    // Finalizes MPI when dropped, after the communicator is gone.
    _universe: mpi::environment::Universe,
}

impl Comm {
    pub fn init() -> Result<Comm> {
        let universe = mpi::initialize().ok_or_else(|| anyhow!("MPI could not be initialized"))?;
        let world = universe.world();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        Ok(Comm {
            rank: world.rank() as u32,
            size: world.size() as u32,
            host,
            world,
            _universe: universe,
        })
    }

    /// Every rank's `mine`, in rank order, at every rank.
    pub fn all_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        // One byte ahead of each message: MPI refuses an all-gather of nothing at all.
        let mine: Vec<u8> = std::iter::once(0u8).chain(mine.iter().copied()).collect();
        let mine = &mine[..];
        let n = mine.len() as Count;
        let mut counts = vec![0 as Count; self.size as usize];
        self.world.all_gather_into(&n, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total: Count = counts.iter().sum();
        let mut buf = vec![0u8; total as usize];
        {
            let mut parts = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut parts);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| buf[d as usize + 1..(d + c) as usize].to_vec())
            .collect()
    }

    /// Tells every other rank that this one has finished its cell (`--stonewall first`); a
    /// small message, sent eagerly, so it never waits for a receiver.
    pub fn send_done(&self) {
        for r in (0..self.size).filter(|&r| r != self.rank) {
            self.world
                .process_at_rank(r as i32)
                .send_with_tag(&1u8, DONE_TAG);
        }
    }

    /// Whether another rank has said it finished, taking every such message waiting.
    pub fn done_received(&self) -> bool {
        let mut any = false;
        while let Some((_, _)) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(DONE_TAG)
            .map(|(msg, status)| (msg.matched_receive::<u8>(), status))
        {
            any = true;
        }
        any
    }

    /// Ends every rank of the job (MPI_Abort): for a rank that stops alone, as on a signal,
    /// where a clean MPI_Finalize would wait for the others forever.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// At rank 0: each rank's clock minus rank 0's (ns) and the round trip it was read with;
    /// zeros elsewhere. Every rank must call it.
    pub fn clocks(&self) -> Vec<(i64, u64)> {
        let mut out = vec![(0i64, 0u64); self.size as usize];
        if self.rank == 0 {
            for r in 1..self.size {
                let peer = self.world.process_at_rank(r as i32);
                let mut best: Option<(i64, u64)> = None;
                for _ in 0..PING_PONGS {
                    let t0 = now_ns();
                    peer.send(&t0);
                    let (theirs, _) = peer.receive::<i64>();
                    let t1 = now_ns();
                    let rtt = (t1 - t0).max(0) as u64;
                    let offset = theirs - (t0 + (t1 - t0) / 2);
                    if best.is_none_or(|(_, b)| rtt < b) {
                        best = Some((offset, rtt));
                    }
                }
                out[r as usize] = best.unwrap_or_default();
            }
        } else {
            let root = self.world.process_at_rank(0);
            for _ in 0..PING_PONGS {
                let _ = root.receive::<i64>();
                root.send(&now_ns());
            }
        }
        out
    }
}

/// The wall clock in ns since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
