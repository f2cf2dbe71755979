//! Where fio's jobs run (issue 60): `cpus_allowed` keeps a job's threads on its CPUs, and
//! `cpus_allowed_policy=split` puts each thread on one of them in turn, as `taskset` would.
//! Ground truth: the kernel's own record of each worker thread while it runs
//! (/proc/PID/task/TID/status `Cpus_allowed_list`, and the CPU it last ran on, field 39 of
//! `stat`); without the options the threads may run anywhere.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common;
use common::*;

/// Each worker thread's (name, allowed CPUs, CPU last run on), read while `job` runs.
fn workers_while(dir: &Path, job: &str, threads: usize) -> Vec<(String, String, u32)> {
    let file = dir.join("place.fio");
    std::fs::write(
        &file,
        format!(
            "[a]\ndirectory={}\nsize=4m\nrw=randread\nbs=4k\nruntime=3\ntime_based\nnumjobs={threads}\n{job}\n",
            dir.display()
        ),
    )
    .unwrap();
    let child = Command::new(BIN)
        .args(["fio", "--no-store", file.to_str().unwrap()])
        .current_dir(dir)
        .env("IOGAUGE_DB", dir.join("results.db"))
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tasks = Path::new("/proc").join(child.id().to_string()).join("task");
    let read = || -> Vec<(String, String, u32)> {
        let Ok(dir) = std::fs::read_dir(&tasks) else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|t| {
                let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
                let comm = comm.trim().to_string();
                if !comm.starts_with("iogauge-w") {
                    return None;
                }
                let status = std::fs::read_to_string(t.path().join("status")).ok()?;
                let allowed = status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
                    .trim()
                    .to_string();
                let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
                // Fields after the parenthesised name; `processor` is field 39.
                let rest = &stat[stat.rfind(')')? + 2..];
                let cpu = rest.split_whitespace().nth(39 - 3)?.parse().ok()?;
                Some((comm, allowed, cpu))
            })
            .collect()
    };
    let mut seen = Vec::new();
    // The workers exist once the file is laid out; their placement is set before their first IO.
    wait_until("the worker threads", WATCHDOG, || {
        seen = read();
        seen.len() == threads
    });
    // Once they have issued: the CPU each last ran on is one it was placed on.
    wait_until("the workers' IO", WATCHDOG, || {
        syscalls_of(child.id()) > 1000
    });
    let now = read();
    if now.len() == threads {
        seen = now;
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    seen.sort();
    seen
}

#[test]
fn cpus_allowed_keeps_each_thread_where_fio_would() {
    // What this test may run on, which iogauge inherits.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let online = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    if !online.starts_with("0-") && !online.starts_with("0,1") {
        skip("needs CPUs 0 and 1");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Both threads on CPU 1.
    for (name, allowed, cpu) in workers_while(dir.path(), "cpus_allowed=1", 2) {
        assert_eq!((allowed.as_str(), cpu), ("1", 1), "{name}");
    }
    // One CPU each, in turn.
    let split = workers_while(dir.path(), "cpus_allowed=0-1\ncpus_allowed_policy=split", 2);
    let want = [("iogauge-w0", "0", 0), ("iogauge-w1", "1", 1)];
    for ((name, allowed, cpu), (n, a, c)) in split.iter().zip(want) {
        assert_eq!((name.as_str(), allowed.as_str(), *cpu), (n, a, c));
    }
    // The near miss: no placement, every CPU the test may use allowed.
    for (name, allowed, _) in workers_while(dir.path(), "", 2) {
        assert_eq!(allowed, online, "{name}");
    }
}
