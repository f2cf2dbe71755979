//! `sweep --fill 40%,80%`: the same suite with the target's file system as found, filled to
//! each level, and as found again (the knob sweep's shape: a device whose write path changed
//! once it was filled shows as a baseline that moved). A flash device's free space is part of
//! its write path; the MySQL-on-flash study ran one load at ~40% and ~80% full.
//!
//! Per level the suite's own test file is made first (the same data layout at every level),
//! then the filler beside it up to the level (`target::fill`), then the cells; the level
//! reached is measured once the filler is synced and recorded with the run (`fill.level`).

use super::*;
use crate::exec::Hooks;
use crate::target::fill as filler;
use std::sync::Mutex;

/// Each level after the file system as found, then as found again. Everything that can refuse
/// the sweep (a raw device, a level passed already, no room) is refused before a byte is
/// written, dry run or not.
pub(super) fn fill_sweep(
    plan: &Plan,
    id: &str,
    levels: &[f64],
    hooks: &dyn Hooks,
) -> Result<Settings> {
    let target = plan.target.path.as_deref();
    let dir = filler::beside(target)?;
    // What the run itself adds before the filler: the test file it creates; an existing file
    // is used as it is.
    let adds = match target.is_some_and(|p| p.is_file()) {
        true => 0,
        false => plan
            .room()
            .unwrap_or(0)
            .saturating_mul(u64::from(plan.target.files.max(1))),
    };
    let (space, bytes) = filler::plan(levels, &dir, adds)?;
    let mut settings = vec![Setting::default()];
    settings.extend(levels.iter().map(|&l| Setting {
        fill: Some(l),
        ..Setting::default()
    }));
    settings.push(Setting::default());
    say!(
        "sweep {id}: {} settings: the file system holding {} as found ({:.1}% used, {:.1}% with the test file), filled to {}, as found again · {}",
        settings.len(),
        dir.display(),
        filler::level(&space),
        filler::level_with(&space, adds),
        levels
            .iter()
            .map(|l| format!("{l}%"))
            .collect::<Vec<_>>()
            .join(", "),
        runs_each(plan.repeat.n)
    );
    if plan.output.dry_run {
        for (l, b) in levels.iter().zip(&bytes) {
            say!(
                "dry run: fill {l}% would write {} beside the test file of {}",
                units::iec(*b),
                units::iec(adds)
            );
        }
        say!(
            "dry run: nothing is written; each setting runs the suite planned below, {} times",
            plan.repeat.n
        );
        return Ok(None);
    }
    let out = in_turn(&settings, &[], |s, label| {
        let params = s
            .fill
            .map(|l| BTreeMap::from([("fill".to_string(), format!("{l}%"))]))
            .unwrap_or_default();
        let filled = Filled {
            inner: hooks,
            level: s.fill,
            seed: plan.env.seed,
            filler: Mutex::new(None),
        };
        // `filled` and its filler live until the measurement is over, whatever ended it.
        Ok(plan.measure(At::new(id, label, params, None, Vec::new()), &filled))
    })?;
    Ok(Some((Vec::new(), out)))
}

/// A level's hooks: the caller's, and once the test file is ready the filler beside it up to
/// the level (none for the file system as found), with the level reached recorded in the run.
struct Filled<'a> {
    inner: &'a dyn Hooks,
    level: Option<f64>,
    seed: u64,
    /// Held until the run is over; dropping it removes the file.
    filler: Mutex<Option<crate::target::Target>>,
}

impl Hooks for Filled<'_> {
    fn found_before_run(&self, findings: &[iogauge_analyze::Finding]) {
        self.inner.found_before_run(findings);
    }

    fn checked(&self) -> Result<()> {
        self.inner.checked()
    }

    fn realized(
        &self,
        target: &std::path::Path,
        params: &mut BTreeMap<String, String>,
    ) -> Result<()> {
        self.inner.realized(target, params)?;
        let dir = filler::beside(Some(target))?;
        let reached = match self.level {
            Some(l) => {
                let (f, reached) = filler::fill_to(&dir, l, self.seed)?;
                *self.filler.lock().unwrap_or_else(|e| e.into_inner()) = f;
                reached
            }
            None => filler::level(&filler::space_of(&dir)?),
        };
        say!(
            "the file system holding {} is {reached:.1}% used as its cells begin",
            dir.display()
        );
        params.insert("fill.level".into(), format!("{reached:.1}%"));
        Ok(())
    }

    fn before_cell(&self) -> Result<()> {
        self.inner.before_cell()
    }

    fn peer_may_stop(&self) -> bool {
        self.inner.peer_may_stop()
    }

    fn peer_done(&self) -> bool {
        self.inner.peer_done()
    }

    fn cell_done(&self, stopped_by_peer: bool) {
        self.inner.cell_done(stopped_by_peer);
    }

    fn measured(&self, doc: &mut crate::model::RunDoc) {
        self.inner.measured(doc);
    }
}
