//! What other processes read from and wrote to storage during a window: the kernel's per-task
//! IO accounting (`/proc/PID/io`, `read_bytes` and `write_bytes`: bytes a task made the block
//! layer read, and bytes it caused to be written — at submission for reads and direct writes,
//! when it dirtied the page cache for buffered ones).
//!
//! The counters do not say which device a process's IO went to, so only processes that hold
//! a descriptor on the watched stack at either edge of the window are counted — a block device
//! of the stack (by device number) or a file on the target's file system — and their parents:
//! the kernel adds a reaped child's counters to its parent's, so a shell loop of short `dd`s
//! is counted through the shell. iogauge's own ancestors are never counted (they reap other
//! runs), nor PID 1. A process that opened, used and closed something there entirely inside
//! the window, with a parent that holds nothing there, is not seen.
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
    parent: u32,
    /// Whether it holds a descriptor on the stack; `None` when that cannot be looked at.
    touches: Option<bool>,
    read_bytes: u64,
    write_bytes: u64,
}

/// What "on the watched stack" means: block devices (device numbers, as `st_rdev`) and file
/// systems (as `st_dev` of their files).
#[derive(Clone, Debug, Default)]
pub struct Stack {
    pub block_devices: Vec<u64>,
    pub file_systems: Vec<u64>,
}

impl Stack {
    /// The stack of block devices named as in /sys/block (`loop0`, `sda1`), and the file
    /// system of `path` when it is a file or directory.
    pub fn of(names: &[String], path: Option<&std::path::Path>) -> Stack {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let block_devices = names
            .iter()
            .filter_map(|n| {
                let dev = std::fs::read_to_string(format!("/sys/class/block/{n}/dev")).ok()?;
                let (ma, mi) = dev.trim().split_once(':')?;
                Some(makedev(ma.parse().ok()?, mi.parse().ok()?))
            })
            .collect();
        let file_systems = path
            .and_then(|p| std::fs::metadata(p).ok())
            .filter(|m| !m.file_type().is_block_device())
            .map(|m| vec![m.dev()])
            .unwrap_or_default();
        Stack {
            block_devices,
            file_systems,
        }
    }

    /// Whether process `pid` holds a descriptor on the stack; `None` when its descriptors
    /// cannot be looked at.
    fn touched_by(&self, pid: u32) -> Option<bool> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let fds = match std::fs::read_dir(format!("/proc/{pid}/fd")) {
            Ok(fds) => fds,
            // Not ours to look at; a process that just ended holds nothing.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return None,
            Err(_) => return Some(false),
        };
        Some(fds.flatten().any(|fd| {
            std::fs::metadata(fd.path()).is_ok_and(|m| {
                (m.file_type().is_block_device() && self.block_devices.contains(&m.rdev()))
                    || (!m.file_type().is_block_device()
                        && !m.file_type().is_char_device()
                        && self.file_systems.contains(&m.dev()))
            })
        }))
    }
}

/// The kernel's encoding of a device number (glibc's `makedev`), as `st_rdev` holds it.
fn makedev(major: u64, minor: u64) -> u64 {
    ((major & 0xffff_f000) << 32)
        | ((major & 0x0000_0fff) << 8)
        | ((minor & 0xffff_ff00) << 12)
        | (minor & 0x0000_00ff)
}

/// Every user process's IO counters at one moment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    procs: HashMap<u32, Counters>,
    /// Processes whose counters could not be read.
    unreadable: u32,
    /// The caller and its ancestors, never counted.
    ancestors: Vec<u32>,
}

