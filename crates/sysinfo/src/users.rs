//! Who else uses the bytes a write to a block device would reach, looking down and up the whole
//! stack (reads only, from sysfs, mountinfo and /proc/swaps).
//!
//! Why: a device's own mounts and `holders/` say nothing of what lies under it. A loop device
//! over a mounted file system's loop device, or over the image file behind it, has no holders
//! and no signature, yet every write to it lands in that file system; a partition of a disk
//! that another loop device maps, or the second member of a mounted multi-device btrfs, look
//! just as free. So a write is judged by every node it reaches on the way down — partitions to
//! their disk, loop devices to what backs them, md and dm to their members — and at each node
//! by every user above it except the one the walk came from: mounts and swap, btrfs
//! membership, holders (md, dm, LVM), partitions and loop devices whose byte range overlaps
//! the range the write reaches.
//!
//! What it cannot see: a dm table's mapping (a member of dm is taken as reached whole, and the
//! other logical volumes of an LVM physical volume are trusted not to overlap the one being
//! written, as LVM allocates them), a hardware RAID behind one device, a user that only holds
//! a descriptor open (the exclusive claim of the target catches those on the target itself),
//! and file systems on the far side of a network.

use crate::blockdev::{device_dir, list_names, name_dir, parse_devnum, source_devnum, split_dev};
use crate::host::read_trimmed;
use crate::mountinfo::{self, MountEntry};
use crate::Roots;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// sysfs sizes, partition starts and loop offsets: sizes and starts in 512-byte sectors.
const SECTOR: u64 = 512;
/// Real stacks are a handful deep; this stops a malformed or looping tree.
const MAX_DEPTH: usize = 16;

/// A byte range `[start, end)` on one device.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Range {
    start: u64,
    end: u64,
}

impl Range {
    const WHOLE: Range = Range {
        start: 0,
        end: u64::MAX,
    };

    fn overlaps(self, other: Range) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// This range of an upper device seen on the device below, where the upper one begins at
    /// `offset` and is `len` bytes long.
    fn shifted(self, offset: u64, len: u64) -> Range {
        Range {
            start: offset.saturating_add(self.start),
            end: offset.saturating_add(self.end.min(len)),
        }
    }
}

enum Backing {
    Device((u32, u32)),
    File { dev: u64, ino: u64, path: String },
    Unknown,
}

/// A loop device with something attached.
struct Loop {
    name: String,
    backing: Backing,
    /// The bytes of the backing device or file the loop device maps.
    range: Range,
}

/// What is read once per question: mounts, swap areas, attached loop devices, mounted btrfs's
/// members.
struct World<'a> {
    roots: &'a Roots,
    mounts: Vec<MountEntry>,
    swaps: Vec<String>,
    loops: Vec<Loop>,
    /// (member's kernel name, fsid) of every mounted btrfs.
    btrfs: Vec<(String, String)>,
}

fn read_loops(roots: &Roots) -> Vec<Loop> {
    list_names(&roots.sys.join("block"))
        .into_iter()
        .filter(|n| n.starts_with("loop"))
        .filter_map(|name| {
            let dir = name_dir(roots, &name)?;
            let file = read_trimmed(&dir.join("loop/backing_file"))?;
            let offset: u64 = read_trimmed(&dir.join("loop/offset"))?.parse().ok()?;
            let len = read_trimmed(&dir.join("size"))?.parse::<u64>().ok()? * SECTOR;
            let backing = match std::fs::metadata(&file) {
                Ok(m) if m.file_type().is_block_device() => Backing::Device(split_dev(m.rdev())),
                Ok(m) => Backing::File {
                    dev: m.dev(),
                    ino: m.ino(),
                    path: file.clone(),
                },
                Err(_) => Backing::Unknown,
            };
            Some(Loop {
                name,
                backing,
                range: Range {
                    start: offset,
                    end: offset.saturating_add(len),
                },
            })
        })
        .collect()
}

impl<'a> World<'a> {
    fn read(roots: &'a Roots) -> Self {
        let swaps = std::fs::read_to_string(roots.proc.join("swaps")).unwrap_or_default();
        let base = roots.sys.join("fs/btrfs");
        let btrfs = list_names(&base)
            .into_iter()
            .flat_map(|fsid| {
                list_names(&base.join(&fsid).join("devices"))
                    .into_iter()
                    .map(move |m| (m, fsid.clone()))
            })
            .collect();
        World {
            roots,
            mounts: mountinfo::read(roots),
            // proc(5): a header line, then one area per line, its file name first.
            swaps: swaps
                .lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                .collect(),
            loops: read_loops(roots),
            btrfs,
        }
    }

    fn mount_of(&self, devnum: (u32, u32)) -> Option<&MountEntry> {
        self.mounts.iter().find(|e| {
            // Major 0 is an anonymous device (btrfs among others): the source says which.
            let d = match e.major {
                0 => source_devnum(&e.source),
                _ => Some((e.major, e.minor)),
            };
            d == Some(devnum)
        })
    }

    fn swap_of(&self, devnum: (u32, u32)) -> bool {
        self.swaps.iter().any(|s| source_devnum(s) == Some(devnum))
    }

