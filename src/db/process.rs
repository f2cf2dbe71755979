//! What iogauge reads of a database server's process from the kernel, whichever server it is:
//! what it listens on (so a server that opened more than its private socket is stopped), the
//! CPU it used, and the last lines of what it said.

use anyhow::Result;
use std::path::Path;

/// What a server listens on besides its private socket `socket`, as the kernel has it: TCP
/// sockets in the LISTEN state (/proc/PID/net/tcp and tcp6, state 0A) and Unix sockets
/// accepting connections at another path (/proc/PID/net/unix), held by the process `pid` or
/// a child of it (PostgreSQL's postmaster opens them, its backends inherit them) — matched by
/// inode against the sockets among their descriptors (/proc/PID/fd → `socket:[INODE]`).
/// Read in the server's own network namespace. Each as "tcp 0.0.0.0:3306" or "unix PATH".
pub fn listening(pid: u32, socket: &Path) -> Vec<String> {
    let mut pids = vec![pid];
    pids.extend(children(pid));
    let inodes: std::collections::BTreeSet<u64> = pids
        .iter()
        .filter_map(|p| std::fs::read_dir(format!("/proc/{p}/fd")).ok())
        .flat_map(|d| d.flatten())
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let l = l.to_str()?;
            l.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect();
    let table = |name: &str| std::fs::read_to_string(format!("/proc/{pid}/net/{name}"));
    let mut found = Vec::new();
    for name in ["tcp", "tcp6"] {
        for l in table(name).unwrap_or_default().lines().skip(1) {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (Some(local), Some(st), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            if *st == "0A" && inode.parse().is_ok_and(|i: u64| inodes.contains(&i)) {
                found.push(format!("tcp {}", tcp_address(local)));
            }
        }
    }
    // __SO_ACCEPTCON: a socket listen() was called on.
    const ACCEPTING: u32 = 0x1_0000;
    for l in table("unix").unwrap_or_default().lines().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (Some(flags), Some(inode)) = (f.get(3), f.get(6)) else {
            continue;
        };
        let accepting = u32::from_str_radix(flags, 16).is_ok_and(|v| v & ACCEPTING != 0);
        let ours = inode.parse().is_ok_and(|i: u64| inodes.contains(&i));
        // A path may hold spaces: all that follows the inode.
        let path = f.get(7..).map(|p| p.join(" ")).unwrap_or_default();
        if accepting && ours && Path::new(&path) != socket {
            found.push(match path.is_empty() {
                true => "unix (unnamed)".into(),
                false => format!("unix {path}"),
            });
        }
    }
    found
}

/// The children of `pid`, from their /proc/PID/stat.
fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .is_some_and(|ppid| ppid == pid.to_string())
            })
        })
        .collect()
}

/// `0100007F:0CEA` (IPv4) or 32 hex digits and a port (IPv6), as /proc/net/tcp prints an
/// address: each 32-bit word in the machine's byte order.
fn tcp_address(hex: &str) -> String {
    let Some((addr, port)) = hex.split_once(':') else {
        return hex.to_string();
    };
    let port = u16::from_str_radix(port, 16).unwrap_or(0);
    let words: Option<Vec<[u8; 4]>> = (0..addr.len() / 8)
        .map(|i| {
            let w = addr.get(i * 8..i * 8 + 8)?;
            u32::from_str_radix(w, 16).ok().map(u32::to_ne_bytes)
        })
        .collect();
    match words.as_deref() {
        Some([a]) => format!("{}:{port}", std::net::Ipv4Addr::from(*a)),
        Some(w @ [_, _, _, _]) => {
            let b: [u8; 16] = w.concat().try_into().unwrap_or([0; 16]);
            format!("[{}]:{port}", std::net::Ipv6Addr::from(b))
        }
        _ => hex.to_string(),
    }
}

/// After every start: the server must listen on nothing but iogauge's private socket (TCP
/// off, no other socket), whatever a setting did — asked of the kernel, not of the server's
/// settings. `Err` names what it listens on; the caller stops the server first.
pub fn check_private(server: &str, flag: &str, pid: u32, socket: &Path) -> Result<()> {
    let found = listening(pid, socket);
    if found.is_empty() {
        return Ok(());
    }
    Err(anyhow::anyhow!(
        "the {server} server listened on {} besides its private socket, so iogauge stopped it; leave out the {flag} that opened it",
        found.join(", ")
    ))
}

/// CPU seconds (user, system) a server has used so far, from /proc: the process `root`, its
/// children alive (PostgreSQL's backends, checkpointer, writers; mariadbd has none) and those
/// it has reaped (their time is in its cutime/cstime). Taken before and after a run, the
/// difference is what the server spent on it. `None` when /proc cannot say.
///
/// One reading is the root's line, the children's, and the root's again: a child reaped while
/// the children were read (a backend whose client just left, as at the end of every window)
/// moves its time into the root's cutime, where the first reading of the root missed it and
/// the children's no longer has it. Such a reading is taken again, until the root's own line
/// held still across it.
pub fn cpu_of(root: u32) -> Option<(f64, f64)> {
    // (ppid, user ticks, system ticks) of a process, its reaped children included.
    let stat = |pid: &str| -> Option<(u32, u64, u64)> {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name, which may itself hold spaces and parentheses.
        let f: Vec<&str> = s.rsplit_once(')')?.1.split_whitespace().collect();
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
        // state, ppid, …: utime is field 14 of the line, index 11 here; then stime, cutime,
        // cstime.
        Some((n(1)? as u32, n(11)? + n(13)?, n(12)? + n(14)?))
    };
    let root_name = root.to_string();
    let children = || -> Option<(u64, u64)> {
        let (mut user, mut sys) = (0, 0);
        for e in std::fs::read_dir("/proc").ok()?.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            match stat(pid) {
                Some((ppid, u, s)) if ppid == root => {
                    user += u;
                    sys += s;
                }
                _ => {}
            }
        }
        Some((user, sys))
    };
    let mut before = stat(&root_name)?;
    let mut tries = 0;
    let (user, sys) = loop {
        let (u, s) = children()?;
        let after = stat(&root_name)?;
        tries += 1;
        // A server whose children come and go faster than /proc is read may never hold
        // still; then the last of a few readings is the best there is.
        if after == before || tries == 8 {
            break (after.1 + u, after.2 + s);
        }
        before = after;
    };
    // /proc counts in USER_HZ, which is 100 on every architecture both servers run on.
    Some((user as f64 / 100.0, sys as f64 / 100.0))
}

