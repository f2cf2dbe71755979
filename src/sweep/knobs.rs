//! Block-queue knobs (/sys/block/DEV/queue/NAME): read, set, and always put back.
//!
//! Every value iogauge changes is first written to a journal with the value it had, and the
//! journal is removed only once all are restored. A sweep killed with SIGKILL leaves it behind;
//! the next iogauge command restores the values from it ([`recover`]) and says so.
//!
//! The journal steers root's writes, so nothing in it is trusted: it lives in the private run
//! directory (`ledger::dir`), is opened without following links and read only when owned by
//! the caller, a live sweep is known by the lock it holds on its journal (not by a PID that may
//! have been reused), and every path in it must be a block-queue attribute under /sys.

use crate::error::usage;
pub use crate::plan::axes::KnobSpec;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

/// One journal per sweep process, so two sweeps never overwrite each other's.
fn journal_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("knobs-{pid}.json"))
}

/// Whether `path` is a block-queue attribute as `find` names them: an absolute, canonical
/// path `/sys/devices/…/queue/NAME` of a regular sysfs file, NAME plain. Anything else in a
/// journal was not written by iogauge and is never written to.
pub fn is_queue_attr(path: &Path) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    path.is_absolute()
        && path.starts_with("/sys/devices")
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && path.parent().and_then(Path::file_name) == Some(std::ffi::OsStr::new("queue"))
        && path.file_name().and_then(|n| n.to_str()).is_some_and(plain)
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::canonicalize(path).is_ok_and(|c| c == path)
}

/// A knob found on the devices it applies to, with each device's original value.
#[derive(Clone, Debug)]
pub struct Knob {
    pub spec: KnobSpec,
    /// (attribute file, its value before the sweep).
    pub files: Vec<(PathBuf, String)>,
}

impl Knob {
    /// The original value, as the first device (the top of the stack) had it.
    pub fn original(&self) -> &str {
        self.files.first().map_or("", |(_, v)| v.as_str())
    }

