//! Safety and reliability end to end (issue 6), through the binary: consent on block devices
//! and system paths, signals, faults (ENOSPC, EIO, EROFS, a target deleted or a device detached
//! mid-run), limits, and what a bug looks like. Each test has its own temp dir. Tests that need
//! root (loop devices, mounts) skip through `common::skip` when not root; they undo
//! every mount and loop device with Drop guards, also when they fail.
//!
//! Every fault test prints what the user saw (`cargo test --test e2e safety:: -- --nocapture`).

use serde_json::Value;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;
use common::*;

const MIB: u64 = 1 << 20;

/// Starts a 60 s run of `rw` on a test file iogauge creates in `fs`, and waits until the fill
/// is done and IO is under way (the file system's device counts it); returns the run and its
/// test file.
fn long_run_on(fs: &Fs, size: &str, rw: &str, extra: &[&str]) -> (Running, PathBuf) {
    let target = fs.path().to_str().unwrap().to_string();
    let mut args = vec![
        "run",
        &target,
        "--size",
        size,
        "--rw",
        rw,
        "--time",
        "60s",
        "--json",
        "--no-store",
    ];
    args.extend_from_slice(extra);
    let run = Running::spawn(fs.dir.path(), &args);
    run.wait_for("done in", WATCHDOG);
    let before = device_ios(fs.dev.name());
    wait_until("the run's IO on the device", WATCHDOG, || {
        device_ios(fs.dev.name()) > before + 100
    });
    let file = files_named(fs.path(), "iogauge-test")
        .pop()
        .expect("test file");
    (run, file)
}

/// Sets or clears O_NONBLOCK on a pipe's file (shared by every descriptor of it).
fn set_nonblocking(pipe: &impl std::os::fd::AsRawFd, on: bool) {
    iogauge_engine::sys::set_nonblocking(pipe, on).expect("fcntl O_NONBLOCK");
}

/// "512m" as bytes (the sizes this file writes).
fn parse_size(s: &str) -> u64 {
    s.strip_suffix('m').unwrap().parse::<u64>().unwrap() * MIB
}

fn files_named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

fn checksum(path: &Path) -> u64 {
    // FNV-1a over 64-bit words: fast enough in debug builds for images of hundreds of MiB.
    let mut f = File::open(path).unwrap();
    let mut buf = vec![0u8; MIB as usize];
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h;
        }
        for w in buf[..n].chunks(8) {
            let mut word = [0u8; 8];
            word[..w.len()].copy_from_slice(w);
            h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// iogauge running in the background, its stderr collected as it comes.
struct Running {
    child: Option<Child>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<String>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

struct Done {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

impl Running {
    fn spawn(dir: &Path, args: &[&str]) -> Running {
        Running::spawn_with(dir, args, None, &[])
    }

    /// `stdout`: where the child's stdout goes; collected by a thread when None.
    fn spawn_with(
        dir: &Path,
        args: &[&str],
        stdout: Option<Stdio>,
        env: &[(&str, &str)],
    ) -> Running {
        let collect_stdout = stdout.is_none();
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .current_dir(dir)
            .env("IOGAUGE_DB", dir.join("results.db"))
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir))
            .stdout(stdout.unwrap_or_else(Stdio::piped))
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn iogauge");
        let stderr = Arc::new(Mutex::new(String::new()));
        let stdout_buf = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        let mut err_pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        threads.push(std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        }));
        if collect_stdout {
            let mut out_pipe = child.stdout.take().unwrap();
            let sink = stdout_buf.clone();
            threads.push(std::thread::spawn(move || {
                let mut all = Vec::new();
                let _ = out_pipe.read_to_end(&mut all);
                *sink.lock().unwrap() = all;
            }));
        }
        Running {
            child: Some(child),
            stdout: stdout_buf,
            stderr,
            threads,
        }
    }

    fn pid(&self) -> String {
        self.child.as_ref().unwrap().id().to_string()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn wait_for(&self, needle: &str, timeout: Duration) {
        if !poll_until(timeout, || self.stderr().contains(needle)) {
            panic!(
                "{needle:?} not seen within {timeout:?}; stderr so far:\n{}",
                self.stderr()
            );
        }
    }

    /// Read and write system calls the run's IO threads have made so far (psync runs).
    fn syscalls(&self) -> u64 {
        syscalls_of(self.child.as_ref().unwrap().id())
    }

    /// Waits until the run has made `n` more read or write system calls: IO under way.
    fn wait_for_syscalls(&self, n: u64) {
        let before = self.syscalls();
        wait_until("the run's IO", WATCHDOG, || self.syscalls() > before + n);
    }

    fn signal(&self, sig: &str) {
        sh("kill", &[&format!("-{sig}"), &self.pid()]);
    }

    fn finish(mut self, timeout: Duration) -> Done {
        let mut child = self.child.take().unwrap();
        let mut status = None;
        if !poll_until(timeout, || {
            status = child.try_wait().unwrap();
            status.is_some()
        }) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "iogauge did not exit within {timeout:?}; stderr:\n{}",
                self.stderr()
            );
        }
        let status = status.unwrap();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        Done {
            code: status.code(),
            stdout: std::mem::take(&mut *self.stdout.lock().unwrap()),
            stderr: self.stderr(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(bytes)
        )
    })
}

