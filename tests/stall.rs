//! A real stall: fsfreeze on a loop-mounted ext4, and the stall finding's time and length
//! against the freeze's, to within iogauge's resolution. In the quiet binary (tests/quiet.rs):
//! in the busy binary, beside QEMU guests and two busy loops, the IO took 3 s after the thaw
//! to come back in one CI run (a stall of 6.2 s for a freeze of 3.0–3.4 s), which is the
//! machine's time, not the finding's.
//!
//! And a stall the CPU made below iogauge's sight: a loop device's kernel worker held off its
//! only CPU on a machine with none idle, beside its near miss, a freeze on such a machine.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use common::*;
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

fn sh(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Undoes the setup whatever happens: thaws, unmounts and detaches the loop device.
struct LoopMount {
    mnt: PathBuf,
    dev: Option<String>,
    mounted: bool,
    frozen: bool,
}

impl LoopMount {
    fn freeze(&mut self) {
        sh("fsfreeze", &["-f", self.mnt.to_str().unwrap()]).expect("fsfreeze -f");
        self.frozen = true;
    }

    fn thaw(&mut self) {
        if self.frozen {
            let _ = sh("fsfreeze", &["-u", self.mnt.to_str().unwrap()]);
            self.frozen = false;
        }
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        self.thaw();
        if self.mounted {
            // An exited process's io_uring lets go of its files asynchronously, so the mount can
            // stay busy for a while; after 10 s detach it lazily rather than leave it mounted.
            let mnt = self.mnt.to_str().unwrap();
            let unmounted = poll_until(Duration::from_secs(10), || sh("umount", &[mnt]).is_ok());
            if !unmounted {
                let _ = sh("umount", &["-l", mnt]);
            }
        }
        if let Some(dev) = &self.dev {
            let _ = sh("losetup", &["-d", dev]);
        }
    }
}

/// The tests take turns: two of them keep the CPUs busy on purpose.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_frozen_file_system_is_a_stall_at_the_right_time() {
    let _quiet = quiet_turn(module_path!());
    if !is_root() {
        skip("needs root");
        return;
    }
    let _one = hold(&ONE_AT_A_TIME);
    let tmp = tempfile::tempdir().unwrap();
    // The image in RAM: the freeze is then the only thing that holds the IO back. On the root
    // disk, beside the guests' disk images being written back, the IO fell 0.6 s before the
    // freeze in CI and the stall began there.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let img = shm.path().join("fs.img");
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    std::fs::File::create(&img)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let mut guard = LoopMount {
        mnt: mnt.clone(),
        dev: None,
        mounted: false,
        frozen: false,
    };
    match sh("losetup", &["--find", "--show", img.to_str().unwrap()]) {
        Ok(dev) => {
            common::fresh_limits(&dev);
            guard.dev = Some(dev)
        }
        Err(e) => {
            skip(&format!("cannot set up a loop device ({e})"));
            return;
        }
    }
    let dev = guard.dev.clone().unwrap();
    sh("mkfs.ext4", &["-q", "-F", &dev]).expect("mkfs.ext4");
    sh("mount", &[&dev, mnt.to_str().unwrap()]).expect("mount");
    guard.mounted = true;

    // The stall is checked against the test's own clock without luck: the freeze is known to
    // lie between timestamps taken around fsfreeze, and the measurement to begin after the
    // spawn and no later than the exit less the runtime iogauge measured. Only iogauge's
    // resolution (SLACK) is allowed on top. The sleep below is the freeze's length (3 s);
    // nothing waits on it.
    const SLACK: f64 = 0.5;
    let loop_name = dev.trim_start_matches("/dev/").to_string();
    let spawned = Instant::now();
    let mut run = Spawned::start({
        let mut c = Command::new(env!("CARGO_BIN_EXE_iogauge"));
        c.args([
            "run",
            mnt.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--time",
            "8s",
        ])
        .args(["--size", "64m", "--json", "--no-store"])
        .env("IOGAUGE_RUN_DIR", own_run_dir(tmp.path()));
        c
    });
    run.wait_for("done in", WATCHDOG);
    let before = device_ios(&loop_name);
    wait_until("the run's writes", WATCHDOG, || {
        device_ios(&loop_name) > before + 100
    });
    // IO before the freeze, by the device's own count rather than a time: a run held back on a
    // busy machine is waited for.
    wait_until("more of the run's writes", WATCHDOG, || {
        device_ios(&loop_name) > before + 5000
    });
    let freezing = Instant::now();
    guard.freeze();
    let frozen = Instant::now();
    std::thread::sleep(Duration::from_secs(3));
    let thawing = Instant::now();
    guard.thaw();
    let thawed = Instant::now();
    let out = run.finish(WATCHDOG);
    let exited = Instant::now();
    let err = stderr_of(&out);
    assert!(out.status.success(), "iogauge failed: {err}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");

    let longest = &longest_stall(&doc);
    let start = longest["evidence"]["start_s"].as_f64().unwrap();
    let duration = longest["evidence"]["duration_s"].as_f64().unwrap();
    // From a to b, negative when b is earlier.
    let secs = |a: Instant, b: Instant| {
        b.saturating_duration_since(a).as_secs_f64() - a.saturating_duration_since(b).as_secs_f64()
    };
    let runtime = doc["results"][0]["runtime_s"].as_f64().unwrap();
    let (earliest, latest) = (secs(exited, freezing) + runtime, secs(spawned, frozen));
    // Frozen at most from `freezing` to `thawed`, at least from `frozen` to `thawing`.
    let (shortest, longest_freeze) = (secs(frozen, thawing), secs(freezing, thawed));
    println!(
        "stall found at {start:.2} s for {duration:.2} s; frozen at {earliest:.2}..{latest:.2} s \
         for {shortest:.2}..{longest_freeze:.2} s"
    );
    assert!(
        start >= earliest - SLACK && start <= latest + SLACK,
        "stall starts at {start} s, the freeze at {earliest:.2}..{latest:.2} s"
    );
    assert!(
        duration >= shortest - SLACK && duration <= longest_freeze + SLACK,
        "stall lasts {duration} s, the freeze {shortest:.2}..{longest_freeze:.2} s; IOs per bin \
         {}, engine {}",
        doc["results"][0]["fine"],
        doc["results"][0]["engine"]
    );
    // The near miss of a stall the CPU made (tests/cpu_contention.rs): the threads slept on the
    // frozen file system; they did not wait for a CPU.
    let said = longest["summary"].as_str().unwrap();
    assert!(!said.contains("CPU"), "{said}");
    // The result carries it too, with its index.
    assert_eq!(longest["result"], 0);
    let own = doc["results"][0]["findings"].as_array().unwrap();
    assert!(own.iter().any(|f| f["kind"] == "stall"));
}

