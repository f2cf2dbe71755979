//! `iogauge fsync-check write`: random blocks, one sync each, every one announced to the
//! listener before the write and acknowledged to it after the sync returned.

use super::protocol::{self, Run, ACK, PRE};
use crate::cli::{FsyncSync, FsyncWriteArgs};
use crate::error::usage;
use crate::units;
use anyhow::{bail, Context, Result};
use iogauge_verify::{stamp, RunKey, SECTOR};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// Block 0 of a target starts with this, so a later `write` knows the file is its own to
/// overwrite. Data blocks are 1 and up.
const MARK: &[u8] = b"iogauge fsync-check target\n";
const PROGRESS: Duration = Duration::from_secs(5);

pub fn run(args: &FsyncWriteArgs) -> Result<()> {
    let block = args.block;
    if block == 0 || !block.is_multiple_of(SECTOR as u64) {
        bail!(usage(format!(
            "--block {}: must be a multiple of 4KiB, e.g. 16k",
            args.block
        )));
    }
    let blocks = args.size / block;
    if blocks < 2 {
        bail!(usage(format!(
            "--size {}: must hold at least two blocks of {}; e.g. --size 256MiB",
            units::iec(args.size),
            units::iec(block)
        )));
    }
    let name = protocol::target_name(&args.target)?;
    let existed = std::fs::symlink_metadata(&args.target).is_ok();
    let file = open_target(args, blocks * block)?;

    let key = RunKey {
        id: fastrand::u64(..),
        seed: fastrand::u64(..),
    };
    let run = Run {
        key,
        block,
        name: name.clone(),
    };
    let (reader, _) = match protocol::connect(&args.to, &format!("write {}", run.line())) {
        Ok(c) => c,
        Err(e) => {
            // Nothing was written yet: a file this run created goes, so an unreachable
            // listener leaves no 256 MiB behind.
            if !existed {
                let _ = std::fs::remove_file(&args.target);
            }
            return Err(e);
        }
    };
    let mut listener = reader.into_inner();

    say!(
        "fsync-check: writing {} blocks at random in {} ({} of {} blocks) with {}; listener at {}",
        units::iec(block),
        args.target.display(),
        units::iec(blocks * block),
        units::count(blocks as f64),
        sync_name(args.sync),
        args.to
    );
    crate::interrupt::measuring();

    let mut buf = vec![0u8; block as usize];
    let mut covered = vec![0u64; (blocks as usize).div_ceil(64)];
    let mut distinct = 0u64;
    let mut rng = fastrand::Rng::with_seed(key.seed);
    let start = Instant::now();
    let mut next_report = start + PROGRESS;
    let mut acked = 0u64;
    let lost_listener = |e: std::io::Error| {
        anyhow::anyhow!(
            "the listener at {} stopped answering ({e}); writes it was not told about prove \
             nothing, so restart it and this write",
            args.to
        )
    };
    let stop = loop {
        if args.count.is_some_and(|n| acked >= n) {
            break None;
        }
        if let Some(sig) = crate::interrupt::requested() {
            break Some(sig);
        }
        let now = Instant::now();
        if args.time.is_some_and(|t| now - start >= t) {
            break None;
        }
        if now >= next_report {
            progress(acked, now - start, distinct, blocks, block);
            next_report = now + PROGRESS;
        }

        let k = rng.u64(1..blocks);
        let offset = k * block;
        // Generations are unique across the run, so a block from any earlier write is older.
        let generation = acked + 1;
        stamp(&mut buf, &key, offset, generation);
        listener
            .write_all(&protocol::message(PRE, offset, generation))
            .map_err(lost_listener)?;
        file.write_all_at(&buf, offset)
            .with_context(|| format!("writing {} at offset {offset}", args.target.display()))?;
        match args.sync {
            FsyncSync::Fsync => file.sync_all(),
            FsyncSync::Fdatasync => file.sync_data(),
            FsyncSync::Odsync => Ok(()),
        }
        .with_context(|| format!("{} of {}", sync_name(args.sync), args.target.display()))?;
        listener
            .write_all(&protocol::message(ACK, offset, generation))
            .map_err(lost_listener)?;
        acked += 1;
        let (w, bit) = ((k / 64) as usize, 1u64 << (k % 64));
        if covered[w] & bit == 0 {
            covered[w] |= bit;
            distinct += 1;
        }
    };
    progress(acked, start.elapsed(), distinct, blocks, block);
    say!(
        "fsync-check: after a power cut and reboot, run: iogauge fsync-check verify {} --to {}",
        args.target.display(),
        args.to
    );
    match stop {
        Some(sig) => Err(crate::error::Interrupted(sig).into()),
        None => Ok(()),
    }
}

fn progress(acked: u64, elapsed: Duration, distinct: u64, blocks: u64, block: u64) {
    let rate = acked as f64 / elapsed.as_secs_f64().max(1e-9);
    say!(
        "fsync-check: {} writes synced in {} ({} syncs/s); coverage {:.1} % ({} of {} blocks of {})",
        units::count(acked as f64),
        units::duration(elapsed),
        units::count(rate),
        100.0 * distinct as f64 / (blocks - 1) as f64,
        units::count(distinct as f64),
        units::count((blocks - 1) as f64),
        units::iec(block)
    );
}

fn sync_name(s: FsyncSync) -> &'static str {
    match s {
        FsyncSync::Fsync => "fsync",
        FsyncSync::Fdatasync => "fdatasync",
        FsyncSync::Odsync => "O_DSYNC",
    }
}

/// Opens (or creates) the target, refusing anything that is not a regular file fsync-check
/// may write, and makes its size and mark durable before the first block.
fn open_target(args: &FsyncWriteArgs, size: u64) -> Result<File> {
    let path = &args.target;
    crate::target::gate::kept_file("fsync-check's target", path)?;
    let mut opts = OpenOptions::new();
    opts.read(true).write(true);
    if args.sync == FsyncSync::Odsync {
        opts.custom_flags(libc::O_DSYNC);
    }
    let meta = std::fs::metadata(path);
    let file = match meta {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let f = opts
                .clone()
                .create_new(true)
                .open(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            f.set_len(size)?;
            f
        }
        Err(e) => return Err(e).with_context(|| format!("{}", path.display())),
        Ok(m) if !m.file_type().is_file() => bail!(usage(format!(
            "{}: not a regular file; fsync-check writes only files — name a new file on the \
             file system of the drive under test",
            path.display()
        ))),
        Ok(m) => {
            if !ours(path) && !args.allow_overwrite {
                bail!(usage(format!(
                    "{} exists and fsync-check did not create it; name a new file, or pass \
                     --allow-overwrite to destroy its contents",
                    path.display()
                )));
            }
            let f = opts
                .open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            if m.len() < size {
                f.set_len(size).with_context(|| {
                    format!(
                        "{} is {} and cannot grow to --size {}; pass a smaller --size",
                        path.display(),
                        units::iec(m.len()),
                        units::iec(size)
                    )
                })?;
            }
            f
        }
    };
    let mut mark = vec![0u8; SECTOR];
    mark[..MARK.len()].copy_from_slice(MARK);
    file.write_all_at(&mark, 0)?;
    file.sync_all()
        .with_context(|| format!("fsync of {}", path.display()))?;
    // The file's name must survive the cut too.
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        File::open(dir).and_then(|d| d.sync_all()).ok();
    }
    Ok(file)
}

fn ours(path: &Path) -> bool {
    let mut head = [0u8; MARK.len()];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == MARK)
}
