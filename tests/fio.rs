//! End-to-end tests of `iogauge fio` (issue 26): job files run through the binary on a file in
//! the test's own directory, fio's JSON written next to iogauge's, what a job measures told
//! before it runs, and every refusal pointing at its line.

use serde_json::Value;
use std::path::Path;

use crate::common;
use common::*;

/// Tests that read the machine's disk counters take turns with the tests that move much data on
/// that disk: the counters are the device's, and another test's IO would read as this one's.
static DISK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn write_job(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The result named after `job` in iogauge's own document.
fn result<'a>(doc: &'a Value, job: &str) -> &'a Value {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"].as_str().unwrap().starts_with(&format!("{job}: ")))
        .unwrap_or_else(|| panic!("no result for job {job} in {doc}"))
}

fn fio_job<'a>(fio: &'a Value, job: &str) -> &'a Value {
    fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == job)
        .unwrap_or_else(|| panic!("no job {job} in {fio}"))
}

#[test]
fn global_and_two_jobs_run_and_write_fios_json() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("data.bin");
    let job = write_job(
        dir.path(),
        "two.fio",
        &format!(
            "; [global] is inherited by both jobs\n[global]\nioengine=io_uring\ndirect=1\nsize=16m\nruntime=500ms\ntime_based\nfilename={}\n\n[seq-read]\nrw=read\nbs=1m\niodepth=8\n\n[mixed]\nstonewall\nrw=randrw\nrwmixread=70\nbs=4k\nnumjobs=2\niodepth=4\ngroup_reporting\n",
            data.display()
        ),
    );
    let fio_out = dir.path().join("fio.json");
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            &job,
            "--json",
            "--no-store",
            "-o",
            fio_out.to_str().unwrap(),
            "--format",
            "fio-json",
        ],
    );
    let doc = json_of(&out);
    assert_eq!(doc["results"].as_array().unwrap().len(), 2);
    let seq = result(&doc, "seq-read");
    let w = &seq["workload"];
    assert_eq!(
        (&w["rw"], &w["bs"], &w["threads"], &w["iodepth"]),
        (
            &Value::from("read"),
            &Value::from(1 << 20),
            &Value::from(1),
            &Value::from(8)
        )
    );
    assert_eq!(w["engine"], "io_uring");
    assert_eq!(w["direct"], true);
    assert_eq!(f(&w["time_s"]), 0.5, "runtime=500ms with time_based");
    let mixed = result(&doc, "mixed");
    let w = &mixed["workload"];
    assert_eq!(w["rw"], "randrw");
    assert_eq!(w["mix_read_pct"], 70, "rwmixread=70");
    assert_eq!(
        (&w["threads"], &w["iodepth"]),
        (&Value::from(2), &Value::from(4))
    );
    assert!(f(&mixed["read"]["ios"]) > 0.0 && f(&mixed["write"]["ios"]) > 0.0);
    assert!(!data.exists(), "the created file is removed");

    let fio: Value = serde_json::from_str(&std::fs::read_to_string(&fio_out).unwrap()).unwrap();
    assert!(fio["fio version"].as_str().unwrap().starts_with("iogauge-"));
    let j = fio_job(&fio, "seq-read");
    assert_eq!(j["job options"]["rw"], "read");
    assert_eq!(j["job options"]["iodepth"], "8");
    let r = &j["read"];
    assert_eq!(f(&r["io_bytes"]), f(&seq["bytes"]));
    assert_eq!(f(&r["total_ios"]), f(&seq["ios"]));
    assert_eq!(f(&r["iops"]), f(&seq["iops"]));
    assert_eq!(f(&r["bw_bytes"]), f(&seq["bw_bytes"]).round());
    assert_eq!(
        f(&r["bw"]),
        (f(&seq["bw_bytes"]) / 1024.0).round(),
        "bw is KiB/s"
    );
    assert_eq!(
        f(&r["runtime"]),
        (f(&seq["runtime_s"]) * 1000.0).round(),
        "runtime is ms"
    );
    for lat in ["clat_ns", "lat_ns"] {
        for key in ["min", "max", "mean", "stddev"] {
            assert!(r[lat][key].is_number(), "{lat}.{key}");
        }
    }
    let p = &r["clat_ns"]["percentile"];
    assert_eq!(f(&p["50.000000"]), f(&seq["lat_ns"]["p50"]));
    assert_eq!(f(&p["99.000000"]), f(&seq["lat_ns"]["p99"]));
    assert!(f(&p["99.990000"]) >= f(&p["1.000000"]));
    assert_eq!(
        f(&j["write"]["total_ios"]),
        0.0,
        "a read job writes nothing"
    );
    assert!(j["usr_cpu"].is_number() && j["sys_cpu"].is_number());
    let m = fio_job(&fio, "mixed");
    let ios = f(&m["read"]["total_ios"]) + f(&m["write"]["total_ios"]);
    assert_eq!(ios, f(&mixed["ios"]), "the directions add up to the job");
    assert_eq!(m["job options"]["rwmixread"], "70");
}

/// KDiskMark's "SEQ1M Q8T1" read test as the job file its command line amounts to, unchanged
/// but for the file, the size and a shorter runtime.
#[test]
fn kdiskmark_seq1m_q8t1_runs_unchanged() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("kdm.bin");
    let job = write_job(
        dir.path(),
        "kdiskmark.fio",
        &format!(
            "[global]\nioengine=libaio\nrandrepeat=0\nrefill_buffers\nend_fsync=1\ndirect=1\nrwmixread=70\nfilename={}\nsize=16m\nzero_buffers=0\nloops=1\n\n[SEQ1MQ8T1]\nbs=1m\nruntime=1\nrw=read\niodepth=8\nnumjobs=1\n",
            data.display()
        ),
    );
    let out = iogauge(dir.path(), &["fio", &job, "--json", "--no-store"]);
    let doc = json_of(&out);
    let r = result(&doc, "SEQ1MQ8T1");
    assert_eq!(r["workload"]["iodepth"], 8);
    assert_eq!(r["workload"]["bs"], 1 << 20);
    assert!(f(&r["ios"]) > 0.0);
    let notes: Vec<&str> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let said = |what: &str| notes.iter().any(|n| n.contains(what));
    assert!(said("runtime=1 without time_based"), "{notes:?}");
    assert!(said("randrepeat=0"), "{notes:?}");
    assert!(
        said("ioengine=libaio (job SEQ1MQ8T1) runs on io_uring"),
        "{notes:?}"
    );
    assert!(
        !said("end_fsync"),
        "a read job's end_fsync changes nothing: {notes:?}"
    );
}

