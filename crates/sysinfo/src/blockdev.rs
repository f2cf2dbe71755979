//! The block-device stack under a file system, read from sysfs: `/sys/dev/block/MAJ:MIN` leads to
//! a device's directory; a partition's parent directory is its disk; `loop/backing_file`,
//! `slaves/`, `md/` and `dm/` lead further down. Attribute meanings follow the kernel's
//! Documentation/ABI/stable/sysfs-block, Documentation/ABI/testing/sysfs-block-loop,
//! Documentation/admin-guide/md.rst and Documentation/ABI/testing/sysfs-block-dm.

use crate::host::read_trimmed;
use crate::mountinfo::{self, MountEntry};
use crate::{BlockDevice, BtrfsVolume, DeviceRole, Roots};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// sysfs sizes and partition starts are in 512-byte sectors whatever the logical block size.
const SECTOR: u64 = 512;
const MIB: u64 = 1 << 20;
/// Real stacks are a handful deep; this only stops a malformed tree from recursing forever.
const MAX_DEPTH: usize = 16;

/// Splits a `dev_t` into major and minor, using glibc's 64-bit encoding (`gnu_dev_major` and
/// `gnu_dev_minor` in `<sys/sysmacros.h>`), which is what `st_dev`/`st_rdev` hold on Linux.
pub(crate) fn split_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    // Both masks keep at most 32 bits, so the conversions cannot fail.
    (
        u32::try_from(major).unwrap_or(u32::MAX),
        u32::try_from(minor).unwrap_or(u32::MAX),
    )
}

pub(crate) fn parse_devnum(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The device holding a file system, given a file's `st_dev` and the mount it lives on.
pub(crate) fn fs_devnum(
    roots: &Roots,
    st_dev: u64,
    mount: Option<&MountEntry>,
) -> Option<(u32, u32)> {
    let (major, minor) = split_dev(st_dev);
    if device_dir(roots, major, minor).is_some() {
        return Some((major, minor));
    }
    // Btrfs gives files an anonymous device number (major 0) that sysfs does not know; the mount
    // source names a real device. For a multi-device btrfs that is only the first device.
    source_devnum(&mount?.source)
}

/// The device number of a mount or swap source such as `/dev/sda2`. Only `/dev/` paths are
/// looked at, so nothing here can touch a network file system.
pub(crate) fn source_devnum(source: &str) -> Option<(u32, u32)> {
    if !source.starts_with("/dev/") {
        return None;
    }
    let meta = std::fs::metadata(source).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| split_dev(meta.rdev()))
}

pub(crate) fn device_dir(roots: &Roots, major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(roots.sys.join(format!("dev/block/{major}:{minor}"))).ok()
}

pub(crate) fn name_dir(roots: &Roots, name: &str) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return None;
    }
    std::fs::canonicalize(roots.sys.join("class/block").join(name)).ok()
}

/// Partitions have no `queue/` or `device/` of their own: their IO is queued and executed by the
/// disk, so the disk's scheduler, limits and identity are the ones that apply to them.
pub(crate) fn whole_disk_dir(dir: &Path) -> &Path {
    if dir.join("partition").exists() {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    }
}

/// Entry names of a sysfs directory such as `slaves/` or `holders/`, sorted for stable output.
pub(crate) fn list_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn read_parsed<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_trimmed(path)?.parse().ok()
}

/// Splits `queue/scheduler` text such as `none [mq-deadline] kyber bfq` into the active
/// scheduler (the bracketed one) and all available. A queue that cannot have a scheduler
/// (bio-based md/dm) prints a bare `none`; that sole entry is then the active one, as in the
/// kernel's `elv_iosched_show`.
pub(crate) fn parse_scheduler(text: &str) -> (Option<String>, Vec<String>) {
    let mut active = None;
    let mut available = Vec::new();
    for word in text.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(inner) => {
                active = Some(inner.to_string());
                available.push(inner.to_string());
            }
            None => available.push(word.to_string()),
        }
    }
    if active.is_none() && available.len() == 1 {
        active = available.first().cloned();
    }
    (active, available)
}

