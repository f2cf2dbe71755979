//! fio's jobs at the same time (issue 60): jobs with no `stonewall` between them run at once, as
//! fio runs them, each getting the share of the device fio gives it; with `stonewall` each runs
//! alone. Ground truth from the kernel: a RAM loop device its blkio group holds to 2,000 reads a
//! second, with fio itself run in the same group beside iogauge. How two jobs share the throttle
//! depends on each one's submitter getting the CPU when its IOs complete, so the test runs in
//! the quiet binary (fio's own split moved from 50/50 to 55/45 beside the other tests).

use serde_json::Value;
use std::path::Path;
use std::process::Command;

use crate::common;
use common::*;

/// Two random readers (4K and 8K, QD 4 each) on `dev` for `secs` after a ramp of 1 s (an idle
/// throttle lets the first moments run over its rate).
fn job_file(dir: &Path, dev: &str, stonewall: bool, secs: u32) -> String {
    let p = dir.join(if stonewall {
        "alone.fio"
    } else {
        "together.fio"
    });
    std::fs::write(
        &p,
        format!(
            "[global]\nfilename={dev}\ndirect=1\nioengine=io_uring\nruntime={secs}\nramp_time=1\ntime_based\nsize=64m\n\
             [r4k]\nrw=randread\nbs=4k\niodepth=4\n\n[r8k]\n{}rw=randread\nbs=8k\niodepth=4\n",
            if stonewall { "stonewall\n" } else { "" }
        ),
    )
    .unwrap();
    p.display().to_string()
}

/// iogauge's results: each job's read IOPS by name, and the sum's document when there is one.
fn iogauge_jobs(cg: &Blkio, dir: &Path, file: &str) -> (Vec<(String, f64)>, Option<Value>) {
    let out = cg.run_in(dir, &format!("fio --json --no-store {file}"));
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    let sum = results
        .iter()
        .find(|r| r["together"]["sum"] == true)
        .cloned();
    let jobs = results
        .iter()
        .filter(|r| r["together"]["sum"] != true)
        .map(|r| {
            let name = r["name"].as_str().unwrap();
            let job = name.split(": ").next().unwrap().to_string();
            (job, r["read"]["iops"].as_f64().unwrap())
        })
        .collect();
    (jobs, sum)
}

/// fio's own per-job read IOPS for the same file, in the same blkio group.
fn fio_jobs(cg: &Blkio, dir: &Path, file: &str) -> Vec<(String, f64)> {
    let out = output_within(
        Command::new("sh")
            .args([
                "-c",
                &format!(
                    "echo $$ > {}/cgroup.procs && exec fio --output-format=json {file}",
                    cg.0.display()
                ),
            ])
            .current_dir(dir),
        DEADLINE,
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["read"]["iops"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn iops_of(jobs: &[(String, f64)], name: &str) -> f64 {
    jobs.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no job {name} in {jobs:?}"))
        .1
}

fn kinds(r: &Value) -> Vec<String> {
    r["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|x| x["kind"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn jobs_without_stonewall_share_the_device_as_fios_do_and_with_it_run_alone() {
    let _quiet = quiet_turn(module_path!());
    if !have("fio") {
        skip("needs fio");
        return;
    }
    let Some((cg, ram)) = throttle_rig("fio-together") else {
        return;
    };
    cg.throttle(&ram.dev, "read", 2_000);
    let dir = tempfile::tempdir().unwrap();

    // Together the two jobs share the throttle's 2,000, as fio's own jobs do beside each other:
    // each gets a share, and the two add up to fio's total within 10%. How the share splits
    // between the two is not asserted: here it drifted from 50/50 to 55/45 in both tools, and
    // a fresh-clone CI saw iogauge's at 68/32 against fio's 48/52 on the same device (not
    // explained yet; docs/streams.md says so).
    let file = job_file(dir.path(), &ram.dev.dev, false, 6);
    let (ours, sum) = iogauge_jobs(&cg, dir.path(), &file);
    let theirs = fio_jobs(&cg, dir.path(), &file);
    let total = |jobs: &[(String, f64)]| jobs.iter().map(|(_, v)| v).sum::<f64>();
    let (a, b) = (total(&ours), total(&theirs));
    assert!(
        (a - b).abs() <= 0.10 * b,
        "iogauge's jobs {a:.0} against fio's {b:.0} IOPS in all ({ours:?} / {theirs:?})"
    );
    for job in ["r4k", "r8k"] {
        let a = iops_of(&ours, job);
        assert!(
            (200.0..1_800.0).contains(&a),
            "{job}: {a:.0} IOPS: {ours:?}"
        );
    }
    // Their sum is the device's whole rate, and it alone carries the devices' findings: the
    // throttle is named on it, never on a stream (a stream's share is no limit of its own).
    let sum = sum.unwrap_or_else(|| panic!("no sum of the jobs run together: {ours:?}"));
    assert_eq!(sum["name"], "r4k + r8k");
    let total = sum["iops"].as_f64().unwrap();
    assert!((1_800.0..2_200.0).contains(&total), "sum {total:.0} IOPS");
    assert!(kinds(&sum).contains(&"limit".to_string()), "{sum}");
    assert!(
        sum["devices"].as_array().is_some_and(|d| !d.is_empty()),
        "{sum}"
    );

    // With stonewall each job runs alone, at the whole 2,000; no sum.
    let file = job_file(dir.path(), &ram.dev.dev, true, 2);
    let (alone, sum) = iogauge_jobs(&cg, dir.path(), &file);
    assert!(sum.is_none(), "jobs run alone have no sum: {sum:?}");
    for job in ["r4k", "r8k"] {
        let a = iops_of(&alone, job);
        assert!((1_800.0..2_200.0).contains(&a), "{job} alone: {a:.0} IOPS");
    }
}

/// Each job's results by name, from iogauge's document (the sum left out).
fn by_job(doc: &Value) -> Vec<(String, Value)> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["together"]["sum"] != true)
        .map(|r| {
            let name = r["name"].as_str().unwrap();
            (name.split(": ").next().unwrap().to_string(), r.clone())
        })
        .collect()
}

fn job<'a>(jobs: &'a [(String, Value)], name: &str) -> &'a Value {
    &jobs.iter().find(|(n, _)| n == name).unwrap().1
}

