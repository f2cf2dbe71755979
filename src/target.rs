//! The target of a run: what it is, whether iogauge may write to it, and the test file iogauge
//! creates, fills with incompressible data and removes on every exit path.
//!
//! Rules ("One DVD per second" and "100K+ IOPS on semi-commodity hardware" lost data and days to less): a missing path is created and filled
//! (never fallocated or left sparse: a hole reads as zeros without touching the disk); a
//! directory gets a test file of iogauge's own; an existing file or a block device is read as
//! it is and written only with --allow-overwrite. Whatever the flags, iogauge never writes to
//! a block device that is in use (mounted, swap, held by md/dm/LVM, claimed exclusively) or
//! holds a signature (`signatures`), nor to a file backing a loop device, and never touches
//! /proc, /sys or anything under /dev but a block device. A file iogauge created is removed on
//! every exit path unless it was replaced meanwhile; when that fails, the user is told.

mod abilities;
mod create;
pub mod files;
pub mod fill;
pub mod gate;
pub mod signatures;

use crate::error::usage;
use crate::interrupt;
use crate::units;
pub use abilities::{check_atomic, check_poll_queues};
use anyhow::{Context, Result};
use create::to_create;
use iogauge_engine::{sys, BufferPool};
use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Default size of a created test file.
pub const DEFAULT_CREATED_SIZE: u64 = 1 << 30;
const FILL_CHUNK: usize = 4 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    BlockDevice,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::BlockDevice => "block_device",
        }
    }
}

/// Checks devices iogauge is to format (`--scratch`: a file system on one, an array of several;
/// `what` names one of them) before anything is made: each a block device, named once, that
/// nothing uses — the rule every target follows — and that carries no signature at all,
/// since what is made there overwrites whatever it holds and iogauge never writes over a
/// signature it did not write.
pub fn scratch(devices: &[PathBuf], what: &str) -> Result<()> {
    let mut seen = Vec::new();
    for d in devices {
        let md = std::fs::metadata(d).map_err(|e| {
            usage(format!(
                "--scratch {}: {e}; give a block device (see lsblk)",
                d.display()
            ))
        })?;
        if !md.file_type().is_block_device() {
            return Err(usage(format!(
                "--scratch {} is not a block device; give an empty disk or partition (see lsblk)",
                d.display()
            )));
        }
        if seen.contains(&md.rdev()) {
            return Err(usage(format!(
                "--scratch names {} twice; give each device once",
                d.display()
            )));
        }
        seen.push(md.rdev());
        if let Some(why) = device_in_use(md.rdev()) {
            return Err(usage(format!(
                "--scratch {} is {why}; {what} must be a device nothing uses",
                d.display()
            )));
        }
        let file = File::open(d).with_context(|| format!("opening {}", d.display()))?;
        let len = sys::block_device_size(&file).unwrap_or(0);
        if let Some(f) = signatures::probe(&file, len)?.or_else(|| signatures::blkid(d)) {
            return Err(usage(format!(
                "--scratch {} holds {}; {what} must carry no signature at all (iogauge never writes over one it did not write). Use another device, or wipe it yourself (wipefs -a) if its contents are not needed",
                d.display(),
                f.what
            )));
        }
    }
    Ok(())
}

/// What the user asked for, before anything is touched.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub path: Option<&'a Path>,
    /// `--size`: the range used of an existing target, the size of a created file.
    pub size: Option<u64>,
    /// Size of a created file when `size` is not given.
    pub created_size: u64,
    /// Start of the range.
    pub offset: u64,
    pub keep: bool,
    pub allow_overwrite: bool,
    pub writes: bool,
    pub seed: u64,
    /// Print the fill's progress (false under --json only changes nothing: it goes to stderr).
    pub quiet: bool,
    /// `--verify`: the fill stamps every 4 KiB sector as generation 0 of this run.
    pub verify: Option<iogauge_verify::RunKey>,
    /// Test files to create (fio's `nrfiles`), each of `size`; more than one only in a
    /// directory, since iogauge names its own files.
    pub files: u32,
    /// What the names of created test files carry beside the PID: under MPI, host and rank,
    /// so ranks on one shared file system never pick one name.
    pub name_tag: Option<&'a str>,
}