/// The stack from device `major:minor` down to the physical devices, depth-first, each once.
pub(crate) fn stack(roots: &Roots, major: u32, minor: u32) -> Vec<BlockDevice> {
    let mut out = Vec::new();
    if let Some(dir) = device_dir(roots, major, minor) {
        walk(roots, &dir, true, 0, &mut out);
    }
    out
}

/// The stacks under each of `names` (a multi-device btrfs's members), one after another, each
/// device once.
pub(crate) fn stacks(roots: &Roots, names: &[String]) -> Vec<BlockDevice> {
    let mut out = Vec::new();
    for name in names {
        if let Some(dir) = name_dir(roots, name) {
            walk(roots, &dir, true, 0, &mut out);
        }
    }
    out
}

/// The mounted btrfs that has device `name` among its devices.
pub(crate) fn btrfs_volume(roots: &Roots, name: &str) -> Option<BtrfsVolume> {
    let base = roots.sys.join("fs/btrfs");
    list_names(&base).into_iter().find_map(|fsid| {
        let dir = base.join(&fsid);
        let members = list_names(&dir.join("devices"));
        if !members.iter().any(|m| m == name) {
            return None;
        }
        // mkfs leaves an empty `single` chunk beside the profile asked for: the profile is the
        // one that holds the bytes.
        let data = dir.join("allocation/data");
        let data_profile = list_names(&data)
            .into_iter()
            .filter(|p| data.join(p).join("used_bytes").exists())
            .max_by_key(|p| {
                (
                    read_parsed::<u64>(&data.join(p).join("used_bytes")).unwrap_or(0),
                    read_parsed::<u64>(&data.join(p).join("total_bytes")).unwrap_or(0),
                )
            });
        Some(BtrfsVolume {
            fsid,
            data_profile,
            members,
        })
    })
}

fn walk(roots: &Roots, dir: &Path, follow_loops: bool, depth: usize, out: &mut Vec<BlockDevice>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(mut device) = describe(dir) else {
        return;
    };
    if out.iter().any(|d| d.name == device.name) {
        return;
    }
    if device.role == DeviceRole::Loop {
        device.loop_backing_fs = device
            .loop_backing_file
            .as_deref()
            .and_then(|file| file_fs_type(roots, file));
    }
    // What lies directly beneath, followed below in the same order.
    let next: Vec<(PathBuf, bool)> = match device.role {
        DeviceRole::Partition => dir
            .parent()
            .map(|p| (p.to_path_buf(), follow_loops))
            .into_iter()
            .collect(),
        // One level only: a loop file on a loop-mounted file system is rare, and following it
        // would add little for a lot of code paths to get wrong.
        DeviceRole::Loop if follow_loops => device
            .loop_backing_file
            .as_deref()
            .and_then(|file| file_device_dir(roots, file))
            .map(|d| (d, false))
            .into_iter()
            .collect(),
        DeviceRole::Loop => Vec::new(),
        _ => list_names(&dir.join("slaves"))
            .iter()
            .filter_map(|slave| name_dir(roots, slave))
            .map(|d| (d, follow_loops))
            .collect(),
    };
    device.below = next
        .iter()
        .filter_map(|(d, _)| Some(d.file_name()?.to_string_lossy().into_owned()))
        .collect();
    out.push(device);
    for (d, follow) in next {
        walk(roots, &d, follow, depth + 1, out);
    }
}

/// The sysfs directory of the device a file lives on (a loop device's backing file).
/// The type of the file system `file` is in (`tmpfs` for a loop device's image in RAM).
fn file_fs_type(roots: &Roots, file: &str) -> Option<String> {
    let path = std::fs::canonicalize(file).ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    let entries = mountinfo::read(roots);
    mountinfo::find_mount(&entries, &path, split_dev(meta.dev())).map(|m| m.fs_type.clone())
}

