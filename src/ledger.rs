//! What a run leaves on the machine while it runs — test files, mounted scratch file systems,
//! database servers and their clusters and cgroups, changed device knobs — written down before
//! it exists, so a run killed with SIGKILL (or a power cut of the process) leaves a list behind,
//! and the next iogauge command names it and `iogauge clean` undoes it.
//!
//! Nothing in here may let someone else steer a root write. The directory ([`dir`]) is private:
//! created 0700 without following links and used only when it is a real directory owned by the
//! caller with no access for anyone else; every file in it is opened with O_NOFOLLOW and read
//! only when it is a regular file owned by the caller. A ledger is held locked (flock) for its
//! process's life, so a dead run is told apart from a live one by the kernel's lock, never by a
//! PID that may have been reused. Every path a ledger or a knob journal names is checked again
//! before anything is done to it (see `clean` and `sweep::knobs`).

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// One thing a run made that outlives it if the run dies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A test file, with the device and inode it was created with: a file that has replaced it
    /// since is someone else's and is never removed.
    File { path: PathBuf, dev: u64, ino: u64 },
    /// A file system iogauge made on a scratch device and mounted at `dir` (a directory it made),
    /// with the UUID iogauge gave it: `clean` wipes the device only while it still holds that
    /// very file system, never one a user made there since (of the same type or not).
    Mount {
        dir: PathBuf,
        dev: PathBuf,
        fs: String,
        #[serde(default)]
        uuid: Option<String>,
    },
    /// A database cluster iogauge made: its data directory (whose postmaster.pid names a
    /// server still running), the directories it created for it — each written down once made,
    /// with its device and inode — and its memory cgroup, once made.
    Cluster {
        data: PathBuf,
        dirs: Vec<MadeDir>,
        cgroup: Option<PathBuf>,
    },
    /// A MariaDB server iogauge made (`db sysbench`): its data directory (whose sibling
    /// mysqld.pid names a server still running) and the directories it created for it.
    Mariadb {
        data: PathBuf,
        dirs: Vec<MadeDir>,
        #[serde(default)]
        cgroup: Option<PathBuf>,
    },
    /// An array a layout sweep built on scratch devices (md, LVM, btrfs), with the name iogauge
    /// gave it (md's UUID, the volume group, btrfs's UUID).
    Array(crate::sweep::array::Record),
}

/// A directory iogauge made, as the ledger names it: with the device and inode it was made
/// with, so `clean` removes it only while it is still that directory (never another user's
/// that took the name since). A ledger of an older iogauge names a path alone: such a
/// directory cannot be told from someone else's and is left alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MadeDir {
    Made { path: PathBuf, dev: u64, ino: u64 },
    Named(PathBuf),
}

impl MadeDir {
    /// `path` as it is now, if it is a directory (reached without a link).
    pub fn of(path: &Path) -> Option<MadeDir> {
        let md = std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_dir())?;
        Some(MadeDir::Made {
            path: path.to_path_buf(),
            dev: md.dev(),
            ino: md.ino(),
        })
    }

    pub fn path(&self) -> &Path {
        match self {
            MadeDir::Made { path, .. } | MadeDir::Named(path) => path,
        }
    }

    /// Whether the path is still the very directory iogauge made.
    pub fn still_ours(&self) -> bool {
        match self {
            MadeDir::Made { path, dev, ino } => std::fs::symlink_metadata(path)
                .is_ok_and(|m| m.is_dir() && (m.dev(), m.ino()) == (*dev, *ino)),
            MadeDir::Named(_) => false,
        }
    }
}

impl Entry {
    /// A test file created at `path` (made absolute, as every ledger names it) with the device
    /// and inode it was created with: the one spelling both the run and a quick exit use, so
    /// the exit crosses off exactly what the run wrote down.
    pub fn file(path: &Path, (dev, ino): (u64, u64)) -> Entry {
        Entry::File {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
            dev,
            ino,
        }
    }