/// Another process's IO over a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Other {
    pub pid: u32,
    pub command: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// It held nothing on the stack itself at either edge: it is counted as the parent of a
    /// process that did, and what it moved is what its children that ended in the window
    /// moved (the kernel adds a reaped child's counters to its parent's).
    pub through_children: bool,
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
    /// Reads every user process but kernel threads and `exclude` (iogauge itself; its threads
    /// share its counters), and whether each holds a descriptor on `stack`. Never fails: what
    /// cannot be read is counted as unreadable.
    pub fn take(exclude: &[u32], stack: &Stack) -> Snapshot {
        let mut snap = Snapshot::default();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return snap;
        };
        let mut parents = HashMap::new();
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some(st) = parse_stat(&stat) else {
                continue;
            };
            parents.insert(pid, st.parent);
            // PID 1 reaps every orphan: its counters are the machine's history, never counted.
            if pid == 1 || exclude.contains(&pid) || st.flags & PF_KTHREAD != 0 {
                continue;
            }
            match std::fs::read_to_string(format!("/proc/{pid}/io")).map(|io| parse_io(&io)) {
                Ok(Some((read_bytes, write_bytes))) => {
                    snap.procs.insert(
                        pid,
                        Counters {
                            start: st.start,
                            command: st.command,
                            parent: st.parent,
                            touches: stack.touched_by(pid),
                            read_bytes,
                            write_bytes,
                        },
                    );
                }
                // Not ours to read (another user's, without root); one that ended meanwhile
                // did nothing more.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => snap.unreadable += 1,
                _ => {}
            }
        }
        let mut at = std::process::id();
        while at > 1 && !snap.ancestors.contains(&at) {
            snap.ancestors.push(at);
            at = parents.get(&at).copied().unwrap_or(0);
        }
        snap
    }

    /// What the processes on the stack (see the module) did from `earlier` to this snapshot.
    /// A process that is new (or a PID reused) counts from zero: it did everything it did
    /// inside the window.
    pub fn since(&self, earlier: &Snapshot) -> Others {
        let mut counted = std::collections::HashSet::new();
        let mut own = std::collections::HashSet::new();
        for snap in [self, earlier] {
            for (pid, c) in &snap.procs {
                if c.touches == Some(true) {
                    own.insert(*pid);
                    counted.insert(*pid);
                    counted.insert(c.parent);
                }
            }
        }
        counted.remove(&1);
        counted.remove(&0);
        for a in self.ancestors.iter().chain(&earlier.ancestors) {
            counted.remove(a);
        }
        let mut top: Vec<Other> = self
            .procs
            .iter()
            .filter(|(pid, _)| counted.contains(*pid))
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
                    through_children: !own.contains(pid),
                };
                (other.read_bytes + other.write_bytes > 0).then_some(other)
            })
            .collect();
        top.sort_by(|a, b| {
            (b.read_bytes + b.write_bytes)
                .cmp(&(a.read_bytes + a.write_bytes))
                .then(a.pid.cmp(&b.pid))
        });
        // Processes that could not be looked at: their counters, or their descriptors.
        let unseen = self.procs.values().filter(|c| c.touches.is_none()).count() as u32;
        Others {
            read_bytes: top.iter().map(|o| o.read_bytes).sum(),
            write_bytes: top.iter().map(|o| o.write_bytes).sum(),
            unreadable: self.unreadable + unseen,
            top,
        }
    }
}

/// What iogauge needs of a /proc/PID/stat line.
struct Stat {
    command: String,
    parent: u32,
    flags: u64,
    start: u64,
}

