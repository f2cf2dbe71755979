//! Real md and device-mapper in a QEMU guest on Debian's kernel (tests/common/guest.rs), where
//! this machine's own kernel has neither: the ground truth that RAID and volume findings are
//! checked against. Each test prints "key value" lines from the guest and reads them here.

use crate::common;
use common::guest;

/// md RAID5 over three disks with a 64 KiB chunk: the kernel advertises a full stripe (two data
/// chunks) as the optimal IO size, and a 4 KiB write, smaller than a stripe, makes md read
/// members before it can write parity (read-modify-write or reconstruct-write) — reads that a
/// write-only workload would not expect. The near miss: full-stripe writes, aligned, read
/// (almost) nothing, so the reads come from the small writes and not from md itself.
#[test]
fn md_raid5_reads_members_for_small_writes_in_the_guest() {
    // --assume-clean: no initial resync, whose reads of every member would hide the ones
    // under test.
    let script = r#"
set -e
mdadm --create /dev/md0 --level=5 --raid-devices=3 --chunk=64 --assume-clean --run \
  /dev/vda /dev/vdb /dev/vdc
echo "chunk_size $(cat /sys/block/md0/md/chunk_size)"
echo "optimal_io_size $(cat /sys/block/md0/queue/optimal_io_size)"
echo "sync_action $(cat /sys/block/md0/md/sync_action)"
reads() { r=0; for d in vda vdb vdc; do set -- $(cat /sys/block/$d/stat); r=$((r + $1)); done; echo $r; }
a=$(reads)
fio --name=full --filename=/dev/md0 --rw=write --bs=128k --direct=1 --ioengine=psync \
  --size=32M --output=/dev/null
b=$(reads)
fio --name=small --filename=/dev/md0 --rw=randwrite --bs=4k --direct=1 --ioengine=psync \
  --size=32M --number_ios=1000 --randrepeat=0 --output=/dev/null
c=$(reads)
echo "full_stripe_writes 256"
echo "full_stripe_member_reads $((b - a))"
echo "small_writes 1000"
echo "small_write_member_reads $((c - b))"
mdadm --stop /dev/md0
mdadm --zero-superblock /dev/vda /dev/vdb /dev/vdc
for d in vda vdb vdc; do if blkid -p /dev/$d >/dev/null 2>&1; then echo "signature_left $d"; fi; done
echo "finished yes"
"#;
    let Some(out) = guest::run_ok(3, "64M", script) else {
        return;
    };
    assert_eq!(
        out.value("finished"),
        Some("yes"),
        "the script ran to its end:\n{out}"
    );
    let chunk = out.number("chunk_size");
    assert_eq!(chunk, 64 * 1024, "{out}");
    assert_eq!(
        out.number("optimal_io_size"),
        2 * chunk,
        "a 3-disk RAID5's optimal IO is its two data chunks:\n{out}"
    );
    assert_eq!(out.value("sync_action"), Some("idle"), "{out}");
    // Each small write reads at least one member block unless its stripe is still cached (the
    // stripe cache holds 256 of the 8192 4 KiB stripes here); half is a wide margin.
    let small = out.number("small_writes");
    let small_reads = out.number("small_write_member_reads");
    assert!(
        small_reads >= small / 2,
        "{small} direct 4 KiB writes made only {small_reads} member reads:\n{out}"
    );
    let full = out.number("full_stripe_writes");
    let full_reads = out.number("full_stripe_member_reads");
    assert!(
        full_reads < full / 8,
        "{full} aligned full-stripe writes made {full_reads} member reads:\n{out}"
    );
    assert!(
        out.value("signature_left").is_none(),
        "members still carry a signature after --zero-superblock:\n{out}"
    );
}

/// lvm2 and dm targets work in the guest: a striped LV (two stripes of 64 KiB) advertises its
/// stripe as optimal IO like md does, a dm-delay device carries its delay in its table and
/// serves reads, and everything is removed without a trace on the disks.
#[test]
fn lvm_and_dm_delay_work_in_the_guest() {
    let script = r#"
set -e
pvcreate -q /dev/vda /dev/vdb
vgcreate -q iogauge /dev/vda /dev/vdb
lvcreate -q -y -n striped -i 2 -I 64k -L 32M iogauge
echo "lv $(lvs --noheadings --units k -o segtype,stripes,stripe_size iogauge/striped)"
dm=$(dmsetup info -c --noheadings -o blkdevname iogauge-striped)
echo "lv_optimal_io_size $(cat /sys/block/$dm/queue/optimal_io_size)"
dmsetup create iogauge-slow --table "0 $(blockdev --getsz /dev/vdc) delay /dev/vdc 0 50"
echo "delay_table $(dmsetup table iogauge-slow)"
dd if=/dev/mapper/iogauge-slow of=/dev/null bs=4k count=4 iflag=direct status=none
echo "delay_read ok"
dmsetup remove iogauge-slow
lvremove -q -y iogauge/striped
vgremove -q iogauge
pvremove -q /dev/vda /dev/vdb
echo "dm_devices_left $(dmsetup ls)"
for d in vda vdb vdc; do if blkid -p /dev/$d >/dev/null 2>&1; then echo "signature_left $d"; fi; done
echo "finished yes"
"#;
    let Some(out) = guest::run_ok(3, "64M", script) else {
        return;
    };
    assert_eq!(
        out.value("finished"),
        Some("yes"),
        "the script ran to its end:\n{out}"
    );
    let lv: Vec<&str> = out.value("lv").unwrap_or("").split_whitespace().collect();
    assert_eq!(lv, ["striped", "2", "64.00k"], "{out}");
    assert_eq!(out.number("lv_optimal_io_size"), 2 * 64 * 1024, "{out}");
    // "0 SECTORS delay MAJOR:MINOR 0 50": reads and writes to vdc, delayed 50 ms.
    let table: Vec<&str> = out
        .value("delay_table")
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(table.get(2), Some(&"delay"), "{out}");
    assert_eq!(table.get(4..), Some(&["0", "50"][..]), "{out}");
    assert_eq!(out.value("delay_read"), Some("ok"), "{out}");
    assert_eq!(
        out.value("dm_devices_left"),
        Some("No devices found"),
        "{out}"
    );
    assert!(
        out.value("signature_left").is_none(),
        "a disk still carries a signature after the removals:\n{out}"
    );
}
