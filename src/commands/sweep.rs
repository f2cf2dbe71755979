//! `iogauge sweep`: one suite per setting, one change at a time (src/sweep).

use crate::cli::SweepArgs;
use crate::sweep::Sweep;
use anyhow::Result;

pub fn sweep(args: &SweepArgs) -> Result<()> {
    match crate::sweep::run(crate::plan::from_sweep(args)?, &crate::present::Shown)? {
        // The sweep's plan was said; the suite's, once per setting, follows.
        Sweep::Planned(plan) => crate::commands::execute(&plan),
        Sweep::Done { doc, json } => done(&doc, json),
    }
}

/// A sweep's table (or its JSON), and its end: an interrupt, or every setting skipped, is the
/// exit code's to say.
pub fn done(doc: &crate::sweep::SweepDoc, json: bool) -> Result<()> {
    crate::ui::out(&match json {
        true => format!("{}\n", serde_json::to_string_pretty(doc)?),
        false => crate::present::sweep::text(doc),
    })?;
    match crate::interrupt::requested() {
        Some(sig) => Err(crate::error::Interrupted(sig).into()),
        // Every setting skipped: the sweep measured nothing, and says so by its code.
        None if !doc.anything_ran() => Err(anyhow::anyhow!(
            "no setting of the sweep ran (each was skipped, as said above), so nothing was measured or stored"
        )),
        None => Ok(()),
    }
}
