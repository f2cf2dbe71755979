//! iogauge's IO engines and the few system calls the rest of iogauge needs.
//!
//! This is the only crate in the workspace with `unsafe` code. Everything unsafe hides behind
//! [`BufferPool`] (aligned memory the kernel reads and writes), the io_uring engine, and the small
//! wrappers in [`sys`]; each unsafe block says why it is sound.
//!
//! An engine is a small table of hooks, as in fio's `ioengines.h`: the runner queues IOs into
//! numbered *slots* (one buffer each), submits them, and reaps completions. The runner is
//! generic over [`Engine`], so each engine is monomorphised into its own hot loop: no dynamic
//! dispatch, allocation or locking per IO.
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests

mod buffer;
mod null;
mod psync;
pub mod sys;
mod uring;

use std::fs::File;
use std::io;

pub use buffer::{fill_compressible, fill_random, Backing, BufferPool};
pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use uring::{UringEngine, UringOptions, UringSetup};

/// What one IO does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// `fsync(2)`: data and metadata.
    Fsync,
    /// `fdatasync(2)`: data, and metadata only where needed to read the data back.
    Fdatasync,
}

/// One IO handed to an engine. `slot` names the buffer; `file` the descriptor, an index into
/// [`EngineConfig::files`] (0 for a one-file job); `buf_off` lets a short read or write be
/// resubmitted for its remainder in the same buffer. `prio` is the IO's own priority (Linux's
/// ioprio value: class << 13 | level), or 0 for the thread's; only io_uring carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub slot: u32,
    pub file: u16,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub buf_off: u32,
    pub prio: u16,
}

/// A completed IO: `res` is the byte count (or 0 for a sync), or a negative errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub slot: u32,
    pub res: i32,
}

/// What an engine can do, so the runner and later engines (mmap, libaio, verification) can be
/// added without changing the runner's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// More than one IO in flight per thread.
    pub async_depth: bool,
    /// The engine really touches the target (false for `null`).
    pub does_io: bool,
    /// Syncs (fsync/fdatasync) are supported as IOs.
    pub sync_ops: bool,
}

/// The interface every engine implements. The runner never queues more IOs than the depth the
/// engine was built for, so `queue` cannot overflow.
pub trait Engine {
    fn caps(&self) -> Caps;

    /// The buffer of a slot that is not in flight, to fill with write data. `None` when the
    /// slot is in flight (the kernel may be using it) or out of range.
    fn buffer_mut(&mut self, slot: u32) -> Option<&mut [u8]>;

    /// The buffer of a slot that is not in flight, to check read data.
    fn buffer(&self, slot: u32) -> Option<&[u8]>;

    /// Queue one IO. It is not started before [`Engine::submit_and_reap`]. An error means the
    /// kernel refused to take queued IO at all; the run stops with it.
    fn queue(&mut self, io: Io) -> io::Result<()>;

    /// Start everything queued and wait until at least `min` IOs have completed (0: do not
    /// wait). Completions are appended to `done`, whose capacity the caller reserved.
    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<Done>) -> io::Result<()>;

    /// Start everything queued without waiting or reaping. Engines that only do IO inside
    /// `submit_and_reap` (psync, null) have nothing to start early.
    fn submit(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// IOs queued or in flight.
    fn in_flight(&self) -> usize;

    /// What backs the IO buffers (huge pages or not), as the kernel reports it.
    fn backing(&self) -> Backing {
        Backing::Pages
    }
}

/// Which engine to build; the runner turns this into a concrete type once, outside the hot loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    IoUring,
    Psync,
    Null,
}

/// Submitting every 2 IOs matched or beat fio's IOPS on a virtio disk at QD32, where one burst
/// per wake-up lost 14–24% (docs/performance.md), at 0.64× fio's CPU per IO.
pub const DEFAULT_SUBMIT_BATCH: u32 = 2;

impl EngineKind {
    pub const ALL: [EngineKind; 3] = [EngineKind::IoUring, EngineKind::Psync, EngineKind::Null];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
            EngineKind::Null => "null",
        }
    }
}

/// The files of an [`EngineConfig`], checked: at least one, and no more than an [`Io`]'s
/// `file` index can name.
fn checked_files(files: &[File]) -> io::Result<&[File]> {
    match files.len() {
        0 => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an engine needs at least one file",
        )),
        n if n > usize::from(u16::MAX) + 1 => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "more files than an IO can name (65536)",
        )),
        _ => Ok(files),
    }
}

