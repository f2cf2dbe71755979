//! The CPU time of the kernel threads that do an md array's work: `md100_raid5` (raid4/5/6
//! stripe handling and parity), `md100_raid1`, `md100_raid10`, and `md100_resync` while it
//! resyncs. raid5's thread handles every stripe of the array on one CPU unless
//! `group_thread_cnt` adds workers, so an array can stop scaling with its members because
//! that thread is saturated — a limit neither the members' counters nor iogauge's own CPU
//! show. Read from /proc at the edges of a measurement, never during it.

use std::time::Instant;

/// /proc counts in USER_HZ, which is 100 on every architecture Linux's md runs on here.
const USER_HZ: f64 = 100.0;

/// The md arrays' threads found at the start of a measurement, with the ticks each had used.
pub struct KThreads {
    threads: Vec<(String, u32, u64)>,
    at: Instant,
}

impl KThreads {
    /// The threads of the md arrays among `devices` (kernel names, e.g. "md100").
    pub fn start(devices: &[String]) -> KThreads {
        let arrays: Vec<&str> = devices
            .iter()
            .map(String::as_str)
            .filter(|d| is_md(d))
            .collect();
        let mut threads = Vec::new();
        if !arrays.is_empty() {
            for (pid, comm) in kernel_threads() {
                let ours = comm
                    .split_once('_')
                    .is_some_and(|(md, _)| arrays.contains(&md));
                if let (true, Some(t)) = (ours, ticks(pid)) {
                    threads.push((comm, pid, t));
                }
            }
        }
        KThreads {
            threads,
            at: Instant::now(),
        }
    }

    /// Each thread's share of the measurement's wall time spent on a CPU (0–1), by name; a
    /// thread gone meanwhile is left out.
    pub fn stop(self) -> Vec<(String, f64)> {
        let secs = self.at.elapsed().as_secs_f64();
        if secs <= 0.0 {
            return Vec::new();
        }
        self.threads
            .into_iter()
            .filter_map(|(name, pid, before)| {
                let after = ticks(pid)?;
                Some((name, after.saturating_sub(before) as f64 / USER_HZ / secs))
            })
            .collect()
    }
}

/// "md100", "md127": an md array's kernel name (not "md100p1", a partition of one).
fn is_md(name: &str) -> bool {
    name.strip_prefix("md")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Every kernel thread (a child of kthreadd, pid 2): its pid and name.
fn kernel_threads() -> Vec<(u32, String)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let (ppid, comm) = stat(pid)?;
            (ppid == 2).then_some((pid, comm))
        })
        .collect()
}

/// A process's parent and name from /proc/PID/stat.
fn stat(pid: u32) -> Option<(u32, String)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = s.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
    Some((ppid, comm))
}

/// User and system ticks a process has used.
fn ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the name, which may hold spaces and parentheses: utime is the 14th field of
    // the line, index 11 here, stime the next.
    let f: Vec<&str> = s.rsplit_once(')')?.1.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_names_are_arrays_and_not_their_partitions() {
        assert!(is_md("md100"));
        assert!(is_md("md0"));
        assert!(!is_md("md100p1"));
        assert!(!is_md("md"));
        assert!(!is_md("mdx"));
    }

    /// kthreadd's own children are found by their parent: on any Linux there is at least
    /// one (kworkers, ksoftirqd), named as the kernel names them.
    #[test]
    fn kernel_threads_are_found_with_their_names() {
        let k = kernel_threads();
        assert!(!k.is_empty());
        assert!(k.iter().any(|(_, c)| c.starts_with("ksoftirqd/")), "{k:?}");
        assert!(k
            .iter()
            .all(|(p, _)| ticks(*p).is_some() || stat(*p).is_none()));
    }
}
