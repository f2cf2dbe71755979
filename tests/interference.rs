//! The `interference` finding against the kernel's ground truth (issue 60): a WAL stream on a
//! RAM loop device beside eight random 64 KiB readers is held back, and it is named on that stream.
//! The near misses are unit tests (src/analysis/streams.rs): readers held by blkio to 200
//! reads a second were meant as the kernel-made one, and on a fresh-clone CI they still moved
//! the commits' median by 46% (p99 4.3×), so they are no negative. Judged on latencies that
//! another process's work on the CPU would move: in the quiet binary.

use serde_json::Value;
use std::path::Path;

use crate::common;
use common::*;

/// Commits alone, then beside eight random 64 KiB readers, 2 s each. (Beside 8 KiB readers
/// the commits' p99 rose 2.6–7× here, and in a fresh-clone CI under 2×, no finding: each
/// 64 KiB read holds the loop device's worker longer, and the p99 rose 4.0–4.4× in four runs.)
const WAL_SUITE: &str = "name = \"wal\"\ndescription = \"commits alone and beside reads\"\n\
[defaults]\ntime = \"2s\"\n\
[[group]]\ntitle = \"alone\"\nstream = \"wal\"\nrw = [\"write\"]\nbs = [\"8k\"]\nsync = \"fdatasync\"\nrange = \"16m\"\n\
[[group]]\ntitle = \"beside\"\nstream = \"wal\"\nrw = [\"write\"]\nbs = [\"8k\"]\nsync = \"fdatasync\"\nrange = \"16m\"\n\
[[group]]\ntitle = \"reads\"\nstream = \"reads\"\nwith_previous = true\nrw = [\"randread\"]\nbs = [\"64k\"]\nthreads = [8]\n";

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
fn commits_held_back_by_reads_are_named_on_their_stream() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("streams-interference") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();

    // Unthrottled, the readers take the device (and the loop device's CPU) from the commits.
    let doc = suite_doc(&cg, dir.path(), &ram.dev.dev);
    let found = interference(&doc);
    let lat: Vec<String> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}: sync {}", r["name"], r["sync"]["lat_ns"]))
        .collect();
    assert_eq!(found.len(), 1, "{found:?} {lat:#?}");
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
}
