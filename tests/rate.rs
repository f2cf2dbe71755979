//! `--rate` (issue 16) against ground truth from the kernel: a loop device throttled by a
//! cgroup v1 blkio limit meets a rate below the limit and names the shortfall above it; a queue
//! depth sweep against the same kind of limit is a saturated ceiling; and a 2 s fsfreeze in the
//! middle of a rate-controlled write run shows in the latency from each IO's planned start
//! (coordinated omission, corrected as wrk2 does) but not in the service time.
//! Needs root; says so otherwise.

use serde_json::Value;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common;
use common::*;

/// Runs iogauge inside `cg` and returns its JSON.
fn in_cgroup(cg: &Blkio, dir: &Path, args: &str) -> Value {
    let out = Command::new("sh")
        .args(["-c", &cg.iogauge(args)])
        .current_dir(dir)
        .output()
        .unwrap();
    json_of(&out)
}

#[test]
fn a_rate_below_the_throttle_is_met_and_one_above_is_named() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let Some(cg) = Blkio::new("rate") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let ram = RamLoop::new(64 << 20);
    let (dev, shm) = (&ram.dev, &ram.dir);
    cg.throttle(dev, "read", 2000);
    let run = |rate: u32| {
        in_cgroup(
            &cg,
            shm.path(),
            &format!(
                "run {} --rw randread --iodepth 4 --rate {rate} --time 3s --json --no-store",
                dev.dev
            ),
        )
    };
    let below = run(1000);
    let r = &below["results"][0];
    let iops = r["iops"].as_f64().unwrap();
    let short = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "rate");
    // Met, never passed; a loaded test machine can keep the threads from a CPU long enough to
    // fall short (at the end of the run there is no catching up): then the run says so, and
    // the kernel shows the threads waited for a CPU.
    assert!(iops <= 1000.0 * 1.02, "{iops} IOPS for --rate 1000");
    if iops < 1000.0 * 0.98 {
        assert!(
            short && short_for_want_of_a_cpu(r, 1000.0),
            "{iops} IOPS for --rate 1000 (rate finding: {short}; the threads' CPU {:#})",
            r["fine"]
        );
    } else {
        assert!(!short, "{:#}", r["findings"]);
    }
    let above = run(4000);
    let r = &above["results"][0];
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "rate")
        .expect("a shortfall finding");
    eprintln!("user sees: {}", f["summary"]);
    assert!(r["iops"].as_f64().unwrap() < 0.7 * 4000.0);
}

#[test]
fn a_freeze_shows_in_latency_from_the_planned_start_but_not_in_service_time() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    needs_tool!("mkfs.ext4");
    needs_tool!("fsfreeze");
    let fs = Fs::ext4(256 << 20, "rw");
    let (dir, dev, mnt) = (&fs.dir, &fs.dev, fs.path().to_path_buf());
    let mut run = Spawned::iogauge(
        dir.path(),
        &[
            "run",
            mnt.join("t").to_str().unwrap(),
            "--size",
            "32m",
            "--rw",
            "randwrite",
            "--rate",
            "500",
            "--time",
            "6s",
            "--json",
            "--no-store",
        ],
    );
    // Once the fill is done and the device counts the run's writes, the measurement is on.
    run.wait_for("done in", WATCHDOG);
    let before = device_ios(dev.name());
    wait_until("the run's writes", WATCHDOG, || {
        device_ios(dev.name()) > before + 100
    });
    // The stimulus: 1.5 s more of IO at the planned 500 IOPS, by the device's own count (750
    // more writes, so a run held back on a busy machine is waited for), then a 2 s freeze: the
    // sleep is the freeze's length, not a wait. The guard thaws on every path, before the run
    // is killed on a failure.
    wait_until("1.5 s more of the run's writes", WATCHDOG, || {
        device_ios(dev.name()) > before + 100 + 750
    });
    {
        let _frozen = Frozen::new(&mnt);
        std::thread::sleep(Duration::from_secs(2));
    }
    let out = run.finish(WATCHDOG);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    let p99 = r["lat_ns"]["p99"].as_f64().unwrap();
    let service = r["service_lat_ns"]["p99"].as_f64().unwrap();
    eprintln!("p99 from the planned start {p99} ns, service p99 {service} ns");
    assert!(p99 >= 1e9, "the 2 s freeze shows: p99 {p99} ns");
    assert!(
        service < 1e9,
        "the wait is not service time: p99 {service} ns"
    );
}

