//! Huge pages for IO buffers (issue 11, item 3): a 1 MiB IO reaches the device as one 1 MiB
//! request, because its buffer is one physically contiguous piece. The test raises the
//! machine's reserved huge pages (/proc/sys/vm/nr_hugepages) while it runs, a setting every
//! process shares, so it runs in the quiet binary, not beside other runs that map their buffers
//! on the same pool (a CI run saw another iogauge die of SIGBUS beside it, not reproduced).

use crate::common;
use common::*;

const MIB: u64 = 1 << 20;

// Item 3: a 1 MiB IO reaches the device as one 1 MiB request, because its buffer is one
// physically contiguous piece (huge pages), as the device's own counters show.
#[test]
fn a_one_mib_read_reaches_the_device_whole() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let dev = blank_loop(dir.path(), "d.img", 128 * MIB, 512);
    // Let the loop device take 1 MiB requests where it can (put back at the end).
    let queue = format!("/sys/block/{}/queue", dev.name());
    let hw: u64 = std::fs::read_to_string(format!("{queue}/max_hw_sectors_kb"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let limit = (hw >= 1024)
        .then(|| QueueSetting::set(&dev, "max_sectors_kb", "1024"))
        .flatten();
    if limit.is_none() {
        skip(&format!(
            "this loop device cannot take 1 MiB requests (max_hw_sectors_kb {hw})"
        ));
        return;
    }
    let stat = || -> Vec<u64> {
        std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name()))
            .unwrap()
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect()
    };
    // Reserved huge pages (hugetlb) for the buffers: transparent huge pages depend on how
    // fragmented memory is, and a buffer only partly on them reaches the device in pieces by
    // luck. 64 pages leave room for other runs at the same time.
    let _huge = HugePages::reserve(64);
    if HugePages::free() < 4 {
        skip("the kernel could not reserve 4 huge pages");
        return;
    }
    let before = stat();
    let doc = json_of(&iogauge(
        dir.path(),
        &[
            "run",
            &dev.dev,
            "--rw",
            "read",
            "--bs",
            "1m",
            "--iodepth",
            "4",
            "--time",
            "500ms",
            "--json",
            "--no-store",
        ],
    ));
    let after = stat();
    let r = &doc["results"][0];
    let buffers = r["engine"]["buffers"].as_str().unwrap_or("").to_string();
    // With huge pages reserved, iogauge takes those first: all of its buffers are on them.
    assert!(buffers.contains("hugetlb"), "{buffers}");
    let ios = r["ios"].as_u64().unwrap();
    let (reads, sectors) = (after[0] - before[0], after[2] - before[2]);
    assert!(reads > 0 && ios > 0);
    let avg = sectors * 512 / reads;
    assert!(
        avg >= 1000 * 1024,
        "the device saw {reads} requests averaging {} KiB for {ios} IOs of 1 MiB ({buffers})",
        avg / 1024
    );
    // The result says the same from its own device counters (issue 11).
    let seen = r["devices"][0]["avg_read_request_bytes"].as_f64().unwrap();
    assert!(seen >= 1000.0 * 1024.0, "results[0].devices says {seen}");
}

/// More huge pages reserved (/proc/sys/vm/nr_hugepages) for a test, given back on drop.
struct HugePages {
    original: u64,
}

impl HugePages {
    const KNOB: &'static str = "/proc/sys/vm/nr_hugepages";

    fn reserve(extra: u64) -> HugePages {
        let original: u64 = std::fs::read_to_string(Self::KNOB)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::fs::write(Self::KNOB, (original + extra).to_string()).unwrap();
        HugePages { original }
    }

    /// Huge pages reserved and not in use (/proc/meminfo HugePages_Free).
    fn free() -> u64 {
        std::fs::read_to_string("/proc/meminfo")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("HugePages_Free:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for HugePages {
    fn drop(&mut self) {
        let _ = std::fs::write(Self::KNOB, self.original.to_string());
    }
}
