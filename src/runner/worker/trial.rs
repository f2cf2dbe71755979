//! An auto complete batch's trial (`--complete-batch auto`): before the measurement each
//! worker waits for one completion, for half and for all in flight in turn, and keeps the way
//! that moved clearly more IOs (see [`super`]).

use crate::workload::CALIBRATION;
use std::time::{Duration, Instant};

/// Waiting for several at a time must move this much more than one at a time to be chosen:
/// exact per-IO timing is worth a small loss, and phases of 100 ms vary by a few percent.
const BATCH_GAIN: f64 = 1.10;

/// The ways an auto trial waits: for one completion, for half of those in flight, for all of
/// them. On zram with one thread, half kept the queue from running dry while its io_uring
/// worker read, and moved ~1.3× one at a time where all moved ~1.15×; with two threads all won.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Way {
    One = 0,
    Half = 1,
    All = 2,
}

impl Way {
    /// Completions waited for, and refills handed to the kernel at a time, at `depth` in
    /// flight: waiting for several refills as many, so they go to the kernel at once.
    pub(super) fn batches(self, depth: usize, submit_batch: usize) -> (usize, usize) {
        match self {
            Way::One => (1, submit_batch),
            Way::Half => (depth.div_ceil(2), depth.div_ceil(2)),
            Way::All => (depth, depth),
        }
    }
}

/// An auto complete batch's trial: seven equal phases. The first warms up (threads, io_uring's
/// workers, the device) and is not counted; the other six wait for all, half, one, one, half,
/// all, so a steady drift of the machine weighs the same on every way.
///
/// Each way is judged by its rate: the completions a wait reaped over the time since the wait
/// before it ended. A phase's last wait ends after the phase does, and waiting for all ends
/// later than waiting for one (at 32 in flight on a device held to 2,000 reads a second, by
/// up to 16 ms of a 100 ms phase): counted by phase alone, that extra time read as a gain.
pub(super) struct Trial {
    pub(super) start: Instant,
    pub(super) phase: Duration,
    /// Completions reaped each way ([`Way`] order) in each half (phases 1–3 and 4–6).
    pub(super) halves: [[u64; 3]; 2],
    /// The time those completions took, the same way.
    pub(super) spans: [[Duration; 3]; 2],
    /// When the last wait ended.
    pub(super) last: Instant,
    /// The way the wait under way waits, and its phase (none in the warm-up).
    pub(super) way: Way,
    pub(super) counted: Option<u32>,
    /// IOs in flight: how many a wait for half or for all reaps at once.
    pub(super) depth: usize,
}

const TRIAL_PHASES: u32 = 7;
const TRIAL_ORDER: [Way; 6] = [Way::All, Way::Half, Way::One, Way::One, Way::Half, Way::All];

impl Trial {
    pub(super) fn new(origin: Instant, depth: usize) -> Trial {
        Trial {
            start: origin,
            phase: CALIBRATION / TRIAL_PHASES,
            halves: [[0; 3]; 2],
            spans: [[Duration::ZERO; 3]; 2],
            last: origin,
            way: Way::One,
            counted: None,
            depth,
        }
    }

    /// A wait ended at `now` having reaped `reaped`: they and the time since the last wait
    /// ended count for the way it waited. The next wait's way, or `None` once the trial is
    /// over.
    pub(super) fn waited(&mut self, now: Instant, reaped: u64) -> Option<Way> {
        if let Some(k) = self.counted {
            let h = usize::from(k > 3);
            self.halves[h][self.way as usize] += reaped;
            self.spans[h][self.way as usize] += now - self.last;
        }
        self.last = now;
        let (k, w) = self.at(now)?;
        (self.way, self.counted) = (w, (k > 0).then_some(k));
        Some(w)
    }

    /// At `now`: the phase (0 the warm-up) and its way of waiting, or `None` once the trial is
    /// over.
    pub(super) fn at(&self, now: Instant) -> Option<(u32, Way)> {
        let k = ((now - self.start).as_nanos() / self.phase.as_nanos()) as u32;
        (k < TRIAL_PHASES).then(|| (k, TRIAL_ORDER[k.saturating_sub(1) as usize]))
    }

    /// Completions reaped each way over the trial, and the time they took.
    pub(super) fn ios(&self) -> ([u64; 3], [Duration; 3]) {
        let ([a, b], [s, t]) = (self.halves, self.spans);
        (
            [a[0] + b[0], a[1] + b[1], a[2] + b[2]],
            [s[0] + t[0], s[1] + t[1], s[2] + t[2]],
        )
    }

    /// The way to measure with: of half and all, those that beat one at a time in each half
    /// of the trial (a throttle that hands out its budget in slices, or a burst of other work,
    /// can favour one phase but not both halves), the faster; one at a time if neither did.
    ///
    /// To beat it, a way's rate must be more than [`BATCH_GAIN`] times one at a time's, and
    /// the IOs it moved beyond what that rate would have moved in its time more than one of
    /// its waits reaps: its counts come in steps of a whole wait, so at 32 in flight on a
    /// device held to 2,000 reads a second a phase of 100 ms reaps 192 or 224 — 1.12× by
    /// the step alone, and a throttle whose slices let a drained queue burst took that step
    /// in both halves often enough to fail a test.
    pub(super) fn choice(&self) -> Way {
        let rate = |n: u64, t: Duration| n as f64 / t.as_secs_f64().max(1e-9);
        let wins = |w: Way| {
            let step = w.batches(self.depth, 1).0 as f64;
            (0..2).all(|h| {
                let (n, t) = (self.halves[h], self.spans[h]);
                let one = rate(n[Way::One as usize], t[Way::One as usize]);
                let (n, t) = (n[w as usize], t[w as usize]);
                rate(n, t) > one * BATCH_GAIN && n as f64 - one * t.as_secs_f64() > step
            })
        };
        let (n, t) = self.ios();
        [Way::Half, Way::All]
            .into_iter()
            .filter(|&w| wins(w))
            .max_by(|&a, &b| {
                rate(n[a as usize], t[a as usize]).total_cmp(&rate(n[b as usize], t[b as usize]))
            })
            .unwrap_or(Way::One)
    }
}