/// The server process a pid file names (its first line, as PostgreSQL's postmaster.pid and
/// MariaDB's pid file hold it) and whether that process still runs: a server that was killed
/// (kill -9, the OOM killer) or crashed leaves its pid file behind. `None` without a readable
/// one. The file is in the server's account's directory: opened without following a link and
/// without blocking (a FIFO planted there answers nothing), and only a regular file is read.
pub fn pid_file(path: &Path) -> Option<(u32, bool)> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = String::new();
    f.take(64).read_to_string(&mut head).ok()?;
    let pid: u32 = head.lines().next()?.trim().parse().ok()?;
    Some((pid, !gone(pid)))
}

/// Whether `pid` is gone: no /proc entry, or a zombie waiting for its parent to reap it (a
/// killed server stays in /proc so until then, running nothing).
pub fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// How long a server that a failure suggests is dying may take to be gone: the kernel frees
/// its shared memory first, which a busy machine makes slow.
const DYING: std::time::Duration = std::time::Duration::from_secs(3);

/// After a failure (a query, the load): whether the server's process `pid` has ended, or ends
/// within [`DYING`] — a SIGKILLed postmaster or mariadbd still shows in /proc, running, while
/// the kernel tears it down, and the failure is its end, not a lost connection.
pub fn ended(pid: u32) -> bool {
    gone(pid) || iogauge_engine::sys::ends_within(pid, DYING)
}

/// The last `n` non-empty lines of `text`, joined into one line.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_is_not_there_is_gone() {
        assert!(gone(u32::MAX - 1));
        assert!(!gone(std::process::id()));
    }

    /// A pid file of a running process, of one that ended, a link to one and a FIFO.
    #[test]
    fn a_pid_file_tells_a_running_server_from_a_dead_one_and_reads_only_a_file() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("postmaster.pid");
        std::fs::write(&file, format!("{}\n/data\n", std::process::id())).unwrap();
        assert_eq!(pid_file(&file), Some((std::process::id(), true)));
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let pid = ended.id();
        // Not yet reaped: a zombie, which runs no more than a reaped one.
        while !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z"))
        {
            std::thread::yield_now();
        }
        std::fs::write(&file, format!("{pid}\n")).unwrap();
        assert_eq!(pid_file(&file), Some((pid, false)));
        ended.wait().unwrap();
        assert_eq!(pid_file(&file), Some((pid, false)));
        let link = t.path().join("link.pid");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(pid_file(&link), None);
        let fifo = t.path().join("fifo.pid");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert_eq!(pid_file(&fifo), None);
    }

    #[test]
    fn a_listening_socket_is_found_from_the_kernel() {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        let t = tempfile::tempdir().unwrap();
        let private = t.path().join("private.sock");
        let _private = std::os::unix::net::UnixListener::bind(&private).unwrap();
        let other = t.path().join("other.sock");
        let found = listening(std::process::id(), &private);
        assert!(
            found.contains(&format!("tcp 127.0.0.1:{port}")),
            "{found:?}"
        );
        assert!(
            !found.iter().any(|f| f.contains("private.sock")),
            "{found:?}"
        );
        let e = check_private("test", "--x", std::process::id(), &private).unwrap_err();
        assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
        // Another Unix socket than the private one counts too.
        let _other = std::os::unix::net::UnixListener::bind(&other).unwrap();
        let found = listening(std::process::id(), &private);
        assert!(
            found.contains(&format!("unix {}", other.display())),
            "{found:?}"
        );
        // A process without a listening socket (std's sockets are close-on-exec).
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let none = listening(child.id(), &private);
        let _ = child.kill();
        let _ = child.wait();
        assert!(none.is_empty(), "{none:?}");
        drop(tcp);
    }

    #[test]
    fn a_tcp_address_reads_as_the_kernel_meant_it() {
        if cfg!(target_endian = "little") {
            assert_eq!(tcp_address("0100007F:0CEA"), "127.0.0.1:3306");
            assert_eq!(tcp_address("00000000:1538"), "0.0.0.0:5432");
            assert_eq!(
                tcp_address("00000000000000000000000000000000:0CEA"),
                "[::]:3306"
            );
            assert_eq!(
                tcp_address("00000000000000000000000001000000:1538"),
                "[::1]:5432"
            );
        }
    }

    #[test]
    fn the_servers_cpu_is_read_from_proc() {
        let (u, s) = cpu_of(std::process::id()).unwrap();
        assert!(u >= 0.0 && s >= 0.0);
        assert!(cpu_of(u32::MAX - 1).is_none());
    }

    #[test]
    fn last_lines_are_one_line() {
        let log = "a\n\nLOG:  starting\nFATAL:  unrecognized configuration parameter \"nosuch\"\n";
        assert_eq!(
            last_lines(log, 2),
            "LOG:  starting | FATAL:  unrecognized configuration parameter \"nosuch\""
        );
        assert_eq!(last_lines("", 3), "");
    }
}
