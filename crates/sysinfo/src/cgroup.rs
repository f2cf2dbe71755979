//! The limits a cgroup puts on a process's IO: cgroup v1's `blkio.throttle.*_device` and v2's
//! `io.max`, on the process's own group and every group above it (a parent's limit holds its
//! children too). A run under such a limit measures the limit as much as the device, which
//! tells a rate the kernel holds from one the device gives.

use crate::Roots;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One limit on IO to one device.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct IoLimit {
    /// The device, `major:minor`.
    pub dev: String,
    /// `read_iops`, `write_iops`, `read_bps` or `write_bps` (cgroup v1's names; v2's riops,
    /// wiops, rbps and wbps are said the same way).
    pub what: String,
    /// IOs or bytes a second.
    pub value: u64,
    /// Found only when the limits were read again at the run's end: set (or tightened) while
    /// the run went, so the results before it ran without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub set_during_run: bool,
}

/// The IO limits on this process: each device's tightest of each kind, on its cgroup or above.
pub(crate) fn io_limits(roots: &Roots) -> Vec<IoLimit> {
    let own = std::fs::read_to_string(roots.proc.join("self/cgroup")).unwrap_or_default();
    let cgroups = roots.sys.join("fs/cgroup");
    let mut found: Vec<IoLimit> = Vec::new();
    for line in own.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        let v1 = controllers.split(',').any(|c| c == "blkio");
        // v2's hierarchy is at the root of /sys/fs/cgroup, or beside v1's at unified/.
        let base = match (v1, controllers.is_empty()) {
            (true, _) => cgroups.join("blkio"),
            (false, true) if cgroups.join("cgroup.controllers").exists() => cgroups.clone(),
            (false, true) => cgroups.join("unified"),
            (false, false) => continue,
        };
        let mut group = PathBuf::from(path.trim_start_matches('/'));
        loop {
            let dir = base.join(&group);
            let limits = match v1 {
                true => v1_limits(&dir),
                false => v2_limits(&dir),
            };
            for l in limits {
                match found
                    .iter_mut()
                    .find(|o| o.dev == l.dev && o.what == l.what)
                {
                    Some(o) => o.value = o.value.min(l.value),
                    None => found.push(l),
                }
            }
            if !group.pop() {
                break;
            }
        }
    }
    found
}

/// `blkio.throttle.{read,write}_{iops,bps}_device`: lines of `major:minor value`.
fn v1_limits(dir: &Path) -> Vec<IoLimit> {
    let mut out = Vec::new();
    for what in ["read_iops", "write_iops", "read_bps", "write_bps"] {
        let text = std::fs::read_to_string(dir.join(format!("blkio.throttle.{what}_device")))
            .unwrap_or_default();
        for l in text.lines() {
            let mut w = l.split_whitespace();
            if let (Some(dev), Some(Ok(value))) = (w.next(), w.next().map(str::parse::<u64>)) {
                if value > 0 {
                    out.push(IoLimit {
                        dev: dev.to_string(),
                        what: what.to_string(),
                        value,
                        set_during_run: false,
                    });
                }
            }
        }
    }
    out
}

/// `io.max`: lines of `major:minor rbps=N wbps=max riops=N wiops=max`.
fn v2_limits(dir: &Path) -> Vec<IoLimit> {
    let text = std::fs::read_to_string(dir.join("io.max")).unwrap_or_default();
    let mut out = Vec::new();
    for l in text.lines() {
        let mut w = l.split_whitespace();
        let Some(dev) = w.next() else { continue };
        for kv in w {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            let what = match k {
                "riops" => "read_iops",
                "wiops" => "write_iops",
                "rbps" => "read_bps",
                "wbps" => "write_bps",
                _ => continue,
            };
            if let Ok(value) = v.parse::<u64>() {
                out.push(IoLimit {
                    dev: dev.to_string(),
                    what: what.to_string(),
                    value,
                    set_during_run: false,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /proc and /sys: the process in v1 blkio group a/b and v2 group c.
    fn tree() -> (tempfile::TempDir, Roots) {
        let t = tempfile::tempdir().unwrap();
        let (proc, sys) = (t.path().join("proc"), t.path().join("sys"));
        std::fs::create_dir_all(proc.join("self")).unwrap();
        std::fs::write(
            proc.join("self/cgroup"),
            "7:blkio:/a/b\n4:memory:/m\n0::/c\n",
        )
        .unwrap();
        let blkio = sys.join("fs/cgroup/blkio");
        std::fs::create_dir_all(blkio.join("a/b")).unwrap();
        // The parent's limit is the tighter one for 7:3; the group's own names 7:4.
        std::fs::write(blkio.join("a/blkio.throttle.read_iops_device"), "7:3 200\n").unwrap();
        std::fs::write(
            blkio.join("a/b/blkio.throttle.read_iops_device"),
            "7:3 500\n7:4 0\n",
        )
        .unwrap();
        std::fs::write(
            blkio.join("a/b/blkio.throttle.write_bps_device"),
            "7:4 1048576\n",
        )
        .unwrap();
        let unified = sys.join("fs/cgroup/unified/c");
        std::fs::create_dir_all(&unified).unwrap();
        std::fs::write(
            unified.join("io.max"),
            "8:16 rbps=max wbps=max riops=120 wiops=max\n",
        )
        .unwrap();
        (t, Roots { sys, proc })
    }

    #[test]
    fn limits_on_the_group_and_above_are_found_and_the_tightest_kept() {
        let (_t, roots) = tree();
        let mut got: Vec<(String, String, u64)> = io_limits(&roots)
            .into_iter()
            .map(|l| (l.dev, l.what, l.value))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("7:3".into(), "read_iops".into(), 200),
                ("7:4".into(), "write_bps".into(), 1 << 20),
                ("8:16".into(), "read_iops".into(), 120),
            ]
        );
    }

    #[test]
    fn no_cgroup_file_means_no_limits() {
        let t = tempfile::tempdir().unwrap();
        let roots = Roots {
            sys: t.path().join("sys"),
            proc: t.path().join("proc"),
        };
        assert!(io_limits(&roots).is_empty());
    }
}
