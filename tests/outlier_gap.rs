//! The findings across repeats and cells, planted with the kernel (issue 23): `outlier`, one
//! repeat of a cell slower than the others, and `gap`, one block size of a table far below the
//! trend of its neighbours. The device is a RAM-backed loop device held to a steady rate by a
//! cgroup v1 blkio throttle, so what the machine's CPUs are busy with does not move the rates;
//! the test lowers the throttle for part of one repeat (found by the kernel's read counter) or
//! for one cell (found by the suite's line for the cell before it), and a near miss next to
//! each stays under the finding's threshold.

use crate::common;

use common::*;
use serde_json::Value;
use std::process::Command;

/// Reads completed on `dev` so far (the kernel's counter).
fn reads(dev: &LoopDev) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

/// Waits until `dev` has completed `n` more reads than `from`.
fn wait_reads(dev: &LoopDev, from: u64, n: u64) {
    wait_until("the device's reads", WATCHDOG, || reads(dev) >= from + n);
}

/// The tests take turns: a run starved of CPU by another test's run delivers less than its
/// throttle allows, which would read as the very slowdown each test plants.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Starts iogauge with `args` inside `cg`.
fn start(cg: &Blkio, ram: &RamLoop, args: &str) -> Spawned {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &cg.iogauge(args)])
        .current_dir(ram.dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(ram.dir.path()));
    Spawned::start(cmd)
}

/// The steady rate, and the length of a repeat: a repeat is 2,000 reads long, so its bounds
/// lie 2,000 reads apart on the device's counter.
const RATE: u32 = 1000;
const REPEAT_S: u64 = 2;

/// Five 2-second repeats of a random read at RATE reads/s; during the third, once 500 of its
/// reads are done, `dip` runs (it may lower the throttle and must put it back).
fn five_repeats(cg: &Blkio, ram: &RamLoop, dip: &dyn Fn()) -> Value {
    cg.throttle(&ram.dev, "read", RATE);
    let start_reads = reads(&ram.dev);
    let run = start(
        cg,
        ram,
        &format!(
            "run {} --rw randread --iodepth 4 --time {REPEAT_S}s --repeat 5 --json --no-store",
            ram.dev.dev
        ),
    );
    // 2 repeats and a quarter of the third: half a second from either end of the repeat, so
    // a dip of half a second lies inside it.
    let per_repeat = u64::from(RATE) * REPEAT_S;
    wait_reads(&ram.dev, start_reads, 2 * per_repeat + per_repeat / 4);
    dip();
    json_of(&run.finish(WATCHDOG))
}

/// A repeat that lost about a quarter of its reads to a lowered throttle is named: repeat 3
/// of 5, below the mean of the others.
#[test]
fn a_repeat_slowed_by_a_throttle_is_an_outlier() {
    let _quiet = quiet_turn(module_path!());
    let _turn = hold(&ONE_AT_A_TIME);
    let Some((cg, ram)) = throttle_rig("outlier") else {
        return;
    };
    let doc = five_repeats(&cg, &ram, &|| {
        // 50 reads at a tenth of the rate: half a second, and more for the IOs the throttle
        // already let through in its slice; at least 450 reads fewer of 2,000.
        cg.throttle(&ram.dev, "read", RATE / 10);
        wait_reads(&ram.dev, reads(&ram.dev), u64::from(RATE / 10) / 2);
        cg.throttle(&ram.dev, "read", RATE);
    });
    let found: Vec<Value> = findings_of(&doc, "outlier")
        .into_iter()
        .filter(|f| f["metric"] == "iops")
        .collect();
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    let f = &found[0];
    eprintln!("user sees: {}", f["summary"]);
    assert_eq!(f["evidence"]["repeat"], 2.0, "{f:#}");
    assert!(
        f["summary"].as_str().unwrap().contains("repeat 3 of 5"),
        "{f:#}"
    );
    let (value, without) = (
        f["evidence"]["value"].as_f64().unwrap(),
        f["evidence"]["mean_without"].as_f64().unwrap(),
    );
    assert!(value < 0.9 * without, "{f:#}");
    // The others ran at the throttle's rate (a little above: each repeat starts with a slice
    // the throttle has not yet charged).
    assert!((without / f64::from(RATE) - 1.0).abs() <= 0.1, "{f:#}");
}

