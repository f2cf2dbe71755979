//! `iogauge suite`: a study, or the user's suite file, as one command.

use crate::cli::SuiteArgs;
use anyhow::Result;

pub fn run(args: &SuiteArgs) -> Result<()> {
    crate::exec::execute(&crate::plan::from_suite(args)?)
}
