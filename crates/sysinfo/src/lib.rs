//! What a run ran on: kernel, CPU, memory, and for the benchmark target its file system, mount
//! options and the block-device stack down to the physical disks, with each device's queue
//! settings (scheduler, read-ahead, write cache) and partition alignment.
//!
//! Why: a benchmark result means little without "all involved settings for each and every test
//! run" ("100K+ IOPS on semi-commodity hardware"); alignment, IO schedulers and file systems each moved results by large factors
//! in the studies iogauge grew from ("One DVD per second" and "100K+ IOPS on semi-commodity hardware"). Everything here is read from `/proc` and
//! `/sys` without `unsafe` and without external commands. Nothing is guessed: a value the kernel
//! does not expose is `None` (JSON `null`), and [`capture`] never fails.
#![cfg_attr(test, allow(clippy::disallowed_methods))] // fixtures in unit tests

mod blockdev;
pub mod cgroup;
pub mod diskstats;
mod host;
pub use host::{node_cpus, online, parse_list};
pub mod kthreads;
mod mountinfo;
pub mod procio;
pub mod superblock;
mod users;
pub mod zoned;

use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The machine and, when a target was given, where the benchmark's IO lands.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct SystemInfo {
    /// Kernel release, as in `uname -r`.
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    /// The first CPU's model name from `/proc/cpuinfo`.
    pub cpu_model: Option<String>,
    /// Online logical CPUs (not the process's affinity mask).
    pub cpu_count: Option<u32>,
    pub mem_total_bytes: Option<u64>,
    pub target: Option<TargetInfo>,
    /// Targets of the run's streams' own (a WAL stream on its own device), looked at the same
    /// way; empty when every stream ran on `target`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<TargetInfo>,
}

/// What kind of thing the target path is.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    BlockDevice,
    Directory,
    /// Character device, FIFO, socket: nothing iogauge benchmarks, but recorded as found.
    Other,
}

/// The benchmark target and everything between it and the disks.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TargetInfo {
    /// The path as given to [`capture`].
    pub path: String,
    /// `None` when the path does not exist yet (a file the run will create); the file system,
    /// block size and devices are then those of the nearest existing parent directory.
    pub kind: Option<TargetKind>,
    /// File-system type from `/proc/self/mountinfo` (ext4, xfs, btrfs, tmpfs, ...). `None` for a
    /// block-device target: its IO bypasses any file system, and the device node's own (devtmpfs)
    /// would only mislead.
    pub filesystem: Option<String>,
    pub mount_point: Option<String>,
    /// What was mounted, e.g. `/dev/sda1` or `tmpfs`.
    pub mount_source: Option<String>,
    /// Per-mount options followed by the super-block options not already listed, comma-separated.
    pub mount_options: Option<String>,
    /// `st_blksize` of the target, i.e. the file system's preferred IO size for it. This is the
    /// file-system block size on ext4 and most others, but not guaranteed to be (it is the
    /// statfs-free way; XFS, for one, may report a larger stripe-derived size).
    pub fs_block_size: Option<u64>,
    /// The block-device stack from the device holding the file system (or the target device
    /// itself) down to the physical disks, depth-first, each device once. Empty for file systems
    /// without a block device (tmpfs, NFS, overlay).
    #[serde(default)]
    pub devices: Vec<BlockDevice>,
    /// A btrfs file system's own view of its devices: btrfs spreads IO over all of them, so
    /// each member heads a stack of its own in `devices`.
    #[serde(default)]
    pub btrfs: Option<BtrfsVolume>,
    /// The stripe settings an ext2/3/4 or XFS file system was made with, from its superblock.
    #[serde(default)]
    pub fs_stripe: Option<FsStripe>,
    /// The limits a cgroup puts on IO to the devices of `devices` (the run's own group or one
    /// above it): a run under one measures the limit as much as the device.
    #[serde(default)]
    pub io_limits: Vec<cgroup::IoLimit>,
}

impl TargetInfo {
    /// Whether a device of the stack completes IO in a kernel thread of its own with nothing
    /// below it that can stall, so that IO in flight there and not completing is that thread
    /// waiting, for a CPU where iogauge's own CPU series cannot see it: a loop device over a
    /// file in tmpfs or ramfs (measured so, tests/stall.rs). A loop device over a file on a disk
    /// may be waiting on the disk; md's and dm's threads may wait for a CPU too. Neither is
    /// measured, so neither counts.
    pub fn worker_completes(&self) -> bool {
        self.devices.iter().any(|d| {
            d.role == DeviceRole::Loop
                && matches!(d.loop_backing_fs.as_deref(), Some("tmpfs" | "ramfs"))
        })
    }

