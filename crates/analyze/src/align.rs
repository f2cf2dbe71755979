//! `misaligned`: what is wrong before a single IO is issued. "100K+ IOPS" called alignment "a
//! matter of the uttermost importance": LVM's 192 KiB header in front of a 128 KiB stripe made
//! every stripe-sized IO touch two stripes. Three placements are judged:
//! - a device whose start is off its natural boundary as the kernel computes it
//!   (`alignment_offset`: the larger of the physical block and, on an array, the chunk) — a
//!   partition, or a device-mapper volume such as LVM's, whose first extent is not on a chunk;
//! - a partition of a parity array that starts on a chunk but not on a full stripe (the
//!   kernel does not judge that, and each full-stripe write then pays a read-modify-write);
//! - a file system whose stripe settings (ext4's stride and stripe width, XFS's sunit and
//!   swidth) are set and differ from the array's chunk and full stripe: it places its blocks
//!   for another array. Settings left unset are not judged (a file system made before the
//!   array, or on purpose).

use crate::fmt::bytes;
use crate::{Finding, Kind, Severity};

/// One device of the target's stack, where it starts and what lies under it.
#[derive(Clone, Debug, Default)]
pub struct Placed {
    pub name: String,
    /// The kernel's `alignment_offset` (−1: misaligned, by the stacking rules).
    pub alignment_offset: Option<i64>,
    /// Partitions only: where it starts on its disk, bytes.
    pub start_bytes: Option<u64>,
    /// The boundary the kernel judged against: the larger of the physical block and the
    /// device below's chunk.
    pub granularity: Option<u64>,
    /// The parity array it is carved from, for a partition of one: its name and full stripe.
    pub parity_array: Option<(String, u64)>,
}

/// A file system's stripe settings against the array under it, bytes.
#[derive(Clone, Debug, Default)]
pub struct Stripe {
    /// `ext4` or `xfs`.
    pub fs: String,
    /// The device the file system is on.
    pub device: String,
    pub unit_bytes: u64,
    pub width_bytes: u64,
    /// The array's chunk (`minimum_io_size`) and full stripe (`optimal_io_size`).
    pub chunk_bytes: u64,
    pub full_stripe_bytes: u64,
    pub block_bytes: u64,
}

