//! What `--verify` found, as findings: one per class of failure, with its evidence.

use crate::model::{FailureDoc, ResultDoc};
use iogauge_analyze::{Finding, Kind, Severity};
use iogauge_verify::Class;

/// One finding per class of failure, with its count and first offsets as evidence.
pub fn findings(r: &ResultDoc) -> Vec<Finding> {
    let Some(v) = &r.verify else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in Class::ALL {
        let n = v.failed.get(c.name()).copied().unwrap_or(0);
        if n == 0 {
            continue;
        }
        let first: Vec<&FailureDoc> = v.first.iter().filter(|f| f.class == c.name()).collect();
        let at = first
            .iter()
            .take(3)
            .map(|f| format!("offset {} ({})", f.offset, f.detail))
            .collect::<Vec<_>>()
            .join("; ");
        let mut evidence = std::collections::BTreeMap::new();
        evidence.insert("blocks".to_string(), n as f64);
        if let Some(f) = first.first() {
            evidence.insert("first_offset".to_string(), f.offset as f64);
        }
        out.push(Finding {
            kind: Kind::Integrity,
            severity: Severity::Error,
            summary: format!(
                "{n} {} block{} ({}); first at {at}",
                c.name(),
                crate::units::plural(n as usize),
                c.meaning()
            ),
            evidence,
            advice: advice(c).into(),
            result: None,
            metric: None,
        });
    }
    out
}

fn advice(c: Class) -> &'static str {
    match c {
        Class::Corrupt => "The data changed between the write and the read: check the kernel log (dmesg) for IO errors, the drive's SMART counters, cables and controller firmware.",
        Class::Misdirected => "A block came back from another place, as InnoDB's \"page n:o stored in the page read in is X, should be Y\": suspect the controller, a RAID layer or the drive's firmware.",
        Class::Lost => "A write that was acknowledged never reached the medium: a volatile write cache that lies about flushes, or a layer that drops writes. Run `iogauge fsync-check` across a power cut.",
        Class::Torn => "Part of a block is from an older write: the device does not write a block atomically. Databases protect against this with full-page writes or a doublewrite buffer; keep them on.",
        Class::Unwritten => "Zeros or other data where iogauge wrote: a write that never landed, or something else wrote to the target during the run.",
    }
}
