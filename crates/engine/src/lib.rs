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

mod buffer;
mod null;
mod psync;
pub mod sys;
mod uring;

use std::fs::File;
use std::io;

pub use buffer::{fill_random, Backing, BufferPool};
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

/// One IO handed to an engine. `slot` names the buffer; `buf_off` lets a short read or write be
/// resubmitted for its remainder in the same buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub slot: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub buf_off: u32,
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

/// Everything an engine needs to be built inside its worker thread.
pub struct EngineConfig<'a> {
    pub file: &'a File,
    /// In-flight IOs per thread.
    pub depth: u32,
    /// Size of each slot's buffer in bytes.
    pub buf_size: usize,
    /// Alignment of every buffer (at least the device's logical block size under O_DIRECT).
    pub align: usize,
    /// Seed of the buffers' random content.
    pub seed: u64,
    pub uring: UringOptions,
}
