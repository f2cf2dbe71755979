//! `iogauge verify TARGET`: read back a target a `--verify` run left behind, with the key and the
//! generations the results database kept for it.

use crate::cli::VerifyArgs;
use crate::error::usage;
use crate::exec::verify::check_kept;
use crate::store::Store;
use crate::units;
use anyhow::{anyhow, Context, Result};
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;

/// Runs looked through for the newest `--verify` run on the target.
const LOOK_BACK: u32 = 1000;

pub fn verify(args: &VerifyArgs) -> Result<()> {
    let path = std::fs::canonicalize(&args.target).map_err(|e| {
        usage(format!(
            "cannot open {}: {e}; give the file or device a `--verify` run wrote",
            args.target.display()
        ))
    })?;
    let store = Store::open_existing(args.db.path())?;
    let (id, doc) = match &args.run {
        Some(sel) => {
            let id = store.resolve(sel)?;
            (id, store.load(id)?)
        }
        None => newest_on(&store, &path)?,
    };
    let Some(run) = doc.verify.clone() else {
        return Err(usage(format!(
            "run {id} did not run with --verify, so its blocks carry nothing to check; give --run with a --verify run"
        )));
    };
    if std::fs::canonicalize(&run.path).ok().as_deref() != Some(path.as_path()) {
        return Err(usage(format!(
            "run {id} wrote {}, not {}; give the target it wrote or another --run",
            run.path,
            path.display()
        )));
    }
    let map = store.verify_map(id)?;
    let sample = args.sample.verify_sample.unwrap_or(1.0);
    // O_DIRECT, so the device is read and not a page cache the run may have left; a file
    // system without it (tmpfs) is read through the cache.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .or_else(|_| OpenOptions::new().read(true).open(&path))
        .with_context(|| format!("opening {}", path.display()))?;
    say!(
        "verifying {} of {} against run {id} ({}) ...",
        units::iec(run.range_bytes),
        path.display(),
        doc.started_at
    );
    let tally = check_kept(&file, &run, map.clone(), sample)?;
    crate::ui::out(&crate::present::verify::text(
        &tally,
        id,
        map.as_ref().map(|(block, _)| *block),
        run.filled,
    ))?;
    if tally.is_clean() {
        return Ok(());
    }
    Err(anyhow!(
        "verify failed: {} of {} blocks are not what run {id} wrote",
        units::count(tally.failed() as f64),
        units::count(tally.checked() as f64)
    ))
}

/// The newest run with `--verify` whose target is `path`.
fn newest_on(store: &Store, path: &std::path::Path) -> Result<(i64, crate::model::RunDoc)> {
    for row in store.runs(LOOK_BACK)? {
        let doc = store.load(row.id)?;
        let on = doc
            .verify
            .as_ref()
            .and_then(|v| std::fs::canonicalize(&v.path).ok());
        if on.as_deref() == Some(path) {
            return Ok((row.id, doc));
        }
    }
    Err(usage(format!(
        "no --verify run on {} in the results database; give --run, or --db for another database",
        path.display()
    )))
}
