//! `iogauge report`: one self-contained HTML file with the seeds' graphs.

use crate::cli::ReportArgs;
use anyhow::Result;

pub fn run(_args: &ReportArgs) -> Result<()> {
    Err(crate::error::usage("reports are being built"))
}