/// A write-only job on a file fio would create is told that fio would not write it first; the
/// same job on a file already there, as large as it needs, is not (fio writes over it as is).
#[test]
fn a_write_only_job_on_a_new_file_is_told_fio_leaves_it_unwritten() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let old = dir.path().join("old.bin");
    std::fs::write(&old, vec![7u8; 1 << 20]).unwrap();
    let job = |file: &str| {
        write_job(
            dir.path(),
            "w.fio",
            &format!(
                "[w]\nfilename={}\nsize=1m\nrw=randwrite\ndirect=1\ntime_based\nruntime=1\n",
                dir.path().join(file).display()
            ),
        )
    };
    let new = job("new.bin");
    let out = iogauge(dir.path(), &["fio", &new, "--dry-run"]);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        told(&err, "w.fio:4:", "rw=randwrite without overwrite=1 (job w)"),
        "{err}"
    );
    let there = job("old.bin");
    let out = iogauge(
        dir.path(),
        &["fio", "--allow-overwrite", &there, "--dry-run"],
    );
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("without overwrite=1"), "{err}");
    // Clones offset_increment apart need the file to the end of the last one's region: two
    // halves of the 1 MiB file are there; a second clone starting at 1 MiB is not (fio would
    // make the file anew; iogauge, which never grows a file it did not make, refuses the job
    // after its notes).
    for (increment, told_it) in [("512k", false), ("1m", true)] {
        let clones = write_job(
            dir.path(),
            "w.fio",
            &format!(
                "[w]\nfilename={}\nsize=512k\nnumjobs=2\noffset_increment={increment}\nrw=write\ndirect=1\ntime_based\nruntime=1\n",
                old.display()
            ),
        );
        let out = iogauge(
            dir.path(),
            &["fio", "--allow-overwrite", &clones, "--dry-run"],
        );
        let err = stderr_of(&out);
        assert_eq!(out.status.success(), !told_it, "{increment}: {err}");
        assert_eq!(
            err.contains("without overwrite=1"),
            told_it,
            "{increment}: {err}"
        );
    }
}

/// Lines of stderr naming `at` and saying `what`.
fn told(err: &str, at: &str, what: &str) -> bool {
    err.lines().any(|l| l.contains(at) && l.contains(what))
}

#[test]
fn dry_run_says_what_the_job_measures() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let job = write_job(
        dir.path(),
        "naive.fio",
        "[global]\nsize=64m\nruntime=30\nioengine=psync\n\n[cached]\nrw=randread\niodepth=32\nnumjobs=4\n\n[next]\nrw=randwrite\ndirect=1\ntime_based\noverwrite=1\n",
    );
    let out = iogauge(dir.path(), &["fio", &job, "--dry-run"]);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains("2 cells"), "{plan}");
    for (at, what) in [
        ("naive.fio:3:", "runtime=30 without time_based (job cached)"),
        ("naive.fio:8:", "iodepth=32 with ioengine=psync"),
        ("naive.fio:6:", "this measures the page cache"),
        ("naive.fio:2:", "size=64m with numjobs=4"),
        ("naive.fio:9:", "numjobs=4 without group_reporting"),
        (
            "",
            "jobs cached, next run at the same time, as fio runs them",
        ),
    ] {
        assert!(told(&err, at, what), "{at} {what}:\n{err}");
    }
    // The near misses: the direct, time_based job draws none of its own notes.
    assert!(!told(&err, "", "next)"), "{err}");
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".iogauge-run")
        .collect();
    assert_eq!(left, ["naive.fio"], "a dry run writes nothing");

    let aio = write_job(
        dir.path(),
        "aio.fio",
        "[aio]\nrw=randread\nioengine=libaio\niodepth=16\nsize=32m\n",
    );
    let out = iogauge(dir.path(), &["fio", &aio, "--dry-run"]);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        told(
            &err,
            "aio.fio:3:",
            "without direct=1 Linux completes libaio IO synchronously"
        ),
        "{err}"
    );
}

#[test]
fn unsupported_options_are_refused_with_file_line_and_why() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for (text, at, why) in [
        (
            "[global]\nsize=16m\n\n[a]\nrw=randwrite\nbssplit=4k/50:64k/50\nverify=crc32c\n",
            "x.fio:7: verify with a block-size mix (bssplit=4k/50:64k/50)",
            "tracks one block size",
        ),
        (
            "[a]\nrw=randread\nbuffer_compress_percentage=50\n",
            "x.fio:3: buffer_compress_percentage",
            "writes nothing",
        ),
        ("[a]\nfrob=1\n", "x.fio:2: frob", "does not support"),
        (
            "[a]\nsize=$nope\n",
            "x.fio:2:",
            "$nope is not one of fio's keywords",
        ),
        ("[a]\nbs=(4096/0)\n", "x.fio:2:", "division by zero"),
        (
            "[a]\nsize=1k\n",
            "x.fio:2: size=1k",
            "smaller than one 4KiB block",
        ),
        ("[a]\ntime_based\n", "x.fio:2: time_based", "give runtime="),
        (
            "[a]\nsize=1m\nnrfiles=4\nfile_service_type=zipf:1.1\n",
            "x.fio:4: file_service_type=zipf:1.1",
            "skewed distribution",
        ),
        (
            "[a]\nfilename=/dev/null\nsize=1m\nnrfiles=4\n",
            "x.fio:4: nrfiles=4 with filename=/dev/null",
            "give directory=",
        ),
        (
            "[a]\nnrfiles=2\nrw=write\n",
            "x.fio:2: nrfiles=2 without size=",
            "e.g. size=1g",
        ),
        (
            "[a]\nramp_time=1\n[b]\nramp_time=2\n",
            "x.fio:4: job b sets ramp_time differently from job a (x.fio:2)",
            "one ramp_time per run",
        ),
    ] {
        let job = write_job(dir.path(), "x.fio", text);
        let out = iogauge(dir.path(), &["fio", "x.fio", "--no-store"]);
        assert_eq!(out.status.code(), Some(2), "{text:?}");
        let err = stderr_of(&out);
        let line = err
            .lines()
            .find(|l| l.starts_with("iogauge: error: "))
            .unwrap_or_else(|| panic!("{err}"));
        assert!(line.contains(at) && line.contains(why), "{text:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        let _ = job;
    }
}

