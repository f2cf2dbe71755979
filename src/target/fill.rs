//! The free-space filler (`sweep --fill`): a test file of iogauge's own beside the target that
//! brings the file system holding it to a level of use, because a flash device's write path
//! depends on how much of it is free (the MySQL-on-flash study ran one load at ~40% and ~80%
//! full and found "free space is vital").
//!
//! A level is used/size as statvfs counts it, `(f_blocks − f_bfree) / f_blocks`, what `df`
//! shows. The filler goes through the one gate (`resolve`, then `realize`: O_EXCL, the crash
//! ledger's entry before the first byte, incompressible data in 4 MiB writes, never fallocated,
//! since the device must see the writes; fsynced) and is removed as every test file is: on
//! drop, on Ctrl-C, and by `iogauge clean` after a kill.

use super::{resolve, Request, Target};
use crate::error::usage;
use crate::units;
use anyhow::Result;
use iogauge_engine::sys::Space;
use std::path::{Path, PathBuf};

/// The levels `--fill` takes, in percent: below 1% nothing is filled; above 95% a file system
/// runs out of room for its own metadata and the workload's writes, and measures ENOSPC.
pub const LEVELS: std::ops::RangeInclusive<f64> = 1.0..=95.0;

/// The levels `--fill` gave, in percent, each within [`LEVELS`]; none without the option.
pub fn levels(list: Option<&str>) -> Result<Vec<f64>> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let levels =
        units::parse_list(list, units::parse_percent).map_err(|e| usage(format!("--fill {e}")))?;
    match levels.iter().find(|l| !LEVELS.contains(l)) {
        Some(bad) => Err(usage(format!(
            "--fill {bad}% is outside 1–95%; give levels of use between them, e.g. --fill 40%,80%"
        ))),
        None => Ok(levels),
    }
}

/// Bytes the filler is rounded up to: whole 4 KiB blocks, as every test file is.
const GRAIN: u64 = 4096;

/// The share of the file system in use, in percent.
pub fn level(s: &Space) -> f64 {
    level_with(s, 0)
}

/// The share in use once `adds` more bytes are (a test file still to be made), in percent.
pub fn level_with(s: &Space, adds: u64) -> f64 {
    let used = s
        .blocks
        .saturating_sub(s.free)
        .saturating_add(adds.div_ceil(s.block.max(1)));
    used as f64 * 100.0 / s.blocks.max(1) as f64
}

/// Bytes to write so that the file system of `s`, once `adds` more bytes are used, is `pct`
/// percent used: counted in the file system's blocks (the level's share of them rounded up to
/// a whole block), written in whole 4 KiB blocks, 0 when it is there already. `Err` holds the
/// level it would be at, when that is above `pct`: a filler cannot take use away.
pub fn bytes_to(s: &Space, pct: f64, adds: u64) -> std::result::Result<u64, f64> {
    let block = s.block.max(1);
    let used = s
        .blocks
        .saturating_sub(s.free)
        .saturating_add(adds.div_ceil(block));
    let want = (pct / 100.0 * s.blocks as f64).ceil() as u64;
    match used > want {
        true => Err(level_with(s, adds)),
        false => Ok(((want - used) * block).div_ceil(GRAIN) * GRAIN),
    }
}

/// The directory the filler goes in: the target's own when it is one, else the one holding
/// it (the current directory without a target). A block device has no file system to fill.
pub fn beside(target: Option<&Path>) -> Result<PathBuf> {
    let path = target.unwrap_or(Path::new("."));
    if super::is_block_device(path) {
        return Err(usage(format!(
            "--fill fills the file system holding the target, and {} is a raw block device: its IO reaches the device with no file system in between to fill; give a directory or a file on the file system to fill",
            path.display()
        )));
    }
    if path.is_dir() {
        return Ok(path.to_path_buf());
    }
    Ok(match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    })
}

/// The size and use of the file system holding `dir`, read without writing.
pub fn space_of(dir: &Path) -> Result<Space> {
    std::fs::File::open(dir)
        .and_then(|d| iogauge_engine::sys::space(&d))
        .map_err(|e| {
            usage(format!(
                "--fill: the file system holding {} cannot be measured ({e}); give a target on a disk's file system",
                dir.display()
            ))
        })
}

/// What `--fill` writes at each level, checked before any byte is written (the sweep's first
/// step, dry run or not; the plan checked each is within [`LEVELS`]): none already passed by the use now plus
/// the `adds` bytes the run itself makes (its test file), and room for the filler.
pub fn plan(levels: &[f64], dir: &Path, adds: u64) -> Result<(Space, Vec<u64>)> {
    let s = space_of(dir)?;
    Ok((s, plan_on(&s, levels, dir, adds)?))
}

/// [`plan`] on the space `s` of the file system holding `dir`.
fn plan_on(s: &Space, levels: &[f64], dir: &Path, adds: u64) -> Result<Vec<u64>> {
    let now = level(s);
    // A test file that takes the file system past every level leaves nothing to fill: the size
    // is what to change, not the levels.
    let with = level_with(s, adds);
    if with > *LEVELS.end() {
        return Err(usage(format!(
            "--fill: with the run's test file of {} the file system holding {} ({} in all, {now:.1}% used now) would be {with:.1}% used, above the highest level of {}%; give a smaller --size",
            units::iec(adds),
            dir.display(),
            units::iec(s.blocks.saturating_mul(s.block)),
            LEVELS.end()
        )));
    }
    levels
        .iter()
        .map(|&l| match bytes_to(s, l, adds) {
            Ok(b) if b.saturating_add(adds) > s.avail.saturating_mul(s.block) => Err(usage(format!(
                "--fill {l}% needs {} more on the file system holding {} and only {} is free there; give a lower level",
                units::iec(b.saturating_add(adds)),
                dir.display(),
                units::iec(s.avail.saturating_mul(s.block))
            ))),
            Ok(b) => Ok(b),
            Err(at) => Err(usage(format!(
                "the file system holding {} is already {now:.1}% used ({at:.1}% with the run's test file of {}), above --fill {l}%; give levels above {}%, or free space there first",
                dir.display(),
                units::iec(adds),
                at.ceil()
            ))),
        })
        .collect::<Result<Vec<u64>>>()
}

