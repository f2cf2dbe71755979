//! The one way iogauge creates or replaces a file it writes for the user — an output, a report,
//! a chart, a bundle, a man page — and the one rule for links on any path it is handed.
//!
//! Why: iogauge runs as root, often in directories another account controls (a shared results
//! directory, /tmp). Opening `D/01-latency.svg` for writing follows a link planted there, and
//! root's own file then holds a chart; a dangling link makes root create a file wherever it
//! points. So a file is never opened for writing by its name: a new file of a random name is
//! created beside it with `O_CREAT|O_EXCL` (which never follows a link, dangling or not), written,
//! and renamed over the name (`rename` replaces a link itself, never what it points to). A
//! reader sees the old file or the new one, never half of one.
//!
//! And a link on the way to any path is followed only when root or the invoking user owns it
//! (the account that ran sudo, or this process's): another account's link is refused, naming
//! its owner, and a dangling link at the end of a path is refused with a sentence, since
//! iogauge would create a file where it points. The links `/dev/disk/by-id/…` and the like are
//! root's.

use crate::error::usage;
use anyhow::Result;
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Links deeper than the kernel's own limit (ELOOP after 40) are a loop.
const MAX_LINKS: usize = 40;

/// Writes `bytes` as the file `path`, creating it or replacing what is there (a file, or a link
/// itself, never what a link points to), through a new file beside it renamed over the name.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (tmp, mut file) = new_beside(path)?;
    let written = file.write_all(bytes).and_then(|()| file.flush());
    let done = written.and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Writes `value` to a kernel knob under /proc or /sys (a scheduler, md's sync speed, a cgroup
/// limit, drop_caches): the kernel's own entries, which no account but root can link or
/// create, so the name is opened as it is.
pub fn set_knob(path: &Path, value: impl AsRef<[u8]>) -> io::Result<()> {
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, value)
}

/// Whether a file can be made where `path` would be (permissions, a read-only file system),
/// found out by making and removing a new one beside it; nothing at `path` is touched.
pub fn can_create_beside(path: &Path) -> io::Result<()> {
    let (tmp, file) = new_beside(path)?;
    drop(file);
    std::fs::remove_file(tmp)
}

/// A new file of a random name in `path`'s directory, made with O_EXCL and O_NOFOLLOW, mode 0644
/// less the umask.
fn new_beside(path: &Path) -> io::Result<(PathBuf, std::fs::File)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tries = 0;
    loop {
        let tmp = dir.join(format!(
            ".{name}.iogauge-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 16 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// The temporary directory (TMPDIR, else /tmp) iogauge makes its private directories in: scratch
/// mount points, mkfs images, a server's short socket directory. Refused when another account
/// could rename what iogauge makes there: a directory owned by another account (root and this
/// process's are trusted), or one that others may write without the sticky bit.
pub fn temp_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir();
    temp_dir_ok(&dir)?;
    Ok(dir)
}

fn temp_dir_ok(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let shown = crate::units::printable(&dir.display().to_string()).into_owned();
    let md = std::fs::metadata(dir).map_err(|e| {
        usage(format!(
            "the temporary directory {shown} (TMPDIR) cannot be used: {e}; set TMPDIR to an existing directory"
        ))
    })?;
    if !md.is_dir() {
        return Err(usage(format!(
            "the temporary directory {shown} (TMPDIR) is not a directory; set TMPDIR to one"
        )));
    }
    let mode = md.permissions().mode();
    let owner_ok = trusted(md.uid());
    let others_write = mode & 0o022 != 0;
    let sticky = mode & 0o1000 != 0;
    if !owner_ok || (others_write && !sticky) {
        return Err(usage(format!(
            "the temporary directory {shown} (TMPDIR) {}, so another account could rename or replace what iogauge makes there (mount points, mkfs images); set TMPDIR to a directory only root or you may write, or make it sticky (chmod +t {shown})",
            match owner_ok {
                false => format!("belongs to {}", account(md.uid())),
                true => format!("may be written by other accounts (mode {:o}) and has no sticky bit", mode & 0o7777),
            }
        )));
    }
    Ok(())
}

/// The accounts whose links iogauge follows: root, this process's, and the one that ran sudo.
fn trusted(uid: u32) -> bool {
    let me = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
    let sudo = std::env::var("SUDO_UID")
        .ok()
        .and_then(|u| u.parse::<u32>().ok());
    uid == 0 || uid == me || Some(uid) == sudo
}

/// An account's name from /etc/passwd, or its number.
fn account(uid: u32) -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 2 && f[2] == uid.to_string()).then(|| format!("{} (uid {uid})", f[0]))
        })
        .unwrap_or_else(|| format!("uid {uid}"))
}

