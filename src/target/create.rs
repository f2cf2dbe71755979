//! A test file iogauge creates (or several, for fio's `nrfiles`): checked before anything is
//! written (`to_create`), made with O_EXCL, checked to take O_DIRECT, filled with incompressible
//! data (with progress), and flushed out of the page cache.

use super::*;

/// Checks a test file iogauge is to create, without creating it.
pub(super) fn to_create<'a>(req: &Request<'a>, path: PathBuf) -> Result<Resolved<'a>> {
    let size = req.size.map_or(req.created_size, |s| s + req.offset);
    if size < 4096 {
        return Err(usage(format!(
            "--size {size} is smaller than one 4KiB block; give e.g. --size 1GiB"
        )));
    }
    // Whole 4 KiB blocks, so direct IO can reach every byte.
    let size = size - size % 4096;
    if req.offset >= size {
        return Err(usage(format!(
            "--offset {} is at or past the end of the {} test file; give a larger --size",
            units::iec(req.offset),
            units::iec(size)
        )));
    }
    let files = req.files.max(1);
    // The other files of several: the first's name and their number. A name something holds
    // already (a file or a link planted there) is refused, never opened.
    let more: Vec<PathBuf> = (1..files)
        .map(|i| {
            let mut name = path.clone().into_os_string();
            name.push(format!(".{i}"));
            PathBuf::from(name)
        })
        .collect();
    if let Some(p) = more.iter().find(|p| std::fs::symlink_metadata(p).is_ok()) {
        return Err(usage(format!(
            "{} already exists, where iogauge would put one of its {files} test files; remove it or give another directory",
            p.display()
        )));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(usage(format!(
            "directory {} does not exist; create it first or give another path",
            parent.display()
        )));
    }
    let dir = match File::open(&parent) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(not_writable(
                &parent,
                "the test file",
                "give a directory you may write to, or run as a user who may",
            ))
        }
        d => d.ok(),
    };
    // The directory is named, not the test file's made-up name: it is what the user typed
    // (or the directory of the path they typed) and what they must change.
    let read_only = || {
        usage(format!(
            "cannot create the test file in {}: it is on a read-only file system; give a directory on a writable one (or remount it read-write: mount -o remount,rw)",
            parent.display()
        ))
    };
    if let Some(true) = dir.as_ref().and_then(|d| sys::read_only(d).ok()) {
        return Err(read_only());
    }
    match dir.as_ref().map(sys::may_create_in) {
        Some(Err(e)) if e.raw_os_error() == Some(libc::EROFS) => return Err(read_only()),
        Some(Err(e)) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(not_writable(
                &parent,
                "the test file",
                "give a directory you may write to, or run as a user who may",
            ))
        }
        _ => {}
    }
    if let Some(free) = dir.as_ref().and_then(|d| sys::free_bytes(d).ok()) {
        // All the files together, each written from the offset on (a hole before it).
        let all = (size - filled_from(req.offset)).saturating_mul(u64::from(files));
        if free < all {
            let what = match files {
                1 => path.display().to_string(),
                n => format!(
                    "{n} test files of {} in {}",
                    units::iec(size),
                    parent.display()
                ),
            };
            return Err(usage(format!(
                "{what} need{} {} but only {} is free there; give a smaller --size or another directory",
                if files == 1 { "s" } else { "" },
                units::iec(all),
                units::iec(free)
            )));
        }
    }
    Ok(Resolved::Create {
        req: *req,
        logical_block: iogauge_sysinfo::logical_block_size_for(&parent).unwrap_or(512),
        path,
        more,
        size,
    })
}

