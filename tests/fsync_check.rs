//! fsync-check against ground truth: iogauge-fakedisk, a FUSE disk with a volatile write
//! cache. Listen, write a bounded number of synced blocks, cut the power (SIGKILL the disk and
//! lazily unmount it), reboot (mount it again over what it persisted) and verify. The honest
//! disk persists on every sync, so nothing acknowledged may be lost; the lying one never
//! persists, so everything acknowledged is lost — every time, whatever the machine's load.

use crate::common;
use common::*;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const SIZE: &str = "4MiB";
const SIZE_BYTES: u64 = 4 << 20;
const WRITES: &str = "60";

/// Starts a listener on a free loopback port; it and the address it printed.
fn listen(records: &Path) -> (Child, String) {
    let mut listener = Command::new(BIN)
        .args(["fsync-check", "listen", "127.0.0.1:0", "--records"])
        .arg(records)
        .env("IOGAUGE_RUN_DIR", own_run_dir(records.parent().unwrap()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(listener.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    // Keep reading the listener's messages: a closed stderr stops it, as `| head` would.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let addr = line
        .split_whitespace()
        .skip_while(|w| *w != "on")
        .nth(1)
        .map(|a| a.trim_end_matches(',').to_string());
    match addr {
        Some(a) => (listener, a),
        None => {
            let _ = listener.kill();
            panic!("the listener did not say where it listens: {line:?}")
        }
    }
}

/// Everything a test started; dropping it kills and unmounts whatever is still there, on
/// every path out of the test.
struct Rig {
    dir: tempfile::TempDir,
    listener: Child,
    addr: String,
    disk: Option<FakeDisk>,
}

impl Rig {
    fn new() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("mnt")).unwrap();
        let (listener, addr) = listen(&dir.path().join("records"));
        Rig {
            dir,
            listener,
            addr,
            disk: None,
        }
    }

    fn mnt(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }

    fn target(&self) -> PathBuf {
        self.mnt().join("disk")
    }

    /// Mounts the fake disk over the backing file (created on the first mount).
    fn power_on(&mut self, lie: &[&str]) {
        let backing = self.dir.path().join("backing.img");
        self.disk = Some(FakeDisk::mount(&backing, &self.mnt(), SIZE_BYTES, lie));
    }

    /// Kills the disk with everything it held in memory and detaches the dead mount.
    fn power_cut(&mut self) {
        self.disk = None;
    }

    fn iogauge(&self, args: &[&str]) -> std::process::Output {
        iogauge(self.dir.path(), args)
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.power_cut();
        let _ = self.listener.kill();
        let _ = self.listener.wait();
    }
}

/// One power-cut cycle; the verifier's stdout and exit code, and how many writes it checked.
fn cycle(lie: &[&str], sync: &str) -> (String, i32) {
    let mut rig = Rig::new();
    rig.power_on(lie);
    let target = rig.target();
    let target = target.to_str().unwrap();
    let w = rig.iogauge(&[
        "fsync-check",
        "write",
        target,
        "--to",
        &rig.addr,
        "--sync",
        sync,
        "--size",
        SIZE,
        "--count",
        WRITES,
        "--allow-overwrite",
    ]);
    assert!(w.status.success(), "write failed: {}", stderr_of(&w));
    assert!(
        stderr_of(&w).contains(&format!("{WRITES} writes synced")),
        "{}",
        stderr_of(&w)
    );
    rig.power_cut();
    rig.power_on(lie);
    let v = rig.iogauge(&["fsync-check", "verify", target, "--to", &rig.addr]);
    let out = String::from_utf8_lossy(&v.stdout).into_owned();
    eprintln!("{lie:?} {sync}: {}{}", out, stderr_of(&v));
    (out, v.status.code().unwrap_or(-1))
}

/// "N of M acknowledged writes lost": (N, M).
fn lost_of(line: &str) -> (u64, u64) {
    let nums: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect();
    (nums[0], nums[1])
}

#[test]
fn honest_disk_loses_nothing_acknowledged() {
    if !can_mount_fakedisk() {
        return;
    }
    for sync in ["fsync", "fdatasync", "odsync"] {
        let (out, code) = cycle(&[], sync);
        assert!(out.starts_with("honest: 0 of "), "{sync}: {out}");
        let (lost, total) = lost_of(&out);
        assert_eq!(lost, 0);
        // 60 writes to 255 blocks: some land on the same block, most do not.
        assert!(total > 0 && total <= 60, "{sync}: {out}");
        assert_eq!(code, 0, "{sync}: {out}");
    }
}

#[test]
fn lying_disk_is_caught_every_time() {
    if !can_mount_fakedisk() {
        return;
    }
    for sync in ["fsync", "fdatasync", "odsync"] {
        let (out, code) = cycle(&["--lie"], sync);
        assert!(out.starts_with("LIES: "), "{sync}: {out}");
        let (lost, total) = lost_of(&out);
        // Nothing was ever persisted: every acknowledged block is gone.
        assert_eq!(lost, total, "{sync}: {out}");
        assert!(out.contains("unwritten"), "{sync}: {out}");
        assert_eq!(code, 1, "{sync}: {out}");
    }
}

#[test]
fn disk_that_writes_back_late_is_caught_on_what_it_still_held() {
    if !can_mount_fakedisk() {
        return;
    }
    // A cache of 8 pages (two 16 KiB blocks) written back only under pressure: all but the
    // one or two blocks still cached at the cut survive; the newest write is always cached.
    let (out, code) = cycle(&["--lie-cache", "8"], "fsync");
    assert!(out.starts_with("LIES: "), "{out}");
    let (lost, total) = lost_of(&out);
    assert!((1..=2).contains(&lost) && lost < total, "{out}");
    assert_eq!(code, 1, "{out}");
}

#[test]
fn write_refuses_what_is_not_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("precious"), b"data").unwrap();
    let out = iogauge(
        p,
        &["fsync-check", "write", "precious", "--to", "127.0.0.1:1"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("--allow-overwrite"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read(p.join("precious")).unwrap(), b"data");

    let out = iogauge(
        p,
        &[
            "fsync-check",
            "write",
            "/proc/self/x",
            "--to",
            "127.0.0.1:1",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("/proc, which is not storage"),
        "{}",
        stderr_of(&out)
    );

    let out = iogauge(p, &["fsync-check", "write", ".", "--to", "127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let out = iogauge(
        p,
        &[
            "fsync-check",
            "write",
            "new",
            "--to",
            "127.0.0.1:1",
            "--block",
            "6k",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(!p.join("new").exists());
    assert_eq!(stderr_of(&out).lines().count(), 1, "{}", stderr_of(&out));
}

/// The gate every path passes: a loop device's backing file is never written, even with
/// consent (that would write under whatever uses the loop device).
#[test]
fn write_never_writes_a_loop_devices_backing_file() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let lo = blank_loop(p, "backing.img", 8 << 20, 512);
    let out = iogauge(
        p,
        &[
            "fsync-check",
            "write",
            "backing.img",
            "--to",
            "127.0.0.1:1",
            "--allow-overwrite",
            "--size",
            "1m",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains(&format!("is the backing file of {}", lo.dev)),
        "{}",
        stderr_of(&out)
    );
    let img = std::fs::read(p.join("backing.img")).unwrap();
    assert!(img.iter().all(|&b| b == 0), "the backing file was written");
}

#[test]
fn verify_names_a_target_the_listener_never_heard_of() {
    let rig = Rig::new();
    let out = rig.iogauge(&["fsync-check", "verify", "nothing-here", "--to", &rig.addr]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("no writer has written"),
        "{}",
        stderr_of(&out)
    );
}

/// A file system that keeps its promises (whatever the test directory is on) checks honest,
/// and the listener's record survives the listener: a restarted one serves the verifier.
#[test]
fn plain_file_checks_honest_across_a_listener_restart() {
    let mut rig = Rig::new();
    let t = rig.dir.path().join("target.bin");
    let t = t.to_str().unwrap();
    let w = rig.iogauge(&[
        "fsync-check",
        "write",
        t,
        "--to",
        &rig.addr,
        "--size",
        "1MiB",
        "--count",
        "20",
    ]);
    assert!(w.status.success(), "{}", stderr_of(&w));
    let _ = rig.listener.kill();
    let _ = rig.listener.wait();
    // A second listener over the same records directory.
    let (mut l, addr) = listen(&rig.dir.path().join("records"));
    let v = rig.iogauge(&["fsync-check", "verify", t, "--to", &addr]);
    // A second write run reuses its own file without --allow-overwrite.
    let w = rig.iogauge(&[
        "fsync-check",
        "write",
        t,
        "--to",
        &addr,
        "--size",
        "1MiB",
        "--count",
        "1",
    ]);
    let _ = l.kill();
    let _ = l.wait();
    let out = String::from_utf8_lossy(&v.stdout);
    assert!(out.starts_with("honest: 0 of "), "{out}{}", stderr_of(&v));
    assert_eq!(v.status.code(), Some(0));
    assert!(w.status.success(), "{}", stderr_of(&w));
}
