//! The psync engine: `pread(2)`/`pwrite(2)`, one IO in flight per thread, the model of
//! bm-flash's and sysbench's threads. The IO runs inside `submit_and_reap`, so the runner's
//! clock reads around that call time exactly one system call.

use crate::{BufferPool, Caps, Done, Engine, EngineConfig, Io, Op};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

pub struct PsyncEngine {
    files: Vec<File>,
    pool: BufferPool,
    queued: Option<Io>,
    /// `RWF_*` flags of every write ([`EngineConfig::write_flags`]): with any, a write is
    /// `pwritev2(2)`, which takes them; without, `pwrite(2)` as before.
    write_flags: i32,
}

impl PsyncEngine {
    pub fn new(cfg: &EngineConfig) -> io::Result<PsyncEngine> {
        let pool = BufferPool::new(1, cfg.buf_size, cfg.align, cfg.seed).ok_or_else(|| {
            io::Error::new(io::ErrorKind::OutOfMemory, "buffer allocation failed")
        })?;
        let files = crate::checked_files(cfg.files)?
            .iter()
            .map(File::try_clone)
            .collect::<io::Result<Vec<File>>>()?;
        Ok(PsyncEngine {
            files,
            pool,
            queued: None,
            write_flags: cfg.write_flags,
        })
    }
}

impl Engine for PsyncEngine {
    fn caps(&self) -> Caps {
        Caps {
            async_depth: false,
            does_io: true,
            sync_ops: true,
        }
    }

    fn buffer_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        (slot == 0).then(|| self.pool.slot_mut(0))
    }

    fn buffer(&self, slot: u32) -> Option<&[u8]> {
        (slot == 0).then(|| self.pool.slot(0))
    }

    #[inline]
    fn queue(&mut self, io: Io) -> io::Result<()> {
        debug_assert!(self.queued.is_none(), "psync holds one IO at a time");
        self.queued = Some(io);
        Ok(())
    }

    fn submit_and_reap(&mut self, _min: usize, done: &mut Vec<Done>) -> io::Result<()> {
        let Some(io) = self.queued.take() else {
            return Ok(());
        };
        let start = io.buf_off as usize;
        let end = start + io.len as usize;
        let Some(file) = self.files.get(usize::from(io.file)) else {
            done.push(Done {
                slot: io.slot,
                res: -libc::EBADF,
            });
            return Ok(());
        };
        let result = match io.op {
            Op::Read => file.read_at(&mut self.pool.slot_mut(0)[start..end], io.offset),
            Op::Write if self.write_flags != 0 => crate::sys::pwritev2(
                file,
                &self.pool.slot(0)[start..end],
                io.offset,
                self.write_flags,
            ),
            Op::Write => file.write_at(&self.pool.slot(0)[start..end], io.offset),
            Op::Fsync => file.sync_all().map(|()| 0),
            Op::Fdatasync => file.sync_data().map(|()| 0),
        };
        let res = match result {
            Ok(n) => n as i32,
            Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
        };
        done.push(Done { slot: io.slot, res });
        Ok(())
    }

    fn backing(&self) -> crate::Backing {
        self.pool.backing()
    }

    fn in_flight(&self) -> usize {
        usize::from(self.queued.is_some())
    }
}