/// `--latency-target` (issue 16): the highest rate under a p99 target, found below a blkio
/// throttle of 2,000 IOPS that makes queueing (and so latency) grow as the rate nears it.
#[test]
fn the_latency_target_search_stays_under_the_throttle() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let Some(cg) = Blkio::new("latency") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let ram = RamLoop::new(64 << 20);
    let (dev, shm) = (&ram.dev, &ram.dir);
    cg.throttle(dev, "read", 2000);
    let doc = in_cgroup(
        &cg,
        shm.path(),
        &format!(
            "run {} --rw randread --iodepth 256 --latency-target p99=50ms --time 1s --json --no-store",
            dev.dev
        ),
    );
    let results = doc["results"].as_array().unwrap();
    assert!(results.len() >= 3, "an unthrottled run and search steps");
    // 256 in flight at the throttle's 2,000 IOPS wait about 128 ms each: the unthrottled run
    // misses the 50 ms target, while below the throttle nothing queues (a target this loose
    // also holds on a machine whose CPUs are busy with other work: a scheduler's time slices
    // there are tens of milliseconds, not fifty).
    assert!(results[0]["lat_ns"]["p99"].as_f64().unwrap() > 50e6);
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["summary"]
                .as_str()
                .unwrap_or("")
                .contains("the highest rate with p99")
        })
        .expect("an answer");
    eprintln!("user sees: {}", f["summary"]);
    let best = f["evidence"]["best_iops"].as_f64().unwrap();
    // The rule, whatever the machine gave each step: the answer is the most IOPS any paced
    // step achieved while meeting the target.
    let met = results[1..]
        .iter()
        .filter(|r| r["lat_ns"]["p99"].as_f64().unwrap() <= 50e6)
        .map(|r| r["iops"].as_f64().unwrap())
        .fold(f64::NAN, f64::max);
    assert_eq!(
        best, met,
        "the answer is not the best step that met the target"
    );
    // blk-throttle lets a slice or two of credit through as each step starts (see tests/snia.rs),
    // so a one-second step can reach a little above the throttle.
    // (No lower bound: on a busy machine a search step can miss the target for reasons of its
    // own, which only makes the answer lower, never higher than what the storage allows.)
    assert!(
        best > 0.0 && best <= 2300.0,
        "{best} IOPS under a 2,000 IOPS throttle"
    );
}

/// A ceiling end to end (issue 21): queue depths 4 to 64 against a device the kernel's blkio
/// throttle holds at 500 reads/s. IOPS cannot grow, so latency must grow with the depth
/// (Little's law), and the run must name a saturated ceiling over the whole sweep, at the
/// throttle. The kernel lets each cell start with a slice or two of 100 ms already allowed (up
/// to 584 reads/s in 1 s cells, enough to break the 5% flatness): 3 s cells keep that within
/// 3%. Depth 4 already saturates the throttle however loaded the machine: the throttle holds
/// each read ~8 ms (at depth 1 scheduling delays alone kept it below).
#[test]
fn queue_depths_against_a_throttle_are_a_saturated_ceiling() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let Some(cg) = Blkio::new("ceiling") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let ram = RamLoop::new(64 << 20);
    let (dev, shm) = (&ram.dev, &ram.dir);
    cg.throttle(dev, "read", 500);
    let suite = shm.path().join("qd.toml");
    std::fs::write(
        &suite,
        r#"
name = "qd"
description = "queue depth against a throttle"
[defaults]
time = "3s"
[[group]]
title = "qd"
rw = ["randread"]
bs = ["4k"]
iodepth = [4, 8, 16, 32, 64]
"#,
    )
    .unwrap();
    let doc = in_cgroup(
        &cg,
        shm.path(),
        &format!(
            "suite --file {} {} --json --no-store",
            suite.display(),
            dev.dev
        ),
    );
    let by_depth: Vec<(f64, f64)> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let iops = r["iops"].as_f64().unwrap();
            assert!(iops <= 600.0, "{iops} IOPS through a 500/s throttle");
            (r["workload"]["iodepth"].as_f64().unwrap(), iops)
        })
        .collect();
    let ceiling = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "ceiling")
        .unwrap_or_else(|| panic!("no ceiling for (depth, IOPS) {by_depth:?}"));
    eprintln!("user sees: {}", ceiling["summary"]);
    let e = &ceiling["evidence"];
    assert_eq!(
        (e["starts_at_x"].as_f64(), e["ends_at_x"].as_f64()),
        (Some(4.0), Some(64.0)),
        "{e}"
    );
    let plateau = e["plateau_value"].as_f64().unwrap();
    assert!(plateau <= 600.0, "{e}");
    // The cause: latency grew with the depth, as behind a fixed limit.
    assert!(e["lat_elasticity"].as_f64().unwrap() > 0.5, "{e}");
    assert!(
        ceiling["summary"].as_str().unwrap().contains("saturated"),
        "{}",
        ceiling["summary"]
    );
}

