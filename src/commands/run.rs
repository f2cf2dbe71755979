//! `iogauge run`: one workload — a plan of one cell, executed like any suite.

use crate::cli::RunArgs;
use anyhow::Result;

pub fn run(args: &RunArgs) -> Result<()> {
    // Launched by mpirun or srun: one rank of a run on many hosts.
    if let Some(size) = crate::fleet::launched() {
        let plan_for = |rank, size, host: &str| crate::plan::from_run_rank(args, rank, size, host);
        // Rank 0 presents the combined run; the others said what they had to on the way.
        return match crate::fleet::run(
            &crate::plan::launch(args),
            &plan_for,
            size,
            &crate::present::Shown,
        )? {
            Some(doc) => crate::present::fleet::emit(&doc, args.output.json),
            None => Ok(()),
        };
    }
    crate::commands::execute(&crate::plan::from_run(args)?)
}
