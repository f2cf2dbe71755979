//! Thin, safe wrappers over the few system calls std does not offer.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// User and system CPU time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTimes {
    pub user: Duration,
    pub sys: Duration,
}

impl CpuTimes {
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            sys: self.sys.saturating_sub(earlier.sys),
        }
    }
}

fn rusage(who: libc::c_int) -> CpuTimes {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a struct rusage into the pointer we pass; zeroed is a valid value.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return CpuTimes::default();
    }
    // SAFETY: initialised by zeroed() and filled by the kernel.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    CpuTimes {
        user: tv(ru.ru_utime),
        sys: tv(ru.ru_stime),
    }
}

/// CPU time of the whole process (all threads).
pub fn process_cpu() -> CpuTimes {
    rusage(libc::RUSAGE_SELF)
}

/// CPU time of the calling thread.
pub fn thread_cpu() -> CpuTimes {
    rusage(libc::RUSAGE_THREAD)
}

/// The wall clock as the kernel stamps a new inode's times (`CLOCK_REALTIME_COARSE`), in
/// nanoseconds since the epoch: a file created after this call has a birth time at or after
/// it, where the fine clock may already be a tick ahead of the stamp.
pub fn coarse_realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one struct timespec through the pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

// From <linux/fs.h>: _IOR(0x12, 114, size_t); libc does not export it.
const BLKGETSIZE64: libc::Ioctl = 0x8008_1272;

/// Size in bytes of a block device (`BLKGETSIZE64`).
pub fn block_device_size(file: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Logical block size of a block device (`BLKSSZGET`).
pub fn block_device_logical_block_size(file: &File) -> io::Result<u32> {
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            libc::BLKSSZGET,
            &mut size as *mut libc::c_int,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size as u32)
}

/// Bytes of a file that hold data, found by walking SEEK_DATA/SEEK_HOLE. Holes and (on most
/// file systems) unwritten extents from fallocate read as zeros without touching the disk.
/// `None` when the file system does not support the walk.
pub fn data_bytes(file: &File, len: u64) -> Option<u64> {
    let fd = file.as_raw_fd();
    let mut pos: i64 = 0;
    let mut total: u64 = 0;
    while (pos as u64) < len {
        // SAFETY: lseek has no memory effects.
        let data = unsafe { libc::lseek(fd, pos, libc::SEEK_DATA) };
        if data < 0 {
            let err = io::Error::last_os_error().raw_os_error();
            return match err {
                Some(libc::ENXIO) => Some(total), // no data past pos
                _ => None,
            };
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        if hole < 0 {
            return None;
        }
        total += (hole.min(len as i64) - data).max(0) as u64;
        pos = hole;
    }
    Some(total)
}

/// Asks the kernel to drop this file's pages from the page cache.
pub fn drop_file_cache(file: &File) -> io::Result<()> {
    // SAFETY: posix_fadvise has no memory effects.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Flushes every file system's dirty data (`sync(2)`), so that dropping the page cache
/// afterwards drops everything and the next repeat starts cold.
pub fn sync_all() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() }
}

/// Ends the process at once with `code` (`_exit(2)`): no atexit handlers or library destructors,
/// which may hang or crash while another thread is inside a library (MPI in a collective), and
/// safe to call from any thread, even while another is exiting.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes a plain int and does not return.
    unsafe { libc::_exit(code) }
}

/// Makes a child that `cmd` will start die (SIGKILL) when the thread that starts it ends,
/// the process included: a tool iogauge runs to its end (mkfs, mdadm, wipefs) must not go on
/// writing a device after iogauge was killed, behind the back of the `clean` that follows.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls are made (prctl, getppid,
    // _exit), touching no memory of the parent's.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the request was made: then nobody kills us.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Whether process `pid` (any process, not only a child) ends within `limit`: waited for on a
/// pidfd, so it returns the moment the process exits, and at once if it is already gone. A
/// killed server stays alive for a while as the kernel tears it down (its shared memory
/// freed), longer on a busy machine: what failed in that window must not call it alive.
pub fn ends_within(pid: u32, limit: std::time::Duration) -> bool {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    }
    let fd = fd as libc::c_int;
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = limit.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one pollfd, valid for the call; the descriptor is ours and closed once.
    let ended = unsafe { libc::poll(&mut p, 1, ms) } > 0;
    // SAFETY: as above.
    unsafe { libc::close(fd) };
    ended
}

