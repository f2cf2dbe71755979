//! `iogauge run`: one workload — a plan of one cell, executed like any suite.

use crate::cli::RunArgs;
use anyhow::Result;

pub fn run(args: &RunArgs) -> Result<()> {
    // Launched by mpirun or srun: one rank of a run on many hosts.
    if let Some(size) = crate::fleet::launched() {
        let plan_for = |rank, size, host: &str| crate::plan::from_run_rank(args, rank, size, host);
        return crate::fleet::run(&crate::plan::launch(args), &plan_for, size);
    }
    crate::commands::execute(&crate::plan::from_run(args)?)
}
