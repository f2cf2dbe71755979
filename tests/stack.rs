//! The write gate sees the whole stack (issue 55): a device is refused when a write to it would
//! land under something in use anywhere down or up its stack, and each refusal names the chain.
//! Every stack here is made by the kernel (loop devices over loop devices and over image files,
//! a partitioned loop device, a two-device btrfs), and each positive has a near miss beside it:
//! the same shape with the byte ranges apart, which must be written.

use std::path::Path;
use std::process::Output;

use crate::common;
use common::*;

const MIB: u64 = 1 << 20;

/// A loop device over `backing` (a device or a file) from `offset` bytes, `sizelimit` long when
/// given. Detached on drop.
fn loop_over(backing: &str, offset: u64, sizelimit: Option<u64>) -> LoopDev {
    let offset = offset.to_string();
    let limit = sizelimit.map(|s| s.to_string());
    let mut args = vec!["-f", "--show", "-o", &offset];
    if let Some(l) = &limit {
        args.extend(["--sizelimit", l]);
    }
    args.push(backing);
    let dev = losetup(&args);
    LoopDev {
        dev,
        file: std::fs::canonicalize(backing).unwrap(),
    }
}

/// A write of one second's random writes to `dev`, with consent.
fn write_to(dir: &Path, dev: &str) -> Output {
    iogauge(
        dir,
        &[
            "run",
            dev,
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--time",
            "200ms",
            "--no-store",
        ],
    )
}

fn written(out: &Output) {
    assert!(out.status.success(), "written: {}", stderr_of(out));
}

#[test]
fn a_loop_over_a_mounted_file_systems_device_is_never_written() {
    needs_root!();
    let fs = Fs::ext4(128 * MIB, "rw");
    let dir = fs.dir.path();
    let mnt = fs.path().to_str().unwrap().to_string();
    for offset in [0, 64 * MIB] {
        let over = loop_over(&fs.dev.dev, offset, None);
        let err = assert_refused(
            &write_to(dir, &over.dev),
            &[
                &over.dev,
                "a loop device over",
                &fs.dev.dev,
                "mounted on",
                &mnt,
            ],
        );
        eprintln!("user saw: {}", err.trim_end());
        // A scratch device for a sweep (no consent flag) is refused alike, before anything.
        let out = iogauge(
            dir,
            &[
                "sweep",
                "quick",
                "--scratch",
                &over.dev,
                "--fs",
                "ext4",
                "--dry-run",
            ],
        );
        assert_refused(&out, &["--scratch", &over.dev, &fs.dev.dev, "mounted on"]);
    }
    // Near miss: the same loop over a loop device nothing uses is written.
    let spare = blank_loop(dir, "spare.img", 64 * MIB, 512);
    let over = loop_over(&spare.dev, 32 * MIB, None);
    // The dry run draws the stack the write would reach: the loop device, the one beneath it,
    // and the file that backs that one.
    let plan = iogauge(dir, &["run", &over.dev, "--dry-run"]);
    let text = String::from_utf8_lossy(&plan.stdout);
    let (o, sp) = (over.name(), spare.name());
    assert!(
        text.contains(&format!("stack: {}", over.dev))
            && text.contains(&format!("└─ {o} (loop over {}", spare.dev))
            && text.contains(&format!("└─ {sp} (loop over {}", spare.file.display())),
        "{text}"
    );
    written(&write_to(dir, &over.dev));
}

#[test]
fn a_loop_over_the_image_file_of_a_mounted_loop_is_written_only_outside_its_range() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("shared.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(128 * MIB)
        .unwrap();
    let img_s = img.to_str().unwrap();
    // The file system's loop device maps the first 64 MiB of the image only.
    let lower = loop_over(img_s, 0, Some(64 * MIB));
    sh("mkfs.ext4", &["-q", "-F", &lower.dev]);
    let mnt = Mount::new(&lower.dev, &dir.path().join("mnt"), "rw");
    let inside = loop_over(img_s, 32 * MIB, None);
    let err = assert_refused(
        &write_to(dir.path(), &inside.dev),
        &[&inside.dev, img_s, "also backs", &lower.dev, "mounted on"],
    );
    eprintln!("user saw: {}", err.trim_end());
    // Near miss: the image's second half, which the mounted loop device does not map.
    let outside = loop_over(img_s, 64 * MIB, None);
    written(&write_to(dir.path(), &outside.dev));
    drop(mnt);
}

