//! `iogauge suite`: the seeds' studies as one command each.

use crate::cli::SuiteArgs;
use anyhow::Result;

pub fn run(_args: &SuiteArgs) -> Result<()> {
    Err(crate::error::usage("suites are being built; use `iogauge run` for now"))
}
