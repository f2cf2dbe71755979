//! Several workloads at once (issue 60): `run --stream`, each stream a result of its own beside
//! their sum, and what a stream cannot be given. The `interference` finding's ground truth
//! needs a quiet machine: tests/interference.rs.

use serde_json::Value;

use crate::common;
use common::*;

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

/// What the reader sees: the plan says the jobs run at once, the table has a row per job and
/// one for their sum, and fio's JSON has each job and no sum.
#[test]
fn the_table_and_fios_json_show_jobs_that_ran_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.fio");
    std::fs::write(
        &file,
        "[global]\nsize=8m\nruntime=300ms\ntime_based\nioengine=null\n[a]\nrw=randread\n[b]\nrw=randread\nbs=8k\n",
    )
    .unwrap();
    let json = dir.path().join("fio.json");
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            "--no-store",
            file.to_str().unwrap(),
            "-o",
            json.to_str().unwrap(),
            "--format",
            "fio-json",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", stderr_of(&out));
    assert!(text.contains("2 fio jobs, all at the same time"), "{text}");
    assert!(text.contains("\n  a + b "), "{text}");
    assert!(
        text.contains("jobs a, b run at the same time, as fio runs them"),
        "{text}"
    );
    let fio: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let names: Vec<&str> = fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
}
