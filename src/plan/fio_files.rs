//! What fio's jobs name before they are planned: each job's size (a share of its file, or
//! fill_device's free space), and the files they use, each a target.

use super::*;
use std::path::Path;

/// size=N%: a share of the file or device the job names, as fio takes it, in whole blocks.
pub(super) fn resolve_shares(jobs: &mut [Job]) -> Result<()> {
    for j in jobs {
        let Some(pct) = j.size_pct else { continue };
        let total = j.path.as_deref().and_then(crate::target::existing_size).ok_or_else(|| {
            usage(format!(
                "{}: size={} is a share of an existing file or device, and job {} names none; give filename= or a size, e.g. size=4g",
                j.at("size"),
                j.typed("size"),
                j.name
            ))
        })?;
        let bs = j.bs.max(1);
        j.size = Some((total as f64 * pct / 100.0) as u64 / bs * bs);
    }
    Ok(())
}

/// What fill_device=1 keeps free on a file system: fio writes until a write fails for lack of
/// space, where iogauge stops short of it so the run's own files (its results, a server's
/// logs) still have room.
pub const FILL_RESERVE: (u64, u64) = (100, 1 << 20);

/// fill_device=1: the job writes from its offset to the end of the device it names, or over
/// the space free on the file system that will hold its new file, less 1% (at least 1 MiB), in
/// whole blocks, as counted now.
pub(super) fn resolve_fill(jobs: &mut [Job]) -> Result<()> {
    for j in jobs.iter_mut().filter(|j| j.fill_device) {
        let refuse = |why: &str| {
            Err(usage(format!(
                "{}: fill_device=1 {why}",
                j.at("fill_device")
            )))
        };
        if j.has("size") || j.has("filesize") {
            return refuse("and a size both say how much to write; leave one out");
        }
        if !j.rw.writes(j.read_pct) {
            return refuse(
                "on a job that only reads: fio would first write the file system full for it; give size=, or a writing job before it",
            );
        }
        let path = j.path.clone().unwrap_or_else(|| PathBuf::from("."));
        let bs = j.bs.max(1);
        let size = match crate::target::existing_size(&path) {
            Some(total) if crate::target::is_block_device(&path) => {
                total.saturating_sub(j.offset)
            }
            Some(_) => {
                return refuse(&format!(
                    "on {}, a file that exists: fio would remove it and write a new one until the file system is full, and iogauge removes no file it did not create; give a new filename=",
                    path.display()
                ))
            }
            None => {
                // A directory is where iogauge makes its test file.
                let dir = match path.parent() {
                    _ if path.is_dir() => path.clone(),
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let free = std::fs::File::open(&dir)
                    .and_then(|d| iogauge_engine::sys::free_bytes(&d))
                    .map_err(|e| {
                        usage(format!(
                            "{}: fill_device=1: the space free in {} cannot be read ({e}); give size=",
                            j.at("fill_device"),
                            dir.display()
                        ))
                    })?;
                free - (free / FILL_RESERVE.0).max(FILL_RESERVE.1).min(free)
            }
        };
        if size < bs {
            return refuse(&format!(
                "finds less than one block of {} to write on {}; give another filename=",
                units::bs_label(bs),
                path.display()
            ));
        }
        j.size = Some(size / bs * bs);
    }
    Ok(())
}

/// The files the jobs name, as fio opens each job's own: the first job's is the run's target,
/// and each other file a target of its own (a WAL file beside a data file), as large as its
/// largest job. Each job's target: `None` for the run's, else an index into the list. What
/// follows one file through a run (verify's stamps, several files per job, preconditioning)
/// is refused with more than one.
pub(super) fn files(
    jobs: &[Job],
    args: &FioArgs,
) -> Result<(Vec<StreamTarget>, Vec<Option<usize>>)> {
    // Two spellings of one file are one target, a file still to be made too (by its
    // directory's real path and its name).
    let key = |p: &Path| {
        std::fs::canonicalize(p)
            .or_else(|e| match (p.parent(), p.file_name()) {
                (Some(d), Some(n)) => std::fs::canonicalize(match d.as_os_str().is_empty() {
                    true => Path::new("."),
                    false => d,
                })
                .map(|d| d.join(n)),
                _ => Err(e),
            })
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let run = jobs[0].path.as_deref().map(key);
    let mut own: Vec<StreamTarget> = Vec::new();
    let mut on = Vec::with_capacity(jobs.len());
    for j in jobs {
        let Some(path) = j.path.as_deref().filter(|p| Some(key(p)) != run) else {
            on.push(None);
            continue;
        };
        let k = match own.iter().position(|t| key(&t.path) == key(path)) {
            Some(k) => k,
            None => {
                own.push(StreamTarget {
                    path: path.to_path_buf(),
                    size: None,
                });
                own.len() - 1
            }
        };
        own[k].size = own[k].size.max(span(j));
        on.push(Some(k));
    }
    let Some(other) = jobs
        .iter()
        .zip(&on)
        .find(|(_, k)| k.is_some())
        .map(|(j, _)| j)
    else {
        return Ok((own, on));
    };
    let refuse = |why: String| {
        Err(usage(format!(
            "{}: job {} uses {}, another file than job {}'s ({}), and {why}; put the jobs of each file in a job file of their own",
            other.at("filename"),
            other.name,
            other.typed("filename"),
            jobs[0].name,
            jobs[0].typed("filename")
        )))
    };
    if let Some(j) = jobs.iter().find(|j| j.verify) {
        return refuse(format!(
            "verify= ({}) stamps and checks the blocks of one file per run",
            j.at("verify")
        ));
    }
    if jobs[0].nrfiles > 1 {
        return refuse("nrfiles above 1 spreads a run over the files of one name".into());
    }
    if args.repeat.precondition {
        return refuse("--precondition writes the run's first file only".into());
    }
    Ok((own, on))
}

/// The bytes a job spans in each of its files: its size (split over nrfiles, in whole 4 KiB
/// blocks), and with offset_increment the clones' regions after the first (clone i starts
/// i × offset_increment in, as fio places it).
pub(super) fn span(j: &Job) -> Option<u64> {
    j.size.map(|s| {
        let s = match j.nrfiles {
            0 | 1 => s,
            n => s / u64::from(n) / 4096 * 4096,
        };
        let stride = j.offset_increment.filter(|_| j.numjobs > 1).unwrap_or(0);
        s.saturating_add(stride.saturating_mul(u64::from(j.numjobs - 1)))
    })
}
