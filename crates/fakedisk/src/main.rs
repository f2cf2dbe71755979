//! iogauge-fakedisk: a FUSE file system that behaves like a drive with a volatile write cache,
//! the ground truth for `iogauge fsync-check`'s tests.
//!
//! It shows one file, `disk`, as large as its backing file. Writes are acknowledged at once and
//! kept in memory; what reaches the backing file depends on the mode:
//!
//! - honest (default): everything cached is written back and the backing file synced on every
//!   fsync, fdatasync or O_DSYNC write, before the sync returns;
//! - `--lie`: fsync returns at once and nothing is ever written back, like a drive that ignores
//!   cache flushes and then loses power;
//! - `--lie-cache PAGES`: fsync returns at once; the cache is written back only when a write
//!   would overflow its PAGES 4 KiB pages (the newest write always stays cached), like a drive
//!   that ignores flushes but writes back under pressure.
//!
//! Faults for `--verify`'s tests, each on the write that covers a byte offset:
//! `--flip-at OFFSET` stores that byte with its lowest bit flipped (a bad transfer), and
//! `--drop-at OFFSET` acknowledges the first such write and keeps nothing of it (a lost write).
//! `--fail-at OFFSET:ERRNO` fails every write that covers the offset with that error number (a
//! bad sector that never takes a write, or a full disk there): for fio's continue_on_error.
//!
//! `--read-latency MS` answers every read MS milliseconds after it arrives, each on its own
//! timer, so reads in flight together overlap as on a drive with many queues: a device of known
//! latency, for tests of what queue depth buys.
//!
//! `--log-reads FILE` appends "OFFSET LENGTH" for every read it is asked for, as it arrives
//! (unbuffered, so a power cut loses none): the offsets a benchmark really issued.
//!
//! A power cut is SIGKILL to this process (then a lazy unmount of the dead mount); a reboot is
//! mounting it again over the same backing file, which holds exactly what was persisted.
//!
//! Usage: `iogauge-fakedisk BACKING MOUNTPOINT [--size BYTES] [--lie | --lie-cache PAGES]
//! [--flip-at OFFSET] [--drop-at OFFSET] [--fail-at OFFSET:ERRNO] [--read-latency MS]
//! [--log-reads FILE]`
//! (BACKING is created, zero-filled, with --size when missing).
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests

use fuser::{
    FileAttr, FileType, Filesystem, MountOption, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow,
};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const PAGE: usize = 4096;
const ROOT: u64 = 1;
const DISK: u64 = 2;
const NAME: &str = "disk";
const TTL: Duration = Duration::from_secs(1);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Honest,
    /// Never writes back.
    Lie,
    /// Writes back only when this many pages would be exceeded.
    LieCache(usize),
}

struct Disk {
    backing: File,
    size: u64,
    mode: Mode,
    /// Pages written but not persisted, by page index.
    cache: BTreeMap<u64, Box<[u8; PAGE]>>,
    faults: Faults,
    read_latency: Option<std::time::Duration>,
    read_log: Option<File>,
    uid: u32,
    gid: u32,
}

impl Disk {
    fn attr(&self, ino: u64) -> FileAttr {
        let (kind, perm, size, nlink) = if ino == ROOT {
            (FileType::Directory, 0o755, 0, 2)
        } else {
            (FileType::RegularFile, 0o644, self.size, 1)
        };
        FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: PAGE as u32,
            flags: 0,
        }
    }

    /// Writes every cached page to the backing file and syncs it.
    fn persist(&mut self) -> std::io::Result<()> {
        for (&idx, page) in &self.cache {
            self.backing.write_all_at(&page[..], idx * PAGE as u64)?;
        }
        self.backing.sync_data()?;
        self.cache.clear();
        Ok(())
    }

    fn page(&self, idx: u64) -> std::io::Result<Box<[u8; PAGE]>> {
        if let Some(p) = self.cache.get(&idx) {
            return Ok(p.clone());
        }
        let mut p = Box::new([0u8; PAGE]);
        read_full(&self.backing, &mut p[..], idx * PAGE as u64)?;
        Ok(p)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let covers =
            |at: Option<u64>| at.is_some_and(|a| a >= offset && a < offset + data.len() as u64);
        if let Some((_, errno)) = self.faults.fail_at.filter(|(a, _)| covers(Some(*a))) {
            return Err(std::io::Error::from_raw_os_error(errno));
        }
        if covers(self.faults.drop_at) {
            self.faults.drop_at = None;
            return Ok(());
        }
        let mut flipped;
        let data = match self.faults.flip_at {
            Some(a) if covers(Some(a)) => {
                flipped = data.to_vec();
                flipped[(a - offset) as usize] ^= 1;
                &flipped[..]
            }
            _ => data,
        };
        let first = offset / PAGE as u64;
        let last = (offset + data.len() as u64 - 1) / PAGE as u64;
        if let Mode::LieCache(limit) = self.mode {
            let new = (first..=last)
                .filter(|i| !self.cache.contains_key(i))
                .count();
            if self.cache.len() + new > limit {
                self.persist()?;
            }
        }
        for idx in first..=last {
            let mut p = self.page(idx)?;
            let start = (idx * PAGE as u64).max(offset);
            let end = ((idx + 1) * PAGE as u64).min(offset + data.len() as u64);
            let at = (start - idx * PAGE as u64) as usize;
            let from = (start - offset) as usize;
            p[at..at + (end - start) as usize]
                .copy_from_slice(&data[from..from + (end - start) as usize]);
            self.cache.insert(idx, p);
        }
        Ok(())
    }

    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        read_full(&self.backing, &mut out, offset)?;
        let end = offset + len as u64;
        let lo = offset / PAGE as u64;
        let hi = end.div_ceil(PAGE as u64);
        for (&idx, page) in self.cache.range(lo..hi) {
            let start = (idx * PAGE as u64).max(offset);
            let stop = ((idx + 1) * PAGE as u64).min(end);
            let at = (start - idx * PAGE as u64) as usize;
            let to = (start - offset) as usize;
            let n = (stop - start) as usize;
            out[to..to + n].copy_from_slice(&page[at..at + n]);
        }
        Ok(out)
    }

    fn sync(&mut self) -> Result<(), i32> {
        match self.mode {
            Mode::Honest => self
                .persist()
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO)),
            // The lie: the flush is acknowledged and the data stays where a power cut takes it.
            Mode::Lie | Mode::LieCache(_) => Ok(()),
        }
    }
}