/// A failed run's one error line, after checking it exited 1 without a panic.
fn error_line(done: &Done) -> &str {
    eprintln!(
        "user saw (exit {:?}):\n{}",
        done.code,
        done.stderr.trim_end()
    );
    assert_eq!(done.code, Some(1), "exit 1; stderr:\n{}", done.stderr);
    assert_no_panic(&done.stderr);
    done.stderr
        .lines()
        .find(|l| l.starts_with("iogauge: error:"))
        .unwrap_or_else(|| panic!("an error line in\n{}", done.stderr))
}

/// What the user must see on a fault: exit 1, an error line naming the target and the system's
/// error, the partial results on stdout with the same error, no panic.
fn assert_fault(done: &Done, target: &str, error: &str) -> Value {
    let line = error_line(done);
    assert!(
        line.contains(target) && line.contains(error),
        "{target:?} and {error:?} in {line:?}"
    );
    let doc = json(&done.stdout);
    let r = &doc["results"][0];
    assert!(
        r["error"].as_str().is_some_and(|e| e.contains(error)),
        "the result says why it stopped: {}",
        r["error"]
    );
    assert!(
        r["ios"].as_f64().unwrap() > 0.0,
        "what was measured before the fault is kept"
    );
    assert_eq!(doc["interrupted"], true, "marked as cut short");
    doc
}

fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

// ---------------------------------------------------------------------------------------------
// Consent

#[test]
fn system_paths_and_non_block_devices_under_dev_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let shm_name = format!("iogauge-safety-{}", std::process::id());
    let shm = format!("/dev/shm/{shm_name}");
    std::os::unix::fs::symlink("/proc/self", dir.path().join("to-proc")).unwrap();
    std::os::unix::fs::symlink("/dev/shm", dir.path().join("to-shm")).unwrap();
    let via_proc = dir.path().join("to-proc/status");
    let via_shm = dir.path().join("to-shm").join(&shm_name);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "/dev/null"], "/dev"),
        (vec!["run", "/dev/zero", "--rw", "read"], "/dev"),
        (vec!["run", &shm], "/dev"),
        (vec!["run", "/dev/shm"], "/dev"),
        (vec!["run", "/proc/self/status", "--rw", "read"], "/proc"),
        (vec!["run", "/sys/kernel/notes", "--rw", "read"], "/sys"),
        (
            vec!["run", via_proc.to_str().unwrap(), "--rw", "read"],
            "/proc",
        ),
        (vec!["run", via_shm.to_str().unwrap()], "/dev"),
    ];
    for (args, root) in cases {
        let out = iogauge(dir.path(), &args);
        assert_refused(&out, &[root]);
    }
    assert!(!Path::new(&shm).exists(), "nothing created in /dev/shm");
}

/// Bytes to write at offsets of an image.
type Patches<'a> = Vec<(u64, &'a [u8])>;

/// Writes `patches` into a zeroed image of `size` bytes.
fn image(dir: &Path, name: &str, size: u64, patches: &[(u64, &[u8])]) -> PathBuf {
    let path = dir.join(name);
    let f = File::create(&path).unwrap();
    f.set_len(size).unwrap();
    for (at, bytes) in patches {
        f.write_all_at(bytes, *at).unwrap();
    }
    f.sync_all().unwrap();
    path
}

/// Signatures placed by hand where each format's specification puts them (independently of
/// iogauge's table), and ones written by the real tools where they are installed.
#[test]
fn a_device_with_a_signature_is_never_written_whatever_the_flags() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let size = 64 * MIB;
    let mut mbr_entry = [0u8; 16];
    mbr_entry[4] = 0x83;
    let md_magic = 0xa92b_4efc_u32.to_le_bytes();
    let md_v1: Vec<u8> = [md_magic, 1u32.to_le_bytes()].concat();
    let md_v0: Vec<u8> = [md_magic, 0u32.to_le_bytes()].concat();
    // md v0.90: the last 64 KiB-aligned 64 KiB; v1.0: (sectors - 16) & ~7.
    let md090_at = (size / 65536 - 1) * 65536;
    let md10_at = ((size / 512 - 16) & !7) * 512;
    let hand: Vec<(&str, Patches, &str)> = vec![
        (
            "ext",
            vec![(1080, &[0x53, 0xEF][..]), (1048, &[2, 0, 0, 0][..])],
            "ext2/3/4",
        ),
        ("xfs", vec![(0, &b"XFSB\0\0\x10\0"[..])], "XFS"),
        ("btrfs", vec![(65600, &b"_BHRfS_M"[..])], "btrfs"),
        ("swap", vec![(4086, &b"SWAPSPACE2"[..])], "swap"),
        (
            "mbr",
            vec![(446, &mbr_entry[..]), (510, &[0x55, 0xAA][..])],
            "MBR",
        ),
        ("gpt", vec![(512, &b"EFI PART"[..])], "GPT"),
        ("gpt4k", vec![(4096, &b"EFI PART"[..])], "GPT"),
        ("lvm", vec![(512, &b"LABELONE"[..])], "LVM"),
        ("md12", vec![(4096, &md_v1[..])], "md RAID"),
        ("md11", vec![(0, &md_v1[..])], "md RAID"),
        ("md10", vec![(md10_at, &md_v1[..])], "md RAID"),
        ("md090", vec![(md090_at, &md_v0[..])], "md RAID"),
    ];
    let mut images: Vec<(PathBuf, &str)> = hand
        .iter()
        .map(|(name, patches, what)| (image(dir.path(), name, size, patches), *what))
        .collect();
    // A format iogauge's own table does not know, caught by the blkid cross-check.
    if have("blkid") {
        let romfs = image(dir.path(), "romfs", size, &[(0, b"-rom1fs-\0\0\x10\0")]);
        images.push((romfs, "'romfs' signature (found by blkid -p)"));
    } else {
        // One case of several: the others still run.
        skip("needs blkid (its cross-check case)");
    }
    for (tool, args, what) in [
        ("mkfs.ext4", &["-q", "-F"][..], "ext2/3/4"),
        ("mkswap", &[][..], "swap"),
        ("mkfs.xfs", &["-q", "-f"][..], "XFS"),
    ] {
        if have(tool) {
            let img = image(dir.path(), tool, 320 * MIB, &[]);
            let mut a = args.to_vec();
            a.push(img.to_str().unwrap());
            sh(tool, &a);
            images.push((img, what));
        } else {
            skip(&format!("needs {tool} (its real-tool case)"));
        }
    }
    for (img, what) in images {
        let before = checksum(&img);
        let dev = LoopDev::attach(&img);
        for rw in ["randwrite", "write", "randrw"] {
            let out = iogauge(
                dir.path(),
                &[
                    "run",
                    &dev.dev,
                    "--rw",
                    rw,
                    "--allow-overwrite",
                    "--time",
                    "1s",
                    "--no-store",
                ],
            );
            let err = assert_refused(&out, &[&dev.dev, what, "wipefs -a", "whatever the flags"]);
            if rw == "randwrite" {
                eprintln!("{}: user saw: {}", img.display(), err.trim_end());
            }
        }
        // Reading is harmless and allowed.
        let out = iogauge(
            dir.path(),
            &[
                "run",
                &dev.dev,
                "--rw",
                "randread",
                "--time",
                "200ms",
                "--no-store",
            ],
        );
        assert!(out.status.success(), "read: {}", stderr_of(&out));
        drop(dev);
        assert_eq!(
            checksum(&img),
            before,
            "{}: not one byte changed",
            img.display()
        );
    }
}