/// fio's `startdelay` and `exitall` beside other jobs, against the throttle's 2,000 reads a
/// second: a job that starts a second after the other has the device to itself for that second
/// and shares it after; a job with `exitall` that ends after 2,048 reads ends the one beside it,
/// which without it reads on to its own limit (the near miss).
#[test]
fn a_later_start_and_an_end_for_all_are_fios() {
    let _quiet = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("fio-startdelay") else {
        return;
    };
    cg.throttle(&ram.dev, "read", 2_000);
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, text: String| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = cg.run_in(
            dir.path(),
            &format!("fio --json --no-store {}", file.display()),
        );
        assert!(out.status.success(), "{}", stderr_of(&out));
        let mut doc = serde_json::from_slice::<Value>(&out.stdout).unwrap();
        doc["stderr"] = stderr_of(&out).into();
        doc
    };
    let dev = &ram.dev.dev;
    let global = format!(
        "[global]\nfilename={dev}\ndirect=1\nioengine=psync\nrw=randread\nbs=4k\nsize=64m\n"
    );

    // first runs 3 s; later starts 1 s in and runs 1 s beside it.
    let doc = run(
        "later.fio",
        format!("{global}[first]\nruntime=3\ntime_based\n[later]\nstartdelay=1\nruntime=1\ntime_based\n"),
    );
    let jobs = by_job(&doc);
    let per_s: Vec<f64> = job(&jobs, "first")["timeseries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["iops"].as_f64().unwrap())
        .collect();
    assert!(per_s.len() >= 3, "{per_s:?}");
    assert!(per_s[0] >= 1_600.0, "alone in its first second: {per_s:?}");
    assert!(per_s[1] <= 1_400.0, "beside the later job: {per_s:?}");
    assert!(per_s[2] >= 1_600.0, "alone again: {per_s:?}");
    let later = job(&jobs, "later")["ios"].as_f64().unwrap();
    assert!((600.0..1_400.0).contains(&later), "later: {later} reads");
    // The sum is over the cell's 3 s, not the longest job's own time.
    let sum = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["together"]["sum"] == true)
        .unwrap();
    let rate = sum["iops"].as_f64().unwrap();
    assert!((1_600.0..2_200.0).contains(&rate), "sum {rate:.0} IOPS");

    // short reads 2,048 blocks (about 2 s at half the throttle) and ends long, which would run
    // 4 s; without exitall long reads on to its 4 s. Judged by the time each was measured, not
    // by their counts: beside a busy machine one psync thread may take twice the other's share
    // of the throttle (long read 4,152 beside short's 2,048 in a CI run with guests beside it,
    // still ended with short).
    let file =
        |exit: &str| format!("{global}[long]\nruntime=4\ntime_based\n[short]\nio_size=8m\n{exit}");
    let ios = |doc: &Value, name: &str| job(&by_job(doc), name)["ios"].as_f64().unwrap();
    let secs = |doc: &Value, name: &str| job(&by_job(doc), name)["runtime_s"].as_f64().unwrap();
    let ended_with_short = |doc: &Value| {
        let (long, short) = (secs(doc, "long"), secs(doc, "short"));
        assert!(
            long < 3.5 && long <= short + 0.3,
            "long measured {long:.2} s, short {short:.2} s"
        );
    };
    let read_on = |doc: &Value| {
        let long = secs(doc, "long");
        assert!(long >= 3.8, "long measured {long:.2} s of its 4 s");
    };
    let ended = run("exitall.fio", file("exitall\nexit_what=stonewall\n"));
    assert_eq!(ios(&ended, "short"), 2048.0);
    ended_with_short(&ended);
    read_on(&run("on.fio", file("")));
    // exit_what=group (fio's default) ends short's reporting group: with new_group, short's
    // own, so long reads on (fio's examples/exitwhat.fio says the same of its fast1).
    read_on(&run("group.fio", file("exitall\nnew_group\n")));
    // exit_what=all: short's end ends long and every later job, which never starts; short on
    // an engine of its own (libaio, which iogauge runs on io_uring) beside long's psync.
    let all = run(
        "all.fio",
        format!(
            "{}[after]\nstonewall\nruntime=1\ntime_based\n",
            file("exitall\nexit_what=all\nioengine=libaio\niodepth=2\n")
        ),
    );
    let jobs = by_job(&all);
    ended_with_short(&all);
    assert!(jobs.iter().all(|(n, _)| n != "after"), "{all}");
    assert!(
        all["stderr"]
            .as_str()
            .unwrap()
            .contains("not run: the end of short ended every later job (exit_what=all)"),
        "{}",
        all["stderr"]
    );
    assert_eq!(job(&jobs, "short")["workload"]["engine"], "io_uring");
    assert_eq!(job(&jobs, "long")["workload"]["engine"], "psync");
}
