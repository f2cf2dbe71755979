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
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// One kind of thing a run makes that outlives it if the run dies, as its own module knows it:
/// the record the ledger writes down, how to name it to the user, and how `clean` undoes it.
/// The ledger itself knows no kind but the test file: the module that makes a resource (a
/// mount, an array, a database cluster) implements this, and the commands hand the ledger the
/// table of kinds ([`Kind`]) when it must describe or undo what a dead run left — so a new
/// resource is one more implementation, never one more import down here.
pub trait Resource: Serialize + DeserializeOwned {
    /// The ledger's name for the kind, written as the entry's `kind`.
    const KIND: &'static str;
    /// The entry in words, for the user.
    fn describe(&self) -> String;
    /// Undoes it (only says what would be done with `dry_run`): what was done, or why nothing
    /// was, and whether nothing of it is left.
    fn undo(&self, dry_run: bool) -> (String, bool);
}

/// One thing a run made, as written in a ledger: its kind and that kind's own record (the
/// fields sit beside `kind` in the JSON, as ledgers have always been written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    kind: String,
    #[serde(flatten)]
    record: serde_json::Map<String, serde_json::Value>,
}

impl Entry {
    /// The entry for resource `r`.
    pub fn of<R: Resource>(r: &R) -> Entry {
        let record = match serde_json::to_value(r) {
            Ok(serde_json::Value::Object(m)) => m,
            // Every resource's record is a struct; anything else writes down the kind alone,
            // which `clean` names and leaves alone.
            _ => serde_json::Map::new(),
        };
        Entry {
            kind: R::KIND.to_string(),
            record,
        }
    }

    /// The record, when this entry is of kind `R`.
    pub fn read<R: Resource>(&self) -> Option<R> {
        (self.kind == R::KIND)
            .then(|| serde_json::from_value(serde_json::Value::Object(self.record.clone())).ok())
            .flatten()
    }

    /// The entry in words, by the kinds the caller knows.
    pub fn describe(&self, kinds: &[Kind]) -> String {
        kinds
            .iter()
            .find_map(|k| (k.describe)(self))
            .unwrap_or_else(|| {
                format!(
                    "{} entry this iogauge cannot read ({})",
                    self.kind,
                    serde_json::Value::Object(self.record.clone())
                )
            })
    }

    fn undo(&self, kinds: &[Kind], dry_run: bool) -> (String, bool) {
        kinds.iter().find_map(|k| (k.undo)(self, dry_run)).unwrap_or((
            "left alone: this iogauge does not know how to undo it (an iogauge of another version wrote it)".into(),
            false,
        ))
    }
}

/// How the ledger reads one kind of entry: a row of the table the commands hand to
/// [`announce`] and [`clean`], made by [`Kind::of`] from the resource's own implementation.
pub struct Kind {
    describe: fn(&Entry) -> Option<String>,
    undo: fn(&Entry, bool) -> Option<(String, bool)>,
}

impl Kind {
    pub fn of<R: Resource>() -> Kind {
        Kind {
            describe: |e| e.read::<R>().map(|r| r.describe()),
            undo: |e, dry_run| e.read::<R>().map(|r| r.undo(dry_run)),
        }
    }
}

/// A test file, with the device and inode it was created with: a file that has replaced it
/// since is someone else's and is never removed. The one kind the ledger knows itself, because
/// the signal handler (`interrupt`, below the targets) crosses test files off as it removes
/// them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
    /// Written just before the create, when the file has no inode yet: the wall clock then
    /// (nanoseconds, the kernel's coarse clock). A file at the path born at or after it was
    /// made by the run; one born before was there already and is never removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    born_after_ns: Option<u64>,
}

impl TestFile {
    /// A test file about to be created at `path`: written down before the name exists, so a
    /// kill between the create and [`TestFile::entry`] (which needs the inode) still leaves it
    /// named. `ledger::replace` puts the whole entry in its place once the file is made.
    pub fn before_create(path: &Path) -> Entry {
        Entry::of(&TestFile {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
            dev: 0,
            ino: 0,
            born_after_ns: Some(iogauge_engine::sys::coarse_realtime_ns()),
        })
    }

    /// A test file created at `path` (made absolute, as every ledger names it) with the device
    /// and inode it was created with: the one spelling both the run and a quick exit use, so
    /// the exit crosses off exactly what the run wrote down.
    pub fn entry(path: &Path, (dev, ino): (u64, u64)) -> Entry {
        Entry::of(&TestFile {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
            dev,
            ino,
            born_after_ns: None,
        })
    }

    /// Whether the file now at the path is the one the run was creating when it died: a
    /// regular file born at or after the entry. Without a birth time (a file system that keeps
    /// none) it cannot be told from a file that was there, and is left alone.
    fn born_of_the_run(m: &std::fs::Metadata, after_ns: u64) -> Result<bool, String> {
        let born = m
            .created()
            .map_err(|_| "left alone: its file system keeps no creation time, so it cannot be told from a file that was there before; remove it by hand if it is iogauge's".to_string())?;
        let ns = born
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Ok(m.is_file() && ns >= after_ns)
    }
}