/// A target ready for IO. A file iogauge created is removed when this is dropped, unless kept.
pub struct Target {
    pub path: PathBuf,
    pub kind: Kind,
    pub created: bool,
    /// Start and length of the range the IO uses.
    pub offset: u64,
    pub range_bytes: u64,
    /// Size of the whole file or device.
    pub total_bytes: u64,
    /// The block device at the top of its stack, once the system has been looked at.
    pub device: Option<String>,
    /// Every block device of its stack, top first (whose counters each result reads).
    pub devices: Vec<String>,
    pub logical_block: u32,
    /// Bytes of the range that hold data (SEEK_DATA), when the file system tells.
    pub data_bytes: Option<u64>,
    keep: bool,
    /// Whether the run may write here: granted once, by `resolve` after every check (consent,
    /// mounts, signatures, loop backing) or by `create`. [`Target::open`] is the only way to a
    /// writable descriptor and asks this, so no path that writes (fill, preconditioning, cells,
    /// verify passes, sweeps, database runs) can forget the checks.
    may_write: bool,
    /// The file or device as opened when it was looked at. Workers open *this* inode again
    /// (through /proc/self/fd), never the path: a path swapped for a symlink or another file
    /// during the run cannot redirect a write. Held for the whole run, it also keeps a block
    /// device's page cache: the kernel drops it when the last opener closes the device, so
    /// without it every cell of a buffered run (and `probe cache`'s warm pass) would start cold.
    handle: File,
    /// Device and inode of a file target, to notice it was deleted or replaced during the run.
    identity: Option<(u64, u64)>,
    /// Its entry in the crash ledger, for a file iogauge created.
    ledger: Option<crate::ledger::Entry>,
    /// A block device iogauge writes to is claimed exclusively (O_EXCL) once, for the whole
    /// run: nothing can mount or assemble it meanwhile, and the workers' own descriptors need
    /// no claim of their own, so a cell never trips over the claim of the cell before it (an
    /// io_uring ring lets go of its file asynchronously).
    claim: Option<File>,
    /// The other files of a job that spreads its IO over several (fio's `nrfiles`), each a
    /// test file like this one, of the same size, removed when it is dropped.
    pub more: Vec<Target>,
}

impl Drop for Target {
    fn drop(&mut self) {
        if self.kind == Kind::File {
            self.settle_file();
        }
        if self.created {
            interrupt::unregister_created(&self.path);
        }
        if let Some(e) = &self.ledger {
            crate::ledger::remove(e);
        }
    }
}

impl Target {
    /// The bytes the IO can touch: the range of every file.
    pub fn all_bytes(&self) -> u64 {
        self.range_bytes.saturating_mul(u64::from(self.files()))
    }

    /// How many files the IO is spread over: 1 but for fio's `nrfiles`.
    pub fn files(&self) -> u32 {
        1 + self.more.len() as u32
    }

    /// Opens every file of the target for a worker, this one first (an IO names a file by its
    /// place here), with [`Target::open`]'s checks on each.
    pub fn open_all(&self, writes: bool, direct: bool, odsync: bool) -> Result<Vec<File>> {
        std::iter::once(self)
            .chain(&self.more)
            .map(|t| t.open(writes, direct, odsync))
            .collect()
    }

