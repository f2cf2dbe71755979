//! Ceilings: IOPS or bandwidth that stops growing while outstanding IO, threads or block size
//! keep doubling — "100K+ IOPS on semi-commodity hardware"'s 65K IOPS barrier, which no amount of hardware moved because it was
//! JFS's transaction locks, and MySQL "Solid State Disk Benchmarking"'s Orion sweep where latency doubled with the threads.
//!
//! Rule: points are sorted by x. The ceiling starts at the first point s from which no later point
//! rises more than `ceiling_gain` per doubling of x above the best value seen since s (so a dip
//! inside a plateau does not end it); it must span `ceiling_min_doublings` doublings of x and reach
//! the last point, because a flat stretch followed by growth is a knee, not a ceiling.
//!
//! Cause, by Little's law (L = λW, Little 1961: IOs in flight = IOPS × mean latency): with the
//! metric flat, latency that grows in proportion to x means the requested IO really is in flight
//! and queues behind a fixed throughput limit; latency that stays flat means the extra concurrency
//! never reached the device. The split is the elasticity ln(latency growth) / ln(x growth)
//! against `ceiling_lat_elasticity`.

use crate::fmt::{bytes, count, latency, pct};
use crate::{Finding, Kind, Metric, Severity, Thresholds};

/// One point of a sweep: the swept value and what was measured there.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CeilingPoint {
    /// Outstanding IO, threads or block size (bytes).
    pub x: f64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub mean_lat_s: f64,
}

const SATURATED: &str = "Latency rising in step with outstanding IO means requests queue behind a \
fixed throughput limit (Little's law: IOPS = IOs in flight / latency). If the device is rated \
higher, the limit is in the stack: rerun on the raw block device, with another file system or IO \
scheduler, or without the RAID or LVM layer to find which one. the 65K IOPS ceiling of the study “100K+ IOPS on semi-commodity hardware” was \
JFS's transaction locks (nTxLock), not the disks; XFS doubled it.";

const NOT_REACHING: &str = "Latency did not grow with the requested concurrency, so the extra IO \
never reached the device. Check that the engine honours the queue depth (with psync each thread \
has one IO in flight), that the CPU is not saturated submitting and reaping IO, and the queue \
limits on the way (/sys/block/<dev>/queue/nr_requests, the controller's queue depth).";

const NO_LATENCY: &str = "Without latencies the cause cannot be told: rerun the sweep recording \
mean latency, or compare with the raw block device and another file system.";

/// Finds a ceiling in `points` for the chosen `metric`. `dimension` names x in the summary
/// ("iodepth", "threads", "block size"); a name containing "size" or equal to "bs" prints x as
/// bytes.
///
/// Points with x or the metric not a positive finite number are ignored, and of several points at
/// the same x the first is used (average repeats before calling). Evidence: `plateau_value` (the
/// best value on the plateau, in IOPS or bytes/s per `metric`), `starts_at_x`, `ends_at_x`,
/// `x_growth` and, when latencies are known, `lat_growth`, `lat_elasticity`, `in_flight` (Little's
/// law at the last point) and `start_lat_s`, `end_lat_s`.
pub fn ceiling(
    points: &[CeilingPoint],
    dimension: &str,
    metric: Metric,
    th: &Thresholds,
) -> Vec<Finding> {
    let value = |p: &CeilingPoint| match metric {
        Metric::Iops => p.iops,
        Metric::Bandwidth => p.bw_bytes,
    };
    let mut pts: Vec<&CeilingPoint> = points
        .iter()
        .filter(|p| positive(p.x) && positive(value(p)))
        .collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    pts.dedup_by(|b, a| a.x == b.x);
    let m: Vec<f64> = pts.iter().map(|p| value(p)).collect();
    let x: Vec<f64> = pts.iter().map(|p| p.x).collect();
    if pts.len() < 2 {
        return Vec::new();
    }
    let last = pts.len() - 1;
    let Some(s) = levels_off(&x, &m, th.ceiling_gain) else {
        return Vec::new();
    };
    let doublings = (x[last] / x[s]).log2();
    // Named so that a NaN threshold reads as "not long enough" rather than slipping through.
    let long_enough = doublings >= th.ceiling_min_doublings;
    if !long_enough {
        return Vec::new();
    }

    let plateau = m[s..].iter().copied().fold(f64::MIN, f64::max);
    let x_growth = x[last] / x[s];
    let (lat0, lat1) = (pts[s].mean_lat_s, pts[last].mean_lat_s);
    let dim = |v: f64| format_x(dimension, v);
    let span = format!(
        "{} flat at {} from {} {} to {} (under {} gain per doubling)",
        metric.name(),
        metric.format(plateau),
        dimension,
        dim(x[s]),
        dim(x[last]),
        pct(th.ceiling_gain)
    );
    let mut finding = if positive(lat0) && positive(lat1) {
        let lat_growth = lat1 / lat0;
        let elasticity = lat_growth.ln() / x_growth.ln();
        let in_flight = pts[last].iops * lat1;
        let finding = if elasticity >= th.ceiling_lat_elasticity {
            Finding::new(
                Kind::Ceiling,
                Severity::Info,
                format!(
                    "{span} while mean latency grows {:.1}× ({} → {}) with {:.1}× the {}: a \
                     saturated fixed limit",
                    lat_growth,
                    latency(lat0),
                    latency(lat1),
                    x_growth,
                    dimension
                ),
                SATURATED,
            )
        } else {
            Finding::new(
                Kind::Ceiling,
                Severity::Warning,
                format!(
                    "{span} while mean latency stays at {}: by Little's law only {} IOs are in \
                     flight at {dimension} {}",
                    latency(lat1),
                    count(in_flight),
                    dim(x[last])
                ),
                NOT_REACHING,
            )
        };
        finding
            .with("lat_growth", lat_growth)
            .with("lat_elasticity", elasticity)
            .with("in_flight", in_flight)
            .with("start_lat_s", lat0)
            .with("end_lat_s", lat1)
    } else {
        Finding::new(Kind::Ceiling, Severity::Info, span, NO_LATENCY)
    };
    finding = finding
        .with("plateau_value", plateau)
        .with("starts_at_x", x[s])
        .with("ends_at_x", x[last])
        .with("x_growth", x_growth);
    vec![finding]
}