impl Resource for TestFile {
    const KIND: &'static str = "file";

    fn describe(&self) -> String {
        format!("test file {}", self.path.display())
    }

    fn undo(&self, dry_run: bool) -> (String, bool) {
        let Ok(m) = std::fs::symlink_metadata(&self.path) else {
            return ("already gone".into(), true);
        };
        let left_alone = match self.born_after_ns {
            Some(after) => match TestFile::born_of_the_run(&m, after) {
                Err(why) => Some(why),
                Ok(false) => Some("left alone: it was there before the run".into()),
                Ok(true) => None,
            },
            None if (m.dev(), m.ino()) != (self.dev, self.ino) => {
                Some("left alone: another file has taken its name since".into())
            }
            None => None,
        };
        match left_alone {
            Some(why) => (why, true),
            None if dry_run => ("would be removed".into(), true),
            None => match std::fs::remove_file(&self.path) {
                Ok(()) => ("removed".into(), true),
                Err(e) => (format!("could not be removed: {e}"), false),
            },
        }
    }
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
    iogauge_engine::sys::euid()
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

/// Replaces a locked file's contents in place, keeping its inode (and so its lock): for a file
/// written once before anything it guards is changed (a knob journal, a device lock). A ledger,
/// rewritten as its run goes on, is replaced whole instead ([`replace_locked`]).
pub fn rewrite(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(bytes)?;
    file.sync_data()
}

/// Replaces the journal at `path`, which `file` holds locked, with `bytes`: written to a new file
/// beside it, locked and synced, then renamed over it, so the path names a whole journal at every
/// moment. Rewritten in place, a run killed between the truncation and the write (a test killed
/// sweeps the moment their file system was mounted, as the ledger recorded it) left an empty
/// ledger, and `clean` found nothing of what it had made. The lock moves with the contents to
/// the new inode; [`dead`] checks that the inode it locked is still the one the path names.
pub fn replace_locked(path: &Path, file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = staged(path);
    // Only the holder of the journal's lock writes beside it: a file there is its own, left by a
    // write that did not finish.
    let _ = std::fs::remove_file(&tmp);
    let mut new = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)?;
    new.try_lock()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    new.write_all(bytes)?;
    new.sync_data()?;
    std::fs::rename(&tmp, path)?;
    // The old inode, and its lock, go only now: the path already names the new one.
    *file = new;
    Ok(())
}

/// Where [`replace_locked`] writes a journal before renaming it over `path`: a name no reader
/// takes for a journal (they end in `.json`).
fn staged(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
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
    let (Ok(bytes), Ok(dir)) = (serde_json::to_vec_pretty(&o.book), dir()) else {
        return;
    };
    let path = dir.join(format!("ledger-{}.json", o.book.pid));
    let _ = replace_locked(&path, &mut o.file, &bytes);
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
    match existing_dir() {
        Some(dir) => dead_in(&dir, prefix),
        None => Vec::new(),
    }
}

fn dead_in(dir: &Path, prefix: &str) -> Vec<Dead> {
    let Ok(rd) = std::fs::read_dir(dir) else {
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
        // Its owner renamed a new journal over the one opened here (`replace_locked`) and let
        // the old one's lock go: the path names another inode, held by a live owner.
        if !still_named(&lock, &path) {
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

/// Whether `path` still names the inode `file` has open.
fn still_named(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
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
pub fn announce(kinds: &[Kind]) {
    let left = left();
    for l in &left {
        if l.entries.is_empty() {
            let _ = std::fs::remove_file(&l.path);
            continue;
        }
        let what: Vec<String> = l.entries.iter().map(|e| e.describe(kinds)).collect();
        say!(
            "note: an iogauge run (pid {}) ended without cleaning up and left: {}; `iogauge clean` removes it (`iogauge clean --dry-run` only lists)",
            l.pid,
            crate::units::printable(&what.join("; "))
        );
    }
}

/// What `clean` did or would do with one entry.
pub struct Outcome {
    /// The entry in words.
    pub what: String,
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
pub fn clean(dry_run: bool, kinds: &[Kind]) -> Vec<Outcome> {
    let mut out = Vec::new();
    for l in left() {
        let mut kept = Vec::new();
        // Last made, first undone: a test file inside a scratch mount goes before the mount.
        for entry in l.entries.iter().rev() {
            let (done, ok) = entry.undo(kinds, dry_run);
            if !ok || dry_run {
                kept.push(entry.clone());
            }
            out.push(Outcome {
                what: entry.describe(kinds),
                pid: l.pid,
                done,
                ok,
            });
        }
        kept.reverse();
        if !dry_run {
            // A save the dead run did not finish.
            let _ = std::fs::remove_file(staged(&l.path));
        }
        if kept.is_empty() {
            let _ = std::fs::remove_file(&l.path);
        } else if !dry_run {
            let mut f = l._lock;
            let book = Book {
                pid: l.pid,
                entries: kept,
            };
            if let Ok(b) = serde_json::to_vec_pretty(&book) {
                let _ = replace_locked(&l.path, &mut f, &b);
            }
        }
    }
    out
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

#[cfg(test)]
mod tests;
