//! Streams of one cell run at once: each stream is a run of its own ([`super::run`]'s
//! workers, intervals and limit), and their start gates open at one instant.

use super::{run_gated, Display, Measured, Opener};
use crate::workload::{Beside, Ends, Spec};
use anyhow::{anyhow, Result};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The start gates of a cell's streams opened at one instant: each stream's watching thread
/// arrives once its own workers are ready (or gone), and every stream starts at the same
/// origin, so a stream's ramp, intervals and time limit line up with the others'.
pub(super) struct Together {
    streams: usize,
    arrived: AtomicUsize,
    origin: OnceLock<Instant>,
    /// Each stream's end by another's (fio's exitall): set for the streams that end ends.
    ended: Vec<AtomicBool>,
}

impl Together {
    pub(super) fn meet(&self) -> Instant {
        self.arrive();
        while self.arrived.load(Ordering::SeqCst) < self.streams {
            std::thread::sleep(Duration::from_micros(200));
        }
        *self.origin.get_or_init(Instant::now)
    }

    /// Whether another stream's end has ended stream `i`: its watch then stops it.
    pub(super) fn ended(&self, i: usize) -> bool {
        self.ended[i].load(Ordering::SeqCst)
    }

    /// Stream `i` (of `streams`) has ended: the streams its end ends are told.
    fn end(&self, i: usize, streams: &[Stream]) {
        let me = streams[i].beside;
        for (k, st) in streams.iter().enumerate() {
            let ends = match me.ends {
                Ends::Own => false,
                Ends::Group => st.beside.group == me.group,
                Ends::Cell | Ends::Later => true,
            };
            if ends && k != i {
                self.ended[k].store(true, Ordering::SeqCst);
            }
        }
    }

    /// Counted as arrived without waiting: a stream that ended before its gate (a bug) must
    /// not hold the others forever; counting one twice only opens the gate, never holds it.
    fn arrive(&self) {
        self.arrived.fetch_add(1, Ordering::SeqCst);
    }
}

/// One stream of a cell of several: its workload, how its workers open the target, and its
/// range. Streams run together behind one gate ([`run_together`]).
pub struct Stream<'a> {
    pub spec: &'a Spec,
    pub open: Opener<'a>,
    pub range_start: u64,
    pub range_bytes: u64,
    /// When it starts after the cell's start, and whether its end ends the others.
    pub beside: Beside,
}

/// Runs several streams at once, all started at one instant, each measured on its own (its
/// own histograms, intervals and limit: a timed stream and one of a fixed amount each end on
/// their own, or when one whose end ends them ends: fio's exitall). A stream may start later
/// than the others (`Beside::delay`). Only the first stream draws progress; an interrupt stops them all. The CPU
/// time in each measurement is the process's over that stream's window, so it holds every
/// stream's work.
pub fn run_together(streams: &[Stream], display: &Display) -> Result<Vec<Measured>> {
    let together = Together {
        streams: streams.len(),
        arrived: AtomicUsize::new(0),
        origin: OnceLock::new(),
        ended: streams.iter().map(|_| AtomicBool::new(false)).collect(),
    };
    let quiet = Display::default();
    let outs: Vec<Result<Measured>> = std::thread::scope(|s| {
        let handles: Vec<_> = streams
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let together = &together;
                let display = if i == 0 { display } else { &quiet };
                s.spawn(move || {
                    let range = (st.range_start, st.range_bytes);
                    let gate = Some((together, i, st.beside.delay));
                    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_gated(st.spec, st.open, range, display, None, gate)
                    }))
                    .unwrap_or_else(|_| {
                        together.arrive();
                        Err(anyhow!("a stream's thread panicked (a bug in iogauge)"))
                    });
                    together.end(i, streams);
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(anyhow!("a stream's thread panicked (a bug in iogauge)"))
                })
            })
            .collect()
    });
    outs.into_iter().collect()
}
