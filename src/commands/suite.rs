//! `iogauge suite`: a study, or the user's suite file, as one command.

use crate::cli::SuiteArgs;
use anyhow::Result;

pub fn run(args: &SuiteArgs) -> Result<()> {
    crate::commands::execute(&crate::plan::from_suite(args)?)
}