    /// What the target's IO ends in when that is memory, said for a reader (`zram0`, `loop0
    /// (a file in tmpfs)`, `tmpfs`): every device at the bottom of the stack is zram, a RAM
    /// disk (brd's ramN) or a loop device over a file in tmpfs or ramfs, or the target is in
    /// tmpfs or ramfs. Such a device has no state of its own to change (no cache to fill, no
    /// spare area): its rate is the CPU's. `None` otherwise, and when a cgroup limits IO to a
    /// device of the stack: then the rate is the limit's.
    pub fn memory(&self) -> Option<String> {
        let in_ram = |fs: &str| fs == "tmpfs" || fs == "ramfs";
        if self.devices.is_empty() {
            return self.filesystem.clone().filter(|fs| in_ram(fs));
        }
        let limited = self.devices.iter().any(|d| {
            self.io_limits
                .iter()
                .any(|l| Some(&l.dev) == d.dev.as_ref())
        });
        let bottom: Vec<&BlockDevice> =
            self.devices.iter().filter(|d| d.below.is_empty()).collect();
        let memory: Vec<String> = bottom
            .iter()
            .filter_map(|d| match (&d.role, d.loop_backing_fs.as_deref()) {
                (DeviceRole::Loop, Some(fs)) if in_ram(fs) => {
                    Some(format!("{} (a file in {fs})", d.name))
                }
                (DeviceRole::Disk, _)
                    if d.name.starts_with("zram")
                        || d.name.strip_prefix("ram").is_some_and(|n| {
                            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                        }) =>
                {
                    Some(d.name.clone())
                }
                _ => None,
            })
            .collect();
        (!limited && !memory.is_empty() && memory.len() == bottom.len()).then(|| memory.join(", "))
    }
}

/// A file system's stripe unit and width (ext4's stride and stripe width, XFS's sunit and
/// swidth), bytes; 0 when unset.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FsStripe {
    pub unit_bytes: u64,
    pub width_bytes: u64,
    pub block_bytes: u64,
}

/// A mounted btrfs, from `/sys/fs/btrfs/FSID/`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BtrfsVolume {
    pub fsid: String,
    /// The profile holding the data (`single`, `raid0`, `raid1`, `raid10`, `raid5`, `raid6`,
    /// `raid1c3`, `dup`): the one with the most bytes in `allocation/data/`.
    pub data_profile: Option<String>,
    /// Kernel names of its devices (`devices/`).
    pub members: Vec<String>,
}

/// What a block device is in the stack.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DeviceRole {
    /// A whole device with nothing below it that the kernel knows of (SCSI/SATA/NVMe/virtio
    /// disks, but also zram or nbd).
    Disk,
    Partition,
    Loop,
    /// Linux software RAID (mdadm).
    Md,
    /// Device mapper (LVM, dm-crypt, ...).
    Dm,
    /// Built on other devices but neither md nor dm (bcache, drbd, ...).
    Stacked,
}