    /// The entry in words, for the user.
    pub fn describe(&self) -> String {
        match self {
            Entry::File { path, .. } => format!("test file {}", path.display()),
            Entry::Mount { dir, dev, fs, .. } => format!(
                "{fs} file system on {} mounted at {}",
                dev.display(),
                dir.display()
            ),
            Entry::Cluster { data, cgroup, .. } => format!(
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
            ),
            Entry::Array(r) => format!(
                "{:?} array {} of {}",
                r.made_by,
                r.device.display(),
                r.members
                    .iter()
                    .map(|m| m.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .to_lowercase(),
            Entry::Mariadb { data, .. } => format!(
                "MariaDB server directory {}{}",
                data.display(),
                match data.with_file_name("mysqld.pid").exists() {
                    true => " with its server running",
                    false => "",
                }
            ),
        }
    }
}

#[derive(Default, Serialize, Deserialize)]
struct Book {
    pid: u32,
    entries: Vec<Entry>,
}

/// This process's ledger: the file (locked for life) and what it lists.
struct Open {
    file: File,
    book: Book,
}

static LEDGER: Mutex<Option<Open>> = Mutex::new(None);

fn ledger() -> MutexGuard<'static, Option<Open>> {
    // Cleaning up must work even after a thread panicked while holding the lock.
    LEDGER.lock().unwrap_or_else(|e| e.into_inner())
}

/// The private directory for ledgers and knob journals: `IOGAUGE_RUN_DIR`, else /run/iogauge
/// for root (emptied at boot, when every knob has its default again and nothing is mounted),
/// else the user's runtime directory. Created 0700 without following a link; refused unless it
/// is a directory owned by the caller that nobody else may enter.
pub fn dir() -> Result<PathBuf> {
    let dir = location();
    checked(&dir, true)?;
    Ok(dir)
}

/// The run directory if it exists (and passes the same checks), for readers: a command that
/// only looks for what killed runs left creates nothing (a `--dry-run` touches nothing).
pub fn existing_dir() -> Option<PathBuf> {
    let dir = location();
    std::fs::symlink_metadata(&dir).ok()?;
    checked(&dir, false).ok()?;
    Some(dir)
}

fn location() -> PathBuf {
    let euid = euid();
    match std::env::var_os("IOGAUGE_RUN_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ if euid == 0 => PathBuf::from("/run/iogauge"),
        _ => match std::env::var_os("XDG_RUNTIME_DIR") {
            Some(d) if !d.is_empty() => PathBuf::from(d).join("iogauge"),
            _ => std::env::temp_dir().join(format!("iogauge-{euid}")),
        },
    }
}

/// Creates `dir` (when `create`) and checks it is private to this user.
fn checked(dir: &Path, create: bool) -> Result<()> {
    let euid = euid();
    // mkdir never follows a link at its last component: a planted link makes it fail (EEXIST)
    // and the check below refuses it.
    if create {
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(anyhow!("creating {}: {e}", dir.display())),
        }
    }
    let md = std::fs::symlink_metadata(dir)?;
    // A directory of ours that others may only read (made by an earlier version under a loose
    // umask) is tightened; one anybody else may write to, or owns, is refused.
    if md.is_dir() && md.uid() == euid && md.permissions().mode() & 0o022 == 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let md = std::fs::symlink_metadata(dir)?;
    if !md.is_dir() || md.uid() != euid || md.permissions().mode() & 0o077 != 0 {
        return Err(anyhow!(
            "{} is not a private directory of this user (it must be a directory owned by uid {euid} with mode 0700, not a link); iogauge keeps its journals there and will not use it: remove it, or set IOGAUGE_RUN_DIR to another place",
            dir.display()
        ));
    }
    Ok(())
}

fn euid() -> u32 {
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// Opens a file in the run directory for writing, never through a link, readable by its owner
/// only.
pub fn create_private(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Opens a journal someone may have left, for reading, only if it is a regular file of this
/// user reached without a link.
pub fn open_owned(path: &Path) -> Option<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let md = f.metadata().ok()?;
    (md.is_file() && md.uid() == euid()).then_some(f)
}

/// Replaces a locked journal's contents in place (the lock lives on the inode, so the file is
/// rewritten rather than renamed over). A torn write from a crash mid-way reads as no journal,
/// which loses only the entries of a process that was dying anyway.
pub fn rewrite(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(bytes)?;
    file.sync_data()
}

/// Writes `entry` down before the thing exists. Without a usable run directory the run goes
/// on without a ledger (it cleans up on every exit path it lives through), once said.
pub fn add(entry: Entry) {
    let mut g = ledger();
    if g.is_none() {
        match open_own() {
            Ok(o) => *g = Some(o),
            Err(e) => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    say!("warning: no crash ledger ({e:#}); if iogauge is killed, what it made is not listed for `iogauge clean`")
                });
                return;
            }
        }
    }
    if let Some(o) = g.as_mut() {
        o.book.entries.push(entry);
        save(o);
    }
}