/// iogauge run on `target` in `dir` for `time`, with `args`, its JSON on stdout; on the CPUs
/// `cpus` alone (taskset) when given.
fn run_on(
    dir: &std::path::Path,
    target: &str,
    time: &str,
    args: &[&str],
    cpus: Option<&str>,
) -> Spawned {
    let mut c = Command::new("taskset");
    c.args([
        "-c",
        cpus.unwrap_or("0-1023"),
        env!("CARGO_BIN_EXE_iogauge"),
    ]);
    c.args(["run", target, "--time", time])
        .args(args)
        .args(["--json", "--no-store"])
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir));
    Spawned::start(c)
}

/// How many IOs the device completes before a test stops it: at 7,000-87,000 IOPS here (a RAM
/// loop device beside busy loops), 0.2-2 s into an 8 s measurement.
const INTO_THE_MEASUREMENT: u64 = 15_000;

/// Waits until block device `name` has completed `ios` IOs in all, by its own count: a place in
/// the measurement that holds at any pace (iogauge's CPU time did not: beside two busy loops it
/// ran 0.3 CPU-s a second, and in one CI run a 6 s run ended before its 1.5 CPU-s). The runs
/// pass `--complete-batch 1`, so no trial of ways to wait comes before the measurement: it
/// starts with the first IO. Fails at once when the run ends first.
fn wait_for_ios(run: &mut Spawned, name: &str, ios: u64) {
    let mut ended = false;
    wait_until(&format!("{ios} IOs at {name}"), WATCHDOG, || {
        ended = !run.alive();
        ended || device_ios(name) >= ios
    });
    assert!(
        !ended,
        "the run ended before {name} had completed {ios} IOs (it has {})",
        device_ios(name)
    );
}