#[test]
fn a_blank_device_is_written_only_with_consent() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "blank", 64 * MIB, &[]);
    let dev = LoopDev::attach(&img);
    let args = [
        "run",
        &dev.dev,
        "--rw",
        "randwrite",
        "--time",
        "300ms",
        "--no-store",
    ];
    assert_refused(&iogauge(dir.path(), &args), &["--allow-overwrite"]);
    assert_eq!(
        checksum(&img),
        checksum(&image(dir.path(), "zeros", 64 * MIB, &[]))
    );
    let mut with = args.to_vec();
    with.push("--allow-overwrite");
    let out = iogauge(dir.path(), &with);
    assert!(out.status.success(), "{}", stderr_of(&out));
    drop(dev);
    let data = std::fs::read(&img).unwrap();
    assert!(data.iter().any(|&b| b != 0), "the device was written");
}

#[test]
fn a_mounted_device_is_never_written_but_may_be_read() {
    needs_root!();
    let fs = Fs::ext4(64 * MIB, "rw");
    let dir = fs.dir.path();
    let out = iogauge(
        dir,
        &[
            "run",
            &fs.dev.dev,
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--time",
            "1s",
            "--no-store",
        ],
    );
    let err = assert_refused(
        &out,
        &[&fs.dev.dev, "mounted on", fs.path().to_str().unwrap()],
    );
    eprintln!("user saw: {}", err.trim_end());
    let out = iogauge(
        dir,
        &[
            "run",
            &fs.dev.dev,
            "--rw",
            "randread",
            "--time",
            "200ms",
            "--no-store",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// Two benchmarks on one device: the second is refused while the first holds it exclusively,
/// and so is anything else that asks for the device exclusively (mount, mkfs, md, LVM).
#[test]
fn a_device_being_written_is_claimed_exclusively() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "blank", 64 * MIB, &[]);
    let dev = LoopDev::attach(&img);
    let first = Running::spawn(
        dir.path(),
        &[
            "run",
            &dev.dev,
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--engine",
            "psync",
            "--time",
            "20s",
            "--no-store",
        ],
    );
    // Once the first run writes, it holds the device (it claims it before its first IO).
    let before = device_ios(dev.name());
    wait_until("the first run's writes", WATCHDOG, || {
        device_ios(dev.name()) > before + 100
    });
    let out = iogauge(
        dir.path(),
        &[
            "run",
            &dev.dev,
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--time",
            "200ms",
            "--no-store",
        ],
    );
    let err = assert_refused(&out, &[&dev.dev, "in use"]);
    eprintln!("user saw: {}", err.trim_end());
    // Other tools honour the claim too: mkfs refuses a device that is in use.
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.dev])
        .output()
        .unwrap();
    assert!(
        !mkfs.status.success(),
        "no mkfs while iogauge writes: {}",
        String::from_utf8_lossy(&mkfs.stderr)
    );
    first.signal("INT");
    assert_eq!(first.finish(WATCHDOG).code, Some(130));
}

