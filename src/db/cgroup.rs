//! `--memory-limit` for both database servers: a memory cgroup (v1 `memory.limit_in_bytes`, else
//! v2 `memory.max`) whose limit counts the server's page cache too, entered by the server's
//! launcher itself so the server and every process it forks are inside and iogauge and the
//! benchmark client are not. Created after the server's directories, removed after the server
//! has stopped; named in the crash ledger so `iogauge clean` removes a killed run's.

use crate::error::usage;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::owner::Owner;

/// A memory cgroup iogauge created for one server.
#[derive(Clone, Debug)]
pub struct Cgroup {
    pub dir: PathBuf,
}

impl Cgroup {
    /// Where the cgroup `name` goes and its limit file (v1 or v2); a usage error when no memory
    /// cgroup is mounted.
    pub fn path(name: &str) -> Result<(PathBuf, &'static str)> {
        let v1 = Path::new("/sys/fs/cgroup/memory");
        if v1.is_dir() {
            Ok((v1.join(name), "memory.limit_in_bytes"))
        } else if Path::new("/sys/fs/cgroup/cgroup.controllers").is_file() {
            Ok((Path::new("/sys/fs/cgroup").join(name), "memory.max"))
        } else {
            Err(usage(
                "--memory-limit needs a memory cgroup, and none is mounted at /sys/fs/cgroup",
            ))
        }
    }

    /// A memory cgroup of `limit` bytes, its `cgroup.procs` given to `owner` so the server's
    /// launcher (run as `owner`) can enter it itself.
    pub fn create(name: &str, limit: u64, owner: &Owner) -> Result<Cgroup> {
        let (dir, file) = Cgroup::path(name)?;
        std::fs::create_dir(&dir)
            .with_context(|| format!("creating the memory cgroup {}", dir.display()))?;
        let cg = Cgroup { dir };
        crate::target::files::set_knob(&cg.dir.join(file), limit.to_string())
            .with_context(|| format!("setting {}", cg.dir.join(file).display()))?;
        if let Some((uid, gid)) = owner.ids {
            std::os::unix::fs::chown(cg.dir.join("cgroup.procs"), Some(uid), Some(gid))?;
        }
        Ok(cg)
    }

    /// `program` started inside the cgroup: `sh` (/bin/sh, built as the server's programs are:
    /// its user, environment and directory) writes its own pid into the cgroup, then execs
    /// `program` with the arguments the caller adds — the pid stays the same.
    pub fn launcher(&self, mut sh: Command, program: &Path) -> Command {
        sh.arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join("cgroup.procs"))
            .arg(program);
        sh
    }

    /// The cgroup is removable once its processes are gone; a server that just stopped may take
    /// a moment to leave.
    pub fn remove(&self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        say!(
            "warning: could not remove the memory cgroup {}; remove it with rmdir",
            self.dir.display()
        );
    }
}

/// `iogauge clean`'s removal of a dead run's cgroup, said in `done`; whether it went.
pub fn undo(cg: &Path, done: &mut Vec<String>) -> bool {
    // Only a cgroup as iogauge names its own, in the cgroup file system: a ledger naming
    // anything else (forged, or damaged) removes nothing.
    let ours = cg.starts_with("/sys/fs/cgroup")
        && !cg
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        && cg
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("iogauge-"));
    if !ours {
        done.push(format!(
            "{} left alone: not a cgroup iogauge makes",
            cg.display()
        ));
        return true;
    }
    match std::fs::remove_dir(cg) {
        Ok(()) => {
            done.push(format!("cgroup {} removed", cg.display()));
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => {
            done.push(format!("cgroup {} could not be removed: {e}", cg.display()));
            false
        }
    }
}
