//! `iogauge db pgbench` and `iogauge db sysbench`: a database on the target — a checked plan,
//! then the run.

use crate::cli::{PgbenchArgs, SysbenchArgs};
use anyhow::Result;

pub fn pgbench(args: &PgbenchArgs) -> Result<()> {
    crate::db::run(&crate::db::plan(args)?)
}

pub fn sysbench(args: &SysbenchArgs) -> Result<()> {
    crate::db::oltp::run(&crate::db::oltp::plan(args)?)
}
