//! The one gate every path iogauge is handed passes before anything is read or written there:
//! the target's (whose consent, mount and signature checks follow in `target`), and every
//! other one — the results database, `--output`, a report and its charts, man pages, a
//! sweep's mkfs and mount options, the files iogauge reads (job files, includes, suite files,
//! run documents, thresholds).
//!
//! The rules, and why:
//! - /proc and /sys are not storage, and /dev holds devices: only a target may be a block
//!   device (and the target gate decides whether it may be written). A results database or an
//!   output file named `/dev/loop2` would be written over the device's first blocks — an ext4
//!   superblock sits at byte 1024 — and `/dev/null` would leave `/dev/null-journal` behind.
//! - A target that does not exist directly under / is refused: iogauge would create a test file
//!   of that name at the root (README's `/data` placeholder, typed where there is no /data,
//!   made a 1 GiB file `/data`), which is never the file system the user meant to test.
//! - Anything that is not a regular file (a device, a FIFO, a socket) is refused as an output
//!   and as an input: a FIFO blocks a read forever, `/dev/zero` never ends.
//! - A file that backs a loop device is never written: that would write under whatever uses
//!   the loop device.
//! - Inputs are read up to a bound that is said when it is passed, so no file can make iogauge
//!   run out of memory.
//! - mkfs and mount options may not name a path: iogauge formats only the scratch device the
//!   user named and it checked (`mkfs.btrfs -f /dev/loop1 /dev/loop0` formats both).
//!
//! Links are followed before the checks, as opening the path would follow them, and only when
//! root or the invoking user owns them (`files::links`).

use crate::error::usage;
use anyhow::Result;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Largest job file, include, suite file or thresholds file iogauge reads: far beyond any
/// hand-written one (fio's own examples are under 4 KiB).
pub const TEXT_LIMIT: u64 = 4 << 20;
/// Largest run document iogauge reads (`report --from-json`): a day of one-second series in
/// many cells is tens of MiB.
pub const DOC_LIMIT: u64 = 256 << 20;

/// The path with every symbolic link and `..` resolved, as far as it exists; what does not
/// exist yet is appended as typed.
pub fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut base = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(base) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return abs,
        }
    }
}

/// The path as typed, and what it resolves to when a link or the working directory led
/// elsewhere.
fn shown(path: &Path, real: &Path) -> String {
    let typed = crate::units::printable(&path.display().to_string()).into_owned();
    match real == path {
        true => typed,
        false => format!(
            "{typed} (that is {})",
            crate::units::printable(&real.display().to_string())
        ),
    }
}

/// Whether a resolved path under /dev lies in a file system of its own mounted there
/// (/dev/shm's tmpfs), not in /dev itself: a file there is a file in memory, not a device
/// node beside the disks. Its directory must exist (a new file is made in one).
fn own_file_system_under_dev(real: &Path) -> bool {
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    real.starts_with("/dev")
        && real.parent().is_some_and(|dir| {
            dir != Path::new("/dev") && dev(dir).is_some() && dev(dir) != dev(Path::new("/dev"))
        })
}

/// The system tree a resolved path is under, if any.
fn system_root(real: &Path) -> Option<&'static str> {
    ["/proc", "/sys", "/dev"]
        .into_iter()
        .find(|r| real.starts_with(r))
}

/// A target may be a file, a directory or a block device; /proc and /sys are not storage, and
/// under /dev only block devices are (/dev/shm is memory, /dev/null discards). A link into them
/// is refused too, while /dev/disk/by-id/... (links to block devices) is fine. A missing path
/// directly under / is refused (see the rules above). The database commands pass here too.
pub fn target(path: &Path) -> Result<()> {
    super::files::links("the target", path)?;
    let real = resolved(path);
    let shown = shown(path, &real);
    if real.parent() == Some(Path::new("/"))
        && std::fs::symlink_metadata(&real).is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
    {
        return Err(usage(format!(
            "{shown} does not exist, and iogauge creates no test file at the root of the file system; give a directory on the file system to test (e.g. /mnt/ssd), or a file path inside one (e.g. /mnt/ssd/iogauge.test)"
        )));
    }
    match system_root(&real) {
        None => Ok(()),
        Some("/dev") => match std::fs::metadata(&real) {
            Ok(m) if m.file_type().is_block_device() => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(usage(format!(
                "{shown} does not exist; give an existing block device (see lsblk), or a file or directory on a mounted file system"
            ))),
            _ => Err(usage(format!(
                "{shown} is under /dev but is not a block device; give a block device (see lsblk), or a file or directory on a mounted file system"
            ))),
        },
        Some(root) => Err(usage(format!(
            "{shown} is under {root}, which is not storage; give a file, directory or block device"
        ))),
    }
}

/// What a file type is, in words, for one that is not a regular file or a directory.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    if ft.is_block_device() {
        "a block device"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// A file iogauge writes that is not a target: the results database (`flag` "--db"), an