/// Everything an engine needs to be built inside its worker thread.
pub struct EngineConfig<'a> {
    /// The job's files (fio's `nrfiles`), at least one; an [`Io`] names one by its index.
    /// More than `u16::MAX` is refused by the engines.
    pub files: &'a [File],
    /// In-flight IOs per thread.
    pub depth: u32,
    /// Size of each slot's buffer in bytes.
    pub buf_size: usize,
    /// Alignment of every buffer (at least the device's logical block size under O_DIRECT).
    pub align: usize,
    /// Seed of the buffers' random content.
    pub seed: u64,
    pub uring: UringOptions,
    /// `RWF_*` flags every write carries (`RWF_ATOMIC`: fio's `atomic=1`, a write the device
    /// or file system stores whole or not at all); 0 for none. Reads carry none.
    pub write_flags: i32,
}

/// A write stored whole or not at all, never torn by a power cut or a crash (Linux 6.11+).
pub const RWF_ATOMIC: i32 = libc::RWF_ATOMIC;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// Two files of 8 KiB of zeros, opened read-write, and where they are.
    fn two_files(tag: &str) -> (std::path::PathBuf, Vec<File>) {
        let dir = std::env::temp_dir().join(format!("iogauge-engine-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = (0..2)
            .map(|i| {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(dir.join(format!("f{i}")))
                    .unwrap();
                f.set_len(8192).unwrap();
                f
            })
            .collect();
        (dir, files)
    }

    /// Writes 4 KiB of 0xAB at offset 4096 of file 1, then reads it back through file 1 and
    /// file 0; returns (what file 0 holds there, what file 1 holds there, what the engine read
    /// from file 1).
    fn write_to_file_1<E: Engine>(mut eng: E, files: &[File]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut done = Vec::with_capacity(4);
        eng.buffer_mut(0).unwrap()[..4096].fill(0xAB);
        let io = Io {
            slot: 0,
            file: 1,
            op: Op::Write,
            offset: 4096,
            len: 4096,
            buf_off: 0,
            prio: 0,
        };
        eng.queue(io).unwrap();
        eng.submit_and_reap(1, &mut done).unwrap();
        assert_eq!(done, vec![Done { slot: 0, res: 4096 }]);
        eng.buffer_mut(0).unwrap()[..4096].fill(0);
        done.clear();
        eng.queue(Io { op: Op::Read, ..io }).unwrap();
        eng.submit_and_reap(1, &mut done).unwrap();
        assert_eq!(done, vec![Done { slot: 0, res: 4096 }]);
        let read = eng.buffer(0).unwrap()[..4096].to_vec();
        let on_disk = |f: &File| {
            let mut b = vec![0u8; 4096];
            f.read_exact_at(&mut b, 4096).unwrap();
            b
        };
        (on_disk(&files[0]), on_disk(&files[1]), read)
    }

    fn config(files: &[File]) -> EngineConfig<'_> {
        EngineConfig {
            files,
            depth: 2,
            buf_size: 4096,
            align: 4096,
            seed: 7,
            uring: UringOptions::default(),
            write_flags: 0,
        }
    }

    /// An IO naming file 1 lands in file 1 and reads back from it; file 0 stays as it was.
    fn only_file_1_written<E: Engine>(eng: E, files: &[File]) {
        let (f0, f1, read) = write_to_file_1(eng, files);
        assert!(f0.iter().all(|b| *b == 0), "file 0 was written");
        assert!(f1.iter().all(|b| *b == 0xAB), "file 1 was not written");
        assert_eq!(read, f1);
    }

    #[test]
    fn psync_writes_to_the_file_an_io_names() {
        let (dir, files) = two_files("psync");
        let eng = PsyncEngine::new(&config(&files)).unwrap();
        only_file_1_written(eng, &files);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn io_uring_writes_to_the_file_an_io_names_registered_or_not() {
        for no_register in [false, true] {
            let (dir, files) = two_files(&format!("uring-{no_register}"));
            let mut cfg = config(&files);
            cfg.uring.no_register = no_register;
            let eng = match UringEngine::new(&cfg) {
                Ok(e) => e,
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                    std::fs::remove_dir_all(dir).unwrap();
                    assert!(
                        std::env::var("CI").is_err(),
                        "io_uring is not available here ({e}); CI must run this test"
                    );
                    eprintln!("SKIPPED: io_uring is not available here ({e})");
                    return;
                }
                Err(e) => panic!("{e}"),
            };
            assert_eq!(eng.setup().registered_files, !no_register);
            only_file_1_written(eng, &files);
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn an_engine_needs_a_file() {
        assert!(PsyncEngine::new(&config(&[])).is_err());
    }
}
