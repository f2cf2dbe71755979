//! fio's IO priorities (issue 60): `prioclass`/`prio` give every IO of a job's threads a
//! class, and `cmdprio_percentage` with `cmdprio_class` gives a share of its IOs a class of
//! their own (io_uring's per-IO priority), as `cmdprio-percentage.fio` asks. Ground truth: the
//! kernel's `block:block_rq_issue` tracepoint, which prints the priority of every request the
//! device was sent, read from a trace instance of the test's own filtered to one loop device.

use std::path::Path;

use crate::common;
use common::trace::Issued;
use common::*;

fn run(dir: &Path, text: &str) {
    let file = dir.join("prio.fio");
    std::fs::write(&file, text).unwrap();
    let out = iogauge(dir, &["fio", "--no-store", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// cmdprio-percentage.fio's shape: threads idle, a fifth of the IOs real-time. 4,096 reads (2 s
/// at 2,000/s): about 820 real-time (±26, one standard deviation), the rest idle, none other.
/// Then a sync engine's threads at best effort level 7: every request be,7; and a priority per
/// block size: every 4 KiB request real-time, every 8 KiB one idle. Each job is an amount, not a
/// time: a busy CI machine issued 804 of a 2 s window's 1,000 psync reads at 500/s.
#[test]
fn a_share_of_ios_carries_its_own_priority_and_the_rest_the_threads() {
    if !is_root() {
        skip("needs root (a loop device, the tracepoint, the real-time class)");
        return;
    }
    let ram = RamLoop::new(64 << 20);
    let Some(issued) = Issued::on(&ram.dev.dev) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let head = format!(
        "[global]\nfilename={}\ndirect=1\nsize=64m\nrw=randread\nbs=4k\n",
        ram.dev.dev
    );
    issued.take();
    run(
        dir.path(),
        &format!("{head}[a]\nioengine=libaio\niodepth=4\nio_size=16m\nrate_iops=2000\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\n"),
    );
    let by = issued.take();
    let (rt, idle) = (
        by.get("rt,0").copied().unwrap_or(0),
        by.get("idle,0").copied().unwrap_or(0),
    );
    let all: u64 = by.values().sum();
    assert_eq!(rt + idle, all, "{by:?}");
    assert!(all >= 3_600, "{by:?}");
    let share = rt as f64 / all as f64;
    assert!((0.16..=0.24).contains(&share), "{share} real-time: {by:?}");

    run(
        dir.path(),
        &format!("{head}[b]\nioengine=psync\nio_size=4m\nrate_iops=500\nprioclass=2\nprio=7\n"),
    );
    let by = issued.take();
    let all: u64 = by.values().sum();
    assert!(all >= 1_000 && by.get("be,7") == Some(&all), "{by:?}");

    // cmdprio-bssplit.fio's form: every 4 KiB read real-time, no 8 KiB one (one IO at a time,
    // so no request merges two).
    run(
        dir.path(),
        &format!("{head}[c]\nioengine=io_uring\nio_size=12m\nrate_iops=1000\nprioclass=3\nbssplit=4k/50:8k/50\ncmdprio_bssplit=4k/100/1/0:8k/0\n"),
    );
    let by = issued.take_by(true);
    let (small, large) = (
        by.get("4096 rt,0").copied().unwrap_or(0),
        by.get("8192 idle,0").copied().unwrap_or(0),
    );
    assert!(
        small >= 600 && large >= 600 && small + large == by.values().sum::<u64>(),
        "{by:?}"
    );

    // The near miss: no priority asked, none given (the kernel's default).
    run(
        dir.path(),
        &format!("{head}[c]\nioengine=psync\nio_size=1m\nrate_iops=500\n"),
    );
    let by = issued.take();
    assert!(
        !by.is_empty()
            && !by.contains_key("rt,0")
            && !by.contains_key("idle,0")
            && !by.contains_key("be,7"),
        "{by:?}"
    );
}