/// Puts `new` in the place of `old` (what a resource made so far, as it grows), in one write.
pub fn replace(old: &Entry, new: Entry) {
    let mut g = ledger();
    if let Some(o) = g.as_mut() {
        match o.book.entries.iter_mut().find(|e| *e == old) {
            Some(e) => *e = new,
            None => o.book.entries.push(new),
        }
        save(o);
    }
}

/// Crosses `entry` off once it is gone (or handed to the user on purpose).
pub fn remove(entry: &Entry) {
    let mut g = ledger();
    if let Some(o) = g.as_mut() {
        o.book.entries.retain(|e| e != entry);
        if o.book.entries.is_empty() {
            // Nothing left to clean after a crash: no file either (a later `add` makes a new
            // one). Unlinked while still locked, so no reader can take it for a dead run's.
            if let Ok(dir) = dir() {
                let _ = std::fs::remove_file(dir.join(format!("ledger-{}.json", o.book.pid)));
            }
            *g = None;
        } else {
            save(o);
        }
    }
}

/// This process's ledger, created and locked for its life.
fn open_own() -> Result<Open> {
    let pid = std::process::id();
    let path = dir()?.join(format!("ledger-{pid}.json"));
    let file = create_private(&path).with_context(|| format!("opening {}", path.display()))?;
    file.try_lock()
        .map_err(|e| anyhow!("locking {}: {e}", path.display()))?;
    Ok(Open {
        file,
        book: Book {
            pid,
            entries: Vec::new(),
        },
    })
}

fn save(o: &mut Open) {
    if let Ok(bytes) = serde_json::to_vec_pretty(&o.book) {
        let _ = rewrite(&mut o.file, &bytes);
    }
}

/// A ledger left by a run that is no longer alive.
pub struct Left {
    pub path: PathBuf,
    pub pid: u32,
    pub entries: Vec<Entry>,
    /// Held so no second cleaner works on it meanwhile.
    _lock: File,
}

/// A journal of a process that is no longer alive: its path, PID, contents, and the journal
/// itself, locked, so no second reader works on it meanwhile.
pub struct Dead {
    pub path: PathBuf,
    pub pid: u32,
    pub raw: Vec<u8>,
    pub lock: File,
}

/// The largest ledger or knob journal read: thousands of entries of a few hundred bytes each.
const JOURNAL_LIMIT: u64 = 16 << 20;

/// The journals named `{prefix}PID.json` in the run directory whose owner is dead: a journal
/// whose lock is held belongs to a live process and is left alone, whatever its PID; one that
/// is a link or not the caller's is not read.
pub fn dead(prefix: &str) -> Vec<Dead> {
    let Some(dir) = existing_dir() else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let path = e.path();
        let Some(mut lock) = open_owned(&path) else {
            continue;
        };
        if lock.try_lock().is_err() {
            continue;
        }
        // Bounded: every command reads these, and no run writes a journal this large.
        if lock.metadata().is_ok_and(|m| m.len() > JOURNAL_LIMIT) {
            say!(
                "warning: {} is larger than {}, more than any journal iogauge writes; it was not read (remove it by hand)",
                crate::units::printable(&path.display().to_string()),
                crate::units::iec(JOURNAL_LIMIT)
            );
            continue;
        }
        let mut raw = Vec::new();
        if (&mut lock)
            .take(JOURNAL_LIMIT)
            .read_to_end(&mut raw)
            .is_ok()
        {
            out.push(Dead {
                path,
                pid,
                raw,
                lock,
            });
        }
    }
    out
}

/// The ledgers of dead runs in the run directory.
pub fn left() -> Vec<Left> {
    dead("ledger-")
        .into_iter()
        .map(|d| Left {
            path: d.path,
            pid: d.pid,
            entries: serde_json::from_slice::<Book>(&d.raw)
                .unwrap_or_default()
                .entries,
            _lock: d.lock,
        })
        .collect()
}