    /// Opens the target for a worker with the workload's flags. Reads-only workloads open it
    /// read-only, so they cannot change a byte whatever happens. Writes to a block device need
    /// the run's claim (see `claim`), taken when the target was resolved.
    pub fn open(&self, writes: bool, direct: bool, odsync: bool) -> Result<File> {
        let mut flags = 0;
        if direct {
            flags |= libc::O_DIRECT;
        }
        if odsync {
            flags |= libc::O_DSYNC;
        }
        if writes && !self.may_write {
            return Err(usage(format!(
                "{} exists and was not given for writing; add --allow-overwrite to destroy its contents, or give a new path or a directory",
                self.path.display()
            )));
        }
        if writes && self.kind == Kind::BlockDevice && self.claim.is_none() {
            return Err(anyhow::anyhow!(
                "{} was not claimed for writing (a bug in iogauge)",
                self.path.display()
            ));
        }
        if self.kind == Kind::File {
            if let Ok(md) = std::fs::metadata(&self.path) {
                if self.identity.is_some_and(|id| id != (md.dev(), md.ino())) {
                    return Err(anyhow::anyhow!(
                        "{} was replaced by another file or a link during the run; iogauge stopped rather than follow it (the results so far are from the original file)",
                        self.path.display()
                    ));
                }
            }
        }
        use std::os::fd::AsRawFd;
        OpenOptions::new()
            .read(true)
            .write(writes)
            .custom_flags(flags)
            .open(format!("/proc/self/fd/{}", self.handle.as_raw_fd()))
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EBUSY) if self.kind == Kind::BlockDevice => in_use(&self.path, CLAIMED),
                _ => open_error(&self.path, e, direct),
            })
    }

    /// Removes a created file unless kept, and tells the user what became of a file target
    /// that someone else deleted or replaced during the run. Never fails: this runs on every
    /// exit path, including after the file system itself failed.
    fn settle_file(&mut self) {
        let path = self.path.display();
        match std::fs::symlink_metadata(&self.path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Linux keeps an unlinked inode alive while it is open, so the IO went on to
                // the same blocks: the numbers stand.
                say!(
                    "warning: {path} was deleted by someone else during the run; the IO went on to the deleted file until the end, so the results stand"
                );
            }
            Ok(md) if self.identity.is_some_and(|id| id != (md.dev(), md.ino())) => {
                say!(
                    "warning: {path} was replaced by another file during the run; the results are from the original file{}",
                    if self.created { ", and the new file was left alone" } else { "" }
                );
            }
            _ if self.created && !self.keep => {
                if let Err(e) = std::fs::remove_file(&self.path) {
                    if e.kind() != io::ErrorKind::NotFound {
                        say!(
                            "warning: could not remove the test file {path}: {e}; remove it by hand"
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// A target looked at but not yet written: an existing file or device ready for IO, or a test
/// file still to be created. Everything that can refuse a run is checked by then, so the plan's
/// cells can be held against the range and logical block before the fill writes a byte.
pub enum Resolved<'a> {
    Ready(Target),
    Create {
        req: Request<'a>,
        path: PathBuf,
        /// The other files to create, for a request of several.
        more: Vec<PathBuf>,
        /// Of each file.
        size: u64,
        logical_block: u32,
    },
}

impl Resolved<'_> {
    pub fn range_bytes(&self) -> u64 {
        match self {
            Resolved::Ready(t) => t.range_bytes,
            Resolved::Create { req, size, .. } => size - req.offset,
        }
    }

    /// Files the IO is spread over, each `range_bytes` long.
    pub fn files(&self) -> u32 {
        match self {
            Resolved::Ready(t) => t.files(),
            Resolved::Create { more, .. } => 1 + more.len() as u32,
        }
    }

    pub fn logical_block(&self) -> u32 {
        match self {
            Resolved::Ready(t) => t.logical_block,
            Resolved::Create { logical_block, .. } => *logical_block,
        }
    }

    /// The target ready for IO: a test file is created, checked to take O_DIRECT when `direct`
    /// (before the fill, so a file system that refuses it costs no time), and filled.
    pub fn realize(self, direct: bool) -> Result<Target> {
        match self {
            Resolved::Ready(t) => Ok(t),
            Resolved::Create {
                req,
                path,
                more,
                size,
                logical_block,
            } => {
                let mut first = create::create(&req, path, size, logical_block, direct)?;
                for p in more {
                    match create::create(&req, p, size, logical_block, direct) {
                        Ok(t) => first.more.push(t),
                        Err(e) => {
                            // A file that fails (or a stop during its fill) removes those made
                            // before it, --keep or not, as a failed single fill does.
                            first.keep = false;
                            for t in &mut first.more {
                                t.keep = false;
                            }
                            return Err(e);
                        }
                    }
                }
                Ok(first)
            }
        }
    }
}

/// Whether `path` names something that exists and is not a directory: a file or device whose
/// contents a writing cell would destroy (a directory gets a test file of iogauge's own).
pub fn holds_data(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_dir())
}

/// The size of block device `dev` in bytes, read without writing (`None` when it cannot be
/// opened for reading or is not a block device).
pub fn device_bytes(dev: &Path) -> Option<u64> {
    let f = std::fs::File::open(dev).ok()?;
    iogauge_engine::sys::block_device_size(&f).ok()
}

/// Whether `path` is a block device (following links, as opening it would).
pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// The size of an existing file or block device, looked at read only (`probe cache`'s range,
/// fio's `size=N%`, a fio job's working set).
pub fn existing_size(path: &Path) -> Option<u64> {
    let md = std::fs::metadata(path).ok()?;
    if md.file_type().is_block_device() {
        let f = File::open(path).ok()?;
        return iogauge_engine::sys::block_device_size(&f).ok();
    }
    md.is_file().then_some(md.len())
}

/// Resolves, checks and if needed creates and fills the target, without O_DIRECT's check.
pub fn prepare(req: &Request) -> Result<Target> {
    resolve(req)?.realize(false)
}

/// Looks at the target and checks everything that can refuse it, writing nothing.
pub fn resolve<'a>(req: &Request<'a>) -> Result<Resolved<'a>> {
    let path = match req.path {
        Some(p) => p.to_path_buf(),
        None => return to_create(req, fresh_name(Path::new("."), req.name_tag)),
    };
    gate::target(&path)?;
    if req.files > 1 {
        // Several files are iogauge's own, named by iogauge, in a directory: never a user's
        // file or device, whatever the flags.
        return match std::fs::metadata(&path) {
            Ok(md) if md.is_dir() => to_create(req, fresh_name(&path, req.name_tag)),
            Ok(_) => Err(usage(format!(
                "{} is not a directory, and {} files are iogauge's own test files; give the directory to create them in",
                path.display(),
                req.files
            ))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(usage(format!(
                "directory {} does not exist; create it first or give another one for the {} test files",
                path.display(),
                req.files
            ))),
            Err(e) => Err(open_error(&path, e, false)),
        };
    }
    match std::fs::metadata(&path) {
        Ok(md) if md.is_dir() => to_create(req, fresh_name(&path, req.name_tag)),
        Ok(md) if md.file_type().is_block_device() => {
            existing_device(req, path, &md).map(Resolved::Ready)
        }
        Ok(md) if md.is_file() => existing_file(req, path, &md).map(Resolved::Ready),
        Ok(_) => Err(usage(format!(
            "{} is neither a file, a directory nor a block device; give one of those",
            path.display()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => to_create(req, path),
        Err(e) => Err(open_error(&path, e, false)),
    }
}

/// A name for a test file in `dir` that nothing holds yet — not a file, not a link: a name
/// iogauge makes up is never one someone else chose, whatever is planted in a shared directory.
/// (`create` opens it with O_EXCL|O_NOFOLLOW, so a name taken between now and then fails.)
/// Several files are this name with `.1`, `.2` … appended (see `to_create`).
fn fresh_name(dir: &Path, tag: Option<&str>) -> PathBuf {
    let pid = match tag {
        Some(tag) => format!("{tag}.{}", std::process::id()),
        None => std::process::id().to_string(),
    };
    std::iter::once(dir.join(format!("iogauge-test.{pid}")))
        .chain(std::iter::repeat_with(|| {
            dir.join(format!("iogauge-test.{pid}.{:08x}", fastrand::u32(..)))
        }))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .expect("an endless supply of names")
}

fn existing_file(req: &Request, path: PathBuf, md: &std::fs::Metadata) -> Result<Target> {
    // What no flag allows comes first, so the user is not sent to add one in vain.
    if req.writes {
        if let Some(dev) = gate::loop_backed_by(md) {
            return Err(usage(format!(
                "{} is the backing file of {dev}, so writing to it would write under whatever uses {dev}; iogauge never does that, whatever the flags (detach it first: losetup -d {dev})",
                path.display()
            )));
        }
    }
    if req.writes && !req.allow_overwrite {
        return Err(usage(format!(
            "{} exists and this workload writes to it; add --allow-overwrite to destroy its contents, or give a new path or a directory",
            path.display()
        )));
    }
    let len = md.len();
    let range = range_of(req, len, &path)?;
    let file = File::open(&path).map_err(|e| open_error(&path, e, false))?;
    if req.writes && sys::read_only(&file).unwrap_or(false) {
        return Err(open_error(
            &path,
            io::Error::from_raw_os_error(libc::EROFS),
            false,
        ));
    }
    Ok(Target {
        // What the file system says O_DIRECT needs on this file, else its device's block.
        logical_block: sys::dio_offset_align(&path)
            .or_else(|| iogauge_sysinfo::logical_block_size_for(&path))
            .unwrap_or(512),
        // SEEK_DATA counts from the start of the file: only then does it describe the range.
        data_bytes: (req.offset == 0)
            .then(|| sys::data_bytes(&file, range))
            .flatten(),
        path,
        kind: Kind::File,
        created: false,
        offset: req.offset,
        range_bytes: range,
        total_bytes: len,
        keep: true,
        identity: Some((md.dev(), md.ino())),
        ledger: None,
        may_write: req.writes,
        handle: file,
        claim: None,
        device: None,
        devices: Vec::new(),
        more: Vec::new(),
    })
}

/// A block device is read as it is. Before a write workload, and whatever the flags, it must
/// be unused and hold no signature; only then does --allow-overwrite count.
fn existing_device(req: &Request, path: PathBuf, md: &std::fs::Metadata) -> Result<Target> {
    let file = File::open(&path).map_err(|e| open_error(&path, e, false))?;
    let len =
        sys::block_device_size(&file).with_context(|| format!("size of {}", path.display()))?;
    if req.writes {
        if let Some(reason) = device_in_use(md.rdev()) {
            return Err(in_use(&path, &reason));
        }
        let found = signatures::probe(&file, len)
            .with_context(|| {
                format!(
                    "reading the start of {} to check it holds no data",
                    path.display()
                )
            })?
            .or_else(|| signatures::blkid(&path));
        if let Some(found) = found {
            let at = found
                .offset
                .map(|o| format!(" (its signature is at byte {o})"))
                .unwrap_or_default();
            return Err(usage(format!(
                "{p} holds {what}{at}; iogauge never writes over one, whatever the flags. If you really mean to destroy it, wipe the signature deliberately first (wipefs -a {p}) and run again",
                p = path.display(),
                what = found.what
            )));
        }
        if !req.allow_overwrite {
            return Err(usage(format!(
                "{} is a block device and this workload writes to it; add --allow-overwrite to destroy its contents",
                path.display()
            )));
        }
    }
    let range = range_of(req, len, &path)?;
    // The run's claim: the kernel's own answer that nothing else holds the device, kept until
    // the run ends.
    let claim = match req.writes {
        true => Some(claim(&path)?),
        false => None,
    };
    Ok(Target {
        logical_block: sys::block_device_logical_block_size(&file).unwrap_or(512),
        may_write: claim.is_some(),
        handle: file,
        data_bytes: None,
        path,
        kind: Kind::BlockDevice,
        created: false,
        offset: req.offset,
        range_bytes: range,
        total_bytes: len,
        keep: true,
        identity: None,
        ledger: None,
        claim,
        device: None,
        devices: Vec::new(),
        more: Vec::new(),
    })
}

/// Claims a block device exclusively: the kernel's own answer that nothing else holds it
/// (mounted, swap, RAID, LVM, another benchmark). Only this descriptor claims the device: the
/// workers' own descriptors are plain opens, so an io_uring ring that lets go of its file
/// asynchronously after a cell or at exit never holds a claim that the next cell or the next
/// run would trip over.
fn claim(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => in_use(path, CLAIMED),
            _ => open_error(path, e, false),
        })
}

/// What an exclusive open failing with EBUSY means.
const CLAIMED: &str =
    "in use (claimed by the kernel or another program: mounted, swap, part of a RAID, LVM or dm device, or another benchmark)";

fn in_use(path: &Path, reason: &str) -> anyhow::Error {
    usage(format!(
        "{} is {reason}; iogauge never writes to a device in use, whatever the flags",
        path.display()
    ))
}

/// The range of an existing target of `len` bytes: from --offset, --size long or to the end.
fn range_of(req: &Request, len: u64, path: &Path) -> Result<u64> {
    if req.offset >= len {
        return Err(usage(format!(
            "--offset {} is at or past the end of {} ({})",
            units::iec(req.offset),
            path.display(),
            units::iec(len)
        )));
    }
    let room = len - req.offset;
    match req.size {
        Some(s) if s > room => Err(usage(format!(
            "--size {} is larger than {} ({}{}); give at most --size {}",
            units::iec(s),
            path.display(),
            units::iec(len),
            if req.offset > 0 {
                format!(", {} after --offset", units::iec(room))
            } else {
                String::new()
            },
            units::iec(room)
        ))),
        Some(s) => Ok(s),
        None => Ok(room),
    }
}

/// A directory this user may not create `what` in: who is refused, where, and what to do.
pub fn not_writable(dir: &Path, what: &str, todo: &str) -> anyhow::Error {
    let uid = std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid());
    let owner = std::fs::metadata(dir).map_or(u32::MAX, |m| m.uid());
    usage(format!(
        "cannot create {what} in {}: permission denied (uid {uid} may not write there; it belongs to uid {owner}); {todo}",
        dir.display()
    ))
}

fn open_error(path: &Path, e: io::Error, direct: bool) -> anyhow::Error {
    match (e.kind(), e.raw_os_error()) {
        (io::ErrorKind::PermissionDenied, _) => usage(format!(
            "permission denied for {}; choose a target you may use or run with the needed rights",
            path.display()
        )),
        (_, Some(libc::EINVAL)) if direct => usage(format!(
            "the file system of {} does not support O_DIRECT (ramfs, or tmpfs before Linux 6.6); use --buffered or a target on a disk",
            path.display()
        )),
        (_, Some(libc::EROFS)) => usage(format!(
            "{} is on a read-only file system; choose a writable target or a read workload",
            path.display()
        )),
        (_, Some(libc::ENOTDIR)) | (io::ErrorKind::NotFound, _) => usage(format!(
            "{} cannot be reached (a directory on its path is missing); check the path",
            path.display()
        )),
        _ => anyhow::anyhow!("{}: {e}", path.display()),
    }
}

/// Why a block device is in use, if it is: mounted (itself or a partition), swap, held by
/// another device (dm, md, LVM), a device of a mounted btrfs — or anything of that kind
/// anywhere the write would reach, down and up its stack (a loop device over a mounted one or
/// over the image file behind it, a partition of a disk another loop device maps). The
/// target's rule, and a scratch device's; the words read after "is".
pub fn device_in_use(rdev: u64) -> Option<String> {
    iogauge_sysinfo::device_in_use(libc::major(rdev), libc::minor(rdev))
}
