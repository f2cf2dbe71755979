//! The io_uring engine: one ring per worker thread, batched submission, never more IO in flight
//! than the completion queue holds (the SQ is sized to the depth and the CQ to twice that).
//!
//! Setup flags are tried from the fastest combination down, dropping one flag each time the
//! kernel answers EINVAL (as fio's engine does), and what was used is kept in [`UringSetup`] so
//! it can be stored with the run. Registered buffers and files are used when the kernel (and
//! RLIMIT_MEMLOCK) allow, and skipped otherwise.

use crate::{BufferPool, Caps, Done, Engine, EngineConfig, Io, Op};
use io_uring::{opcode, squeue, types, IoUring};
use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;

/// What the user asked of the ring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UringOptions {
    /// A kernel thread polls the submission queue (`IORING_SETUP_SQPOLL`): no syscall per
    /// submission, one more busy CPU.
    pub sqpoll: bool,
    /// Busy-poll for completions (`IORING_SETUP_IOPOLL`, fio's `--hipri`); O_DIRECT only and
    /// only on devices with poll queues.
    pub hipri: bool,
    /// Skip registered buffers and files (to measure what they bring).
    pub no_register: bool,
}

/// What the ring really used, recorded with the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UringSetup {
    pub flags: Vec<&'static str>,
    /// Flags asked for but refused by this kernel.
    pub refused: Vec<&'static str>,
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub registered_buffers: bool,
    pub registered_files: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flag {
    SingleIssuer,
    DeferTaskrun,
    CoopTaskrun,
    SqPoll,
    IoPoll,
}

impl Flag {
    fn name(self) -> &'static str {
        match self {
            Flag::SingleIssuer => "SINGLE_ISSUER",
            Flag::DeferTaskrun => "DEFER_TASKRUN",
            Flag::CoopTaskrun => "COOP_TASKRUN",
            Flag::SqPoll => "SQPOLL",
            Flag::IoPoll => "IOPOLL",
        }
    }
}