#[test]
fn an_active_swap_device_is_never_written() {
    needs_root!();
    needs_tool!("swapon");
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "swap", 64 * MIB, &[]);
    let dev = LoopDev::attach(&img);
    sh("mkswap", &[&dev.dev]);
    if !Command::new("swapon")
        .arg(&dev.dev)
        .status()
        .is_ok_and(|s| s.success())
    {
        skip("swapon is not permitted here");
        return;
    }
    struct SwapOff<'a>(&'a str);
    impl Drop for SwapOff<'_> {
        fn drop(&mut self) {
            let _ = Command::new("swapoff").arg(self.0).status();
        }
    }
    let _off = SwapOff(&dev.dev);
    let out = iogauge(
        dir.path(),
        &[
            "run",
            &dev.dev,
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--time",
            "1s",
            "--no-store",
        ],
    );
    let err = assert_refused(&out, &[&dev.dev, "swap"]);
    eprintln!("user saw: {}", err.trim_end());
}

#[test]
fn the_backing_file_of_a_loop_device_is_never_written() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "backing", 16 * MIB, &[]);
    let dev = LoopDev::attach(&img);
    let out = iogauge(
        dir.path(),
        &[
            "run",
            img.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--time",
            "1s",
            "--no-store",
        ],
    );
    let err = assert_refused(&out, &["backing file of", &dev.dev, "losetup -d"]);
    eprintln!("user saw: {}", err.trim_end());
}

// ---------------------------------------------------------------------------------------------
// Signals

/// Each signal stops the run (well before its 60 s), prints and stores the partial run marked
/// interrupted, removes the test file and exits 128 + the signal.
#[test]
fn sigint_sigterm_and_sighup_stop_keep_store_and_clean_up() {
    for (sig, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let dir = tempfile::tempdir().unwrap();
        let run = Running::spawn(
            dir.path(),
            &[
                "run",
                "--engine",
                "psync",
                "--rw",
                "randwrite",
                "--threads",
                "4",
                "--size",
                "16m",
                "--time",
                "60s",
                "--json",
            ],
        );
        run.wait_for("done in", WATCHDOG);
        run.wait_for_syscalls(100);
        run.signal(sig);
        let done = run.finish(WATCHDOG);
        assert_eq!(done.code, Some(code), "SIG{sig}; stderr:\n{}", done.stderr);
        assert_no_panic(&done.stderr);
        let doc = json(&done.stdout);
        assert_eq!(doc["interrupted"], true);
        let r = &doc["results"][0];
        assert!(f64_of(&r["ios"]) > 0.0);
        // Stopped by the signal: measured for less than the 60 s asked.
        assert!(
            f64_of(&r["runtime_s"]) < 60.0,
            "SIG{sig}: {}",
            r["runtime_s"]
        );
        assert!(
            files_named(dir.path(), "iogauge-test").is_empty(),
            "SIG{sig}: test file removed"
        );
        // Stored, marked interrupted.
        let show = iogauge(dir.path(), &["show", "last", "--json"]);
        assert!(show.status.success(), "{}", stderr_of(&show));
        let stored = json(&show.stdout);
        assert_eq!(
            stored["run_id"], doc["run_id"],
            "SIG{sig}: the run is stored"
        );
        assert_eq!(stored["interrupted"], true);
    }
}

/// Room for a big fill in the temp dir's file system, but never more than a quarter of it.
fn big_fill_size(dir: &Path) -> String {
    let avail: Vec<u64> = sh("stat", &["-f", "-c", "%a %S", dir.to_str().unwrap()])
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let free = avail[0] * avail[1];
    format!("{}m", (free / 4 / MIB).clamp(64, 2048))
}

#[test]
fn an_interrupt_during_the_fill_removes_the_partial_file() {
    for signals in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let size = big_fill_size(dir.path());
        let run = Running::spawn(
            dir.path(),
            &[
                "run",
                "--size",
                &size,
                "--time",
                "10s",
                "--json",
                "--no-store",
            ],
        );
        run.wait_for("Filling", WATCHDOG);
        // Held still mid-fill, so the signals surely land during the fill however fast the
        // disk: the file exists and is not full yet.
        run.signal("STOP");
        let file = files_named(dir.path(), "iogauge-test");
        assert_eq!(file.len(), 1);
        let full = parse_size(&size);
        assert!(std::fs::metadata(&file[0]).unwrap().len() < full);
        run.signal("INT");
        run.signal("CONT");
        if signals == 2 {
            // Signals do not queue while stopped; the second is sent after. The run may have
            // stopped already, so the kill may find no process.
            let _ = Command::new("kill")
                .args(["-INT", &run.pid()])
                .stderr(Stdio::null())
                .status();
        }
        let done = run.finish(WATCHDOG);
        assert_eq!(done.code, Some(130), "{}", done.stderr);
        assert_no_panic(&done.stderr);
        assert!(!done.stderr.contains("done in"), "the fill was cut short");
        assert!(done.stdout.is_empty(), "nothing was measured");
        // Issue 12: a stop during the fill does not claim to keep what was measured.
        assert!(
            done.stderr.contains("before anything was measured")
                && !done.stderr.contains("keeping what was measured"),
            "{}",
            done.stderr
        );
        assert!(
            files_named(dir.path(), "iogauge-test").is_empty(),
            "{signals} SIGINT: partial file removed"
        );
    }
}

/// The second SIGINT quits at once, removing the test file, while the first is still pending.
/// To hold the first one deterministically, iogauge is left blocked writing its results to a
/// full pipe (as when a pager stops reading): its main thread cannot act on the first SIGINT.
#[test]
fn a_second_sigint_quits_at_once_and_still_removes_the_file() {
    second_sigint_while_blocked(false);
}

