//! What other processes read from and wrote to storage during a window: the kernel's per-task
//! IO accounting (`/proc/PID/io`, `read_bytes` and `write_bytes`: bytes a task made the block
//! layer read, and bytes it caused to be written — at submission for reads and direct writes,
//! when it dirtied the page cache for buffered ones).
//!
//! Why: a device that moved more than iogauge issued did so either for another process or for
//! iogauge itself — the file system's journal, log tree, copy-on-write metadata and writeback,
//! done by kernel threads on iogauge's behalf. Only the first is someone else disturbing the
//! run; the second is the stack's write amplification, a number a database needs. Kernel
//! threads (flag PF_KTHREAD) and the processes named to [`Snapshot::take`] are left out, so what
//! is counted is user processes other than iogauge. A process iogauge may not look at (another
//! user's, when not root) is counted as unreadable, never as zero; one that started and ended
//! inside the window is not seen.

use std::collections::HashMap;

/// PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// One process's counters at a moment.
#[derive(Clone, Debug)]
struct Counters {
    /// Start time in clock ticks since boot: a PID reused in the window is another process.
    start: u64,
    command: String,
    read_bytes: u64,
    write_bytes: u64,
}

/// Every user process's IO counters at one moment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    procs: HashMap<u32, Counters>,
    unreadable: u32,
}

/// Another process's IO over a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Other {
    pub pid: u32,
    pub command: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// What other processes did over a window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Others {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Processes whose counters could not be read at the end of the window.
    pub unreadable: u32,
    /// The processes that moved anything, most bytes first.
    pub top: Vec<Other>,
}

impl Snapshot {
    /// Reads every process but kernel threads and `exclude` (iogauge itself; its threads share
    /// its counters). Never fails: what cannot be read is counted as unreadable.
    pub fn take(exclude: &[u32]) -> Snapshot {
        let mut snap = Snapshot::default();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return snap;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if exclude.contains(&pid) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some((command, flags, start)) = parse_stat(&stat) else {
                continue;
            };
            if flags & PF_KTHREAD != 0 {
                continue;
            }
            match std::fs::read_to_string(format!("/proc/{pid}/io"))
                .ok()
                .and_then(|io| parse_io(&io))
            {
                Some((read_bytes, write_bytes)) => {
                    snap.procs.insert(
                        pid,
                        Counters {
                            start,
                            command,
                            read_bytes,
                            write_bytes,
                        },
                    );
                }
                // Gone meanwhile, or not ours to read.
                None => {
                    snap.unreadable +=
                        u32::from(std::path::Path::new(&format!("/proc/{pid}")).exists())
                }
            }
        }
        snap
    }

    /// What changed from `earlier` to this snapshot. A process that is new (or a PID reused)
    /// counts from zero: it did everything it did inside the window.
    pub fn since(&self, earlier: &Snapshot) -> Others {
        let mut top: Vec<Other> = self
            .procs
            .iter()
            .filter_map(|(pid, now)| {
                let (r0, w0) = match earlier.procs.get(pid) {
                    Some(then) if then.start == now.start => (then.read_bytes, then.write_bytes),
                    _ => (0, 0),
                };
                let other = Other {
                    pid: *pid,
                    command: now.command.clone(),
                    read_bytes: now.read_bytes.saturating_sub(r0),
                    write_bytes: now.write_bytes.saturating_sub(w0),
                };
                (other.read_bytes + other.write_bytes > 0).then_some(other)
            })
            .collect();
        top.sort_by(|a, b| {
            (b.read_bytes + b.write_bytes)
                .cmp(&(a.read_bytes + a.write_bytes))
                .then(a.pid.cmp(&b.pid))
        });
        Others {
            read_bytes: top.iter().map(|o| o.read_bytes).sum(),
            write_bytes: top.iter().map(|o| o.write_bytes).sum(),
            unreadable: self.unreadable,
            top,
        }
    }
}

/// The command (between the parentheses, which may itself hold spaces and parentheses), the
/// flags (field 9) and the start time (field 22) of a /proc/PID/stat line.
fn parse_stat(stat: &str) -> Option<(String, u64, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let command = stat.get(open + 1..close)?.to_string();
    // Fields after the command start with field 3 (state).
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let flags = rest.get(9 - 3)?.parse().ok()?;
    let start = rest.get(22 - 3)?.parse().ok()?;
    Some((command, flags, start))
}

/// `read_bytes` and `write_bytes` of a /proc/PID/io file.
fn parse_io(io: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
    };
    Some((field("read_bytes:")?, field("write_bytes:")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_awkward_commands_parse() {
        let line = "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 98765 1000 10 18446744073709551615";
        let (cmd, flags, start) = parse_stat(line).unwrap();
        assert_eq!(cmd, "my (odd) cmd");
        assert_eq!(flags, 4194560);
        assert_eq!(start, 98765);
    }

    #[test]
    fn io_files_parse() {
        let io = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(io), Some((4096, 8192)));
        assert_eq!(parse_io("rchar: 1\n"), None);
    }

    #[test]
    fn a_new_process_and_a_reused_pid_count_from_zero() {
        let c = |start, r, w| Counters {
            start,
            command: "x".into(),
            read_bytes: r,
            write_bytes: w,
        };
        let earlier = Snapshot {
            procs: HashMap::from([(1, c(10, 100, 100)), (2, c(20, 50, 0))]),
            unreadable: 0,
        };
        let later = Snapshot {
            procs: HashMap::from([(1, c(10, 300, 100)), (2, c(21, 7, 0)), (3, c(30, 0, 0))]),
            unreadable: 1,
        };
        let o = later.since(&earlier);
        assert_eq!((o.read_bytes, o.write_bytes, o.unreadable), (207, 0, 1));
        assert_eq!(o.top.iter().map(|p| p.pid).collect::<Vec<_>>(), [1, 2]);
    }

    /// The live snapshot: this process is seen unless excluded, a kernel thread never is.
    #[test]
    fn the_live_snapshot_sees_processes_but_not_kernel_threads_or_the_excluded() {
        let me = std::process::id();
        let all = Snapshot::take(&[]);
        assert!(all.procs.contains_key(&me));
        let without = Snapshot::take(&[me]);
        assert!(!without.procs.contains_key(&me));
        // PID 2 is kthreadd (outside a PID namespace, as the tests run).
        assert!(!all.procs.contains_key(&2));
    }
}
