//! `sweep --rebuild`: an md array measured while it recovers a member. "In case one SSD fails
//! the RAID will rebuild itself using the hot spare in about 15 minutes. During this time window
//! we are vulnerable" ("One DVD per second") — and slower: what the database sees in that window
//! is measured here, beside the whole array's figures.
//!
//! The member (failed and removed before, see [`super::array::Array::degrade`]) is added back
//! right before the first cell measures, after the target's fill, so the rebuild runs under the
//! cells and not under the fill. md's own files are read once a second from then on
//! (`sync_action`, `sync_completed`, `sync_speed`, `degraded`) on the cells' clock, and after the
//! last cell the rebuild is followed to its end, so its duration is known. `--rebuild-speed`
//! sets the array's own `sync_speed_min`/`sync_speed_max` (not the system-wide
//! `/proc/sys/dev/raid` limits, which other arrays share) and puts back what it found.

use crate::exec::Hooks;
use crate::model::{RebuildDoc, RebuildSample, RebuildWindow, RunDoc};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often md's files are read: md's `sync_speed` is itself an average over seconds.
const EVERY: Duration = Duration::from_secs(1);

/// The executor's hooks with the rebuild around them: started before the first cell, sampled
/// beside every cell, joined to the run's document at its end.
pub struct Rebuilding<'a> {
    inner: &'a dyn Hooks,
    array: PathBuf,
    md: PathBuf,
    member: PathBuf,
    /// The limits as found (md's text, e.g. "1000 (system)"), put back on drop.
    found: [String; 2],
    speed: (u64, u64),
    speed_set: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    started: Option<Instant>,
    sampler: Option<(mpsc::Sender<()>, JoinHandle<Vec<RebuildSample>>)>,
    cells: Vec<RebuildWindow>,
    error: Option<String>,
}

impl<'a> Rebuilding<'a> {
    /// For `array` (/dev/mdN) with `member` removed: its limits set to `speed_kib` where given.
    pub fn new(
        inner: &'a dyn Hooks,
        array: &Path,
        member: &Path,
        speed_kib: Option<(u64, u64)>,
    ) -> Result<Rebuilding<'a>> {
        let name = array
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let md = PathBuf::from(format!("/sys/block/{name}/md"));
        let read = |f: &str| {
            std::fs::read_to_string(md.join(f))
                .map(|s| s.trim().to_string())
                .with_context(|| format!("reading {}", md.join(f).display()))
        };
        let found = [read("sync_speed_min")?, read("sync_speed_max")?];
        let me = Rebuilding {
            inner,
            array: array.to_path_buf(),
            member: member.to_path_buf(),
            found: found.clone(),
            speed: speed_kib.unwrap_or((leading(&found[0]), leading(&found[1]))),
            speed_set: speed_kib.is_some(),
            md,
            state: Mutex::new(State::default()),
        };
        if let Some((min, max)) = speed_kib {
            // md refuses a minimum above the maximum in force: the order that never makes
            // one, then the other if the first failed.
            let set = |order: [(&str, u64); 2]| {
                order.iter().try_for_each(|(f, v)| {
                    crate::target::files::set_knob(&me.md.join(f), v.to_string())
                        .with_context(|| format!("setting {} to {v}", me.md.join(f).display()))
                })
            };
            set([("sync_speed_max", max), ("sync_speed_min", min)])
                .or_else(|_| set([("sync_speed_min", min), ("sync_speed_max", max)]))?;
        }
        Ok(me)
    }

    /// Adds the member back (as a new one: its old superblock zeroed, so md recovers it whole
    /// rather than trusting what it held) and starts sampling.
    fn start(&self, st: &mut State) -> Result<()> {
        super::fs::run(
            Command::new("mdadm")
                .arg("--zero-superblock")
                .arg(&self.member),
        )
        .context("mdadm --zero-superblock")?;
        super::fs::run(
            Command::new("mdadm")
                .args(["--manage", "--quiet"])
                .arg(&self.array)
                .arg("--add")
                .arg(&self.member),
        )
        .context("mdadm --add")?;
        let t0 = Instant::now();
        let (tx, rx) = mpsc::channel::<()>();
        let md = self.md.clone();
        let handle = std::thread::Builder::new()
            .name("iogauge-rebuild".into())
            .spawn(move || sample_until(&md, t0, &rx))
            .context("starting the rebuild's sampler")?;
        st.started = Some(t0);
        st.sampler = Some((tx, handle));
        Ok(())
    }
}

/// md's sysfs read every [`EVERY`] until told to stop: after the first message, as soon as the
/// array is whole (or at once if the run was cut); a dropped sender stops it at once.
fn sample_until(md: &Path, t0: Instant, rx: &mpsc::Receiver<()>) -> Vec<RebuildSample> {
    let mut out = vec![sample(md, t0)];
    let mut finishing = false;
    loop {
        let whole = out.last().is_some_and(|s| s.degraded == 0);
        if (finishing && whole) || crate::interrupt::requested().is_some() {
            return out;
        }
        match rx.recv_timeout(EVERY) {
            Ok(()) => finishing = true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return out,
        }
        out.push(sample(md, t0));
    }
}

