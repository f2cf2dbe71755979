//! End-to-end tests of `--complete-batch auto`, the default: on io_uring with 8 or more IOs in
//! flight per thread, for a time, without a rate or syncs, each worker tries waiting for one
//! completion, for half and for all in flight before measuring, and waits for several only when
//! that moved 10% more IOs. The positive is kernel-made: on zram under strace every wait is a
//! system call that stops the thread for the tracer, so a wait per completion costs what the
//! device's work needs. The near miss is too: a
//! RAM-backed loop device held to 2,000 reads a second by a blkio throttle moves as many IOs
//! either way, so per-IO timing stays exact. The rules (who gets a trial, what is refused) run
//! on a small file in the test's own directory.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The tests that run IO take turns: the device tests keep both CPUs busy for their trials, and
/// a trial sharing the CPUs with another test's iogauge times the machine, not the way of
/// waiting (on zram the gain of waiting for all fell from about 1.3× to 1.05–1.10× that way).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The engine object of a document's only result.
fn engine(doc: &Value) -> &Value {
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{doc:#}");
    &results[0]["engine"]
}

/// zram at 32 in flight on each of 2 threads, with every `io_uring_enter` made dear: under
/// strace each system call stops the thread twice for the tracer, so waiting for each
/// completion (a call for each IO) moves a fraction of what waiting for half or all moves (about
/// 6× less here) and auto must wait for 16 or 32 (the two are close, and each thread chooses for
/// itself); the result and the summary say what it chose and why. Without the tracer the gain
/// on zram alone is about 1.2× on one machine and under 1.1× in one half of the trial on
/// another, which is the machine's answer, not the rule's: the tracer makes the cost the
/// rule is about large enough that any machine shows it.
#[test]
fn auto_batches_completions_when_each_wait_is_dear() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    needs_tool!("strace");
    let _turn = hold(&ONE_AT_A_TIME);
    let dir = tempfile::tempdir().unwrap();
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    let file = dir.path().join("run.json");
    let out = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "trace=io_uring_enter",
            BIN,
        ])
        .args(["run", &zram.dev(), "--rw", "randread", "--bs", "4k"])
        .args(["--iodepth", "32", "--threads", "2", "--time", "2s"])
        .args(["--no-store", "-o", file.to_str().unwrap()])
        .current_dir(dir.path())
        .env("IOGAUGE_DB", dir.path().join("results.db"))
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let e = engine(&doc);
    eprintln!("{} IOPS, engine: {e}", doc["results"][0]["iops"]);
    let trial = &e["complete_trial"];
    let one = trial["one"].as_u64().unwrap();
    assert!(one > 0, "{e:#}");
    assert!(
        trial["all"].as_u64().unwrap() > 2 * one,
        "the tracer makes each wait dear: {e:#}"
    );
    let batch = e["complete_batch"].as_u64().unwrap();
    assert!(batch == 16 || batch == 32, "{e:#}");
    assert!(
        text.contains(&format!(
            "completions reaped up to {batch} at a time, chosen: in a trial waiting for half of those in flight moved"
        )),
        "{text}"
    );
}

