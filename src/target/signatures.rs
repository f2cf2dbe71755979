//! Signatures of data iogauge must never write over — file systems, partition tables, RAID and
//! LVM members, swap, encryption — found by their magic numbers where each format's on-disk
//! layout puts them (the places libblkid probes; offsets from the formats' specifications:
//! ext2 `s_magic` at 1024+56, XFS `sb_magicnum` at 0, btrfs superblock at 64 KiB + 64, swap at
//! page size − 10, MBR boot signature at 510, GPT header at LBA 1, LVM2 label in sectors 0–3,
//! md superblocks at 0 (v1.1), 4 KiB (v1.2), 8–12 KiB before the end (v1.0) and in the last
//! 64 KiB-aligned 64 KiB (v0.90)). No tool is needed; `blkid -p` is asked as well when it is
//! installed, so a format missing here is still caught where libblkid knows it.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// A signature found on a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// What the signature says the device holds, e.g. "an ext2/3/4 file system".
    pub what: String,
    /// Byte offset of the magic number, or `None` when blkid found it.
    pub offset: Option<u64>,
    /// The file system's UUID, as blkid reads it (how `clean` knows a file system iogauge made
    /// from one a user made since on the same device).
    pub uuid: Option<String>,
}

/// Bytes read from the start of the device: every signature checked here lies in the first
/// 256 KiB (btrfs at 64 KiB, ZFS uberblocks at 128–256 KiB).
const HEAD: u64 = 256 << 10;

const MD_MAGIC: u32 = 0xa92b_4efc;
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];

/// The first signature on a device (or file) of `len` bytes, if any.
pub fn probe(file: &File, len: u64) -> io::Result<Option<Found>> {
    let head = read_at(file, 0, HEAD.min(len))?;
    if let Some(found) = probe_head(&head) {
        return Ok(Some(found));
    }
    for (offset, version) in md_tail_offsets(len) {
        let sb = read_at(file, offset, 8)?;
        if is_md(&sb, 0, if version == "0.90" { 0 } else { 1 }) {
            return Ok(Some(found(
                format!("a Linux md RAID member (superblock v{version})"),
                offset,
            )));
        }
    }
    Ok(None)
}

/// What `blkid -p` (low-level probing, no cache) finds on `path`, when blkid is installed.
pub fn blkid(path: &Path) -> Option<Found> {
    let out = ["blkid", "/usr/sbin/blkid", "/sbin/blkid"]
        .iter()
        .find_map(|cmd| {
            Command::new(cmd)
                .args(["-p", "-o", "export", "--"])
                .arg(path)
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .ok()
        })?;
    match out.status.code() {
        Some(0) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let value = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                    .map(str::to_string)
            };
            let what = match (value("TYPE"), value("PTTYPE")) {
                (Some(t), _) => format!("a '{t}' signature"),
                (None, Some(t)) => format!("a '{t}' partition table"),
                (None, None) => return None,
            };
            Some(Found {
                what: format!("{what} (found by blkid -p)"),
                offset: None,
                uuid: value("UUID"),
            })
        }
        // 8: "ambivalent probing result", i.e. more than one signature.
        Some(8) => Some(Found {
            what: "more than one signature (found by blkid -p)".into(),
            offset: None,
            uuid: None,
        }),
        _ => None,
    }
}

fn found(what: impl Into<String>, offset: u64) -> Found {
    Found {
        uuid: None,
        what: what.into(),
        offset: Some(offset),
    }
}