fn sample(md: &Path, t0: Instant) -> RebuildSample {
    let read = |f: &str| std::fs::read_to_string(md.join(f)).unwrap_or_default();
    RebuildSample {
        t_s: t0.elapsed().as_secs_f64(),
        action: read("sync_action").trim().to_string(),
        done: completed(&read("sync_completed")),
        speed_kib: read("sync_speed").trim().parse().ok(),
        degraded: read("degraded").trim().parse().unwrap_or(0),
    }
}

/// md's `sync_completed`, "DONE / TOTAL" in sectors, as a fraction; "none" when idle.
fn completed(s: &str) -> Option<f64> {
    let (done, total) = s.trim().split_once('/')?;
    let (d, t): (f64, f64) = (done.trim().parse().ok()?, total.trim().parse().ok()?);
    (t > 0.0).then(|| d / t)
}

/// The number md's speed limits start with ("1000 (system)").
fn leading(s: &str) -> u64 {
    s.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

impl Hooks for Rebuilding<'_> {
    fn found_before_run(&self, f: &[iogauge_analyze::Finding]) {
        self.inner.found_before_run(f)
    }

    fn checked(&self) -> Result<()> {
        self.inner.checked()
    }

    fn before_cell(&self) -> Result<()> {
        self.inner.before_cell()?;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.started.is_none() && st.error.is_none() {
            if let Err(e) = self.start(&mut st) {
                // The suite measures a degraded array then, and the document says why.
                st.error = Some(format!("{e:#}"));
            }
        }
        if let Some(t0) = st.started {
            let now = t0.elapsed().as_secs_f64();
            st.cells.push(RebuildWindow {
                name: None,
                from_s: now,
                to_s: now,
            });
        }
        Ok(())
    }

    fn peer_may_stop(&self) -> bool {
        self.inner.peer_may_stop()
    }

    fn peer_done(&self) -> bool {
        self.inner.peer_done()
    }

    fn cell_done(&self, stopped_by_peer: bool) {
        self.inner.cell_done(stopped_by_peer);
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(t0), Some(w)) = (st.started, st.cells.last_mut()) {
            w.to_s = t0.elapsed().as_secs_f64();
        }
    }

    fn measured(&self, doc: &mut RunDoc) {
        self.inner.measured(doc);
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = st.error.take() {
            doc.notes.push(format!(
                "--rebuild: {} could not be added back to {} ({e}); the array was measured degraded",
                self.member.display(),
                self.array.display()
            ));
        }
        let Some(((tx, handle), t0)) = st.sampler.take().zip(st.started) else {
            return;
        };
        if !doc.interrupted {
            say!(
                "  the measurement ended while {} rebuilt {}: following the rebuild to its end to time it (Ctrl-C stops waiting; what was measured is kept)",
                self.array.display(),
                self.member.display()
            );
        }
        // After the last cell: follow the rebuild to its end, unless the run was cut.
        match doc.interrupted {
            true => drop(tx),
            false => {
                let _ = tx.send(());
            }
        }
        let samples = handle.join().unwrap_or_default();
        let mut cells = std::mem::take(&mut st.cells);
        for w in &mut cells {
            // A cell that failed was never marked done: it ran until the next one started.
            if w.to_s <= w.from_s {
                w.to_s = t0.elapsed().as_secs_f64();
            }
        }
        // Cells and results pair one to one unless a cell was refused (it then has a window
        // and no result): names only where the counts say they pair.
        if cells.len() == doc.results.len() {
            for (w, r) in cells.iter_mut().zip(&doc.results) {
                w.name = r.name.clone().or_else(|| Some(r.workload.short()));
            }
        }
        doc.rebuild = Some(RebuildDoc {
            array: self
                .array
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            member: self.member.display().to_string(),
            speed_min_kib: self.speed.0,
            speed_max_kib: self.speed.1,
            speed_set: self.speed_set,
            finished_s: samples.iter().find(|s| s.degraded == 0).map(|s| s.t_s),
            cells,
            samples,
        });
    }
}

impl Drop for Rebuilding<'_> {
    /// The limits as found, `(system)` ones given back to the system's.
    fn drop(&mut self) {
        if !self.speed_set {
            return;
        }
        for (f, v) in [
            ("sync_speed_min", &self.found[0]),
            ("sync_speed_max", &self.found[1]),
        ] {
            let value = match v.contains("(system)") {
                true => "system".to_string(),
                false => leading(v).to_string(),
            };
            let _ = crate::target::files::set_knob(&self.md.join(f), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_files_read_as_md_writes_them() {
        assert_eq!(completed("16384 / 260096\n"), Some(16384.0 / 260096.0));
        assert_eq!(completed("none\n"), None);
        assert_eq!(completed("5 / 0"), None);
        assert_eq!(leading("1000 (system)\n"), 1000);
        assert_eq!(leading("5000 (local)"), 5000);
    }
}