/// Builds a ring with as many of `wanted` as the kernel accepts. DEFER_TASKRUN goes first
/// because it needs SINGLE_ISSUER; SQPOLL and IOPOLL go last because the user asked for them.
fn build_ring(entries: u32, wanted: &[Flag]) -> io::Result<(IoUring, UringSetup)> {
    let mut flags: Vec<Flag> = wanted.to_vec();
    let mut refused = Vec::new();
    loop {
        let mut b = IoUring::builder();
        b.setup_cqsize(entries * 2);
        for f in &flags {
            match f {
                Flag::SingleIssuer => b.setup_single_issuer(),
                Flag::DeferTaskrun => b.setup_defer_taskrun(),
                Flag::CoopTaskrun => b.setup_coop_taskrun(),
                Flag::SqPoll => b.setup_sqpoll(1000),
                Flag::IoPoll => b.setup_iopoll(),
            };
        }
        match b.build(entries) {
            Ok(ring) => {
                let setup = UringSetup {
                    flags: flags.iter().map(|f| f.name()).collect(),
                    refused: refused.iter().map(|f: &Flag| f.name()).collect(),
                    sq_entries: ring.params().sq_entries(),
                    cq_entries: ring.params().cq_entries(),
                    ..UringSetup::default()
                };
                return Ok((ring, setup));
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !flags.is_empty() => {
                // Drop the most optional flag that is still set, in the order fio falls back.
                let order = [
                    Flag::DeferTaskrun,
                    Flag::CoopTaskrun,
                    Flag::SingleIssuer,
                    Flag::SqPoll,
                    Flag::IoPoll,
                ];
                let drop = order.iter().find(|f| flags.contains(f)).copied();
                match drop {
                    Some(f) => {
                        flags.retain(|x| *x != f);
                        refused.push(f);
                    }
                    None => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Attempts to hand a full submission queue to the kernel before giving up.
const QUEUE_TRIES: u32 = 100_000;

pub struct UringEngine {
    ring: IoUring,
    // Dropped by hand in `Drop`, only once no IO can still reach it.
    pool: ManuallyDrop<BufferPool>,
    // Keep the descriptors open while IOs that name them are in flight; `fds` are their
    // numbers, in the order IOs name them (and registered in, when `fixed_file`).
    _files: Vec<File>,
    fds: Vec<i32>,
    fixed_file: bool,
    fixed_bufs: bool,
    slot_busy: Vec<bool>,
    /// Pushed to the SQ and not yet reaped.
    outstanding: usize,
    setup: UringSetup,
}

impl UringEngine {
    pub fn new(cfg: &EngineConfig) -> io::Result<UringEngine> {
        let depth = cfg.depth.max(1);
        let entries = depth.next_power_of_two();
        let mut wanted = vec![Flag::SingleIssuer, Flag::CoopTaskrun];
        if cfg.uring.sqpoll {
            wanted.push(Flag::SqPoll);
        } else {
            // DEFER_TASKRUN cannot go with SQPOLL.
            wanted.insert(1, Flag::DeferTaskrun);
        }
        if cfg.uring.hipri {
            wanted.push(Flag::IoPoll);
        }
        let (ring, mut setup) = build_ring(entries, &wanted)?;
        let pool = BufferPool::new(depth as usize, cfg.buf_size, cfg.align, cfg.seed).ok_or_else(
            || io::Error::new(io::ErrorKind::OutOfMemory, "buffer allocation failed"),
        )?;
        let files = crate::checked_files(cfg.files)?
            .iter()
            .map(File::try_clone)
            .collect::<io::Result<Vec<File>>>()?;
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        if !cfg.uring.no_register {
            let iovecs = pool.iovecs();
            // SAFETY: the iovecs point into `pool`, which lives as long as the ring: the ring
            // is drained in Drop before the pool is freed, and the pool is never reallocated.
            setup.registered_buffers =
                unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
            // All of the job's files in one table (Linux 5.1); IOs name them by index, and
            // fall back to raw descriptors when the kernel refuses the table.
            setup.registered_files = ring.submitter().register_files(&fds).is_ok();
        }
        Ok(UringEngine {
            fixed_file: setup.registered_files,
            fixed_bufs: setup.registered_buffers,
            ring,
            pool: ManuallyDrop::new(pool),
            _files: files,
            fds,
            slot_busy: vec![false; depth as usize],
            outstanding: 0,
            setup,
        })
    }

    pub fn setup(&self) -> &UringSetup {
        &self.setup
    }

    fn entry(&self, io: &Io) -> squeue::Entry {
        let slot = io.slot as usize;
        let ptr = self.pool.slot_ptr(slot, io.buf_off as usize);
        // The runner names only files it opened; an index past them is a bug, and -1 makes the
        // kernel fail that IO with EBADF rather than touch another descriptor.
        let fd = self.fds.get(usize::from(io.file)).copied().unwrap_or(-1);
        let raw = types::Fd(fd);
        let fixed = types::Fixed(if fd < 0 { u32::MAX } else { u32::from(io.file) });
        macro_rules! with_fd {
            ($build:expr) => {
                if self.fixed_file {
                    $build(fixed)
                } else {
                    $build(raw)
                }
            };
        }
        let e = match (io.op, self.fixed_bufs) {
            (Op::Read, true) => with_fd!(|fd| opcode::ReadFixed::new(fd, ptr, io.len, slot as u16)
                .offset(io.offset)
                .build()),
            (Op::Write, true) => {
                with_fd!(|fd| opcode::WriteFixed::new(fd, ptr, io.len, slot as u16)
                    .offset(io.offset)
                    .build())
            }
            (Op::Read, false) => {
                with_fd!(|fd| opcode::Read::new(fd, ptr, io.len).offset(io.offset).build())
            }
            (Op::Write, false) => {
                with_fd!(|fd| opcode::Write::new(fd, ptr, io.len)
                    .offset(io.offset)
                    .build())
            }
            (Op::Fsync, _) => with_fd!(|fd| opcode::Fsync::new(fd).build()),
            (Op::Fdatasync, _) => with_fd!(|fd| opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()),
        };
        e.user_data(io.slot as u64)
    }

    fn reap(&mut self, done: &mut Vec<Done>) {
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as u32;
            if let Some(busy) = self.slot_busy.get_mut(slot as usize) {
                *busy = false;
            }
            self.outstanding -= 1;
            done.push(Done {
                slot,
                res: cqe.result(),
            });
        }
    }
}

impl Engine for UringEngine {
    fn caps(&self) -> Caps {
        Caps {
            async_depth: true,
            does_io: true,
            sync_ops: true,
        }
    }

    fn buffer_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        match self.slot_busy.get(slot as usize) {
            Some(false) => Some(self.pool.slot_mut(slot as usize)),
            _ => None,
        }
    }

    fn buffer(&self, slot: u32) -> Option<&[u8]> {
        match self.slot_busy.get(slot as usize) {
            Some(false) => Some(self.pool.slot(slot as usize)),
            _ => None,
        }
    }

    fn queue(&mut self, io: Io) -> io::Result<()> {
        let entry = self.entry(&io);
        // The runner never queues more than the SQ holds, so a full SQ is already unusual;
        // bounded, so a kernel that keeps refusing ends the run instead of spinning forever.
        for _ in 0..QUEUE_TRIES {
            // SAFETY: the entry's buffer is slot `io.slot` of `self.pool` and its descriptor is
            // one of `self._files` (or none, which the kernel refuses); both live until the IO
            // is reaped (Drop drains the ring first), and the slot is marked busy below so no
            // Rust reference to it is handed out meanwhile.
            let pushed = unsafe { self.ring.submission().push(&entry) };
            if pushed.is_ok() {
                self.slot_busy[io.slot as usize] = true;
                self.outstanding += 1;
                return Ok(());
            }
            // A full SQ: hand what is there to the kernel and try again. Busy or short of
            // resources is worth another try after the completions are reaped by the caller;
            // anything else (the ring is gone, a bad descriptor) is the run's end, not a loop.
            match self.ring.submit() {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                    ) =>
                {
                    std::thread::yield_now();
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "the io_uring submission queue stayed full",
        ))
    }

    #[inline]
    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<Done>) -> io::Result<()> {
        let want = min.min(self.outstanding);
        let before = done.len();
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => break,
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR) => {
                        // A signal: return what there is so the runner can look at its stop
                        // flag, or wait again when nothing completed yet.
                        self.reap(done);
                        if done.len() > before {
                            return Ok(());
                        }
                    }
                    // The kernel is short of resources or the CQ is full: reap, then retry.
                    Some(libc::EAGAIN | libc::EBUSY) => {
                        self.reap(done);
                        if done.len() - before >= want {
                            return Ok(());
                        }
                    }
                    _ => return Err(e),
                },
            }
        }
        self.reap(done);
        Ok(())
    }

    #[inline]
    fn submit(&mut self) -> io::Result<()> {
        match self.ring.submit() {
            Ok(_) => Ok(()),
            // Busy or short of resources: what is queued goes with the next submit_and_reap.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn backing(&self) -> crate::Backing {
        self.pool.backing()
    }

    fn in_flight(&self) -> usize {
        self.outstanding
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        let mut scratch = Vec::with_capacity(self.slot_busy.len());
        let mut drained = true;
        while self.outstanding > 0 {
            scratch.clear();
            if let Err(e) = self.ring.submit_and_wait(1) {
                if e.raw_os_error() != Some(libc::EINTR) {
                    drained = false;
                    break;
                }
            }
            self.reap(&mut scratch);
        }
        if drained {
            // SAFETY: no IO is in flight, so the kernel no longer touches the pool.
            unsafe { ManuallyDrop::drop(&mut self.pool) }
        }
        // Otherwise the pool is leaked on purpose: the kernel may still write into it.
    }
}