    /// Where the mounted btrfs that has `name` among its devices is mounted, if one does.
    fn btrfs_of(&self, name: &str) -> Option<String> {
        let (_, fsid) = self.btrfs.iter().find(|(m, _)| m == name)?;
        let members: Vec<(u32, u32)> = self
            .btrfs
            .iter()
            .filter(|(_, f)| f == fsid)
            .filter_map(|(m, _)| devnum_of(self.roots, m))
            .collect();
        let at = self
            .mounts
            .iter()
            .filter(|e| e.fs_type == "btrfs")
            .find(|e| source_devnum(&e.source).is_some_and(|d| members.contains(&d)))
            .map_or_else(
                || format!("btrfs {fsid}"),
                |e| e.mount_point.display().to_string(),
            );
        Some(at)
    }
}

fn devnum_of(roots: &Roots, name: &str) -> Option<(u32, u32)> {
    parse_devnum(&read_trimmed(&name_dir(roots, name)?.join("dev"))?)
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn sectors(dir: &Path, attr: &str) -> Option<u64> {
    read_trimmed(&dir.join(attr))?
        .parse::<u64>()
        .ok()?
        .checked_mul(SECTOR)
}

/// "from 64 MiB" for a range that does not start at the device's first byte.
fn from(start: u64) -> String {
    match start {
        0 => String::new(),
        s if s % (1 << 20) == 0 => format!(" from {} MiB", s >> 20),
        s if s % 1024 == 0 => format!(" from {} KiB", s >> 10),
        s => format!(" from byte {s}"),
    }
}

fn is_dm(name: &str) -> bool {
    name.starts_with("dm-")
}

/// Why writing `range` of the device in `dir` would reach something in use above it, other than
/// the device `came_from` (the one the walk arrived from, which is the writer's own path).
/// The answer reads after "is": "mounted on /srv (ext4)", "under /dev/loop4, which is …".
fn above(
    w: &World,
    dir: &Path,
    range: Range,
    came_from: Option<&str>,
    depth: usize,
) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let name = name_of(dir);
    let devnum = parse_devnum(&read_trimmed(&dir.join("dev"))?)?;
    if let Some(m) = w.mount_of(devnum) {
        return Some(format!(
            "mounted on {} ({})",
            m.mount_point.display(),
            m.fs_type
        ));
    }
    if w.swap_of(devnum) {
        return Some("active swap".into());
    }
    if let Some(at) = w.btrfs_of(&name) {
        return Some(format!("a device of the btrfs mounted on {at}"));
    }
    let holders: Vec<String> = list_names(&dir.join("holders"))
        .into_iter()
        .filter(|h| Some(h.as_str()) != came_from)
        // The logical volumes of one physical volume share it over extents LVM keeps apart.
        .filter(|h| !(came_from.is_some_and(is_dm) && is_dm(h)))
        .collect();
    if !holders.is_empty() {
        return Some(format!("held by {}", holders.join(", ")));
    }
    // Partitions are the disk's subdirectories that have a `partition` file.
    for part in list_names(dir) {
        let pdir = dir.join(&part);
        if Some(part.as_str()) == came_from || !pdir.join("partition").exists() {
            continue;
        }
        let (Some(start), Some(len)) = (sectors(&pdir, "start"), sectors(&pdir, "size")) else {
            continue;
        };
        let prange = Range {
            start,
            end: start.saturating_add(len),
        };
        if !prange.overlaps(range) {
            continue;
        }
        if let Some(why) = above(w, &pdir, Range::WHOLE, None, depth + 1) {
            return Some(format!(
                "under partition /dev/{part}{}, which is {why}",
                from(start)
            ));
        }
    }
    for l in &w.loops {
        let Backing::Device(d) = l.backing else {
            continue;
        };
        if d != devnum || Some(l.name.as_str()) == came_from || !l.range.overlaps(range) {
            continue;
        }
        if let Some(ldir) = name_dir(w.roots, &l.name) {
            if let Some(why) = above(w, &ldir, Range::WHOLE, None, depth + 1) {
                return Some(format!(
                    "under /dev/{} (a loop device over it{}), which is {why}",
                    l.name,
                    from(l.range.start)
                ));
            }
        }
    }
    None
}