/// The same with --keep: the file stays, and it is off the crash ledger too (kept on purpose,
/// not left behind: the next command does not name it and `iogauge clean` would not remove it).
#[test]
fn a_second_sigint_quits_at_once_and_keeps_a_kept_file() {
    second_sigint_while_blocked(true);
}

fn second_sigint_while_blocked(keep: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    // Fill the pipe until the kernel says it is full, whatever its capacity: non-blocking
    // writes until EAGAIN, then blocking again for iogauge.
    set_nonblocking(&writer, true);
    let mut filler = &writer;
    loop {
        match filler.write(&[b' '; 4096]) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("filling the pipe: {e}"),
        }
    }
    set_nonblocking(&writer, false);
    let mut args = vec![
        "run", "--engine", "psync", "--size", "8m", "--time", "1s", "--json",
    ];
    if keep {
        args.push("--keep");
    }
    let run = Running::spawn_with(dir.path(), &args, Some(Stdio::from(writer)), &[]);
    run.wait_for("done in", WATCHDOG);
    // Wait until the run is over and iogauge sits in the write of its results.
    let wchan = format!("/proc/{}/wchan", run.pid());
    // pipe_write, or anon_pipe_write on newer kernels.
    let blocked = || {
        std::fs::read_to_string(&wchan)
            .unwrap_or_default()
            .ends_with("pipe_write")
    };
    wait_until("iogauge blocked on its output", WATCHDOG, blocked);
    run.signal("INT");
    run.wait_for("interrupted: stopping", WATCHDOG);
    // The first SIGINT is still pending: iogauge is still (or, if the kernel handed the signal
    // to the writing thread and its write was restarted, again) blocked on its output.
    wait_until("iogauge still blocked on its output", WATCHDOG, blocked);
    assert_eq!(
        files_named(dir.path(), "iogauge-test").len(),
        1,
        "the first SIGINT is still pending"
    );
    run.signal("INT");
    // Nobody reads the pipe before iogauge exits: it can only end by quitting at once.
    let done = run.finish(WATCHDOG);
    drop(reader);
    eprintln!(
        "user saw (exit {:?}):\n{}",
        done.code,
        done.stderr.trim_end()
    );
    assert_eq!(done.code, Some(130));
    assert!(done.stderr.contains("interrupted twice"), "{}", done.stderr);
    // The message matches what was stored: the run was in the store before its output.
    assert!(
        done.stderr.contains("the whole run was already stored"),
        "{}",
        done.stderr
    );
    let list = iogauge(dir.path(), &["list", "--json"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("\"run_id\""));
    assert_eq!(
        files_named(dir.path(), "iogauge-test").len(),
        usize::from(keep),
        "test file removed unless kept"
    );
    assert_eq!(
        done.stderr.contains("kept as asked"),
        keep,
        "{}",
        done.stderr
    );
    // And crossed off the crash ledger: the next command does not name it as left behind.
    assert!(
        !stderr_of(&list).contains("without cleaning up"),
        "{}",
        stderr_of(&list)
    );
}

/// A second signal while the file system hangs (frozen here, as during a snapshot): the test
/// file cannot be removed then, so after a bounded wait iogauge says which file is left rather
/// than hang silently, and exits 130 as soon as the kernel lets its threads go.
#[test]
fn a_second_sigint_on_a_hung_file_system_says_what_is_left() {
    needs_root!();
    needs_tool!("fsfreeze");
    let fs = Fs::ext4(128 * MIB, "rw");
    let (run, file) = long_run_on(&fs, "32m", "randwrite", &["--engine", "psync"]);
    // Declared after the run, so dropped before it: thawed on every path, since the frozen
    // writers cannot die (nor the run be killed) before the thaw.
    let frozen = Frozen::new(fs.path());
    run.signal("INT");
    run.wait_for("interrupted: stopping", WATCHDOG);
    run.signal("INT");
    // Bounded: iogauge says so while the file system is still frozen.
    run.wait_for("did not finish", WATCHDOG);
    assert!(
        run.stderr().contains(file.to_str().unwrap()),
        "{}",
        run.stderr()
    );
    drop(frozen);
    let done = run.finish(WATCHDOG);
    eprintln!(
        "user saw (exit {:?}):\n{}",
        done.code,
        done.stderr.trim_end()
    );
    assert_eq!(done.code, Some(130));
    assert_no_panic(&done.stderr);
}

// ---------------------------------------------------------------------------------------------
// Faults

/// ENOSPC during the fill although the free-space check passed: iogauge is paused (SIGSTOP)
/// while it fills, the test takes the rest of the space, then lets it go on (SIGCONT).
#[test]
fn no_space_during_the_fill() {
    needs_root!();
    let fs = Fs::ext4(256 * MIB, "rw");
    let avail: Vec<u64> = sh("stat", &["-f", "-c", "%a %S", fs.path().to_str().unwrap()])
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let size = (avail[0] * avail[1] - 16 * MIB) / MIB * MIB;
    let run = Running::spawn(
        fs.dir.path(),
        &[
            "run",
            fs.path().to_str().unwrap(),
            "--size",
            &size.to_string(),
            "--time",
            "1s",
            "--json",
            "--no-store",
        ],
    );
    run.wait_for("Filling", WATCHDOG);
    run.signal("STOP");
    let file = files_named(fs.path(), "iogauge-test")
        .pop()
        .expect("test file");
    let filled = std::fs::metadata(&file).unwrap().blocks() * 512;
    assert!(
        filled < size,
        "the fill must still be going on when the disk fills ({filled} of {size})"
    );
    assert!(fs.fill_up(), "the filler ends on ENOSPC");
    run.signal("CONT");
    let done = run.finish(WATCHDOG);
    eprintln!(
        "user saw (exit {:?}):\n{}",
        done.code,
        done.stderr.trim_end()
    );
    assert_eq!(done.code, Some(1));
    assert_no_panic(&done.stderr);
    let line = done.stderr.lines().last().unwrap();
    assert!(
        line.starts_with("iogauge: error: no space left on the device while filling")
            && line.contains(file.to_str().unwrap()),
        "{line}"
    );
    assert!(!file.exists(), "the partial file was removed");
    assert!(done.stdout.is_empty(), "nothing was measured");
}

