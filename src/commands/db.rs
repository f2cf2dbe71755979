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
    on_place(s, load, plan, ran).map_err(db::Outcome::or_interrupted)
}

fn on_place(
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
            let on = OnBuilt { p: s, load };
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

/// A load in each file system or array a sweep builds (`db … --scratch`): one run of the
/// server per setting, tagged with the sweep and the setting.
struct OnBuilt<'a> {
    p: &'a load::ServerPlan,
    load: &'a dyn load::Load,
}

impl crate::sweep::Measure for OnBuilt<'_> {
    fn name(&self) -> String {
        self.load.command().to_string()
    }

    fn dry_run(&self) -> bool {
        self.p.output.dry_run
    }

    fn repeats(&self) -> u32 {
        self.p.repeat
    }

    fn rate(&self) -> &'static str {
        "TPS (the storage cells: IOPS)"
    }

    fn each(&self) -> String {
        match self.p.repeat {
            1 => format!("{} once, on a server of its own", self.load.describe()),
            n => format!("{} {n} times, on a server of its own", self.load.describe()),
        }
    }

    fn measure(
        &self,
        at: crate::sweep::At,
        hooks: &dyn crate::exec::Hooks,
    ) -> Result<crate::model::RunDoc> {
        let dir = match (at.target, at.raw) {
            (Some(d), false) => d,
            _ => anyhow::bail!("a database server needs a file system, and none was made"),
        };
        db::cluster::check_reachable_by(&dir, &self.p.owner, self.p.runs_as)?;
        let tags = load::Tags {
            params: at.params,
            notes: at.notes,
        };
        load::run(self.p, self.load, &dir, tags, hooks)?.into_doc()
    }
}

/// `db advise`: the measurements as suites (the data's, then with --wal the WAL's; each plan
/// said, then run), the advice derived from them and shown, the snippet written; then the
/// proof, when asked.
pub fn advise(args: &crate::cli::AdviseArgs) -> Result<()> {
    let p = db::advise::plan(args)?;
    let plans = p.plans();
    // Every target held against its cells before anything is written to any. Each is let go
    // again at once (the data's and the commits' may be one device, which a plan holds
    // exclusively) and taken again when its suite runs.
    let mut said = String::new();
    for pl in &plans {
        let pr = crate::exec::prepare(pl)?;
        said += &crate::present::plan::text(&crate::present::plan::doc(pl, &pr));
    }
    said += &format!(
        "then: {}'s settings from these measurements{}\n",
        p.server_name(),
        p.snippet
            .as_ref()
            .map_or(String::new(), |f| format!(", written to {}", f.display()))
    );
    if let Some(pr) = &p.prove {
        said += &format!(
            "then the proof: `{}`, {} times with the defaults and {} with the advice, alternating\n",
            pr.command(),
            pr.runs,
            pr.runs
        );
    }
    let json = p.measure.output.json;
    if p.measure.output.dry_run {
        return Ok(crate::ui::out(&said)?);
    }
    if !json {
        crate::ui::part(&said);
    }
    let mut earlier = Vec::new();
    let mut devices = Vec::new();
    let mut doc = None;
    let n = plans.len();
    for (i, pl) in plans.iter().enumerate() {
        let hooks = db::advise::Derive {
            plan: &p,
            inner: &crate::present::Shown,
            earlier: &earlier,
            devices: &devices,
            last: i + 1 == n,
        };
        let ran = crate::exec::run(pl, crate::exec::prepare(pl)?, &hooks)?;
        let crate::exec::Executed {
            doc: d,
            target,
            failure,
            stored_as,
            ..
        } = ran;
        drop(target); // the test file goes before anything else is said
        if let Some(e) = failure {
            return Err(e);
        }
        if !json {
            // A finding (a cache that answered, a device that changed pace) bears on the numbers.
            crate::ui::out(&crate::present::findings::text(&d.findings))?;
        }
        if let Some(id) = stored_as {
            say!("stored as run {id} (`iogauge show {id}`)");
        }
        if let Some(sig) = crate::interrupt::requested() {
            return Err(crate::error::Interrupted(sig).into());
        }
        earlier.extend(d.results.iter().cloned());
        if i == 0 {
            devices = d
                .system
                .target
                .as_ref()
                .map_or(Vec::new(), |t| t.devices.clone());
        }
        doc = Some(d);
    }
    let mut doc = doc.expect("two plans ran");
    let mut advice = doc.advice.take().unwrap_or_default();
    if !json {
        let on = |pl: &crate::plan::Plan| {
            pl.target
                .path
                .as_ref()
                .map_or("the current directory".into(), |t| t.display().to_string())
        };
        let mut where_ = on(&p.measure);
        if on(&p.commits) != where_ {
            where_ += &format!(" (the WAL on {})", on(&p.commits));
        }
        crate::ui::out(&crate::present::advise::text(&advice, &where_))?;
    }
    // Written before the proof, so a proof that fails leaves the measured advice.
    write_snippet(&p, &advice, &doc.run_id)?;
    if let Some(pr) = &p.prove {
        let proof = db::advise::prove::run(pr, &advice.settings, &crate::present::Shown)?;
        if !json {
            crate::ui::out(&crate::present::advise::proof(&proof))?;
        }
        // The load's WAL rate gives max_wal_size, which the storage alone could not.
        if let Some(set) = db::advise::from_proof(&proof, p.server) {
            if !json {
                crate::ui::out(&crate::present::advise::from_proof(&set))?;
            }
            match advice.settings.iter_mut().find(|s| s.name == set.name) {
                Some(old) => *old = set,
                None => advice.settings.push(set),
            }
        }
        advice.proof = Some(proof);
    }
    // Again after the proof, with what its load gave.
    if advice.proof.is_some() {
        write_snippet(&p, &advice, &doc.run_id)?;
    }

    if json {
        // One document for both suites: the data's results first, then the commits'.
        doc.notes.push(
            "the data's cells and the commits' ran as two runs, each stored; their results are together here".into(),
        );
        doc.results = earlier;
        doc.advice = Some(advice);
        crate::ui::out(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    }
    Ok(())
}

/// `-o FILE`: the changed settings as the server reads them.
fn write_snippet(
    p: &db::advise::AdvisePlan,
    advice: &crate::model::AdviceDoc,
    run_id: &str,
) -> Result<()> {
    if let Some(path) = &p.snippet {
        let text = db::advise::snippet(advice, run_id);
        crate::target::files::replace(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing --output {}: {e:#}", path.display()))?;
        say!("wrote {}", path.display());
    }
    Ok(())
}
