//! `iogauge db pgbench`: PostgreSQL on the target — a checked plan, then the run.

use crate::cli::PgbenchArgs;
use anyhow::Result;

pub fn pgbench(args: &PgbenchArgs) -> Result<()> {
    crate::db::run(&crate::db::plan(args)?)
}