#[test]
fn writing_to_an_existing_file_needs_allow_overwrite() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("precious.bin");
    std::fs::write(&data, vec![7u8; 4 << 20]).unwrap();
    let job = write_job(
        dir.path(),
        "w.fio",
        &format!(
            "[w]\nfilename={}\nrw=randwrite\nioengine=null\nruntime=200ms\ntime_based\n",
            data.display()
        ),
    );
    let out = iogauge(dir.path(), &["fio", &job, "--no-store"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--allow-overwrite"));
    assert_eq!(
        std::fs::read(&data).unwrap(),
        vec![7u8; 4 << 20],
        "untouched"
    );
    let out = iogauge(dir.path(), &["fio", &job, "--json", "--allow-overwrite"]);
    let doc = json_of(&out);
    assert!(f(&doc["results"][0]["ios"]) > 0.0);
    // A stored run exports as fio's JSON too, named by its job.
    let out = iogauge(dir.path(), &["export", "last", "--format", "fio-json"]);
    let fio = json_of(&out);
    let j = fio_job(&fio, "w");
    assert_eq!(f(&j["write"]["total_ios"]), f(&doc["results"][0]["ios"]));
    assert_eq!(j["job options"]["rw"], "randwrite");
}

/// A cloud provider's published command line (this one is the shape of Google Cloud's and
/// Azure's disk tests), unchanged but for the file, size and runtime; the null engine keeps it
/// quick, since what is tested is the reading of the options.
#[test]
fn a_published_fio_command_line_runs_as_typed() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("cloud.bin");
    let file = format!("--filename={}", data.display());
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            "--json",
            "--no-store",
            "--",
            "--name=write_iops_test",
            &file,
            "--filesize=8m",
            "--time_based",
            "--ramp_time=100ms",
            "--runtime=300ms",
            "--ioengine=null",
            "--direct=1",
            "--verify=0",
            "--bs=4K",
            "--iodepth=64",
            "--rw=randwrite",
            "--group_reporting=1",
            "--iodepth_batch_complete_max=8",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("fio option 14: iodepth_batch_complete_max"),
        "refused at its place: {err}"
    );
    // With the cap at the queue, as the published command has it, the same command runs.
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            "--json",
            "--no-store",
            "--",
            "--name=write_iops_test",
            &file,
            "--filesize=8m",
            "--time_based",
            "--ramp_time=100ms",
            "--runtime=300ms",
            "--ioengine=null",
            "--direct=1",
            "--bs=4K",
            "--iodepth=64",
            "--rw=randwrite",
            "--group_reporting=1",
            "--iodepth_batch_submit=64",
            "--iodepth_batch_complete_max=64",
        ],
    );
    let doc = json_of(&out);
    let r = result(&doc, "write_iops_test");
    let w = &r["workload"];
    assert_eq!(
        (&w["rw"], &w["bs"], &w["iodepth"]),
        (
            &Value::from("randwrite"),
            &Value::from(4096),
            &Value::from(64)
        )
    );
    assert_eq!(f(&w["ramp_s"]), 0.1);
    assert_eq!(f(&w["time_s"]), 0.3);
    assert_eq!(w["engine"], "null");
}

/// The published jobs shipped as examples are read unchanged: each plans without a refusal.
#[test]
fn the_example_job_files_plan_unchanged() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fio");
    let mut seen = 0;
    for e in std::fs::read_dir(&examples).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "fio") {
            continue;
        }
        seen += 1;
        let out = std::process::Command::new(BIN)
            .args(["fio", path.to_str().unwrap(), "--dry-run"])
            .current_dir(dir.path())
            .env("IOGAUGE_DB", dir.path().join("results.db"))
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
            .env("TARGET", dir.path().join("t.bin"))
            .env("TARGETDIR", dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            stderr_of(&out)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("plan: suite fio"));
    }
    assert!(seen >= 3, "the KDiskMark and cloud examples are there");
}

