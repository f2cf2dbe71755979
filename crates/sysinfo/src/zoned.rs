//! Whether a block device is zoned (`queue/zoned`: none, host-aware, host-managed): a zoned
//! device keeps its own write pointers, which fio's zonemode=zbd emulation, iogauge's, must not
//! write past.

use super::{blockdev, device_of, Roots};
use std::path::Path;

/// The zoned model of the block device `path` is (a partition's disk's), when it is not
/// "none"; `None` for a file, a device that is not zoned, or one whose model cannot be read.
pub fn zoned_model_for(path: &Path) -> Option<String> {
    zoned_model(&Roots::live(), path)
}

fn zoned_model(roots: &Roots, path: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    if !std::fs::metadata(path).ok()?.file_type().is_block_device() {
        return None;
    }
    let (major, minor) = device_of(roots, path)?;
    let dir = blockdev::device_dir(roots, major, minor)?;
    let model = std::fs::read_to_string(blockdev::whole_disk_dir(&dir).join("queue/zoned")).ok()?;
    let model = model.trim();
    (!model.is_empty() && model != "none").then(|| model.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// The machine's block devices are not zoned and a regular file has no model; a sysfs
    /// whose disk says host-managed is read as zoned (the kernel cannot make one here).
    #[test]
    fn a_zoned_model_is_read_from_the_disks_queue() {
        assert_eq!(zoned_model_for(Path::new("/etc/hostname")), None);
        let dev = std::fs::read_dir("/sys/class/block")
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| Path::new("/dev").join(e.file_name()))
            .find(|p| p.exists())
            .expect("a block device in /dev");
        assert_eq!(zoned_model_for(&dev), None, "{}", dev.display());
        let (major, minor) = blockdev::split_dev(std::fs::metadata(&dev).unwrap().rdev());
        let root = tempfile::tempdir().unwrap();
        let roots = Roots {
            sys: root.path().join("sys"),
            proc: root.path().join("proc"),
        };
        let disk = roots.sys.join("devices/virtual/block/disk");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(roots.sys.join("dev/block")).unwrap();
        let link = roots.sys.join(format!("dev/block/{major}:{minor}"));
        std::os::unix::fs::symlink(&disk, link).unwrap();
        let said = |model: &str| {
            std::fs::write(disk.join("queue/zoned"), model).unwrap();
            zoned_model(&roots, &dev)
        };
        assert_eq!(said("host-managed\n").as_deref(), Some("host-managed"));
        assert_eq!(said("none\n"), None);
    }
}