/// ENOSPC during a run: writes into a sparse file the user gave (--allow-overwrite) allocate
/// blocks until the file system is full.
#[test]
fn no_space_during_a_run_on_a_sparse_file() {
    needs_root!();
    let fs = Fs::ext4(64 * MIB, "rw");
    let sparse = fs.path().join("sparse");
    File::create(&sparse).unwrap().set_len(256 * MIB).unwrap();
    let run = Running::spawn(
        fs.dir.path(),
        &[
            "run",
            sparse.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--time",
            "60s",
            "--json",
        ],
    );
    let done = run.finish(WATCHDOG);
    let doc = assert_fault(&done, sparse.to_str().unwrap(), "No space left on device");
    assert!(done.stderr.contains("the file system is full"));
    assert!(
        sparse.exists(),
        "a file iogauge did not create is never removed"
    );
    // The partial run is stored (the database is outside the full file system), error and all.
    let show = iogauge(fs.dir.path(), &["show", "last", "--json"]);
    assert!(show.status.success(), "{}", stderr_of(&show));
    let stored = json(&show.stdout);
    assert_eq!(stored["run_id"], doc["run_id"]);
    assert_eq!(stored["results"][0]["error"], doc["results"][0]["error"]);
}

/// ENOSPC during a run on a file iogauge created: on XFS with reflink, a clone made during the
/// run turns every overwrite into copy-on-write, which needs space the test has taken.
#[test]
fn no_space_during_a_run_on_a_created_file() {
    needs_root!();
    needs_tool!("mkfs.xfs");
    let fs = Fs::new(
        "mkfs.xfs",
        &["-q", "-f", "-m", "reflink=1"],
        400 * MIB,
        "rw",
    );
    let (run, file) = long_run_on(&fs, "64m", "randwrite", &[]);
    sh(
        "cp",
        &[
            "--reflink=always",
            file.to_str().unwrap(),
            fs.path().join("clone").to_str().unwrap(),
        ],
    );
    // XFS can hand back space after the first ENOSPC (reservations released on sync and
    // close), so keep taking whatever appears until iogauge has stopped.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let done = std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                fs.fill_up_as(&format!("filler.{i}"));
                i += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        // Stops the filler however this closure ends: a failed `finish` panics, and the scope
        // would otherwise wait for the filler forever.
        struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let _stop = StopOnDrop(&stop);
        run.finish(WATCHDOG)
    });
    assert_fault(&done, file.to_str().unwrap(), "No space left on device");
    assert!(!file.exists(), "the created file was removed");
}

/// EIO mid-run: the file system under a created test file shuts down.
#[test]
fn io_error_during_a_run() {
    needs_root!();
    needs_tool!("xfs_io");
    let fs = Fs::ext4(128 * MIB, "rw");
    let (run, file) = long_run_on(&fs, "32m", "randrw", &[]);
    fs.shutdown();
    let done = run.finish(WATCHDOG);
    assert_fault(&done, file.to_str().unwrap(), "Input/output error");
    // A dead file system cannot unlink: the user is told which file is left.
    assert!(
        done.stderr.contains(&format!(
            "could not remove the test file {}",
            file.display()
        )) && done.stderr.contains("remove it by hand"),
        "{}",
        done.stderr
    );
}

