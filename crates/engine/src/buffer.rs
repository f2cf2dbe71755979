//! Aligned IO buffers, allocated once per worker and filled with incompressible data.
//!
//! O_DIRECT needs buffers aligned to the device's logical block size; we align to at least 4096
//! so any device works. The pool owns one allocation split into equal slots; the io_uring engine
//! registers it with the kernel, so the pool must outlive every IO that uses it (the engines
//! drain their rings before dropping the pool).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

pub struct BufferPool {
    ptr: NonNull<u8>,
    layout: Layout,
    slot_size: usize,
    slots: usize,
}

// SAFETY: the pool is plain owned memory; access goes through &self / &mut self like a Vec.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// `slots` buffers of `slot_size` bytes, each aligned to `align` (rounded up to a power of
    /// two, at least 4096), filled with pseudo-random bytes from `seed`.
    pub fn new(slots: usize, slot_size: usize, align: usize, seed: u64) -> Option<BufferPool> {
        let align = align.max(4096).next_power_of_two();
        let slot_size_aligned = slot_size.checked_next_multiple_of(align)?.max(align);
        let total = slot_size_aligned.checked_mul(slots.max(1))?;
        let layout = Layout::from_size_align(total, align).ok()?;
        // SAFETY: layout has a non-zero size (slots >= 1, slot size >= align >= 4096).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw)?;
        let mut pool = BufferPool {
            ptr,
            layout,
            slot_size: slot_size_aligned,
            slots: slots.max(1),
        };
        fill_random(pool.as_mut_slice(), seed);
        Some(pool)
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Bytes between the starts of two slots (the requested size rounded up to the alignment).
    pub fn slot_stride(&self) -> usize {
        self.slot_size
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr points to layout.size() initialised (zeroed) bytes owned by self, and
        // &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn slot(&self, slot: usize) -> &[u8] {
        assert!(slot < self.slots, "slot out of range");
        // SAFETY: in bounds by the assert; shared access through &self.
        unsafe {
            std::slice::from_raw_parts(self.ptr.as_ptr().add(slot * self.slot_size), self.slot_size)
        }
    }

    pub fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(slot < self.slots, "slot out of range");
        // SAFETY: in bounds by the assert; exclusive access through &mut self.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ptr.as_ptr().add(slot * self.slot_size),
                self.slot_size,
            )
        }
    }

    /// Raw pointer to byte `off` of a slot, for the kernel. Callers must keep the slot out of
    /// Rust's hands while the kernel uses it (the engines track that per slot).
    pub(crate) fn slot_ptr(&self, slot: usize, off: usize) -> *mut u8 {
        assert!(
            slot < self.slots && off <= self.slot_size,
            "slot out of range"
        );
        // SAFETY: in bounds by the assert.
        unsafe { self.ptr.as_ptr().add(slot * self.slot_size + off) }
    }

    /// One iovec per slot, for `io_uring_register_buffers`.
    pub(crate) fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|s| libc::iovec {
                iov_base: self.slot_ptr(s, 0).cast(),
                iov_len: self.slot_size,
            })
            .collect()
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Fills `buf` with bytes from a fast seeded generator (SplitMix64): incompressible to a
/// controller or file system, and repeatable from the seed.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = splitmix64(&mut state).to_le_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut pool = BufferPool::new(3, 5000, 512, 1).unwrap();
        assert_eq!(pool.slot_stride(), 8192);
        for s in 0..3 {
            assert_eq!(pool.slot_ptr(s, 0) as usize % 4096, 0);
        }
        pool.slot_mut(1).fill(7);
        assert!(pool.slot(0).iter().any(|&b| b != 7));
        assert!(pool.slot(1).iter().all(|&b| b == 7));
        assert!(pool.slot(2).iter().any(|&b| b != 7));
    }

    #[test]
    fn random_fill_is_seeded_and_not_compressible_by_repetition() {
        let mut a = vec![0u8; 1 << 16];
        let mut b = vec![0u8; 1 << 16];
        fill_random(&mut a, 42);
        fill_random(&mut b, 42);
        assert_eq!(a, b);
        fill_random(&mut b, 43);
        assert_ne!(a, b);
        // No 4 KiB block repeats another, and byte values are spread out.
        let blocks: std::collections::HashSet<&[u8]> = a.chunks(4096).collect();
        assert_eq!(blocks.len(), 16);
        let mut counts = [0u32; 256];
        a.iter().for_each(|&x| counts[x as usize] += 1);
        let expected = a.len() as f64 / 256.0;
        assert!(counts
            .iter()
            .all(|&c| (c as f64 - expected).abs() < expected * 0.25));
    }
}
