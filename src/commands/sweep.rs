//! `iogauge sweep`: one suite per setting, one change at a time (src/sweep).

use crate::cli::SweepArgs;
use anyhow::Result;

pub fn sweep(args: &SweepArgs) -> Result<()> {
    crate::sweep::run(args)
}
