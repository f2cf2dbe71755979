//! The io_uring engine: one ring per worker thread, batched submission, never more IO in flight
//! than the completion queue holds (the SQ is sized to the depth and the CQ to twice that).
//!
//! Setup flags are tried from the fastest combination down, dropping one flag each time the
//! kernel answers EINVAL (as fio's engine does), and what was used is kept in [`UringSetup`] so
//! it can be stored with the run. Registered buffers and files are used when the kernel (and
//! RLIMIT_MEMLOCK) allow, and skipped otherwise.
//!
//! Where io_uring's worker threads do this thread's IO (zram, whose reads cannot be issued
//! without blocking), a wait for one completion first asks the ring, without sleeping, what
//! has completed ([`Polls`]): asleep, the thread is woken by the worker for each completion,
//! and on a fast device those wake-ups are the dearest part of an IO (docs/performance.md).
//! A ring that may look ([`UringOptions::look`]) goes further there: once its probe has seen
//! those workers, it moves to a ring without DEFER_TASKRUN, where a worker posts each
//! completion itself, and a wait looks at the completion queue instead of asking.

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
    /// Where io_uring's workers do the IO, move to a ring that a wait looks at instead of
    /// asking the kernel (`UringEngine::look`). For a run whose every wait is for one completion
    /// (`--complete-batch 1`) and whose threads leave no CPU spare: there it moved more IOs at
    /// less CPU each, and with a CPU spare it cost CPU (docs/performance.md). Not a user's
    /// option: the runner sets it.
    pub look: bool,
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
    /// Waits for one looked at the completion queue: the probe found io_uring workers doing
    /// this thread's IO, and the ring moved to one without DEFER_TASKRUN (`flags` are its).
    pub looked: bool,
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

/// `IORING_ENTER_GETEVENTS`, which the io-uring crate keeps to itself.
const IORING_ENTER_GETEVENTS: u32 = 1;

/// A signal, a busy ring or a kernel short of resources: worth another try, not the run's end.
fn transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
    )
}

/// At most this many asks before a wait for one completion sleeps: about 15 µs of system
/// calls, less than a sleep and the worker's wake-up cost on zram.
const POLLS_MAX: u32 = 32;

/// With no asks left (a device slower than asking), one wait in this many asks once, so a
/// device that becomes fast again is asked again.
const POLLS_RETRY: u32 = 64;

/// Waits for one after which the ring looks for io_uring workers doing its IO, and stops
/// asking if there are none: completions then come from the device's interrupt, and a wait
/// for one seldom sleeps (on the virtual disk here, 0.03 sleeps an IO either way), so asking
/// only costs (0.5–0.8 µs of CPU an IO there).
const POLLS_PROBE: u32 = 256;

/// How long a wait for one completion in a moved ring looks at the completion queue before it
/// sleeps: about what 32 asks take, and less than a sleep and the worker's wake-up on zram.
/// Longer lost: looking 25 µs and 75 µs moved less with two threads (docs/performance.md).
const LOOK_FOR: std::time::Duration = std::time::Duration::from_micros(12);

/// How many times a wait for one completion asks the ring, without sleeping, for what has
/// completed before it sleeps: twice as many after an ask found one (up to [`POLLS_MAX`]), one
/// fewer after none did, so on a device slower than the asks they fall to none within 32
/// waits. Each IO is timed the same way either way: when it is reaped.
#[derive(Debug)]
struct Polls {
    budget: u32,
    waits: u32,
}

impl Polls {
    fn new() -> Polls {
        Polls {
            budget: POLLS_MAX,
            waits: 0,
        }
    }

    /// The asks this wait may make.
    fn budget(&mut self) -> u32 {
        self.waits = self.waits.wrapping_add(1);
        match self.budget {
            0 => u32::from(self.waits.is_multiple_of(POLLS_RETRY)),
            b => b,
        }
    }

    /// Whether this wait is the one after which the ring looks for its io_uring workers.
    fn probe_now(&self) -> bool {
        self.waits == POLLS_PROBE
    }

    /// An ask found a completion.
    fn found(&mut self) {
        self.budget = (self.budget * 2).clamp(1, POLLS_MAX);
    }

    /// The ring moved: how its waits were answered before says nothing of how looks will be.
    fn restart(&mut self) {
        self.budget = POLLS_MAX;
    }

