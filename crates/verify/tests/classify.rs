//! Every fault the verify pass names, injected into stamped blocks: each must come back as its
//! own class, and an untouched block must come back as written.
#![allow(clippy::disallowed_methods)] // fixtures; clippy.toml binds the program only

use iogauge_verify::{check, stamp, Class, RunKey, Verdict, SECTOR};
use proptest::prelude::*;

fn block(run: &RunKey, offset: u64, gen: u64, sectors: usize) -> Vec<u8> {
    let mut b = vec![0u8; sectors * SECTOR];
    stamp(&mut b, run, offset, gen);
    b
}

prop_compose! {
    fn key()(id in any::<u64>(), seed in any::<u64>()) -> RunKey { RunKey { id, seed } }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn stamped_block_checks_as_written(run in key(), k in 0u64..1 << 36, gen in 1u64..1 << 40,
                                       sectors in 1usize..5, behind in 0u64..3) {
        let offset = k * SECTOR as u64;
        let b = block(&run, offset, gen, sectors);
        prop_assert_eq!(check(&b, &run, offset, None), Verdict::Ok { generation: gen });
        // The acknowledged generation, or an older one: a newer write in flight that landed.
        prop_assert_eq!(check(&b, &run, offset, Some(gen - behind.min(gen - 1))),
                        Verdict::Ok { generation: gen });
    }

    #[test]
    fn one_flipped_bit_is_corrupt(run in key(), k in 0u64..1 << 36, gen in 1u64..1 << 40,
                                  sectors in 1usize..5, bit in any::<prop::sample::Index>()) {
        let offset = k * SECTOR as u64;
        let mut b = block(&run, offset, gen, sectors);
        let i = bit.index(b.len() * 8);
        b[i / 8] ^= 1 << (i % 8);
        prop_assert_eq!(check(&b, &run, offset, Some(gen)),
                        Verdict::Corrupt { sector: (i / 8 / SECTOR) as u32 });
    }

    #[test]
    fn a_block_from_elsewhere_is_misdirected(run in key(), k in 0u64..1 << 36, other in 1u64..1 << 20,
                                             gen in 1u64..1 << 40, sectors in 1usize..5) {
        let offset = k * SECTOR as u64;
        let from = offset + other * (sectors * SECTOR) as u64;
        let b = block(&run, from, gen, sectors);
        prop_assert_eq!(check(&b, &run, offset, Some(gen)),
                        Verdict::Misdirected { stored_offset: from });
    }

    #[test]
    fn an_older_generation_is_lost(run in key(), k in 0u64..1 << 36, gen in 1u64..1 << 40,
                                   newer in 1u64..1000, sectors in 1usize..5) {
        let offset = k * SECTOR as u64;
        let b = block(&run, offset, gen, sectors);
        prop_assert_eq!(check(&b, &run, offset, Some(gen + newer)),
                        Verdict::Lost { found: gen, expected: gen + newer });
    }

    #[test]
    fn half_old_half_new_is_torn(run in key(), k in 0u64..1 << 36, gen in 1u64..1 << 40,
                                 newer in 1u64..1000, sectors in 2usize..9, cut in any::<prop::sample::Index>()) {
        let offset = k * SECTOR as u64;
        let cut = 1 + cut.index(sectors - 1);
        let mut b = block(&run, offset, gen + newer, sectors);
        let old = block(&run, offset, gen, sectors);
        b[cut * SECTOR..].copy_from_slice(&old[cut * SECTOR..]);
        prop_assert_eq!(check(&b, &run, offset, Some(gen + newer)),
                        Verdict::Torn { sector: cut as u32, first: Some(gen + newer), other: Some(gen) });
    }

    #[test]
    fn a_half_written_first_write_is_torn(run in key(), k in 0u64..1 << 36, gen in 1u64..1 << 40,
                                          sectors in 2usize..9) {
        let offset = k * SECTOR as u64;
        let mut b = block(&run, offset, gen, sectors);
        b[SECTOR..].fill(0);
        prop_assert_eq!(check(&b, &run, offset, Some(gen)),
                        Verdict::Torn { sector: 1, first: Some(gen), other: None });
    }

    #[test]
    fn zeros_noise_and_other_runs_are_unwritten(run in key(), other in key(), k in 0u64..1 << 36,
                                               noise in prop::collection::vec(any::<u8>(), SECTOR * 2)) {
        prop_assume!(other.id != run.id);
        let offset = k * SECTOR as u64;
        prop_assert_eq!(check(&[0u8; SECTOR * 2], &run, offset, Some(1)), Verdict::Unwritten);
        prop_assert_eq!(check(&noise, &run, offset, Some(1)), Verdict::Unwritten);
        let b = block(&other, offset, 7, 2);
        prop_assert_eq!(check(&b, &run, offset, Some(7)), Verdict::Unwritten);
    }
}

/// A valid header moved onto another payload (a block assembled from two writes' pieces by a
/// buggy cache) passes the checksum only if it was recomputed; the payload check catches it.
#[test]
fn header_over_foreign_payload_with_fresh_crc_is_corrupt() {
    let run = RunKey { id: 1, seed: 2 };
    let mut b = block(&run, 0, 5, 1);
    let other = block(&RunKey { id: 1, seed: 3 }, 0, 5, 1);
    b[40..].copy_from_slice(&other[40..]);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&b[..32]), &b[36..]);
    b[32..36].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(check(&b, &run, 0, None), Verdict::Corrupt { sector: 0 });
}

#[test]
fn payload_does_not_compress_into_repeats() {
    // Incompressible in the sense that matters to a deduplicating or compressing device: no
    // two 8-byte words of a block repeat, and two generations share no word at the same place.
    let run = RunKey { id: 9, seed: 10 };
    let a = block(&run, 4096, 1, 4);
    let b = block(&run, 4096, 2, 4);
    let words = |v: &[u8]| -> Vec<u64> {
        v.chunks_exact(SECTOR)
            .flat_map(|s| {
                s[40..]
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            })
            .collect()
    };
    let (wa, wb) = (words(&a), words(&b));
    let mut sorted = wa.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), wa.len(), "a payload word repeats");
    assert!(
        wa.iter().zip(&wb).all(|(x, y)| x != y),
        "two generations share a word"
    );
}

#[test]
fn classes_name_themselves() {
    let names: Vec<_> = Class::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        ["corrupt", "misdirected", "lost", "torn", "unwritten"]
    );
}