/// `verify=` and `rate=` in a job file run as iogauge's own: every written block read back
/// after the job, and the IOs paced at rate ÷ bs (issue 26).
#[test]
fn verify_and_rate_in_a_job_run_as_iogauges_own() {
    let dir = tempfile::tempdir().unwrap();
    write_job(
        dir.path(),
        "v.fio",
        "[global]\nioengine=io_uring\ndirect=1\nsize=16m\nruntime=1\ntime_based\n\n[w]\nrw=randwrite\nbs=4k\nverify=md5\nrate=4m\n",
    );
    let out = iogauge(dir.path(), &["fio", "v.fio", "--no-store", "--json"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    let v = &r["verify"];
    assert!(v["written_blocks"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["pass_checks"], v["written_blocks"], "{v}");
    // 4 MiB/s of 4 KiB blocks: 1,024 IOs a second, paced: never faster. A busy machine can
    // make it slower (one IO in flight, each late on a loaded disk); the run then says so.
    assert_eq!(r["workload"]["rate_iops"].as_f64(), Some(1024.0), "{r:#}");
    let iops = r["iops"].as_f64().unwrap();
    assert!(iops <= 1024.0 * 1.02, "{iops}");
    let short = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "rate");
    assert_eq!(short, iops < 1024.0 * 0.98, "{iops}: {:#}", doc["findings"]);
    // Short of the pace only because each IO took that long (with one in flight, the IOs' own
    // time from submission to completion filled most of the run), or because the machine's
    // other work kept the threads from a CPU; not because the pacer held back, which leaves
    // the device idle most of the time. On a loaded disk in a fresh-clone CI run, 505 IOPS of
    // 1.55 ms each filled 78%: the thread's own turn between a completion and the next
    // submission (a wake-up, the block's stamp) stretches with the load too. The fill is held
    // against the time the run was behind its pace, not all of it: the other tests' writes
    // can load the disk halfway through, after a first half on pace that left it idle by
    // design (103 IOs a tenth of a second, then 69, 33, 29: 688 IOPS at 0.92 ms filled 63%).
    if iops < 1024.0 * 0.95 {
        let service_ns = r["service_lat_ns"]["mean"].as_f64().unwrap();
        let bin_s = r["fine"]["bin_s"].as_f64().unwrap();
        let behind_s = r["fine"]["ios"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_f64);
        let behind_s = behind_s.filter(|&n| n < 0.95 * 1024.0 * bin_s).count() as f64 * bin_s;
        assert!(
            service_ns * iops / 1e9 >= 0.7 * behind_s || short_for_want_of_a_cpu(r, 1024.0),
            "{iops} IOPS at {service_ns} ns each, the threads' CPU {:#}: the pacer, not the disk or the machine, held it back",
            r["fine"]
        );
    }
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("verify=md5") && notes.contains("rate=4m"),
        "{notes}"
    );
}

/// A rate below one IO a second (`1mbs_clients.fio`'s 1,250 B/s of 4 KiB reads): four reads at
/// 2 KiB/s are paced two seconds apart, where unpaced they take microseconds.
#[test]
fn a_rate_below_one_io_a_second_spaces_the_ios_seconds_apart() {
    let dir = tempfile::tempdir().unwrap();
    write_job(
        dir.path(),
        "slow.fio",
        "[slow]\nioengine=psync\nrw=read\nbs=4k\nsize=16k\nrate=2k\n",
    );
    let out = iogauge(dir.path(), &["fio", "slow.fio", "--no-store", "--json"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["workload"]["rate_iops"].as_f64(), Some(0.5), "{r:#}");
    assert_eq!(r["ios"], 4);
    let iops = r["iops"].as_f64().unwrap();
    assert!((0.4..=1.0).contains(&iops), "{iops} IOPS");
}

/// fio's backwards-read.fio (`rw=read:-8k` of 4 KiB blocks) runs: named as the job wrote it,
/// its fio-json job options the same, the file's size read once.
#[test]
fn a_negative_skip_reads_backwards_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    write_job(
        dir.path(),
        "b.fio",
        "[backwards-read]\nbs=4k\nrw=read:-8k\ndirect=1\nsize=4m\n",
    );
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            "b.fio",
            "--no-store",
            "--format",
            "fio-json",
            "-o",
            "f.json",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = result(&doc, "backwards-read");
    assert!(
        r["name"].as_str().unwrap().contains("read:-8K"),
        "{}",
        r["name"]
    );
    assert_eq!(r["read"]["bytes"], 4 << 20);
    let fio: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("f.json")).unwrap()).unwrap();
    assert_eq!(
        fio_job(&fio, "backwards-read")["job options"]["rw"],
        "read:-8192"
    );
}

