//! `--verify` in a run: one key for the run, a tracker per writing cell, a pass that reads back
//! what the cell wrote, and the generations kept so `iogauge verify` can look again later.
//!
//! Generations: the fill (and a preconditioning pass) stamp generation 0; cell `i` writes
//! generations from `(i + 1) << 32` on, so a block left from an earlier cell is older than any
//! write of the cell being checked, and "lost" means what it says.

use super::work::Work;
use crate::error::usage;
use crate::model::{FailureDoc, RunVerifyDoc, VerifyDoc};
use crate::runner::{kept, Earlier, Verifier, KEEP_FAILURES};
use crate::target::Target;
use crate::units;
use anyhow::{Context, Result};
use iogauge_verify::{verify_range, Class, Expect, RunKey, Tally, Tracker, VerifyOptions};

/// Generations of the kept map at most (8 bytes each): beyond, a later `verify` checks the
/// blocks' integrity but cannot tell a lost write from the version before it.
const MAX_MAP_BLOCKS: usize = 8 << 20;

pub struct Session {
    pub key: RunKey,
    /// The target was created and filled by this run, so every sector in it is ours.
    pub filled: bool,
    sample: f64,
    /// Stop a cell, and the pass after it, at the first block that comes back wrong.
    fatal: bool,
    /// The generations every writing cell left, at one block size for the whole range.
    map: Option<(u64, Vec<u64>)>,
    /// Why no map is kept, when one cannot be.
    no_map: Option<String>,
}

impl Session {
    /// A key for a run: the clock and the process, so two runs never share one.
    pub fn new(seed: u64, sample: f64, fatal: bool) -> Session {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let id = mix(now ^ u64::from(std::process::id()).rotate_left(32)) & ((1 << 53) - 1);
        Session {
            key: RunKey { id, seed },
            filled: false,
            sample,
            fatal,
            map: None,
            no_map: None,
        }
    }

    /// Checks, before anything is written, that each writing cell's tracker fits in memory.
    pub fn check(works: &[Result<Work, String>], ram: u64) -> Result<()> {
        for w in works.iter().flatten() {
            if let Work::One { spec, len, .. } = w {
                let need = len / spec.bs.bytes() * Tracker::BYTES_PER_BLOCK;
                if spec.writes() && ram > 0 && need > ram / 4 {
                    return Err(usage(format!(
                        "--verify would keep {} of generations for {} blocks of {}, more than a quarter of RAM; use a larger --bs or a smaller --size",
                        units::iec(need),
                        len / spec.bs.bytes(),
                        units::bs_label(spec.bs.bytes())
                    )));
                }
            }
        }
        Ok(())
    }

    /// What a cell's workers check with: its own tracker, and what the earlier cells of the
    /// run left on `target`.
    pub fn verifier<'a>(&'a self, tracker: Option<&'a Tracker>, target: &Target) -> Verifier<'a> {
        Verifier {
            key: self.key,
            tracker,
            filled: self.filled,
            fatal: self.fatal,
            earlier: self.map().map(|(block, generations)| Earlier {
                offset: target.offset,
                block,
                generations,
            }),
        }
    }

    /// The tracker for cell `index`, if it writes one workload over the target (a copy or a
    /// multi-file cell is not verified).
    pub fn tracker(&self, index: usize, work: &Work, target: &Target) -> Option<Tracker> {
        match work {
            Work::One { spec, start, len } if spec.writes() => Some(Tracker::new(
                target.offset + start,
                *len,
                spec.bs.bytes(),
                (index as u64 + 1) << 32,
            )),
            _ => None,
        }
    }

    /// Reads back the blocks the cell wrote (unless `read_back` is off: fio's do_verify=0) and
    /// makes the result's verification record of the pass and of the reads' checks during the
    /// cell. The cell's generations are kept either way, for a later cell's reads to check.
    pub fn pass(
        &mut self,
        tracker: Option<&Tracker>,
        read_back: bool,
        target: &Target,
        direct: bool,
        during: Option<&Tally>,
    ) -> Result<VerifyDoc> {
        let mut doc = VerifyDoc {
            sample: self.sample,
            ..VerifyDoc::default()
        };
        let mut all = Tally::new(KEEP_FAILURES);
        if let Some(t) = during {
            doc.read_checks = t.checked();
            all.merge(t);
        }
        if let Some(tracker) = tracker.filter(|_| !read_back) {
            doc.written_blocks = tracker.written();
            self.keep(tracker, target);
        }
        if let Some(tracker) = tracker.filter(|_| read_back) {
            doc.written_blocks = tracker.written();
            let (start, blocks) = tracker.span();
            let file = open(target, direct)?;
            let opts = VerifyOptions {
                block: tracker.block() as usize,
                sample: self.sample,
                keep: KEEP_FAILURES,
                stop_at_first: self.fatal,
                ..VerifyOptions::default()
            };
            let end = start + blocks as u64 * tracker.block();
            let pass = verify_range(&file, start..end, &self.key, &opts, |o| tracker.expect(o))
                .with_context(|| format!("reading {} back to verify it", target.path.display()))?;
            doc.pass_checks = pass.checked();
            all.merge(&pass);
            self.keep(tracker, target);
        }
        for c in Class::ALL {
            if all.count(c) > 0 {
                doc.failed.insert(c.name().into(), all.count(c));
            }
        }
        doc.first = all
            .first()
            .iter()
            .map(|f| FailureDoc {
                offset: f.offset,
                class: f.verdict.class().map_or("", |c| c.name()).into(),
                detail: f.verdict.to_string(),
            })
            .collect();
        Ok(doc)
    }