/// Why writing `range` of the device in `dir` would write under something in use, looking above
/// it and at every node below; `came_from` as in [`above`].
fn reach(
    w: &World,
    dir: &Path,
    range: Range,
    came_from: Option<&str>,
    depth: usize,
) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    if let Some(why) = above(w, dir, range, came_from, depth) {
        return Some(why);
    }
    let name = name_of(dir);
    // A partition: the same bytes on its disk.
    if dir.join("partition").exists() {
        let disk = dir.parent()?;
        let start = sectors(dir, "start").unwrap_or(0);
        let len = sectors(dir, "size").unwrap_or(u64::MAX);
        let why = reach(w, disk, range.shifted(start, len), Some(&name), depth + 1)?;
        return Some(format!(
            "a partition of /dev/{}, which is {why}",
            name_of(disk)
        ));
    }
    if let Some(l) = w.loops.iter().find(|l| l.name == name) {
        let len = l.range.end - l.range.start;
        let on_backing = range.shifted(l.range.start, len);
        return match &l.backing {
            Backing::Device(d) => {
                let bdir = device_dir(w.roots, d.0, d.1)?;
                let why = reach(w, &bdir, on_backing, Some(&name), depth + 1)?;
                Some(format!(
                    "a loop device over /dev/{}{}, which is {why}",
                    name_of(&bdir),
                    from(l.range.start)
                ))
            }
            Backing::File { dev, ino, path } => {
                if w.swaps.iter().any(|s| same_file(s, *dev, *ino)) {
                    return Some(format!("a loop device over {path}, which is active swap"));
                }
                w.loops
                    .iter()
                    .filter(|o| o.name != name && o.range.overlaps(on_backing))
                    .filter(|o| matches!(&o.backing, Backing::File { dev: d, ino: i, .. } if d == dev && i == ino))
                    .find_map(|o| {
                        let odir = name_dir(w.roots, &o.name)?;
                        let why = above(w, &odir, Range::WHOLE, None, depth + 1)?;
                        Some(format!(
                            "a loop device over {path}{}, which also backs /dev/{}{}, which is {why}",
                            from(l.range.start),
                            o.name,
                            from(o.range.start)
                        ))
                    })
            }
            Backing::Unknown => None,
        };
    }
    // md, dm and other stacked devices: each member, taken as reached whole.
    list_names(&dir.join("slaves"))
        .into_iter()
        .find_map(|slave| {
            let sdir = name_dir(w.roots, &slave)?;
            let why = reach(w, &sdir, Range::WHOLE, Some(&name), depth + 1)?;
            Some(format!("built on /dev/{slave}, which is {why}"))
        })
}

/// The loop devices whose backing is the device `name` itself, or a file on a file system of
/// `name` or of one of its partitions: (loop's name, what backs it).
pub(crate) fn loops_on(roots: &Roots, name: &str) -> Vec<(String, String)> {
    let Some(dir) = name_dir(roots, name) else {
        return Vec::new();
    };
    let mut mine: Vec<(u32, u32)> = devnum_of(roots, name).into_iter().collect();
    for part in list_names(&dir) {
        if dir.join(&part).join("partition").exists() {
            mine.extend(read_trimmed(&dir.join(&part).join("dev")).and_then(|t| parse_devnum(&t)));
        }
    }
    read_loops(roots)
        .into_iter()
        .filter_map(|l| match l.backing {
            Backing::Device(d) if mine.contains(&d) => Some((l.name, format!("/dev/{name}"))),
            Backing::File { dev, path, .. } if mine.contains(&split_dev(dev)) => {
                Some((l.name, path))
            }
            _ => None,
        })
        .collect()
}

fn same_file(path: &str, dev: u64, ino: u64) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.dev() == dev && m.ino() == ino)
}

/// Why a write to the block device `major:minor` would reach something else in use, if it
/// would; the words read after "is".
pub(crate) fn in_use(roots: &Roots, major: u32, minor: u32) -> Option<String> {
    let dir = device_dir(roots, major, minor)?;
    reach(&World::read(roots), &dir, Range::WHOLE, None, 0)
}

/// Why a write to the regular file `path` would reach something in use: it backs a loop device
/// that is, or that anything above uses. The words read after "is".
pub(crate) fn file_in_use(roots: &Roots, path: &Path) -> Option<String> {
    let md = std::fs::metadata(path).ok()?;
    let w = World::read(roots);
    if w.swaps.iter().any(|s| same_file(s, md.dev(), md.ino())) {
        return Some("an active swap file".into());
    }
    w.loops.iter().find_map(|l| {
        let Backing::File { dev, ino, .. } = l.backing else {
            return None;
        };
        if dev != md.dev() || ino != md.ino() {
            return None;
        }
        let ldir = name_dir(roots, &l.name)?;
        Some(match above(&w, &ldir, Range::WHOLE, None, 1) {
            Some(why) => format!(
                "the backing file of /dev/{}{}, which is {why}",
                l.name,
                from(l.range.start)
            ),
            None => format!("the backing file of /dev/{}", l.name),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_overlap_only_where_they_share_a_byte() {
        let r = |start, end| Range { start, end };
        assert!(r(0, 10).overlaps(r(9, 20)));
        assert!(!r(0, 10).overlaps(r(10, 20)));
        assert!(Range::WHOLE.overlaps(r(5, 6)));
        // 1 MiB of a loop device at 64 MiB, 2 MiB long, is 65..66 MiB below.
        assert_eq!(r(1, 2).shifted(64, 2), r(65, 66));
        // The rest of a whole-device range ends where the upper device ends.
        assert_eq!(Range::WHOLE.shifted(64, 8), r(64, 72));
    }

    #[test]
    fn a_range_start_is_said_in_its_largest_whole_unit() {
        assert_eq!(from(0), "");
        assert_eq!(from(64 << 20), " from 64 MiB");
        assert_eq!(from(3 << 10), " from 3 KiB");
        assert_eq!(from(700), " from byte 700");
    }
}
