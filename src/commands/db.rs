//! `iogauge db pgbench` and `iogauge db sysbench`: a database on the target — a checked plan,
//! then the run, then what it measured presented (JSON, or the summary for people; and the
//! --output file), then the run's failure or signal as the exit.

use crate::cli::{PgbenchArgs, SysbenchArgs, TpccArgs, TpccCheckArgs};
use crate::db::{self, load};
use crate::present::db as text;
use anyhow::Result;

pub fn pgbench(args: &PgbenchArgs) -> Result<()> {
    let p = db::plan(args)?;
    on(&p.server, &p, &|| text::plan(&p), &|doc| text::run(&p, doc))
}

pub fn sysbench(args: &SysbenchArgs) -> Result<()> {
    let p = db::sysbench_plan(args)?;
    on(&p.server, &p, &|| text::sysbench_plan(&p), &|doc| {
        text::sysbench_run(&p, doc)
    })
}

pub fn tpcc(args: &TpccArgs) -> Result<()> {
    let p = db::tpcc_plan(args)?;
    on(&p.server, &p, &|| text::tpcc_plan(&p), &|doc| {
        text::tpcc_run(&p, doc)
    })
}

/// `load` on its server in the directory given, or in each file system or array built on
/// `--scratch` (a sweep of its own, presented as `sweep` presents one); `plan` and `ran` are
/// the load's texts.
fn on(
    s: &load::ServerPlan,
    load: &dyn load::Load,
    plan: &dyn Fn() -> String,
    ran: &dyn Fn(&crate::model::RunDoc) -> String,
) -> Result<()> {
    match &s.place {
        load::Place::Dir(dir) => {
            if s.output.dry_run {
                return Ok(crate::ui::out(&plan())?);
            }
            let done = load::run(s, load, dir, load::Tags::default(), &crate::present::Shown)?;
            crate::present::write_out(&done.doc, s.file.as_ref(), &s.output, &|| ran(&done.doc))?;
            done.result()
        }
        load::Place::Built(b) => {
            let on = load::OnBuilt { p: s, load };
            match crate::sweep::built(b, &on, s.output.no_store, &crate::present::Shown)? {
                // The sweep's plan was said; the load's follows.
                None => Ok(crate::ui::out(&plan())?),
                Some(doc) => super::sweep::done(&doc, s.output.json),
            }
        }
    }
}

pub fn tpcc_check(args: &TpccCheckArgs) -> Result<()> {
    let checks = db::tpcc::check_kept(&args.dir, args.pg_bin.as_deref())?;
    crate::ui::out(&text::tpcc_checks(&checks))?;
    match db::tpcc::failure(&checks) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
