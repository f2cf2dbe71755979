//! The operating-system user a database server runs as (never root), the directories it may
//! reach and that are removed after it, and how iogauge (root) touches files in them.
//!
//! A directory the server's account owns is that account's to change: between two of
//! iogauge's steps it may replace any name in it by a link to a file of root's (/etc/shadow).
//! So iogauge holds each such directory open ([`Dir`]) and reaches the names in it from the
//! handle, never through a link (O_NOFOLLOW); a file it writes there is a new one it created
//! itself (any old entry unlinked, then O_CREAT|O_EXCL), and owners and modes are set on the
//! handle (fchown, fchmod), never by path.

use crate::error::usage;
use crate::ledger::MadeDir;
use anyhow::{anyhow, Context, Result};
use iogauge_engine::sys;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The operating-system user the cluster belongs to.
#[derive(Clone, Debug)]
pub struct Owner {
    pub name: String,
    /// Set when iogauge is root and runs PostgreSQL as someone else.
    pub ids: Option<(u32, u32)>,
}

/// The invoking user, or when root an unprivileged one: initdb refuses root.
pub fn owner() -> Result<Owner> {
    owner_among(&["postgres", "nobody"], "PostgreSQL (initdb refuses root)")
}

/// The invoking user, or when root the first of `names` that exists: database servers refuse
/// to run as root. `server` names the server in the error.
pub fn owner_among(names: &[&str], server: &str) -> Result<Owner> {
    if !crate::db::is_root() {
        let name = std::env::var("USER").unwrap_or_else(|_| "the invoking user".into());
        return Ok(Owner { name, ids: None });
    }
    let passwd = std::fs::read_to_string("/etc/passwd").context("reading /etc/passwd")?;
    let user = |want: &str| {
        passwd.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 3 && f[0] == want)
                .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
                .flatten()
        })
    };
    for &name in names {
        if let Some(ids) = user(name) {
            return Ok(Owner {
                name: name.into(),
                ids: Some(ids),
            });
        }
    }
    Err(anyhow!(
        "running as root, and none of the users {} exists to run {server} as; create one or run iogauge as an ordinary user",
        names.join(", ")
    ))
}

/// As root, a server runs as another user, who must be able to reach `dir`: every directory
/// above it searchable by that user. Checked before anything is created, so the error names the
/// directory to open up rather than the server's "Permission denied"; `runs_as` says who runs
/// it, `{}` standing for the user.
pub fn check_reachable_by(dir: &Path, owner: &Owner, runs_as: &str) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Some((uid, gid)) = owner.ids else {
        return Ok(());
    };
    let abs = std::path::absolute(dir)?;
    for d in abs.ancestors() {
        let md = std::fs::metadata(d).with_context(|| format!("looking at {}", d.display()))?;
        let mode = md.mode();
        let ok = match (md.uid() == uid, md.gid() == gid) {
            (true, _) => mode & 0o100 != 0,
            (_, true) => mode & 0o010 != 0,
            _ => mode & 0o001 != 0,
        };
        if !ok {
            return Err(usage(format!(
                "{}, who cannot enter {} (mode {:o}); allow it (chmod o+x {}) or choose another directory",
                runs_as.replace("{}", &owner.name),
                d.display(),
                mode & 0o7777,
                d.display()
            )));
        }
    }
    Ok(())
}

/// Removes the directories a server's run created, saying which could not be.
pub fn remove_dirs(dirs: &[PathBuf]) {
    for d in dirs {
        if let Err(e) = std::fs::remove_dir_all(d) {
            if e.kind() != std::io::ErrorKind::NotFound {
                say!("warning: could not remove {}: {e}", d.display());
            }
        }
    }
}

/// A directory iogauge holds open, and its path for messages.
#[derive(Debug)]
pub struct Dir {
    handle: File,
    path: PathBuf,
}

impl Dir {
    /// Creates the directory `path`, in a directory the server's account does not own, and
    /// holds it open; [`Dir::make_private`] then gives it to the server.
    pub fn create(path: &Path) -> Result<Dir> {
        std::fs::create_dir(path).with_context(|| format!("creating {}", path.display()))?;
        let handle = sys::open_dir(path).with_context(|| format!("opening {}", path.display()))?;
        Ok(Dir {
            handle,
            path: path.to_path_buf(),
        })
    }

