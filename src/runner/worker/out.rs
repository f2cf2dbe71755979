//! What one worker measured: its histograms and counts by direction, its fine bins, and what
//! stopped it, merged with the other workers' once they end (`runner::merge`).

use super::{WorkerCfg, FINE_BIN, KEEP_FAILURES};
use crate::measure::{self, Hist};
use crate::workload::{Limit, Spec};
use iogauge_engine::Io;
use iogauge_verify::Tally;
use std::time::{Duration, Instant};

/// What a worker measured.
pub struct WorkerOut {
    pub read: Hist,
    pub write: Hist,
    pub sync: Hist,
    /// fio's trims on emulated zones (zone resets in memory), apart from the writes.
    pub trim: Hist,
    pub trims: u64,
    pub trim_bytes: u64,
    /// With a rate: reads' and writes' time from submission, beside the latency from their
    /// planned start that `read` and `write` hold.
    pub service: Hist,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub syncs: u64,
    /// Completed IOs per fine bin since the measurement started.
    pub fine: Vec<u32>,
    /// Time of the last counted completion since the measurement started.
    pub last_completion: Duration,
    /// What stopped this worker early; what it measured until then is kept.
    pub error: Option<anyhow::Error>,
    /// With `--verify`: the verdicts of the reads this worker could judge.
    pub verify: Tally,
    /// IO errors gone on after (fio's continue_on_error), and the first: its IO and errno.
    pub ignored: u64,
    pub first_ignored: Option<(Io, i32)>,
    /// Completions waited for at a time while measuring (an auto batch's choice).
    pub complete_batch: u32,
    /// An auto batch's trial: completions reaped waiting for one, for half and for all in
    /// flight, and the time each way took.
    pub trial: [u64; 3],
    pub trial_time: [Duration; 3],
}

impl WorkerOut {
    pub(super) fn new(cfg: &WorkerCfg, deadline: Option<Instant>) -> WorkerOut {
        let spec = cfg.spec;
        WorkerOut {
            read: measure::run_hist(),
            write: measure::run_hist(),
            sync: measure::run_hist(),
            trim: measure::run_hist(),
            trims: 0,
            trim_bytes: 0,
            service: measure::run_hist(),
            reads: 0,
            writes: 0,
            read_bytes: 0,
            write_bytes: 0,
            syncs: 0,
            fine: Vec::with_capacity(match deadline {
                // At most a day's bins up front (7 MB); a longer run grows the vector a few
                // times.
                Some(_) => {
                    ((expected_secs(spec) / FINE_BIN.as_secs_f64()) as usize).min(864_000) + 2
                }
                None => 1024,
            }),
            last_completion: Duration::ZERO,
            error: None,
            verify: Tally::new(if cfg.verify.is_some() {
                KEEP_FAILURES
            } else {
                0
            }),
            ignored: 0,
            first_ignored: None,
            complete_batch: spec.complete_batch.max(1),
            trial: [0; 3],
            trial_time: [Duration::ZERO; 3],
        }
    }
}

fn expected_secs(spec: &Spec) -> f64 {
    match spec.limit {
        Limit::Time(t) => t.as_secs_f64(),
        Limit::Data(_) => 10.0,
    }
}