/// The near miss: a loop device held to 2,000 reads a second moves as many IOs waiting for
/// each of 16 as for all, so auto keeps waiting for each (and the summary says nothing).
/// Known weakness of the trial, not of this test: blk-throttle grants a whole 100 ms slice of
/// reads at once when a slice starts, and with the CPUs busy elsewhere that windfall can land
/// in a phase of waiting for all (466 against 544 reads seen), which then wins.
#[test]
fn auto_keeps_one_at_a_time_on_a_throttled_device() {
    let _quiet = quiet_turn(module_path!());
    let _turn = hold(&ONE_AT_A_TIME);
    let Some((cg, ram)) = throttle_rig("autobatch") else {
        return;
    };
    cg.throttle(&ram.dev, "read", 2000);
    let file = ram.dir.path().join("run.json");
    let out = Command::new("sh")
        .args([
            "-c",
            &cg.iogauge(&format!(
                "run {} --rw randread --bs 4k --iodepth 16 --time 2s --no-store -o {}",
                ram.dev.dev,
                file.display()
            )),
        ])
        .current_dir(ram.dir.path())
        .env("IOGAUGE_DB", ram.dir.path().join("results.db"))
        .env("IOGAUGE_RUN_DIR", own_run_dir(ram.dir.path()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let e = engine(&doc);
    eprintln!("{} IOPS, engine: {e}", doc["results"][0]["iops"]);
    // The trial ran (a loaded machine's throttle can leave a phase without a single read: the
    // counts are the device's to give), and kept waiting for each.
    let trial = &e["complete_trial"];
    let counted: u64 = ["one", "half", "all"]
        .iter()
        .map(|k| trial[k].as_u64().unwrap())
        .sum();
    assert!(counted > 0, "{e:#}");
    assert!(e.get("complete_batch").is_none(), "{e:#}");
    // The throttle held the device (unheld, this RAM-backed loop device moves many times that).
    let iops = f(&doc["results"][0]["read"]["iops"]);
    assert!(iops < 2500.0, "{iops} IOPS: {e:#}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("completions reaped"), "{text}");
}

/// A run on a small file in `dir` with `args` after the common ones; its document.
fn small_run(dir: &Path, args: &[&str]) -> Value {
    let common = [
        "run",
        "--size",
        "16m",
        "--time",
        "300ms",
        "--no-store",
        "--json",
    ];
    json_of(&iogauge(dir, &[&common[..], args].concat()))
}

/// Who gets a trial: a number given is kept as it is; too few in flight, psync or a rate get
/// one completion at a time and no trial; a default run deep enough has one.
#[test]
fn auto_tries_only_where_it_can_tell() {
    let _quiet = quiet_turn(module_path!());
    let _turn = hold(&ONE_AT_A_TIME);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let doc = small_run(d, &["--iodepth", "8", "--complete-batch", "8"]);
    let e = engine(&doc);
    assert_eq!(e["complete_batch"], 8, "{e:#}");
    assert!(e.get("complete_trial").is_none(), "{e:#}");
    // The default at the depth where a trial starts.
    let e = engine(&small_run(d, &["--iodepth", "8"])).clone();
    assert!(e["complete_trial"]["one"].as_u64().unwrap() > 0, "{e:#}");
    for args in [
        &["--iodepth", "4"][..],
        &["--iodepth", "4", "--complete-batch", "auto"],
        &[
            "--iodepth",
            "16",
            "--complete-batch",
            "auto",
            "--engine",
            "psync",
        ],
        &["--iodepth", "16", "--rate", "2k"],
    ] {
        let doc = small_run(d, args);
        let e = engine(&doc);
        assert!(e.get("complete_batch").is_none(), "{args:?}: {e:#}");
        assert!(e.get("complete_trial").is_none(), "{args:?}: {e:#}");
    }
}

/// Anything but auto or 1 to 4096 is refused with one line naming the option, exit 2.
#[test]
fn complete_batch_out_of_range_is_refused() {
    let _quiet = quiet_turn(module_path!());
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0", "foo", "4097"] {
        let out = iogauge(
            dir.path(),
            &["run", "--complete-batch", bad, "--dry-run", "--no-store"],
        );
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("--complete-batch") && err.contains("auto") && err.lines().count() == 1,
            "{bad}: {err}"
        );
    }
}

/// A fio job at iodepth=32 on zram gets auto's choice unless it names
/// iodepth_batch_complete_min, which is kept as it is.
#[test]
fn fio_jobs_get_auto_unless_they_name_a_batch() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let _turn = hold(&ONE_AT_A_TIME);
    let dir = tempfile::tempdir().unwrap();
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    for (extra, batch, auto) in [("", 0, true), ("iodepth_batch_complete_min=4\n", 4, false)] {
        let job = dir.path().join("zram.fio");
        std::fs::write(
            &job,
            format!(
                "[zram]\nfilename={}\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\n\
                 iodepth=32\nnumjobs=2\ngroup_reporting\ntime_based\nruntime=2s\n{extra}",
                zram.dev()
            ),
        )
        .unwrap();
        let doc = json_of(&iogauge(
            dir.path(),
            &["fio", job.to_str().unwrap(), "--json", "--no-store"],
        ));
        let e = engine(&doc);
        eprintln!("{extra:?}: {} IOPS, engine: {e}", doc["results"][0]["iops"]);
        // Auto chose by its trial: one at a time (no batch in the document), half or all of
        // the 32 in flight — which one is the machine's answer (CI's zram gained under 10% in
        // one half of the trial), what the job asked is the mapping's. A named batch as named.
        let chosen = e["complete_batch"].as_u64();
        match batch {
            0 => assert!(
                matches!(chosen, None | Some(16) | Some(32)),
                "{extra:?}: {e:#}"
            ),
            n => assert_eq!(chosen, Some(n), "{extra:?}: {e:#}"),
        }
        assert_eq!(e.get("complete_trial").is_some(), auto, "{extra:?}: {e:#}");
    }
}