    /// An existing directory held open: the directory of a server an earlier run kept.
    pub fn open(path: &Path) -> Result<Dir> {
        let handle = sys::open_dir(path).with_context(|| format!("opening {}", path.display()))?;
        Ok(Dir {
            handle,
            path: path.to_path_buf(),
        })
    }

    /// Creates the directory `name` in this one, private to the server's user as
    /// [`Dir::create`]; the name is reached from the handle, never through a link.
    pub fn create_in(&self, name: &str, owner: &Owner) -> Result<Dir> {
        let path = self.path.join(name);
        sys::mkdir_at(&self.handle, OsStr::new(name), 0o700)
            .with_context(|| format!("creating {}", path.display()))?;
        let handle = sys::open_at(
            &self.handle,
            OsStr::new(name),
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )
        .with_context(|| format!("opening {}", path.display()))?;
        let d = Dir { handle, path };
        d.make_private(owner)?;
        Ok(d)
    }

    /// Makes the directory the server's alone: mode 0700, owned by the server's user, both set
    /// on the handle.
    pub fn make_private(&self, owner: &Owner) -> Result<()> {
        self.handle
            .set_permissions(std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("setting the mode of {}", self.path.display()))?;
        if let Some((uid, gid)) = owner.ids {
            std::os::unix::fs::fchown(&self.handle, Some(uid), Some(gid))
                .with_context(|| format!("giving {} to {}", self.path.display(), owner.name))?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file `name` in this directory, new, for iogauge to write (mode 0600): whatever was
    /// at the name is unlinked first (a link itself, not its target), then the file is created
    /// exclusively, so what is written lands in a file iogauge made. Given to `owner`'s user
    /// on the handle, when there is one. Something that takes the name in between is refused.
    pub fn replace(&self, name: &str, owner: Option<&Owner>) -> Result<File> {
        match sys::unlink_at(&self.handle, OsStr::new(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(anyhow!(
                    "could not remove {} to write it anew: {e}",
                    self.path.join(name).display()
                ))
            }
        }
        self.create_new(name, owner)
    }

    /// The new file `name` in this directory (mode 0600), created exclusively and never through
    /// a link; given to `owner`'s user on the handle, when there is one.
    pub fn create_new(&self, name: &str, owner: Option<&Owner>) -> Result<File> {
        let path = self.path.join(name);
        let f = sys::open_at(
            &self.handle,
            OsStr::new(name),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
            0o600,
        )
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => anyhow!(
                "creating {}: something else took the name in a directory the server's account owns",
                path.display()
            ),
            _ => anyhow!("creating {}: {e}", path.display()),
        })?;
        if let Some((uid, gid)) = owner.and_then(|o| o.ids) {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))
                .with_context(|| format!("giving {} to its server", path.display()))?;
        }
        Ok(f)
    }

    /// The text of `name`, a file the server wrote in this directory: reached from the handle,
    /// never through a link, and read only when it is a regular file of the server's user with
    /// no other name (a hard link to a file of root's would pass the other checks). Opened
    /// without blocking, so a FIFO left at the name cannot hang iogauge.
    pub fn read_servers(&self, name: &str, owner: &Owner) -> Result<String> {
        let mut f = self.open_servers(name, owner)?;
        let mut text = String::new();
        f.read_to_string(&mut text)
            .with_context(|| format!("reading {}", self.path.join(name).display()))?;
        Ok(text)
    }

    /// The file `name` the server wrote in this directory, open for reading under the checks of
    /// [`Dir::read_servers`].
    pub fn open_servers(&self, name: &str, owner: &Owner) -> Result<File> {
        let path = self.path.join(name);
        let f = sys::open_at(
            &self.handle,
            OsStr::new(name),
            libc::O_RDONLY | libc::O_NONBLOCK,
            0,
        )
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => anyhow!(
                "{} is a symbolic link, which the server's account put there; iogauge does not follow it",
                path.display()
            ),
            _ => anyhow!("opening {}: {e}", path.display()),
        })?;
        let md = f.metadata()?;
        let foreign = owner.ids.is_some_and(|(uid, _)| md.uid() != uid);
        if !md.is_file() || md.nlink() != 1 || foreign {
            return Err(anyhow!(
                "{} is not a file of {}'s own (a regular file with one name); iogauge does not read it",
                path.display(),
                owner.name
            ));
        }
        Ok(f)
    }

    /// Removes the entry `name` (a link itself, never its target); gone already is fine.
    pub fn remove(&self, name: &str) {
        let _ = sys::unlink_at(&self.handle, OsStr::new(name));
    }
}

