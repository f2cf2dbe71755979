//! Several workloads at once (issue 60): `run --stream` and suite sets of streams, each stream a
//! result of its own beside their sum, and the `interference` finding with the kernel's ground
//! truth: a WAL stream on a RAM loop device beside eight random readers is held back; the same
//! readers held by blkio to 200 reads a second leave the device to the WAL, and nothing is said.

use serde_json::Value;
use std::path::Path;

use crate::common;
use common::*;

/// Commits alone, then beside eight random 8 KiB readers, 2 s each.
const WAL_SUITE: &str = "name = \"wal\"\ndescription = \"commits alone and beside reads\"\n\
[defaults]\ntime = \"2s\"\n\
[[group]]\ntitle = \"alone\"\nstream = \"wal\"\nrw = [\"write\"]\nbs = [\"8k\"]\nsync = \"fdatasync\"\nrange = \"16m\"\n\
[[group]]\ntitle = \"beside\"\nstream = \"wal\"\nrw = [\"write\"]\nbs = [\"8k\"]\nsync = \"fdatasync\"\nrange = \"16m\"\n\
[[group]]\ntitle = \"reads\"\nstream = \"reads\"\nwith_previous = true\nrw = [\"randread\"]\nbs = [\"8k\"]\nthreads = [8]\n";

fn suite_doc(cg: &Blkio, dir: &Path, dev: &str) -> Value {
    let suite = dir.join("wal.toml");
    std::fs::write(&suite, WAL_SUITE).unwrap();
    let out = cg.run_in(
        dir,
        &format!(
            "suite --file {} {dev} --allow-overwrite --no-store --json",
            suite.display()
        ),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn interference(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "interference")
        .map(|f| f["summary"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn commits_held_back_by_reads_are_named_and_reads_held_by_a_throttle_are_not() {
    let Some((cg, ram)) = throttle_rig("streams-interference") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();

    // Unthrottled, the readers take the device (and the loop device's CPU) from the commits.
    let doc = suite_doc(&cg, dir.path(), &ram.dev.dev);
    let found = interference(&doc);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("wal's sync latency beside reads is "),
        "{found:?}"
    );
    // The finding sits on the stream, named apart from the same stream alone.
    let results = doc["results"].as_array().unwrap();
    let beside = results
        .iter()
        .find(|r| {
            r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["kind"] == "interference")
        })
        .expect("the finding on a result");
    assert_eq!(
        beside["name"], "wal: write 8K + fdatasync over 16 MiB (beside reads)",
        "{beside}"
    );
    assert_eq!(beside["together"]["sum"], false);
    let alone = &results[0];
    assert!(alone["together"].is_null(), "{alone}");
    let p99 = |r: &Value| r["sync"]["lat_ns"]["p99"].as_f64().unwrap();
    assert!(
        p99(beside) >= 2.0 * p99(alone),
        "{} {}",
        p99(beside),
        p99(alone)
    );

    // The near miss: the same readers held to 200 reads a second wait in the throttle, above
    // the device, and the commits run as they do alone.
    cg.throttle(&ram.dev, "read", 200);
    let doc = suite_doc(&cg, dir.path(), &ram.dev.dev);
    assert!(interference(&doc).is_empty(), "{:?}", interference(&doc));
    let reads = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"].as_str().unwrap().starts_with("reads: "))
        .expect("the readers' result");
    let iops = reads["iops"].as_f64().unwrap();
    assert!(
        (150.0..250.0).contains(&iops),
        "readers at {iops:.0} IOPS under the throttle"
    );
}

/// `run --stream`: each stream its own result in the order given, their sum last with the
/// devices' counters; the numbers add up.
#[test]
fn run_streams_report_each_stream_and_their_sum() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--no-store",
            "--json",
            "--size",
            "32m",
            "--time",
            "1s",
            "--stream",
            "w: --rw write --bs 8k --fdatasync 1",
            "--stream",
            "r: --rw randread --bs 4k --iodepth 4",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "w: write 8K + fdatasync (beside r)",
            "r: randread 4K · QD 4 (beside w)",
            "w + r"
        ]
    );
    let ios = |r: &Value| r["ios"].as_u64().unwrap();
    assert_eq!(ios(&results[2]), ios(&results[0]) + ios(&results[1]));
    assert_eq!(results[2]["write"]["ios"], results[0]["write"]["ios"]);
    assert_eq!(results[2]["read"]["ios"], results[1]["read"]["ios"]);
    assert_eq!(results[2]["sync"]["count"], results[0]["sync"]["count"]);
    assert_eq!(results[2]["together"]["sum"], true);
    assert_eq!(
        results[2]["together"]["streams"],
        serde_json::json!(["w", "r"])
    );
}

/// What a stream cannot be given, refused before anything is written (exit 2, one line).
#[test]
fn streams_refuse_what_would_do_nothing_or_mean_another_thing() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec![
                "--rw",
                "write",
                "--stream",
                "a: --rw read",
                "--stream",
                "b: --rw read",
            ],
            "cannot be used with '--stream",
        ),
        (
            vec![
                "--stream",
                "a: --rw read --ramp 1s",
                "--stream",
                "b: --rw read",
            ],
            "--stream a: --ramp sets the whole run, not one stream",
        ),
        (
            vec!["--stream", "a: --rw read"],
            "one --stream is one workload",
        ),
        (
            vec!["--stream", "a: --rw read", "--stream", "a: --rw write"],
            "--stream a is named twice",
        ),
        (
            vec!["--stream", "--rw read", "--stream", "b: --rw read"],
            "give the stream a name",
        ),
        (
            vec![
                "--verify",
                "--stream",
                "a: --rw read",
                "--stream",
                "b: --rw write",
            ],
            "--verify does not go with --stream",
        ),
        (
            vec![
                "--stream",
                "a: --rw read --fsync 1",
                "--stream",
                "b: --rw read",
            ],
            "stream a: --fsync/--fdatasync with --rw read does nothing",
        ),
    ] {
        let mut argv = vec!["run", "--no-store"];
        argv.extend(&args);
        let out = iogauge(dir.path(), &argv);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}