    /// Folds a cell's generations into the run's map, at the block size of the first writing
    /// cell; a cell of another block size leaves no map (its blocks would straddle).
    fn keep(&mut self, tracker: &Tracker, target: &Target) {
        if self.no_map.is_some() {
            return;
        }
        let block = tracker.block();
        let blocks = (target.range_bytes / block) as usize;
        if blocks > MAX_MAP_BLOCKS {
            self.no_map = Some(format!(
                "the target has {blocks} blocks of {}, too many to keep a generation for each",
                units::bs_label(block)
            ));
            return;
        }
        let (map_block, map) = self.map.get_or_insert_with(|| (block, vec![0; blocks]));
        if *map_block != block {
            self.no_map = Some("cells wrote different block sizes".into());
            self.map = None;
            return;
        }
        let (start, _) = tracker.span();
        let first = ((start - target.offset) / block) as usize;
        for (i, g) in tracker.floors().enumerate() {
            if g != 0 {
                if let Some(slot) = map.get_mut(first + i) {
                    *slot = g;
                }
            }
        }
    }

    /// The generations to keep with the run, if any.
    pub fn map(&self) -> Option<(u64, &[u64])> {
        match &self.no_map {
            Some(_) => None,
            None => self.map.as_ref().map(|(b, m)| (*b, m.as_slice())),
        }
    }

    /// Why a later check cannot tell lost writes, if it cannot.
    pub fn no_map(&self) -> Option<&str> {
        self.no_map.as_deref()
    }

    pub fn doc(&self, target: &Target) -> RunVerifyDoc {
        RunVerifyDoc {
            key: self.key.id,
            seed: self.key.seed,
            filled: self.filled,
            path: target.path.display().to_string(),
            offset: target.offset,
            range_bytes: target.range_bytes,
            map_block: self.map().map_or(0, |(b, _)| b),
        }
    }
}

/// The target opened for reading back, with O_DIRECT when the run used it so the pass reads
/// the device and not the page cache the writes left behind.
/// Through the target's own handle, like every other open of it, so the pass reads the inode
/// the run wrote even if the path was swapped meanwhile.
pub fn open(target: &Target, direct: bool) -> Result<std::fs::File> {
    target
        .open(false, direct, false)
        .with_context(|| format!("opening {} to verify it", target.path.display()))
}

/// Reads back `range` of a file against a kept run: with its generations when they were kept,
/// else any intact block of the run passes. `filled` says every sector was the run's, so a
/// foreign one is a failure; otherwise blocks the run never wrote are not judged.
pub fn check_kept(
    file: &std::fs::File,
    run: &RunVerifyDoc,
    map: Option<(u64, Vec<u64>)>,
    sample: f64,
) -> Result<Tally> {
    let key = RunKey {
        id: run.key,
        seed: run.seed,
    };
    let range = run.offset..run.offset + run.range_bytes;
    let opts = |block: u64| VerifyOptions {
        block: block as usize,
        sample,
        keep: KEEP_FAILURES,
        ..VerifyOptions::default()
    };
    let tally = match map {
        Some((block, map)) => {
            let end = run.offset + map.len() as u64 * block;
            verify_range(file, range.start..end, &key, &opts(block), |o| {
                kept(map[((o - run.offset) / block) as usize], run.filled)
            })?
        }
        None => {
            let end = range.end / iogauge_verify::SECTOR as u64 * iogauge_verify::SECTOR as u64;
            verify_range(
                file,
                range.start..end,
                &key,
                &opts(iogauge_verify::SECTOR as u64),
                |_| Expect::Written,
            )?
        }
    };
    Ok(tally)
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
