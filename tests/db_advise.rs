//! `db advise` as a user meets it (issue 61): bad input refused before a byte is written, the
//! plan said by --dry-run, and --prove on real PostgreSQL: both sides run alternating on fresh
//! servers, each stored with its side, the advice in force on the advised servers as they
//! report their settings. The kernel-made measurements are in tests/advise.rs (quiet).

use crate::common;
use common::*;
use serde_json::Value;

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn bad_input_is_one_line_exit_2_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = dir.path().join("f.img");
    std::fs::write(&file, b"x").unwrap();
    let d = data.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![d, "--buffered"], "drop --buffered"),
        (vec![d, "--engine", "psync"], "drop --engine"),
        (vec![d, "--hipri"], "drop --hipri"),
        (
            vec![d, "--prove", "--prove-time", "500ms"],
            "--prove-time is under a second",
        ),
        (
            vec![d, "--prove", "--load", "pgbench", "--server", "mariadb"],
            "--load pgbench drives PostgreSQL only",
        ),
        (
            vec![file.to_str().unwrap(), "--prove", "--allow-overwrite"],
            "is not a directory",
        ),
        (vec![d, "--load", "tpcc"], "--prove"),
        (vec![d, "-o", "/nonexistent-dir/x.conf"], "--output"),
        (
            vec![d, "--server", "mariadb", "--pg-bin", "/usr/bin"],
            "drop it",
        ),
    ];
    for (extra, says) in cases {
        let mut args = vec!["db", "advise", "--server", "postgres"];
        // A later --server wins in clap only once: the mariadb cases name it themselves.
        if extra.contains(&"--server") {
            args.truncate(2);
        }
        args.extend(extra.iter().copied());
        let out = iogauge(dir.path(), &args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            entries(&data).is_empty(),
            "{args:?} wrote {:?}",
            entries(&data)
        );
    }
}

/// `db advise --server postgres DATA` with `extra` (words split on spaces) in a test
/// directory of its own with an empty DATA directory in it.
fn advise_in(extra: &str) -> (tempfile::TempDir, std::path::PathBuf, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut args = vec![
        "db",
        "advise",
        "--server",
        "postgres",
        data.to_str().unwrap(),
    ];
    args.extend(extra.split(' ').filter(|w| !w.is_empty()));
    let out = iogauge(dir.path(), &args);
    (dir, data, out)
}

#[test]
fn a_dry_run_says_the_measurements_and_the_proof_and_writes_nothing() {
    let (_dir, data, out) = advise_in("--prove --load pgbench --prove-time 5s --dry-run");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    for line in [
        "randread 8K × 64 threads",
        "write 8K O_DSYNC over 16 MiB",
        "then: PostgreSQL's settings from these measurements",
        "then the proof: `iogauge db pgbench",
        "--time 5s --no-storage",
    ] {
        assert!(said.contains(line), "no {line:?} in {said}");
    }
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
}

#[test]
fn the_proof_runs_both_sides_alternating_with_the_advice_in_force() {
    if !is_root() {
        return skip("needs root");
    }
    if !have_postgres() {
        return;
    }
    let (dir, data, out) = advise_in(
        "--cell-time 500ms --size 64MiB --prove --load pgbench --prove-time 2s --prove-repeat 2 --json",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let advice = &doc["advice"];
    let proof = &advice["proof"];
    assert_eq!(proof["defaults"].as_array().unwrap().len(), 2, "{proof}");
    assert_eq!(proof["advised"].as_array().unwrap().len(), 2, "{proof}");
    assert!(["better", "worse", "same"].contains(&proof["verdict"].as_str().unwrap()));
    // Every changed setting, as the advised servers reported it, is the advice.
    let changed: Vec<&Value> = advice["settings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["value"] != s["default"])
        .collect();
    assert!(!changed.is_empty(), "{advice}");
    // max_wal_size comes from the proof's own load, after it: not in force there.
    for s in changed.iter().filter(|s| s["name"] != "max_wal_size") {
        let name = s["name"].as_str().unwrap();
        assert_eq!(proof["applied"][name], s["value"], "{name}: {proof}");
    }
    // The WAL the defaults' load wrote gives max_wal_size.
    assert!(proof["wal_bytes_per_s"].as_f64().unwrap() > 0.0, "{proof}");
    let wal = advice["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "max_wal_size")
        .unwrap();
    assert!(
        wal["why"]
            .as_str()
            .unwrap()
            .contains("the proof's load wrote"),
        "{wal}"
    );
    // ABBA: the second round starts with the advice; each run stored with its side.
    let stderr = stderr_of(&out);
    let order: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("proof "))
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(
        order,
        ["defaults", "advice", "advice", "defaults"],
        "{stderr}"
    );
    for (side, runs) in [
        ("defaults", &proof["defaults"]),
        ("advice", &proof["advised"]),
    ] {
        for r in runs.as_array().unwrap() {
            let id = r["run_id"].as_str().unwrap();
            let shown = iogauge(dir.path(), &["show", id, "--json"]);
            assert!(shown.status.success(), "{}", stderr_of(&shown));
            let run: Value = serde_json::from_slice(&shown.stdout).unwrap();
            assert_eq!(run["params"]["advice"], side, "{id}");
        }
    }
    // No server and no cluster left behind.
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
}

/// `--wal`: the commits are measured where the WAL would live, the rest where the data would;
/// both stored, one advice from both.
#[test]
fn with_wal_the_commits_are_measured_on_the_wals_own_target() {
    let dir = tempfile::tempdir().unwrap();
    let (data, wal) = (dir.path().join("data"), dir.path().join("wal"));
    std::fs::create_dir(&data).unwrap();
    std::fs::create_dir(&wal).unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "db",
            "advise",
            "--server",
            "postgres",
            data.to_str().unwrap(),
            "--wal",
            wal.to_str().unwrap(),
            "--cell-time",
            "300ms",
            "--size",
            "64MiB",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let on = |r: &Value| r["target"]["path"].as_str().unwrap().to_string();
    let results = doc["results"].as_array().unwrap();
    let synced: Vec<&Value> = results
        .iter()
        .filter(|r| !r["workload"]["sync"].is_null() || r["workload"]["odsync"] == true)
        .collect();
    assert_eq!(synced.len(), 3, "{results:?}");
    for r in &synced {
        assert!(on(r).starts_with(wal.to_str().unwrap()), "{}", on(r));
    }
    for r in results.iter().filter(|r| r["workload"]["rw"] == "randread") {
        assert!(on(r).starts_with(data.to_str().unwrap()), "{}", on(r));
    }
    let names: Vec<&str> = doc["advice"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for n in [
        "random_page_cost",
        "effective_io_concurrency",
        "wal_sync_method",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }
    // Two runs stored: the data's and the WAL's, the advice with the WAL's.
    let listed = iogauge(dir.path(), &["list", "--json"]);
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let suites: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["suite"].as_str().unwrap())
        .collect();
    assert_eq!(suites.len(), 2, "{runs}");
    assert!(suites.contains(&"advise-postgres-commits"), "{suites:?}");
    // The same path for both is refused.
    let same = iogauge(
        dir.path(),
        &[
            "db",
            "advise",
            "--server",
            "postgres",
            data.to_str().unwrap(),
            "--wal",
            data.to_str().unwrap(),
        ],
    );
    assert_eq!(same.status.code(), Some(2), "{}", stderr_of(&same));
    assert!(stderr_of(&same).contains("is the target itself"));
}