/// `size=50%` of an existing file: the job moves half of it, in whole blocks; with no file to
/// take a share of, it is refused at its line (issue 26).
#[test]
fn size_as_a_share_of_the_named_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), vec![7u8; 16 << 20]).unwrap();
    write_job(
        dir.path(),
        "half.fio",
        "[a]\nfilename=f\nrw=read\nbs=4k\ndirect=1\nsize=50%\n",
    );
    let out = iogauge(dir.path(), &["fio", "half.fio", "--no-store", "--json"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["bytes"].as_u64().unwrap(), 8 << 20);
    write_job(dir.path(), "none.fio", "[a]\nrw=read\nsize=50%\n");
    let out = iogauge(dir.path(), &["fio", "none.fio", "--no-store"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("none.fio:3: size=50% is a share"),
        "{}",
        stderr_of(&out)
    );
}

/// `ss=` (fio's steady-state stop) runs as --until-stable: the job stops once its IOPS are
/// known well enough, before its runtime, and a note says how the rules differ (issue 26). The
/// job is paced (rate_iops) so its IOPS are steady whatever else the machine does.
#[test]
fn steady_state_jobs_stop_when_stable() {
    let dir = tempfile::tempdir().unwrap();
    write_job(
        dir.path(),
        "ss.fio",
        "[a]\nioengine=null\nrw=randread\nbs=4k\nsize=16m\nruntime=60\ntime_based\nrate_iops=2000\nss=iops:5%\nss_dur=10\n",
    );
    let out = iogauge(dir.path(), &["fio", "ss.fio", "--no-store", "--json"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = doc["results"][0]["runtime_s"].as_f64().unwrap();
    assert!(t < 60.0, "ran the whole runtime: {t} s");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("ss=iops:5%") && notes.contains("--until-stable"),
        "{notes}"
    );
}

/// Bytes per IO of a result: the mean IO size it measured.
fn bytes_per_io(r: &Value) -> f64 {
    f(&r["bytes"]) / f(&r["ios"])
}

// Issue 26: a bssplit job issues both sizes, counts each IO's own bytes, and the device sees
// the same mix (its average request size), so the numbers are the mix's, not one size's.
#[test]
fn a_bssplit_job_issues_its_mix_and_the_device_sees_it() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("data.bin");
    let job = |target: &str| {
        format!(
            "[split]\nfilename={target}\nsize=32m\nrw=randread\nbssplit=4k/50:64k/50\ndirect=1\nioengine=io_uring\niodepth=8\nruntime=300ms\ntime_based\n"
        )
    };
    let file_job = write_job(dir.path(), "split.fio", &job(data.to_str().unwrap()));
    let out = iogauge(dir.path(), &["fio", &file_job, "--json", "--no-store"]);
    let doc = json_of(&out);
    let r = result(&doc, "split");
    let mix = &r["workload"]["bs_mix"]["read"];
    assert_eq!(mix[0]["bs"], 4096, "{mix}");
    assert_eq!(mix[1]["bs"], 65536, "{mix}");
    assert_eq!(r["workload"]["bs"], 4096, "bs is the smallest size");
    let per_io = bytes_per_io(r);
    assert!(
        f(&r["ios"]) > 100.0 && (4096.0..=65536.0).contains(&per_io),
        "{} IOs of {per_io} bytes on average",
        r["ios"]
    );
    assert!(r["name"].as_str().unwrap().contains("4K/50:64K/50"));

    // On a loop device the block layer's own counters tell the mix's mean, 34,816 bytes.
    if !is_root() {
        return skip("the device half needs root (a loop device)");
    }
    let ram = RamLoop::new(64 << 20);
    let dev_job = write_job(dir.path(), "split-dev.fio", &job(&ram.dev.dev));
    let out = iogauge(
        dir.path(),
        &["fio", "--allow-overwrite", &dev_job, "--json", "--no-store"],
    );
    let doc = json_of(&out);
    let r = result(&doc, "split");
    let mean = (4096.0 + 65536.0) / 2.0;
    let per_io = bytes_per_io(r);
    assert!(
        (per_io - mean).abs() < mean * 0.1,
        "iogauge counted {per_io} bytes per IO, the mix's mean is {mean}"
    );
    let dev = r["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == ram.dev.name())
        .unwrap_or_else(|| panic!("{} not among the devices: {}", ram.dev.name(), r["devices"]));
    let avg = f(&dev["avg_read_request_bytes"]);
    assert!(
        (avg - mean).abs() < mean * 0.1,
        "the device's average read request is {avg} bytes, the mix's mean is {mean}"
    );
    assert!(f(&dev["reads"]) >= f(&r["ios"]) * 0.9, "{dev}");
}

// Issue 26: offset_increment places clone i at offset + i × increment; each clone writes its
// own region and nothing between. iogauge's write header (each block's offset in its first
// eight bytes) shows which blocks were written.
#[test]
fn offset_increment_writes_each_clones_region_only() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("data.bin");
    let (mib, regions) = (1u64 << 20, [0u64, 2, 4]);
    std::fs::File::create(&data)
        .unwrap()
        .set_len(5 * mib)
        .unwrap();
    let job = write_job(
        dir.path(),
        "inc.fio",
        &format!(
            "[inc]\nfilename={}\nrw=write\nbs=64k\nsize=1m\nnumjobs=3\noffset_increment=2m\ndirect=1\nioengine=io_uring\n",
            data.display()
        ),
    );
    let out = iogauge(
        dir.path(),
        &["fio", "--allow-overwrite", &job, "--json", "--no-store"],
    );
    let doc = json_of(&out);
    let r = result(&doc, "inc");
    assert_eq!(r["workload"]["offset_increment"], 2 * mib);
    assert_eq!(f(&r["bytes"]) as u64, 3 * mib, "size × numjobs");
    let bytes = std::fs::read(&data).unwrap();
    for (i, block) in bytes.chunks(64 << 10).enumerate() {
        let at = i as u64 * (64 << 10);
        let stamped = u64::from_le_bytes(block[..8].try_into().unwrap()) == at
            && block.iter().any(|&b| b != 0);
        let inside = regions.iter().any(|&r| at >= r * mib && at < (r + 1) * mib);
        assert_eq!(
            stamped, inside,
            "block at {at}: written {stamped}, in a region {inside}"
        );
    }
}

/// The files iogauge made in `dir` (its test files are named iogauge-test.*), sorted.
fn test_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("iogauge-test."))
        })
        .collect();
    v.sort();
    v
}

/// fio's nrfiles: size split over the files, and every file written (each block of each file
/// carries the in-file offset its write stamped, which the random fill never holds).
#[test]
fn nrfiles_spreads_the_job_over_its_own_files_and_writes_every_one() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let files_dir = dir.path().join("files");
    std::fs::create_dir(&files_dir).unwrap();
    let kib = 1u64 << 10;
    let job = write_job(
        dir.path(),
        "nr.fio",
        &format!(
            "[nr]\ndirectory={}\nnrfiles=4\nsize=1m\nrw=write\nbs=64k\ndirect=1\nioengine=io_uring\n",
            files_dir.display()
        ),
    );
    let fio_out = dir.path().join("fio.json");
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            &job,
            "--keep",
            "--json",
            "--no-store",
            "-o",
            fio_out.to_str().unwrap(),
            "--format",
            "fio-json",
        ],
    );
    let doc = json_of(&out);
    let fio: Value = serde_json::from_slice(&std::fs::read(&fio_out).unwrap()).unwrap();
    assert_eq!(fio_job(&fio, "nr")["job options"]["nrfiles"], "4");
    let r = result(&doc, "nr");
    assert_eq!(r["target"]["files"], 4, "{}", r["target"]);
    assert_eq!(r["target"]["range_bytes"], 256 * kib, "size / nrfiles each");
    assert_eq!(f(&r["bytes"]) as u64, 1024 * kib, "size is the job's total");
    let kept = test_files(&files_dir);
    assert_eq!(kept.len(), 4, "{kept:?}");
    for file in &kept {
        let bytes = std::fs::read(file).unwrap();
        assert_eq!(bytes.len() as u64, 256 * kib, "{}", file.display());
        for (i, block) in bytes.chunks(64 << 10).enumerate() {
            let at = i as u64 * (64 << 10);
            let offset = u64::from_le_bytes(block[..8].try_into().unwrap());
            let seq = u64::from_le_bytes(block[8..16].try_into().unwrap());
            assert!(
                offset == at && (1..=16).contains(&seq),
                "{} block at {at} was not written (header {offset}, {seq})",
                file.display()
            );
        }
    }
    for file in kept {
        std::fs::remove_file(file).unwrap();
    }

    // Without --keep every file is removed, and the summary says how the IO was spread.
    let random = write_job(
        dir.path(),
        "rand.fio",
        &format!(
            "[rand]\ndirectory={}\nnrfiles=4\nsize=1m\nrw=randwrite\nfile_service_type=random\nioengine=psync\n",
            files_dir.display()
        ),
    );
    let out = iogauge(dir.path(), &["fio", &random, "--no-store"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("4 files × 256 KiB"), "{text}");
    assert_eq!(test_files(&files_dir), Vec::<std::path::PathBuf>::new());
    assert_eq!(std::fs::read_dir(&files_dir).unwrap().count(), 0);
}

