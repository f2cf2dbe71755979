//! Gaps: cells of a block size × series table far below the trend of their neighbours — seed
//! 000's RAID5 write tables, where bandwidth dropped from 40 MB/s to 9 MB/s at 64 KiB and came
//! back at 2 MiB ("the awkward gaps that we encountered multiple times during testing").
//!
//! Rule, per series (column), over its measured cells ordered by block size:
//! - an interior cell is expected on the straight line in log(block size) × log(value) through
//!   its nearest measured neighbours below and above — the geometric mean of the two when the
//!   block sizes double. Log–log interpolation is exact for power laws, so both flat IOPS
//!   (bandwidth ∝ block size) and flat bandwidth (IOPS ∝ 1 / block size) are smooth.
//! - an edge cell has one neighbour, and is expected to keep the neighbour's IOPS when its blocks
//!   are smaller and its bandwidth when they are larger (smaller blocks do not lower IOPS, larger
//!   ones do not lower bandwidth, on a device that is working).
//! - a cell below `gap_frac` of its expectation is a gap.
//!
//! A gap lowers the expectation of its neighbours, so in a valley several cells wide the cells in
//! the middle may go unflagged while its edges are; a cell far above its neighbours (a cache hit)
//! raises theirs and can make them look like gaps.

use crate::fmt::{bytes, pct};
use crate::{Finding, Kind, Metric, Severity, Thresholds};

/// A table of one metric by block size (rows) and series (columns, e.g. thread counts).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Matrix {
    /// Block size of each row, in bytes.
    pub rows: Vec<u64>,
    /// Label of each series, e.g. "10 threads".
    pub cols: Vec<String>,
    /// `values[row][col]`; `None` where nothing was measured.
    pub values: Vec<Vec<Option<f64>>>,
    pub metric: Metric,
}

const ADVICE: &str = "Rerun this cell on its own to see whether the gap repeats. If it does, look \
at what this block size meets in the stack: partial-stripe writes on RAID5/6 (a read-modify-write \
per write), the stripe and alignment of partitions and LVM, the controller's cache and firmware. \
The study “One DVD per second” saw such gaps on RAID5 writes and traced them to the controller's SATA stack.";

/// Finds gaps in `matrix` by the rule in the module doc. Rows may come in any order; rows with a
/// zero or repeated block size, cells that are `None`, not finite or not positive are not judged
/// and not used as neighbours, except that a measured zero is judged (it is the deepest gap).
///
/// Evidence: `bs_bytes`, `series` (column index), `value` and `expected` (in IOPS or bytes/s per
/// `matrix.metric`) and `ratio` = value / expected.
pub fn gaps(matrix: &Matrix, th: &Thresholds) -> Vec<Finding> {
    let mut order: Vec<usize> = (0..matrix.rows.len())
        .filter(|&r| matrix.rows[r] > 0)
        .collect();
    order.sort_by_key(|&r| matrix.rows[r]);
    order.dedup_by_key(|r| matrix.rows[*r]);

    let mut findings = Vec::new();
    let width = matrix.values.iter().map(Vec::len).max().unwrap_or(0);
    for col in 0..width.max(matrix.cols.len()) {
        let cell = |r: usize| {
            matrix
                .values
                .get(r)
                .and_then(|row| row.get(col))
                .copied()
                .flatten()
        };
        // (block size, value) of the measured cells that can serve as neighbours.
        let measured: Vec<(f64, f64)> = order
            .iter()
            .filter_map(|&r| {
                cell(r)
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .map(|v| (matrix.rows[r] as f64, v))
            })
            .collect();
        for &r in &order {
            let Some(value) = cell(r).filter(|v| v.is_finite() && *v >= 0.0) else {
                continue;
            };
            let bs = matrix.rows[r] as f64;
            let below = measured.iter().rev().find(|(b, _)| *b < bs);
            let above = measured.iter().find(|(b, _)| *b > bs);
            let Some(expected) = expectation(bs, below, above, matrix.metric) else {
                continue;
            };
            let is_gap = value < th.gap_frac * expected;
            if !is_gap {
                continue;
            }
            let label = matrix
                .cols
                .get(col)
                .cloned()
                .unwrap_or_else(|| format!("series {col}"));
            let ratio = value / expected;
            findings.push(
                Finding::new(
                    Kind::Gap,
                    Severity::Warning,
                    format!(
                        "{} at {}, {} is {}, {} of the {} its neighbours predict",
                        matrix.metric.name(),
                        bytes(bs),
                        label,
                        matrix.metric.format(value),
                        pct(ratio),
                        matrix.metric.format(expected)
                    ),
                    ADVICE,
                )
                .with("bs_bytes", bs)
                .with("series", col as f64)
                .with("value", value)
                .with("expected", expected)
                .with("ratio", ratio),
            );
        }
    }
    findings
}