/// The command (between the parentheses, which may itself hold spaces and parentheses), the
/// parent (field 4), the flags (field 9) and the start time (field 22) of a /proc/PID/stat
/// line.
fn parse_stat(stat: &str) -> Option<Stat> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let command = stat.get(open + 1..close)?.to_string();
    // Fields after the command start with field 3 (state).
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    Some(Stat {
        command,
        parent: rest.get(4 - 3)?.parse().ok()?,
        flags: rest.get(9 - 3)?.parse().ok()?,
        start: rest.get(22 - 3)?.parse().ok()?,
    })
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
        let st = parse_stat(line).unwrap();
        assert_eq!(st.command, "my (odd) cmd");
        assert_eq!(st.parent, 1);
        assert_eq!(st.flags, 4194560);
        assert_eq!(st.start, 98765);
    }

    #[test]
    fn io_files_parse() {
        let io = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(io), Some((4096, 8192)));
        assert_eq!(parse_io("rchar: 1\n"), None);
    }

    fn c(start: u64, parent: u32, touches: bool, r: u64, w: u64) -> Counters {
        Counters {
            start,
            command: "x".into(),
            parent,
            touches: Some(touches),
            read_bytes: r,
            write_bytes: w,
        }
    }

    #[test]
    fn a_new_process_and_a_reused_pid_count_from_zero() {
        let earlier = Snapshot {
            procs: HashMap::from([(10, c(10, 5, true, 100, 100)), (20, c(20, 5, true, 50, 0))]),
            ..Snapshot::default()
        };
        let later = Snapshot {
            procs: HashMap::from([
                (10, c(10, 5, true, 300, 100)),
                (20, c(21, 5, true, 7, 0)),
                (30, c(30, 5, true, 0, 0)),
            ]),
            unreadable: 1,
            ..Snapshot::default()
        };
        let o = later.since(&earlier);
        assert_eq!((o.read_bytes, o.write_bytes, o.unreadable), (207, 0, 1));
        assert_eq!(o.top.iter().map(|p| p.pid).collect::<Vec<_>>(), [10, 20]);
    }

    /// A shell loop of short dd's: each dd is reaped by the shell, whose counters then hold
    /// its IO; the dd alive at the end holds the device, so the shell is counted through it.
    /// A process elsewhere, and iogauge's own ancestors, are not.
    #[test]
    fn parents_of_what_holds_the_stack_count_but_not_our_ancestors() {
        let earlier = Snapshot {
            procs: HashMap::from([
                (40, c(40, 7, false, 0, 0)),
                (41, c(41, 40, true, 0, 0)),
                (50, c(50, 7, false, 0, 0)),
                (7, c(7, 1, false, 0, 0)),
            ]),
            ancestors: vec![99, 7],
            ..Snapshot::default()
        };
        let later = Snapshot {
            procs: HashMap::from([
                (40, c(40, 7, false, 600, 0)),
                (42, c(42, 40, true, 30, 0)),
                (50, c(50, 7, false, 9000, 0)),
                (7, c(7, 1, false, 5000, 0)),
            ]),
            ancestors: vec![99, 7],
            ..Snapshot::default()
        };
        let o = later.since(&earlier);
        assert_eq!(o.read_bytes, 630);
        assert_eq!(o.top.iter().map(|p| p.pid).collect::<Vec<_>>(), [40, 42]);
        // The shell moved nothing of its own there: its bytes are its ended children's.
        let through: Vec<bool> = o.top.iter().map(|p| p.through_children).collect();
        assert_eq!(through, [true, false]);
    }

    /// The live snapshot: this process is seen holding the watched file system while it has a
    /// file open there, not holding another stack, and not at all when excluded.
    #[test]
    fn the_live_snapshot_sees_who_holds_the_stack_and_not_the_excluded() {
        let me = std::process::id();
        let dir = tempfile::tempdir().unwrap();
        let held = std::fs::File::create(dir.path().join("f")).unwrap();
        let stack = Stack::of(&[], Some(dir.path()));
        assert_eq!(Snapshot::take(&[], &stack).procs[&me].touches, Some(true));
        assert!(!Snapshot::take(&[me], &stack).procs.contains_key(&me));
        let elsewhere = Stack {
            block_devices: vec![makedev(7, 250)],
            file_systems: vec![u64::MAX],
        };
        assert_eq!(
            Snapshot::take(&[], &elsewhere).procs[&me].touches,
            Some(false)
        );
        drop(held);
    }

    #[test]
    fn device_numbers_encode_as_the_kernel_does() {
        assert_eq!(makedev(7, 0), 0x700);
        assert_eq!(makedev(259, 3), 0x10303);
        assert_eq!(makedev(8, 300), 0x10_082c);
    }
}
