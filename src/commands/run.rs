//! `iogauge run`: one workload — a plan of one cell, executed like any suite.

use crate::cli::RunArgs;
use anyhow::Result;

pub fn run(args: &RunArgs) -> Result<()> {
    // Launched by mpirun or srun: one rank of a run on many hosts.
    if let Some(ran) = crate::fleet::run(args) {
        return ran;
    }
    crate::commands::execute(&crate::plan::from_run(args)?)
}
