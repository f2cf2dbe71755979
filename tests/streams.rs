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
    let cases: Vec<(Vec<&str>, &str)> = vec![
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
    ];
    each_refused(dir.path(), &["run", "--no-store"], &cases);
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

/// A stream on a target of its own (`--stream '… --target PATH'`), ground truth by the kernel:
/// the data stream's device is held by blkio to 300 IOs a second (reads and writes), the WAL
/// stream's is not. The data stream runs at the throttle's rate; the WAL stream, on the other
/// device, runs far above it (on the throttled device it could not), and each device counted
/// the writes of the stream that ran on it. Both devices are in the sum's counters.
#[test]
fn a_stream_on_its_own_target_runs_on_that_device() {
    let Some((cg, data)) = throttle_rig("own-target") else {
        return;
    };
    let wal = RamLoop::new(64 << 20);
    cg.throttle(&data.dev, "read", 300);
    cg.throttle(&data.dev, "write", 300);
    let dir = tempfile::tempdir().unwrap();
    let out = cg.run_in(
        dir.path(),
        &format!(
            "run {} --allow-overwrite --no-store --json --size 32m --time 3s --stream 'wal: --rw write --bs 8k --fdatasync 1 --target {}' --stream 'data: --rw randread --bs 8k --threads 4'",
            data.dev.dev, wal.dev.dev
        ),
    );
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    let (w, d, sum) = (&results[0], &results[1], &results[2]);
    let iops = |r: &Value| f(&r["iops"]);
    // One throttle slice (100 ms) of 3 s either way.
    assert!(
        (iops(d) - 300.0).abs() <= 300.0 * 0.1,
        "the data stream at the throttle's 300/s: {d:#}"
    );
    assert!(
        iops(w) > 3.0 * 300.0,
        "the WAL stream on its own device, far above the throttle: {w:#}"
    );
    let device = |name: &str| {
        sum["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("{name} in the sum's devices: {sum:#}"))
            .clone()
    };
    let on_wal = device(wal.dev.name());
    let on_data = device(data.dev.name());
    let writes = w["write"]["ios"].as_u64().unwrap();
    assert!(f(&on_wal["writes"]) >= writes as f64, "{on_wal:#} {w:#}");
    assert!(f(&on_data["writes"]) < writes as f64 / 2.0, "{on_data:#}");
    // The run's stack is not the WAL's: its writes are judged against the devices they went
    // to, so no device finding calls them absorbed by the data device (as one did when the sum
    // was judged against the run's stack alone), and the WAL's own stack is recorded.
    assert!(
        findings_of(&doc, "absorbed").is_empty(),
        "{:#}",
        doc["findings"]
    );
    assert_eq!(
        sum["together"]["targets"].as_array().map(Vec::len),
        Some(2),
        "{sum:#}"
    );
    assert_eq!(doc["system"]["streams"][0]["path"], wal.dev.dev.as_str());
    assert!(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(&format!(
                "stream wal ran on its own target, {}",
                wal.dev.dev
            ))),
        "{:#}",
        doc["notes"]
    );
}

/// A stream's own target passes the run's gate: a device a mounted file system sits on is
/// refused, as are the run's own target again, one target for two streams, and
/// `--precondition` (which writes the run's target alone) — each before a byte is written.
#[test]
fn a_streams_own_target_is_checked_like_the_runs() {
    if !is_root() {
        return skip("needs root");
    }
    let fs = Fs::ext4(64 << 20, "rw");
    let dir = tempfile::tempdir().unwrap();
    let mounted = format!("b: --rw randwrite --target {}", fs.dev.dev);
    let mine = dir.path().join("one");
    let again = format!("b: --rw read --target {}", mine.display());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--stream", "a: --rw read", "--stream", mounted.as_str()],
            "mounted",
        ),
        (
            vec![
                mine.to_str().unwrap(),
                "--stream",
                "a: --rw read",
                "--stream",
                again.as_str(),
            ],
            "is the run's own target",
        ),
        (
            vec![
                "--stream",
                "a: --rw read --target /tmp/x",
                "--stream",
                "b: --rw read --target /tmp/./x",
            ],
            "is stream a's too",
        ),
        (
            vec![
                "--precondition",
                "--stream",
                "a: --rw read",
                "--stream",
                again.as_str(),
            ],
            "--precondition writes the run's target, not a stream's own target",
        ),
    ];
    each_refused(
        dir.path(),
        &["run", "--no-store", "--allow-overwrite", "--size", "8m"],
        &cases,
    );
}

