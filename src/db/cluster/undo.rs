//! A cluster in the crash ledger: what `iogauge clean` finds of one a killed run left, and how
//! it stops its server and removes only what iogauge made.

use super::super::owner::ServerRecord;
use super::PG_CTL_WAIT;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A database cluster iogauge made, as the crash ledger names it (kind `cluster`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PgCluster(pub(super) ServerRecord);

impl crate::ledger::Resource for PgCluster {
    const KIND: &'static str = "cluster";

    fn describe(&self) -> String {
        let ServerRecord { data, cgroup, .. } = &self.0;
        format!(
            "database cluster {}{}{}",
            data.display(),
            match data.join("postmaster.pid").exists() {
                true => " with its server running",
                false => "",
            },
            cgroup
                .as_ref()
                .map(|c| format!(" and memory cgroup {}", c.display()))
                .unwrap_or_default()
        )
    }

    fn undo(&self, dry_run: bool) -> (String, bool) {
        let ServerRecord { data, dirs, cgroup } = &self.0;
        match dry_run {
            true => (super::super::owner::would_remove(dirs), true),
            false => undo(data, dirs, cgroup.as_deref()),
        }
    }
}

/// Undoes a cluster a killed run left (`iogauge clean`): stops its server — only a process
/// whose command line is a postgres of exactly this data directory — removes the directories
/// (only ones named as iogauge names its own) and the cgroup. What was done, and whether all of
/// it worked.
fn undo(data: &Path, dirs: &[crate::ledger::MadeDir], cgroup: Option<&Path>) -> (String, bool) {
    let mut done = Vec::new();
    let mut ok = true;
    let pid = super::super::owner::read_pid_file(&data.join("postmaster.pid"));
    if let Some(pid) = pid {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let ours = args.first().is_some_and(|a| a.ends_with(b"postgres"))
            && args.contains(&data.as_os_str().as_encoded_bytes());
        if ours {
            // SIGQUIT: PostgreSQL's immediate shutdown; nothing of this cluster is kept.
            let _ = Command::new("kill")
                .args(["-QUIT", &pid.to_string()])
                .status();
            let until = std::time::Instant::now() + PG_CTL_WAIT;
            while Path::new(&format!("/proc/{pid}")).exists() && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
            match Path::new(&format!("/proc/{pid}")).exists() {
                true => {
                    ok = false;
                    done.push(format!("its server (pid {pid}) did not stop"));
                }
                false => done.push(format!("server (pid {pid}) stopped")),
            }
        }
    }
    if ok {
        ok = super::super::owner::remove_own_dirs(dirs, "iogauge-pg-", &mut done);
    }
    if let Some(cg) = cgroup {
        ok &= super::super::cgroup::undo(cg, &mut done);
    }
    if done.is_empty() {
        done.push("already gone".into());
    }
    (done.join(", "), ok)
}
