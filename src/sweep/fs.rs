//! File systems on a scratch device: make one, mount it in a private directory, run the suite
//! in it, unmount, and wipe the signature iogauge wrote, so the device is left as found.
//!
//! Only a device that carries no signature at all is used: iogauge never writes over something
//! it did not write.

pub use crate::plan::axes::FsSpec;
use crate::target::signatures;
use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

pub use crate::target::device_bytes;

/// A file system iogauge made and mounted; unmounted and its signature wiped on drop.
pub struct Mounted {
    pub dir: PathBuf,
    dev: PathBuf,
    hook: u64,
    mounted: bool,
    entry: crate::ledger::Entry,
    /// Whether this mount wipes its device when it goes: a file system it made, not one made
    /// by an array it sits on (the array wipes every member itself).
    wipes: bool,
}

impl Mounted {
    /// Mounts the file system an array built (btrfs over several members) with `opts` in a
    /// private directory; unmounted on drop, the wiping left to the array. Written down with
    /// the array's UUID, so `clean` undoes the mount and nothing else.
    pub fn existing(
        dev: &Path,
        fs: &str,
        uuid: Option<String>,
        opts: Option<&str>,
    ) -> Result<Mounted> {
        let dir = private_dir(fs)?;
        let entry = crate::ledger::Entry::of(&ScratchMount {
            dir: dir.clone(),
            dev: dev.to_path_buf(),
            fs: fs.to_string(),
            uuid,
        });
        crate::ledger::add(entry.clone());
        let m = dir.clone();
        let hook = crate::interrupt::register_hook(Box::new(move || {
            let _ = Command::new("umount").arg("-l").arg(&m).status();
            let _ = std::fs::remove_dir(&m);
        }));
        let mut me = Mounted {
            dir,
            dev: dev.to_path_buf(),
            hook,
            mounted: false,
            entry,
            wipes: false,
        };
        let mut mount = Command::new("mount");
        if let Some(o) = opts {
            mount.args(["-o", o]);
        }
        run(mount.arg(dev).arg(&me.dir)).context("mounting the array's file system")?;
        me.mounted = true;
        Ok(me)
    }

    /// mkfs, then mount with `opts` in a private directory.
    pub fn make(dev: &Path, spec: &FsSpec, opts: Option<&str>) -> Result<Mounted> {
        let mkfs = spec
            .mkfs()
            .ok_or_else(|| anyhow!("mkfs.{} is not installed", spec.fs))?;
        // A directory of our own that nobody else can have planted or enter: a fresh random
        // name made with mkdir (which never follows a link) and mode 0700.
        let dir = private_dir(&spec.fs)?;
        // The file system's name: given to mkfs where it takes one, read back where it does
        // not, and written down either way, so `clean` tells this file system from any other.
        let (uuid_args, stamped) = stamp(&spec.fs);
        let entry = crate::ledger::Entry::of(&ScratchMount {
            dir: dir.clone(),
            dev: dev.to_path_buf(),
            fs: spec.fs.clone(),
            uuid: stamped.clone(),
        });
        // Written down before mkfs: from then on the device holds our signature, and a killed
        // run's is named by the next command and wiped by `iogauge clean`.
        crate::ledger::add(entry.clone());
        // The guard wipes it on every way out, a second Ctrl-C included.
        let (d, m) = (dev.to_path_buf(), dir.clone());
        let hook = crate::interrupt::register_hook(Box::new(move || {
            let _ = Command::new("umount").arg("-l").arg(&m).status();
            // A lazily unmounted file system keeps the device busy for a moment, and wipefs
            // refuses a busy device unless forced: this is the file system iogauge just made
            // on a device it holds locked, so forcing is right here (and only here).
            let _ = run(Command::new("wipefs").args(["-a", "-q", "-f"]).arg(&d));
            let _ = std::fs::remove_dir(&m);
        }));
        let mut me = Mounted {
            dir,
            dev: dev.to_path_buf(),
            hook,
            mounted: false,
            entry,
            wipes: true,
        };
        let quiet = match spec.fs.as_str() {
            "xfs" | "btrfs" | "ext2" | "ext3" | "ext4" => vec!["-q"],
            _ => vec![],
        };
        // mkfs runs in iogauge's own private directory: a word of the user's options that
        // names a file relative to where iogauge was started finds nothing there, and
        // mkfs.btrfs formats every device or file it is handed.
        run(Command::new(&mkfs)
            .current_dir(&me.dir)
            .args(&quiet)
            .args(&uuid_args)
            .args(&spec.mkfs_opts)
            .arg(dev))
        .with_context(|| format!("mkfs.{} {}", spec.fs, spec.mkfs_opts.join(" ")))?;
        if stamped.is_none() {
            // A file system whose mkfs takes no UUID: the one it chose, read now.
            if let Some(uuid) = signatures::blkid(dev).and_then(|f| f.uuid) {
                let learnt = crate::ledger::Entry::of(&ScratchMount {
                    dir: me.dir.clone(),
                    dev: dev.to_path_buf(),
                    fs: spec.fs.clone(),
                    uuid: Some(uuid),
                });
                crate::ledger::add(learnt.clone());
                crate::ledger::remove(&me.entry);
                me.entry = learnt;
            }
        }
        let mut mount = Command::new("mount");
        if let Some(o) = opts {
            mount.args(["-o", o]);
        }
        run(mount.arg(dev).arg(&me.dir)).context("mounting the new file system")?;
        me.mounted = true;
        Ok(me)
    }
}

