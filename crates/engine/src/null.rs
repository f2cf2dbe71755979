//! The null engine: every IO completes at once without touching the target, like fio's
//! `engines/null.c`. It measures iogauge's own per-IO cost and keeps CLI tests fast.

use crate::{BufferPool, Caps, Done, Engine, EngineConfig, Io, Op};
use std::io;

pub struct NullEngine {
    pool: BufferPool,
    queued: Vec<Io>,
}

impl NullEngine {
    pub fn new(cfg: &EngineConfig) -> io::Result<NullEngine> {
        let depth = cfg.depth.max(1) as usize;
        let pool = BufferPool::new(depth, cfg.buf_size, cfg.align, cfg.seed).ok_or_else(|| {
            io::Error::new(io::ErrorKind::OutOfMemory, "buffer allocation failed")
        })?;
        Ok(NullEngine {
            pool,
            queued: Vec::with_capacity(depth),
        })
    }
}

impl Engine for NullEngine {
    fn caps(&self) -> Caps {
        Caps {
            async_depth: true,
            does_io: false,
            sync_ops: true,
        }
    }

    fn buffer_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        ((slot as usize) < self.pool.slots()).then(|| self.pool.slot_mut(slot as usize))
    }

    fn buffer(&self, slot: u32) -> Option<&[u8]> {
        ((slot as usize) < self.pool.slots()).then(|| self.pool.slot(slot as usize))
    }

    #[inline]
    fn queue(&mut self, io: Io) -> io::Result<()> {
        self.queued.push(io);
        Ok(())
    }

    #[inline]
    fn submit_and_reap(&mut self, _min: usize, done: &mut Vec<Done>) -> io::Result<()> {
        for io in self.queued.drain(..) {
            let res = match io.op {
                Op::Read | Op::Write => io.len as i32,
                Op::Fsync | Op::Fdatasync => 0,
            };
            done.push(Done { slot: io.slot, res });
        }
        Ok(())
    }

    fn backing(&self) -> crate::Backing {
        self.pool.backing()
    }

    fn in_flight(&self) -> usize {
        self.queued.len()
    }
}