pub(super) fn create(
    req: &Request,
    path: PathBuf,
    size: u64,
    logical_block: u32,
    direct: bool,
) -> Result<Target> {
    // A test file is in the crash ledger until the run is over: a kill -9 leaves it named for
    // the next command and `iogauge clean`. Written before the name exists (by path and time,
    // as the inode is not known yet), so no kill leaves a file the ledger does not name.
    let before = crate::ledger::TestFile::before_create(&path);
    crate::ledger::add(before.clone());
    // O_EXCL: a file or a link already at the name (planted in a shared directory) is never
    // opened; O_NOFOLLOW says so for the last component explicitly.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| {
            crate::ledger::remove(&before);
            open_error(&path, e, false)
        })?;
    let identity = file.metadata().ok().map(|m| (m.dev(), m.ino()));
    // The whole entry in its place before a quick exit can know the file, so the exit crosses
    // off exactly what it removes.
    let entry = match identity {
        Some(id) => {
            let e = crate::ledger::TestFile::entry(&path, id);
            crate::ledger::replace(&before, e.clone());
            e
        }
        None => before,
    };
    interrupt::register_created(&path, identity, req.keep);
    let mut target = Target {
        logical_block,
        path,
        kind: Kind::File,
        created: true,
        offset: req.offset,
        range_bytes: size - req.offset,
        total_bytes: size,
        data_bytes: Some(size - req.offset),
        keep: req.keep,
        identity,
        ledger: Some(entry),
        may_write: true,
        handle: file,
        claim: None,
        device: None,
        devices: Vec::new(),
        more: Vec::new(),
    };
    // From here on `target` removes the file on every exit path.
    if direct {
        // Before the fill: a file system that refuses O_DIRECT (tmpfs) is told at once.
        if let Err(e) = target.open(false, true, false) {
            target.keep = false;
            return Err(e);
        }
    }
    fill(&target, size, req).inspect_err(|_| target.keep = false)?;
    Ok(target)
}

/// Where a new file's fill starts: the 4 KiB block of the offset. The bytes before it are a
/// hole no IO of the job reaches (fio's offset=524z on a scratch file needs its 2 GiB, not
/// the 131 GiB before them).
fn filled_from(offset: u64) -> u64 {
    offset - offset % 4096
}

/// Writes fresh pseudo-random data from the offset's block to `size`, chunk by chunk, not part
/// of any measurement. O_DIRECT when the file system allows, so the fill leaves no page cache
/// behind.
fn fill(target: &Target, size: u64, req: &Request) -> Result<()> {
    let path = target.path.as_path();
    let (mut file, used_direct) = match target.open(true, true, false) {
        Ok(f) => (f, true),
        Err(_) => (target.open(true, false, false)?, false),
    };
    // The first write, at the offset's block, leaves a hole before it: never written.
    let from = filled_from(req.offset);
    let mut pool = BufferPool::new(1, FILL_CHUNK, 4096, req.seed)
        .ok_or_else(|| anyhow::anyhow!("out of memory for the fill buffer"))?;
    let tty = io::stderr().is_terminal() && !req.quiet;
    let what = format!(
        "Filling {} ({}) with random data",
        path.display(),
        units::iec(size - from)
    );
    if !req.quiet {
        // On a terminal one line that updates itself; elsewhere (a log) a line every
        // PROGRESS_EVERY, so a long fill is never silent.
        match tty {
            true => say_part!("{what} ..."),
            false => say!("{what} ..."),
        }
    }
    let start = Instant::now();
    let mut written = from;
    let mut last_report = start;
    let mut chunk_no = 0u64;
    while written < size {
        if let Some(sig) = interrupt::requested() {
            if tty {
                say!("");
            }
            return Err(crate::error::Interrupted(sig).into());
        }
        let n = (size - written).min(FILL_CHUNK as u64) as usize;
        let buf = &mut pool.slot_mut(0)[..n];
        match &req.verify {
            // Stamped sectors are as incompressible as random ones, and checkable.
            Some(key) => {
                let whole = n / iogauge_verify::SECTOR * iogauge_verify::SECTOR;
                iogauge_verify::stamp(&mut buf[..whole], key, written, 0);
                buf[whole..].fill(0);
            }
            None => iogauge_engine::fill_random(
                buf,
                req.seed ^ chunk_no.wrapping_mul(0x2545_F491_4F6C_DD1D),
            ),
        }
        if let Err(e) = write_all_at(&file, buf, written) {
            if tty {
                say!(" failed");
            }
            return Err(fill_error(path, e, size));
        }
        written += n as u64;
        chunk_no += 1;
        let every = if tty {
            std::time::Duration::from_millis(250)
        } else {
            PROGRESS_EVERY
        };
        if !req.quiet && last_report.elapsed() >= every {
            last_report = Instant::now();
            let line = fill_progress(written - from, size - from, start.elapsed());
            match tty {
                true => say_part!("\r{what} ... {line}{}", crate::ui::ERASE_LINE),
                false => say!("  {line}"),
            }
        }
    }
    file.sync_all().map_err(|e| fill_error(path, e, size))?;
    if !used_direct {
        let _ = sys::drop_file_cache(&file);
    }
    file.flush().ok();
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    if !req.quiet {
        let done = format!(
            "done in {} ({})",
            units::duration(start.elapsed()),
            units::bw((size - from) as f64 / secs)
        );
        match tty {
            true => say!("\r{what} ... {done}{}", crate::ui::ERASE_LINE),
            false => say!("  {done}"),
        }
    }
    Ok(())
}

