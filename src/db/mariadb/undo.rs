//! A MariaDB server in the crash ledger: what `iogauge clean` finds of one a killed run left,
//! and how it stops the server and removes only what iogauge made.

use super::super::owner::ServerRecord;
use super::{stop_pid, SERVER_WAIT};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A MariaDB server iogauge made (`db sysbench`), as the crash ledger names it (kind `mariadb`):
/// its data directory's sibling mysqld.pid names a server still running.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MyServer(pub(super) ServerRecord);

impl crate::ledger::Resource for MyServer {
    const KIND: &'static str = "mariadb";

    fn describe(&self) -> String {
        let data = &self.0.data;
        format!(
            "MariaDB server directory {}{}",
            data.display(),
            match data.with_file_name("mysqld.pid").exists() {
                true => " with its server running",
                false => "",
            }
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

/// Undoes a server a killed run left (`iogauge clean`): stops it — only a process whose command
/// line is a mariadbd of exactly this data directory — and removes the directories (only ones
/// named as iogauge names its own). What was done, and whether all of it worked.
fn undo(data: &Path, dirs: &[crate::ledger::MadeDir], cgroup: Option<&Path>) -> (String, bool) {
    let mut done = Vec::new();
    let mut ok = true;
    let parent = data.parent().unwrap_or(data);
    let pid = super::super::owner::read_pid_file(&parent.join("mysqld.pid"));
    if let Some(pid) = pid {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let datadir = format!("--datadir={}", data.display());
        let ours = args.first().is_some_and(|a| a.ends_with(b"mariadbd"))
            && args.contains(&datadir.as_bytes());
        if ours {
            match stop_pid(pid, SERVER_WAIT) {
                true => done.push(format!("server (pid {pid}) stopped")),
                false => {
                    ok = false;
                    done.push(format!("its server (pid {pid}) did not stop"));
                }
            }
        }
    }
    if ok {
        ok = super::super::owner::remove_own_dirs(dirs, "iogauge-my-", &mut done);
    }
    if let Some(cg) = cgroup {
        ok &= super::super::cgroup::undo(cg, &mut done);
    }
    if done.is_empty() {
        done.push("already gone".into());
    }
    (done.join(", "), ok)
}
