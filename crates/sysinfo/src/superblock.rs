//! Stripe settings from a file system's own superblock, read from its device: ext2/3/4
//! (`s_raid_stride`, `s_raid_stripe_width`, little-endian, in blocks; superblock at byte 1024,
//! fs/ext4/ext4.h) and XFS (`sb_unit`, `sb_width`, big-endian, in blocks; superblock at byte 0,
//! fs/xfs/libxfs/xfs_format.h). Read-only, a few KiB, only from a `/dev/` path.

use crate::FsStripe;
use std::io::Read;

const EXT4_MAGIC: u16 = 0xEF53;
const XFS_MAGIC: &[u8; 4] = b"XFSB";

/// The stripe settings of the file system of type `fs` on device `source`, when it is one
/// whose superblock carries them and it can be read.
pub fn stripe(fs: &str, source: &str) -> Option<FsStripe> {
    if !source.starts_with("/dev/") || !matches!(fs, "ext2" | "ext3" | "ext4" | "xfs") {
        return None;
    }
    let mut head = vec![0u8; 2048];
    std::fs::File::open(source)
        .ok()?
        .read_exact(&mut head)
        .ok()?;
    parse(fs, &head)
}

/// [`stripe`] on the device's first 2 KiB.
pub fn parse(fs: &str, head: &[u8]) -> Option<FsStripe> {
    let le16 = |o: usize| Some(u16::from_le_bytes(head.get(o..o + 2)?.try_into().ok()?));
    let le32 = |o: usize| Some(u32::from_le_bytes(head.get(o..o + 4)?.try_into().ok()?));
    let be32 = |o: usize| Some(u32::from_be_bytes(head.get(o..o + 4)?.try_into().ok()?));
    let (block, unit, width) = match fs {
        "xfs" => {
            if head.get(..4)? != XFS_MAGIC {
                return None;
            }
            (
                u64::from(be32(4)?),
                u64::from(be32(184)?),
                u64::from(be32(188)?),
            )
        }
        _ => {
            let sb = 1024;
            if le16(sb + 0x38)? != EXT4_MAGIC {
                return None;
            }
            let log = le32(sb + 0x18)?;
            if log > 6 {
                return None;
            }
            (
                1024u64 << log,
                u64::from(le16(sb + 0x164)?),
                u64::from(le32(sb + 0x170)?),
            )
        }
    };
    Some(FsStripe {
        unit_bytes: unit * block,
        width_bytes: width * block,
        block_bytes: block,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ext4_and_xfs_stripes_are_read_in_bytes() {
        let mut ext = vec![0u8; 2048];
        ext[1024 + 0x38..1024 + 0x3a].copy_from_slice(&EXT4_MAGIC.to_le_bytes());
        ext[1024 + 0x18..1024 + 0x1c].copy_from_slice(&2u32.to_le_bytes());
        ext[1024 + 0x164..1024 + 0x166].copy_from_slice(&16u16.to_le_bytes());
        ext[1024 + 0x170..1024 + 0x174].copy_from_slice(&48u32.to_le_bytes());
        let s = parse("ext4", &ext).unwrap();
        assert_eq!(
            (s.unit_bytes, s.width_bytes, s.block_bytes),
            (65536, 196608, 4096)
        );
        let mut xfs = vec![0u8; 2048];
        xfs[..4].copy_from_slice(XFS_MAGIC);
        xfs[4..8].copy_from_slice(&4096u32.to_be_bytes());
        xfs[184..188].copy_from_slice(&16u32.to_be_bytes());
        xfs[188..192].copy_from_slice(&32u32.to_be_bytes());
        let s = parse("xfs", &xfs).unwrap();
        assert_eq!((s.unit_bytes, s.width_bytes), (65536, 131072));
        assert!(parse("ext4", &xfs).is_none());
        assert!(parse("xfs", &ext).is_none());
    }

    /// What mkfs wrote, read back from a real device (a loop device over a file).
    #[test]
    fn mkfs_settings_are_read_from_the_device() {
        let Some(tool) = ["mkfs.ext4"].into_iter().find(|t| which(t)) else {
            // CI installs e2fsprogs: there, a missing mkfs is a failure, not a skip.
            assert!(
                std::env::var_os("CI").is_none(),
                "mkfs.ext4 is not installed"
            );
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("fs.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let ok = std::process::Command::new(tool)
            .args(["-q", "-F", "-E", "stride=16,stripe_width=48"])
            .arg(&img)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let mut head = vec![0u8; 2048];
        std::fs::File::open(&img)
            .unwrap()
            .read_exact(&mut head)
            .unwrap();
        let s = parse("ext4", &head).unwrap();
        assert_eq!(
            (s.unit_bytes, s.width_bytes),
            (16 * s.block_bytes, 48 * s.block_bytes)
        );
    }

    fn which(tool: &str) -> bool {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    }
}