/// A cell's repeats are timed one way (issue 42: the same command chose 16 once and 1 four
/// times, so repeats and comparisons mixed two ways of timing): the first repeat's trial
/// chooses, the others wait as it chose and run no trial of their own.
#[test]
fn repeats_wait_as_the_first_repeat_chose() {
    let _quiet = quiet_turn(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let doc = small_run(
        dir.path(),
        &["--rw", "randread", "--iodepth", "16", "--repeat", "3"],
    );
    let repeats = doc["results"][0]["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 3);
    held_as_the_first_chose(repeats);
}

/// The first of a cell's repeats ran the trial; the others ran none and waited as it chose.
fn held_as_the_first_chose(repeats: &[Value]) {
    assert!(repeats[0]["complete_trial"].is_object(), "{:#}", repeats[0]);
    let chosen = repeats[0]["complete_batch"].as_u64().unwrap();
    for r in &repeats[1..] {
        assert!(
            r.get("complete_trial").is_none(),
            "no trial of its own: {r:#}"
        );
        assert_eq!(r["complete_batch"].as_u64(), Some(chosen), "{r:#}");
    }
}

/// The SNIA PTS's rounds are a cell's repeats too: the first round's trial chooses, the later
/// rounds wait as it chose and run no trial of their own (which also cost 0.7 s a cell a round:
/// README's `suite snia-iops` spent most of its time in them).
#[test]
fn rounds_wait_as_the_first_round_chose() {
    let _quiet = quiet_turn(module_path!());
    let _turn = hold(&ONE_AT_A_TIME);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "suite",
        "snia-iops",
        "--sizes",
        "4k",
        "--read-pct",
        "0",
        "--max-rounds",
        "3",
        "--cell-time",
        "300ms",
        "--size",
        "16m",
        "--no-store",
        "--json",
    ];
    let doc = json_of(&iogauge(dir.path(), &args));
    let repeats = doc["results"][0]["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 3, "{doc:#}");
    held_as_the_first_chose(repeats);
}

/// The trial's two outcomes in one results database, and `compare` says their latencies were
/// timed two ways (issue 42): zram with every wait made dear by strace, where auto waits for
/// 16 or 32 (as `auto_batches_completions_when_each_wait_is_dear`), and a loop device held to
/// 2,000 reads a second, where it waits for each (as `auto_keeps_one_at_a_time_on_a_throttled_device`).
/// The same workload on both, so `compare` pairs them; their IOPS still compare.
#[test]
fn compare_flags_results_timed_two_ways() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    needs_tool!("strace");
    let _turn = hold(&ONE_AT_A_TIME);
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    let Some((cg, ram)) = throttle_rig("twoways") else {
        return;
    };
    cg.throttle(&ram.dev, "read", 2000);
    let dir = ram.dir.path();
    let db = dir.join("results.db");
    let workload = "--rw randread --bs 4k --iodepth 32 --time 2s";
    let batched = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            "trace=io_uring_enter",
            BIN,
        ])
        .args(["run", &zram.dev(), "--label", "batched"])
        .args(workload.split(' '))
        .current_dir(dir)
        .env("IOGAUGE_DB", &db)
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .output()
        .unwrap();
    assert!(batched.status.success(), "{}", stderr_of(&batched));
    let exact = Command::new("sh")
        .args([
            "-c",
            &cg.iogauge(&format!("run {} --label exact {workload}", ram.dev.dev)),
        ])
        .current_dir(dir)
        .env("IOGAUGE_DB", &db)
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .output()
        .unwrap();
    assert!(exact.status.success(), "{}", stderr_of(&exact));
    let batch_of = |label: &str| {
        let doc = json_of(&iogauge(dir, &["show", label, "--json"]));
        engine(&doc)["complete_batch"].as_u64().unwrap_or(1)
    };
    let (b, e) = (batch_of("batched"), batch_of("exact"));
    assert!(b == 16 || b == 32, "batched: {b}");
    assert_eq!(e, 1, "exact");
    let out = iogauge(dir, &["compare", "batched", "exact"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &stderr_of(&out);
    assert!(
        said.contains(&format!(
            "waited for up to {b} completions at a time, run 2 waited for each completion: their latencies were timed differently"
        )),
        "{said}"
    );
    // The near miss: a run compared with itself is timed one way.
    let same = iogauge(dir, &["compare", "exact", "exact"]);
    assert!(!String::from_utf8_lossy(&same.stdout).contains("timed differently"));
}

/// Exact timing (`--complete-batch 1`) with as many threads as CPUs, on zram, whose reads
/// io_uring's workers do: after its probe each thread's ring moves to one without
/// DEFER_TASKRUN and its waits look at the completion queue, and the result and the summary
/// say so. Kernel-made: zram's reads cannot be issued without blocking. The near miss is the
/// same run with a CPU spare (one thread fewer), where asking moved more at less CPU: the ring
/// stays as it was built.
#[test]
fn exact_timing_looks_for_completions_where_workers_do_the_io_and_no_cpu_is_spare() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let _turn = hold(&ONE_AT_A_TIME);
    // The machine's CPUs, all of which the test (not pinned) may use.
    let online = Command::new("getconf")
        .arg("_NPROCESSORS_ONLN")
        .output()
        .unwrap();
    let cpus: usize = String::from_utf8_lossy(&online.stdout)
        .trim()
        .parse()
        .unwrap();
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        usable, cpus,
        "the test runs pinned to fewer CPUs than the machine has"
    );
    if cpus < 2 {
        skip("the near miss needs a CPU spare beside one thread: two CPUs or more");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(zram) = Zram::new("256M") else {
        return;
    };
    let run = |threads: usize| {
        let threads = threads.to_string();
        let out = iogauge(
            dir.path(),
            &[
                "run",
                &zram.dev(),
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--iodepth",
                "8",
                "--threads",
                &threads,
                "--time",
                "1s",
                "--complete-batch",
                "1",
                "--no-store",
            ],
        );
        assert!(out.status.success(), "{}", stderr_of(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = "io_uring's workers did the IO, so waits looked for each completion";
    let all = run(cpus);
    let engine_line = all.lines().find(|l| l.contains("engine")).unwrap_or("");
    assert!(engine_line.contains(said), "{all}");
    assert!(!engine_line.contains("DEFER_TASKRUN"), "{all}");
    let spare = run(cpus - 1);
    let engine_line = spare.lines().find(|l| l.contains("engine")).unwrap_or("");
    assert!(!engine_line.contains(said), "{spare}");
    assert!(engine_line.contains("DEFER_TASKRUN"), "{spare}");
}