/// Names, as any command starts, what killed runs left, and how to remove it.
pub fn announce() {
    let left = left();
    for l in &left {
        if l.entries.is_empty() {
            let _ = std::fs::remove_file(&l.path);
            continue;
        }
        let what: Vec<String> = l.entries.iter().map(Entry::describe).collect();
        say!(
            "note: an iogauge run (pid {}) ended without cleaning up and left: {}; `iogauge clean` removes it (`iogauge clean --dry-run` only lists)",
            l.pid,
            crate::units::printable(&what.join("; "))
        );
    }
}

/// What `clean` did or would do with one entry.
pub struct Outcome {
    pub entry: Entry,
    pub pid: u32,
    /// What was (or would be) done, or why nothing was.
    pub done: String,
    pub ok: bool,
}

/// Removes what dead runs left (only lists it with `dry_run`). Each entry is checked again
/// first: a file is removed only if it is still the inode iogauge created, a mount is
/// unmounted only at the directory iogauge made and wiped only if the device holds the file
/// system iogauge made, a server is stopped only if its PID is still a postgres whose data
/// directory is the one iogauge made.
pub fn clean(dry_run: bool) -> Vec<Outcome> {
    let mut out = Vec::new();
    for l in left() {
        let mut kept = Vec::new();
        // Last made, first undone: a test file inside a scratch mount goes before the mount.
        for entry in l.entries.iter().rev() {
            let (done, ok) = undo(entry, dry_run);
            if !ok || dry_run {
                kept.push(entry.clone());
            }
            out.push(Outcome {
                entry: entry.clone(),
                pid: l.pid,
                done,
                ok,
            });
        }
        kept.reverse();
        if kept.is_empty() {
            let _ = std::fs::remove_file(&l.path);
        } else if !dry_run {
            let mut f = l._lock;
            let book = Book {
                pid: l.pid,
                entries: kept,
            };
            if let Ok(b) = serde_json::to_vec_pretty(&book) {
                let _ = rewrite(&mut f, &b);
            }
        }
    }
    out
}

fn undo(entry: &Entry, dry_run: bool) -> (String, bool) {
    match entry {
        Entry::File { path, dev, ino } => match std::fs::symlink_metadata(path) {
            Err(_) => ("already gone".into(), true),
            Ok(m) if (m.dev(), m.ino()) != (*dev, *ino) => (
                "left alone: another file has taken its name since".into(),
                true,
            ),
            Ok(_) if dry_run => ("would be removed".into(), true),
            Ok(_) => match std::fs::remove_file(path) {
                Ok(()) => ("removed".into(), true),
                Err(e) => (format!("could not be removed: {e}"), false),
            },
        },
        Entry::Mount { dir, dev, fs, uuid } => {
            crate::sweep::fs::undo_mount(dir, dev, fs, uuid.as_deref(), dry_run)
        }
        Entry::Cluster { data, dirs, cgroup } => {
            if dry_run {
                return (would_remove(dirs), true);
            }
            crate::db::cluster::undo(data, dirs, cgroup.as_deref())
        }
        Entry::Mariadb { data, dirs, cgroup } => {
            if dry_run {
                return (would_remove(dirs), true);
            }
            crate::db::mariadb::undo(data, dirs, cgroup.as_deref())
        }
        Entry::Array(r) => crate::sweep::array::undo(r, dry_run),
    }
}

/// What `clean` would do with a dead server's directories, each named: removed only while it
/// is the directory iogauge made.
fn would_remove(dirs: &[MadeDir]) -> String {
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

/// Locks each named block device for this process's life (the files are the locks): a second
/// sweep of one of them is refused with the holder's PID, instead of taking this sweep's
/// temporary values for the originals or wiping its file system.
pub fn lock_devices(names: &[String]) -> Result<Vec<File>> {
    let dir = dir()?;
    let mut held = Vec::new();
    let mut names: Vec<&String> = names.iter().collect();
    names.sort();
    names.dedup();
    for name in names {
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("device-{safe}.lock"));
        let mut f = create_private(&path).with_context(|| format!("opening {}", path.display()))?;
        if f.try_lock().is_err() {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            return Err(crate::error::usage(format!(
                "another iogauge sweep{} is changing {name}; wait for it to end (two sweeps of one device would take each other's settings for the originals)",
                match holder.trim() {
                    "" => String::new(),
                    pid => format!(" (pid {})", crate::units::printable(pid)),
                }
            )));
        }
        let _ = rewrite(&mut f, std::process::id().to_string().as_bytes());
        held.push(f);
    }
    Ok(held)
}