/// The run's longest stall (a freeze's; the bins around it may hold short ones of their own).
fn longest_stall(doc: &Value) -> Value {
    let d = |f: &Value| f["evidence"]["duration_s"].as_f64().unwrap_or(0.0);
    findings_of(doc, "stall")
        .into_iter()
        .max_by(|a, b| d(a).total_cmp(&d(b)))
        .unwrap_or_else(|| panic!("no stall found: {:#}", doc["findings"]))
}

/// Each fine series of a result, printed for the log of a failing run.
fn show_fine(doc: &Value) {
    let fine = &doc["results"][0]["fine"];
    for k in ["ios", "in_flight", "cpu_others", "cpu_wait"] {
        eprintln!("{k}: {}", fine[k]);
    }
}

/// A stall the CPU made where iogauge cannot see it: random reads from a RAM loop device,
/// whose kernel worker completes them, while the kernel's unbound workers (the loop device's
/// among them) may run on CPU 1 alone, iogauge on CPU 0 alone, a busy loop keeps CPU 0 busy,
/// and a real-time busy loop takes CPU 1 for 0.8 s. The worker, ready to run, gets no CPU;
/// iogauge's threads sleep on the IO in flight at the device, waiting for no CPU; nothing
/// completes. Before iogauge read the device's IOs in flight this was named the device's ("no
/// IO completed for 0.7 s"); now it is possibly the CPU's, with the count in flight.
#[test]
fn a_loop_devices_worker_held_off_its_cpu_is_a_stall_possibly_the_cpus() {
    let _quiet = quiet_turn(module_path!()).at_usual_priority();
    needs_root!();
    needs_tool!("taskset");
    needs_tool!("chrt");
    let _one = hold(&ONE_AT_A_TIME);
    let ram = RamLoop::new(64 << 20);
    sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", ram.dev.dev),
            "bs=1M",
            "count=64",
            "oflag=direct",
        ],
    )
    .expect("dd");
    let Some(mask) = QueueSetting::at("/sys/devices/virtual/workqueue/cpumask", "2") else {
        skip("cannot set the CPUs of the kernel's unbound workers");
        return;
    };
    let busy = Helper::shell("exec taskset -c 0 sh -c 'while :; do :; done'");
    let dir = tempfile::tempdir().unwrap();
    // iogauge on CPU 0: its own threads then never wait behind the real-time loop (on CPU 1,
    // they did once, and the stall was rightly named the CPU's by their wait).
    let before = device_ios(ram.dev.name());
    let mut run = run_on(
        dir.path(),
        &ram.dev.dev,
        "8s",
        &["--rw", "randread", "--complete-batch", "1"],
        Some("0"),
    );
    wait_for_ios(&mut run, ram.dev.name(), before + INTO_THE_MEASUREMENT);
    // KILL: a real-time loop must not outlive the test, whatever stops it.
    let hog = Command::new("timeout")
        .args([
            "-s", "KILL", "0.8", "chrt", "-f", "50", "taskset", "-c", "1",
        ])
        .args(["sh", "-c", "while :; do :; done"])
        .status()
        .unwrap();
    // timeout ends it with SIGKILL.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        hog.signal().or(hog.code().map(|c| c - 128)),
        Some(9),
        "{hog:?}"
    );
    let out = run.finish(WATCHDOG);
    drop((busy, mask));
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    show_fine(&doc);
    let found = findings_of(&doc, "stall");
    assert_eq!(found.len(), 1, "{:#}", doc["findings"]);
    let f = &found[0];
    eprintln!("user sees: {}", f["summary"]);
    let said = f["summary"].as_str().unwrap();
    assert!(
        said.contains("had no idle time")
            && said.contains("in flight")
            && said.contains("the CPU's as likely as the device's"),
        "{said}"
    );
    assert!(f["evidence"]["in_flight"].as_f64().unwrap() >= 1.0, "{f:#}");
    assert!(f["evidence"].get("cpu_wait").is_none(), "{f:#}");
    let duration = f["evidence"]["duration_s"].as_f64().unwrap();
    assert!((0.5..=1.1).contains(&duration), "{f:#}");
}