/// Fills the file system holding `dir` to `pct` percent with a filler beside the target; the
/// filler (none when the level is reached already) and the level reached, measured once it is
/// written and synced.
pub fn fill_to(dir: &Path, pct: f64, seed: u64) -> Result<(Option<Target>, f64)> {
    let bytes = match bytes_to(&space_of(dir)?, pct, 0) {
        Ok(b) => b,
        Err(at) => anyhow::bail!(
            "the file system holding {} is {at:.1}% used, above --fill {pct}%, before the filler is written (something else wrote to it meanwhile)",
            dir.display()
        ),
    };
    let filler = match bytes {
        0 => None,
        _ => {
            let path = fresh(dir);
            let req = Request {
                path: Some(&path),
                size: Some(bytes),
                created_size: bytes,
                offset: 0,
                keep: false,
                allow_overwrite: false,
                writes: true,
                // Not the test file's data: a device that deduplicates must store both.
                seed: seed ^ 0x5EED_F111,
                quiet: false,
                verify: None,
                files: 1,
                name_tag: None,
            };
            Some(resolve(&req)?.realize(false)?)
        }
    };
    Ok((filler, level(&space_of(dir)?)))
}

/// `iogauge-fill.PID.N` in `dir`, a name nothing holds yet (the gate's O_EXCL refuses one
/// taken between now and the create).
fn fresh(dir: &Path) -> PathBuf {
    let pid = std::process::id();
    (1u32..)
        .map(|n| dir.join(format!("iogauge-fill.{pid}.{n}")))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .expect("an endless supply of names")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 512 MiB in 4 KiB blocks, `used` of them in use.
    fn fs(used: u64) -> Space {
        let blocks = 131_072;
        Space {
            block: 4096,
            blocks,
            free: blocks - used,
            avail: blocks - used,
        }
    }

    #[test]
    fn the_filler_brings_use_to_the_level() {
        // 10% used (13,107.2 blocks: 13,108), to 40%: 30% more, whole blocks.
        let s = fs(13_108);
        let b = bytes_to(&s, 40.0, 0).unwrap();
        assert_eq!(b % 4096, 0);
        let after = Space {
            free: s.free - b / 4096,
            ..s
        };
        assert!((level(&after) - 40.0).abs() < 0.01, "{}", level(&after));
        // What the run adds first is counted: its test file of 64 MiB leaves less to fill.
        let with = bytes_to(&s, 40.0, 64 << 20).unwrap();
        assert_eq!(b - with, 64 << 20);
        assert!((level(&fs(0)) - 0.0).abs() < f64::EPSILON);
        assert!((level(&fs(131_072)) - 100.0).abs() < f64::EPSILON);
    }

    #[test]
    fn a_near_miss_under_the_level_fills_a_block_and_over_it_is_refused() {
        // 40% of 131,072 blocks is 52,428.8: one block short of 52,429 fills that block.
        assert_eq!(bytes_to(&fs(52_428), 40.0, 0), Ok(4096));
        // 52,429 blocks is 40.0006% in use: the level is reached, nothing to write.
        assert_eq!(bytes_to(&fs(52_429), 40.0, 0), Ok(0));
        // One block more is over the level: refused with the level it is at.
        let over = bytes_to(&fs(52_430), 40.0, 0).unwrap_err();
        assert!(over > 40.0 && over < 40.01, "{over}");
        // And a test file that takes it over the level is refused the same way.
        assert!(bytes_to(&fs(52_000), 40.0, 4 << 20).is_err());
    }

    #[test]
    fn a_test_file_that_leaves_no_level_to_fill_asks_for_a_smaller_size() {
        // 512 MiB in all, nearly empty: a test file of 1 GiB does not fit at all, one of
        // 480 MiB leaves it 93.8% used (under the highest level) and is planned.
        let s = fs(10);
        let e = plan_on(&s, &[40.0], Path::new("mnt"), 1 << 30).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("test file of 1 GiB") && e.contains("smaller --size"),
            "{e}"
        );
        assert!(!e.contains("levels above"), "{e}");
        let e = plan_on(&s, &[40.0], Path::new("mnt"), 480 << 20).unwrap_err();
        assert!(e.to_string().contains("levels above 94%"), "{e}");
        assert!(plan_on(&s, &[95.0], Path::new("mnt"), 480 << 20).is_ok());
    }

    #[test]
    fn a_block_device_has_no_file_system_to_fill() {
        let Some(dev) = std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| super::super::is_block_device(p))
        else {
            return;
        };
        let e = beside(Some(&dev)).unwrap_err().to_string();
        assert!(e.contains("raw block device"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(beside(Some(dir.path())).unwrap(), dir.path());
        assert_eq!(
            beside(Some(&dir.path().join("new"))).unwrap(),
            dir.path().to_path_buf()
        );
    }
}