fn file_device_dir(roots: &Roots, file: &str) -> Option<PathBuf> {
    let path = std::fs::canonicalize(file).ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    // A loop device over a block device (`losetup /dev/loop0`): that device is what lies
    // beneath, not the devtmpfs its node is in.
    if meta.file_type().is_block_device() {
        let (major, minor) = split_dev(meta.rdev());
        return device_dir(roots, major, minor);
    }
    let entries = mountinfo::read(roots);
    let mount = mountinfo::find_mount(&entries, &path, split_dev(meta.dev()));
    let (major, minor) = fs_devnum(roots, meta.dev(), mount)?;
    device_dir(roots, major, minor)
}

fn role_of(dir: &Path, name: &str) -> DeviceRole {
    if dir.join("partition").exists() {
        DeviceRole::Partition
    } else if dir.join("loop").is_dir() || name.starts_with("loop") {
        // An unattached loop device has no loop/ directory but is still a loop device.
        DeviceRole::Loop
    } else if dir.join("md").is_dir() {
        DeviceRole::Md
    } else if dir.join("dm").is_dir() {
        DeviceRole::Dm
    } else if !list_names(&dir.join("slaves")).is_empty() {
        DeviceRole::Stacked
    } else {
        DeviceRole::Disk
    }
}

fn describe(dir: &Path) -> Option<BlockDevice> {
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let role = role_of(dir, &name);
    let whole = whole_disk_dir(dir);
    let queue = whole.join("queue");
    let hardware = whole.join("device");
    let (scheduler, schedulers_available) = read_trimmed(&queue.join("scheduler"))
        .map(|text| parse_scheduler(&text))
        .unwrap_or_default();
    let physical_block_size: Option<u32> = read_parsed(&queue.join("physical_block_size"));
    let partition_start_bytes = if role == DeviceRole::Partition {
        read_parsed::<u64>(&dir.join("start")).and_then(|s| s.checked_mul(SECTOR))
    } else {
        None
    };
    let is_md = role == DeviceRole::Md;
    Some(BlockDevice {
        dev: read_trimmed(&dir.join("dev")),
        role,
        model: read_trimmed(&hardware.join("model")),
        vendor: read_trimmed(&hardware.join("vendor")).map(|v| vendor_name(&v)),
        size_bytes: read_parsed::<u64>(&dir.join("size")).and_then(|s| s.checked_mul(SECTOR)),
        rotational: read_trimmed(&queue.join("rotational")).and_then(|r| match r.as_str() {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }),
        logical_block_size: read_parsed(&queue.join("logical_block_size")),
        physical_block_size,
        minimum_io_size: read_parsed(&queue.join("minimum_io_size")),
        // The kernel writes 0 when the device reports no optimal size.
        optimal_io_size: read_parsed(&queue.join("optimal_io_size")).filter(|&n: &u32| n > 0),
        scheduler,
        schedulers_available,
        nr_requests: read_parsed(&queue.join("nr_requests")),
        read_ahead_kb: read_parsed(&queue.join("read_ahead_kb")),
        write_cache: read_trimmed(&queue.join("write_cache")),
        queue_depth: read_parsed(&hardware.join("queue_depth")),
        partition_start_bytes,
        aligned_1mib: partition_start_bytes.map(|start| start % MIB == 0),
        aligned_physical: partition_start_bytes
            .zip(physical_block_size.filter(|&p| p > 0))
            .map(|(start, physical)| start % u64::from(physical) == 0),
        md_level: is_md.then(|| read_trimmed(&dir.join("md/level"))).flatten(),
        md_chunk_bytes: is_md
            .then(|| read_parsed(&dir.join("md/chunk_size")))
            .flatten(),
        md_members: if is_md {
            list_names(&dir.join("slaves"))
        } else {
            Vec::new()
        },
        loop_backing_file: read_trimmed(&dir.join("loop/backing_file")),
        loop_backing_fs: None,
        dm_name: read_trimmed(&dir.join("dm/name")),
        alignment_offset: read_parsed(&dir.join("alignment_offset")),
        below: Vec::new(),
        shared_with: Vec::new(),
        name,
    })
}

