//! Sparse: read targets with holes or unwritten extents. A read of a hole, or of an extent
//! `fallocate` reserved but nothing wrote, returns zeros from the file system without touching
//! the disk, so the run reports the speed of memset. The main crate measures the allocation from
//! `st_blocks` and the data from SEEK_DATA/SEEK_HOLE and passes the numbers here.

use crate::fmt::{bytes, pct};
use crate::{Finding, Kind, Severity, Thresholds};

const ADVICE: &str = "Prefill the file with real writes (one sequential write pass over all of \
it) before read tests; `fallocate` or `truncate` alone leave holes or unwritten extents that read \
as zeros.";

/// Checks a read target of `file_size` bytes with `allocated_bytes` on disk (st_blocks × 512) and,
/// when known, `data_bytes` in data regions by SEEK_DATA/SEEK_HOLE (which skip unwritten extents
/// on ext4 and XFS).
///
/// Evidence: `file_bytes`, `allocated_bytes`, `hole_bytes` (not allocated), `data_bytes` and
/// `unwritten_bytes` (allocated but not data) when `data_bytes` is given, and `unbacked_frac`.
pub fn sparse(
    file_size: u64,
    allocated_bytes: u64,
    data_bytes: Option<u64>,
    th: &Thresholds,
) -> Vec<Finding> {
    if file_size == 0 {
        return Vec::new();
    }
    // Allocation can exceed the size (preallocation past EOF, metadata blocks): no holes then.
    let allocated = allocated_bytes.min(file_size);
    let holes = file_size - allocated;
    let unwritten = data_bytes.map(|d| allocated - d.min(allocated));
    let unbacked = holes + unwritten.unwrap_or(0);
    let frac = unbacked as f64 / file_size as f64;
    let is_sparse = frac > th.sparse_frac;
    if !is_sparse {
        return Vec::new();
    }
    let what = match (holes > 0, unwritten.is_some_and(|u| u > 0)) {
        (true, true) => "holes or unwritten extents",
        (false, true) => "unwritten extents",
        _ => "holes",
    };
    let mut f = Finding::new(
        Kind::Sparse,
        Severity::Warning,
        format!(
            "{} of the {} read target ({}) is {what}: reads there return zeros without touching \
             the disk",
            pct(frac),
            bytes(file_size as f64),
            bytes(unbacked as f64)
        ),
        ADVICE,
    )
    .with("file_bytes", file_size as f64)
    .with("allocated_bytes", allocated_bytes as f64)
    .with("hole_bytes", holes as f64)
    .with("unbacked_frac", frac);
    if let (Some(d), Some(u)) = (data_bytes, unwritten) {
        f = f
            .with("data_bytes", d as f64)
            .with("unwritten_bytes", u as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_file_made_by_truncate_is_all_hole() {
        let found = sparse(10 * GIB, 0, Some(0), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::Sparse);
        assert_eq!(found[0].evidence["unbacked_frac"], 1.0);
        assert!(found[0].advice.contains("Prefill"));
    }

    #[test]
    fn fallocated_but_unwritten_extents_count() {
        let found = sparse(10 * GIB, 10 * GIB, Some(GIB), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].evidence["unwritten_bytes"], (9 * GIB) as f64);
        assert_eq!(found[0].evidence["hole_bytes"], 0.0);
        assert!((found[0].evidence["unbacked_frac"] - 0.9).abs() < 1e-12);
        assert!(found[0].summary.contains("unwritten"));
    }

    #[test]
    fn partly_sparse_file() {
        let found = sparse(8 * GIB, 6 * GIB, None, &Thresholds::default());
        assert_eq!(found[0].evidence["hole_bytes"], (2 * GIB) as f64);
        assert_eq!(found[0].evidence["unbacked_frac"], 0.25);
        assert!(found[0].summary.contains("25%"), "{}", found[0].summary);
    }

    #[test]
    fn a_written_file_is_fine() {
        let th = Thresholds::default();
        assert!(sparse(10 * GIB, 10 * GIB, Some(10 * GIB), &th).is_empty());
        // Allocation past the end of the file is no hole.
        assert!(sparse(10 * GIB, 11 * GIB, None, &th).is_empty());
        // Under the 1% threshold.
        assert!(sparse(1000, 995, None, &th).is_empty());
        assert!(sparse(0, 0, None, &th).is_empty());
    }
}
