//! `iogauge clean`: undo what killed runs left, from their crash ledgers (see `ledger`).

use crate::cli::CleanArgs;
use anyhow::Result;

pub fn clean(args: &CleanArgs) -> Result<()> {
    let done = crate::ledger::clean(args.dry_run);
    crate::ui::out(&crate::present::clean(&done, args.dry_run))?;
    match done.iter().all(|o| o.ok) {
        true => Ok(()),
        false => Err(anyhow::anyhow!(
            "some of what earlier runs left could not be removed (see above)"
        )),
    }
}
