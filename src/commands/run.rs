//! `iogauge run`: one workload — a plan of one cell, executed like any suite.

use crate::cli::RunArgs;
use anyhow::Result;

pub fn run(args: &RunArgs) -> Result<()> {
    crate::exec::execute(&crate::plan::from_run(args)?)
}