#[test]
fn a_device_under_a_mounted_loop_device_is_never_written() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let lower = blank_loop(dir.path(), "lower.img", 64 * MIB, 512);
    let upper = loop_over(&lower.dev, MIB, None);
    // Before anything uses the upper device, the lower one is free to write.
    written(&write_to(dir.path(), &lower.dev));
    sh("wipefs", &["-a", "-q", &lower.dev]);
    sh("mkfs.ext4", &["-q", "-F", &upper.dev]);
    let mnt = Mount::new(&upper.dev, &dir.path().join("mnt"), "rw");
    let err = assert_refused(
        &write_to(dir.path(), &lower.dev),
        &[&lower.dev, "under", &upper.dev, "from 1 MiB", "mounted on"],
    );
    eprintln!("user saw: {}", err.trim_end());
    drop(mnt);
}

/// An MBR with two Linux partitions, at 1..32 MiB and 32..63 MiB.
fn partitioned_image(path: &Path) {
    let mut mbr = vec![0u8; 512];
    for (i, (start, len)) in [(2048u32, 63488u32), (65536, 63488)]
        .into_iter()
        .enumerate()
    {
        let e = &mut mbr[446 + 16 * i..446 + 16 * (i + 1)];
        e[4] = 0x83;
        e[8..12].copy_from_slice(&start.to_le_bytes());
        e[12..16].copy_from_slice(&len.to_le_bytes());
    }
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    std::fs::write(path, &mbr).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(64 * MIB)
        .unwrap();
}

#[test]
fn a_partition_is_judged_by_its_own_bytes_on_a_disk_with_a_mounted_partition() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    partitioned_image(&img);
    let disk = LoopDev {
        dev: losetup(&["-f", "--show", "-P", img.to_str().unwrap()]),
        file: std::fs::canonicalize(&img).unwrap(),
    };
    let (p1, p2) = (format!("{}p1", disk.dev), format!("{}p2", disk.dev));
    // A kernel built without the DOS label parser scans nothing: the partitions are then added
    // by the BLKPG ioctl (partx), real partitions all the same.
    if !Path::new(&p1).exists() {
        sh("partx", &["-a", &disk.dev]);
    }
    wait_until(
        "the partitions' device nodes",
        std::time::Duration::from_secs(10),
        || Path::new(&p1).exists() && Path::new(&p2).exists(),
    );
    sh("mkfs.ext4", &["-q", "-F", &p1]);
    let mnt = Mount::new(&p1, &dir.path().join("mnt"), "rw");
    // The whole disk holds the mounted partition.
    assert_refused(
        &write_to(dir.path(), &disk.dev),
        &[&disk.dev, "under partition", &p1, "mounted on"],
    );
    // A loop device over the disk that reaches into the first partition is refused …
    let into_p1 = loop_over(&disk.dev, 8 * MIB, None);
    let err = assert_refused(
        &write_to(dir.path(), &into_p1.dev),
        &[
            &into_p1.dev,
            &disk.dev,
            "from 8 MiB",
            "under partition",
            &p1,
        ],
    );
    eprintln!("user saw: {}", err.trim_end());
    // … and near misses, the second partition and a loop device inside it, are written.
    let into_p2 = loop_over(&disk.dev, 40 * MIB, None);
    written(&write_to(dir.path(), &into_p2.dev));
    drop(into_p2);
    written(&write_to(dir.path(), &p2));
    drop(into_p1);
    drop(mnt);
}

#[test]
fn every_device_of_a_mounted_multi_device_btrfs_is_in_use() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    let dir = tempfile::tempdir().unwrap();
    let a = blank_loop(dir.path(), "a.img", 256 * MIB, 512);
    let b = blank_loop(dir.path(), "b.img", 256 * MIB, 512);
    let spare = blank_loop(dir.path(), "c.img", 256 * MIB, 512);
    sh(
        "mkfs.btrfs",
        &["-q", "-f", "-d", "single", "-m", "raid1", &a.dev, &b.dev],
    );
    let opts = format!("device={},device={}", a.dev, b.dev);
    let mnt = Mount::new(&a.dev, &dir.path().join("mnt"), &opts);
    // The second device is no mount's source and has no holders.
    let err = assert_refused(
        &write_to(dir.path(), &b.dev),
        &[&b.dev, "a device of the btrfs mounted on"],
    );
    eprintln!("user saw: {}", err.trim_end());
    // Near miss: a third blank device beside them.
    written(&write_to(dir.path(), &spare.dev));
    drop(mnt);
}

