//! Cache: runs that measured a cache instead of the disk — buffered IO over a working set that
//! fits in RAM, or read bandwidth beyond what the device stack can deliver. "100K+ IOPS on semi-commodity hardware" warns that
//! bm-flash's 10 s tests "likely" measured the controller's cache and switched to xdd reading
//! 16 GB of a 64 GB file with direct IO past an 8 GB cache; MySQL "Solid State Disk Benchmarking"'s results moved with the
//! ratio of buffer pool to data.

use crate::fmt::{bytes, rate};
use crate::{Finding, Kind, Severity, Thresholds};

/// Checks one run. `read_bw_bytes` is the read bandwidth in bytes/s (0 for a run without reads);
/// `device_max_bw_bytes` the most the device stack can deliver, when known. A zero working set or
/// RAM size means unknown and skips the RAM check.
///
/// Evidence: RAM check `working_set_bytes`, `mem_total_bytes`, `ram_ratio` (working set / RAM);
/// bandwidth check `read_bw_bytes`, `device_max_bw_bytes`, `excess` (read / device maximum).
pub fn cache(
    buffered: bool,
    working_set_bytes: u64,
    mem_total_bytes: u64,
    read_bw_bytes: f64,
    device_max_bw_bytes: Option<f64>,
    th: &Thresholds,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let ws = working_set_bytes as f64;
    let mem = mem_total_bytes as f64;
    if buffered && ws > 0.0 && mem > 0.0 && ws < th.cache_ram_factor * mem {
        let summary = if ws <= mem {
            format!(
                "buffered IO over a {} working set that fits in {} of RAM: this measured the page \
                 cache, not the disk",
                bytes(ws),
                bytes(mem)
            )
        } else {
            format!(
                "buffered IO over a {} working set, less than {}× the {} of RAM: much of it was \
                 served from the page cache",
                bytes(ws),
                th.cache_ram_factor,
                bytes(mem)
            )
        };
        findings.push(
            Finding::new(
                Kind::Cache,
                Severity::Warning,
                summary,
                format!(
                    "Use --direct, or a working set larger than {}× RAM ({} here), so that the \
                     disk answers rather than the page cache.",
                    th.cache_ram_factor,
                    bytes(th.cache_ram_factor * mem)
                ),
            )
            .with("working_set_bytes", ws)
            .with("mem_total_bytes", mem)
            .with("ram_ratio", ws / mem),
        );
    }
    if let Some(max) = device_max_bw_bytes.filter(|m| m.is_finite() && *m > 0.0) {
        if read_bw_bytes.is_finite() && read_bw_bytes > th.cache_bw_margin * max {
            let advice = if buffered {
                "The page cache answered: use --direct, or a working set larger than 2× RAM."
            } else {
                "With direct IO a cache below the page cache answered — the RAID controller's or \
                 the drive's — or the file has holes that read as zeros without touching the \
                 disk. Use a working set several times larger than the controller's cache (seed \
                 004 read 16 GB of a 64 GB file past an 8 GB cache) and prefill the file."
            };
            findings.push(
                Finding::new(
                    Kind::Cache,
                    Severity::Warning,
                    format!(
                        "read bandwidth {} is above the {} the device stack can deliver: a cache \
                         answered",
                        rate(read_bw_bytes),
                        rate(max)
                    ),
                    advice,
                )
                .with("read_bw_bytes", read_bw_bytes)
                .with("device_max_bw_bytes", max)
                .with("excess", read_bw_bytes / max),
            );
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn buffered_working_set_in_ram_measures_the_page_cache() {
        let found = cache(true, 4 * GIB, 48 * GIB, 0.0, None, &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::Cache);
        assert!(found[0].summary.contains("page cache"));
        assert!(found[0].advice.contains("--direct"));
        assert_eq!(found[0].evidence["ram_ratio"], 4.0 / 48.0);
    }

    #[test]
    fn buffered_working_set_between_one_and_two_times_ram_is_partly_cached() {
        let found = cache(true, 64 * GIB, 48 * GIB, 0.0, None, &Thresholds::default());
        assert_eq!(found.len(), 1);
        assert!(found[0].summary.contains("much of it"));
    }

    #[test]
    fn large_or_direct_working_sets_are_fine() {
        let th = Thresholds::default();
        assert!(cache(true, 100 * GIB, 48 * GIB, 0.0, None, &th).is_empty());
        assert!(cache(false, 4 * GIB, 48 * GIB, 0.0, None, &th).is_empty());
        assert!(cache(true, 4 * GIB, 0, 0.0, None, &th).is_empty());
    }

    #[test]
    fn bandwidth_beyond_the_device_is_a_cache() {
        // One SATA SSD (550 MB/s) reading at 3.3 GB/s with direct IO.
        let found = cache(
            false,
            64 * GIB,
            48 * GIB,
            3.3e9,
            Some(550e6),
            &Thresholds::default(),
        );
        assert_eq!(found.len(), 1);
        assert!((found[0].evidence["excess"] - 6.0).abs() < 1e-12);
        assert!(found[0].advice.contains("controller"));
        let at_limit = cache(
            false,
            64 * GIB,
            48 * GIB,
            560e6,
            Some(550e6),
            &Thresholds::default(),
        );
        assert!(at_limit.is_empty());
    }

    #[test]
    fn both_checks_can_fire() {
        let found = cache(
            true,
            GIB,
            48 * GIB,
            3.3e9,
            Some(550e6),
            &Thresholds::default(),
        );
        assert_eq!(found.len(), 2);
    }
}