/// Free bytes available to an unprivileged user on the file system holding `file`.
pub fn free_bytes(file: &File) -> io::Result<u64> {
    space(file).map(|s| s.avail * s.block)
}

/// A file system's size and use as statvfs counts them, in blocks of `block` bytes
/// (`f_frsize`): what `df` shows, and what a fill level is a share of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    pub block: u64,
    /// `f_blocks`: the whole file system's data blocks.
    pub blocks: u64,
    /// `f_bfree`: free blocks, root's reserve included.
    pub free: u64,
    /// `f_bavail`: free blocks an unprivileged user may take.
    pub avail: u64,
}

/// The size and use of the file system holding `file`; an error for one that reports no size
/// (ramfs and the like: nothing is known about its free space).
pub fn space(file: &File) -> io::Result<Space> {
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: fstatvfs writes one struct statvfs through the pointer.
    let rc = unsafe { libc::fstatvfs(file.as_raw_fd(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: filled by the kernel.
    let st = unsafe { st.assume_init() };
    if st.f_blocks == 0 {
        return Err(io::Error::other("the file system reports no size"));
    }
    Ok(Space {
        block: st.f_frsize,
        blocks: st.f_blocks,
        free: st.f_bfree,
        avail: st.f_bavail,
    })
}

/// The file offset and length alignment O_DIRECT needs on `path`, as the file system itself
/// tells through statx(STATX_DIOALIGN) (Linux 6.1+); `None` where it does not (older kernels,
/// file systems without direct IO, block devices before 6.11).
pub fn dio_offset_align(path: &std::path::Path) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: statx reads the NUL-terminated path and writes one struct statx through the
    // pointer, which is valid for that size.
    let rc = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            0,
            libc::STATX_DIOALIGN,
            st.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: filled (or zeroed) by the kernel.
    let st = unsafe { st.assume_init() };
    (st.stx_mask & libc::STATX_DIOALIGN != 0 && st.stx_dio_offset_align > 0)
        .then_some(st.stx_dio_offset_align)
}

/// `pwritev2(2)` of one buffer with `RWF_*` flags; the bytes written.
pub fn pwritev2(file: &File, buf: &[u8], offset: u64, flags: i32) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the kernel only reads the one iovec, whose buffer is valid for its length and
    // outlives the call.
    let n = unsafe { libc::pwritev2(file.as_raw_fd(), &iov, 1, offset as libc::off_t, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// The sizes a write with `RWF_ATOMIC` may have on an open file or block device, smallest and
/// largest in bytes, as statx(STATX_WRITE_ATOMIC) tells (Linux 6.11+); `None` where it offers
/// none (most file systems and devices, and kernels before 6.11).
pub fn atomic_write_units(file: &File) -> Option<(u32, u32)> {
    let mut st = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: with AT_EMPTY_PATH and an empty NUL-terminated path statx looks at the
    // descriptor, and writes one struct statx through the pointer, valid for that size.
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_WRITE_ATOMIC,
            st.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: filled (or zeroed) by the kernel.
    let st = unsafe { st.assume_init() };
    (st.stx_mask & libc::STATX_WRITE_ATOMIC != 0 && st.stx_atomic_write_unit_max > 0)
        .then_some((st.stx_atomic_write_unit_min, st.stx_atomic_write_unit_max))
}

/// The atomic write sizes a new file in `dir` would offer, asked of an unnamed file
/// (O_TMPFILE) that vanishes when closed: nothing appears in the directory, even in a dry
/// run. `None` when the file system offers none or cannot make such a file.
pub fn atomic_write_units_in(dir: &std::path::Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir)
        .ok()?;
    atomic_write_units(&f)
}

/// Sets the calling thread's timer slack (Linux's default is 50 µs: a sleep may end that much
/// late). A rate-controlled worker sleeps until each IO's planned start, and 50 µs of slack
/// would show as latency that no device caused.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// The process's effective user id (0: root).
pub fn euid() -> u32 {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() }
}

/// Sets the calling thread's IO priority (Linux's ioprio value: class << 13 | level), which
/// every IO it issues without a priority of its own carries (`ionice` for one thread).
pub fn set_thread_ioprio(value: u16) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_set takes integers only; who = 0 is the calling thread.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            libc::c_long::from(value),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Keeps the calling thread on `cpus` (sched_setaffinity, as `taskset` and fio's cpus_allowed).
pub fn set_thread_cpus(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain bits; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c as usize >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `c` is below CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; the set is ours and its size is given.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on (sched_getaffinity).
pub fn thread_cpus() -> io::Result<Vec<u32>> {
    // SAFETY: as above; the kernel fills the set it is given.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the set is ours and its size is given.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as u32)
        // SAFETY: every `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect())
}

/// Linux's memory policies (set_mempolicy(2)): MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND,
/// MPOL_INTERLEAVE, MPOL_LOCAL.
pub const MPOL_DEFAULT: i32 = 0;
pub const MPOL_PREFERRED: i32 = 1;
pub const MPOL_BIND: i32 = 2;
pub const MPOL_INTERLEAVE: i32 = 3;
pub const MPOL_LOCAL: i32 = 4;

/// Nodes a mask here can name.
const MAX_NODES: usize = 1024;

/// Sets the calling thread's memory policy: where the pages it touches first come from
/// (fio's numa_mem_policy, `numactl --membind`/`--interleave`).
pub fn set_thread_mempolicy(mode: i32, nodes: &[u32]) -> io::Result<()> {
    let mut mask = [0 as libc::c_ulong; MAX_NODES / 64];
    for &n in nodes {
        let n = n as usize;
        if n >= MAX_NODES {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        mask[n / 64] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), MAX_NODES as libc::c_ulong + 1)
    };
    // SAFETY: the mask is ours and `maxnode` bits long (the kernel reads maxnode - 1 bits);
    // null with 0 for the modes that take no nodes.
    let r = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            libc::c_long::from(mode),
            ptr,
            maxnode,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The calling thread's memory policy: its mode and nodes (get_mempolicy(2)).
pub fn thread_mempolicy() -> io::Result<(i32, Vec<u32>)> {
    let mut mode: libc::c_int = 0;
    let mut mask = [0 as libc::c_ulong; MAX_NODES / 64];
    // SAFETY: both out-parameters are ours, the mask `MAX_NODES` bits long; no address given.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            MAX_NODES as libc::c_ulong,
            std::ptr::null::<libc::c_void>(),
            0 as libc::c_ulong,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let nodes = (0..MAX_NODES as u32)
        .filter(|&n| mask[n as usize / 64] & (1 << (n % 64)) != 0)
        .collect();
    Ok((mode, nodes))
}

/// Sets or clears O_NONBLOCK on an open file (for a pipe: shared by every descriptor of it).
pub fn set_nonblocking(fd: &impl AsRawFd, on: bool) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor the caller holds open; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let flags = match on {
        true => flags | libc::O_NONBLOCK,
        false => flags & !libc::O_NONBLOCK,
    };
    // SAFETY: as above.
    match unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Whether the file system holding `file` is mounted read-only (statvfs's ST_RDONLY).
pub fn read_only(file: &File) -> io::Result<bool> {
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: fstatvfs writes one struct statvfs through the pointer.
    let rc = unsafe { libc::fstatvfs(file.as_raw_fd(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: filled by the kernel.
    let st = unsafe { st.assume_init() };
    Ok(st.f_flag & libc::ST_RDONLY != 0)
}

/// The page size (fio's `$pagesize`).
pub fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the running system; no memory is touched.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(n).unwrap_or(4096)
}

/// Online CPUs (fio's `$ncpus`).
/// Whether io_uring's worker threads do this thread's IO: the kernel starts them, as threads of
/// this process named `iou-wrk-<tid>` after the thread they serve, only for IO it could not
/// issue without blocking (a zram read). Reads /proc once; not for a hot loop.
pub fn io_uring_workers_serve_this_thread() -> bool {
    // SAFETY: gettid has no arguments and cannot fail.
    let name = format!("iou-wrk-{}", unsafe { libc::gettid() });
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| {
        tasks.flatten().any(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
    })
}

pub fn online_cpus() -> u64 {
    // SAFETY: as above.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u64::try_from(n).unwrap_or(1).max(1)
}

/// Whether this process may create a file in the directory `dir` (write and search permission,
/// for its effective ids): `Ok` when it may; EACCES when permissions forbid it, EROFS when the
/// file system is mounted read-only. Asked of the kernel (faccessat with AT_EACCESS), so ACLs,
/// capabilities and root's rights count as they will for the create.
pub fn may_create_in(dir: &File) -> io::Result<()> {
    // SAFETY: the path is a static NUL-terminated string; faccessat only reads it.
    let rc = unsafe {
        libc::faccessat(
            dir.as_raw_fd(),
            c".".as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// One name inside a directory, as a C string: a name with a `/` or a NUL, `.` or `..` would
/// reach outside the directory the handle holds, so it is refused.
fn entry_name(name: &std::ffi::OsStr) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a single name in a directory",
        ));
    }
    std::ffi::CString::new(b)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"))
}

/// Opens `name` in the directory `dir` holds (`openat(2)`), never through a symbolic link:
/// O_NOFOLLOW and O_CLOEXEC are added to `flags`; `mode` counts with O_CREAT. The name is one
/// entry of that directory. For a directory another account owns: a name it replaced by a link
/// fails with ELOOP instead of reaching the link's target.
pub fn open_at(
    dir: &File,
    name: &std::ffi::OsStr,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<File> {
    use std::os::fd::FromRawFd;
    let c = entry_name(name)?;
    // SAFETY: openat reads the NUL-terminated name; the directory descriptor is held open by
    // `dir` for the call.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor, and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Opens the directory `path` (`open(2)` with O_DIRECTORY and O_NOFOLLOW): a handle through
/// which later names are looked up, whatever happens to `path` afterwards.
pub fn open_dir(path: &std::path::Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Creates the directory `name` in the directory `dir` holds (`mkdirat(2)`); fails with
/// EEXIST when anything, a link included, is already there.
pub fn mkdir_at(dir: &File, name: &std::ffi::OsStr, mode: u32) -> io::Result<()> {
    let c = entry_name(name)?;
    // SAFETY: mkdirat reads the NUL-terminated name; the descriptor is held open by `dir`.
    match unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Removes the entry `name` (not a directory) from the directory `dir` holds (`unlinkat(2)`):
/// a link is removed itself, never what it points to.
pub fn unlink_at(dir: &File, name: &std::ffi::OsStr) -> io::Result<()> {
    let c = entry_name(name)?;
    // SAFETY: unlinkat reads the NUL-terminated name; the descriptor is held open by `dir`.
    match unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Total physical memory in bytes.
pub fn total_memory() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if pages <= 0 || page <= 0 {
        return 0;
    }
    pages as u64 * page as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The kernel keeps a thread where it was put, and says so: the first online CPU alone,
    /// then node 0's memory bound and interleaved; another thread is left as it was.
    #[test]
    fn a_thread_is_placed_where_asked_and_the_kernel_says_so() {
        std::thread::spawn(|| {
            let all = thread_cpus().unwrap();
            set_thread_cpus(&all[..1]).unwrap();
            assert_eq!(thread_cpus().unwrap(), all[..1]);
            for mode in [MPOL_BIND, MPOL_INTERLEAVE] {
                set_thread_mempolicy(mode, &[0]).unwrap();
                assert_eq!(thread_mempolicy().unwrap(), (mode, vec![0]));
            }
            set_thread_mempolicy(MPOL_LOCAL, &[]).unwrap();
            assert_eq!(thread_mempolicy().unwrap().0, MPOL_LOCAL);
            // A node the machine does not have is refused by the kernel.
            assert!(set_thread_mempolicy(MPOL_BIND, &[1000]).is_err());
        })
        .join()
        .unwrap();
        assert_eq!(thread_mempolicy().unwrap().0, MPOL_DEFAULT);
    }

    /// A tool started through `die_with_parent` is killed when the thread that started it
    /// ends (as it is when iogauge is killed), and one started without it lives on.
    #[test]
    fn a_tool_dies_with_the_thread_that_started_it() {
        let start = |guarded: bool| {
            std::thread::spawn(move || {
                let mut cmd = std::process::Command::new("sleep");
                cmd.arg("300");
                if guarded {
                    die_with_parent(&mut cmd);
                }
                cmd.spawn().unwrap()
            })
            .join()
            .unwrap()
        };
        let mut guarded = start(true);
        let mut free = start(false);
        // A deadline, not a measure: the kill comes at once, the sleep would last 300 s.
        let until = std::time::Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = guarded.try_wait().unwrap() {
                break s;
            }
            assert!(
                std::time::Instant::now() < until,
                "the guarded tool outlived its thread"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(
            free.try_wait().unwrap().is_none(),
            "the unguarded tool died too"
        );
        free.kill().unwrap();
        free.wait().unwrap();
    }

    // Regression (issue 10, item 7): this failed now and then on a busy machine. It spun for
    // 50 ms of wall time, which a descheduled thread may spend without 20 ms of CPU, and held
    // the process's tick-sampled user time against the thread's exact one. It now works until
    // the thread has used 20 ms of CPU, however long that takes, and compares totals (user +
    // sys), which the kernel keeps exact for both.
    #[test]
    fn cpu_time_grows_with_work() {
        let total = |t: CpuTimes| t.user + t.sys;
        let (thread0, process0) = (thread_cpu(), process_cpu());
        let mut x = 0u64;
        let mut used = Duration::ZERO;
        while used < Duration::from_millis(20) {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            used = total(thread_cpu().since(thread0));
        }
        std::hint::black_box(x);
        let process = total(process_cpu().since(process0));
        // The process's total holds this thread's work (a millisecond of slack for the
        // kernel's split of runtime into user and system time).
        assert!(
            process + Duration::from_millis(1) >= used,
            "{process:?} < {used:?}"
        );
    }

    #[test]
    fn a_name_in_a_held_directory_is_never_reached_through_a_link() {
        let dir = std::env::temp_dir().join(format!("iogauge-sys-at-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("target"), "x").unwrap();
        let _ = std::fs::remove_file(dir.join("link"));
        std::os::unix::fs::symlink(dir.join("target"), dir.join("link")).unwrap();
        let d = open_dir(&dir).unwrap();
        let name = std::ffi::OsStr::new;
        let e = open_at(&d, name("link"), libc::O_RDONLY, 0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        // Anything but one name of the directory is refused before the kernel sees it.
        for bad in ["", ".", "..", "a/b", "../target"] {
            let e = open_at(&d, name(bad), libc::O_RDONLY, 0).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
        }
        // An exclusive create over a link fails; the link goes by unlink_at, not its target.
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        assert!(open_at(&d, name("link"), flags, 0o600).is_err());
        unlink_at(&d, name("link")).unwrap();
        assert_eq!(std::fs::read(dir.join("target")).unwrap(), b"x");
        open_at(&d, name("link"), flags, 0o600).unwrap();
        mkdir_at(&d, name("sub"), 0o700).unwrap();
        assert!(mkdir_at(&d, name("sub"), 0o700).is_err());
        assert!(open_dir(&dir.join("target")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn data_bytes_sees_holes() {
        let dir = std::env::temp_dir().join(format!("iogauge-sys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sparse");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![1u8; 1 << 20]).unwrap();
        f.set_len(64 << 20).unwrap(); // 63 MiB hole after 1 MiB of data
        f.sync_all().unwrap();
        let f = File::open(&path).unwrap();
        // The temporary directory is on ext4, xfs, btrfs or tmpfs here, which all walk
        // SEEK_DATA/SEEK_HOLE: a `None` would be the walk failing, not a file system without it.
        let data = data_bytes(&f, 64 << 20).expect("SEEK_DATA/SEEK_HOLE walked");
        assert!((1 << 20..8 << 20).contains(&data), "data bytes {data}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_process_that_ends_is_seen_to_end_and_one_that_runs_is_not() {
        let mut c = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(!ends_within(c.id(), std::time::Duration::from_millis(50)));
        c.kill().unwrap();
        assert!(ends_within(c.id(), std::time::Duration::from_secs(10)));
        c.wait().unwrap();
        // Reaped: no such process any more.
        assert!(ends_within(c.id(), std::time::Duration::from_millis(1)));
    }
}