/// The walk through md and device-mapper, on Debian's kernel in a guest (this machine's has
/// neither): ext4 on an LVM volume on md RAID1. A loop device over the mounted volume and one
/// over the array are refused; a member of the array is held by it; the second volume of the
/// same volume group is written (LVM keeps volumes apart, which the gate trusts); a dm-linear
/// volume over a disk another dm volume maps and mounts is written too, by the same trust —
/// and a loop device over that disk is refused.
#[test]
fn the_walk_goes_through_md_and_lvm_in_the_guest() {
    let script = format!(
        r#"
set -e
modprobe loop 2>/dev/null || true
modprobe ext4 2>/dev/null || true
export IOGAUGE_DB=/tmp/g.db IOGAUGE_RUN_DIR=/tmp/run
mdadm --create /dev/md0 --level=1 --raid-devices=2 --assume-clean --run /dev/vda /dev/vdb 2>/dev/null
pvcreate -q /dev/md0
vgcreate -q g /dev/md0
lvcreate -q -y -n a -L 20M g
lvcreate -q -y -n b -L 20M g
mkfs.ext4 -q /dev/g/a
mkdir -p /tmp/m /tmp/n
mount /dev/g/a /tmp/m
dmsetup create lin --table "0 32768 linear /dev/vdc 0"
mkfs.ext4 -q /dev/mapper/lin
mount /dev/mapper/lin /tmp/n
dmsetup create free --table "0 32768 linear /dev/vdc 65536"
try() {{
  name=$1; shift
  if {BIN} run "$@" --rw randwrite --allow-overwrite --time 200ms --no-store >/tmp/o 2>/tmp/e; then
    echo "$name written"
  else
    echo "$name refused $(head -1 /tmp/e)"
  fi
}}
try lv_b /dev/g/b
try member /dev/vda
l=$(losetup -f --show /dev/g/a); try loop_over_lv $l; losetup -d $l
l=$(losetup -f --show -o 30M /dev/md0); try loop_over_md $l; losetup -d $l
try dm_beside /dev/mapper/free
l=$(losetup -f --show /dev/vdc); try loop_over_disk $l; losetup -d $l
{BIN} run /tmp/m --size 8m --time 200ms >/dev/null 2>&1
{BIN} show last | sed -n '/^  stack/,/^  device/p' | grep -v '^  device' | sed 's/^/drawn /'
umount /tmp/m /tmp/n
dmsetup remove free
dmsetup remove lin
lvremove -q -y g
vgremove -q g
pvremove -q /dev/md0
mdadm --stop /dev/md0 2>/dev/null
echo "finished yes"
"#,
        BIN = guest::iogauge()
    );
    let Some(out) = guest::run_ok(3, "64M", &script) else {
        return;
    };
    assert_eq!(out.value("finished"), Some("yes"), "{out}");
    let says = |k: &str| out.value(k).unwrap_or("").to_string();
    eprintln!("guest: {}", out.stdout);
    assert_eq!(says("lv_b"), "written", "{out}");
    assert_eq!(says("dm_beside"), "written", "{out}");
    assert!(says("member").contains("held by md0"), "{out}");
    // `show` draws the stack it recorded: ext4 on the volume on the array on the two disks.
    for line in [
        "stack       ext4 at /tmp/m",
        "└─ dm-0 (dm g-a · 20 MiB)",
        "└─ md0 (md raid1 · 2 members",
        "├─ vda (disk",
        "└─ vdb (disk",
    ] {
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with("drawn ") && l.contains(line)),
            "{line:?} in {out}"
        );
    }
    for (k, chain) in [
        (
            "loop_over_lv",
            vec![
                "refused",
                "a loop device over /dev/dm-",
                "mounted on /tmp/m (ext4)",
            ],
        ),
        (
            "loop_over_md",
            vec![
                "refused",
                "a loop device over /dev/md0 from 30 MiB",
                "held by dm-",
            ],
        ),
        (
            "loop_over_disk",
            vec!["refused", "a loop device over /dev/vdc", "held by dm-"],
        ),
    ] {
        for c in chain {
            assert!(says(k).contains(c), "{k}: {c:?} in {out}");
        }
    }
}
