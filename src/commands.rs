//! One module per subcommand; each takes its parsed arguments and returns an error or nothing.

pub mod clean;
pub mod db;
pub mod docs;
pub mod fio;
pub mod fsync_check;
pub mod probe;
pub mod report;
pub mod results;
pub mod run;
pub mod suite;
pub mod sweep;
pub mod verify;

use crate::exec;
use crate::plan::{Kind, Plan};
use anyhow::Result;

/// The one path of every command that runs cells (run, suite, fio, probe cache): the plan held
/// against the target and said, the run, its document presented, then the exit code — after the
/// test file is removed.
pub fn execute(plan: &Plan) -> Result<()> {
    let prepared = exec::prepare(plan)?;
    let planned = crate::present::plan::doc(plan, &prepared);
    let said = crate::present::plan::text(&planned);
    if plan.output.dry_run {
        return Ok(crate::ui::out(&match plan.output.json {
            true => format!("{}\n", serde_json::to_string_pretty(&planned)?),
            false => said,
        })?);
    }
    if plan.kind == Kind::Suite && !plan.output.json {
        crate::ui::part(&said);
    }
    let ran = exec::run(plan, prepared, &crate::present::Shown)?;
    crate::present::run(plan, &ran)?;
    let exec::Executed {
        doc,
        target,
        streams,
        failure,
        damaged,
        result_of,
        ..
    } = ran;
    drop((target, streams)); // removes created test files before the exit code is decided
                             // Every cell measured to its end: a failure after that (the store's) cut nothing short.
    let whole = result_of.iter().all(Option::is_some) && doc.results.iter().all(|r| !r.interrupted);
    if let Some(e) = failure {
        return Err(match plan.kind {
            Kind::Run if whole => e.context("the run was measured to its end (above)"),
            Kind::Run if doc.results.iter().any(|r| r.ios > 0) => {
                e.context("the results above cover the run up to that point")
            }
            _ => e,
        });
    }
    if let Some(e) = damaged {
        return Err(e);
    }
    match crate::interrupt::requested() {
        Some(sig) => Err(crate::error::Interrupted(sig).into()),
        None => Ok(()),
    }
}