/// The logical block size of `major:minor` (its disk's, for a partition).
pub(crate) fn logical_block_size(roots: &Roots, major: u32, minor: u32) -> Option<u32> {
    let dir = device_dir(roots, major, minor)?;
    read_parsed(&whole_disk_dir(&dir).join("queue/logical_block_size"))
}

/// The kernel name of the disk that queues `major:minor`'s IO, and its `queue/io_poll`.
pub(crate) fn io_poll(roots: &Roots, major: u32, minor: u32) -> Option<(String, bool)> {
    let dir = device_dir(roots, major, minor)?;
    let disk = whole_disk_dir(&dir);
    let name = disk.file_name()?.to_string_lossy().into_owned();
    let poll: u32 = read_parsed(&disk.join("queue/io_poll"))?;
    Some((name, poll != 0))
}

pub(crate) fn holders_of(roots: &Roots, name: &str) -> Vec<String> {
    name_dir(roots, name)
        .map(|dir| list_names(&dir.join("holders")))
        .unwrap_or_default()
}

pub(crate) fn mount_of_device(roots: &Roots, major: u32, minor: u32) -> Option<String> {
    let mut wanted = vec![(major, minor)];
    if let Some(dir) = device_dir(roots, major, minor) {
        for name in list_names(&dir) {
            let child = dir.join(&name);
            if child.join("partition").exists() {
                if let Some(devnum) =
                    read_trimmed(&child.join("dev")).and_then(|t| parse_devnum(&t))
                {
                    wanted.push(devnum);
                }
            }
        }
    }
    for entry in mountinfo::read(roots) {
        // Major 0 is an anonymous device (btrfs among others): the source says which is used.
        let devnum = if entry.major == 0 {
            source_devnum(&entry.source)
        } else {
            Some((entry.major, entry.minor))
        };
        if devnum.is_some_and(|d| wanted.contains(&d)) {
            return Some(entry.mount_point.to_string_lossy().into_owned());
        }
    }
    let swaps = std::fs::read_to_string(roots.proc.join("swaps")).unwrap_or_default();
    // proc(5): a header line, then one area per line, its file name first.
    for line in swaps.lines().skip(1) {
        let source = line.split_whitespace().next().unwrap_or_default();
        if source_devnum(source).is_some_and(|d| wanted.contains(&d)) {
            return Some("[SWAP]".to_string());
        }
    }
    None
}