/// One block device and the settings that change how IO to it performs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BlockDevice {
    /// Kernel name, e.g. `sda1`, `nvme0n1`, `loop0`, `md0`, `dm-0`.
    pub name: String,
    /// `major:minor`.
    pub dev: Option<String>,
    pub role: DeviceRole,
    /// As the device reports it (`device/model`, `device/vendor`, of the disk for a partition):
    /// SCSI and ATA give names, virtio gives only a PCI vendor id such as `0x1af4`.
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub size_bytes: Option<u64>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    /// `queue/minimum_io_size`: for md/dm the chunk size, the smallest IO without read-modify-write.
    pub minimum_io_size: Option<u32>,
    /// `queue/optimal_io_size`: for RAID the full data stripe width; `None` when the device
    /// reports none (the kernel's 0).
    pub optimal_io_size: Option<u32>,
    /// The active IO scheduler (elevator).
    pub scheduler: Option<String>,
    #[serde(default)]
    pub schedulers_available: Vec<String>,
    pub nr_requests: Option<u32>,
    pub read_ahead_kb: Option<u32>,
    /// `queue/write_cache`: "write back" or "write through".
    pub write_cache: Option<String>,
    /// `device/queue_depth`, exposed by SCSI/SATA devices only.
    pub queue_depth: Option<u32>,
    pub partition_start_bytes: Option<u64>,
    /// Whether a partition starts on a 1 MiB boundary (the convention that suits SSD erase blocks
    /// and RAID stripes alike); `None` for anything not a partition.
    pub aligned_1mib: Option<bool>,
    /// Whether a partition starts on a physical-block boundary of its disk.
    pub aligned_physical: Option<bool>,
    /// e.g. "raid0", "raid6".
    pub md_level: Option<String>,
    pub md_chunk_bytes: Option<u64>,
    /// Kernel names of the devices an md array is built on.
    #[serde(default)]
    pub md_members: Vec<String>,
    pub loop_backing_file: Option<String>,
    /// The file system a loop device's backing file is in (`tmpfs`, `ext4`, …).
    #[serde(default)]
    pub loop_backing_fs: Option<String>,
    /// Device-mapper name, e.g. `vg0-data` for an LVM volume.
    pub dm_name: Option<String>,
    /// `alignment_offset`: bytes by which the device's start is off its natural alignment (the
    /// larger of its physical block and, stacked on an array, the chunk); 0 when aligned. The
    /// kernel computes it for partitions and stacked devices alike.
    #[serde(default)]
    pub alignment_offset: Option<i64>,
    /// Kernel names of the devices directly beneath it in this stack (an array's members, a
    /// partition's disk, a loop device's backing device); empty at the bottom.
    #[serde(default)]
    pub below: Vec<String>,
    /// Loop devices outside this stack whose backing file lies on this device (or one of its
    /// partitions), each as "loop3 over /var/tmp/a.img": the kernel's own threads do their IO
    /// here, where no process's accounting shows it, so an excess on this device may be theirs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_with: Vec<String>,
}

/// Where the kernel's pseudo file systems are; tests point these at fake trees.
pub(crate) struct Roots {
    pub sys: PathBuf,
    pub proc: PathBuf,
}

impl Roots {
    pub(crate) fn live() -> Self {
        Roots {
            sys: PathBuf::from("/sys"),
            proc: PathBuf::from("/proc"),
        }
    }
}

/// Records the machine and, if `target` is given, the file system and device stack under it.
/// Never fails: whatever cannot be read is `None` or left out.
pub fn capture(target: Option<&Path>) -> SystemInfo {
    let roots = Roots::live();
    SystemInfo {
        kernel: host::kernel(&roots),
        hostname: host::hostname(&roots),
        cpu_model: host::cpu_model(&roots),
        cpu_count: host::cpu_count(&roots),
        mem_total_bytes: host::mem_total_bytes(&roots),
        target: target.map(|path| {
            let mut t = capture_target(&roots, path);
            t.io_limits = limits_on(&roots, &t);
            let ours: Vec<String> = t.devices.iter().map(|d| d.name.clone()).collect();
            for d in &mut t.devices {
                d.shared_with = users::loops_on(&roots, &d.name)
                    .into_iter()
                    .filter(|(n, _)| !ours.contains(n))
                    .map(|(n, over)| format!("{n} over {over}"))
                    .collect();
            }
            t
        }),
        streams: Vec::new(),
    }
}

/// The cgroup IO limits on this process that fall on a device of `t`'s stack, every member
/// included (a limit on one member of an array holds the whole array back).
fn limits_on(roots: &Roots, t: &TargetInfo) -> Vec<cgroup::IoLimit> {
    cgroup::io_limits(roots)
        .into_iter()
        .filter(|l| t.devices.iter().any(|d| d.dev.as_ref() == Some(&l.dev)))
        .collect()
}

/// Reads the limits again at the end of a run and adds each that was not in force at its start
/// (a limit set or tightened meanwhile), marked `set_during_run`: a limit read once, at the
/// start, left a rate that fell to it mid-run to be explained by something else.
pub fn add_limits_set_since(t: &mut TargetInfo) {
    for mut l in limits_on(&Roots::live(), t) {
        let known = t
            .io_limits
            .iter()
            .any(|o| o.dev == l.dev && o.what == l.what && o.value <= l.value);
        if !known {
            l.set_during_run = true;
            t.io_limits.push(l);
        }
    }
}

