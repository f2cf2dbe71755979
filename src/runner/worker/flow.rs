//! fio's flow: the threads of the streams that run at once with one flow id share its IOs by
//! weight. Each thread counts its own IOs and, with the others of its flow, their sum; a
//! thread whose share of the sum is above its share of the weights issues nothing until the
//! others catch up (fio's flow.c: the sum starts at 1, and a thread that ends takes its IOs and
//! its weight out). One lock when a thread joins or leaves; per IO two loads and an add.

use crate::workload::Flow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One flow's sums: the IOs issued by its threads (plus 1) and their weights.
struct Share {
    issued: AtomicU64,
    weight: AtomicU64,
}

/// Every flow with a thread in it, by id (a handful at most: a lock and a scan are enough).
static FLOWS: Mutex<Vec<(u32, Arc<Share>)>> = Mutex::new(Vec::new());

/// One thread's place in its flow.
pub(super) struct Gate {
    share: Arc<Share>,
    id: u32,
    weight: u64,
    mine: u64,
    sleep: Duration,
    /// Ahead of its share: nothing is issued until the wait (`hold`) is over.
    pub held: bool,
}

impl Gate {
    pub fn join(f: Flow) -> Gate {
        let mut flows = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
        let share = match flows.iter().find(|(id, _)| *id == f.id) {
            Some((_, s)) => s.clone(),
            None => {
                let s = Arc::new(Share {
                    issued: AtomicU64::new(1),
                    weight: AtomicU64::new(0),
                });
                flows.push((f.id, s.clone()));
                s
            }
        };
        share
            .weight
            .fetch_add(u64::from(f.weight), Ordering::Relaxed);
        Gate {
            share,
            id: f.id,
            weight: u64::from(f.weight),
            mine: 0,
            sleep: f.sleep,
            held: false,
        }
    }

    /// Whether this thread's share of the flow's IOs is above its share of the weights
    /// (mine / issued > weight / weights); then it is held.
    #[inline]
    pub fn ahead(&mut self) -> bool {
        let issued = self.share.issued.load(Ordering::Relaxed);
        let weights = self.share.weight.load(Ordering::Relaxed);
        let ahead = u128::from(self.mine) * u128::from(weights)
            > u128::from(self.weight) * u128::from(issued);
        self.held |= ahead;
        ahead
    }

    /// One IO issued.
    #[inline]
    pub fn issued(&mut self) {
        self.share.issued.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
    }

    /// A look for an IO that found none (a timed trimmer with no zone holding data): this
    /// thread is counted up to its share at once, so the others of its flow are never held
    /// waiting for it. fio counts each pass of its flow check, not the IO after it, and its idle
    /// trimmer passes many times while a writer issues one; counting one look at a time, with a
    /// yield between looks, left a writer of weight 1 beside a trimmer of 8 at 50 writes in a
    /// second on a busy machine, against 37,723 on a quiet one.
    pub fn caught_up(&mut self) {
        let issued = self.share.issued.load(Ordering::Relaxed);
        let weights = self.share.weight.load(Ordering::Relaxed);
        if weights <= self.weight {
            // Alone in its flow: nobody waits for it.
            return;
        }
        // The d that makes (mine + d) / (issued + d) reach weight / weights, and one more, so
        // that `ahead` holds it until the others have issued.
        let behind = (self.weight * issued).saturating_sub(self.mine * weights);
        let d = behind / (weights - self.weight) + 1;
        self.share.issued.fetch_add(d, Ordering::Relaxed);
        self.mine += d;
    }

    /// Whether the wait may begin: with a sleep, once every IO in flight has completed (fio
    /// quiesces first); without one at once, as fio retries at once.
    pub fn may_wait(&self, idle: bool) -> bool {
        idle || self.sleep.is_zero()
    }

    /// The wait of a held thread: its sleep (ending at the run's end or a stop request, looked
    /// at every 50 ms), or a yield of the CPU to the threads it waits for.
    pub fn hold(&mut self, deadline: Option<Instant>, stop: &AtomicBool) {
        self.held = false;
        if self.sleep.is_zero() {
            std::thread::yield_now();
            return;
        }
        let start = Instant::now();
        let end = deadline.map_or(start + self.sleep, |d| d.min(start + self.sleep));
        super::state::sleep_until(end, stop);
    }
}

impl Drop for Gate {
    /// A thread that ends takes its IOs and its weight out, so the others go on by their own
    /// shares; the last one out removes the flow.
    fn drop(&mut self) {
        let mut flows = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
        self.share.issued.fetch_sub(self.mine, Ordering::Relaxed);
        self.share.weight.fetch_sub(self.weight, Ordering::Relaxed);
        // The registry's and this gate's: no other thread holds the flow.
        if Arc::strong_count(&self.share) == 2 {
            flows.retain(|(id, _)| *id != self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads of weights 1 and 8 taking turns to issue whenever they may: the heavier
    /// issues 8 for each of the lighter's, and a third flow's thread is apart.
    #[test]
    fn threads_of_one_flow_issue_by_their_weights() {
        let flow = |id, weight| Flow {
            id,
            weight,
            sleep: Duration::ZERO,
        };
        let mut light = Gate::join(flow(91, 1));
        let mut heavy = Gate::join(flow(91, 8));
        let mut apart = Gate::join(flow(92, 1));
        for _ in 0..9_000 {
            for g in [&mut light, &mut heavy, &mut apart] {
                if !g.ahead() {
                    g.issued();
                }
                g.held = false;
            }
        }
        let ratio = heavy.mine as f64 / light.mine as f64;
        assert!((7.9..=8.1).contains(&ratio), "{ratio}");
        assert_eq!(apart.mine, 9_000);
        // The heavier finds nothing to issue, and is counted up to its share: the lighter
        // may issue at once, and the heavier is held until it has.
        let (l, h) = (light.mine, heavy.mine);
        heavy.caught_up();
        assert!(heavy.ahead(), "{} of {h}", heavy.mine);
        assert!(!light.ahead());
        // Counted up to its share and no further: 8 of every 9 IOs, and one over.
        let share = heavy.mine as f64 / (heavy.mine + light.mine + 1) as f64;
        let over = 1.0 / (h + l) as f64;
        assert!((8.0 / 9.0..8.0 / 9.0 + over).contains(&share), "{share}");
        // Alone in its flow, a thread is never counted up.
        let before = apart.mine;
        apart.caught_up();
        assert_eq!(apart.mine, before);
        // The lighter one leaves: the heavier goes on alone, never held.
        drop(light);
        assert!((0..100).all(|_| {
            let free = !heavy.ahead();
            heavy.issued();
            free
        }));
    }
}