/// Runs random reads of a loop device over a file on a file system that shuts down once the
/// device has done 100 reads, as a dying disk does: every IO after returns EIO.
fn read_a_failing_device(extra: &[&str]) -> (Done, String) {
    let fs = Fs::ext4(128 * MIB, "rw");
    let img = fs.path().join("disk.img");
    File::create(&img).unwrap().set_len(64 * MIB).unwrap();
    let dev = LoopDev::attach(&img);
    let mut args = vec!["run", &dev.dev, "--rw", "randread", "--iodepth", "8"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--time", "60s", "--json", "--no-store"]);
    let run = Running::spawn(fs.dir.path(), &args);
    let before = device_ios(dev.name());
    wait_until("the run's reads", WATCHDOG, || {
        device_ios(dev.name()) > before + 100
    });
    fs.shutdown();
    let done = run.finish(WATCHDOG);
    (done, dev.dev.clone())
}

/// A device whose backing store fails under it: the run ends with its error and keeps what it
/// measured.
#[test]
fn a_failing_device_ends_the_run_with_its_error() {
    needs_root!();
    needs_tool!("xfs_io");
    // No completion trial: its IOs come before the measurement, and the fault must come after
    // the measurement began for something to be kept.
    let (done, dev) = read_a_failing_device(&["--complete-batch", "1"]);
    assert_fault(&done, &dev, "Input/output error");
}

/// The same fault 100 reads in, before the measurement begins (in the trial of ways to wait for
/// completions, or the 60 s ramp after it): nothing was measured, and the error says so and
/// where the run was.
#[test]
fn a_device_failing_before_the_measurement_says_so() {
    needs_root!();
    needs_tool!("xfs_io");
    let (done, dev) = read_a_failing_device(&["--ramp", "60s"]);
    let line = error_line(&done);
    assert!(
        line.contains(&dev)
            && line.contains("Input/output error")
            && line.contains("before the measurement began, in the"),
        "{line}"
    );
    assert_eq!(json(&done.stdout)["results"][0]["ios"], 0);
}

/// `losetup -d` on a loop device iogauge has open: the kernel defers the detach until the last
/// user closes it, so the run finishes normally and the device goes away after.
#[test]
fn a_loop_device_detached_mid_run_goes_away_after_the_run() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "disk", 32 * MIB, &[]);
    let dev = LoopDev::attach(&img);
    let run = Running::spawn(
        dir.path(),
        &[
            "run",
            &dev.dev,
            "--rw",
            "randread",
            // Long enough that the detach surely comes while it runs.
            "--time",
            "10s",
            "--json",
            "--no-store",
        ],
    );
    let before = device_ios(dev.name());
    wait_until("the run's reads", WATCHDOG, || {
        device_ios(dev.name()) > before + 100
    });
    sh("losetup", &["-d", &dev.dev]);
    // Deferred, not done: the run still holds the device open.
    assert!(dev.still_ours(), "detached under a run that holds it open");
    let done = run.finish(WATCHDOG);
    eprintln!(
        "user saw (exit {:?}):\n{}",
        done.code,
        done.stderr.trim_end()
    );
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let doc = json(&done.stdout);
    assert_eq!(f64_of(&doc["results"][0]["runtime_s"]), 10.0);
    // The kernel detaches once the last opener is gone, which may lag the exit a little.
    wait_until("the deferred detach", WATCHDOG, || !dev.still_ours());
}

/// EROFS from the start: a file system mounted read-only.
#[test]
fn a_read_only_file_system_is_refused_for_writes() {
    needs_root!();
    let fs = Fs::ext4(64 * MIB, "rw");
    let existing = fs.path().join("data");
    std::fs::write(&existing, vec![5u8; 8 * MIB as usize]).unwrap();
    sh("mount", &["-o", "remount,ro", fs.path().to_str().unwrap()]);
    let dir = fs.dir.path();
    let out = iogauge(dir, &["run", fs.path().to_str().unwrap(), "--no-store"]);
    let err = assert_refused(&out, &["read-only file system"]);
    eprintln!("user saw: {}", err.trim_end());
    let out = iogauge(
        dir,
        &[
            "run",
            existing.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--no-store",
        ],
    );
    let err = assert_refused(&out, &[existing.to_str().unwrap(), "read-only file system"]);
    eprintln!("user saw: {}", err.trim_end());
    let out = iogauge(
        dir,
        &[
            "run",
            existing.to_str().unwrap(),
            "--rw",
            "randread",
            "--time",
            "200ms",
            "--no-store",
        ],
    );
    assert!(out.status.success(), "reads work: {}", stderr_of(&out));
    assert_eq!(files_named(fs.path(), "iogauge-test").len(), 0);
}

/// EROFS mid-run: ext4 with errors=remount-ro meets an error and turns read-only under the run.
#[test]
fn a_file_system_turning_read_only_mid_run() {
    needs_root!();
    let fs = Fs::ext4(128 * MIB, "rw,errors=remount-ro");
    let trigger = format!("/sys/fs/ext4/{}/trigger_fs_error", fs.dev.name());
    if !Path::new(&trigger).exists() {
        skip(&format!("needs {trigger}"));
        return;
    }
    let (run, file) = long_run_on(&fs, "32m", "randwrite", &[]);
    std::fs::write(&trigger, "iogauge safety test\n").unwrap();
    let done = run.finish(WATCHDOG);
    assert_fault(&done, file.to_str().unwrap(), "Read-only file system");
    assert!(done.stderr.contains("remove it by hand"), "{}", done.stderr);
}