/// output, a report. It may be missing (it is then created) or an existing regular file that
/// no loop device uses; never a device, FIFO, socket or directory, and never under /dev, /proc
/// or /sys. `fix` says what to give instead.
pub fn output_file(flag: &str, path: &Path, fix: &str) -> Result<()> {
    super::files::links(flag, path)?;
    let real = resolved(path);
    let shown = shown(path, &real);
    if let Some(root) = system_root(&real).filter(|_| !own_file_system_under_dev(&real)) {
        return Err(usage(format!(
            "{flag} {shown} is under {root}, which holds {}, not files iogauge may write; {fix}",
            match root {
                "/dev" => "devices",
                _ => "the kernel's own entries",
            }
        )));
    }
    match std::fs::metadata(path) {
        Ok(md) if md.is_file() => match loop_backed_by(&md) {
            Some(dev) => Err(usage(format!(
                "{flag} {shown} is the backing file of {dev}, so writing it would write under whatever uses {dev}; iogauge never does that; {fix}"
            ))),
            None => Ok(()),
        },
        Ok(md) => Err(usage(format!(
            "{flag} {shown} is {}, not a file; {fix}",
            kind_of(md.file_type())
        ))),
        Err(_) => Ok(()),
    }
}

/// A file written on the storage under test and kept past the command's end on purpose
/// (`fsync-check write`: its blocks must still be there to verify after the power cut): the
/// target's rules for a path, then an output's — a new file or a regular one that no loop
/// device uses. It is not written down in the crash ledger as a test file is, because
/// removing it after a crash is exactly what must not happen; consent to overwrite a file that
/// command did not write is the command's (it knows its own mark).
pub fn kept_file(what: &str, path: &Path) -> Result<()> {
    target(path)?;
    output_file(
        what,
        path,
        "name a new file on the file system of the drive under test",
    )
}

/// A directory iogauge writes files into (`report --charts`, `man --dir`): missing (then
/// created) or a directory, never under /dev, /proc or /sys.
pub fn output_dir(flag: &str, dir: &Path, fix: &str) -> Result<()> {
    super::files::links(flag, dir)?;
    let real = resolved(dir);
    let shown = shown(dir, &real);
    if let Some(root) = system_root(&real) {
        return Err(usage(format!(
            "{flag} {shown} is under {root}, which is not a place for files iogauge writes; {fix}"
        )));
    }
    match std::fs::metadata(dir) {
        Ok(md) if !md.is_dir() => Err(usage(format!(
            "{flag} {shown} is {}, not a directory; {fix}",
            match md.is_file() {
                true => "a file",
                false => kind_of(md.file_type()),
            }
        ))),
        _ => Ok(()),
    }
}