/// Near misses: the same five repeats at a steady rate, and the third repeat held to 90% of
/// the rate for half a second (a few percent of its reads, under the 10% an outlier must be off
/// the others), name no outlier. (A deeper dip is not shorter: lowering a blkio throttle charges
/// the IOs already sent in its 100 ms slice at the new rate, so 0.1 s at a tenth of the rate
/// stalls for most of a second.)
#[test]
fn steady_repeats_and_a_small_dip_name_no_outlier() {
    let _quiet = quiet_turn(module_path!());
    let _turn = hold(&ONE_AT_A_TIME);
    let Some((cg, ram)) = throttle_rig("no-outlier") else {
        return;
    };
    let doc = five_repeats(&cg, &ram, &|| {});
    assert!(
        findings_of(&doc, "outlier").is_empty(),
        "{:#}",
        doc["findings"]
    );
    let doc = five_repeats(&cg, &ram, &|| {
        // 450 reads at 900/s: about 50 reads fewer of 2,000.
        cg.throttle(&ram.dev, "read", RATE * 9 / 10);
        wait_reads(&ram.dev, reads(&ram.dev), u64::from(RATE * 9 / 10) / 2);
        cg.throttle(&ram.dev, "read", RATE);
    });
    assert!(
        findings_of(&doc, "outlier").is_empty(),
        "{:#}",
        doc["findings"]
    );
}

const BLOCK_SIZES: &str = r#"
name = "bs-table"
description = "four block sizes, one column"
[defaults]
time = "1s"
[[group]]
title = "reads"
rw = ["randread"]
bs = ["4k", "8k", "16k", "32k"]
iodepth = [4]
"#;

/// The block-size table at a steady 1,000 reads/s (flat IOPS: no cell off the trend), with the
/// 16 KiB cell (the third) held to `during` reads/s: the throttle is lowered when the suite
/// reports the second cell and put back when it reports the third.
fn table_with_slow_16k(cg: &Blkio, ram: &RamLoop, during: u32) -> Value {
    std::fs::write(ram.dir.path().join("bs.toml"), BLOCK_SIZES).unwrap();
    cg.throttle(&ram.dev, "read", 1000);
    let mut run = start(
        cg,
        ram,
        &format!("suite --file bs.toml {} --json --no-store", ram.dev.dev),
    );
    run.wait_for("[2/4] randread 8K", WATCHDOG);
    cg.throttle(&ram.dev, "read", during);
    run.wait_for("[3/4] randread 16K", WATCHDOG);
    cg.throttle(&ram.dev, "read", 1000);
    json_of(&run.finish(WATCHDOG))
}

/// A cell at a quarter of its neighbours' IOPS is a gap, named at its block size.
#[test]
fn a_block_size_held_to_a_quarter_is_a_gap() {
    let _quiet = quiet_turn(module_path!());
    let _turn = hold(&ONE_AT_A_TIME);
    let Some((cg, ram)) = throttle_rig("gap") else {
        return;
    };
    let doc = table_with_slow_16k(&cg, &ram, 250);
    let found = findings_of(&doc, "gap");
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    let f = &found[0];
    eprintln!("user sees: {}", f["summary"]);
    assert_eq!(f["evidence"]["bs_bytes"], 16384.0, "{f:#}");
    let ratio = f["evidence"]["ratio"].as_f64().unwrap();
    assert!((0.2..0.35).contains(&ratio), "{f:#}");
    assert!(f["summary"].as_str().unwrap().contains("16"), "{f:#}");
}

/// Near misses: the same table at a steady rate, and with the 16 KiB cell at 70% of its
/// neighbours (above the 50% a gap must fall under), name no gap.
#[test]
fn a_flat_table_and_a_shallow_dip_name_no_gap() {
    let _quiet = quiet_turn(module_path!());
    let _turn = hold(&ONE_AT_A_TIME);
    let Some((cg, ram)) = throttle_rig("no-gap") else {
        return;
    };
    let doc = table_with_slow_16k(&cg, &ram, 1000);
    assert!(findings_of(&doc, "gap").is_empty(), "{:#}", doc["findings"]);
    let doc = table_with_slow_16k(&cg, &ram, 700);
    assert!(findings_of(&doc, "gap").is_empty(), "{:#}", doc["findings"]);
}