/// How often a fill that is not on a terminal says how far it got.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// "35% · 256.0 MiB/s · about 25 s left".
fn fill_progress(written: u64, size: u64, took: std::time::Duration) -> String {
    let rate = written as f64 / took.as_secs_f64().max(1e-9);
    let left = (size - written) as f64 / rate.max(1.0);
    format!(
        "{:.0}% · {} · about {} left",
        written as f64 * 100.0 / size as f64,
        units::bw(rate),
        units::duration(std::time::Duration::from_secs_f64(left))
    )
}

fn write_all_at(file: &File, mut buf: &[u8], mut off: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    while !buf.is_empty() {
        match file.write_at(buf, off) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => {
                buf = &buf[n..];
                off += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn fill_error(path: &Path, e: io::Error, size: u64) -> anyhow::Error {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        anyhow::anyhow!(
            "no space left on the device while filling {} ({} needed); the partial file was removed; give a smaller --size or another directory",
            path.display(),
            units::iec(size)
        )
    } else {
        anyhow::anyhow!("writing {}: {e}", path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &Path, files: u32) -> Request<'_> {
        Request {
            path: Some(path),
            size: Some(1 << 20),
            created_size: 1 << 20,
            offset: 0,
            keep: false,
            allow_overwrite: true,
            writes: true,
            seed: 1,
            quiet: true,
            verify: None,
            files,
            name_tag: None,
        }
    }

    // fio's nrfiles: several test files only in a directory, named by iogauge, each checked to
    // be free; a user's file is never one of them, whatever the flags.
    #[test]
    fn several_files_are_iogauges_own_in_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let Resolved::Create {
            path, more, size, ..
        } = resolve(&request(dir.path(), 3)).unwrap()
        else {
            panic!("a directory gets test files")
        };
        assert_eq!(size, 1 << 20, "each file's size");
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("iogauge-test."), "{name}");
        let names: Vec<String> = more
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
            .collect();
        assert_eq!(names, [format!("{name}.1"), format!("{name}.2")]);
        // Made, filled and removed together: tests/fio.rs and tests/safety.rs, which keep
        // their crash ledgers in their own directories.
        // A file (or device) is refused, even with --allow-overwrite.
        let user = dir.path().join("data");
        std::fs::write(&user, b"precious").unwrap();
        let e = resolve(&request(&user, 2)).err().unwrap().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = resolve(&request(&dir.path().join("missing"), 2))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn fill_progress_says_share_rate_and_time_left() {
        let line = fill_progress(3 << 30, 10 << 30, std::time::Duration::from_secs(12));
        // 3 GiB in 12 s: 256 MiB/s, 7 GiB left ≈ 28 s.
        assert!(line.starts_with("30% · 256.0 MiB/s"), "{line}");
        assert!(line.contains("about 28"), "{line}");
    }
}