/// What a file system of `spec`, made on a device of `bytes`, leaves free for a file
/// (statvfs's available bytes, which the test file's fill checks): learnt by making that file
/// system on a sparse image of the same size in a private directory, mounting it read-only
/// and removing it at once. The scratch device is not touched, so a dry run can say it too.
/// Formulas cannot say it: on 128 MiB, ext4 leaves 105 MiB and btrfs 39 MiB, and the user's
/// mkfs options (a journal size, reserved blocks) change it. Needs root (mount).
pub fn free_once_made(spec: &FsSpec, bytes: u64) -> Result<Room> {
    let mkfs = spec
        .mkfs()
        .ok_or_else(|| anyhow!("mkfs.{} is not installed", spec.fs))?;
    let home = private_dir(&format!("{}-size", spec.fs))?;
    let (image, at) = (home.join("image"), home.join("mnt"));
    let (uuid_args, stamped) = stamp(&spec.fs);
    // Written down before mkfs, like a file system on a device: a run killed here leaves an
    // image mounted in the temporary directory, and `clean` unmounts and removes it.
    let entry = crate::ledger::Entry::of(&ScratchMount {
        dir: at.clone(),
        dev: image.clone(),
        fs: spec.fs.clone(),
        uuid: stamped,
    });
    crate::ledger::add(entry.clone());
    let (m, h) = (at.clone(), home.clone());
    let hook = crate::interrupt::register_hook(Box::new(move || {
        let _ = Command::new("umount").arg("-l").arg(&m).status();
        let _ = std::fs::remove_dir_all(&h);
    }));
    let measured = (|| -> Result<Room> {
        std::fs::create_dir(&at)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&image)?
            .set_len(bytes)?;
        // ext's inode tables and journal left unwritten: only their room matters here, and a
        // large device's would otherwise be written out in full into the temporary directory.
        let lazy: &[&str] = match spec.fs.as_str() {
            "ext2" | "ext3" | "ext4" => &["-E", "lazy_itable_init=1,lazy_journal_init=1"],
            _ => &[],
        };
        // Only its own image, in its own directory (see `make`).
        if let Err(e) = run(Command::new(&mkfs)
            .current_dir(&home)
            .arg("-q")
            .args(lazy)
            .args(&uuid_args)
            .args(&spec.mkfs_opts)
            .arg(&image))
        {
            // The same mkfs with the same options on the same size refuses the device too.
            return Ok(Room::Refused(format!(
                "mkfs.{} {}{e:#}",
                spec.fs,
                spec.mkfs_opts
                    .iter()
                    .map(|o| format!("{o} "))
                    .collect::<String>()
            )));
        }
        run(Command::new("mount")
            .args(["-o", "loop,ro"])
            .arg(&image)
            .arg(&at))
        .context("mounting it")?;
        let free = std::fs::File::open(&at).and_then(|d| iogauge_engine::sys::free_bytes(&d));
        let until = std::time::Instant::now() + UNMOUNT_PATIENCE;
        while let Err(e) = run(Command::new("umount").arg(&at)) {
            if std::time::Instant::now() >= until {
                return Err(e.context(format!("unmounting {}", at.display())));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Ok(Room::Free(free?))
    })();
    let gone = std::fs::remove_dir_all(&home);
    crate::interrupt::unregister_hook(hook);
    if gone.is_ok() {
        crate::ledger::remove(&entry);
    }
    measured.with_context(|| {
        format!(
            "learning what {} leaves free on {} (on an image in {})",
            spec.label(),
            crate::units::iec(bytes),
            home.display()
        )
    })
}

/// The file systems of `fss` that cannot hold the suite's test file of `need` bytes once made
/// on `dev`, each with why: what each leaves free is learnt on an image of the device's size
/// (root only; a dry run as another user says it was not checked). A sweep none of whose file systems can
/// hold it is refused here, before anything is made, dry run or not: on 128 MiB a test file of
/// 127 MiB fits the device, but ext4 leaves 105 MiB of it and btrfs 39 MiB.
pub fn too_small(need: u64, dev: &Path, fss: &[FsSpec]) -> Result<Vec<(String, String)>> {
    // Mount points and mkfs images are made there: a TMPDIR another account may rename in is
    // refused before anything is made.
    crate::target::files::temp_dir()?;
    let Some(holds) = device_bytes(dev) else {
        return Ok(Vec::new());
    };
    if !crate::db::is_root() {
        say!(
            "dry run: whether each file system leaves room for the test file of {} is checked only as root",
            crate::units::iec(need)
        );
        return Ok(Vec::new());
    }
    let mut small = Vec::new();
    let mut room = Vec::new();
    for f in fss.iter().filter(|f| f.mkfs().is_some()) {
        match free_once_made(f, holds) {
            Ok(Room::Refused(why)) => {
                room.push(format!("{} cannot be made ({why})", f.label()));
                small.push((f.label(), why));
            }
            Ok(Room::Free(free)) if free < need => {
                room.push(format!("{} leaves {}", f.label(), crate::units::iec(free)));
                let why = format!(
                    "{} on {} leaves {} free, and the test file needs {}",
                    f.label(),
                    dev.display(),
                    crate::units::iec(free),
                    crate::units::iec(need)
                );
                small.push((f.label(), why));
            }
            Ok(Room::Free(_)) => {}
            // Not a verdict on the setting (the temporary directory may be full): its own
            // fill checks the room again when it runs.
            Err(e) => say!("warning: {e:#}; the room is checked when the setting runs"),
        }
    }
    if !small.is_empty() && small.len() == fss.len() {
        return Err(crate::error::usage(format!(
            "no file system of the sweep can hold the suite's test file of {} on {}: {}; give a smaller --size",
            crate::units::iec(need),
            dev.display(),
            room.join(", ")
        )));
    }
    Ok(small)
}

/// What a file system leaves of a device, or why its mkfs refuses the device.
pub enum Room {
    Free(u64),
    Refused(String),
}

/// The image [`free_once_made`] formats: a file named `image` in a directory iogauge made,
/// removed with it by `clean`.
fn is_size_image(dev: &Path) -> bool {
    dev.file_name().is_some_and(|n| n == "image")
        && dev
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d.to_string_lossy().starts_with("iogauge-scratch-"))
        && std::fs::symlink_metadata(dev).is_ok_and(|m| m.is_file())
}