#[test]
fn an_unsupported_file_service_type_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let job = write_job(
        dir.path(),
        "fst.fio",
        "[global]\nsize=1m\n\n[a]\nrw=randwrite\nnrfiles=4\nfile_service_type=bogus\n",
    );
    let out = iogauge(dir.path(), &["fio", &job, "--no-store"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("fst.fio:7: file_service_type=bogus")
            && err.contains("roundrobin, sequential or random"),
        "{err}"
    );
    assert!(test_files(dir.path()).is_empty(), "nothing written");
}

/// The published jobs shipped as examples (KDiskMark's presets, Google Cloud's and Amazon EBS's
/// disk tests) run end to end: every job of every file gives a result with IO in it. Only the
/// sizes and times shrink (the test's file, a second a job); every other line is as published.
#[test]
fn the_example_job_files_run_end_to_end() {
    let _turn = hold(&DISK);
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fio");
    let mut ran = 0;
    for e in std::fs::read_dir(&examples).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "fio") {
            continue;
        }
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let small: String = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| match l.split('=').next().unwrap_or("") {
                "size" => "size=64m".to_string(),
                "runtime" => "runtime=1".to_string(),
                "ramp_time" => "ramp_time=0".to_string(),
                _ => l.to_string(),
            })
            .map(|l| l + "\n")
            .collect();
        let name = path.file_name().unwrap().to_str().unwrap();
        let job = write_job(dir.path(), name, &small);
        let out = std::process::Command::new(BIN)
            .args(["fio", &job, "--json", "--no-store"])
            .current_dir(dir.path())
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
            .env("TARGET", dir.path().join("t.bin"))
            .env("TARGETDIR", dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", stderr_of(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let sections = small
            .lines()
            .filter(|l| l.starts_with('[') && !l.starts_with("[global]"))
            .count();
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), sections, "{name}: a result per job");
        for r in results {
            assert!(f(&r["ios"]) > 0.0, "{name}: {} moved nothing", r["name"]);
        }
        ran += 1;
    }
    assert!(
        ran >= 4,
        "KDiskMark, Google Cloud's two and Amazon EBS's jobs"
    );
}