    /// Every ask of a wait found nothing, and it slept.
    fn missed(&mut self) {
        self.budget = self.budget.saturating_sub(1);
    }
}

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
    /// `RWF_*` flags of every write ([`EngineConfig::write_flags`]).
    write_flags: i32,
    slot_busy: Vec<bool>,
    /// Pushed to the SQ and not yet reaped.
    outstanding: usize,
    setup: UringSetup,
    /// Asks before a wait for one sleeps; none with SQPOLL or IOPOLL, whose kernel thread or
    /// waits already poll, nor once no io_uring worker does this thread's IO.
    polls: Option<Polls>,
    /// Waits for one that an ask answered, so they did not sleep.
    answered: u64,
    /// Move to a looking ring once the probe finds workers ([`UringOptions::look`]).
    may_look: bool,
    /// What the ring was built from, to build the one it may move to.
    entries: u32,
    wanted: Vec<Flag>,
    no_register: bool,
    /// The ring moved away from, until the IOs handed to it have completed.
    leaving: Option<Leaving>,
    /// How long a look lasts ([`LOOK_FOR`]; longer in a test that must not depend on the CPU).
    look_for: std::time::Duration,
}

/// A ring that IOs are no longer handed to, and how many of its IOs are still in flight.
struct Leaving {
    ring: IoUring,
    outstanding: usize,
}