/// Checks every link on the way to `path` (`what` names it: "--output", "the target"): each
/// must be root's or the invoking user's, and the path may not end in a dangling link.
pub fn links(what: &str, path: &Path) -> Result<()> {
    let shown = |p: &Path| crate::units::printable(&p.display().to_string()).into_owned();
    let Ok(abs) = std::path::absolute(path) else {
        return Ok(());
    };
    // What is left to walk, last first, each component owned ("/" for the root).
    let owned = |p: &Path| -> Vec<OsString> {
        let mut v: Vec<OsString> = p.components().map(|c| c.as_os_str().to_owned()).collect();
        v.reverse();
        v
    };
    let mut todo = owned(&abs);
    let mut at = PathBuf::from("/");
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        match c.to_str() {
            Some("/") => at = PathBuf::from("/"),
            Some(".") => {}
            Some("..") => {
                at.pop();
            }
            _ => {
                let next = at.join(&c);
                let Ok(md) = std::fs::symlink_metadata(&next) else {
                    // Missing: nothing further is a link yet.
                    return Ok(());
                };
                if !md.file_type().is_symlink() {
                    at = next;
                    continue;
                }
                hops += 1;
                let Ok(to) = std::fs::read_link(&next) else {
                    return Ok(());
                };
                if !trusted(md.uid()) {
                    return Err(usage(format!(
                        "{what} {}: {} is a link to {} owned by {}, another account; iogauge as root follows no link another account could have planted: give the path it leads to yourself if it is the one you mean",
                        shown(path),
                        shown(&next),
                        shown(&to),
                        account(md.uid())
                    )));
                }
                if todo.is_empty() && std::fs::metadata(&next).is_err() {
                    return Err(usage(format!(
                        "{what} {}: {} is a link to {}, which does not exist; iogauge creates no file through a link: give {} itself, or remove the link",
                        shown(path),
                        shown(&next),
                        shown(&to),
                        shown(&at.join(&to))
                    )));
                }
                if hops > MAX_LINKS {
                    return Ok(());
                }
                todo.extend(owned(&to));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn replace_puts_a_file_where_a_link_was_and_leaves_its_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let precious = dir.path().join("precious");
        replace(&precious, b"root's own").unwrap();
        let planted = dir.path().join("chart.svg");
        symlink(&precious, &planted).unwrap();
        replace(&planted, b"<svg/>").unwrap();
        assert_eq!(std::fs::read(&precious).unwrap(), b"root's own");
        assert_eq!(std::fs::read(&planted).unwrap(), b"<svg/>");
        assert!(!std::fs::symlink_metadata(&planted)
            .unwrap()
            .file_type()
            .is_symlink());
        // A dangling link is replaced too, and nothing is made where it pointed.
        let dangling = dir.path().join("b.json");
        symlink(dir.path().join("newpath"), &dangling).unwrap();
        replace(&dangling, b"{}").unwrap();
        assert!(!dir.path().join("newpath").exists());
        // Nothing but the three names is left.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
        can_create_beside(&dir.path().join("x.json")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_temporary_directory_others_may_rename_in_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |m: u32| {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode(0o700);
        assert!(temp_dir_ok(dir.path()).is_ok());
        // /tmp's own mode: anyone writes, the sticky bit keeps each to their own names.
        mode(0o1777);
        assert!(temp_dir_ok(dir.path()).is_ok());
        mode(0o777);
        let e = temp_dir_ok(dir.path()).unwrap_err().to_string();
        assert!(e.contains("mode 777) and has no sticky bit"), "{e}");
        mode(0o775);
        assert!(temp_dir_ok(dir.path()).is_err());
        mode(0o755);
        assert!(temp_dir_ok(dir.path()).is_ok());
    }

    #[test]
    fn own_links_are_followed_and_dangling_ones_refused_with_a_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        symlink(&real, dir.path().join("via")).unwrap();
        assert!(links("--output", &dir.path().join("via/out.json")).is_ok());
        symlink(dir.path().join("gone"), dir.path().join("dangling")).unwrap();
        let e = links("--output", &dir.path().join("dangling")).unwrap_err();
        assert!(e.to_string().contains("which does not exist"), "{e}");
        assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
    }
}