/// The near miss: IO held above a loop device — ext4 on a RAM loop device, frozen for a
/// second — on a machine whose CPUs two busy loops keep taken. Nothing completes, as above, but
/// nothing is in flight at the device either: the stall stays the device's (the file
/// system's), with no CPU named.
#[test]
fn a_freeze_above_a_loop_device_on_a_busy_machine_stays_the_devices() {
    let _quiet = quiet_turn(module_path!()).at_usual_priority();
    needs_root!();
    needs_tool!("mkfs.ext4");
    let _one = hold(&ONE_AT_A_TIME);
    let ram = RamLoop::new(256 << 20);
    sh("mkfs.ext4", &["-q", "-F", &ram.dev.dev]).expect("mkfs.ext4");
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    let _mount = Mount::new(&ram.dev.dev, &mnt, "rw");
    let busy: Vec<Helper> = (0..2)
        .map(|_| Helper::shell("exec sh -c 'while :; do :; done'"))
        .collect();
    let mut run = run_on(
        dir.path(),
        mnt.to_str().unwrap(),
        "8s",
        &[
            "--rw",
            "randwrite",
            "--size",
            "64m",
            "--complete-batch",
            "1",
        ],
        None,
    );
    // Filled: the IO from here on is the measurement's.
    run.wait_for("done in", WATCHDOG);
    let before = device_ios(ram.dev.name());
    wait_for_ios(&mut run, ram.dev.name(), before + INTO_THE_MEASUREMENT);
    let frozen = Frozen::new(&mnt);
    // The freeze's length; nothing waits on it.
    std::thread::sleep(Duration::from_secs(1));
    drop(frozen);
    let out = run.finish(WATCHDOG);
    drop(busy);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    show_fine(&doc);
    let f = &longest_stall(&doc);
    eprintln!("user sees: {}", f["summary"]);
    let said = f["summary"].as_str().unwrap();
    assert!(!said.contains("CPU"), "{said}");
    assert!(f["evidence"].get("in_flight").is_none(), "{f:#}");
    // Near: the machine had no CPU idle and IO stopped all but completely (the depth that
    // `stall` judges a busy machine's only with IO in flight), as in the test above.
    let fine = &doc["results"][0]["fine"];
    let (start, len) = (
        f["evidence"]["start_s"].as_f64().unwrap(),
        f["evidence"]["duration_s"].as_f64().unwrap(),
    );
    let bins = (start * 10.0).round() as usize..((start + len) * 10.0).round() as usize;
    let series = |k: &str| -> Vec<f64> {
        fine[k].as_array().unwrap()[bins.clone()]
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    assert!(f["evidence"]["depth"].as_f64().unwrap() < 0.02, "{f:#}");
    // The bins at its edges may hold the last IO before the freeze or the first after it.
    // None in flight at any look in it (−1: no look in that bin).
    let flight = series("in_flight");
    assert!(flight.len() >= 3, "{fine:#}");
    assert!(
        flight[1..flight.len() - 1].iter().all(|&n| n <= 0.0),
        "{fine:#}"
    );
    let others = series("cpu_others");
    assert!(
        others.iter().sum::<f64>() / others.len() as f64 >= 1.5,
        "{fine:#}"
    );
}