/// Checks the signatures in the first bytes of a device, most specific first (a FAT boot
/// sector also carries the MBR's 0x55AA).
fn probe_head(h: &[u8]) -> Option<Found> {
    if bytes(h, 0, 6) == Some(b"LUKS\xba\xbe") {
        return Some(found("a LUKS encrypted volume", 0));
    }
    if bytes(h, 0, 4) == Some(b"XFSB")
        && be32(h, 4).is_some_and(|bs| bs.is_power_of_two() && (512..=65536).contains(&bs))
    {
        return Some(found("an XFS file system", 0));
    }
    if bytes(h, 65600, 8) == Some(b"_BHRfS_M") {
        return Some(found("a btrfs file system", 65600));
    }
    // s_log_block_size (block size = 1 KiB << it) is at most 6: a random 0xEF53 is not enough.
    if le16(h, 1080) == Some(0xEF53) && le32(h, 1024 + 24).is_some_and(|l| l <= 6) {
        return Some(found("an ext2/3/4 file system", 1080));
    }
    for page in [4096u64, 8192, 16384, 65536] {
        let at = page - 10;
        if matches!(bytes(h, at, 10), Some(b"SWAPSPACE2" | b"SWAP-SPACE")) {
            return Some(found("a swap area", at));
        }
    }
    for (offset, version) in [(0u64, "1.1"), (4096, "1.2")] {
        if is_md(h, offset, 1) {
            return Some(found(
                format!("a Linux md RAID member (superblock v{version})"),
                offset,
            ));
        }
    }
    for sector in 0..4u64 {
        if bytes(h, sector * 512, 8) == Some(b"LABELONE") {
            return Some(found("an LVM physical volume", sector * 512));
        }
    }
    if bytes(h, 4096 + 24, 16) == Some(&BCACHE_MAGIC) {
        return Some(found("a bcache device", 4096 + 24));
    }
    // The uberblock ring of the first ZFS label: slots of at least 1 KiB, in either byte order.
    for slot in 0..128u64 {
        let at = (128 << 10) + slot * 1024;
        if let Some(b) = bytes(h, at, 8) {
            let le = u64::from_le_bytes(b.try_into().unwrap_or_default());
            if le == ZFS_UBERBLOCK_MAGIC || le.swap_bytes() == ZFS_UBERBLOCK_MAGIC {
                return Some(found("a ZFS pool member", at));
            }
        }
    }
    if bytes(h, 3, 8) == Some(b"NTFS    ") {
        return Some(found("an NTFS file system", 3));
    }
    if bytes(h, 3, 8) == Some(b"EXFAT   ") {
        return Some(found("an exFAT file system", 3));
    }
    let boot_signature = bytes(h, 510, 2) == Some(&[0x55, 0xAA]);
    if boot_signature
        && matches!(h.first(), Some(0xEB | 0xE9))
        && [0x36u64, 0x52]
            .iter()
            .any(|&at| bytes(h, at, 3) == Some(b"FAT"))
    {
        return Some(found("a FAT file system", 0x36));
    }
    if bytes(h, 32769, 5) == Some(b"CD001") {
        return Some(found("an ISO 9660 file system", 32769));
    }
    for at in [512u64, 4096] {
        if bytes(h, at, 8) == Some(b"EFI PART") {
            return Some(found("a GPT partition table", at));
        }
    }
    if boot_signature && has_mbr_partition(h) {
        return Some(found("an MBR (DOS) partition table", 510));
    }
    None
}

/// An MBR with at least one used entry; every entry's boot flag must be 0x00 or 0x80, as in
/// libblkid, so random data ending in 0x55AA does not pass for a partition table.
fn has_mbr_partition(h: &[u8]) -> bool {
    let entries: Vec<&[u8]> = (0..4u64)
        .filter_map(|i| bytes(h, 446 + 16 * i, 16))
        .collect();
    entries.len() == 4
        && entries.iter().all(|e| matches!(e[0], 0x00 | 0x80))
        && entries.iter().any(|e| e[4] != 0)
}