    /// The values as found, per device: `none on loop0, mq-deadline on vda`.
    pub fn as_found(&self) -> String {
        self.files
            .iter()
            .map(|(p, v)| format!("{v} on {}", device_of(p)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The devices whose settings this knob changes.
    pub fn devices(&self) -> Vec<String> {
        self.files.iter().map(|(p, _)| device_of(p)).collect()
    }
}

/// The device of a queue attribute file, `…/block/<dev>/queue/<name>`.
fn device_of(p: &Path) -> String {
    p.parent()
        .and_then(|q| q.parent())
        .and_then(|d| d.file_name())
        .map_or_else(String::new, |d| d.to_string_lossy().into_owned())
}

/// The queue directory of a block device; a partition's is its disk's.
fn queue_dir(dev: &str) -> Option<PathBuf> {
    let base = Path::new("/sys/class/block").join(dev);
    [base.join("queue"), base.join("..").join("queue")]
        .into_iter()
        .find(|q| q.is_dir())
        .and_then(|q| std::fs::canonicalize(q).ok())
}

/// The value a knob file holds; for a list like the scheduler's `none [mq-deadline] bfq`, the
/// one in brackets.
pub fn read_value(path: &Path) -> Result<String> {
    let raw =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let raw = raw.trim();
    Ok(match (raw.find('['), raw.find(']')) {
        (Some(a), Some(b)) if a < b => raw[a + 1..b].to_string(),
        _ => raw.to_string(),
    })
}

/// Finds each knob on `devices` (the target's stack, top first): every device whose queue has
/// the attribute, or the one the knob names. A knob found nowhere is refused: nothing would
/// change.
pub fn find(specs: &[KnobSpec], devices: &[String]) -> Result<Vec<Knob>> {
    let mut out = Vec::new();
    for spec in specs {
        // Only what the user named is changed: the target's own device by default (the top
        // of its stack), a device below it only when named (`DEV:NAME`). A loop device's knob
        // must never reach the disk under it, which other work uses.
        let on: Vec<String> = match &spec.device {
            Some(d) => vec![d.clone()],
            None => devices.iter().take(1).cloned().collect(),
        };
        let mut files: Vec<(PathBuf, String)> = Vec::new();
        for dev in &on {
            let Some(q) = queue_dir(dev) else { continue };
            let f = q.join(&spec.name);
            if files.iter().any(|(p, _)| *p == f) {
                continue;
            }
            if let Ok(v) = read_value(&f) {
                files.push((f, v));
            }
        }
        if files.is_empty() {
            return Err(usage(format!(
                "--knob {}: no device of the target ({}) has /sys/block/…/queue/{}; see ls /sys/block/DEV/queue",
                spec.label(),
                on.join(", "),
                spec.name
            )));
        }
        out.push(Knob {
            spec: spec.clone(),
            files,
        });
    }
    Ok(out)
}

#[derive(Serialize, Deserialize)]
struct Journal {
    pid: u32,
    /// (attribute file, value to put back).
    restore: Vec<(PathBuf, String)>,
}

/// Holds the original values of every knob a sweep may change, journaled; puts them back on
/// [`Guard::restore`] or drop, whatever ends the sweep.
pub struct Guard {
    originals: Vec<(PathBuf, String)>,
    done: bool,
    hook: u64,
    journal: PathBuf,
    /// The journal, locked for the sweep's life: the lock is how `recover` knows it is alive.
    _lock: std::fs::File,
}

impl Guard {
    /// Journals the originals of `knobs` before anything changes.
    pub fn new(knobs: &[Knob]) -> Result<Guard> {
        let originals: Vec<(PathBuf, String)> =
            knobs.iter().flat_map(|k| k.files.iter().cloned()).collect();
        let dir = crate::ledger::dir().context("the knob journal's directory")?;
        let path = journal_path(&dir, std::process::id());
        let mut file = crate::ledger::create_private(&path)
            .with_context(|| format!("opening the knob journal {}", path.display()))?;
        file.try_lock()
            .map_err(|e| anyhow::anyhow!("locking the knob journal {}: {e}", path.display()))?;
        let j = Journal {
            pid: std::process::id(),
            restore: originals.clone(),
        };
        crate::ledger::rewrite(&mut file, &serde_json::to_vec_pretty(&j)?)
            .with_context(|| format!("writing the knob journal {}", path.display()))?;
        // A second Ctrl-C quits at once; the knobs are put back even then.
        let back = originals.clone();
        let journal = path.clone();
        let hook = crate::interrupt::register_hook(Box::new(move || {
            if restore_all(&back).is_empty() {
                let _ = std::fs::remove_file(&journal);
            }
        }));
        Ok(Guard {
            originals,
            done: false,
            hook,
            journal: path,
            _lock: file,
        })
    }

    /// Puts every original value back; the journal goes once all are back. What could not be
    /// put back, in words.
    pub fn restore(&mut self) -> Vec<String> {
        let failed = restore_all(&self.originals);
        if failed.is_empty() {
            let _ = std::fs::remove_file(&self.journal);
        }
        self.done = true;
        crate::interrupt::unregister_hook(self.hook);
        failed
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.done {
            for f in self.restore() {
                say!("warning: {f}");
            }
        }
    }
}

/// Writes `value` to a knob file; the kernel's refusal comes back as the error.
pub fn set(path: &Path, value: &str) -> std::io::Result<()> {
    crate::target::files::set_knob(path, value)
}

/// Puts each value back; what could not be, in words. A path that is not a block-queue
/// attribute is refused, whatever asked for it.
fn restore_all(originals: &[(PathBuf, String)]) -> Vec<String> {
    let mut failed = Vec::new();
    for (path, value) in originals {
        let shown = crate::units::printable(&path.to_string_lossy()).into_owned();
        if !is_queue_attr(path) {
            failed.push(format!(
                "refused to write to {shown}: not a block-queue attribute under /sys/devices, so not a knob iogauge changed"
            ));
            continue;
        }
        let now = read_value(path).ok();
        if now.as_deref() == Some(value.as_str()) {
            continue;
        }
        if let Err(e) = set(path, value) {
            let value = crate::units::printable(value);
            failed.push(format!(
                "could not put {shown} back to {value} ({e}); set it by hand: echo {value} > {shown}"
            ));
        }
    }
    failed
}

/// Restores what killed sweeps left in their journals. Called once as any command starts;
/// leaves alone the journal of a sweep that is still running (its lock is held), and ignores a
/// journal that is a link, is not the caller's, or is outside the private run directory.
pub fn recover() {
    for d in crate::ledger::dead("knobs-") {
        let (path, pid) = (d.path, d.pid);
        let Ok(j) = serde_json::from_slice::<Journal>(&d.raw) else {
            continue;
        };
        let changed: Vec<String> = j
            .restore
            .iter()
            .filter(|(p, _)| is_queue_attr(p))
            .filter(|(p, v)| read_value(p).ok().as_deref() != Some(v.as_str()))
            .map(|(p, v)| format!("{} = {}", p.display(), crate::units::printable(v)))
            .collect();
        let failed = restore_all(&j.restore);
        if failed.is_empty() {
            let _ = std::fs::remove_file(&path);
        }
        if !changed.is_empty() {
            say!(
                "note: a sweep (pid {pid}) ended without restoring its device settings; put back: {}",
                changed.join(", ")
            );
        }
        for f in failed {
            say!("warning: {f}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_parse_with_and_without_a_device() {
        let k = KnobSpec::parse("scheduler=none, mq-deadline").unwrap();
        assert_eq!(k.device, None);
        assert_eq!(k.values, ["none", "mq-deadline"]);
        let k = KnobSpec::parse("loop3:read_ahead_kb=128,4096").unwrap();
        assert_eq!(k.device.as_deref(), Some("loop3"));
        assert_eq!(k.label(), "loop3:read_ahead_kb");
        for bad in ["scheduler", "=a", "x=", "../x=1", "a b=1"] {
            assert!(KnobSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_queue_attributes_are_knobs() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("queue");
        std::fs::create_dir(&f).unwrap();
        std::fs::write(f.join("scheduler"), "none").unwrap();
        for bad in [
            f.join("scheduler"),
            PathBuf::from("/etc/passwd"),
            PathBuf::from("/sys/devices/../../etc/queue/x"),
            PathBuf::from("sys/devices/x/queue/scheduler"),
            PathBuf::from("/sys/devices/virtual/block/loop0/queue/../../../../../../etc/passwd"),
        ] {
            assert!(!is_queue_attr(&bad), "{}", bad.display());
        }
        // A real one, where the machine has a block device.
        if let Some(q) = std::fs::read_dir("/sys/block")
            .ok()
            .and_then(|mut d| d.next())
        {
            let q = std::fs::canonicalize(q.unwrap().path().join("queue")).unwrap();
            assert!(is_queue_attr(&q.join("read_ahead_kb")), "{}", q.display());
        }
    }

    #[test]
    fn the_bracketed_value_is_the_current_one() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("scheduler");
        std::fs::write(&f, "none [mq-deadline] bfq\n").unwrap();
        assert_eq!(read_value(&f).unwrap(), "mq-deadline");
        std::fs::write(&f, "128\n").unwrap();
        assert_eq!(read_value(&f).unwrap(), "128");
    }
}
