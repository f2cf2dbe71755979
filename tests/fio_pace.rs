//! fio's pacing options as fio runs them (issue 60): `thinktime` (a pause after every few IOs,
//! once they have completed) and a rate per direction (`rate_iops=R,W`: reads and writes each
//! at their own rate, whatever rwmixread says), each job at its own pace. Ground truth: fio
//! itself on the same RAM loop device, and the device's own count of the IOs it served.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

use crate::common;
use common::*;

/// iogauge's results of job file `text` on `dev` (its writes allowed), by job name.
fn iogauge_jobs(dir: &Path, text: &str) -> Vec<(String, Value)> {
    let file = dir.join("pace.fio");
    std::fs::write(&file, text).unwrap();
    let out = iogauge(
        dir,
        &[
            "fio",
            "--json",
            "--no-store",
            "--allow-overwrite",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = r["name"].as_str().unwrap();
            (name.split(": ").next().unwrap().to_string(), r.clone())
        })
        .collect()
}

/// fio's own (reads, writes) per job for the same file.
fn fio_jobs(dir: &Path, text: &str) -> Vec<(String, [f64; 2])> {
    let file = dir.join("pace-fio.fio");
    std::fs::write(&file, text).unwrap();
    let out = output_within(
        Command::new("fio")
            .args(["--output-format=json", file.to_str().unwrap()])
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
                [f(&j["read"]["total_ios"]), f(&j["write"]["total_ios"])],
            )
        })
        .collect()
}

fn rig() -> Option<RamLoop> {
    if !is_root() {
        skip("needs root (a loop device)");
        return None;
    }
    if !have("fio") {
        skip("needs fio");
        return None;
    }
    Some(RamLoop::new(64 << 20))
}

/// A random reader at QD 4 that pauses 20 ms after every 4 IOs (once they have completed) does
/// at most 4 IOs per pause: at most 404 in 2 s (its 100 pauses and one burst before them); with
/// thinktime_blocks=1 (fio's default) at most 101, however deep its queue (refilling the queue
/// before the pause did 396 here; fio 103). Not pausing would do tens of thousands. fio's own
/// counts keep the same bounds, and the device served what iogauge counted.
#[test]
fn thinktime_pauses_after_every_few_ios_as_fio_does() {
    let Some(ram) = rig() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[global]\nfilename={}\ndirect=1\nioengine=io_uring\nsize=64m\nruntime=2\ntime_based\n\
         rw=randread\nbs=4k\niodepth=4\nthinktime=20ms\n\
         [four]\nthinktime_blocks=4\n[one]\nstonewall\n",
        ram.dev.dev
    );
    let served = device_ios(ram.dev.name());
    let jobs = iogauge_jobs(dir.path(), &text);
    let served = device_ios(ram.dev.name()) - served;
    let fio = fio_jobs(dir.path(), &text);
    let mut counted = 0.0;
    for (name, blocks, most) in [("four", 4, 404.0), ("one", 1, 101.0)] {
        let r = &jobs.iter().find(|(n, _)| n == name).unwrap().1;
        let ios = f(&r["read"]["ios"]);
        counted += ios;
        assert!((most * 0.35..=most).contains(&ios), "{name}: {ios} reads");
        assert_eq!(r["workload"]["think"]["pause_us"], 20_000.0, "{r}");
        assert_eq!(r["workload"]["think"]["blocks"], blocks, "{r}");
        let said = if blocks > 1 {
            " · think 20 ms/4"
        } else {
            " · think 20 ms"
        };
        assert!(r["name"].as_str().unwrap().ends_with(said), "{}", r["name"]);
        // fio keeps the same bound (its count a little over it: 103 of 101 here, its clock
        // runs a little past the 2 s); beside a busy machine both sleep past their pauses, fio
        // more (247 of 404 in a CI run beside the other tests, iogauge 376; 127 of 404 in
        // another, iogauge 388), so no ratio and no floor for fio's but that it read: how far
        // past its pauses fio sleeps is fio's and the machine's, not what is judged here.
        let theirs = fio.iter().find(|(n, _)| n == name).unwrap().1[0];
        assert!(
            (1.0..=most * 1.05).contains(&theirs),
            "{name}: fio {theirs} reads, iogauge {ios}"
        );
    }
    assert!(
        served as f64 >= counted && served as f64 <= counted + 16.0,
        "{served} served, {counted} counted"
    );
}

