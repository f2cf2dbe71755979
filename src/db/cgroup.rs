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

/// What the kernel's OOM killer did in the memory cgroup `dir`: how many processes it killed
/// (v1 `memory.oom_control`, v2 `memory.events`: `oom_kill N`), the limit and the peak use
/// (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`). `None` when it killed nothing.
pub fn oom_kills(dir: &Path) -> Option<OomKills> {
    let field = |file: &str, key: &str| -> Option<u64> {
        std::fs::read_to_string(dir.join(file))
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
    };
    let number = |file: &str| -> Option<u64> {
        std::fs::read_to_string(dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let killed =
        field("memory.oom_control", "oom_kill ").or_else(|| field("memory.events", "oom_kill "))?;
    (killed > 0).then(|| OomKills {
        killed,
        limit: number("memory.limit_in_bytes").or_else(|| number("memory.max")),
        peak: number("memory.max_usage_in_bytes").or_else(|| number("memory.peak")),
    })
}

/// The OOM killer's work in a server's cgroup ([`oom_kills`]).
#[derive(Debug, PartialEq)]
pub struct OomKills {
    pub killed: u64,
    pub limit: Option<u64>,
    pub peak: Option<u64>,
}

impl OomKills {
    /// The cause in words, with what to do.
    pub fn said(&self, server: &str) -> String {
        let bytes = |b: Option<u64>| b.map_or("?".into(), crate::units::iec);
        format!(
            "the kernel's OOM killer killed {} process{} of the {server} server in its memory cgroup (--memory-limit {}, peak use {}): give a larger --memory-limit, or a smaller buffer (--buffer-ratio)",
            self.killed,
            if self.killed == 1 { "" } else { "es" },
            bytes(self.limit),
            bytes(self.peak)
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oom_killers_count_is_read_from_either_cgroup_version() {
        let v1 = tempfile::tempdir().unwrap();
        let w = |d: &Path, f: &str, s: &str| std::fs::write(d.join(f), s).unwrap();
        w(
            v1.path(),
            "memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
        );
        w(v1.path(), "memory.limit_in_bytes", "67108864\n");
        w(v1.path(), "memory.max_usage_in_bytes", "67104768\n");
        // Nothing killed: nothing to say.
        assert_eq!(oom_kills(v1.path()), None);
        w(
            v1.path(),
            "memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        );
        let o = oom_kills(v1.path()).unwrap();
        assert_eq!(
            (o.killed, o.limit, o.peak),
            (2, Some(64 << 20), Some(67_104_768))
        );
        assert!(o
            .said("MariaDB")
            .contains("killed 2 processes of the MariaDB server"));
        let v2 = tempfile::tempdir().unwrap();
        w(
            v2.path(),
            "memory.events",
            "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n",
        );
        w(v2.path(), "memory.max", "max\n");
        let o = oom_kills(v2.path()).unwrap();
        assert_eq!((o.killed, o.limit, o.peak), (1, None, None));
        assert!(
            o.said("PostgreSQL").contains("killed 1 process of"),
            "{}",
            o.said("x")
        );
    }
}
