//! What every way of running a cell shares: its repeats, the page cache dropped before a
//! buffered one, and the error of a results database that cannot take its result.

use super::{drop_caches, work::Ran};
use crate::plan::Plan;
use anyhow::Result;
use std::path::Path;

/// A results database that could not take a result: the run stops, what was measured is shown.
pub(super) fn not_stored(e: anyhow::Error) -> anyhow::Error {
    e.context(NotStored)
}

/// The context of a store failure, so that a store that takes the run in the end (a lock
/// released meanwhile) turns "not stored" into what happened: the run stopped early, and what
/// it measured was stored.
#[derive(Debug)]
pub(super) struct NotStored;

impl std::fmt::Display for NotStored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the results database could not store the run (the results measured are printed, and written to --output when asked, but not stored)")
    }
}

/// Calls `once` (with a progress label naming the repeat) `--repeat` times, dropping the page
/// cache between repeats when asked; stops early on an interrupt or an error.
pub(super) fn repeated(
    plan: &Plan,
    notes: &mut Vec<String>,
    prefix: &str,
    mut once: impl FnMut(String, Option<u32>) -> Result<Ran>,
) -> Result<Vec<Ran>> {
    let n = plan.repeat.n;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        if i > 0 && plan.repeat.drop_caches {
            if let Err(why) = drop_caches() {
                let note = format!(
                    "--drop-caches: the page cache was not dropped between repeats ({why})"
                );
                if !notes.contains(&note) {
                    say!("note: {note}");
                    notes.push(note);
                }
            }
        }
        let label = match (prefix.is_empty(), n) {
            (_, 1) => prefix.to_string(),
            (false, _) => format!("{prefix} [repeat {}/{n}]", i + 1),
            (true, _) => format!("repeat {}/{n}", i + 1),
        };
        // The first repeat's way of waiting for completions, held for the others.
        let held = out
            .first()
            .filter(|r: &&Ran| r.m.engine.complete_trial.is_some())
            .map(|r| r.m.engine.complete_batch);
        let r = once(label, held)?;
        let stop = r.m.interrupted.is_some() || r.m.error.is_some();
        out.push(r);
        if stop || crate::interrupt::requested().is_some() {
            break;
        }
    }
    Ok(out)
}

/// Drops `path`'s pages from the page cache (fio's `invalidate`), for a file or a block
/// device; what cannot be opened or dropped is left as it is (the job then runs as fio's
/// would with invalidate=0, and its cache note says buffered IO may be served from memory).
pub(super) fn drop_cached(path: &Path) {
    if let Ok(f) = std::fs::File::open(path) {
        let _ = iogauge_engine::sys::drop_file_cache(&f);
    }
}