/// How long an unmount or a wipe may stay busy: an io_uring ring releases its files
/// asynchronously after the run closed it, and a killed run's tool dies a moment after it.
const UNMOUNT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.mounted {
            let until = std::time::Instant::now() + UNMOUNT_PATIENCE;
            while let Err(e) = run(Command::new("umount").arg(&self.dir)) {
                if std::time::Instant::now() >= until {
                    say!(
                        "warning: could not unmount {} ({e:#}); unmount it and wipe {} by hand (umount {0}; wipefs -a {1})",
                        self.dir.display(),
                        self.dev.display()
                    );
                    crate::interrupt::unregister_hook(self.hook);
                    crate::ledger::remove(&self.entry);
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        match self.wipes.then(|| wipe(&self.dev)) {
            Some(Err(e)) => say!("warning: {e:#}"),
            _ => crate::ledger::remove(&self.entry),
        }
        let _ = std::fs::remove_dir(&self.dir);
        crate::interrupt::unregister_hook(self.hook);
    }
}

/// A new directory for a mount point: a random name under the temporary directory, made by
/// mkdir with mode 0700, so a name planted there in advance is never used.
fn private_dir(fs: &str) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let tmp = crate::target::files::temp_dir()?;
    for _ in 0..64 {
        let dir = tmp.join(format!(
            "iogauge-scratch-{}-{fs}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(anyhow!("creating a mount point {}: {e}", dir.display())),
        }
    }
    Err(anyhow!(
        "could not find a free name for a mount point in {}",
        tmp.display()
    ))
}

/// A scratch file system iogauge made on a device and mounted at `dir` (a directory it made),
/// with the UUID iogauge gave it, as the crash ledger names it: `clean` wipes the device only
/// while it still holds that very file system, never one a user made there since.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScratchMount {
    dir: PathBuf,
    dev: PathBuf,
    fs: String,
    #[serde(default)]
    uuid: Option<String>,
}