/// Reads a file iogauge is handed as input (`what` names it: "job file", "suite file" …) as
/// text: a regular file only (a FIFO would block forever, a device never end; opened
/// non-blocking so not even the open waits), at most `limit` bytes.
pub fn read_input(what: &str, path: &Path, limit: u64) -> Result<String> {
    let shown = crate::units::printable(&path.display().to_string()).into_owned();
    let (file, len) = open_input(what, path, limit)?;
    // Bounded again while reading: a file that grows after the look is cut at the limit.
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| usage(format!("cannot read {what} {shown}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(what, &shown, limit));
    }
    String::from_utf8(bytes).map_err(|e| {
        usage(format!(
            "{what} {shown} is not text (invalid UTF-8 at byte {}); give a text file",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn too_big(what: &str, shown: &str, limit: u64) -> anyhow::Error {
    usage(format!(
        "{what} {shown} is larger than {}, more than any {what} iogauge reads; give the right file",
        crate::units::iec(limit)
    ))
}

/// Opens a file iogauge is handed as input, as [`read_input`] reads it, for a reader that takes
/// it a piece at a time (a bundle's runs); with its length, at most `limit` bytes.
pub fn open_input(what: &str, path: &Path, limit: u64) -> Result<(std::fs::File, u64)> {
    let shown = crate::units::printable(&path.display().to_string()).into_owned();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| usage(format!("cannot read {what} {shown}: {e}")))?;
    let md = file
        .metadata()
        .map_err(|e| usage(format!("cannot read {what} {shown}: {e}")))?;
    if !md.is_file() {
        return Err(usage(format!(
            "{what} {shown} is {}, not a file; give a regular file",
            kind_of(md.file_type())
        )));
    }
    if md.len() > limit {
        return Err(too_big(what, &shown, limit));
    }
    Ok((file, md.len()))
}

/// Options handed to mkfs or mount (`flag` "--fs" or "--mount-opts"): none may name a path,
/// since mkfs takes every device it is given (mkfs.btrfs formats them all) and options such as
/// an external journal or log device (`-J device=`, `logdev=`) write to another device than
/// the scratch one. A word with a `/` in it, one naming a block device where iogauge runs
/// (a bare `loop1` in /dev), or one that exists as a path where iogauge was started (a file
/// `userdata.img`, which mkfs.btrfs would format beside the scratch device) is refused; a plain
/// word (a label, a size) is not. mkfs also runs in iogauge's own directory, so a word that
/// names no path here names none there.
pub fn option_words<'a>(
    flag: &str,
    typed: &str,
    words: impl IntoIterator<Item = &'a str>,
) -> Result<()> {
    for word in words {
        let parts = word.split([',', '=', ':']);
        let named = parts
            .filter(|p| !p.is_empty() && !p.starts_with('-'))
            .find(|p| {
                p.contains('/')
                    || is_block_device(Path::new(p))
                    || std::fs::symlink_metadata(p).is_ok()
            });
        if let Some(p) = named {
            return Err(usage(format!(
                "{flag} '{}': '{}' names a path, and iogauge gives mkfs and mount only the --scratch device it checked; give options without a device or file",
                crate::units::printable(typed),
                crate::units::printable(p)
            )));
        }
    }
    Ok(())
}

fn is_block_device(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
}

/// The loop device whose backing file is the file `md` describes, if any.
pub fn loop_backed_by(md: &std::fs::Metadata) -> Option<String> {
    let entries = std::fs::read_dir("/sys/block").ok()?;
    entries.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            return None;
        }
        let backing = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
        let b = std::fs::metadata(backing.trim_end()).ok()?;
        (b.dev() == md.dev() && b.ino() == md.ino()).then(|| format!("/dev/{name}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(r: Result<()>) -> String {
        let e = r.expect_err("should be refused");
        assert!(
            e.downcast_ref::<crate::error::UsageError>().is_some(),
            "a usage error: {e}"
        );
        e.to_string()
    }

    #[test]
    fn outputs_under_dev_proc_sys_are_refused_and_files_are_not() {
        for p in [
            "/dev/null",
            "/dev/zero",
            "/dev/new.db",
            "/proc/self/x",
            "/sys/x",
        ] {
            let e = refused(output_file("--db", Path::new(p), "give a file"));
            assert!(e.starts_with(&format!("--db {p}")), "{e}");
        }
        // /dev/shm is a file system of its own (memory), where a file is a file.
        let shm = tempfile::tempdir_in("/dev/shm").unwrap();
        assert!(output_file("--db", &shm.path().join("r.db"), "x").is_ok());
        let dir = tempfile::tempdir().unwrap();
        assert!(output_file("--db", &dir.path().join("new.db"), "x").is_ok());
        std::fs::write(dir.path().join("old.db"), b"").unwrap();
        assert!(output_file("--db", &dir.path().join("old.db"), "x").is_ok());
        let e = refused(output_file("--output", dir.path(), "x"));
        assert!(e.contains("is a directory, not a file"), "{e}");
        // A link into /dev is where it leads.
        std::os::unix::fs::symlink("/dev/null", dir.path().join("sneaky.db")).unwrap();
        let e = refused(output_file("--db", &dir.path().join("sneaky.db"), "x"));
        assert!(e.contains("(that is /dev/null)"), "{e}");
    }

    #[test]
    fn a_fifo_is_neither_an_output_nor_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let e = refused(output_file("--output", &fifo, "x"));
        assert!(e.contains("is a FIFO"), "{e}");
        // Would block forever if the open or the read waited for a writer.
        let e = read_input("job file", &fifo, TEXT_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a FIFO, not a file"), "{e}");
    }

    #[test]
    fn inputs_are_bounded_and_devices_refused() {
        let e = read_input("job file", Path::new("/dev/zero"), TEXT_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a character device"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.fio");
        std::fs::write(&big, vec![b'#'; 2048]).unwrap();
        let e = read_input("job file", &big, 1024).unwrap_err().to_string();
        assert!(e.contains("is larger than 1 KiB"), "{e}");
        assert_eq!(read_input("job file", &big, 4096).unwrap().len(), 2048);
    }

    #[test]
    fn mkfs_and_mount_options_may_not_name_a_path() {
        let ok = [
            "-b",
            "1024",
            "-E",
            "stride=16,stripe_width=64",
            "-m",
            "crc=1",
            "-f",
        ];
        assert!(option_words("--fs", "ext4:…", ok).is_ok());
        for bad in [
            "/dev/loop1",
            "device=/dev/loop1",
            "logdev=/dev/loop1",
            "-Jdevice=/dev/x",
            "./here",
        ] {
            let e = refused(option_words("--fs", "btrfs:-f x", ["-f", bad]));
            assert!(e.contains("names a path"), "{bad}: {e}");
        }
        // A bare name that exists where iogauge runs is a path (the tests run in the package's
        // directory, which holds Cargo.toml); a near miss that does not exist is a word.
        let e = refused(option_words(
            "--fs",
            "btrfs:-f Cargo.toml",
            ["-f", "Cargo.toml"],
        ));
        assert!(e.contains("'Cargo.toml' names a path"), "{e}");
        assert!(option_words("--fs", "ext4:-L data", ["-L", "no-such-file-here"]).is_ok());
    }
}