/// `suite commit --stream-target wal=DEV`: every cell of the `wal` stream, alone and beside the
/// others, runs on the WAL's device, the data streams on the suite's target; each result names
/// its target and the devices counted what went to each.
#[test]
fn a_suites_stream_runs_on_its_own_target_alone_and_beside_the_others() {
    if !is_root() {
        return skip("needs root");
    }
    let (wal, data) = (RamLoop::new(64 << 20), RamLoop::new(64 << 20));
    let dir = tempfile::tempdir().unwrap();
    let target = format!("wal={}", wal.dev.dev);
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "commit",
            &data.dev.dev,
            "--allow-overwrite",
            "--cell-time",
            "300ms",
            "--stream-target",
            &target,
            "--no-store",
            "--json",
        ],
    );
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    let mut wal_cells = 0;
    for r in results {
        let name = r["name"].as_str().unwrap();
        let sum = r["together"]["sum"] == true;
        let on = r["target"]["path"].as_str().unwrap();
        match (name.starts_with("wal"), sum) {
            (_, true) => assert_eq!(
                r["together"]["targets"],
                serde_json::json!([wal.dev.dev, data.dev.dev]),
                "{r:#}"
            ),
            (true, false) => {
                wal_cells += 1;
                assert_eq!(on, wal.dev.dev, "{name}");
            }
            (false, false) => assert_eq!(on, data.dev.dev, "{name}"),
        }
    }
    assert_eq!(
        wal_cells, 3,
        "wal alone, beside reads, beside the checkpoint"
    );
    // The WAL alone: its writes were counted on its own device, none on the data's.
    let alone = &results[0];
    let devices: Vec<&str> = alone["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(devices, [wal.dev.name()], "{alone:#}");
    assert!(
        findings_of(&doc, "absorbed").is_empty(),
        "{:#}",
        doc["findings"]
    );

    // Named wrongly, twice, or without a path: refused before anything runs.
    for (given, says) in [
        (
            "walx=/tmp/x",
            "suite commit has no stream walx; its streams: wal, reads, checkpoint",
        ),
        ("wal", "give a stream's name and its target"),
    ] {
        let out = iogauge(
            dir.path(),
            &["suite", "commit", "--no-store", "--stream-target", given],
        );
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{given}: {err}");
        assert!(err.contains(says), "{given}: {err}");
    }
}

/// Each of `cases` (the words after `first`, and what the one-line error says) is refused with
/// exit 2 before anything is written in `dir`.
fn each_refused(dir: &std::path::Path, first: &[&str], cases: &[(Vec<&str>, &str)]) {
    for (args, says) in cases {
        let mut argv = first.to_vec();
        argv.extend(args);
        let out = iogauge(dir, &argv);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "nothing written"
    );
}

/// fio jobs that name different files run each on its own, at the same time as fio runs
/// them: a WAL writer on one RAM loop device beside a data reader on another. Each device's
/// kernel counters hold its job's bytes and none of the other's (on one shared device, the
/// near miss, the reader's bytes would be on the WAL's), and a verifying job with two files is
/// refused before a byte is written.
#[test]
fn fio_jobs_on_files_of_their_own_each_go_to_their_own_device() {
    if !is_root() {
        skip("needs root for loop devices");
        return;
    }
    let (wal, data) = (RamLoop::new(32 << 20), RamLoop::new(32 << 20));
    let dir = tempfile::tempdir().unwrap();
    let job = format!(
        "[global]\ndirect=1\nsize=16m\nruntime=1\ntime_based\n\n[wal]\nfilename={}\nrw=write\nbs=8k\nfdatasync=1\n\n[data]\nfilename={}\nrw=randread\nbs=4k\niodepth=4\nioengine=io_uring\n",
        wal.dev.dev, data.dev.dev
    );
    std::fs::write(dir.path().join("two.fio"), &job).unwrap();
    let (w0, d0) = (
        sectors_moved(wal.dev.name()),
        sectors_moved(data.dev.name()),
    );
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            "two.fio",
            "--allow-overwrite",
            "--no-store",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let (w1, d1) = (
        sectors_moved(wal.dev.name()),
        sectors_moved(data.dev.name()),
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by = |name: &str| {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"].as_str().unwrap().starts_with(name))
            .unwrap()
            .clone()
    };
    let (w, d) = (by("wal"), by("data"));
    let written = w["write"]["bytes"].as_u64().unwrap();
    let read = d["read"]["bytes"].as_u64().unwrap();
    assert!(written > 0 && read > 0, "{w:#} {d:#}");
    // Besides the jobs' IO, the gate looks for signatures on each target and udev probes a
    // device written and closed: some MiB, not the jobs' hundreds. An IO still in flight when
    // the clock stopped reached the device and is not in the job's count.
    let look = 16 << 20;
    assert!(read > 4 * look, "{d:#}");
    let (w_read, w_written, d_read) = (w1.0 - w0.0, w1.1 - w0.1, d1.0 - d0.0);
    assert!(
        (written..written + (64 << 10)).contains(&w_written),
        "{w_written} against {written}"
    );
    assert!(w_read < look, "no data read on the WAL device: {w_read}");
    assert!(
        (read..read + look).contains(&d_read),
        "{d_read} against {read}"
    );
    assert_eq!(d1.1 - d0.1, 0, "nothing written on the data device");
    // Verify follows one file's blocks: jobs on two files with verify (one after the other)
    // are refused, nothing written.
    let verifying = job
        .replace("[global]\n", "[global]\nverify=crc32c\n")
        .replace("[data]\n", "[data]\nstonewall\n");
    std::fs::write(dir.path().join("v.fio"), verifying).unwrap();
    let w2 = sectors_moved(wal.dev.name());
    let out = iogauge(
        dir.path(),
        &["fio", "v.fio", "--allow-overwrite", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("stamps and checks the blocks of one file per run"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(sectors_moved(wal.dev.name()).1, w2.1);
}
