//! `db advise` against storage the kernel makes (issue 61): a RAM loop device held by blkio to
//! 200 reads and 200 writes a second (a slow disk) and a zram device (a fast one). The throttle
//! gives the measurements their ground truth — every random read at 200 a second, whatever is
//! in flight — so the settings follow from it and repeat; zram's differ where the storage does.
//! The rules themselves are unit tests (src/db/advise/rules.rs). Judged on rates the CPU would
//! move on zram: in the quiet binary.

use serde_json::Value;
use std::collections::BTreeMap;

use crate::common;
use common::*;

fn advise(run: impl Fn(&str) -> std::process::Output, dev: &str, server: &str) -> Value {
    let out = run(&format!(
        "db advise --server {server} {dev} --allow-overwrite --cell-time 1s --no-store --json"
    ));
    assert!(out.status.success(), "{}", stderr_of(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each setting's value by name.
fn settings(doc: &Value) -> BTreeMap<String, String> {
    doc["advice"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn why<'a>(doc: &'a Value, name: &str) -> &'a str {
    doc["advice"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {}", doc["advice"]))["why"]
        .as_str()
        .unwrap()
}

/// The IOPS of every result of `rw` and block size `bs`.
fn rates(doc: &Value, rw: &str, bs: u64) -> Vec<f64> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["workload"]["rw"] == rw && r["workload"]["bs"] == bs)
        .map(|r| r["iops"].as_f64().unwrap())
        .collect()
}

fn throttled(tag: &str) -> Option<(Blkio, RamLoop)> {
    let (cg, ram) = throttle_rig(tag)?;
    cg.throttle(&ram.dev, "read", 200);
    cg.throttle(&ram.dev, "write", 200);
    Some((cg, ram))
}

#[test]
fn postgres_settings_follow_the_storage_and_repeat_on_it() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttled("advise-pg") else {
        return;
    };
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let slow = |a: &str| cg.run_in(dir.path(), a);
    let first = advise(slow, &ram.dev.dev, "postgres");

    // The measurements are the throttle's: 200 random reads a second, one at a time or 64.
    let reads = rates(&first, "randread", 8192);
    assert_eq!(reads.len(), 7, "{reads:?}");
    for r in &reads {
        assert!(
            (150.0..=260.0).contains(r),
            "random 8 KiB reads at {r} IOPS under a 200 IOPS throttle: {reads:?}"
        );
    }
    let s = settings(&first);
    // Sequential pages come 16 to a 128 KiB read at the same 200 a second: 16× dearer random
    // pages, kept at the default's 4.0.
    assert_eq!(
        s["random_page_cost"],
        "4.0",
        "{}",
        why(&first, "random_page_cost")
    );
    assert!(why(&first, "random_page_cost").contains("kept at the default"));
    assert_eq!(
        s["effective_io_concurrency"],
        "1",
        "{}",
        why(&first, "effective_io_concurrency")
    );
    assert!(why(&first, "effective_io_concurrency").contains("do not go faster"));

    // The same storage twice: the same settings.
    let again = advise(slow, &ram.dev.dev, "postgres");
    assert_eq!(
        settings(&again),
        s,
        "{}\n{}",
        first["advice"],
        again["advice"]
    );

    // zram: random pages nearly as cheap as sequential ones, and reads that scale.
    let fast = advise(
        |a: &str| iogauge(dir.path(), &a.split(' ').collect::<Vec<_>>()),
        &zram.dev(),
        "postgres",
    );
    let z = settings(&fast);
    let cost: f64 = z["random_page_cost"].parse().unwrap();
    assert!(cost < 4.0, "{}", why(&fast, "random_page_cost"));
    let eic: u32 = z["effective_io_concurrency"].parse().unwrap();
    assert!(eic >= 2, "{}", why(&fast, "effective_io_concurrency"));
}

#[test]
fn mariadb_settings_follow_the_storage_and_repeat_on_it() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttled("advise-my") else {
        return;
    };
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let slow = |a: &str| cg.run_in(dir.path(), a);
    let first = advise(slow, &ram.dev.dev, "mariadb");
    let s = settings(&first);
    // Page flushes sustain the throttle's 200 writes a second: all of it for io_capacity_max,
    // half for io_capacity (never under the server's 100).
    let writes = rates(&first, "randwrite", 16384);
    assert!((150.0..=260.0).contains(&writes[0]), "{writes:?}");
    assert_eq!(
        (
            s["innodb_io_capacity_max"].as_str(),
            s["innodb_io_capacity"].as_str()
        ),
        ("200", "100"),
        "{}",
        why(&first, "innodb_io_capacity_max")
    );
    // In order or apart, 200 writes a second: neighbours gain nothing.
    assert_eq!(
        s["innodb_flush_neighbors"],
        "0",
        "{}",
        why(&first, "innodb_flush_neighbors")
    );
    let again = advise(slow, &ram.dev.dev, "mariadb");
    assert_eq!(
        settings(&again),
        s,
        "{}\n{}",
        first["advice"],
        again["advice"]
    );

    let fast = advise(
        |a: &str| iogauge(dir.path(), &a.split(' ').collect::<Vec<_>>()),
        &zram.dev(),
        "mariadb",
    );
    let max: u64 = settings(&fast)["innodb_io_capacity_max"].parse().unwrap();
    assert!(max >= 2_000, "{}", why(&fast, "innodb_io_capacity_max"));
}

/// The snippet a DBA pastes holds the changed settings only, each with its reason.
#[test]
fn the_snippet_holds_what_changed() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttled("advise-snippet") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("advice.conf");
    let out = cg.run_in(
        dir.path(),
        &format!(
            "db advise --server postgres {} --allow-overwrite --cell-time 1s --no-store -o {}",
            ram.dev.dev,
            conf.display()
        ),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(&conf).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // maintenance_io_concurrency's default is 10; one read at a time pays here.
    assert!(
        text.contains("\nmaintenance_io_concurrency = 1\n"),
        "{text}"
    );
    assert!(!text.contains("random_page_cost"), "{text}");
    assert!(
        stdout.contains("maintenance_io_concurrency = 1  (default 10)"),
        "{stdout}"
    );
}