/// A test's stand-in for the server's account at one of iogauge's steps (`initdb`, `start`):
/// with IOGAUGE_DEBUG_PLANT=STEP:FILE set, a symbolic link to FILE is put at each of `names`
/// in `dir` just before iogauge touches them, as a hostile account could.
pub fn debug_plant(dir: &Dir, step: &str, names: &[&str]) {
    let Some(v) = std::env::var_os("IOGAUGE_DEBUG_PLANT") else {
        return;
    };
    let v = v.to_string_lossy();
    let Some((at, file)) = v.split_once(':') else {
        return;
    };
    if at != step {
        return;
    }
    for n in names {
        let link = dir.path().join(n);
        let _ = std::fs::remove_file(&link);
        let _ = std::os::unix::fs::symlink(file, &link);
    }
}

/// The first 4 KiB of the pid file `path` a dead run's server left (`iogauge clean`, which
/// holds no handle): never through a link, only a regular file, opened without blocking.
pub fn read_pid_file(path: &Path) -> Option<u32> {
    let dir = sys::open_dir(path.parent()?).ok()?;
    let f = sys::open_at(
        &dir,
        path.file_name()?,
        libc::O_RDONLY | libc::O_NONBLOCK,
        0,
    )
    .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(4096).read_to_string(&mut text).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// All that a file iogauge holds open (a client's output it created) says, from its start:
/// read through the handle, so nothing at the file's name is read instead.
pub fn read_back(f: &mut File) -> String {
    let mut text = String::new();
    if f.rewind().is_ok() {
        let _ = f.read_to_string(&mut text);
    }
    text
}

/// `iogauge clean`'s last step for a dead run's server: its directories, only those named as
/// iogauge names them (`prefix`), each said as removed or not; whether all went.
pub fn remove_own_dirs(
    dirs: &[crate::ledger::MadeDir],
    prefix: &str,
    done: &mut Vec<String>,
) -> bool {
    let mut ok = true;
    for made in dirs {
        let d = made.path();
        let named_ours = d
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix));
        if !named_ours || std::fs::symlink_metadata(d).is_err() {
            continue;
        }
        // Still the directory iogauge made (device and inode), or someone else's now.
        if !made.still_ours() {
            done.push(format!(
                "{} left alone: it is not the directory iogauge made (another took its name, or an older iogauge did not record which)",
                d.display()
            ));
            continue;
        }
        match std::fs::remove_dir_all(d) {
            Ok(()) => done.push(format!("{} removed", d.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                ok = false;
                done.push(format!("{} could not be removed: {e}", d.display()));
            }
        }
    }
    ok
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// The server's account for a test: `nobody` when the test runs as root (so owners are
    /// really changed), else the invoking user.
    pub fn test_owner() -> Owner {
        match crate::db::is_root() {
            true => owner_among(&["nobody"], "the test").unwrap(),
            false => Owner {
                name: "me".into(),
                ids: None,
            },
        }
    }

    /// A file of the test's own (root's, run as root) with mode 0600 outside the server's
    /// directory, as /etc/shadow is; what it holds and how it looks, to compare later.
    pub fn secret(dir: &Path) -> (PathBuf, (Vec<u8>, u32, u32)) {
        let p = dir.join("secret");
        std::fs::write(&p, "root:secret\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let look = look_at(&p);
        (p, look)
    }

    pub fn look_at(p: &Path) -> (Vec<u8>, u32, u32) {
        let md = std::fs::metadata(p).unwrap();
        (std::fs::read(p).unwrap(), md.uid(), md.mode() & 0o7777)
    }

    #[test]
    fn a_file_written_anew_replaces_a_planted_link_and_leaves_its_target() {
        let t = tempfile::tempdir().unwrap();
        let (secret, before) = secret(t.path());
        let owner = test_owner();
        let dir = Dir::create(&t.path().join("work")).unwrap();
        dir.make_private(&owner).unwrap();
        symlink(&secret, t.path().join("work/server.out")).unwrap();
        let mut f = dir.replace("server.out", Some(&owner)).unwrap();
        std::io::Write::write_all(&mut f, b"ours").unwrap();
        assert_eq!(look_at(&secret), before);
        let p = t.path().join("work/server.out");
        let md = std::fs::symlink_metadata(&p).unwrap();
        assert!(md.is_file());
        assert_eq!(md.mode() & 0o777, 0o600);
        if let Some((uid, _)) = owner.ids {
            assert_eq!(md.uid(), uid);
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"ours");
        // A client's output file: created exclusively, so a link at its name is refused.
        symlink(&secret, t.path().join("work/x.out")).unwrap();
        let e = dir.create_new("x.out", None).unwrap_err();
        assert!(!format!("{e:#}").contains('\n'), "{e:#}");
        assert_eq!(look_at(&secret), before);
    }

    #[test]
    fn a_directory_made_inside_is_never_one_a_link_points_to() {
        let t = tempfile::tempdir().unwrap();
        let owner = test_owner();
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o755)).unwrap();
        let work = Dir::create(&t.path().join("work")).unwrap();
        work.make_private(&owner).unwrap();
        symlink(&elsewhere, t.path().join("work/data")).unwrap();
        assert!(work.create_in("data", &owner).is_err());
        assert_eq!(mode(&elsewhere), 0o755);
        assert_eq!(std::fs::metadata(&elsewhere).unwrap().uid(), {
            std::fs::metadata(t.path()).unwrap().uid()
        });
        let tmp = work.create_in("tmp", &owner).unwrap();
        assert_eq!(mode(tmp.path()), 0o700);
    }

    #[test]
    fn only_the_servers_own_plain_file_is_read() {
        let t = tempfile::tempdir().unwrap();
        let (secret, _) = secret(t.path());
        let owner = test_owner();
        let dir = Dir::create(&t.path().join("work")).unwrap();
        dir.make_private(&owner).unwrap();
        // Through a link: refused.
        symlink(&secret, t.path().join("work/server.log")).unwrap();
        assert!(dir.read_servers("server.log", &owner).is_err());
        // A second name of a file of root's: refused.
        std::fs::hard_link(&secret, t.path().join("work/postgresql.conf")).unwrap();
        let e = dir.read_servers("postgresql.conf", &owner).unwrap_err();
        assert!(e.to_string().contains("iogauge does not read it"), "{e}");
        // A FIFO: refused at once, not waited on.
        let fifo = t.path().join("work/fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert!(dir.read_servers("fifo", &owner).is_err());
        // The server's own file: read.
        let mut f = dir.create_new("ok", Some(&owner)).unwrap();
        std::io::Write::write_all(&mut f, b"LOG: ready").unwrap();
        assert_eq!(dir.read_servers("ok", &owner).unwrap(), "LOG: ready");
        assert_eq!(read_back(&mut f), "LOG: ready");
    }
}

