//! `iogauge db pgbench` and `iogauge db sysbench`: a database on the target — a checked plan,
//! then the run, then what it measured presented (JSON, or the summary for people; and the
//! --output file), then the run's failure or signal as the exit.

use crate::cli::{PgbenchArgs, SysbenchArgs, TpccArgs, TpccCheckArgs};
use crate::db::{self, load};
use crate::present::db as text;
use anyhow::Result;

pub fn pgbench(args: &PgbenchArgs) -> Result<()> {
    let p = db::plan(args)?;
    if p.server.output.dry_run {
        return Ok(crate::ui::out(&text::plan(&p))?);
    }
    let ran = load::run(&p.server, &p, &crate::present::Shown)?;
    crate::present::write_out(&ran.doc, p.server.file.as_ref(), &p.server.output, &|| {
        text::run(&p, &ran.doc)
    })?;
    ran.result()
}

pub fn sysbench(args: &SysbenchArgs) -> Result<()> {
    let p = db::sysbench_plan(args)?;
    if p.server.output.dry_run {
        return Ok(crate::ui::out(&text::sysbench_plan(&p))?);
    }
    let ran = load::run(&p.server, &p, &crate::present::Shown)?;
    crate::present::write_out(&ran.doc, p.server.file.as_ref(), &p.server.output, &|| {
        text::sysbench_run(&p, &ran.doc)
    })?;
    ran.result()
}

pub fn tpcc(args: &TpccArgs) -> Result<()> {
    let p = db::tpcc_plan(args)?;
    if p.server.output.dry_run {
        return Ok(crate::ui::out(&text::tpcc_plan(&p))?);
    }
    let ran = load::run(&p.server, &p, &crate::present::Shown)?;
    crate::present::write_out(&ran.doc, p.server.file.as_ref(), &p.server.output, &|| {
        text::tpcc_run(&p, &ran.doc)
    })?;
    ran.result()
}

pub fn tpcc_check(args: &TpccCheckArgs) -> Result<()> {
    let checks = db::tpcc::check_kept(&args.dir, args.pg_bin.as_deref())?;
    crate::ui::out(&text::tpcc_checks(&checks))?;
    match db::tpcc::failure(&checks) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
