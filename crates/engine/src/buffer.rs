//! Aligned IO buffers, allocated once per worker and filled with incompressible data.
//!
//! O_DIRECT needs buffers aligned to the device's logical block size; we align to at least 4096
//! so any device works. The pool owns one mapping split into equal slots; the io_uring engine
//! registers it with the kernel, so the pool must outlive every IO that uses it (the engines
//! drain their rings before dropping the pool).
//!
//! Whole IOs: the block layer builds one request from physically contiguous pieces, and a queue
//! takes a limited number of pieces (`max_segments`, 254 on a virtio disk). A 1 MiB buffer of
//! 4 KiB pages is 256 pieces, so the device saw two ~512 KiB requests per 1 MiB read where fio,
//! whose buffers happened to be contiguous, sent one. So a pool whose IOs span more than a page
//! is mapped 2 MiB-aligned on huge pages (hugetlbfs when the system has reserved some, else
//! transparent huge pages asked for with MADV_HUGEPAGE), and its slots are laid out so that no
//! slot of 2 MiB or less straddles a 2 MiB boundary. What the kernel really gave is read back
//! from /proc/self/smaps and reported ([`BufferPool::backing`]), never assumed.

use std::ptr::NonNull;

const HUGE: usize = 2 << 20;

/// What backs a pool's memory, as the kernel reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Reserved huge pages (MAP_HUGETLB).
    HugeTlb,
    /// Transparent huge pages backing `huge` of the pool's `total` bytes.
    Thp { huge: usize, total: usize },
    /// Ordinary 4 KiB pages (IOs of one page, or no huge page could be had).
    Pages,
}

impl Backing {
    /// For people and the run document, e.g. "transparent huge pages (4 MiB of 4 MiB)".
    pub fn describe(self) -> String {
        // KiB below a MiB: a pool of 256 KiB is not "0 MiB".
        let size = |b: usize| match b < 1 << 20 {
            true => format!("{} KiB", b >> 10),
            false => format!("{:.0} MiB", b as f64 / (1 << 20) as f64),
        };
        match self {
            Backing::HugeTlb => "2 MiB huge pages (hugetlb)".into(),
            Backing::Thp { huge, total } if huge >= total => {
                format!("transparent huge pages ({})", size(total))
            }
            Backing::Thp { huge, total } => format!(
                "transparent huge pages for {} of {}; the rest 4 KiB pages, so some IOs may reach the device in pieces",
                size(huge),
                size(total)
            ),
            Backing::Pages => "4 KiB pages".into(),
        }
    }
}

pub struct BufferPool {
    /// Start of the mapping (for munmap) and its length.
    map: NonNull<u8>,
    map_len: usize,
    /// Start of slot 0, aligned.
    ptr: NonNull<u8>,
    slot_size: usize,
    slots: usize,
    backing: Backing,
}

// SAFETY: the pool is plain owned memory; access goes through &self / &mut self like a Vec.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// `slots` buffers of `slot_size` bytes, each aligned to `align` (rounded up to a power of
    /// two, at least 4096), filled with pseudo-random bytes from `seed`.
    pub fn new(slots: usize, slot_size: usize, align: usize, seed: u64) -> Option<BufferPool> {
        let align = align.max(4096).next_power_of_two();
        let slots = slots.max(1);
        let whole = slot_size.checked_next_multiple_of(align)?.max(align);
        // A slot of at most 2 MiB gets a power-of-two stride, which divides 2 MiB: no slot
        // straddles a huge page. Larger slots start on huge page boundaries.
        let stride = if whole <= HUGE {
            whole.next_power_of_two()
        } else {
            whole.checked_next_multiple_of(HUGE)?
        };
        let total = stride.checked_mul(slots)?;
        let (map, map_len, ptr, backing) = if stride > 4096 {
            map_huge(total)?
        } else {
            let (map, len) = map_anon(total, 0)?;
            (map, len, map, Backing::Pages)
        };
        let mut pool = BufferPool {
            map,
            map_len,
            ptr,
            slot_size: stride,
            slots,
            backing,
        };
        fill_random(pool.as_mut_slice(), seed);
        if let Backing::Thp { .. } = pool.backing {
            // Touched by the fill: now the kernel can say what it gave.
            let huge = thp_bytes(ptr.as_ptr() as usize, total).unwrap_or(0);
            pool.backing = match huge {
                0 => Backing::Pages,
                h => Backing::Thp { huge: h, total },
            };
        }
        Some(pool)
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Bytes between the starts of two slots.
    pub fn slot_stride(&self) -> usize {
        self.slot_size
    }

    /// What backs the buffers.
    pub fn backing(&self) -> Backing {
        self.backing
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr points to slots × slot_size bytes of the mapping, owned by self and
        // initialised (anonymous mappings are zero-filled); &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.slots * self.slot_size) }
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
        // SAFETY: map and map_len are the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}

/// An anonymous private mapping of `len` bytes with extra `flags`.
fn map_anon(len: usize, flags: libc::c_int) -> Option<(NonNull<u8>, usize)> {
    // SAFETY: a fresh anonymous mapping touches no existing memory; failure is MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(p.cast()).map(|p| (p, len))
}

/// `total` bytes on huge pages where the kernel gives them: hugetlb first, else a 2 MiB-aligned
/// region of an ordinary mapping with MADV_HUGEPAGE. Returns the mapping, its length, the
/// aligned start and what was asked for (Thp is checked once the memory is touched).
fn map_huge(total: usize) -> Option<(NonNull<u8>, usize, NonNull<u8>, Backing)> {
    let rounded = total.checked_next_multiple_of(HUGE)?;
    if let Some((p, len)) = map_anon(rounded, libc::MAP_HUGETLB) {
        return Some((p, len, p, Backing::HugeTlb));
    }
    // One huge page more than needed, so a 2 MiB boundary lies inside for the start.
    let (map, len) = map_anon(rounded + HUGE, 0)?;
    let start = (map.as_ptr() as usize).next_multiple_of(HUGE);
    let ptr = NonNull::new(start as *mut u8)?;
    // SAFETY: [start, start + rounded) lies inside the mapping just made; madvise only
    // changes how the kernel backs it. A refusal (THP disabled) leaves ordinary pages.
    let advised = unsafe { libc::madvise(ptr.as_ptr().cast(), rounded, libc::MADV_HUGEPAGE) } == 0;
    let backing = match advised {
        true => Backing::Thp {
            huge: 0,
            total: rounded,
        },
        false => Backing::Pages,
    };
    Some((map, len, ptr, backing))
}

/// Bytes of `[start, start + len)` backed by transparent huge pages, from /proc/self/smaps
/// (the mapping that contains `start`, whose AnonHugePages may also count its unaligned
/// head, so the answer is capped at `len`).
fn thp_bytes(start: usize, len: usize) -> Option<usize> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((a, b)) = range.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = a <= start && start < b;
                    continue;
                }
            }
        }
        if inside {
            if let Some(v) = line.strip_prefix("AnonHugePages:") {
                let kib: usize = v.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some((kib * 1024).min(len));
            }
        }
    }
    None
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

