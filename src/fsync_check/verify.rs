//! `iogauge fsync-check verify`: reads back every block the listener was told was synced.

use super::protocol::{self, Run, ACK, MESSAGE, PRE};
use crate::cli::FsyncVerifyArgs;
use crate::units;
use anyhow::{bail, Context, Result};
use iogauge_verify::{check, Verdict};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

/// What the listener knows of one block: the last generation whose sync returned, and the
/// last one announced (newer while a write was in flight at the cut).
#[derive(Default, Clone, Copy)]
struct Known {
    acked: u64,
    announced: u64,
}

/// What the read-back found: of `total` acknowledged writes, how many were `lost`, and the
/// first lost block's offset with what it held instead.
pub struct Outcome {
    pub total: u64,
    pub lost: u64,
    pub first: Option<(u64, Verdict)>,
}

pub fn run(args: &FsyncVerifyArgs) -> Result<Outcome> {
    let name = protocol::target_name(&args.target)?;
    // The writer's run id, as stamped in the target itself: the listener hands back that
    // writer's record and no other, so nobody else's record can judge this file.
    let hello = match stamped_run_id(&args.target) {
        Some(id) => format!("verify-id {id:016x} {name}"),
        None => format!("verify {name}"),
    };
    let (mut reader, rest) = protocol::connect(&args.to, &hello)?;
    let (bytes, run) = rest
        .split_once(' ')
        .and_then(|(n, r)| Some((n.parse::<usize>().ok()?, Run::parse(r)?)))
        .with_context(|| format!("the listener at {} answered {rest:?}", args.to))?;
    let mut messages = vec![0u8; bytes];
    reader
        .read_exact(&mut messages)
        .with_context(|| format!("the listener at {} broke off", args.to))?;

    let mut known: HashMap<u64, Known> = HashMap::new();
    for m in messages.chunks_exact(MESSAGE) {
        let (kind, offset, generation) = protocol::parse(m);
        let k = known.entry(offset).or_default();
        match kind {
            PRE => k.announced = k.announced.max(generation),
            ACK => k.acked = k.acked.max(generation),
            _ => bail!("the listener's record for {name} is damaged"),
        }
    }
    let mut offsets: Vec<u64> = known
        .iter()
        .filter(|(_, k)| k.acked > 0)
        .map(|(&o, _)| o)
        .collect();
    offsets.sort_unstable();
    let total = offsets.len() as u64;
    if total == 0 {
        bail!(
            "the listener knows no synced write to {}; run `iogauge fsync-check write` first",
            args.target.display()
        );
    }

    // After a real cut the file may be gone or short: what is missing reads as zeros.
    let file = File::open(&args.target).ok();
    if file.is_none() {
        say!(
            "fsync-check: {} is gone: every block reads as never written",
            args.target.display()
        );
    }
    let mut buf = vec![0u8; run.block as usize];
    let (mut lost, mut first) = (0u64, None);
    let (mut in_flight, mut landed, mut mixed) = (0u64, 0u64, 0u64);
    for &offset in &offsets {
        let k = known[&offset];
        read_block(file.as_ref(), &mut buf, offset)?;
        let v = check(&buf, &run.key, offset, Some(k.acked));
        let newer_in_flight = k.announced > k.acked;
        if newer_in_flight {
            in_flight += 1;
        }
        let durable = match v {
            Verdict::Ok { generation } => {
                if generation > k.acked {
                    landed += 1;
                }
                true
            }
            // A write in flight at the cut may leave part of its block new, part old.
            Verdict::Torn {
                first: Some(a),
                other: Some(b),
                ..
            } if newer_in_flight && a.min(b) >= k.acked => {
                mixed += 1;
                true
            }
            _ => false,
        };
        if !durable {
            lost += 1;
            first.get_or_insert((offset, v));
        }
    }
    if in_flight > 0 {
        say!(
            "fsync-check: {} blocks were being rewritten at the cut: {} hold the new version, {} a mix, {} the old (all allowed)",
            units::count(in_flight as f64),
            units::count(landed as f64),
            units::count(mixed as f64),
            units::count((in_flight - landed - mixed) as f64)
        );
    }
    Ok(Outcome { total, lost, first })
}

fn read_block(file: Option<&File>, buf: &mut [u8], offset: u64) -> Result<()> {
    let mut done = 0;
    if let Some(f) = file {
        while done < buf.len() {
            match f.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e).with_context(|| format!("reading offset {offset}")),
            }
        }
    }
    buf[done..].fill(0);
    Ok(())
}

/// The run id of the first intact stamped sector among the target's first MiB, if any.
fn stamped_run_id(target: &std::path::Path) -> Option<u64> {
    let file = File::open(target).ok()?;
    let mut buf = vec![0u8; iogauge_verify::SECTOR];
    (0..256u64).find_map(|i| {
        file.read_exact_at(&mut buf, i * iogauge_verify::SECTOR as u64)
            .ok()?;
        iogauge_verify::run_id_of(&buf)
    })
}