/// An md superblock at `offset`: the magic, then `major_version` (0 for v0.90, 1 for v1.x).
/// v0.90 is written in the host's byte order, v1.x always little-endian; both orders are
/// accepted for v0.90 so a disk moved from a big-endian host is still recognised.
fn is_md(h: &[u8], offset: u64, major: u32) -> bool {
    let (Some(magic), Some(version)) = (le32(h, offset), le32(h, offset + 4)) else {
        return false;
    };
    (magic == MD_MAGIC && version == major)
        || (major == 0 && magic.swap_bytes() == MD_MAGIC && version.swap_bytes() == major)
}

/// Where md keeps its superblock near the end of a device of `len` bytes: v1.0 at 8–12 KiB
/// before the end on a 4 KiB boundary, v0.90 in the last whole 64 KiB of the device.
pub fn md_tail_offsets(len: u64) -> Vec<(u64, &'static str)> {
    let mut out = Vec::new();
    let sectors = len / 512;
    if sectors >= 16 {
        out.push((((sectors - 16) & !7) * 512, "1.0"));
    }
    let aligned = len & !0xFFFF;
    if aligned >= 0x10000 {
        out.push((aligned - 0x10000, "0.90"));
    }
    out
}

fn read_at(file: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

fn bytes(h: &[u8], at: u64, n: usize) -> Option<&[u8]> {
    let at = usize::try_from(at).ok()?;
    h.get(at..at.checked_add(n)?)
}

fn le16(h: &[u8], at: u64) -> Option<u16> {
    Some(u16::from_le_bytes(bytes(h, at, 2)?.try_into().ok()?))
}

fn le32(h: &[u8], at: u64) -> Option<u32> {
    Some(u32::from_le_bytes(bytes(h, at, 4)?.try_into().ok()?))
}

fn be32(h: &[u8], at: u64) -> Option<u32> {
    Some(u32::from_be_bytes(bytes(h, at, 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Bytes to write at offsets of a test device.
    type Patches<'a> = Vec<(u64, &'a [u8])>;

    /// A zeroed "device" of `len` bytes with `patches` written at their offsets.
    fn device(len: u64, patches: &[(u64, &[u8])]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.set_len(len).unwrap();
        for (at, b) in patches {
            f.write_all_at(b, *at).unwrap();
        }
        f.flush().unwrap();
        f
    }

    fn what(len: u64, patches: &[(u64, &[u8])]) -> Option<String> {
        probe(&device(len, patches), len).unwrap().map(|f| f.what)
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn each_format_is_recognised_at_its_documented_offset() {
        let md = MD_MAGIC.to_le_bytes();
        let md_v1: Vec<u8> = [md, 1u32.to_le_bytes()].concat();
        let mut mbr_entry = [0u8; 16];
        mbr_entry[0] = 0x80;
        mbr_entry[4] = 0x83; // Linux
        let mut fat = vec![0u8; 512];
        fat[0] = 0xEB;
        fat[0x52..0x5A].copy_from_slice(b"FAT32   ");
        fat[510] = 0x55;
        fat[511] = 0xAA;
        let zfs = ZFS_UBERBLOCK_MAGIC.to_le_bytes();
        let cases: Vec<(&str, Patches)> = vec![
            ("LUKS", vec![(0, b"LUKS\xba\xbe")]),
            ("XFS", vec![(0, b"XFSB\x00\x00\x10\x00")]),
            ("btrfs", vec![(65600, b"_BHRfS_M")]),
            (
                "ext2/3/4",
                vec![(1080, &[0x53, 0xEF]), (1048, &[2, 0, 0, 0])],
            ),
            ("swap", vec![(4086, b"SWAPSPACE2")]),
            ("swap", vec![(4086, b"SWAP-SPACE")]),
            ("swap", vec![(65526, b"SWAPSPACE2")]),
            ("md RAID member (superblock v1.1)", vec![(0, &md_v1)]),
            ("md RAID member (superblock v1.2)", vec![(4096, &md_v1)]),
            ("LVM", vec![(512, b"LABELONE")]),
            ("LVM", vec![(1536, b"LABELONE")]),
            ("bcache", vec![(4096 + 24, &BCACHE_MAGIC)]),
            ("ZFS", vec![(128 * 1024 + 37 * 1024, &zfs)]),
            ("NTFS", vec![(3, b"NTFS    ")]),
            ("exFAT", vec![(3, b"EXFAT   ")]),
            ("FAT", vec![(0, &fat)]),
            ("ISO 9660", vec![(32769, b"CD001")]),
            ("GPT", vec![(512, b"EFI PART")]),
            ("GPT", vec![(4096, b"EFI PART")]),
            ("MBR", vec![(446, &mbr_entry), (510, &[0x55, 0xAA])]),
        ];
        for (name, patches) in cases {
            let got = what(8 * MIB, &patches);
            assert!(
                got.as_deref().is_some_and(|w| w.contains(name)),
                "{name}: got {got:?}"
            );
        }
    }

    /// The end-of-device md superblocks, placed by md's own formulas (MD_NEW_SIZE_SECTORS for
    /// v0.90; `(size − 16 sectors) & ~7` for v1.0), on sizes that are and are not aligned.
    #[test]
    fn md_superblocks_at_the_end_of_the_device() {
        for len in [8 * MIB, 8 * MIB + 4096 + 512, 8 * MIB + 65536 + 1536] {
            let v090 = (len / 512 / 128 * 128 - 128) * 512;
            let v10 = (len / 512 - 16) / 8 * 8 * 512;
            let v0: Vec<u8> = [MD_MAGIC.to_le_bytes(), 0u32.to_le_bytes()].concat();
            let v1: Vec<u8> = [MD_MAGIC.to_le_bytes(), 1u32.to_le_bytes()].concat();
            assert_eq!(
                what(len, &[(v090, &v0)]).as_deref(),
                Some("a Linux md RAID member (superblock v0.90)"),
                "len {len}"
            );
            assert_eq!(
                what(len, &[(v10, &v1)]).as_deref(),
                Some("a Linux md RAID member (superblock v1.0)"),
                "len {len}"
            );
            // The v1 layout where v0.90 belongs is not a v0.90 superblock.
            if v090 != v10 {
                assert_eq!(what(len, &[(v090, &v1)]), None);
            }
        }
    }

    #[test]
    fn blank_and_random_devices_hold_nothing() {
        assert_eq!(what(8 * MIB, &[]), None);
        assert_eq!(what(0, &[]), None);
        assert_eq!(what(1000, &[]), None);
        // iogauge's own fill data: a device benchmarked before must not look like a format.
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..50 {
            let data: Vec<u8> = (0..HEAD + 8192).map(|_| rng.u8(..)).collect();
            assert_eq!(what(data.len() as u64, &[(0, &data)]), None);
        }
    }

    #[test]
    fn near_misses_are_not_signatures() {
        // 0x55AA with no used entry, or with a boot flag no MBR has.
        assert_eq!(what(MIB, &[(510, &[0x55, 0xAA])]), None);
        let mut bad = [0u8; 16];
        bad[0] = 0x42;
        bad[4] = 0x83;
        assert_eq!(what(MIB, &[(446, &bad), (510, &[0x55, 0xAA])]), None);
        // ext magic with an impossible block size.
        assert_eq!(
            what(MIB, &[(1080, &[0x53, 0xEF]), (1048, &[9, 0, 0, 0])]),
            None
        );
        // XFSB with a block size that is not a power of two.
        assert_eq!(what(MIB, &[(0, b"XFSB\x00\x00\x10\x01")]), None);
        // A swap magic at an offset no page size gives.
        assert_eq!(what(MIB, &[(4000, b"SWAPSPACE2")]), None);
    }

    #[test]
    fn a_truncated_head_is_read_without_panicking() {
        // Shorter than every offset probed.
        for len in [1u64, 511, 512, 1081, 4096, 65601] {
            let _ = what(len, &[(0, &vec![0x55; len as usize])]);
        }
    }
}