/// The reads completed in each 100 ms bin.
fn bins(r: &Value) -> Vec<f64> {
    r["fine"]["ios"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect()
}

/// Variance over mean of the reads completed in each 100 ms bin.
fn dispersion(r: &Value) -> f64 {
    let bins = bins(r);
    let n = bins.len() as f64;
    let mean = bins.iter().sum::<f64>() / n;
    let var = bins.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / (n - 1.0);
    var / mean
}

/// `--poisson` (fio's rate_process=poisson): at 200 reads a second on a RAM device, where each
/// read completes within microseconds of its start, the reads completed per 100 ms bin are
/// Poisson counts (variance about their mean of 20; over 50 bins the estimate is within 0.5–2
/// by four standard errors), where an even schedule's are all but equal: at least four bins in
/// five within 2 reads of 20, where Poisson counts put about two in five there. The even
/// schedule is judged by that share, not by its variance: one stall of the machine and the
/// catch-up after it (0 reads in a bin, 40 in the next) make a variance over mean of 0.5 alone
/// (a CI run, beside the other rate tests and a release build, saw 0.52), and an even schedule
/// keeps its bins equal around it. Both keep the rate.
#[test]
fn poisson_arrivals_vary_as_poisson_counts_and_even_ones_do_not() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let ram = RamLoop::new(64 << 20);
    let run = |extra: &str| {
        let out = iogauge(
            ram.dir.path(),
            &format!(
                "run {} --rw randread --rate 200 --time 5s --json --no-store {extra}",
                ram.dev.dev
            )
            .split_whitespace()
            .collect::<Vec<_>>(),
        );
        json_of(&out)["results"][0].clone()
    };
    let even = run("");
    let poisson = run("--poisson");
    assert_eq!(poisson["workload"]["rate_process"], "poisson");
    assert!(even["workload"]["rate_process"].is_null());
    for r in [&even, &poisson] {
        let iops = r["iops"].as_f64().unwrap();
        assert!(
            (170.0..=230.0).contains(&iops),
            "{iops} IOPS for --rate 200"
        );
    }
    let near = |r: &Value| {
        let bins = bins(r);
        let near = bins.iter().filter(|b| (*b - 20.0).abs() <= 2.0).count();
        (near as f64 / bins.len() as f64, bins)
    };
    let (e, bins_e) = near(&even);
    assert!(
        e >= 0.8,
        "even arrivals: {e:.2} of the bins within 2 of 20: {bins_e:?}"
    );
    let (n, bins_p) = near(&poisson);
    assert!(
        n < 0.8,
        "Poisson arrivals: {n:.2} of the bins within 2 of 20: {bins_p:?}"
    );
    let p = dispersion(&poisson);
    assert!(
        (0.5..=2.0).contains(&p),
        "Poisson arrivals: variance/mean {p:.2}: {bins_p:?}"
    );
}
