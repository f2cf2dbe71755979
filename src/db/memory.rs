//! What memory holds of a database's data, said as findings: the page cache (when the server
//! reads through it) and the server's own buffer — the same way for both servers.

use crate::units;
use iogauge_analyze::{Finding, Kind as FindingKind, Severity};
use std::collections::BTreeMap;

/// How the page cache was kept from answering for the storage, said every time: as a note,
/// and as a finding (a warning when it was not kept out). `server` names whose reads go
/// through the page cache.
pub fn page_cache(
    memory_limit: Option<u64>,
    ram: u64,
    data: u64,
    server: &str,
) -> (String, Finding) {
    let (sev, text, advice) = match (memory_limit, ram) {
        (Some(limit), _) if limit < data => (
            Severity::Info,
            format!(
                "the server ran in a memory cgroup of {}, less than the {} of data: its buffers and the page cache together held at most that much of it",
                units::iec(limit),
                units::iec(data)
            ),
            String::new(),
        ),
        (Some(limit), _) => (
            Severity::Warning,
            format!(
                "the memory cgroup of {} holds all {} of data: reads may come from the page cache, not the storage",
                units::iec(limit),
                units::iec(data)
            ),
            "Give a --memory-limit below the data size, or more data.".into(),
        ),
        (None, ram) if ram > 0 && data > ram => (
            Severity::Info,
            format!(
                "the {} of data is larger than the {} of RAM: most reads reach the storage",
                units::iec(data),
                units::iec(ram)
            ),
            String::new(),
        ),
        (None, ram) => (
            Severity::Warning,
            format!(
                "the {} of data fits in the {} of RAM and nothing limited the server's memory: {server} reads through the page cache, so the TPS can hide the storage",
                units::iec(data),
                units::iec(ram)
            ),
            "Give --memory-limit (below the data size, needs root) or more data than RAM.".into(),
        ),
    };
    let mut evidence = BTreeMap::from([("data_bytes".to_string(), data as f64)]);
    if ram > 0 {
        evidence.insert("mem_total_bytes".into(), ram as f64);
    }
    if let Some(l) = memory_limit {
        evidence.insert("memory_limit_bytes".into(), l as f64);
    }
    let f = Finding {
        kind: FindingKind::Cache,
        severity: sev,
        summary: text.clone(),
        evidence,
        advice,
        result: None,
        metric: None,
    };
    (format!("page cache: {text}"), f)
}

/// A `cache` warning when the server's own buffer (`name`: innodb_buffer_pool_size,
/// shared_buffers) of `buffer` bytes holds all `data` bytes: every page read after the first
/// comes from the server's memory, whichever server, whatever the page cache does.
pub fn buffer_finding(name: &str, buffer: u64, data: u64) -> Option<Finding> {
    (data > 0 && buffer >= data).then(|| {
        Finding::new(
            FindingKind::Cache,
            Severity::Warning,
            format!(
                "the server's buffer ({name} = {}) holds all {} of data: its reads come from the server's memory, so the TPS can hide the storage",
                units::iec(buffer),
                units::iec(data)
            ),
            "Give --buffer-ratio below 1 (e.g. 0.25) so the buffer holds part of the data, or more data.",
        )
        .with("buffer_bytes", buffer as f64)
        .with("data_bytes", data as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_holding_all_the_data_is_said_and_one_byte_short_is_not() {
        let f = buffer_finding("innodb_buffer_pool_size", 128 << 20, 99_196_928).unwrap();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.summary
                .contains("innodb_buffer_pool_size = 128 MiB) holds all 94.6 MiB of data"),
            "{}",
            f.summary
        );
        assert!(buffer_finding("shared_buffers", 1 << 30, 1 << 30).is_some());
        assert!(buffer_finding("shared_buffers", (1 << 30) - 1, 1 << 30).is_none());
        assert!(buffer_finding("shared_buffers", 1 << 30, 0).is_none());
    }
}
