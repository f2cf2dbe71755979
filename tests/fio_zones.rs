//! fio's strided zones (issue 60, `disk-zone-profile.fio`): a job moves `zonesize` bytes in a
//! zone, then skips `zoneskip` to the next, back at the start past the end. Ground truth: the
//! places of the requests the kernel sent the device (`block:block_rq_issue`), for iogauge and
//! for fio itself on the same RAM loop device.

use std::path::Path;
use std::process::Command;

use crate::common;
use common::trace::Issued;
use common::*;

/// 64 KiB reads one at a time, 1 MiB in each zone, 3 MiB skipped, over 64 MiB: the i-th read at
/// (i / 16) × 4 MiB + (i % 16) × 64 KiB, the 257th back at the start.
#[test]
fn strided_zones_read_each_zones_share_then_skip_as_fio_does() {
    if !is_root() {
        skip("needs root (a loop device, the tracepoint)");
        return;
    }
    if !have("fio") {
        skip("needs fio");
        return;
    }
    let ram = RamLoop::new(64 << 20);
    let Some(issued) = Issued::on(&ram.dev.dev) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zones.fio");
    std::fs::write(
        &file,
        format!(
            "[zones]\nfilename={}\ndirect=1\nioengine=psync\nrw=read\nbs=64k\nsize=64m\n\
             zonemode=strided\nzonesize=1m\nzoneskip=3m\nruntime=1\ntime_based\n",
            ram.dev.dev
        ),
    )
    .unwrap();
    let want = |i: usize| ((i / 16) % 16) as u64 * (4 << 20) + (i % 16) as u64 * (64 << 10);
    issued.places();
    let out = iogauge(
        dir.path(),
        &["fio", "--no-store", "--json", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let ours = issued.places();
    let doc = json_of(&out);
    let r = &doc["results"][0];
    assert_eq!(r["workload"]["zones"]["skip_bytes"], 3 << 20, "{r}");
    assert!(f(&r["read"]["ios"]) as usize <= ours.len(), "{r}");
    // Past one wrap: every read in its zone, in fio's order.
    assert!(ours.len() > 300, "{} reads", ours.len());
    for (i, &(at, len)) in ours.iter().enumerate() {
        assert_eq!((at, len), (want(i), 64 << 10), "read {i} of {}", ours.len());
    }
    let fio = Command::new("fio")
        .args(["--output-format=json", file.to_str().unwrap()])
        .current_dir(Path::new(dir.path()))
        .output()
        .unwrap();
    assert!(fio.status.success(), "{}", stderr_of(&fio));
    let theirs = issued.places();
    let n = theirs.len().min(ours.len()).min(400);
    assert_eq!(theirs[..n], ours[..n]);
}
