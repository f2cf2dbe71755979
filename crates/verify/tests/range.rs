//! The verify pass over a real file: faults injected between the write and the read-back are
//! each named with their offset and class, and an untouched target verifies clean.
#![allow(clippy::disallowed_methods)] // fixtures; clippy.toml binds the program only

use iogauge_verify::{stamp, verify_range, Class, Expect, RunKey, Verdict, VerifyOptions, SECTOR};
use std::fs::File;
use std::os::unix::fs::FileExt;

const BLOCK: usize = 4 * SECTOR;
const BLOCKS: u64 = 64;

fn written(run: &RunKey, gens: &[u64]) -> (tempfile::NamedTempFile, File) {
    let tmp = tempfile::NamedTempFile::new().unwrap();
    let f = tmp.reopen().unwrap();
    let mut b = vec![0u8; BLOCK];
    for (k, &g) in gens.iter().enumerate() {
        let off = k as u64 * BLOCK as u64;
        // Every generation up to the last, as a run that rewrites its blocks would.
        for gen in 1..=g {
            stamp(&mut b, run, off, gen);
            f.write_all_at(&b, off).unwrap();
        }
    }
    (tmp, f)
}

fn block_at(f: &File, off: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    f.read_exact_at(&mut b, off).unwrap();
    b
}

#[test]
fn each_injected_fault_is_named_with_its_offset_and_class() {
    let run = RunKey {
        id: 0x5eed,
        seed: 42,
    };
    let gens: Vec<u64> = (0..BLOCKS).map(|k| 1 + k % 3).collect();
    let (_tmp, f) = written(&run, &gens);
    let at = |k: u64| k * BLOCK as u64;
    let mut old = vec![0u8; BLOCK];

    // One bit flipped in block 3's second sector.
    let mut b = block_at(&f, at(3));
    b[SECTOR + 1000] ^= 0x10;
    f.write_all_at(&b, at(3)).unwrap();
    // Block 5 copied over block 9.
    f.write_all_at(&block_at(&f, at(5)), at(9)).unwrap();
    // Block 14 (generation 3) restored to generation 2.
    stamp(&mut old, &run, at(14), 2);
    f.write_all_at(&old, at(14)).unwrap();
    // The second half of block 20 (generation 3) overwritten with generation 1.
    stamp(&mut old, &run, at(20), 1);
    f.write_all_at(&old[BLOCK / 2..], at(20) + (BLOCK / 2) as u64)
        .unwrap();
    // Block 30 zeroed.
    f.write_all_at(&[0u8; BLOCK], at(30)).unwrap();

    let opts = VerifyOptions {
        block: BLOCK,
        keep: 10,
        ..Default::default()
    };
    let tally = verify_range(&f, 0..at(BLOCKS), &run, &opts, |off| {
        Expect::AtLeast(gens[(off / BLOCK as u64) as usize])
    })
    .unwrap();

    assert_eq!(tally.checked(), BLOCKS);
    let found: Vec<(u64, Verdict)> = tally
        .first()
        .iter()
        .map(|f| (f.offset, f.verdict))
        .collect();
    assert_eq!(
        found,
        [
            (at(3), Verdict::Corrupt { sector: 1 }),
            (
                at(9),
                Verdict::Misdirected {
                    stored_offset: at(5)
                }
            ),
            (
                at(14),
                Verdict::Lost {
                    found: 2,
                    expected: 3
                }
            ),
            (
                at(20),
                Verdict::Torn {
                    sector: 2,
                    first: Some(3),
                    other: Some(1)
                }
            ),
            (at(30), Verdict::Unwritten),
        ]
    );
    for c in Class::ALL {
        assert_eq!(tally.count(c), 1, "{}", c.name());
    }
    for f in tally.first() {
        eprintln!("{f}");
    }
}

#[test]
fn skipped_blocks_are_not_read_and_a_short_file_reads_as_unwritten() {
    let run = RunKey { id: 1, seed: 1 };
    let (_tmp, f) = written(&run, &[1; 8]);
    f.set_len(6 * BLOCK as u64 - 100).unwrap();
    let opts = VerifyOptions {
        block: BLOCK,
        ..Default::default()
    };
    let tally = verify_range(&f, 0..8 * BLOCK as u64, &run, &opts, |off| {
        if off == 0 {
            Expect::Skip
        } else {
            Expect::Written
        }
    })
    .unwrap();
    assert_eq!(tally.checked(), 7);
    // Block 5 lost its last 100 bytes: its last sector is damaged, not missing.
    assert_eq!(tally.count(Class::Corrupt), 1);
    assert_eq!(tally.count(Class::Unwritten), 2);
    assert_eq!(tally.first()[0].offset, 5 * BLOCK as u64);
}

#[test]
fn a_sample_reads_the_same_blocks_every_time() {
    let run = RunKey { id: 2, seed: 99 };
    let (_tmp, f) = written(&run, &[1; BLOCKS as usize]);
    // Zero every block, so each block read is a recorded failure with its offset.
    f.write_all_at(&vec![0u8; BLOCKS as usize * BLOCK], 0)
        .unwrap();
    let opts = VerifyOptions {
        block: BLOCK,
        sample: 0.25,
        keep: 64,
        ..Default::default()
    };
    let pass = || {
        verify_range(&f, 0..BLOCKS * BLOCK as u64, &run, &opts, |_| {
            Expect::Written
        })
        .unwrap()
    };
    let (a, b) = (pass(), pass());
    assert!(
        a.checked() > 0 && a.checked() < BLOCKS / 2,
        "sampled {} of {BLOCKS}",
        a.checked()
    );
    assert_eq!(a.first(), b.first());
}

#[test]
fn bad_options_are_refused() {
    let run = RunKey { id: 2, seed: 99 };
    let (_tmp, f) = written(&run, &[1]);
    for opts in [
        VerifyOptions {
            block: 1000,
            ..Default::default()
        },
        VerifyOptions {
            sample: 0.0,
            ..Default::default()
        },
        VerifyOptions {
            sample: 1.5,
            ..Default::default()
        },
    ] {
        assert!(verify_range(&f, 0..BLOCK as u64, &run, &opts, |_| Expect::Written).is_err());
    }
}

/// `stop_at_first` (fio's verify_fatal): the pass ends at the first block found wrong, the
/// blocks after it unread; without it (the near miss) every block is read and both are named.
#[test]
fn a_pass_told_to_stop_at_the_first_failure_reads_no_further() {
    let run = RunKey { id: 7, seed: 9 };
    let gens = vec![1; BLOCKS as usize];
    let (_tmp, f) = written(&run, &gens);
    for k in [10u64, 40] {
        f.write_all_at(&[0u8; BLOCK], k * BLOCK as u64).unwrap();
    }
    let pass = |stop: bool| {
        let opts = VerifyOptions {
            block: BLOCK,
            stop_at_first: stop,
            ..Default::default()
        };
        verify_range(&f, 0..BLOCKS * BLOCK as u64, &run, &opts, |_| {
            Expect::Written
        })
        .unwrap()
    };
    let stopped = pass(true);
    assert_eq!((stopped.checked(), stopped.failed()), (11, 1));
    let all = pass(false);
    assert_eq!((all.checked(), all.failed()), (BLOCKS, 2));
}