fn expectation(
    bs: f64,
    below: Option<&(f64, f64)>,
    above: Option<&(f64, f64)>,
    metric: Metric,
) -> Option<f64> {
    let expected = match (below, above) {
        (Some(&(b0, v0)), Some(&(b1, v1))) => {
            let t = (bs / b0).ln() / (b1 / b0).ln();
            ((1.0 - t) * v0.ln() + t * v1.ln()).exp()
        }
        // Smaller blocks than the neighbour: same IOPS.
        (None, Some(&(b1, v1))) => match metric {
            Metric::Iops => v1,
            Metric::Bandwidth => v1 * bs / b1,
        },
        // Larger blocks than the neighbour: same bandwidth.
        (Some(&(b0, v0)), None) => match metric {
            Metric::Iops => v0 * b0 / bs,
            Metric::Bandwidth => v0,
        },
        (None, None) => return None,
    };
    (expected.is_finite() && expected > 0.0).then_some(expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: [u64; 14] = [
        512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152,
        4194304,
    ];

    /// A smooth device: 60,000 IOPS until bandwidth reaches 1.6 GB/s (between 16 and 32 KiB),
    /// then flat bandwidth.
    fn smooth_bw(bs: u64) -> f64 {
        (60_000.0 * bs as f64).min(1.6e9)
    }

    fn column(values: Vec<Option<f64>>, metric: Metric) -> Matrix {
        Matrix {
            rows: BS[..values.len()].to_vec(),
            cols: vec!["1 thread".into()],
            values: values.into_iter().map(|v| vec![v]).collect(),
            metric,
        }
    }

    #[test]
    fn smooth_curve_has_no_gap() {
        let m = column(
            BS.iter().map(|&b| Some(smooth_bw(b))).collect(),
            Metric::Bandwidth,
        );
        assert!(gaps(&m, &Thresholds::default()).is_empty());
        let iops = column(
            BS.iter().map(|&b| Some(smooth_bw(b) / b as f64)).collect(),
            Metric::Iops,
        );
        assert!(gaps(&iops, &Thresholds::default()).is_empty());
    }

    #[test]
    fn a_gap_at_one_block_size_is_exactly_that_cell() {
        let mut values: Vec<Option<f64>> = BS.iter().map(|&b| Some(smooth_bw(b))).collect();
        values[7] = values[7].map(|v| v * 0.2); // 64 KiB
        let found = gaps(&column(values, Metric::Bandwidth), &Thresholds::default());
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.evidence["bs_bytes"], 65536.0);
        assert_eq!(f.evidence["series"], 0.0);
        // Neighbours 32 KiB and 128 KiB are on the flat-bandwidth part: expected 1.6 GB/s.
        assert!((f.evidence["expected"] - 1.6e9).abs() < 1.0);
        assert!((f.evidence["ratio"] - 0.2).abs() < 1e-9);
        assert!(f.summary.contains("64 KiB"), "{}", f.summary);
    }

    #[test]
    fn gap_on_the_iops_side_of_the_curve() {
        let mut values: Vec<Option<f64>> = BS.iter().map(|&b| Some(smooth_bw(b))).collect();
        values[3] = Some(smooth_bw(4096) * 0.4);
        let found = gaps(&column(values, Metric::Bandwidth), &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].evidence["bs_bytes"], 4096.0);
        // Constant IOPS: bandwidth doubles with block size, the geometric mean of 2 KiB and
        // 8 KiB is the 4 KiB value.
        assert!((found[0].evidence["expected"] - 60_000.0 * 4096.0).abs() < 1e-3);
    }

    #[test]
    fn edge_cells_are_judged_against_their_one_neighbour() {
        // "One DVD per second", RAID5 reads, 1 thread: 24 IOPS at 512 B next to 22,599 at 1 KiB.
        let m = column(
            vec![Some(24.0), Some(22_599.0), Some(24_644.0), Some(29_294.0)],
            Metric::Iops,
        );
        let found = gaps(&m, &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].evidence["bs_bytes"], 512.0);
        assert_eq!(found[0].evidence["expected"], 22_599.0);
    }

    #[test]
    fn seed_000_raid5_write_gaps() {
        // "One DVD per second", RAID5 with 4 SSDs, write bandwidth in MB/s, 10 threads (512 KiB missing).
        let mb = [
            Some(3.5),
            Some(5.0),
            Some(8.5),
            Some(13.2),
            Some(15.7),
            Some(41.5),
            Some(38.0),
            Some(9.0),
            Some(12.0),
            Some(3.2),
            None,
            Some(10.5),
            Some(198.7),
            Some(218.7),
        ];
        let m = column(
            mb.iter().map(|v| v.map(|v| v * 1e6)).collect(),
            Metric::Bandwidth,
        );
        let found = gaps(&m, &Thresholds::default());
        let at: Vec<f64> = found.iter().map(|f| f.evidence["bs_bytes"]).collect();
        // By hand: 64 KiB: 9.0 vs √(38.0 × 12.0) = 21.4; 256 KiB: 3.2 vs 12.0^(2/3) × 10.5^(1/3)
        // = 11.5 (the 1 MiB neighbour is two doublings away); 1 MiB: 10.5 vs
        // 3.2^(1/3) × 198.7^(2/3) = 50.2. 128 KiB (12.0 vs √(9.0 × 3.2) = 5.4) sits between
        // two gaps and is not flagged.
        assert_eq!(at, vec![65536.0, 262144.0, 1048576.0]);
        let e256 = 12.0f64.powf(2.0 / 3.0) * 10.5f64.powf(1.0 / 3.0) * 1e6;
        assert!((found[1].evidence["expected"] - e256).abs() / e256 < 1e-9);
    }

    #[test]
    fn every_series_is_judged_on_its_own() {
        let mut values: Vec<Vec<Option<f64>>> = BS
            .iter()
            .map(|&b| vec![Some(smooth_bw(b)), Some(smooth_bw(b) / 2.0)])
            .collect();
        values[9][1] = Some(1.0); // 256 KiB in the second series
        let m = Matrix {
            rows: BS.to_vec(),
            cols: vec!["1 thread".into(), "10 threads".into()],
            values,
            metric: Metric::Bandwidth,
        };
        let found = gaps(&m, &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].evidence["series"], 1.0);
        assert_eq!(found[0].evidence["bs_bytes"], 262144.0);
        assert!(found[0].summary.contains("10 threads"));
    }

    #[test]
    fn rows_out_of_order_and_ragged_rows_are_handled() {
        let m = Matrix {
            rows: vec![8192, 2048, 4096, 0],
            cols: vec![],
            values: vec![vec![Some(8.0)], vec![Some(2.0)], vec![Some(0.0)], vec![]],
            metric: Metric::Bandwidth,
        };
        let found = gaps(&m, &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].evidence["bs_bytes"], 4096.0);
        assert_eq!(found[0].evidence["value"], 0.0);
        assert!(found[0].summary.contains("series 0"));
    }
}