fn capture_target(roots: &Roots, path: &Path) -> TargetInfo {
    let mut info = TargetInfo {
        path: path.to_string_lossy().into_owned(),
        kind: None,
        filesystem: None,
        mount_point: None,
        mount_source: None,
        mount_options: None,
        fs_block_size: None,
        devices: Vec::new(),
        btrfs: None,
        fs_stripe: None,
        io_limits: Vec::new(),
    };
    let Some((existing, meta, exists)) = nearest_existing(path) else {
        return info;
    };
    let ft = meta.file_type();
    if exists {
        info.kind = Some(if ft.is_file() {
            TargetKind::File
        } else if ft.is_dir() {
            TargetKind::Directory
        } else if ft.is_block_device() {
            TargetKind::BlockDevice
        } else {
            TargetKind::Other
        });
    }
    if exists && ft.is_block_device() {
        let (major, minor) = blockdev::split_dev(meta.rdev());
        info.devices = blockdev::stack(roots, major, minor);
        return info;
    }
    let entries = mountinfo::read(roots);
    let canonical = std::fs::canonicalize(&existing).unwrap_or(existing);
    let mount = mountinfo::find_mount(&entries, &canonical, blockdev::split_dev(meta.dev()));
    if let Some(m) = mount {
        info.filesystem = Some(m.fs_type.clone());
        info.mount_point = Some(m.mount_point.to_string_lossy().into_owned());
        info.mount_source = Some(m.source.clone());
        info.mount_options = Some(m.combined_options());
        info.fs_stripe = superblock::stripe(&m.fs_type, &m.source);
    }
    info.fs_block_size = Some(meta.blksize());
    if let Some((major, minor)) = blockdev::fs_devnum(roots, meta.dev(), mount) {
        info.devices = blockdev::stack(roots, major, minor);
        if mount.is_some_and(|m| m.fs_type == "btrfs") {
            if let Some(first) = info.devices.first().map(|d| d.name.clone()) {
                info.btrfs = blockdev::btrfs_volume(roots, &first);
            }
        }
        // Every device of a multi-device btrfs carries its share of the IO, not only the one
        // the mount names.
        if let Some(v) = info.btrfs.as_ref().filter(|v| v.members.len() > 1) {
            info.devices = blockdev::stacks(roots, &v.members);
        }
    }
    info
}

/// The path itself if it exists, else its nearest existing ancestor, with its metadata and
/// whether it is the path itself.
fn nearest_existing(path: &Path) -> Option<(PathBuf, std::fs::Metadata, bool)> {
    let absolute = std::path::absolute(path).ok()?;
    let mut candidate = absolute.as_path();
    loop {
        if let Ok(meta) = std::fs::metadata(candidate) {
            return Some((candidate.to_path_buf(), meta, candidate == absolute));
        }
        candidate = candidate.parent()?;
    }
}

/// The logical block size of the device a file (or the nearest existing parent of a file still
/// to be created) lives on, or of a block device itself: the unit O_DIRECT offsets and lengths
/// must be multiples of. `None` when the file system has no block device (tmpfs, NFS).
pub fn logical_block_size_for(path: &Path) -> Option<u32> {
    let roots = Roots::live();
    let (major, minor) = device_of(&roots, path)?;
    blockdev::logical_block_size(&roots, major, minor)
}

/// The block device (major, minor) under `path`: the device itself, or the one holding the file
/// system of it (or of its nearest existing parent).
fn device_of(roots: &Roots, path: &Path) -> Option<(u32, u32)> {
    let (existing, meta, _) = nearest_existing(path)?;
    if meta.file_type().is_block_device() {
        return Some(blockdev::split_dev(meta.rdev()));
    }
    let entries = mountinfo::read(roots);
    let canonical = std::fs::canonicalize(&existing).unwrap_or(existing);
    let mount = mountinfo::find_mount(&entries, &canonical, blockdev::split_dev(meta.dev()));
    blockdev::fs_devnum(roots, meta.dev(), mount)
}

