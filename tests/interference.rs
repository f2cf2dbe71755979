//! The `interference` finding against the kernel's ground truth (issue 60): a WAL stream on a
//! RAM loop device beside eight random 1 MiB readers is held back, and it is named on that stream.
//! The loop device (without direct IO) serves one cgroup's requests one after another in one
//! kernel worker, so each commit waits behind the reads queued before it: the kernel makes the
//! wait. (With direct IO, Linux 6.18's loop driver serves them in parallel: no wait to see.)
//! The near miss is the kernel's too: the same readers held by blkio to 5 reads a second
//! leave the commits as they were alone, and nothing is named (on a loop device with direct IO
//! such readers still moved the commits' median by 46% in a fresh-clone CI: no negative there).
//! The other near misses are unit tests (src/analysis/streams.rs). Judged on latencies that
//! another process's work on the CPU would move: in the quiet binary.

use serde_json::Value;
use std::path::Path;

use crate::common;
use common::*;

/// Commits alone, then beside eight random 1 MiB readers, 2 s each. (Beside 8 KiB readers the
/// commits' p99 rose under 2× in a fresh-clone CI, beside 64 KiB ones 1.8× and the median
/// 1.4×: each read holds the loop device's worker for a copy of its size, and beside 1 MiB
/// reads the median rose 13× here, 29–33× beside two busy loops.)
const WAL_SUITE: &str = "name = \"wal\"\ndescription = \"commits alone and beside reads\"\n\
[defaults]\ntime = \"2s\"\n\
[[group]]\ntitle = \"alone\"\nstream = \"wal\"\nrw = [\"write\"]\nbs = [\"8k\"]\nsync = \"fdatasync\"\nrange = \"16m\"\n\
[[group]]\ntitle = \"beside\"\nstream = \"wal\"\nrw = [\"write\"]\nbs = [\"8k\"]\nsync = \"fdatasync\"\nrange = \"16m\"\n\
[[group]]\ntitle = \"reads\"\nstream = \"reads\"\nwith_previous = true\nrw = [\"randread\"]\nbs = [\"1m\"]\nthreads = [8]\n";

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
    let Some((cg, _)) = throttle_rig("streams-interference") else {
        return;
    };
    let ram = RamLoop::serial(64 << 20);
    let dir = tempfile::tempdir().unwrap();

    // Unthrottled, the readers take the device (and the loop device's CPU) from the commits.
    let doc = suite_doc(&cg, dir.path(), &ram.dev.dev);
    let found = interference(&doc);
    let lat: Vec<String> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        // With each result's IOs and the device's reads: the readers' requests are what the
        // finding weighs against the commits (src/analysis/streams.rs, could_hold).
        .map(|r| {
            format!(
                "{}: {} IOs, sync {}, device reads {}",
                r["name"], r["ios"], r["sync"]["lat_ns"], r["devices"][0]["reads"]
            )
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?} {lat:#?}");
    // Its write or its sync, whichever the reads held back more (here, in a cgroup of its own,
    // the write waits in the loop device's worker and the flush does not; in the root cgroup
    // the flush waited).
    assert!(
        found[0].starts_with("wal's IO latency beside reads is ")
            || found[0].starts_with("wal's sync latency beside reads is "),
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
    let p50 = |r: &Value| {
        r["lat_ns"]["p50"].as_f64().unwrap() + r["sync"]["lat_ns"]["p50"].as_f64().unwrap()
    };
    // The typical commit (its write and its sync) waited behind the reads: its median at least
    // doubled. (Not the p99: beside a busy machine's other work the tail alone is another
    // process's time slice.)
    assert!(
        p50(beside) >= 2.0 * p50(alone),
        "{} {}",
        p50(beside),
        p50(alone)
    );
    // The near miss the kernel makes: the same readers held by blkio to 5 reads a second, so
    // the worker copies for them well under 1% of the time. Held to 200 a second (a few percent
    // of the worker's time, more on a busy machine) they did hold the commits back: p99 3.7 ms
    // against 41 µs, a true finding. Here the commits stay as they were alone; nothing is named.
    cg.throttle(&ram.dev, "read", 5);
    let doc = suite_doc(&cg, dir.path(), &ram.dev.dev);
    let found = interference(&doc);
    let results = doc["results"].as_array().unwrap();
    // What the commits did beside the held readers, and what the device saw: the log of a run
    // where their rise was not the readers' (beside two busy loops, p50 17.9 µs alone and
    // 80.4 µs beside tens of reads) shows why nothing was named.
    for r in results {
        eprintln!(
            "{}: {} IOs, sync {}, devices {}",
            r["name"], r["ios"], r["sync"], r["devices"]
        );
    }
    assert!(
        found.is_empty(),
        "{found:?} {}",
        p50(&results[0]).max(1.0) / p50(&results[1]).max(1.0)
    );
}