/// fio's JSON on stdout, as `fio --output-format=json` prints it: `--format fio-json` alone or
/// fio's own spelling, every message on stderr; a direction without IO has no percentiles, as
/// fio writes it; `--format csv` without a file is refused in one line.
#[test]
fn fio_json_goes_to_stdout_without_a_file() {
    let dir = tempfile::tempdir().unwrap();
    for flags in [&["--format", "fio-json"][..], &["--output-format=json"][..]] {
        let mut args = vec!["fio", "--no-store"];
        args.extend_from_slice(flags);
        args.extend([
            "--",
            "--name=r",
            "--rw=randread",
            "--size=8m",
            "--runtime=300ms",
            "--time_based",
        ]);
        let out = iogauge(dir.path(), &args);
        assert!(out.status.success(), "{flags:?}: {}", stderr_of(&out));
        let fio: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{flags:?}: stdout is not JSON ({e})"));
        let j = fio_job(&fio, "r");
        assert!(f(&j["read"]["total_ios"]) > 0.0);
        assert_eq!(
            j["read"]["clat_ns"]["percentile"]
                .as_object()
                .unwrap()
                .len(),
            17
        );
        assert_eq!(f(&j["write"]["total_ios"]), 0.0);
        assert!(
            j["write"]["clat_ns"].get("percentile").is_none(),
            "{}",
            j["write"]["clat_ns"]
        );
    }
    let out = iogauge(dir.path(), &["run", "--size", "8m", "--format", "csv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("give -o FILE"),
        "{}",
        stderr_of(&out)
    );
}

/// fio's invalidate=1, its default: a buffered job starts with the file's pages dropped from
/// the page cache, so a random-read job after a sequential one that cached the whole file reads
/// the device (fio-rand-read measured 75,154 IOPS from the cache against fio's 9,230). With
/// invalidate=0 the second job is served from memory: the device moves (almost) nothing.
#[test]
fn a_buffered_job_starts_with_the_file_dropped_from_the_cache() {
    needs_root!();
    let _cache = keeping_the_page_cache();
    // A file system of the test's own on a RAM-backed loop device: the device's counters are
    // then this job's alone, where other tests read and write the root disk beside it.
    let ram = RamLoop::new(128 << 20);
    sh("mkfs.ext4", &["-q", &ram.dev.dev]);
    let dir = tempfile::tempdir().unwrap();
    let _mounted = Mount::new(&ram.dev.dev, dir.path(), "");
    let device_bytes = |invalidate: &str| -> f64 {
        let job = write_job(
            dir.path(),
            "cached.fio",
            &format!(
                "[global]\nfilename=cached.bin\nsize=32m\n{invalidate}\n[seq]\nrw=read\nbs=1m\n\
                 [rand]\nstonewall\nrw=randread\nbs=4k\nruntime=1\ntime_based\n"
            ),
        );
        let doc = json_of(&iogauge(dir.path(), &["fio", &job, "--json", "--no-store"]));
        doc["results"][1]["devices"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["read_bytes"].as_f64())
            .fold(0.0, f64::max)
    };
    let dropped = device_bytes("");
    let kept = device_bytes("invalidate=0");
    eprintln!("device read {dropped} bytes after the drop, {kept} without");
    assert!(
        dropped >= 1048576.0,
        "the random reads found the file cached: the device read {dropped} bytes"
    );
    assert!(
        kept < dropped / 4.0,
        "with invalidate=0 the cache served them: {kept} against {dropped} bytes"
    );
}

/// A null-engine job reaches no cache (issue 40: it got a page-cache note and a cache warning):
/// it is told that no IO reached the target, and nothing about caches.
#[test]
fn a_null_engine_job_gets_no_cache_note_or_warning() {
    let dir = tempfile::tempdir().unwrap();
    let job = write_job(
        dir.path(),
        "null.fio",
        "[n]\nioengine=null\nrw=randread\nsize=16m\nruntime=300ms\ntime_based\n",
    );
    let out = iogauge(dir.path(), &["fio", &job, "--no-store"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr_of(&out)
    );
    assert!(
        said.contains("null engine: no IO reached the target"),
        "{said}"
    );
    assert!(!said.contains("page cache"), "{said}");
    assert!(!said.contains("cache below the target"), "{said}");
    assert!(!said.contains(" cache "), "{said}");
}

/// Jobs with the options of ten of fio's own examples (fio-rand-read, fio-seq-write,
/// fio-rand-RW, ssd-test, fio-seq-read with clones, kdiskmark's presets, psync with a depth,
/// io_uring, rw=randread:N, rw=write:skip), run by fio itself on ext4 and planned by iogauge:
/// the same jobs, clones, directions, block sizes and depths. fio's side is what it did (its
/// JSON: each clone, the bytes and IOs of each direction, the depths it reached), not what it
/// was told.
#[test]
fn the_cells_planned_are_the_ones_fio_runs() {
    if !is_root() || !have("fio") {
        skip("needs root (an ext4 loop device for O_DIRECT) and fio (apt-get install fio)");
        return;
    }
    // 32 MiB a file: enough IOs of 1 MiB for a depth of 8 to be reached.
    let fs = Fs::ext4(256 << 20, "");
    let d = fs.path().display().to_string();
    // Each file's own test file (FILE, named below), new when iogauge plans it.
    let g = |engine: &str| {
        format!("[global]\nioengine={engine}\ndirect=1\nsize=32m\nfilename={d}/FILE\n")
    };
    let files: Vec<(&str, String)> = vec![
        ("fio-rand-read", g("libaio") + "[rand-read]\nrw=randread\nbs=4k\niodepth=16\n"),
        ("fio-seq-write", g("libaio") + "[seq-write]\nrw=write\nbs=256k\niodepth=8\n"),
        (
            "fio-rand-RW",
            g("libaio") + "[rand-rw]\nrw=randrw\nrwmixread=60\nbs=4k\niodepth=16\n",
        ),
        (
            "ssd-test",
            g("libaio")
                + "bs=4k\niodepth=4\n[seq-read]\nrw=read\nstonewall\n[rand-read]\nrw=randread\nstonewall\n\
                   [seq-write]\nrw=write\nstonewall\n[rand-write]\nrw=randwrite\nstonewall\n",
        ),
        ("fio-seq-read", g("psync") + "[seq-read]\nrw=read\nbs=256k\nnumjobs=4\n"),
        (
            "kdiskmark",
            g("libaio")
                + "[seq1m-q8t1-read]\nrw=read\nbs=1m\niodepth=8\nstonewall\n\
                   [seq1m-q1t1-write]\nrw=write\nbs=1m\niodepth=1\nstonewall\n\
                   [rnd4k-q32t1-read]\nrw=randread\nbs=4k\niodepth=32\nstonewall\n\
                   [rnd4k-q1t1-write]\nrw=randwrite\nbs=4k\niodepth=1\nstonewall\n",
        ),
        ("psync-depth", g("psync") + "[sync-read]\nrw=randread\nbs=8k\niodepth=8\n"),
        ("io_uring", g("io_uring") + "[uring-read]\nrw=randread\nbs=8k\niodepth=8\n"),
        ("randread-run", g("libaio") + "[runs]\nrw=randread:4\nbs=16k\niodepth=2\n"),
        ("write-skip", g("libaio") + "[skips]\nrw=write:64k\nbs=64k\niodepth=4\n"),
    ];
    let dir = fs.dir.path();
    for (name, text) in &files {
        let job = write_job(dir, &format!("{name}.fio"), &text.replace("FILE", name));
        // Planned first: the file is new then, as fio finds it.
        let planned = iogauge(dir, &["fio", "--dry-run", "--json", "--no-store", &job]);
        assert!(planned.status.success(), "{name}: {}", stderr_of(&planned));
        let out = output_within(
            std::process::Command::new("fio")
                .args(["--output-format=json", &job])
                .current_dir(dir),
            WATCHDOG,
        );
        assert!(out.status.success(), "fio {name}: {}", stderr_of(&out));
        // fio may say a note before its JSON (a sync engine's depth capped at 1).
        let text = String::from_utf8_lossy(&out.stdout);
        let fio: Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..])
            .unwrap_or_else(|e| panic!("fio's JSON for {name}: {e}: {text}"));
        std::fs::remove_file(fs.path().join(name)).unwrap();
        let plan = json_of(&planned);
        let cells = plan["cells"].as_array().unwrap();
        let clones = fio["jobs"].as_array().unwrap();
        let mut names: Vec<&str> = Vec::new();
        for c in clones {
            let n = c["jobname"].as_str().unwrap();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        assert_eq!(cells.len(), names.len(), "{name}: jobs: {plan}");
        for (cell, job) in cells.iter().zip(&names) {
            let cell_name = cell["name"].as_str().unwrap();
            assert!(
                cell_name.starts_with(&format!("{job}: ")),
                "{name}: {cell_name} for {job}"
            );
            let ran: Vec<&Value> = clones.iter().filter(|c| c["jobname"] == *job).collect();
            assert_eq!(
                f(&cell["threads"]) as usize,
                ran.len(),
                "{name}/{job}: clones"
            );
            let op = cell["op"].as_str().unwrap();
            let (reads, writes) = (
                op.contains("read") || op.contains("rw"),
                op.contains("write") || op.contains("rw"),
            );
            for c in &ran {
                let ios = |dir: &str| f(&c[dir]["total_ios"]);
                assert_eq!(
                    (ios("read") > 0.0, ios("write") > 0.0),
                    (reads, writes),
                    "{name}/{job}: directions of {op}"
                );
                for dir in ["read", "write"] {
                    if ios(dir) > 0.0 {
                        let bs = f(&c[dir]["io_bytes"]) / ios(dir);
                        assert_eq!(bs, f(&cell["bs"]), "{name}/{job}: {dir} block size");
                    }
                }
                // The deepest level fio reached, in its buckets (1, 2, 4, 8, 16, 32, >=64),
                // against the depth iogauge plans (1 for a sync engine, as fio's rule).
                let levels = c["iodepth_level"].as_object().unwrap();
                let deepest = ["1", "2", "4", "8", "16", "32", ">=64"]
                    .iter()
                    .rev()
                    .find(|k| levels.get(**k).is_some_and(|v| f(v) > 0.0))
                    .unwrap();
                let depth = f(&cell["iodepth"]) as u32;
                let bucket = match depth {
                    64.. => ">=64".to_string(),
                    n => (1u32 << (31 - n.leading_zeros())).to_string(),
                };
                assert_eq!(*deepest, bucket, "{name}/{job}: depth {depth}: {levels:?}");
            }
        }
    }
}

/// KDiskMark's eight presets read as the one table of eight rows its users expect (a row per
/// job, named as the job file names it), not a table and a summary line per job.
#[test]
fn a_file_of_jobs_prints_one_table() {
    let _turn = hold(&DISK);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fio/kdiskmark.fio");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let small: String = text
        .lines()
        .map(|l| match l.split('=').next().unwrap_or("") {
            "size" => "size=32m".to_string(),
            "runtime" => "runtime=1".to_string(),
            "ramp_time" => "ramp_time=0".to_string(),
            _ => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect();
    let jobs: Vec<String> = small
        .lines()
        .filter(|l| l.starts_with('[') && !l.starts_with("[global]"))
        .map(|l| l.trim_matches(['[', ']']).to_string())
        .collect();
    assert_eq!(jobs.len(), 8, "KDiskMark's presets");
    let job = write_job(dir.path(), "kdiskmark.fio", &small);
    let out = std::process::Command::new(BIN)
        .args(["fio", &job, "--no-store"])
        .current_dir(dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .env("TARGET", dir.path().join("t.bin"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let heads: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("Job ") || l.contains(" Job "))
        .collect();
    assert_eq!(heads.len(), 1, "one table:\n{stdout}");
    let at = stdout.lines().position(|l| l.contains("Job ")).unwrap();
    let rows: Vec<&str> = stdout.lines().skip(at + 1).take(jobs.len()).collect();
    for (row, job) in rows.iter().zip(&jobs) {
        assert!(
            row.trim_start().starts_with(job.as_str()),
            "{job}: {row}\n{stdout}"
        );
        assert!(row.contains("MiB/s"), "{row}");
    }
    assert!(!stdout.contains("Summary"), "{stdout}");
}

/// fio's continue_on_error with ignore_error, on a fake disk whose block 5 fails every write
/// with ENOSPC: the job goes on, counts the failed write, names it, and leaves it out of its
/// numbers; fio's JSON has total_err and first_error. Near misses: without continue_on_error
/// the job stops at that write, and ignore_error listing EIO alone does not cover ENOSPC.
#[test]
fn continue_on_error_counts_and_names_the_errors_it_goes_on_after() {
    const BLOCK: u64 = 16384;
    if !can_mount_fakedisk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("mnt")).unwrap();
    let fail = format!("{}:{}", 5 * BLOCK + 100, 28);
    let disk = FakeDisk::mount(
        &dir.path().join("backing.img"),
        &dir.path().join("mnt"),
        64 * BLOCK,
        &["--fail-at", &fail],
    );
    let run = |extra: &str, args: &[&str]| {
        let job = format!(
            "[w]\nfilename={}\nrw=write\nbs=16k\nsize=1m\n{extra}",
            disk.target().display()
        );
        write_job(dir.path(), "e.fio", &job);
        let mut all = vec!["fio", "e.fio", "--allow-overwrite", "--no-store"];
        all.extend_from_slice(args);
        iogauge(dir.path(), &all)
    };
    let out = run(
        "continue_on_error=write\nignore_error=,ENOSPC\n",
        &["--json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    let e = &r["ignored_errors"];
    assert_eq!(e["count"], 1, "{r:#}");
    assert_eq!(e["errno"], 28);
    let first = e["first"].as_str().unwrap();
    assert!(
        first.contains(&format!("offset {}", 5 * BLOCK)) && first.contains("ENOSPC"),
        "{first}"
    );
    // The other 63 blocks were written and counted; the failed one is not in the numbers.
    assert_eq!(r["write"]["ios"], 63, "{r:#}");
    assert!(
        doc["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("1 IO error counted and gone on after")),
        "{:#}",
        doc["notes"]
    );
    let out = run(
        "continue_on_error=write\nignore_error=,ENOSPC\n",
        &["-o", "fio.json", "--format", "fio-json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let fio: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("fio.json")).unwrap()).unwrap();
    assert_eq!(fio["jobs"][0]["total_err"], 1, "{:#}", fio["jobs"][0]);
    assert_eq!(fio["jobs"][0]["first_error"], 28);
    // Near misses: no continue_on_error, or a list that leaves ENOSPC out, stop at the write.
    for extra in ["", "continue_on_error=write\nignore_error=,EIO\n"] {
        let out = run(extra, &["--json"]);
        assert_eq!(out.status.code(), Some(1), "{extra}: {}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains("No space left on device"),
            "{extra}: {}",
            stderr_of(&out)
        );
    }
}