/// The block device that takes the IO of `path` (the device itself, or the one holding its file
/// system; a partition's disk) and whether its queue completes IO by polling
/// (`queue/io_poll`, 1 only when the driver has poll queues: NVMe with `nvme.poll_queues` > 0;
/// loop, zram and virtio-blk without poll queues say 0). `None` when it cannot be told (a file
/// system on no single block device, such as tmpfs or btrfs).
pub fn poll_queues_for(path: &Path) -> Option<(String, bool)> {
    let roots = Roots::live();
    let (major, minor) = device_of(&roots, path)?;
    blockdev::io_poll(&roots, major, minor)
}

/// The mount point if the block device `major:minor`, or any partition of it, is mounted; the
/// string `[SWAP]` (as lsblk prints it) if it is an active swap area. Used to refuse writing to a
/// device in use.
pub fn mount_of_device(major: u32, minor: u32) -> Option<String> {
    blockdev::mount_of_device(&Roots::live(), major, minor)
}

/// Why a write to the block device `major:minor` would reach something else in use, looking
/// down and up its whole stack (`users`): words that read after "is", such as "a loop device
/// over /dev/loop3 from 64 MiB, which is mounted on /srv (ext4)". Used to refuse the write.
pub fn device_in_use(major: u32, minor: u32) -> Option<String> {
    users::in_use(&Roots::live(), major, minor)
}

/// Why a write to the regular file `path` would reach something in use: it backs a loop device
/// (and what uses that device, if anything does) or is an active swap file.
pub fn file_in_use(path: &Path) -> Option<String> {
    users::file_in_use(&Roots::live(), path)
}

/// Whether the running kernel has `module` (as `/sys/module` names it: `md_mod`, `raid456`,
/// `dm_mod`, `btrfs`) loaded, built in, or installed where modprobe would load it on demand. Read
/// from `/sys/module`, the part's own traces (/proc/mdstat and its personalities,
/// /proc/filesystems, the device-mapper control device) and
/// `/lib/modules/RELEASE/modules.{builtin,dep}`; nothing is loaded.
pub fn kernel_module_available(module: &str) -> bool {
    kernel_module_in(&Roots::live(), Path::new("/lib/modules"), module)
}

fn kernel_module_in(roots: &Roots, lib: &Path, module: &str) -> bool {
    let norm = |s: &str| s.replace('-', "_");
    if roots.sys.join("module").join(norm(module)).is_dir() {
        return true;
    }
    // Built in without parameters, a part has no /sys/module entry: its own traces say so.
    let read = |p: &str| std::fs::read_to_string(roots.proc.join(p)).unwrap_or_default();
    let personality = |l: &str| {
        read("mdstat")
            .lines()
            .next()
            .is_some_and(|p| p.starts_with("Personalities") && p.contains(&format!("[{l}]")))
    };
    let built_in = match norm(module).as_str() {
        "md_mod" => roots.proc.join("mdstat").exists(),
        "raid456" => personality("raid5"),
        l @ ("raid0" | "raid1" | "raid10") => personality(l),
        "dm_mod" => roots.sys.join("class/misc/device-mapper").exists(),
        fs @ ("btrfs" | "xfs" | "ext4") => read("filesystems")
            .lines()
            .any(|l| l.split_whitespace().last() == Some(fs)),
        _ => false,
    };
    if built_in {
        return true;
    }
    let Some(release) = host::read_trimmed(&roots.proc.join("sys/kernel/osrelease")) else {
        return false;
    };
    ["modules.builtin", "modules.dep"].iter().any(|list| {
        std::fs::read_to_string(lib.join(&release).join(list)).is_ok_and(|text| {
            text.lines().any(|line| {
                // `kernel/drivers/md/raid456.ko.xz: deps…` or `kernel/drivers/md/md-mod.ko`
                let file = line.split(':').next().unwrap_or_default();
                let base = file.rsplit('/').next().unwrap_or_default();
                base.split('.')
                    .next()
                    .is_some_and(|stem| norm(stem) == norm(module))
            })
        })
    })
}