/// Fills `buf` as fio's buffer_compress_percentage does: each `chunk` bytes (the last one
/// shorter) start with `100 - zero_pct`% random bytes, each chunk from its own seed drawn from
/// `seed`, and end in zeros. 0 is `fill_random`; 100 is all zeros. Repeatable from the seed:
/// the same seed and length give the same bytes (a deduplicated write is its seed again).
pub fn fill_compressible(buf: &mut [u8], seed: u64, zero_pct: u8, chunk: usize) {
    let zero_pct = usize::from(zero_pct.min(100));
    let mut state = seed;
    for c in buf.chunks_mut(chunk.max(1)) {
        let random = c.len() * (100 - zero_pct) / 100;
        let (head, tail) = c.split_at_mut(random);
        fill_random(head, splitmix64(&mut state));
        tail.fill(0);
    }
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

    // Regression (issue 10, item 3): 1 MiB IOs reached the device as two requests because
    // their buffers were 256 scattered pages.
    #[test]
    fn large_slots_never_straddle_a_huge_page_and_say_what_backs_them() {
        for (slots, size) in [(4usize, 1 << 20), (3, 3 << 19), (8, 8192), (2, 3 << 20)] {
            let pool = BufferPool::new(slots, size, 4096, 1).unwrap();
            for s in 0..slots {
                let start = pool.slot_ptr(s, 0) as usize;
                let end = start + size.min(pool.slot_stride()) - 1;
                if size <= HUGE {
                    assert_eq!(start / HUGE, end / HUGE, "slot {s} of {size} straddles");
                } else {
                    assert_eq!(start % HUGE, 0, "a large slot starts on a huge page");
                }
            }
            // Only ask the kernel where it can have given huge pages at all.
            let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
                .unwrap_or_default();
            match pool.backing() {
                Backing::Thp { huge, total } => assert!(huge > 0 && huge <= total),
                Backing::HugeTlb => {}
                Backing::Pages => assert!(
                    thp.contains("[never]") || !thp.contains('['),
                    "huge pages were available ({thp}) but none backs the pool"
                ),
            }
            assert!(!pool.backing().describe().is_empty());
        }
        let small = BufferPool::new(32, 4096, 4096, 1).unwrap();
        assert_eq!(
            small.backing(),
            Backing::Pages,
            "one-page IOs need no huge pages"
        );
    }

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
    fn a_compressible_fill_is_its_share_of_zeros_in_every_chunk() {
        let mut a = vec![0xffu8; 4096 + 100];
        fill_compressible(&mut a, 7, 75, 512);
        for c in a.chunks(512) {
            let random = c.len() / 4;
            assert!(c[random..].iter().all(|&b| b == 0));
            // Random bytes: a run of 16 zeros among them is one in 2^128.
            assert!(c[..random]
                .chunks(16)
                .all(|r| r.len() < 16 || r.iter().any(|&b| b != 0)));
        }
        let mut b = vec![0u8; a.len()];
        fill_compressible(&mut b, 7, 75, 512);
        assert_eq!(a, b, "one seed, one content");
        fill_compressible(&mut b, 8, 75, 512);
        assert_ne!(a[..128], b[..128]);
        // The chunks differ from each other: no chunk repeats the first.
        assert!(a.chunks(512).skip(1).all(|c| c[..16] != a[..16]));
        fill_compressible(&mut b, 8, 100, 512);
        assert!(b.iter().all(|&x| x == 0));
        fill_compressible(&mut b, 8, 0, 4096);
        assert!(b[4000..4096].iter().any(|&x| x != 0));
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
