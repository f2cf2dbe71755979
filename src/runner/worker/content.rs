//! What a thread's writes carry when its job asks for compressible or repeated data (fio's
//! buffer_compress_* and dedupe_*). Each write is filled from one seed (fio's fill_io_buffer):
//! a unique write from the thread's next seed, a repeat from an earlier one, so a repeat is the
//! same bytes again. The seeds of unique writes are numbered per thread; every thread running
//! at once with content of its own has a number of its own in the registry (one lock when it
//! starts and when it ends, none per IO), so no two threads write the same unique bytes, and a
//! global working set (fio's dedupe_global) can name the first unique writes of them all.

use crate::workload::{Content, Repeats};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The threads with content of their own running now: how many are alive and how many
/// numbers were handed out since the registry was last empty (a cell's threads end before the
/// next cell's start, so each cell numbers its threads from 0).
static THREADS: Mutex<(u64, u64)> = Mutex::new((0, 0));
/// Numbers handed out, read per repeat of a global working set.
static NUMBERED: AtomicU64 = AtomicU64::new(0);

/// One thread's writer of content.
pub(super) struct Writer {
    content: Content,
    chunk: usize,
    seed: u64,
    /// This thread's number among those running now.
    me: u64,
    /// Unique writes issued: the next one's number.
    uniques: u64,
    /// The seed of the last unique write (what `repeat` repeats).
    last: Option<u64>,
    /// Writes in the working set (the first unique writes a repeat draws from).
    working_set: u64,
    draw: fastrand::Rng,
}

impl Writer {
    /// `range` and `bs` size the working set (its share of the range in blocks, as fio's
    /// num_unique_pages); `seed` is the run's.
    pub fn new(content: Content, seed: u64, range: u64, bs: u64) -> Writer {
        let me = {
            let mut t = THREADS.lock().unwrap_or_else(|e| e.into_inner());
            if t.0 == 0 {
                t.1 = 0;
            }
            t.0 += 1;
            t.1 += 1;
            NUMBERED.store(t.1, Ordering::Relaxed);
            t.1 - 1
        };
        let working_set = match content.repeats {
            Repeats::WorkingSet { pct, .. } => (range * u64::from(pct) / 100 / bs.max(1)).max(1),
            Repeats::Last => 0,
        };
        Writer {
            content,
            chunk: content.chunk_bytes(),
            seed,
            me,
            uniques: 0,
            last: None,
            working_set,
            draw: fastrand::Rng::with_seed(mix(seed ^ DRAW_SALT, me, 0)),
        }
    }

    /// Fills one write's bytes.
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8]) {
        let seed = self.pick();
        iogauge_engine::fill_compressible(buf, seed, self.content.compress, self.chunk);
    }

    /// The seed of the next write: a repeat's (`dedupe` of the writes, drawn per write) or the
    /// next unique one's.
    fn pick(&mut self) -> u64 {
        let c = &self.content;
        if c.dedupe > 0 && self.draw.u8(1..=100) <= c.dedupe {
            return match c.repeats {
                // Before any unique write, the one the thread's first would be.
                Repeats::Last => self.last.unwrap_or_else(|| mix(self.seed, self.me, 0)),
                Repeats::WorkingSet { global: false, .. } => {
                    mix(self.seed, self.me, self.draw.u64(0..self.working_set))
                }
                // The working set spread over every thread's first unique writes.
                Repeats::WorkingSet { global: true, .. } => {
                    let i = self.draw.u64(0..self.working_set);
                    let threads = NUMBERED.load(Ordering::Relaxed).max(1);
                    mix(self.seed, i % threads, i / threads)
                }
            };
        }
        let s = mix(self.seed, self.me, self.uniques);
        self.uniques += 1;
        self.last = Some(s);
        s
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let mut t = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        t.0 -= 1;
    }
}

/// Mixed into the seed of the per-write repeat draw, so it is not drawn from the numbers that
/// place the thread's offsets.
const DRAW_SALT: u64 = 0x61C8_8646_80B5_83EB;

/// The seed of thread `t`'s `k`-th unique write.
fn mix(seed: u64, t: u64, k: u64) -> u64 {
    let mut z =
        seed ^ t.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The registry is the process's: these tests take turns with it.
    static TURN: Mutex<()> = Mutex::new(());

    fn content(dedupe: u8, repeats: Repeats) -> Content {
        Content {
            compress: 0,
            chunk: 0,
            dedupe,
            repeats,
        }
    }

    /// Each write's bytes by its seed: the share of writes that repeat an earlier one is the
    /// share asked for, and what they repeat is the working set's or the last unique write.
    #[test]
    fn repeats_are_the_share_asked_and_repeat_what_they_should() {
        let _one = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let n = 20_000;
        let mut w = Writer::new(content(30, Repeats::Last), 5, 1 << 30, 4096);
        let mut seen = HashSet::new();
        let mut repeats = 0;
        let mut last = None;
        for _ in 0..n {
            let s = w.pick();
            if !seen.insert(s) {
                repeats += 1;
                assert_eq!(Some(s), last, "repeat mode repeats the last unique write");
            } else {
                last = Some(s);
            }
        }
        let share = f64::from(repeats) / f64::from(n);
        assert!((0.28..0.32).contains(&share), "{share}");
        drop(w);
        // A working set of 1% of 1,000 blocks: 10 seeds, each one of the thread's first 10
        // unique writes'.
        let ws = Repeats::WorkingSet {
            pct: 1,
            global: false,
        };
        let mut w = Writer::new(content(50, ws), 5, 1000 * 4096, 4096);
        let first: Vec<u64> = (0..10).map(|k| mix(5, w.me, k)).collect();
        let mut from_set = 0;
        for _ in 0..n {
            let s = w.pick();
            from_set += u32::from(first.contains(&s));
        }
        // Half the writes repeat one of the 10, and 10 of the unique ones are those.
        let share = f64::from(from_set) / f64::from(n);
        assert!((0.48..0.52).contains(&share), "{share}");
    }

    /// Two threads at once never write the same unique bytes, and a global working set names
    /// the first unique writes of both.
    #[test]
    fn threads_write_their_own_and_a_global_set_spans_them() {
        let _one = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let ws = Repeats::WorkingSet {
            pct: 1,
            global: true,
        };
        let mut a = Writer::new(content(100, ws), 9, 1000 * 4096, 4096);
        let mut b = Writer::new(content(0, Repeats::Last), 9, 1000 * 4096, 4096);
        assert_ne!(a.me, b.me);
        let b_uniques: HashSet<u64> = (0..100).map(|_| b.pick()).collect();
        assert_eq!(b_uniques.len(), 100);
        let first_of_a: Vec<u64> = (0..5).map(|k| mix(9, a.me, k)).collect();
        let (mut of_a, mut of_b) = (0, 0);
        for _ in 0..1000 {
            let s = a.pick();
            of_a += u32::from(first_of_a.contains(&s));
            of_b += u32::from(b_uniques.contains(&s));
        }
        assert_eq!(
            of_a + of_b,
            1000,
            "every repeat is one of the two threads' first writes"
        );
        assert!(of_a > 300 && of_b > 300, "{of_a} {of_b}");
    }
}