/// Kernel names of the devices built on `name` (from `/sys/class/block/<name>/holders`), e.g. the
/// md array or dm volume a disk belongs to. Empty if none or if `name` is unknown.
pub fn holders_of(name: &str) -> Vec<String> {
    blockdev::holders_of(&Roots::live(), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_module_is_found_loaded_built_in_or_installed_and_nowhere_else() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots {
            sys: dir.path().join("sys"),
            proc: dir.path().join("proc"),
        };
        let lib = dir.path().join("lib");
        std::fs::create_dir_all(roots.sys.join("module/loop")).unwrap();
        std::fs::create_dir_all(roots.proc.join("sys/kernel")).unwrap();
        std::fs::write(roots.proc.join("sys/kernel/osrelease"), "6.1.0-9-amd64\n").unwrap();
        std::fs::create_dir_all(lib.join("6.1.0-9-amd64")).unwrap();
        std::fs::write(
            lib.join("6.1.0-9-amd64/modules.dep"),
            "kernel/drivers/md/md-mod.ko.xz:\nkernel/drivers/md/raid456.ko.xz: kernel/drivers/md/md-mod.ko.xz\n",
        )
        .unwrap();
        std::fs::write(
            lib.join("6.1.0-9-amd64/modules.builtin"),
            "kernel/fs/btrfs/btrfs.ko\n",
        )
        .unwrap();
        for m in ["loop", "md_mod", "md-mod", "raid456", "btrfs"] {
            assert!(kernel_module_in(&roots, &lib, m), "{m}");
        }
        for m in ["dm_mod", "raid4", "md", "xfs"] {
            assert!(!kernel_module_in(&roots, &lib, m), "{m}");
        }
        // Built in, seen in /proc: btrfs in filesystems, md and its raid1 in mdstat.
        std::fs::write(roots.proc.join("filesystems"), "nodev\tproc\n\tbtrfs\n").unwrap();
        std::fs::write(
            roots.proc.join("mdstat"),
            "Personalities : [raid1] \nunused devices: <none>\n",
        )
        .unwrap();
        std::fs::write(roots.proc.join("sys/kernel/osrelease"), "6.18.0-custom\n").unwrap();
        for m in ["btrfs", "md_mod", "raid1"] {
            assert!(kernel_module_in(&roots, &lib, m), "{m}");
        }
        assert!(!kernel_module_in(&roots, &lib, "raid456"));
        std::fs::remove_file(roots.proc.join("filesystems")).unwrap();
        std::fs::remove_file(roots.proc.join("mdstat")).unwrap();
        // Another kernel's lists say nothing of this one.
        std::fs::write(roots.proc.join("sys/kernel/osrelease"), "6.18.0-custom\n").unwrap();
        assert!(!kernel_module_in(&roots, &lib, "md_mod"));
    }

    fn sample() -> SystemInfo {
        SystemInfo {
            kernel: Some("6.1.0-test".into()),
            hostname: None,
            cpu_model: Some("Some CPU @ 2.0GHz".into()),
            cpu_count: Some(16),
            mem_total_bytes: Some(64 << 30),
            target: Some(TargetInfo {
                path: "/data/bench file".into(),
                kind: Some(TargetKind::File),
                filesystem: Some("xfs".into()),
                mount_point: Some("/data".into()),
                mount_source: Some("/dev/md0".into()),
                mount_options: Some("rw,noatime,attr2".into()),
                fs_block_size: Some(4096),
                devices: vec![BlockDevice {
                    name: "md0".into(),
                    dev: Some("9:0".into()),
                    role: DeviceRole::Md,
                    model: None,
                    vendor: None,
                    size_bytes: Some(1 << 40),
                    rotational: Some(false),
                    logical_block_size: Some(512),
                    physical_block_size: Some(4096),
                    minimum_io_size: Some(524288),
                    optimal_io_size: Some(2097152),
                    scheduler: Some("none".into()),
                    schedulers_available: vec!["none".into()],
                    nr_requests: None,
                    read_ahead_kb: Some(4096),
                    write_cache: Some("write back".into()),
                    queue_depth: None,
                    partition_start_bytes: None,
                    aligned_1mib: None,
                    aligned_physical: None,
                    md_level: Some("raid0".into()),
                    md_chunk_bytes: Some(524288),
                    md_members: vec!["sda1".into(), "sdb1".into()],
                    loop_backing_file: None,
                    loop_backing_fs: None,
                    dm_name: None,
                    alignment_offset: Some(0),
                    below: vec!["sda1".into(), "sdb1".into()],
                    shared_with: Vec::new(),
                }],
                btrfs: None,
                fs_stripe: None,
                io_limits: Vec::new(),
            }),
            streams: Vec::new(),
        }
    }

    #[test]
    fn json_round_trip_preserves_everything() {
        let info = sample();
        let json = serde_json::to_string(&info).unwrap();
        let back: SystemInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, info);
    }

    #[test]
    fn unknown_values_serialize_as_null_and_enums_as_snake_case() {
        let value = serde_json::to_value(sample()).unwrap();
        assert!(value["hostname"].is_null());
        assert!(value["target"]["devices"][0]["model"].is_null());
        assert_eq!(value["target"]["kind"], "file");
        assert_eq!(value["target"]["devices"][0]["role"], "md");
        let block = serde_json::to_value(TargetKind::BlockDevice).unwrap();
        assert_eq!(block, "block_device");
    }

    #[test]
    fn missing_lists_deserialize_as_empty() {
        let mut value = serde_json::to_value(sample()).unwrap();
        let device = value["target"]["devices"][0].as_object_mut().unwrap();
        device.remove("md_members");
        device.remove("schedulers_available");
        let back: SystemInfo = serde_json::from_value(value).unwrap();
        let device = &back.target.unwrap().devices[0];
        assert!(device.md_members.is_empty());
        assert!(device.schedulers_available.is_empty());
    }

    #[test]
    fn missing_target_has_no_kind_but_the_parent_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("not-yet").join("bench.dat");
        let info = capture_target(&Roots::live(), &path);
        assert_eq!(info.kind, None);
        assert_eq!(info.path, path.to_string_lossy());
        let parent = capture_target(&Roots::live(), dir.path());
        assert_eq!(parent.kind, Some(TargetKind::Directory));
        assert!(parent.filesystem.is_some());
        assert_eq!(info.filesystem, parent.filesystem);
        assert_eq!(info.devices, parent.devices);
    }

    #[test]
    fn memory_is_zram_a_ram_disk_or_a_loop_over_tmpfs_and_never_under_a_limit() {
        let base = sample().target.unwrap();
        let dev = |name: &str, role: DeviceRole, fs: Option<&str>, below: &[&str], id: &str| {
            BlockDevice {
                name: name.into(),
                role,
                loop_backing_fs: fs.map(Into::into),
                below: below.iter().map(|b| b.to_string()).collect(),
                dev: Some(id.into()),
                ..base.devices[0].clone()
            }
        };
        let with = |devices: Vec<BlockDevice>, fs: &str| TargetInfo {
            devices,
            filesystem: Some(fs.into()),
            ..base.clone()
        };
        let memory = |t: &TargetInfo| t.memory();
        use DeviceRole::{Disk, Loop, Md};
        let zram = with(vec![dev("zram0", Disk, None, &[], "252:0")], "ext4");
        assert_eq!(memory(&zram).as_deref(), Some("zram0"));
        let brd = with(vec![dev("ram1", Disk, None, &[], "1:1")], "xfs");
        assert_eq!(memory(&brd).as_deref(), Some("ram1"));
        let shm = with(vec![dev("loop3", Loop, Some("tmpfs"), &[], "7:3")], "xfs");
        assert_eq!(memory(&shm).as_deref(), Some("loop3 (a file in tmpfs)"));
        assert_eq!(memory(&with(Vec::new(), "tmpfs")).as_deref(), Some("tmpfs"));
        // Near misses: a loop over a disk's file system, a disk merely named like one, a
        // stripe of memory and a disk, a directory on NFS, and memory under a cgroup's limit.
        let on_disk = with(
            vec![
                dev("loop3", Loop, Some("ext4"), &["sda"], "7:3"),
                dev("sda", Disk, None, &[], "8:0"),
            ],
            "xfs",
        );
        assert_eq!(memory(&on_disk), None);
        assert_eq!(
            memory(&with(vec![dev("rampart", Disk, None, &[], "8:0")], "xfs")),
            None
        );
        let mixed = with(
            vec![
                dev("md0", Md, None, &["zram0", "sda"], "9:0"),
                dev("zram0", Disk, None, &[], "252:0"),
                dev("sda", Disk, None, &[], "8:0"),
            ],
            "xfs",
        );
        assert_eq!(memory(&mixed), None);
        assert_eq!(memory(&with(Vec::new(), "nfs")), None);
        let mut held = shm.clone();
        held.io_limits = vec![cgroup::IoLimit {
            dev: "7:3".into(),
            what: "read_iops".into(),
            value: 200,
            set_during_run: false,
        }];
        assert_eq!(memory(&held), None);
    }
}