/// `rate_iops=100,50` on a 50/50 random mix: fio issues 100 reads and 50 writes a second (its
/// mix overridden by the two rates); a second job after a stonewall keeps its own rate.
#[test]
fn a_rate_per_direction_paces_each_direction_and_each_job_its_own() {
    let Some(ram) = rig() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[global]\nfilename={}\ndirect=1\nioengine=io_uring\nsize=64m\nruntime=2\ntime_based\nbs=4k\n\
         [mix]\nrw=randrw\nrate_iops=100,50\n\
         [slow]\nstonewall\nrw=randwrite\nrate_iops=30\n",
        ram.dev.dev
    );
    let jobs = iogauge_jobs(dir.path(), &text);
    let fio = fio_jobs(dir.path(), &text);
    let ours = |name: &str| {
        let r = &jobs.iter().find(|(n, _)| n == name).unwrap().1;
        // A direction the job does not do is absent.
        let ios = |d: &str| r[d]["ios"].as_f64().unwrap_or(0.0);
        [ios("read"), ios("write")]
    };
    let theirs = |name: &str| fio.iter().find(|(n, _)| n == name).unwrap().1;
    let (mix, slow) = (ours("mix"), ours("slow"));
    // 2 s at 150 IOs/s, two thirds reads: 200 and 100 (the direction of each IO is drawn, so
    // ±20%); the other job at its own 30/s.
    assert!((160.0..=240.0).contains(&mix[0]), "{mix:?}");
    assert!((70.0..=130.0).contains(&mix[1]), "{mix:?}");
    assert!(
        slow[0] == 0.0 && (54.0..=66.0).contains(&slow[1]),
        "{slow:?}"
    );
    for (name, o) in [("mix", mix), ("slow", slow)] {
        let t = theirs(name);
        for d in 0..2 {
            assert!(
                (o[d] - t[d]).abs() <= 0.2 * t[d].max(1.0),
                "{name}: iogauge {o:?}, fio {t:?}"
            );
        }
    }
}

/// fio's flow: a random writer of weight 1 beside a random reader of weight 8 in one flow issue
/// about one write for every 8 reads (without a flow, on a RAM loop device, they issue about as
/// many each); the same with flow_sleep (the held job sleeps 1 ms once its IOs complete), as
/// fio's examples/flow.fio runs it. fio itself, run on the same device, is judged only for the
/// direction: a CI beside a busy machine saw fio's flow with sleeps at 4.4 reads a write (27,217
/// and 6,198) while iogauge held 8 in the same run; how closely fio holds its weights when its
/// threads wait for a CPU is fio's, not iogauge's.
#[test]
fn jobs_in_one_flow_share_its_ios_by_their_weights_as_fios_do() {
    let Some(ram) = rig() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[global]\nfilename={}\ndirect=1\nioengine=io_uring\nsize=64m\nruntime=2\ntime_based\nbs=4k\niodepth=4\n\
         [light]\nrw=randwrite\nflow=1\n[heavy]\nrw=randread\nflow=8\n\
         [light-sleeps]\nstonewall\nrw=randwrite\nflow=1\nflow_id=3\nflow_sleep=1000\n\
         [heavy-sleeps]\nrw=randread\nflow=8\nflow_id=3\nflow_sleep=1000\n",
        ram.dev.dev
    );
    let jobs = iogauge_jobs(dir.path(), &text);
    let fio = fio_jobs(dir.path(), &text);
    for (light, heavy) in [("light", "heavy"), ("light-sleeps", "heavy-sleeps")] {
        let ours = |name: &str, d: &str| {
            let r = &jobs.iter().find(|(n, _)| n == name).unwrap().1;
            assert!(
                r["name"].as_str().unwrap().contains(" · flow "),
                "{}",
                r["name"]
            );
            f(&r[d]["ios"])
        };
        let theirs = |name: &str, d: usize| fio.iter().find(|(n, _)| n == name).unwrap().1[d];
        let (w, r) = (ours(light, "write"), ours(heavy, "read"));
        assert!(
            w >= 100.0 && (7.2..=8.8).contains(&(r / w)),
            "{light}: {r} reads, {w} writes"
        );
        let (fw, fr) = (theirs(light, 1), theirs(heavy, 0));
        assert!(
            fw >= 100.0 && fr / fw >= 3.0,
            "fio {light}: {fr} reads, {fw} writes"
        );
    }
    let r = &jobs.iter().find(|(n, _)| n == "heavy-sleeps").unwrap().1;
    assert_eq!(r["workload"]["flow"]["weight"], 8, "{r}");
    assert_eq!(r["workload"]["flow"]["sleep_us"], 1000.0, "{r}");
}