pub fn misaligned(devices: &[Placed], stripe: Option<&Stripe>) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in devices {
        let off = d.alignment_offset.unwrap_or(0);
        if off != 0 {
            let boundary = d
                .granularity
                .map(|g| format!("a {} boundary", bytes(g as f64)))
                .unwrap_or_else(|| "its natural boundary".to_string());
            let why = match off > 0 {
                true => format!(
                    "the first one lies {off} bytes into it (the kernel's alignment_offset)"
                ),
                false => "the kernel marks it misaligned (alignment_offset -1)".to_string(),
            };
            out.push(
                Finding::new(
                    Kind::Misaligned,
                    Severity::Warning,
                    format!(
                        "{} does not start on {boundary} of what lies below it: {why}{}; IOs of that size straddle two blocks or chunks below",
                        d.name,
                        d.start_bytes
                            .map(|s| format!(", and it starts at byte {s}"))
                            .unwrap_or_default()
                    ),
                    "Start it on a 1 MiB boundary (parted's and fdisk's default; for LVM, pvcreate --dataalignment with the full stripe), then measure again.",
                )
                .with("alignment_offset", off as f64),
            );
            continue;
        }
        if let (Some(start), Some((array, full))) = (d.start_bytes, d.parity_array.as_ref()) {
            if *full > 0 && start % full != 0 {
                out.push(
                    Finding::new(
                        Kind::Misaligned,
                        Severity::Warning,
                        format!(
                            "{} starts at byte {start} of {array}, on a chunk but not on its full stripe of {}: each full-stripe write lands on two stripes and reads to compute parity",
                            d.name,
                            bytes(*full as f64)
                        ),
                        "Start the partition on a multiple of the full stripe (1 MiB is one for most arrays of 2, 4 or 8 data members), then measure again.",
                    )
                    .with("start_bytes", start as f64)
                    .with("full_stripe_bytes", *full as f64),
                );
            }
        }
    }
    if let Some(s) = stripe {
        let set = s.unit_bytes > 0 || s.width_bytes > 0;
        let wrong = (s.unit_bytes > 0 && s.unit_bytes != s.chunk_bytes)
            || (s.width_bytes > 0
                && s.full_stripe_bytes > 0
                && s.width_bytes != s.full_stripe_bytes);
        if set && wrong && s.chunk_bytes > 0 && s.block_bytes > 0 {
            let blocks = |b: u64| b / s.block_bytes;
            let fix = match s.fs.as_str() {
                "xfs" => format!(
                    "mount with -o sunit={},swidth={} (512-byte units), or make it again with mkfs.xfs -d su={},sw={}",
                    s.chunk_bytes / 512,
                    s.full_stripe_bytes / 512,
                    s.chunk_bytes,
                    s.full_stripe_bytes / s.chunk_bytes.max(1)
                ),
                _ => format!(
                    "tune2fs -E stride={},stripe_width={} {}",
                    blocks(s.chunk_bytes),
                    blocks(s.full_stripe_bytes),
                    s.device
                ),
            };
            out.push(
                Finding::new(
                    Kind::Misaligned,
                    Severity::Warning,
                    format!(
                        "{} on {} is set for a stripe unit of {} and a stripe width of {}, and the array under it has a chunk of {} and a full stripe of {}: it places its blocks for another array",
                        s.fs,
                        s.device,
                        bytes(s.unit_bytes as f64),
                        bytes(s.width_bytes as f64),
                        bytes(s.chunk_bytes as f64),
                        bytes(s.full_stripe_bytes as f64)
                    ),
                    format!("Set the file system to the array: {fix}."),
                )
                .with("unit_bytes", s.unit_bytes as f64)
                .with("width_bytes", s.width_bytes as f64)
                .with("chunk_bytes", s.chunk_bytes as f64)
                .with("full_stripe_bytes", s.full_stripe_bytes as f64),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    #[test]
    fn a_device_off_its_boundary_is_named_and_one_on_it_is_not() {
        let off = Placed {
            name: "dm-0".into(),
            alignment_offset: Some(65024),
            granularity: Some(64 * K),
            ..Placed::default()
        };
        let f = misaligned(std::slice::from_ref(&off), None);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].summary
                .contains("dm-0 does not start on a 64 KiB boundary")
                && f[0]
                    .summary
                    .contains("the first one lies 65024 bytes into it"),
            "{}",
            f[0].summary
        );
        let flagged = Placed {
            alignment_offset: Some(-1),
            ..off.clone()
        };
        assert!(misaligned(&[flagged], None)[0]
            .summary
            .contains("the kernel marks it misaligned"));
        let on = Placed {
            alignment_offset: Some(0),
            ..off
        };
        assert!(misaligned(&[on], None).is_empty());
    }

    #[test]
    fn a_partition_of_a_parity_array_must_start_on_a_full_stripe() {
        let p = |start| Placed {
            name: "md0p1".into(),
            alignment_offset: Some(0),
            start_bytes: Some(start),
            parity_array: Some(("md0".into(), 128 * K)),
            ..Placed::default()
        };
        assert_eq!(misaligned(&[p(192 * K)], None).len(), 1);
        assert!(misaligned(&[p(1024 * K)], None).is_empty());
    }

    #[test]
    fn a_file_system_set_for_another_stripe_is_named_and_unset_or_matching_is_not() {
        let s = |unit, width| Stripe {
            fs: "ext4".into(),
            device: "md0".into(),
            unit_bytes: unit,
            width_bytes: width,
            chunk_bytes: 64 * K,
            full_stripe_bytes: 128 * K,
            block_bytes: 4 * K,
        };
        let f = misaligned(&[], Some(&s(12 * K, 28 * K)));
        assert_eq!(f.len(), 1);
        assert!(
            f[0].advice
                .contains("tune2fs -E stride=16,stripe_width=32 md0"),
            "{}",
            f[0].advice
        );
        assert!(misaligned(&[], Some(&s(64 * K, 128 * K))).is_empty());
        assert!(misaligned(&[], Some(&s(0, 0))).is_empty());
        let xfs = Stripe {
            fs: "xfs".into(),
            ..s(32 * K, 64 * K)
        };
        let f = misaligned(&[], Some(&xfs));
        assert!(
            f[0].advice.contains("sunit=128,swidth=256"),
            "{}",
            f[0].advice
        );
    }
}