/// A vendor as people know it. SCSI and ATA devices give a name ("ATA", "SEAGATE"); virtio
/// and some PCI devices give the PCI vendor id ("0x1af4"), which is named here when known and
/// said to be an id otherwise — never shown as if it were a model.
fn vendor_name(raw: &str) -> String {
    let Some(hex) = raw.strip_prefix("0x") else {
        return raw.to_string();
    };
    match hex.to_ascii_lowercase().as_str() {
        "1af4" => "Red Hat (virtio)".into(),
        "1b36" => "QEMU".into(),
        "8086" => "Intel".into(),
        "144d" => "Samsung".into(),
        "15b7" => "SanDisk / Western Digital".into(),
        "1179" | "1e0f" => "Kioxia (Toshiba)".into(),
        "1c5c" => "SK hynix".into(),
        "1987" => "Phison".into(),
        "126f" => "Silicon Motion".into(),
        "1344" => "Micron".into(),
        "1d0f" => "Amazon".into(),
        _ => format!("PCI vendor {raw}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Says a test could not run; under CI=true fails instead (every test must run there).
    fn skip(why: &str) {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("cannot run here: {why} (CI=true: every test must run)");
        }
        println!("skipped: {why}");
    }
    use std::fs;
    use std::os::unix::fs::symlink;

    /// A fake sysfs/procfs: LVM volume dm-0 on RAID-0 md0 over sda1 (1 MiB-aligned) and sdb1
    /// (starting at sector 63, the old DOS default) on 4 KiB-sector disks.
    struct FakeTree {
        _dir: tempfile::TempDir,
        roots: Roots,
    }

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn add_device(roots: &Roots, rel: &str, devnum: &str) -> PathBuf {
        let dir = roots.sys.join("devices").join(rel);
        write(&dir.join("dev"), &format!("{devnum}\n"));
        let name = dir.file_name().unwrap().to_owned();
        fs::create_dir_all(roots.sys.join("class/block")).unwrap();
        fs::create_dir_all(roots.sys.join("dev/block")).unwrap();
        symlink(&dir, roots.sys.join("class/block").join(name)).unwrap();
        symlink(&dir, roots.sys.join("dev/block").join(devnum)).unwrap();
        dir
    }

    fn add_disk(roots: &Roots, name: &str, minor: u32, start_sectors: u64) -> PathBuf {
        let disk = add_device(
            roots,
            &format!("pci0/host0/block/{name}"),
            &format!("8:{minor}"),
        );
        write(&disk.join("size"), "7814037168\n");
        write(
            &disk.join("queue/scheduler"),
            "none [mq-deadline] kyber bfq\n",
        );
        write(&disk.join("queue/logical_block_size"), "512\n");
        write(&disk.join("queue/physical_block_size"), "4096\n");
        write(&disk.join("queue/rotational"), "1\n");
        write(&disk.join("queue/nr_requests"), "64\n");
        write(&disk.join("queue/read_ahead_kb"), "128\n");
        write(&disk.join("queue/write_cache"), "write back\n");
        write(&disk.join("device/vendor"), "ATA     \n");
        write(&disk.join("device/model"), "ST4000NM0035-1V4 \n");
        write(&disk.join("device/queue_depth"), "32\n");
        let part = add_device(
            roots,
            &format!("pci0/host0/block/{name}/{name}1"),
            &format!("8:{}", minor + 1),
        );
        write(&part.join("partition"), "1\n");
        write(&part.join("start"), &format!("{start_sectors}\n"));
        write(&part.join("size"), "2048000\n");
        part
    }

    fn fake_tree() -> FakeTree {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots {
            sys: dir.path().join("sys"),
            proc: dir.path().join("proc"),
        };
        let sda1 = add_disk(&roots, "sda", 0, 2048);
        let sdb1 = add_disk(&roots, "sdb", 16, 63);
        let md = add_device(&roots, "virtual/block/md0", "9:127");
        write(&md.join("md/level"), "raid0\n");
        write(&md.join("md/chunk_size"), "524288\n");
        write(&md.join("queue/scheduler"), "none\n");
        write(&md.join("queue/optimal_io_size"), "1048576\n");
        let dm = add_device(&roots, "virtual/block/dm-0", "253:0");
        write(&dm.join("dm/name"), "vg0-data\n");
        for (upper, lower, lower_name) in [
            (&md, &sda1, "sda1"),
            (&md, &sdb1, "sdb1"),
            (&dm, &md, "md0"),
        ] {
            let upper_name = upper.file_name().unwrap();
            fs::create_dir_all(upper.join("slaves")).unwrap();
            fs::create_dir_all(lower.join("holders")).unwrap();
            symlink(lower, upper.join("slaves").join(lower_name)).unwrap();
            symlink(upper, lower.join("holders").join(upper_name)).unwrap();
        }
        write(
            &roots.proc.join("self/mountinfo"),
            "1 0 253:0 / / rw,noatime - xfs /dev/mapper/vg0-data rw,attr2\n\
             2 1 8:17 / /boot rw - ext4 /nonexistent/sdb1 rw\n",
        );
        FakeTree { _dir: dir, roots }
    }

    #[test]
    fn split_dev_decodes_classic_and_large_numbers() {
        // The classic 16-bit dev_t of sda1 is 0x0801.
        assert_eq!(split_dev(0x0801), (8, 1));
        // glibc's layout: minor in bits 0-7 and 20-43, major in bits 8-19 and 44-63. Bit 44 is
        // major bit 12, bit 20 is minor bit 8, and 0x103 holds major bit 0 and minor 0x03.
        assert_eq!(
            split_dev((1 << 44) | (1 << 20) | 0x103),
            ((1 << 12) | 1, (1 << 8) | 3)
        );
    }

    #[test]
    fn scheduler_bracket_marks_the_active_one() {
        let (active, available) = parse_scheduler("none [mq-deadline] kyber bfq\n");
        assert_eq!(active.as_deref(), Some("mq-deadline"));
        assert_eq!(available, ["none", "mq-deadline", "kyber", "bfq"]);
        let (active, _) = parse_scheduler("[none] mq-deadline");
        assert_eq!(active.as_deref(), Some("none"));
    }

    #[test]
    fn scheduler_sole_unbracketed_none_is_active_and_empty_is_unknown() {
        assert_eq!(
            parse_scheduler("none"),
            (Some("none".to_string()), vec!["none".to_string()])
        );
        assert_eq!(parse_scheduler(""), (None, vec![]));
        // Several entries but no brackets: which is active is not known, so not guessed.
        assert_eq!(parse_scheduler("noop deadline").0, None);
    }

    #[test]
    fn stack_goes_from_dm_through_md_and_partitions_to_disks() {
        let tree = fake_tree();
        let stack = stack(&tree.roots, 253, 0);
        let names: Vec<&str> = stack.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["dm-0", "md0", "sda1", "sda", "sdb1", "sdb"]);
        let roles: Vec<DeviceRole> = stack.iter().map(|d| d.role).collect();
        use DeviceRole::*;
        assert_eq!(roles, [Dm, Md, Partition, Disk, Partition, Disk]);
        assert_eq!(stack[0].dm_name.as_deref(), Some("vg0-data"));
        assert_eq!(stack[1].md_level.as_deref(), Some("raid0"));
        assert_eq!(stack[1].md_chunk_bytes, Some(512 * 1024));
        assert_eq!(stack[1].md_members, ["sda1", "sdb1"]);
        assert_eq!(stack[1].scheduler.as_deref(), Some("none"));
        assert_eq!(stack[1].optimal_io_size, Some(1 << 20));
        // Each device names what lies directly beneath it; the disks are the bottom.
        let below: Vec<Vec<String>> = stack.iter().map(|d| d.below.clone()).collect();
        assert_eq!(
            below,
            [
                vec!["md0".to_string()],
                vec!["sda1".into(), "sdb1".into()],
                vec!["sda".into()],
                vec![],
                vec!["sdb".into()],
                vec![]
            ]
        );
    }

    #[test]
    fn partition_alignment_and_size_in_bytes() {
        let tree = fake_tree();
        let stack = stack(&tree.roots, 253, 0);
        let sda1 = &stack[2];
        assert_eq!(sda1.partition_start_bytes, Some(1 << 20));
        assert_eq!(sda1.aligned_1mib, Some(true));
        assert_eq!(sda1.aligned_physical, Some(true));
        assert_eq!(sda1.size_bytes, Some(2_048_000 * 512));
        let sdb1 = &stack[4];
        // Sector 63 = 32256 bytes: 7.875 blocks of 4 KiB, and not a MiB multiple.
        assert_eq!(sdb1.partition_start_bytes, Some(32_256));
        assert_eq!(sdb1.aligned_1mib, Some(false));
        assert_eq!(sdb1.aligned_physical, Some(false));
        // Whole devices are not partitions, so alignment does not apply to them.
        assert_eq!(stack[3].partition_start_bytes, None);
        assert_eq!(stack[3].aligned_1mib, None);
    }

    #[test]
    fn partitions_take_queue_and_identity_from_their_disk() {
        let tree = fake_tree();
        let stack = stack(&tree.roots, 8, 1);
        assert_eq!(stack.len(), 2);
        let (part, disk) = (&stack[0], &stack[1]);
        assert_eq!(part.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(part.physical_block_size, Some(4096));
        assert_eq!(part.rotational, Some(true));
        assert_eq!(part.queue_depth, Some(32));
        assert_eq!(part.write_cache.as_deref(), Some("write back"));
        assert_eq!(part.vendor.as_deref(), Some("ATA"));
        assert_eq!(part.model.as_deref(), Some("ST4000NM0035-1V4"));
        assert_eq!(disk.nr_requests, Some(64));
        assert_eq!(disk.read_ahead_kb, Some(128));
        assert_eq!(disk.size_bytes, Some(7_814_037_168 * 512));
        assert_eq!(logical_block_size(&tree.roots, 8, 1), Some(512));
        assert_eq!(logical_block_size(&tree.roots, 7, 7), None);
    }

    #[test]
    fn unknown_device_gives_an_empty_stack() {
        let tree = fake_tree();
        assert!(stack(&tree.roots, 7, 7).is_empty());
    }

    #[test]
    fn holders_come_from_sysfs_and_bad_names_give_none() {
        let tree = fake_tree();
        assert_eq!(holders_of(&tree.roots, "sda1"), ["md0"]);
        assert_eq!(holders_of(&tree.roots, "md0"), ["dm-0"]);
        assert!(holders_of(&tree.roots, "dm-0").is_empty());
        assert!(holders_of(&tree.roots, "../sda1").is_empty());
        assert!(holders_of(&tree.roots, "nosuch").is_empty());
    }

    #[test]
    fn a_mounted_partition_makes_its_disk_mounted() {
        let tree = fake_tree();
        assert_eq!(
            mount_of_device(&tree.roots, 8, 16).as_deref(),
            Some("/boot")
        );
        assert_eq!(
            mount_of_device(&tree.roots, 8, 17).as_deref(),
            Some("/boot")
        );
        assert_eq!(mount_of_device(&tree.roots, 253, 0).as_deref(), Some("/"));
        assert_eq!(mount_of_device(&tree.roots, 8, 0), None);
    }

    #[test]
    fn an_active_swap_device_counts_as_mounted() {
        // Any real block-device node serves as the swap source; the fake tree has none.
        let Some(node) = fs::read_dir("/dev").ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()))
        }) else {
            skip("no block device node in /dev");
            return;
        };
        let (major, minor) = split_dev(fs::metadata(&node).unwrap().rdev());
        let tree = fake_tree();
        // Nothing mounted, so only the swap list can name the device.
        write(&tree.roots.proc.join("self/mountinfo"), "");
        assert_eq!(mount_of_device(&tree.roots, major, minor), None);
        write(
            &tree.roots.proc.join("swaps"),
            &format!(
                "Filename\tType\tSize\tUsed\tPriority\n{}\tpartition\t1048572\t0\t-2\n",
                node.display()
            ),
        );
        assert_eq!(
            mount_of_device(&tree.roots, major, minor).as_deref(),
            Some("[SWAP]")
        );
    }

    #[test]
    fn split_dev_agrees_with_sysfs_for_real_device_nodes() {
        let mut checked = 0;
        for name in list_names(Path::new("/sys/class/block")) {
            let node = Path::new("/dev").join(&name);
            let (Ok(meta), Some(sys_dev)) = (
                fs::metadata(&node),
                read_trimmed(&Path::new("/sys/class/block").join(&name).join("dev")),
            ) else {
                continue;
            };
            assert_eq!(
                Some(split_dev(meta.rdev())),
                parse_devnum(&sys_dev),
                "{name}"
            );
            checked += 1;
        }
        if checked == 0 {
            skip("no block devices visible");
        }
    }

    #[test]
    fn a_pci_vendor_id_is_named_or_said_to_be_an_id() {
        assert_eq!(vendor_name("0x1af4"), "Red Hat (virtio)");
        assert_eq!(vendor_name("0x9999"), "PCI vendor 0x9999");
        assert_eq!(vendor_name("ATA"), "ATA");
    }
}