impl crate::ledger::Resource for ScratchMount {
    const KIND: &'static str = "mount";

    fn describe(&self) -> String {
        format!(
            "{} file system on {} mounted at {}",
            self.fs,
            self.dev.display(),
            self.dir.display()
        )
    }

    fn undo(&self, dry_run: bool) -> (String, bool) {
        undo_mount(
            &self.dir,
            &self.dev,
            &self.fs,
            self.uuid.as_deref(),
            dry_run,
        )
    }
}

/// Undoes a scratch mount a killed run left (`iogauge clean`): unmounts `dir` if a file system
/// of `dev` is mounted exactly there, then wipes `dev` only if it still holds the very file
/// system iogauge made — its type and the UUID iogauge recorded — and removes the directory.
/// A device whose file system has another UUID (a user's, made since) or whose UUID iogauge
/// never learnt is left alone and named. With `dry_run`, says exactly that and does nothing.
fn undo_mount(
    dir: &Path,
    dev: &Path,
    fs: &str,
    uuid: Option<&str>,
    dry_run: bool,
) -> (String, bool) {
    let real_dev = std::fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mounted_here = mounts.lines().any(|l| {
        let mut f = l.split_whitespace();
        let (src, at) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
        // A size check's image is mounted through a loop device the mount table names instead.
        Path::new(at) == dir
            && (is_size_image(dev)
                || std::fs::canonicalize(src).ok().as_deref() == Some(real_dev.as_path()))
    });
    let mut done = Vec::new();
    if mounted_here {
        if dry_run {
            done.push("would be unmounted".to_string());
        } else {
            // The killed run's io_uring rings may still be letting go of their files.
            let until = std::time::Instant::now() + UNMOUNT_PATIENCE;
            while let Err(e) = run(Command::new("umount").arg(dir)) {
                if std::time::Instant::now() >= until {
                    return (
                        format!("could not be unmounted ({e:#}): umount {}", dir.display()),
                        false,
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            done.push("unmounted".to_string());
        }
    }
    let dev_shown = dev.display();
    match (signatures::blkid(dev), uuid) {
        (Some(f), Some(ours))
            if f.what.starts_with(&format!("a '{fs}' signature"))
                && f.uuid.as_deref() == Some(ours) =>
        {
            match dry_run {
                true => done.push(format!("its {fs} signature would be wiped")),
                false => match wipe(dev) {
                    Ok(()) => done.push(format!("its {fs} signature wiped")),
                    Err(e) => return (format!("{e:#}"), false),
                },
            }
        }
        (Some(f), Some(ours)) => done.push(format!(
            "{dev_shown} now holds {}{}, not the file system iogauge made (UUID {ours}): left alone",
            f.what,
            f.uuid.map(|u| format!(" with UUID {u}")).unwrap_or_default()
        )),
        (Some(f), None) => done.push(format!(
            "{dev_shown} holds {}, and the run was killed before iogauge learnt its file system's UUID, so it cannot tell it is its own: left alone (wipe it by hand if it is: wipefs -a {dev_shown})",
            f.what
        )),
        (None, _) => {}
    }
    if !dry_run {
        let _ = std::fs::remove_dir(dir);
        if is_size_image(dev) {
            // The image a size check made: it and its directory go with the mount.
            if let Some(home) = dev.parent() {
                let _ = std::fs::remove_dir_all(home);
            }
        }
    }
    if done.is_empty() {
        done.push("already gone".into());
    }
    (done.join(", "), true)
}

/// The mkfs arguments that give a new file system of type `fs` a UUID iogauge chose, and that
/// UUID; none for a file system whose mkfs takes no UUID (its own is read back after mkfs).
fn stamp(fs: &str) -> (Vec<String>, Option<String>) {
    let uuid = new_uuid();
    match fs {
        "ext2" | "ext3" | "ext4" | "btrfs" => (vec!["-U".into(), uuid.clone()], Some(uuid)),
        "xfs" => (vec!["-m".into(), format!("uuid={uuid}")], Some(uuid)),
        _ => (Vec::new(), None),
    }
}

/// Removes every signature on `dev` — only ever called on a device iogauge checked was blank
/// and then wrote a file system to — and checks that none is left.
pub(super) fn wipe(dev: &Path) -> Result<()> {
    // A tool of a killed run (its mkfs, say) may still hold the device exclusively for a
    // moment: wipefs is refused until it lets go.
    let until = std::time::Instant::now() + UNMOUNT_PATIENCE;
    loop {
        let tried = run(Command::new("wipefs").args(["-a", "-q"]).arg(dev));
        let Some(f) = signatures::blkid(dev) else {
            return Ok(());
        };
        if std::time::Instant::now() >= until {
            let why = match (tried, holders(dev)) {
                (_, h) if !h.is_empty() => format!("{} holds it open", h.join(", ")),
                (Err(e), _) => format!("wipefs {e:#}"),
                (Ok(()), _) => "wipefs left it".to_string(),
            };
            return Err(anyhow!(
                "{} still holds {} ({why}); wipe it by hand: wipefs -a {0}",
                dev.display(),
                f.what
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The processes that have `dev` open, as "name (pid N)": who keeps a wipe from happening.
fn holders(dev: &Path) -> Vec<String> {
    let Ok(dev) = std::fs::canonicalize(dev) else {
        return Vec::new();
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == std::process::id().to_string() {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == dev))
        {
            let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            found.push(format!("{} (pid {pid})", comm.trim()));
        }
    }
    found
}

/// Runs a tool to its end; its failure is one error with its status and last words (mkfs,
/// mount, wipefs here; mdadm and lvm for arrays).
/// The tool dies with iogauge: a killed sweep's mkfs or mdadm does not write on behind `clean`.
pub(super) fn run(cmd: &mut Command) -> Result<()> {
    iogauge_engine::sys::die_with_parent(cmd);
    let out = cmd.output().context("starting the command")?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    // The last words, or the last before a usage text (mkfs.xfs on a small device ends with
    // its usage, after "Filesystem must be larger than 300MB.").
    let said = err
        .split("\nUsage:")
        .next()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or(&err);
    let last = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(anyhow!(
        "failed ({}): {}",
        out.status,
        crate::units::quoted(last, 300)
    ))
}

/// A UUID of iogauge's own (version 4, random): the name a file system or an array is given
/// when it is made, so `clean` can tell it from any other.
pub(super) fn new_uuid() -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        fastrand::u32(..),
        fastrand::u16(..),
        fastrand::u16(..0x1000),
        0x8000 | fastrand::u16(..0x4000),
        fastrand::u64(..1 << 48)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `clean` removes a size check's image with its mount, and nothing else that is named so:
    /// only a regular file called `image` in a directory of iogauge's scratch names.
    #[test]
    fn only_a_size_checks_image_is_taken_for_one() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("iogauge-scratch-1-ext4-size-0000abcd");
        std::fs::create_dir(&home).unwrap();
        std::fs::write(home.join("image"), b"").unwrap();
        std::fs::create_dir(home.join("mnt")).unwrap();
        assert!(is_size_image(&home.join("image")));
        assert!(!is_size_image(&home.join("mnt")));
        let other = t.path().join("mine");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("image"), b"").unwrap();
        assert!(!is_size_image(&other.join("image")));
        let linked = t.path().join("iogauge-scratch-2-ext4-size-0000abce");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(home.join("image"), linked.join("image")).unwrap();
        assert!(!is_size_image(&linked.join("image")));
    }

    #[test]
    fn fs_lists_and_options_parse() {
        let l = FsSpec::parse("ext4,xfs,btrfs").unwrap();
        assert_eq!(
            l.iter().map(|f| f.fs.as_str()).collect::<Vec<_>>(),
            ["ext4", "xfs", "btrfs"]
        );
        let l = FsSpec::parse("ext4:-b 1024").unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].mkfs_opts, ["-b", "1024"]);
        assert_eq!(l[0].label(), "ext4 (-b 1024)");
        assert!(FsSpec::parse("ext4,../x").is_err());
        assert!(FsSpec::parse(",").is_err());
    }
}