/// Someone deletes (or replaces) the test file mid-run: Linux keeps the open inode, the IO
/// goes on to the same blocks, the run completes and the user is told.
#[test]
fn a_target_deleted_or_replaced_mid_run() {
    for replace in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        let run = Running::spawn(
            dir.path(),
            &[
                "run",
                target.to_str().unwrap(),
                "--size",
                "16m",
                "--rw",
                "randwrite",
                "--engine",
                "psync",
                // Long enough that the test's removal surely comes while it runs.
                "--time",
                "10s",
                "--json",
                "--no-store",
            ],
        );
        run.wait_for("done in", WATCHDOG);
        run.wait_for_syscalls(100);
        std::fs::remove_file(&target).unwrap();
        if replace {
            std::fs::write(&target, b"someone else's").unwrap();
        }
        let done = run.finish(WATCHDOG);
        eprintln!(
            "user saw (exit {:?}):\n{}",
            done.code,
            done.stderr.trim_end()
        );
        assert_eq!(done.code, Some(0), "{}", done.stderr);
        assert_no_panic(&done.stderr);
        let doc = json(&done.stdout);
        let r = &doc["results"][0];
        assert_eq!(f64_of(&r["runtime_s"]), 10.0, "the run went on to the end");
        assert!(r["error"].is_null());
        let warning = if replace {
            "was replaced by another file during the run"
        } else {
            "was deleted by someone else during the run"
        };
        assert!(done.stderr.contains(warning), "{}", done.stderr);
        if replace {
            assert_eq!(
                std::fs::read(&target).unwrap(),
                b"someone else's",
                "the new file is left alone"
            );
        } else {
            assert!(!target.exists());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Limits

#[test]
fn threads_and_iodepth_are_capped_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let missing = "/nonexistent-iogauge-dir/file";
    for (flag, cap) in [("--threads", 1024u32), ("--iodepth", 4096)] {
        let over = (cap + 1).to_string();
        let out = iogauge(
            dir.path(),
            &["run", flag, &over, "--bs", "512", "--no-store"],
        );
        assert_refused(&out, &[flag, &format!("at most {cap}")]);
        // At the cap the workload is accepted; the missing directory is what stops it.
        let at = cap.to_string();
        let out = iogauge(
            dir.path(),
            &["run", missing, flag, &at, "--bs", "512", "--no-store"],
        );
        assert_refused(&out, &["does not exist"]);
    }
}

/// The buffers (threads × iodepth × bs) may take a quarter of RAM, not more, and are checked
/// before anything is allocated or created.
#[test]
fn buffers_over_a_quarter_of_ram_are_refused() {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let ram_kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("MemTotal");
    let quarter = ram_kib * 1024 / 4;
    let bs = 64 * MIB;
    let fits = quarter / bs;
    assert!(
        fits < 4096,
        "more RAM than this test can reach with --iodepth"
    );
    let dir = tempfile::tempdir().unwrap();
    let missing = "/nonexistent-iogauge-dir/file";
    let over = (fits + 1).to_string();
    let out = iogauge(
        dir.path(),
        &[
            "run",
            missing,
            "--bs",
            "64m",
            "--iodepth",
            &over,
            "--no-store",
        ],
    );
    let err = assert_refused(&out, &["quarter of RAM", "--iodepth"]);
    eprintln!("user saw: {}", err.trim_end());
    if fits > 0 {
        let out = iogauge(
            dir.path(),
            &[
                "run",
                missing,
                "--bs",
                "64m",
                "--iodepth",
                &fits.to_string(),
                "--no-store",
            ],
        );
        assert_refused(&out, &["does not exist"]);
    }
}

// ---------------------------------------------------------------------------------------------
// Bugs

/// A panic is one line that says it is a bug, with no backtrace note, and the test file is
/// still removed. The panics are injected by a debug-build-only environment variable.
#[test]
fn a_bug_is_one_line_and_still_cleans_up() {
    if !cfg!(debug_assertions) {
        skip("the panic injection exists in debug builds only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = Running::spawn_with(
        dir.path(),
        &["run", "--size", "8m", "--time", "1s", "--no-store"],
        None,
        &[("IOGAUGE_DEBUG_PANIC", "main")],
    );
    let done = run.finish(WATCHDOG);
    assert_eq!(done.code, Some(101));
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", done.stderr);
    assert!(lines[0].starts_with("iogauge: internal error:") && lines[0].contains("this is a bug"));
    assert_no_panic(&done.stderr);

    // In a worker, before the workers start together: the run ends (no hang), the error says
    // what happened, and the created file is removed.
    let run = Running::spawn_with(
        dir.path(),
        &[
            "run",
            "--size",
            "8m",
            "--threads",
            "4",
            "--time",
            "30s",
            "--json",
            "--no-store",
        ],
        None,
        &[("IOGAUGE_DEBUG_PANIC", "worker")],
    );
    let done = run.finish(WATCHDOG);
    eprintln!(
        "user saw (exit {:?}):\n{}",
        done.code,
        done.stderr.trim_end()
    );
    assert_eq!(done.code, Some(1));
    assert_no_panic(&done.stderr);
    assert!(done.stderr.contains("iogauge: internal error:"));
    assert!(done
        .stderr
        .contains("iogauge: error: a worker thread panicked"));
    assert!(files_named(dir.path(), "iogauge-test").is_empty());
}

/// fio's nrfiles: Ctrl-C while the job's IO goes round its files removes every one of them.
#[test]
fn an_interrupt_removes_every_file_of_an_nrfiles_job() {
    let dir = tempfile::tempdir().unwrap();
    let run = Running::spawn(
        dir.path(),
        &[
            "fio",
            "--no-store",
            "--",
            "--name=nr",
            "--nrfiles=3",
            "--size=3m",
            "--rw=randwrite",
            "--ioengine=psync",
            "--runtime=60",
            "--time_based",
        ],
    );
    // All three fills done, then IO under way.
    wait_until("the three fills", WATCHDOG, || {
        run.stderr().matches("done in").count() >= 3
    });
    assert_eq!(files_named(dir.path(), "iogauge-test").len(), 3);
    run.wait_for_syscalls(100);
    run.signal("INT");
    let done = run.finish(WATCHDOG);
    assert_eq!(done.code, Some(130), "{}", done.stderr);
    assert_no_panic(&done.stderr);
    assert!(
        files_named(dir.path(), "iogauge-test").is_empty(),
        "every file removed: {:?}",
        files_named(dir.path(), "iogauge-test")
    );
}