/// Where a series levels off: the first point `s` (not the last) after which no point rises
/// more than `gain` per doubling of x above the best value seen since `s`. `x` must be
/// positive and increasing. The one rule for "still growing" and "flat", used by the ceiling
/// finding here and by `compare`'s and the report's scaling verdicts, so they never disagree.
pub fn levels_off(x: &[f64], m: &[f64], gain: f64) -> Option<usize> {
    if x.len() != m.len() || x.len() < 2 {
        return None;
    }
    (0..x.len() - 1).find(|&s| flat_from(x, m, s, gain))
}

/// True when no point after `s` rises more than `gain` per doubling of x above the best value
/// seen since `s`.
fn flat_from(x: &[f64], m: &[f64], s: usize, gain: f64) -> bool {
    let mut best = m[s];
    for j in s + 1..m.len() {
        let allowed = best * (1.0 + gain).powf((x[j] / x[j - 1]).log2());
        let within = m[j] <= allowed;
        if !within {
            return false;
        }
        best = best.max(m[j]);
    }
    true
}

fn format_x(dimension: &str, x: f64) -> String {
    let d = dimension.to_ascii_lowercase();
    if d.contains("size") || d == "bs" {
        bytes(x)
    } else {
        count(x)
    }
}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAT_DEVICE_S: f64 = 1.0 / 8125.0;

    /// A device with a fixed per-IO service time up to `limit` IOPS; past it, IOs queue and latency
    /// grows so that IOPS × latency = outstanding IO (Little's law).
    fn saturating(qds: &[f64], limit: f64) -> Vec<CeilingPoint> {
        qds.iter()
            .map(|&qd| {
                let iops = (qd / LAT_DEVICE_S).min(limit);
                CeilingPoint {
                    x: qd,
                    iops,
                    bw_bytes: iops * 4096.0,
                    mean_lat_s: qd / iops,
                }
            })
            .collect()
    }

    const QDS: [f64; 8] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

    #[test]
    fn jfs_like_ceiling_at_65k_from_qd_8() {
        // 8 × 8125 = 65,000: the device keeps up to QD 8 and is flat from there.
        let found = ceiling(
            &saturating(&QDS, 65_000.0),
            "iodepth",
            Metric::Iops,
            &Thresholds::default(),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.kind, Kind::Ceiling);
        assert_eq!(f.evidence["starts_at_x"], 8.0);
        assert!((f.evidence["plateau_value"] - 65_000.0).abs() < 1e-6);
        assert_eq!(f.evidence["x_growth"], 16.0);
        // Latency ∝ QD on the plateau, so it grows as much as x: elasticity 1.
        assert!((f.evidence["lat_growth"] - 16.0).abs() < 1e-9);
        assert!((f.evidence["lat_elasticity"] - 1.0).abs() < 1e-9);
        assert!((f.evidence["in_flight"] - 128.0).abs() < 1e-6);
        assert!(f.summary.contains("65,000 IOPS"), "{}", f.summary);
        assert!(f.summary.contains("saturated"), "{}", f.summary);
        assert!(f.advice.contains("JFS"));
    }

    #[test]
    fn doubling_series_without_ceiling_gives_nothing() {
        let pts = saturating(&[1.0, 2.0, 4.0, 8.0, 16.0], f64::INFINITY);
        assert!(ceiling(&pts, "iodepth", Metric::Iops, &Thresholds::default()).is_empty());
    }

    #[test]
    fn one_flat_doubling_at_the_end_is_not_enough() {
        let pts = saturating(&[1.0, 2.0, 4.0, 8.0, 16.0], 8.0 / LAT_DEVICE_S);
        assert!(ceiling(&pts, "iodepth", Metric::Iops, &Thresholds::default()).is_empty());
    }

    #[test]
    fn flat_stretch_followed_by_growth_is_not_a_ceiling() {
        let mut pts = saturating(&QDS[..6], 4.0 / LAT_DEVICE_S);
        pts.push(CeilingPoint {
            x: 64.0,
            iops: 200_000.0,
            bw_bytes: 200_000.0 * 4096.0,
            mean_lat_s: 64.0 / 200_000.0,
        });
        assert!(ceiling(&pts, "iodepth", Metric::Iops, &Thresholds::default()).is_empty());
    }

    #[test]
    fn flat_iops_with_flat_latency_means_concurrency_is_not_reaching_the_device() {
        // QD requested 1..128 but every point behaves like QD 4: flat IOPS, flat latency.
        let pts: Vec<CeilingPoint> = QDS
            .iter()
            .map(|&qd| CeilingPoint {
                x: qd,
                iops: 4.0 / LAT_DEVICE_S,
                bw_bytes: 4.0 / LAT_DEVICE_S * 4096.0,
                mean_lat_s: LAT_DEVICE_S,
            })
            .collect();
        let found = ceiling(&pts, "iodepth", Metric::Iops, &Thresholds::default());
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.evidence["starts_at_x"], 1.0);
        assert!((f.evidence["lat_growth"] - 1.0).abs() < 1e-12);
        // Little's law: 32,500 IOPS × 1/8125 s = 4 IOs in flight, not 128.
        assert!((f.evidence["in_flight"] - 4.0).abs() < 1e-9);
        assert!(f.advice.contains("queue depth"));
    }

    // Regression (issue 12): +2.6% per doubling was "still growing" in compare and flat here.
    #[test]
    fn two_and_a_half_percent_per_doubling_is_flat_for_everyone() {
        let x = [1.0, 2.0, 4.0, 8.0, 16.0];
        let m = [1000.0, 2000.0, 2052.0, 2105.0, 2160.0];
        assert_eq!(
            levels_off(&x, &m, Thresholds::default().ceiling_gain),
            Some(1)
        );
        let growing = [1000.0, 2000.0, 2200.0, 2420.0, 2662.0];
        assert_eq!(
            levels_off(&x, &growing, Thresholds::default().ceiling_gain),
            None
        );
    }

    #[test]
    fn a_dip_inside_the_plateau_does_not_end_it() {
        let mut pts = saturating(&QDS, 65_000.0);
        pts[5].iops = 55_000.0; // QD 32 dips, QD 64 recovers by 18%
        let found = ceiling(&pts, "iodepth", Metric::Iops, &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].evidence["starts_at_x"], 8.0);
    }

    #[test]
    fn bandwidth_ceiling_over_block_size() {
        // "One DVD per second", RAID0 reads with 10 threads: bandwidth flat at ~1,735 MB/s from 64 KiB.
        let table = [
            (16384.0, 958.3),
            (32768.0, 1601.5),
            (65536.0, 1732.2),
            (131072.0, 1734.7),
            (262144.0, 1735.5),
            (524288.0, 1736.1),
            (1048576.0, 1736.6),
        ];
        let pts: Vec<CeilingPoint> = table
            .iter()
            .map(|&(bs, mb)| {
                let bw = mb * 1e6;
                CeilingPoint {
                    x: bs,
                    iops: bw / bs,
                    bw_bytes: bw,
                    // 10 threads in flight: Little's law gives the latency.
                    mean_lat_s: 10.0 / (bw / bs),
                }
            })
            .collect();
        let found = ceiling(
            &pts,
            "block size",
            Metric::Bandwidth,
            &Thresholds::default(),
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].evidence["starts_at_x"], 65536.0);
        assert!(found[0].summary.contains("64 KiB"), "{}", found[0].summary);
        // The same data as IOPS falls with block size; falling is not growing either, so IOPS
        // is flat-or-lower from the first point: a ceiling over the whole sweep.
        let iops = ceiling(&pts, "block size", Metric::Iops, &Thresholds::default());
        assert_eq!(iops[0].evidence["starts_at_x"], 16384.0);
    }

    #[test]
    fn missing_latency_still_names_the_ceiling() {
        let mut pts = saturating(&QDS, 65_000.0);
        for p in &mut pts {
            p.mean_lat_s = f64::NAN;
        }
        let found = ceiling(&pts, "threads", Metric::Iops, &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert!(!found[0].evidence.contains_key("lat_growth"));
        assert_eq!(found[0].evidence["starts_at_x"], 8.0);
    }

    #[test]
    fn unsorted_and_invalid_points_are_handled() {
        let mut pts = saturating(&QDS, 65_000.0);
        pts.reverse();
        pts.push(CeilingPoint {
            x: f64::NAN,
            iops: 1.0,
            bw_bytes: 1.0,
            mean_lat_s: 1.0,
        });
        let found = ceiling(&pts, "iodepth", Metric::Iops, &Thresholds::default());
        assert_eq!(found[0].evidence["starts_at_x"], 8.0);
        assert!(ceiling(&[], "iodepth", Metric::Iops, &Thresholds::default()).is_empty());
    }
}