/// Hands what is queued to `ring` and waits for `want` completions, ending early on a signal
/// or a busy kernel once something completed (`reaped` says what has so far).
fn wait_on(
    ring: &mut IoUring,
    want: usize,
    reaped: impl Fn(&mut IoUring) -> bool,
) -> io::Result<()> {
    loop {
        match ring.submit_and_wait(want) {
            Ok(_) => return Ok(()),
            // A signal: return what there is so the runner can look at its stop flag, or wait
            // again when nothing completed yet. Short of resources or a full CQ: the same.
            Err(e) if transient(&e) => {
                if reaped(ring) {
                    return Ok(());
                }
            }
            Err(e) => return Err(e),
        }
    }
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
        let (ring, setup) = build_ring(entries, &wanted)?;
        let pool = BufferPool::new(depth as usize, cfg.buf_size, cfg.align, cfg.seed).ok_or_else(
            || io::Error::new(io::ErrorKind::OutOfMemory, "buffer allocation failed"),
        )?;
        let files = crate::checked_files(cfg.files)?
            .iter()
            .map(File::try_clone)
            .collect::<io::Result<Vec<File>>>()?;
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let setup = register(&ring, setup, &pool, &fds, cfg.uring.no_register);
        Ok(UringEngine {
            fixed_file: setup.registered_files,
            fixed_bufs: setup.registered_buffers,
            write_flags: cfg.write_flags,
            ring,
            pool: ManuallyDrop::new(pool),
            _files: files,
            fds,
            slot_busy: vec![false; depth as usize],
            outstanding: 0,
            setup,
            polls: (!cfg.uring.sqpoll && !cfg.uring.hipri).then(Polls::new),
            answered: 0,
            may_look: cfg.uring.look,
            entries,
            wanted,
            no_register: cfg.uring.no_register,
            leaving: None,
            look_for: LOOK_FOR,
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
        // The kernel takes RWF_ATOMIC only on a plain user buffer (generic_atomic_write_valid:
        // ITER_UBUF), so such writes do not use the registered ones.
        let fixed_bufs = self.fixed_bufs && (io.op != Op::Write || self.write_flags == 0);
        let e = match (io.op, fixed_bufs) {
            (Op::Read, true) => with_fd!(|fd| opcode::ReadFixed::new(fd, ptr, io.len, slot as u16)
                .offset(io.offset)
                .ioprio(io.prio)
                .build()),
            (Op::Write, true) => {
                with_fd!(|fd| opcode::WriteFixed::new(fd, ptr, io.len, slot as u16)
                    .offset(io.offset)
                    .ioprio(io.prio)
                    .rw_flags(self.write_flags)
                    .build())
            }
            (Op::Read, false) => with_fd!(|fd| opcode::Read::new(fd, ptr, io.len)
                .offset(io.offset)
                .ioprio(io.prio)
                .build()),
            (Op::Write, false) => {
                with_fd!(|fd| opcode::Write::new(fd, ptr, io.len)
                    .offset(io.offset)
                    .ioprio(io.prio)
                    .rw_flags(self.write_flags)
                    .build())
            }
            (Op::Fsync, _) => with_fd!(|fd| opcode::Fsync::new(fd).build()),
            (Op::Fdatasync, _) => with_fd!(|fd| opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()),
        };
        e.user_data(io.slot as u64)
    }

    /// Before a wait for one sleeps: asks the ring, as often as [`Polls`] allows, what has
    /// completed, handing over what is queued with the first ask. Whether one was found.
    fn ask(&mut self, done: &mut Vec<Done>) -> io::Result<bool> {
        let Some(polls) = &mut self.polls else {
            return Ok(false);
        };
        if polls.probe_now() {
            if !crate::sys::io_uring_workers_serve_this_thread() {
                self.polls = None;
                return Ok(false);
            }
            if self.may_look && !self.setup.looked {
                // Its IOs in flight complete on the ring left behind: this wait is for them.
                self.move_ring()?;
                if let Some(p) = &mut self.polls {
                    p.restart();
                }
                return Ok(false);
            }
        }
        let Some(polls) = &mut self.polls else {
            return Ok(false);
        };
        let asks = polls.budget();
        if self.setup.looked {
            return if asks > 0 { self.look(done) } else { Ok(false) };
        }
        let before = done.len();
        for _ in 0..asks {
            let queued = self.ring.submission().len() as u32;
            // GETEVENTS with none to wait for: the kernel posts the completions it deferred to
            // this thread (DEFER_TASKRUN) and returns without sleeping.
            // SAFETY: no argument is passed; the queued entries name buffers and descriptors
            // that live until they are reaped (see `queue`).
            let asked = unsafe {
                self.ring.submitter().enter::<libc::sigset_t>(
                    queued,
                    0,
                    IORING_ENTER_GETEVENTS,
                    None,
                )
            };
            match asked {
                Ok(_) => {}
                // Busy, short of resources or a signal: the wait that follows deals with it.
                Err(e) if transient(&e) => break,
                Err(e) => return Err(e),
            }
            if self.answered_by(done, before) {
                return Ok(true);
            }
        }
        if let (Some(p), true) = (&mut self.polls, asks > 0) {
            p.missed();
        }
        Ok(false)
    }

    /// Reaps, and whether that answered the wait (something past `before` in `done`), which
    /// an ask or a look then counts as found.
    fn answered_by(&mut self, done: &mut Vec<Done>, before: usize) -> bool {
        self.reap(done);
        if done.len() == before {
            return false;
        }
        if let Some(p) = &mut self.polls {
            p.found();
        }
        self.answered += 1;
        true
    }

    /// A ring that may look, whose IO io_uring's workers do: moves to a ring without DEFER_TASKRUN,
    /// where a worker posts each completion itself (with it, the completion waits until this
    /// thread asks the kernel), so a wait can look for it without a system call. What is in
    /// flight completes on the ring left behind. Nothing changes if the new ring is refused.
    fn move_ring(&mut self) -> io::Result<()> {
        let wanted: Vec<Flag> = self
            .wanted
            .iter()
            .copied()
            .filter(|f| *f != Flag::DeferTaskrun)
            .collect();
        let Ok((ring, mut setup)) = build_ring(self.entries, &wanted) else {
            return Ok(());
        };
        // What is queued goes to the ring it was made for, all of it, or the ring stays: an
        // entry left in its queue would never be handed over, and the drain never end.
        match self.ring.submit() {
            Ok(_) if self.ring.submission().is_empty() => {}
            Ok(_) => return Ok(()),
            Err(e) if transient(&e) => return Ok(()),
            Err(e) => return Err(e),
        }
        for f in &self.setup.refused {
            if !setup.refused.contains(f) {
                setup.refused.push(f);
            }
        }
        setup.looked = true;
        self.setup = register(&ring, setup, &self.pool, &self.fds, self.no_register);
        self.fixed_file = self.setup.registered_files;
        self.fixed_bufs = self.setup.registered_buffers;
        let left = std::mem::replace(&mut self.ring, ring);
        self.leaving = Some(Leaving {
            ring: left,
            outstanding: self.outstanding,
        });
        Ok(())
    }

    /// [`ask`](Self::ask) in a moved ring: hands over what is queued, then looks at the
    /// completion queue for up to [`LOOK_FOR`], where an io_uring worker posts what it
    /// completes. Whether one was found.
    fn look(&mut self, done: &mut Vec<Done>) -> io::Result<bool> {
        let before = done.len();
        if !self.ring.submission().is_empty() {
            match self.ring.submit() {
                Ok(_) => {}
                Err(e) if transient(&e) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        let start = std::time::Instant::now();
        let mut spins = 0u32;
        loop {
            if self.answered_by(done, before) {
                return Ok(true);
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            // The clock every 32 looks (about a microsecond): a look is two loads.
            if spins.is_multiple_of(32) && start.elapsed() >= self.look_for {
                break;
            }
        }
        if let Some(p) = &mut self.polls {
            p.missed();
        }
        Ok(false)
    }

    /// While the ring moved away from still has IOs in flight: they were handed over before
    /// any of the new ring's, so a wait waits for them first (their completions are posted
    /// only when this thread asks that ring). New IOs are handed to the new ring before.
    fn wait_leaving(&mut self, want: usize, done: &mut Vec<Done>) -> io::Result<()> {
        match self.ring.submit() {
            Ok(_) => {}
            Err(e) if transient(&e) => {}
            Err(e) => return Err(e),
        }
        let before = done.len();
        while let Some(left) = &mut self.leaving {
            let got = done.len() - before;
            if got >= want {
                break;
            }
            let need = (want - got).min(left.outstanding);
            wait_on(&mut left.ring, need, |r| !r.completion().is_empty())?;
            self.reap(done);
        }
        Ok(())
    }

    fn reap(&mut self, done: &mut Vec<Done>) {
        let n = reap_ring(&mut self.ring, &mut self.slot_busy, done);
        self.outstanding -= n;
        if let Some(left) = &mut self.leaving {
            let n = reap_ring(&mut left.ring, &mut self.slot_busy, done);
            self.outstanding -= n;
            left.outstanding -= n;
            if left.outstanding == 0 {
                // Closed once: no IO can reach it any more.
                self.leaving = None;
            }
        }
    }
}

/// Registers the pool's buffers and the job's files with `ring` unless told not to, and says
/// which the kernel took in the returned setup.
fn register(
    ring: &IoUring,
    mut setup: UringSetup,
    pool: &BufferPool,
    fds: &[i32],
    no: bool,
) -> UringSetup {
    if no {
        return setup;
    }
    let iovecs = pool.iovecs();
    // SAFETY: the iovecs point into `pool`, which lives as long as the engine's rings: each is
    // drained (in Drop, or before a ring moved away from is closed) before the pool is freed,
    // and the pool is never reallocated.
    setup.registered_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
    // All of the job's files in one table (Linux 5.1); IOs name them by index, and fall back
    // to raw descriptors when the kernel refuses the table.
    setup.registered_files = ring.submitter().register_files(fds).is_ok();
    setup
}

/// Takes `ring`'s completions into `done`, freeing their slots; how many.
fn reap_ring(ring: &mut IoUring, slot_busy: &mut [bool], done: &mut Vec<Done>) -> usize {
    let mut n = 0;
    for cqe in ring.completion() {
        let slot = cqe.user_data() as u32;
        if let Some(busy) = slot_busy.get_mut(slot as usize) {
            *busy = false;
        }
        n += 1;
        done.push(Done {
            slot,
            res: cqe.result(),
        });
    }
    n
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
                Err(e) if transient(&e) => {
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
        let mut want = min.min(self.outstanding);
        let mut before = done.len();
        if want == 1 && self.leaving.is_none() && self.ask(done)? {
            return Ok(());
        }
        if self.leaving.is_some() {
            self.wait_leaving(want, done)?;
            match want.checked_sub(done.len() - before) {
                Some(0) | None => return Ok(()),
                Some(rest) => want = rest,
            }
            before = done.len();
        }
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
            Err(e) if transient(&e) => Ok(()),
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
            // The ring moved away from first: waiting on the other for its IOs would not end.
            let ring = match &mut self.leaving {
                Some(left) => &mut left.ring,
                None => &mut self.ring,
            };
            if let Err(e) = ring.submit_and_wait(1) {
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

#[cfg(test)]
mod tests;
