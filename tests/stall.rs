//! A real stall: fsfreeze on a loop-mounted ext4, and the stall finding's time and length
//! against the freeze's, to within iogauge's resolution. In the quiet binary (tests/quiet.rs):
//! in the busy binary, beside QEMU guests and two busy loops, the IO took 3 s after the thaw
//! to come back in one CI run (a stall of 6.2 s for a freeze of 3.0–3.4 s), which is the
//! machine's time, not the finding's.

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

#[test]
fn a_frozen_file_system_is_a_stall_at_the_right_time() {
    let _quiet = quiet_turn(module_path!());
    if !is_root() {
        skip("needs root");
        return;
    }
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

    let stalls: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "stall")
        .collect();
    let longest = stalls
        .iter()
        .max_by(|a, b| {
            let d = |f: &Value| f["evidence"]["duration_s"].as_f64().unwrap_or(0.0);
            d(a).total_cmp(&d(b))
        })
        .unwrap_or_else(|| panic!("no stall found: {:#}", doc["findings"]));
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