/// What the crash ledger keeps of a database server iogauge made: its data directory (whose
/// pid file names a server still running), the directories it created for it — each written
/// down once made, with its device and inode — and its memory cgroup, once made. PostgreSQL's
/// and MariaDB's entries are this record under their own kinds (`cluster::PgCluster`,
/// `mariadb::MyServer`), each undone its own way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerRecord {
    pub data: PathBuf,
    pub dirs: Vec<MadeDir>,
    #[serde(default)]
    pub cgroup: Option<PathBuf>,
}

impl ServerRecord {
    /// What exists so far: `made` are the directories listed for removal, each written down
    /// only while it is a directory (with its device and inode).
    pub fn of(data: &Path, made: &[PathBuf], cgroup: Option<PathBuf>) -> ServerRecord {
        ServerRecord {
            data: data.to_path_buf(),
            dirs: made.iter().filter_map(|d| MadeDir::of(d)).collect(),
            cgroup,
        }
    }
}

/// What `clean` would do with a dead server's directories, each named: removed only while it
/// is the directory iogauge made.
pub fn would_remove(dirs: &[MadeDir]) -> String {
    let (ours, not): (Vec<&MadeDir>, Vec<&MadeDir>) = dirs
        .iter()
        .filter(|d| std::fs::symlink_metadata(d.path()).is_ok())
        .partition(|d| d.still_ours());
    let list = |v: &[&MadeDir]| {
        v.iter()
            .map(|d| crate::units::printable(&d.path().display().to_string()).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = String::from("its server would be stopped (if it still runs)");
    if !ours.is_empty() {
        s.push_str(&format!(", {} would be removed", list(&ours)));
    }
    if !not.is_empty() {
        s.push_str(&format!(
            ", {} left alone (not the directory iogauge made)",
            list(&not)
        ));
    }
    s
}
