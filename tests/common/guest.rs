//! Runs a shell script as root inside a QEMU guest on Debian's own kernel
//! (tests/guest/run-in-guest), for tests that need real md, LVM or device-mapper targets where
//! the host kernel has none. The guest sees the host's root read-only (writes stay in the
//! guest) and `disks` blank virtio disks, /dev/vda, /dev/vdb, ... in order.

use super::skip;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What the script did in the guest.
#[derive(Debug)]
pub struct GuestOutput {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl GuestOutput {
    /// The rest of the first stdout line that starts with `key` and a space: scripts print
    /// "key value" lines for the test to read.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .map(str::trim)
    }

    /// Like [`value`](Self::value), parsed as a number; fails the test, showing the output, if
    /// the line is missing or not a number.
    pub fn number(&self, key: &str) -> u64 {
        self.value(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no number {key:?} in the guest's output:\n{self}"))
    }
}

impl std::fmt::Display for GuestOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {}\n--- stdout\n{}--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// The guest's own limit on the script (run-in-guest --timeout): a deadline that turns a hang
/// into a failure, not a measure. Booting takes about 10 s under software emulation and the
/// scripts a minute or two on a quiet machine; with two guests and other tests beside them on
/// two CPUs, README's database on arrays took 453 s, and two busy loops beside CI take half of
/// what is left (issue 57: green under load). How long a guest takes is .ci/budget's to judge.
const GUEST_TIMEOUT_S: u64 = 1200;

/// The iogauge the guests run: `$IOGAUGE_GUEST_BIN` where it is set, else the test build's.
/// CI sets it to the static release binary that packaging builds anyway (.ci/run): under
/// QEMU's emulated CPU, iogauge's own work in a cell (threads, counters, findings) took twice
/// as long in the test build (opt-level 1) as in the release one, a sweep's settings 13.5 s
/// against 7 s, and the guests' time is the dearest of CI's (issue 57). The guests check
/// behaviour, not speed, so either binary serves; the release one is also the file a DBA copies.
pub fn iogauge() -> String {
    match std::env::var("IOGAUGE_GUEST_BIN") {
        Ok(bin) if !bin.is_empty() => {
            let path = Path::new(&bin);
            assert!(
                path.is_absolute() && path.is_file(),
                "IOGAUGE_GUEST_BIN={bin}: not an absolute path to a file (the guest sees the host's root, so an absolute path to iogauge)"
            );
            bin
        }
        _ => super::BIN.to_string(),
    }
}

fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest/run-in-guest")
}

/// Why the guest cannot run here, if it cannot: QEMU, a Debian kernel with its modules, and
/// busybox-static are what run-in-guest needs from the host.
fn missing() -> Option<&'static str> {
    let kernel = std::fs::read_dir("/boot").ok().is_some_and(|dir| {
        dir.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("vmlinuz-").is_some_and(|v| {
                Path::new("/lib/modules")
                    .join(v)
                    .join("modules.dep")
                    .is_file()
                    && std::fs::File::open(e.path()).is_ok()
            })
        })
    });
    if !super::have("qemu-system-x86_64") || !kernel {
        return Some("needs qemu-system-x86_64 and Debian's kernel (linux-image-amd64)");
    }
    if !Path::new("/bin/busybox").is_file() {
        return Some("needs busybox-static for the guest's initramfs");
    }
    None
}

/// Runs `script` with `sh -c` in a guest with `disks` blank disks of `disk_size` ("64M").
/// `None`, having called [`skip`], where the guest cannot run; a guest that fails to boot or to
/// finish in time fails the test (a skip would hide a broken harness).
pub fn run(disks: u32, disk_size: &str, script: &str) -> Option<GuestOutput> {
    if let Some(why) = missing() {
        skip(why);
        return None;
    }
    use std::os::unix::process::CommandExt;
    static GUESTS: super::Turns = super::Turns::new(2);
    let _turn = GUESTS.take();
    // The initramfs is built once and kept beside the other tests' scratch files.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("guest-cache");
    let child = Command::new(script_path())
        .args(["--disks", &disks.to_string(), "--disk-size", disk_size])
        .args([
            "--timeout",
            &GUEST_TIMEOUT_S.to_string(),
            "--",
            "sh",
            "-c",
            script,
        ])
        .env("IOGAUGE_GUEST_CACHE", &cache)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", script_path().display()));
    let group = child.id();
    // run-in-guest holds its own deadline; this one is for the script itself hanging (say,
    // while building the initramfs). A thread waits for it so the test can stop waiting.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(GUEST_TIMEOUT_S + 60)) {
        Ok(out) => out.expect("wait for run-in-guest"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{group}")])
                .status();
            panic!("run-in-guest did not end within {} s", GUEST_TIMEOUT_S + 60);
        }
    };
    let out = GuestOutput {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    // run-in-guest ends with this line only when the guest ran the script to its end; without
    // it, its status (125) and message are about the guest, not the script.
    let ran = out
        .stderr
        .lines()
        .any(|l| l.starts_with("run-in-guest: ") && l.contains("to power-off, status"));
    assert!(ran, "the guest did not run the script:\n{out}");
    Some(out)
}

/// Like [`run`], and fails the test, showing the guest's output, unless the script succeeded.
pub fn run_ok(disks: u32, disk_size: &str, script: &str) -> Option<GuestOutput> {
    let out = run(disks, disk_size, script)?;
    assert_eq!(out.status, 0, "the script failed in the guest:\n{out}");
    Some(out)
}
