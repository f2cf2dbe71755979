//! The verify pass: read back the blocks of a range and tally what they are.

use crate::sector::mix;
use crate::{check, RunKey, Tally, Verdict, SECTOR};
use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;

impl Expect {
    /// The inverse of [`crate::Tracker::floors`]' encoding.
    pub fn from_floor(floor: u64) -> Expect {
        match floor {
            0 => Expect::Skip,
            1 => Expect::Written,
            g => Expect::AtLeast(g),
        }
    }
}

/// What the writer knows about one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Never written: not read, not counted.
    Skip,
    /// Written, generation not known: any intact block of the run passes.
    Written,
    /// Written, and this generation was the last acknowledged: older is lost.
    AtLeast(u64),
}

/// How a verify pass reads.
#[derive(Clone, Copy, Debug)]
pub struct VerifyOptions {
    /// Block size in bytes, a multiple of 4 KiB; blocks start at `range.start` + k × block.
    pub block: usize,
    /// The fraction of blocks read, in (0, 1]. The same blocks are chosen every time for a
    /// run (the choice is a hash of the run's seed and the offset), so a second pass over a
    /// suspicious target reads what the first did.
    pub sample: f64,
    /// Failures kept with their offsets in the tally.
    pub keep: usize,
    /// Bytes read per system call at most when consecutive blocks are read; rounded to blocks.
    pub chunk: usize,
    /// Stop at the first block that fails (fio's verify_fatal).
    pub stop_at_first: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            block: SECTOR,
            sample: 1.0,
            keep: 10,
            chunk: 1 << 20,
            stop_at_first: false,
        }
    }
}

/// Reads back the blocks of `range` in `file` and tallies their verdicts; `expect` says, per
/// block offset, what was written there. Bytes past the end of the file read as zeros, so a
/// truncated target shows as unwritten blocks rather than an error.
///
/// The buffer is aligned to 4 KiB, so `file` may be opened with O_DIRECT when `range.start`
/// and the block size are aligned too.
pub fn verify_range(
    file: &File,
    range: Range<u64>,
    run: &RunKey,
    opts: &VerifyOptions,
    mut expect: impl FnMut(u64) -> Expect,
) -> io::Result<Tally> {
    let block = opts.block;
    if block == 0 || !block.is_multiple_of(SECTOR) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the block size must be a positive multiple of 4 KiB",
        ));
    }
    if !(opts.sample > 0.0 && opts.sample <= 1.0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the sample fraction must be in (0, 1]",
        ));
    }
    // Read runs of consecutive blocks in one call, unless so few are sampled that the blocks
    // in between would be most of what is read.
    let per_chunk = if opts.sample >= 0.5 {
        (opts.chunk / block).max(1)
    } else {
        1
    };
    let threshold = (opts.sample * u64::MAX as f64) as u64;
    let chosen = |offset: u64| opts.sample >= 1.0 || mix(run.seed ^ mix(offset)) <= threshold;

    let mut storage = vec![0u8; per_chunk * block + SECTOR];
    let align = storage.as_ptr().align_offset(SECTOR);
    let buf = &mut storage[align..align + per_chunk * block];
    let mut tally = Tally::new(opts.keep);
    let blocks = (range.end.saturating_sub(range.start)) / block as u64;
    let mut wanted: Vec<(u64, Expect)> = Vec::with_capacity(per_chunk);
    let mut k = 0u64;
    while k < blocks {
        let n = (per_chunk as u64).min(blocks - k);
        let base = range.start + k * block as u64;
        wanted.clear();
        for j in 0..n {
            let offset = base + j * block as u64;
            if chosen(offset) {
                let e = expect(offset);
                if e != Expect::Skip {
                    wanted.push((offset, e));
                }
            }
        }
        if let (Some(&(lo, _)), Some(&(hi, _))) = (wanted.first(), wanted.last()) {
            let span = &mut buf[..(hi - lo) as usize + block];
            read_full(file, span, lo)?;
            for &(offset, e) in &wanted {
                let at = (offset - lo) as usize;
                let expected = match e {
                    Expect::AtLeast(g) => Some(g),
                    _ => None,
                };
                let v: Verdict = check(&span[at..at + block], run, offset, expected);
                if tally.record(offset, v).is_some() && opts.stop_at_first {
                    return Ok(tally);
                }
            }
        }
        k += n;
    }
    Ok(tally)
}

/// Fills `buf` from `offset`, zeros past the end of the file.
fn read_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                buf[done..].fill(0);
                break;
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
