//! Parsing `/proc/self/mountinfo` and finding the mount a path lives on. The line format is
//! documented in proc(5) (and the kernel's Documentation/filesystems/proc.rst, "3.5
//! /proc/<pid>/mountinfo"): `id parent major:minor root mount-point mount-options [optional
//! fields...] - fstype source super-options`, with space, tab, newline and backslash in paths
//! written as octal escapes (`\040` etc.).

use crate::Roots;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: PathBuf,
    pub mount_options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

impl MountEntry {
    /// Per-mount options (rw, noatime, ...) then the super-block's own (data=ordered, discard,
    /// ...) that are not already listed: one string that tells how the file system behaves.
    pub fn combined_options(&self) -> String {
        let mut all: Vec<&str> = Vec::new();
        for option in self
            .mount_options
            .split(',')
            .chain(self.super_options.split(','))
        {
            if !option.is_empty() && !all.contains(&option) {
                all.push(option);
            }
        }
        all.join(",")
    }
}

/// The current mount table; empty when unreadable. Lines that do not parse are skipped.
pub(crate) fn read(roots: &Roots) -> Vec<MountEntry> {
    std::fs::read_to_string(roots.proc.join("self/mountinfo"))
        .map(|text| parse(&text))
        .unwrap_or_default()
}

pub(crate) fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    let (major, minor) = fields.get(2)?.split_once(':')?;
    let separator = fields.iter().skip(6).position(|f| *f == "-")? + 6;
    Some(MountEntry {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        mount_point: PathBuf::from(OsString::from_vec(unescape(fields.get(4)?))),
        mount_options: (*fields.get(5)?).to_string(),
        fs_type: lossy(fields.get(separator + 1)?),
        source: lossy(fields.get(separator + 2)?),
        super_options: fields
            .get(separator + 3)
            .map(|s| s.to_string())
            .unwrap_or_default(),
    })
}

fn lossy(field: &str) -> String {
    String::from_utf8_lossy(&unescape(field)).into_owned()
}

/// Undoes the kernel's `\ooo` octal escaping; anything else passes through unchanged.
fn unescape(field: &str) -> Vec<u8> {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && is_octal_triplet(&bytes[i + 1..i + 4]) {
            let value = bytes[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, digit| acc * 8 + u32::from(digit - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

fn is_octal_triplet(digits: &[u8]) -> bool {
    digits.len() == 3 && digits.iter().all(|d| (b'0'..=b'7').contains(d))
}

/// The mount `path` (absolute, symlinks resolved) lives on: the deepest mount point above it,
/// preferring entries whose device matches the path's `st_dev` (a later mount on a parent
/// directory can hide a deeper one), and among equals the last listed, because later mounts on
/// the same point shadow earlier ones. Btrfs reports per-subvolume device numbers that match no
/// entry, so the device is only a preference.
pub(crate) fn find_mount<'a>(
    entries: &'a [MountEntry],
    path: &Path,
    st_dev: (u32, u32),
) -> Option<&'a MountEntry> {
    let candidates: Vec<&MountEntry> = entries
        .iter()
        .filter(|e| path.starts_with(&e.mount_point))
        .collect();
    let same_device: Vec<&MountEntry> = candidates
        .iter()
        .copied()
        .filter(|e| (e.major, e.minor) == st_dev)
        .collect();
    let pool = if same_device.is_empty() {
        candidates
    } else {
        same_device
    };
    // max_by_key returns the last of equal maxima, which is the shadowing mount.
    pool.into_iter()
        .max_by_key(|e| e.mount_point.components().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard,errors=remount-ro
36 27 8:17 / /mnt/my\\040disk rw,noatime shared:5 master:2 - xfs /dev/sdb1 rw,attr2,inode64
37 27 0:40 / /mnt/my rw - tmpfs tmpfs rw,size=1024k
38 27 0:41 / /mnt/my rw,nosuid - tmpfs other rw,size=2048k
";

    #[test]
    fn parses_fields_around_optional_tags() {
        let entries = parse(TABLE);
        assert_eq!(entries.len(), 5);
        let root = &entries[1];
        assert_eq!((root.major, root.minor), (254, 0));
        assert_eq!(root.mount_point, PathBuf::from("/"));
        assert_eq!(root.fs_type, "ext4");
        assert_eq!(root.source, "/dev/vda");
        assert_eq!(root.super_options, "rw,discard,errors=remount-ro");
    }

    #[test]
    fn octal_escapes_become_spaces_and_backslashes() {
        let entries = parse(TABLE);
        assert_eq!(entries[2].mount_point, PathBuf::from("/mnt/my disk"));
        assert_eq!((entries[2].major, entries[2].minor), (8, 17));
        assert_eq!(unescape("a\\011b\\134c\\012"), b"a\tb\\c\n");
        // Not a valid escape: kept as written rather than dropped.
        assert_eq!(unescape("a\\09b\\"), b"a\\09b\\");
    }

    #[test]
    fn malformed_lines_are_skipped() {
        assert!(
            parse("garbage\n27 1 254:0 / / rw\n27 1 x:y / / rw - ext4 /dev/vda rw\n").is_empty()
        );
    }

    #[test]
    fn combined_options_keep_order_and_drop_duplicates() {
        let entries = parse(TABLE);
        assert_eq!(entries[2].combined_options(), "rw,noatime,attr2,inode64");
        assert_eq!(
            entries[1].combined_options(),
            "rw,relatime,discard,errors=remount-ro"
        );
    }

    #[test]
    fn deepest_mount_wins_and_prefix_is_by_component() {
        let entries = parse(TABLE);
        let found = find_mount(&entries, Path::new("/mnt/my disk/db/file"), (8, 17)).unwrap();
        assert_eq!(found.fs_type, "xfs");
        // "/mnt/my disk" must not be taken for a child of "/mnt/my".
        let found = find_mount(&entries, Path::new("/mnt/mydata/x"), (254, 0)).unwrap();
        assert_eq!(found.mount_point, PathBuf::from("/"));
    }

    #[test]
    fn later_mount_on_the_same_point_shadows_the_earlier() {
        let entries = parse(TABLE);
        let found = find_mount(&entries, Path::new("/mnt/my/x"), (0, 99)).unwrap();
        assert_eq!(found.source, "other");
    }

    #[test]
    fn device_match_beats_depth_when_a_parent_mount_hides_a_child() {
        // /a/b mounted first, then /a mounted over it: a file under /a/b now lives on /a's device.
        let table = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
                     2 1 8:2 / /a/b rw - ext4 /dev/sda2 rw\n\
                     3 1 8:3 / /a rw - xfs /dev/sda3 rw\n";
        let entries = parse(table);
        let found = find_mount(&entries, Path::new("/a/b/file"), (8, 3)).unwrap();
        assert_eq!(found.source, "/dev/sda3");
        // A device matching nothing (btrfs subvolume) falls back to depth alone.
        let found = find_mount(&entries, Path::new("/a/b/file"), (0, 50)).unwrap();
        assert_eq!(found.source, "/dev/sda2");
    }
}
