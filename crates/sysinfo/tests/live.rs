//! Captures on the machine the tests run on, checked against what the kernel files and the
//! util-linux tools (findmnt, blockdev, losetup) report independently.
#![allow(clippy::disallowed_methods)] // fixtures; clippy.toml binds the program only

use iogauge_sysinfo::{
    capture, holders_of, logical_block_size_for, mount_of_device, DeviceRole, TargetKind,
};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tool's trimmed stdout, or `None` if it is missing or fails.
fn tool(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn run(program: &str, args: &[&str]) {
    let status = Command::new(program).args(args).status().unwrap();
    assert!(status.success(), "{program} {args:?} failed: {status}");
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

fn is_root() -> bool {
    // /proc/self belongs to the process's effective user.
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn has(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok()
}

#[test]
fn host_values_match_the_kernel_and_getconf() {
    let info = capture(None);
    assert_eq!(info.kernel, Some(read("/proc/sys/kernel/osrelease")));
    assert_eq!(info.hostname, Some(read("/proc/sys/kernel/hostname")));
    assert!(info.target.is_none());
    if let Some(online) = tool("getconf", &["_NPROCESSORS_ONLN"]) {
        assert_eq!(info.cpu_count, online.parse().ok());
    }
    if let Some(free) = tool("free", &["-b"]) {
        let total = free
            .lines()
            .find(|l| l.starts_with("Mem:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|t| t.parse::<u64>().ok());
        assert_eq!(info.mem_total_bytes, total);
    }
}

#[test]
fn tmp_file_matches_findmnt_and_ends_on_a_disk() {
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, vec![0u8; 8192]).unwrap();
    let path = file.to_str().unwrap();
    let target = capture(Some(&file)).target.unwrap();
    assert_eq!(target.path, path);
    assert_eq!(target.kind, Some(TargetKind::File));
    let Some(fstype) = tool("findmnt", &["-no", "FSTYPE", "-T", path]) else {
        return skip("findmnt not available");
    };
    assert_eq!(target.filesystem.as_deref(), Some(fstype.as_str()));
    let mount_point = tool("findmnt", &["-no", "TARGET", "-T", path]);
    assert_eq!(target.mount_point, mount_point);
    let blksize = tool("stat", &["-c", "%o", path]).and_then(|s| s.parse().ok());
    assert_eq!(target.fs_block_size, blksize);

    let source = tool("findmnt", &["-no", "SOURCE", "-T", path]).unwrap_or_default();
    if !source.starts_with("/dev/") {
        assert!(target.devices.is_empty(), "{source} is not a block device");
        println!("note: /tmp is on {source}, which has no block device");
        return;
    }
    let last = target.devices.last().expect("a block-device stack");
    assert_eq!(last.role, DeviceRole::Disk);
    if let Some(sector) = tool("blockdev", &["--getss", &source]) {
        assert_eq!(logical_block_size_for(&file), sector.parse().ok());
        // A file still to be created is judged by the directory it will go in.
        assert_eq!(
            logical_block_size_for(&dir.path().join("later")),
            sector.parse().ok()
        );
    }
}

/// Unmounts and detaches whatever the loop test set up, also when an assertion fails.
struct LoopGuard {
    mount: Option<PathBuf>,
    device: Option<String>,
}

impl LoopGuard {
    fn unmount(&mut self) {
        if let Some(mount) = self.mount.take() {
            let _ = Command::new("umount").arg(&mount).status();
        }
    }
}

impl Drop for LoopGuard {
    fn drop(&mut self) {
        self.unmount();
        if let Some(device) = self.device.take() {
            let _ = Command::new("losetup").args(["-d", &device]).status();
        }
    }
}

#[test]
fn ext4_on_a_loop_device_shows_the_whole_stack() {
    if !is_root() || !has("losetup") || !has("mkfs.ext4") {
        return skip("needs root, losetup and mkfs.ext4");
    }
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let image = dir.path().join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let image_str = image.to_str().unwrap();
    let mut guard = LoopGuard {
        mount: None,
        device: None,
    };
    // A non-default sector size, so the logical block size cannot be right by coincidence.
    let device = tool(
        "losetup",
        &["-f", "--show", "--sector-size", "4096", image_str],
    )
    .expect("losetup -f --show");
    guard.device = Some(device.clone());
    run("mkfs.ext4", &["-q", &device]);
    let mount = dir.path().join("mnt");
    std::fs::create_dir(&mount).unwrap();
    run("mount", &[&device, mount.to_str().unwrap()]);
    guard.mount = Some(mount.clone());
    let file = mount.join("data");
    std::fs::write(&file, b"iogauge").unwrap();

    let name = device.trim_start_matches("/dev/").to_string();
    let target = capture(Some(&file)).target.unwrap();
    assert_eq!(target.filesystem.as_deref(), Some("ext4"));
    assert_eq!(target.mount_point.as_deref(), mount.to_str());
    assert_eq!(target.mount_source.as_deref(), Some(device.as_str()));
    let top = &target.devices[0];
    assert_eq!(top.name, name);
    assert_eq!(top.role, DeviceRole::Loop);
    assert_eq!(top.loop_backing_file.as_deref(), Some(image_str));
    assert_eq!(top.logical_block_size, Some(4096));
    assert_eq!(top.size_bytes, Some(64 << 20));
    // Below the loop device is exactly the stack the image file itself lives on.
    let mut image_stack = capture(Some(&image)).target.unwrap().devices;
    // Seen from the image, the loop device over it is another stack sharing that disk; seen
    // from the loop device's file system it is part of this one.
    if let Some(disk) = image_stack.last_mut() {
        assert!(
            disk.shared_with
                .iter()
                .any(|s| s.starts_with(&format!("{name} over "))),
            "{:?}",
            disk.shared_with
        );
    }
    // Whatever else shares the disk (another test's loop device) may come and go between the
    // two looks: the stacks are compared without it.
    let unshared = |d: &[iogauge_sysinfo::BlockDevice]| {
        d.iter()
            .cloned()
            .map(|mut d| {
                d.shared_with.clear();
                d
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(unshared(&target.devices[1..]), unshared(&image_stack));
    if let Some(last) = target.devices.last().filter(|_| !image_stack.is_empty()) {
        assert_eq!(last.role, DeviceRole::Disk);
    }

    assert_eq!(logical_block_size_for(&file), Some(4096));
    assert_eq!(logical_block_size_for(Path::new(&device)), Some(4096));
    let raw = capture(Some(Path::new(&device))).target.unwrap();
    assert_eq!(raw.kind, Some(TargetKind::BlockDevice));
    assert_eq!(raw.filesystem, None);
    assert_eq!(raw.devices[0].name, name);

    let sys_dev = read(&format!("/sys/class/block/{name}/dev"));
    let (major, minor) = sys_dev.split_once(':').unwrap();
    let (major, minor) = (major.parse().unwrap(), minor.parse().unwrap());
    assert_eq!(mount_of_device(major, minor).as_deref(), mount.to_str());
    assert!(holders_of(&name).is_empty());
    guard.unmount();
    assert_eq!(mount_of_device(major, minor), None);
}

/// A test that cannot run here says so; under CI=true it fails instead, so a green CI run means
/// every test ran (the main crate's tests/common does the same).
fn skip(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("cannot run here: {why} (CI=true: every test must run)");
    }
    println!("skipped: {why}");
}