fn read_full(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    buf[done..].fill(0);
    Ok(())
}

impl Filesystem for Disk {
    fn init(
        &mut self,
        _req: &Request<'_>,
        config: &mut fuser::KernelConfig,
    ) -> Result<(), libc::c_int> {
        // Asynchronous O_DIRECT (io_uring, libaio) reaches this process as concurrent requests,
        // as on a drive, instead of one at a time. Kernels without it keep the old behaviour.
        // FUSE_ASYNC_DIO (include/uapi/linux/fuse.h, since 7.13); fuser exports it only with
        // an ABI feature this crate does not enable.
        const FUSE_ASYNC_DIO: u64 = 1 << 15;
        let _ = config.add_capabilities(FUSE_ASYNC_DIO);
        Ok(())
    }

    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent == ROOT && name == NAME {
            reply.entry(&TTL, &self.attr(DISK), 0);
        } else {
            reply.error(libc::ENOENT);
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match ino {
            ROOT | DISK => reply.attr(&TTL, &self.attr(ino)),
            _ => reply.error(libc::ENOENT),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        // A disk's size is fixed; times and modes are not kept.
        if size.is_some_and(|s| s != self.size) {
            reply.error(libc::EPERM);
        } else {
            reply.attr(&TTL, &self.attr(ino));
        }
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, flags: i32, reply: ReplyOpen) {
        if ino == DISK {
            // O_DIRECT reaches this process, as it would reach a drive, instead of stopping
            // at the page cache.
            let direct = if flags & libc::O_DIRECT != 0 {
                fuser::consts::FOPEN_DIRECT_IO
            } else {
                0
            };
            reply.opened(0, direct);
        } else {
            reply.error(libc::EISDIR);
        }
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        let offset = offset as u64;
        if let Some(log) = &mut self.read_log {
            // One write per line: whole lines, even when the process is killed.
            let _ = std::io::Write::write_all(log, format!("{offset} {size}\n").as_bytes());
        }
        let len = (size as u64).min(self.size.saturating_sub(offset)) as usize;
        match (self.read_at(offset, len), self.read_latency) {
            // Answered later from a thread of its own, so this loop takes the next request.
            (Ok(data), Some(latency)) => {
                std::thread::spawn(move || {
                    std::thread::sleep(latency);
                    reply.data(&data);
                });
            }
            (Ok(data), None) => reply.data(&data),
            (Err(e), _) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        let offset = offset as u64;
        if offset + data.len() as u64 > self.size {
            return reply.error(libc::ENOSPC);
        }
        if data.is_empty() {
            return reply.written(0);
        }
        match self.write_at(offset, data) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    fn flush(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        _lock_owner: u64,
        reply: ReplyEmpty,
    ) {
        // close(2) is no cache flush on a drive.
        reply.ok();
    }

    fn fsync(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.sync() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsyncdir(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.sync() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        mut reply: ReplyDirectory,
    ) {
        if ino != ROOT {
            return reply.error(libc::ENOTDIR);
        }
        let entries = [
            (ROOT, FileType::Directory, "."),
            (ROOT, FileType::Directory, ".."),
            (DISK, FileType::RegularFile, NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as i64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

struct Args {
    backing: PathBuf,
    mountpoint: PathBuf,
    size: Option<u64>,
    mode: Mode,
    faults: Faults,
    read_latency: Option<std::time::Duration>,
    read_log: Option<PathBuf>,
}

/// Damage done to writes, for the tests of `--verify`.
#[derive(Clone, Copy, Debug, Default)]
struct Faults {
    flip_at: Option<u64>,
    drop_at: Option<u64>,
    fail_at: Option<(u64, i32)>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut pos = Vec::new();
    let (mut size, mut mode) = (None, Mode::Honest);
    let mut faults = Faults::default();
    let mut read_latency = None;
    let mut read_log = None;
    let offset = |v: Option<&String>, flag: &str| -> Result<Option<u64>, String> {
        let v = v.ok_or(format!("{flag} needs a byte offset"))?;
        v.parse()
            .map(Some)
            .map_err(|_| format!("{flag} {v}: not a byte offset"))
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--size" => {
                let v = it.next().ok_or("--size needs a number of bytes")?;
                size = Some(
                    v.parse()
                        .map_err(|_| format!("--size {v}: not a number of bytes"))?,
                );
            }
            "--lie" => mode = Mode::Lie,
            "--lie-cache" => {
                let v = it
                    .next()
                    .ok_or("--lie-cache needs a number of 4 KiB pages")?;
                let n: usize = v
                    .parse()
                    .map_err(|_| format!("--lie-cache {v}: not a number"))?;
                mode = Mode::LieCache(n.max(1));
            }
            "--flip-at" => faults.flip_at = offset(it.next(), "--flip-at")?,
            "--drop-at" => faults.drop_at = offset(it.next(), "--drop-at")?,
            "--fail-at" => {
                let v = it.next().ok_or("--fail-at needs OFFSET:ERRNO")?;
                let (at, errno) = v
                    .split_once(':')
                    .and_then(|(a, e)| Some((a.parse().ok()?, e.parse().ok()?)))
                    .ok_or(format!(
                        "--fail-at {v}: give a byte offset and an error number, e.g. 40960:28"
                    ))?;
                faults.fail_at = Some((at, errno));
            }
            "--log-reads" => {
                read_log = Some(PathBuf::from(it.next().ok_or("--log-reads needs a file")?));
            }
            "--read-latency" => {
                let v = it.next().ok_or("--read-latency needs milliseconds")?;
                let ms: u64 = v
                    .parse()
                    .map_err(|_| format!("--read-latency {v}: not a number of milliseconds"))?;
                read_latency = Some(std::time::Duration::from_millis(ms));
            }
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            _ => pos.push(PathBuf::from(a)),
        }
    }
    let [backing, mountpoint]: [PathBuf; 2] = pos.try_into().map_err(|_| {
        "usage: iogauge-fakedisk BACKING MOUNTPOINT [--size BYTES] [--lie | --lie-cache PAGES]"
    })?;
    Ok(Args {
        backing,
        mountpoint,
        size,
        mode,
        faults,
        read_latency,
        read_log,
    })
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("iogauge-fakedisk: {e}");
            return ExitCode::from(2);
        }
    };
    let backing = match open_backing(&args) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("iogauge-fakedisk: {}: {e}", args.backing.display());
            return ExitCode::FAILURE;
        }
    };
    let size = backing.metadata().map(|m| m.len()).unwrap_or(0);
    let disk = Disk {
        backing,
        size,
        mode: args.mode,
        cache: BTreeMap::new(),
        faults: args.faults,
        read_latency: args.read_latency,
        read_log: match &args.read_log {
            Some(path) => match OpenOptions::new().create(true).append(true).open(path) {
                Ok(f) => Some(f),
                Err(e) => {
                    eprintln!("iogauge-fakedisk: {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            },
            None => None,
        },
        uid: std::fs::metadata("/proc/self").map_or(0, |m| std::os::unix::fs::MetadataExt::uid(&m)),
        gid: std::fs::metadata("/proc/self").map_or(0, |m| std::os::unix::fs::MetadataExt::gid(&m)),
    };
    eprintln!(
        "iogauge-fakedisk: {} on {}/{NAME}, {size} bytes, {:?}",
        args.backing.display(),
        args.mountpoint.display(),
        args.mode
    );
    let opts = [
        MountOption::FSName("iogauge-fakedisk".into()),
        MountOption::RW,
        MountOption::DefaultPermissions,
    ];
    match fuser::mount2(disk, &args.mountpoint, &opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "iogauge-fakedisk: cannot mount on {}: {e}",
                args.mountpoint.display()
            );
            ExitCode::FAILURE
        }
    }
}

fn open_backing(args: &Args) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(args.size.is_some())
        .truncate(false)
        .open(&args.backing)?;
    if let Some(size) = args.size {
        if f.metadata()?.len() != size {
            f.set_len(size)?;
            f.sync_all()?;
        }
    }
    Ok(f)
}
