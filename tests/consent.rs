//! Consent and what iogauge leaves behind, tried as an adversary would (docs/safety.md): every
//! path that writes asks the target, nothing iogauge reads back steers a root write, no name in
//! a shared directory is predictable, and a killed run's leftovers are named and cleaned.
//!
//! Every test runs iogauge with a private run directory (IOGAUGE_RUN_DIR), so its ledgers and
//! journals are its own and no other test's command cleans them up.

use crate::common;

use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A test's own directory, results database and run directory.
struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        std::fs::create_dir(dir.path().join("run")).unwrap();
        std::fs::set_permissions(
            dir.path().join("run"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        Place { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run_dir(&self) -> PathBuf {
        self.path().join("run")
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(self.path())
            .env("IOGAUGE_DB", self.path().join("results.db"))
            .env("IOGAUGE_RUN_DIR", self.run_dir())
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run iogauge")
    }

    /// iogauge started in the background, its stderr read as it comes, killed on drop.
    fn spawn(&self, args: &[&str]) -> Spawned {
        Spawned::start(self.cmd(args))
    }

    /// Starts the commands of `kinds` in turn, `n` in all, each killed with SIGKILL after a
    /// pseudo-random delay of `from_ms` to `from_ms + span_ms` (from `seed`, so a failure
    /// repeats). The delay is the experiment's design — a random moment — not a wait for
    /// anything.
    fn kill_at_random_moments(
        &self,
        kinds: &[&[&str]],
        n: usize,
        from_ms: u64,
        span_ms: u64,
        seed: u64,
    ) -> Vec<u32> {
        let mut rng = seed | 1;
        let mut pids = Vec::new();
        for k in 0..n {
            let mut child = self
                .cmd(kinds[k % kinds.len()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            std::thread::sleep(Duration::from_millis(from_ms + rng % span_ms));
            pids.push(child.id());
            let _ = child.kill();
            let _ = child.wait();
        }
        pids
    }
}

fn sha(path: &Path) -> String {
    sh("sha256sum", &[path.to_str().unwrap()])
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

fn random_file(path: &Path, mib: usize) {
    let mut buf = vec![0u8; mib << 20];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut buf)
        .unwrap();
    std::fs::write(path, buf).unwrap();
}

const SUITES: [&str; 10] = [
    "quick",
    "matrix",
    "seq",
    "fsync",
    "seeks",
    "mixes",
    "full",
    "snia-iops",
    "snia-latency",
    "snia-throughput",
];

/// Issue 20, item 1: `suite snia-latency customer.db` preconditioned (destroyed) an existing
/// file without consent. Every suite, with and without --precondition, leaves an existing
/// file's bytes as they were; with --precondition it is refused before anything runs.
#[test]
fn no_suite_writes_an_existing_file_without_consent() {
    let p = Place::new();
    let file = p.path().join("customer.db");
    random_file(&file, 8);
    let before = sha(&file);
    for suite in SUITES {
        let out = p.run(&[
            "suite",
            suite,
            "customer.db",
            "--precondition",
            "--no-store",
        ]);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{suite} --precondition: {err}");
        assert!(
            err.contains("--allow-overwrite") && err.lines().count() == 1,
            "{suite} --precondition: {err}"
        );
        assert_eq!(
            sha(&file),
            before,
            "suite {suite} --precondition changed the file"
        );
    }
    // Without --precondition: what only reads runs (briefly), what writes is left out.
    for suite in SUITES {
        let out = p.run(&[
            "suite",
            suite,
            "customer.db",
            "--cell-time",
            "100ms",
            "--repeat",
            "1",
            "--no-store",
        ]);
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "{suite}: {}",
            stderr_of(&out)
        );
        assert_eq!(sha(&file), before, "suite {suite} changed the file");
    }
}

/// The same on block devices: a signed one and a mounted one are refused with every suite,
/// --allow-overwrite or not, and their bytes stay as they were.
#[test]
fn no_suite_writes_a_signed_or_mounted_device() {
    needs_root!();
    let p = Place::new();
    let signed = RamLoop::new(64 << 20);
    sh("mkfs.ext4", &["-q", &signed.dev.dev]);
    let mounted = RamLoop::new(64 << 20);
    sh("mkfs.ext4", &["-q", &mounted.dev.dev]);
    // Read-only, so the file system itself (lazy inode-table init, journal commits) changes
    // no byte of the device while the test checks that iogauge did not.
    let _m = Mount::new(&mounted.dev.dev, &p.path().join("mnt"), "ro");
    for dev in [&signed.dev, &mounted.dev] {
        let before = sha(Path::new(&dev.dev));
        for suite in SUITES {
            for extra in [
                &["--precondition"][..],
                &["--precondition", "--allow-overwrite"],
            ] {
                let mut args = vec![
                    "suite",
                    suite,
                    &dev.dev,
                    "--no-store",
                    "--cell-time",
                    "100ms",
                ];
                args.extend_from_slice(extra);
                let out = p.run(&args);
                let err = stderr_of(&out);
                assert_eq!(
                    out.status.code(),
                    Some(2),
                    "{suite} {extra:?} on {}: {err}",
                    dev.dev
                );
                assert!(
                    err.contains("ext")
                        || err.contains("mounted")
                        || err.contains("--allow-overwrite"),
                    "{suite} {extra:?} on {}: {err}",
                    dev.dev
                );
            }
        }
        assert_eq!(sha(Path::new(&dev.dev)), before, "{} changed", dev.dev);
    }
}

/// Issue 20, item 3: with --allow-overwrite and no path, a link planted at the default
/// `iogauge-test.PID` name was followed. The shell `exec`s iogauge, so the PID it plants for
/// is iogauge's own.
#[test]
fn a_link_planted_at_the_default_name_is_never_followed() {
    let p = Place::new();
    let victim = p.path().join("victim");
    random_file(&victim, 1);
    let before = sha(&victim);
    let line = format!(
        "ln -s {} iogauge-test.$$ && exec '{BIN}' run --allow-overwrite --rw randwrite --bs 4k --size 4m --time 200ms --no-store",
        victim.display()
    );
    let out = Command::new("sh")
        .args(["-c", &line])
        .current_dir(p.path())
        .env("IOGAUGE_RUN_DIR", p.run_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        sha(&victim),
        before,
        "the write went through the planted link"
    );
    let err = stderr_of(&out);
    assert!(err.contains("iogauge-test."), "{err}");
}

/// Issue 20, item 2: a forged knob journal naming an ordinary file was written by
/// `iogauge list`. Only block-queue attributes are ever restored; a journal that is a link or
/// sits in a directory others may write to is not read at all.
#[test]
fn a_forged_knob_journal_writes_nothing() {
    let p = Place::new();
    let victim = p.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let journal = serde_json::json!({"pid": 999_999, "restore": [[victim, "owned"]]});
    std::fs::write(
        p.run_dir().join("knobs-999999.json"),
        serde_json::to_vec(&journal).unwrap(),
    )
    .unwrap();
    let traversal = serde_json::json!({"pid": 999_998, "restore": [[
        format!("/sys/devices/../..{}", victim.display()), "owned"]]});
    std::fs::write(
        p.run_dir().join("knobs-999998.json"),
        serde_json::to_vec(&traversal).unwrap(),
    )
    .unwrap();
    let out = p.run(&["list"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let err = stderr_of(&out);
    assert!(err.contains("refused to write"), "{err}");

    // A journal reached through a link is not read.
    let elsewhere = p.path().join("elsewhere.json");
    std::fs::write(&elsewhere, serde_json::to_vec(&journal).unwrap()).unwrap();
    std::fs::remove_file(p.run_dir().join("knobs-999999.json")).ok();
    std::fs::remove_file(p.run_dir().join("knobs-999998.json")).ok();
    std::os::unix::fs::symlink(&elsewhere, p.run_dir().join("knobs-999997.json")).unwrap();
    let out = p.run(&["list"]);
    assert!(
        !stderr_of(&out).contains("refused to write"),
        "{}",
        stderr_of(&out)
    );

    // A run directory others may write to is refused for a sweep, and not read by others.
    std::fs::set_permissions(p.run_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = p.run(&["list"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(
        !stderr_of(&out).contains("refused to write"),
        "{}",
        stderr_of(&out)
    );
}

/// A journal left by a sweep whose PID now belongs to a live process (here: this test) is
/// still restored: a live sweep is known by the lock on its journal, not by its PID.
#[test]
fn a_dead_sweeps_journal_is_restored_even_when_its_pid_was_reused() {
    needs_root!();
    let p = Place::new();
    let ram = RamLoop::new(16 << 20);
    let attr = std::fs::canonicalize(format!("/sys/block/{}/queue", ram.dev.name()))
        .unwrap()
        .join("read_ahead_kb");
    let original = std::fs::read_to_string(&attr).unwrap().trim().to_string();
    let changed = if original == "4096" { "256" } else { "4096" };
    let _restore = QueueGuard(attr.clone(), original.clone());
    std::fs::write(&attr, changed).unwrap();
    let journal = serde_json::json!({"pid": std::process::id(), "restore": [[attr, original]]});
    std::fs::write(
        p.run_dir()
            .join(format!("knobs-{}.json", std::process::id())),
        serde_json::to_vec(&journal).unwrap(),
    )
    .unwrap();
    let out = p.run(&["list"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        std::fs::read_to_string(&attr).unwrap().trim(),
        original,
        "{}",
        stderr_of(&out)
    );
    assert!(stderr_of(&out).contains("put back"), "{}", stderr_of(&out));
}

struct QueueGuard(PathBuf, String);

impl Drop for QueueGuard {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, &self.1);
    }
}

/// Two sweeps of one device: the second is refused while the first runs, instead of taking
/// the first's temporary value for the original.
#[test]
fn a_second_sweep_of_a_device_is_refused() {
    needs_root!();
    let p = Place::new();
    let ram = RamLoop::new(64 << 20);
    let mut first = p.spawn(&[
        "sweep",
        "seq",
        &ram.dev.dev,
        "--allow-overwrite",
        "--knob",
        "read_ahead_kb=128,256",
        "--cell-time",
        "2s",
        "--repeat",
        "1",
        "--no-store",
    ]);
    // Wait until the first sweep is at its first setting (it holds the lock by then).
    first.wait_for("[setting 1/", WATCHDOG);
    let out = p.run(&[
        "sweep",
        "seq",
        &ram.dev.dev,
        "--allow-overwrite",
        "--knob",
        "read_ahead_kb=512",
        "--no-store",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("another iogauge sweep"),
        "{}",
        stderr_of(&out)
    );
}

/// Issue 20, item 4: kill -9 at random moments of runs and suites (the fill, the cells, the
/// preconditioning) leaves test files that nothing named. Now the next command names them,
/// `iogauge clean` removes them, and the results database is intact.
#[test]
fn killed_runs_leave_nothing_after_clean() {
    let p = Place::new();
    let kinds: [&[&str]; 3] = [
        &[
            "run",
            ".",
            "--size",
            "64m",
            "--time",
            "5s",
            "--rw",
            "randwrite",
        ],
        &["suite", "quick", ".", "--size", "64m", "--cell-time", "1s"],
        &[
            "run",
            ".",
            "--size",
            "64m",
            "--time",
            "5s",
            "--precondition",
            "--rw",
            "randread",
        ],
    ];
    // Somewhere in the fill, the preconditioning or the cells.
    p.kill_at_random_moments(&kinds, 12, 50, 1500, 0x9e37_79b9_7f4a_7c15);
    let out = p.run(&["clean", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let left = test_files(p.path());
    for f in &left {
        assert!(
            listed.contains(&f.display().to_string()),
            "{} left but not listed:\n{listed}",
            f.display()
        );
    }
    let out = p.run(&["clean"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        test_files(p.path()).is_empty(),
        "{:?}",
        test_files(p.path())
    );
    // Each ledger left, with what it holds and whether its PID lives: what a failure needs to
    // be understood (one left in a run beside 36 other tests, not again in six alone).
    let ledgers: Vec<String> = std::fs::read_dir(p.run_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("ledger-"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.trim_start_matches("ledger-").trim_end_matches(".json");
            format!(
                "{name} (pid alive: {}): {}",
                Path::new("/proc").join(pid).exists(),
                std::fs::read_to_string(e.path()).unwrap_or_default()
            )
        })
        .collect();
    assert!(
        ledgers.is_empty(),
        "ledgers left after clean:\n{}\nclean --dry-run listed:\n{listed}",
        ledgers.join("\n")
    );
    let again = p.run(&["clean"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to clean"));
    if p.path().join("results.db").exists() {
        let check = Command::new("python3")
            .args([
                "-c",
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('pragma integrity_check').fetchone()[0])",
            ])
            .arg(p.path().join("results.db"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "ok");
        // No empty run: a run killed before its first result is not in the store.
        let list = p.run(&["list"]);
        assert!(
            !String::from_utf8_lossy(&list.stdout).contains("0 results"),
            "{}",
            String::from_utf8_lossy(&list.stdout)
        );
    }
}

fn test_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("iogauge-test."))
        })
        .collect()
}

/// A killed run's leftovers are named by the next command, whatever it is.
#[test]
fn the_next_command_names_what_a_killed_run_left() {
    let p = Place::new();
    let mut child = p.spawn(&[
        "run",
        ".",
        "--size",
        "16m",
        "--time",
        "60s",
        "--rw",
        "randread",
        "--no-store",
    ]);
    // Measuring has begun once the fill is done; dropping it is a SIGKILL.
    child.wait_for("done", WATCHDOG);
    drop(child);
    let left = test_files(p.path());
    assert_eq!(left.len(), 1, "{left:?}");
    let out = p.run(&["list"]);
    let err = stderr_of(&out);
    assert!(
        err.contains(&left[0].display().to_string()) && err.contains("iogauge clean"),
        "{err}"
    );
}

/// Issue 20, item 4: a second Ctrl-C with --keep deleted the kept file.
#[test]
fn a_second_interrupt_keeps_what_keep_asked_for() {
    let p = Place::new();
    let mut child = p.spawn(&[
        "run",
        "kept.dat",
        "--size",
        "16m",
        "--time",
        "60s",
        "--rw",
        "randread",
        "--keep",
        "--no-store",
    ]);
    child.wait_for("done", WATCHDOG);
    child.signal("INT");
    child.wait_for("interrupted: stopping", WATCHDOG);
    child.signal("INT");
    let status = child.finish(WATCHDOG).status;
    assert_eq!(status.code(), Some(130));
    assert!(
        p.path().join("kept.dat").exists(),
        "the kept file was removed"
    );
}

/// Issue 20, item 6: durations that overflowed panicked (exit 101) or allocated 144 GB.
#[test]
fn huge_durations_are_one_line_errors() {
    let p = Place::new();
    for args in [
        &["run", "--time", "99999999999999h", "--no-store"][..],
        &["run", "--time", "18446744073709551615s", "--no-store"],
        &["run", "--ramp", "5124095576030431h", "--no-store"],
        &[
            "suite",
            "quick",
            "--cell-time",
            "5124095576030431h",
            "--dry-run",
        ],
        &["run", "--interval", "5124095576030431h", "--no-store"],
        &["run", "--time", "1000000h", "--no-store"],
    ] {
        let out = p.run(args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("30 days"), "{args:?}: {err}");
        assert!(test_files(p.path()).is_empty(), "{args:?} left a file");
    }
}

/// Issue 20, item 7: labels with newlines and terminal escapes were stored and printed raw.
#[test]
fn labels_are_printable() {
    let p = Place::new();
    let out = p.run(&[
        "run",
        "--engine",
        "null",
        "--time",
        "100ms",
        "--label",
        "a\nb\x1b[31m",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(!stderr_of(&out).contains('\x1b'), "{}", stderr_of(&out));
}

/// Issue 20, item 7: a results database held locked was found only after the fill; now the
/// run stops (after SQLite's busy wait of 30 s) before it writes a byte.
#[test]
fn a_locked_results_database_is_found_before_the_fill() {
    let p = Place::new();
    let db = p.path().join("results.db");
    // Create it, then hold it with an exclusive transaction from another process.
    let out = p.run(&["run", "--engine", "null", "--time", "100ms"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let mut holder = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read()",
        ])
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "held");
    let out = p.run(&["run", "data", "--size", "64m", "--time", "1s"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("results database"), "{err}");
    assert!(
        !p.path().join("data").exists(),
        "the fill ran while the database was locked"
    );
    let _ = holder.stdin.take().unwrap().write_all(b"");
    let _ = holder.kill();
    let _ = holder.wait();
}

/// Issue 20, item 5: one client could end the listener (a 1.5 GiB line, 129 idle
/// connections). Now a long first line is cut off, idle connections beyond the limit are
/// told to come back, and the listener keeps answering.
#[test]
fn the_listener_survives_its_clients() {
    let p = Place::new();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut listener = p.spawn(&["fsync-check", "listen", &addr, "--records", "records"]);
    listener.wait_for("listening on", WATCHDOG);
    // A line that never ends.
    let mut long = std::net::TcpStream::connect(&addr).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..16 {
        if long.write_all(&chunk).is_err() {
            break;
        }
    }
    // (Its answer may be lost to the reset of a socket closed with data unread: what matters
    // is that the listener lives on and answers the next client.)
    drop(long);
    // Many idle connections.
    let idle: Vec<std::net::TcpStream> = (0..150)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    // The listener still answers a verifier (with an error: nothing recorded), or says it is
    // busy — it does not die.
    assert!(listener.alive(), "the listener died");
    drop(idle);
    // Once the idle clients are gone, a verifier is answered on its merits (nothing recorded
    // for that name), not turned away as busy: a listener refusing everyone would answer
    // "error" too. Each closed client frees its place when the thread serving it reads the
    // end of its stream, which the listener learns a moment after the close: until then a
    // verifier may be told the listener is busy, and asks again.
    let mut answer = String::new();
    poll_until(WATCHDOG, || {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(b"iogauge-fsync-check 1 verify nothing\n")
            .unwrap();
        answer.clear();
        BufReader::new(&s).read_line(&mut answer).unwrap();
        !answer.contains("serving as many clients as it can")
    });
    assert!(
        answer.starts_with("error no writer has written nothing"),
        "{answer:?}"
    );
    assert!(listener.alive(), "the listener died");
    // Its records directory is private.
    let md = std::fs::metadata(p.path().join("records")).unwrap();
    assert_eq!(md.permissions().mode() & 0o077, 0);
    assert_eq!(md.uid(), std::fs::metadata("/proc/self").unwrap().uid());
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Issue 20, item 3: a test file swapped for a link between cells (in a directory others may
/// write to) was written through. Workers open the file by its handle, and a swap stops the
/// run with a message.
#[test]
fn a_test_file_swapped_for_a_link_between_cells_is_not_followed() {
    let p = Place::new();
    let victim = p.path().join("victim");
    random_file(&victim, 16);
    let before = sha(&victim);
    let mut child = p.spawn(&[
        "suite",
        "seq",
        "data",
        "--size",
        "16m",
        "--cell-time",
        "300ms",
        "--repeat",
        "1",
        "--no-store",
    ]);
    child.wait_for("[1/", WATCHDOG);
    std::fs::rename(p.path().join("data"), p.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(&victim, p.path().join("data")).unwrap();
    child.wait_for("replaced", WATCHDOG);
    let status = child.finish(WATCHDOG).status;
    assert_eq!(sha(&victim), before, "a write went through the link");
    assert!(!status.success());
}

/// Issue 20, "done when": kill -9 at random moments of knob sweeps, file-system sweeps and
/// `db pgbench` (with a memory cgroup), then one `iogauge clean`: no changed knob, no mount,
/// no signature, no server, cluster or cgroup is left.
#[test]
fn killed_sweeps_and_databases_leave_nothing_after_clean() {
    needs_root!();
    needs_tool!("mkfs.ext4");
    let pg_bin = std::fs::read_dir("/usr/lib/postgresql").ok().and_then(|d| {
        d.flatten()
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("pgbench").exists())
    });
    if pg_bin.is_none() {
        needs_tool!("pgbench");
    }
    let p = Place::new();
    let knob_dev = RamLoop::new(64 << 20);
    let scratch = RamLoop::new(256 << 20);
    // A database in a file system iogauge builds (db --scratch): a server inside a mount.
    let db_scratch = RamLoop::new(256 << 20);
    let attr = format!("/sys/block/{}/queue/read_ahead_kb", knob_dev.dev.name());
    let original = std::fs::read_to_string(&attr).unwrap().trim().to_string();
    let _restore = QueueGuard(PathBuf::from(&attr), original.clone());
    let suite = p.path().join("tiny.toml");
    std::fs::write(
        &suite,
        "name = \"tiny\"\ndescription = \"one small cell\"\n[[group]]\ntitle = \"t\"\nrw = [\"randwrite\"]\nbs = [\"4k\"]\n",
    )
    .unwrap();
    let target = p.path().join("pg");
    std::fs::create_dir(&target).unwrap();
    let suite_s = suite.to_str().unwrap().to_string();
    let target_s = target.to_str().unwrap().to_string();
    let kinds: Vec<Vec<&str>> = vec![
        vec![
            "sweep",
            "--file",
            &suite_s,
            &knob_dev.dev.dev,
            "--allow-overwrite",
            "--knob",
            "read_ahead_kb=128,256,512",
            "--cell-time",
            "1s",
            "--repeat",
            "1",
        ],
        vec![
            "sweep",
            "--file",
            &suite_s,
            "--scratch",
            &scratch.dev.dev,
            "--fs",
            "ext4",
            "--cell-time",
            "1s",
            "--repeat",
            "1",
            "--size",
            "32m",
        ],
        vec![
            "db",
            "pgbench",
            &target_s,
            "--scale",
            "1",
            "--clients",
            "2",
            "--time",
            "3s",
            "--storage-time",
            "1s",
            "--memory-limit",
            "512m",
        ],
        vec![
            "db",
            "pgbench",
            "--scratch",
            &db_scratch.dev.dev,
            "--fs",
            "ext4",
            "--scale",
            "1",
            "--clients",
            "2",
            "--time",
            "3s",
            "--storage-time",
            "1s",
        ],
    ];
    let kinds: Vec<&[&str]> = kinds.iter().map(Vec::as_slice).collect();
    let killed = p.kill_at_random_moments(&kinds, 12, 200, 3000, 0x2545_f491_4f6c_dd1d);
    // The kills left something for clean to undo (else this test proves nothing about it).
    let pending = p.run(&["clean", "--dry-run"]);
    assert!(
        !String::from_utf8_lossy(&pending.stdout).contains("nothing to clean"),
        "the kills left nothing behind: {}",
        stderr_of(&pending)
    );
    let out = p.run(&["clean"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr_of(&out)
    );
    // The knob is back (any command restores it; clean is one).
    assert_eq!(std::fs::read_to_string(&attr).unwrap().trim(), original);
    // No mount of the scratch devices, no signature on them.
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    for dev in [&scratch.dev.dev, &db_scratch.dev.dev] {
        assert!(
            !mounts
                .lines()
                .any(|l| l.split_whitespace().next() == Some(dev.as_str())),
            "{dev}: {mounts}"
        );
        assert!(blank(dev), "{dev} keeps a signature");
    }
    // No server in a file system one of the killed commands built for one (its mount point is
    // named with its PID; other tests' sweeps may be running beside this one).
    let built = Command::new("pgrep")
        .args(["-a", "-f", "iogauge-scratch-"])
        .output()
        .unwrap();
    let built = String::from_utf8_lossy(&built.stdout);
    let ours: Vec<&str> = built
        .lines()
        .filter(|l| {
            l.contains("postgres")
                && killed
                    .iter()
                    .any(|pid| l.contains(&format!("iogauge-scratch-{pid}-")))
        })
        .collect();
    assert!(ours.is_empty(), "{ours:#?}");
    // No server, cluster or cgroup.
    let servers = Command::new("pgrep")
        .args(["-a", "-f", &target_s])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&servers.stdout).contains("postgres"),
        "{}",
        String::from_utf8_lossy(&servers.stdout)
    );
    let clusters: Vec<_> = std::fs::read_dir(&target)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-pg-"))
        .map(|e| e.path())
        .collect();
    assert!(clusters.is_empty(), "{clusters:?}");
    for root in ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"] {
        if let Ok(d) = std::fs::read_dir(root) {
            // Only the cgroups of the runs this test killed: iogauge names each for its pid.
            let ours: Vec<_> = d
                .flatten()
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    killed.iter().any(|pid| name == format!("iogauge-pg-{pid}"))
                })
                .map(|e| e.path())
                .collect();
            assert!(ours.is_empty(), "{ours:?}");
        }
    }
    let again = p.run(&["clean"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to clean"));
}

/// Issue 20, item 5: any client could overwrite a writer's record or forge one that made
/// `verify` print "LIES: 50 of 50" for honest storage. Records are per writer (its run id);
/// the verifier asks for the one whose id is stamped in the target.
#[test]
fn a_forged_record_cannot_judge_a_file() {
    let p = Place::new();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut listener = p.spawn(&["fsync-check", "listen", &addr, "--records", "records"]);
    listener.wait_for("listening on", WATCHDOG);
    let target = p.path().join("fc.img");
    let t = target.to_str().unwrap();
    let w = p.run(&[
        "fsync-check",
        "write",
        t,
        "--to",
        &addr,
        "--size",
        "1MiB",
        "--count",
        "50",
    ]);
    assert!(w.status.success(), "{}", stderr_of(&w));
    // A forger, knowing the target's name but not the writer's run id, claims 50 synced
    // writes of generation 1000 that the file cannot hold.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let name = format!(
        "{}:{}",
        host.trim(),
        std::fs::canonicalize(&target).unwrap().display()
    );
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.write_all(format!("iogauge-fsync-check 1 write 1234abcd 99 16384 {name}\n").as_bytes())
        .unwrap();
    let mut ok = String::new();
    BufReader::new(&s).read_line(&mut ok).unwrap();
    assert_eq!(ok.trim(), "ok");
    let mut forged = Vec::new();
    for i in 0..50u64 {
        for kind in [b'P', b'A'] {
            forged.push(kind);
            forged.extend_from_slice(&(i * 16384).to_le_bytes());
            forged.extend_from_slice(&1000u64.to_le_bytes());
        }
    }
    s.write_all(&forged).unwrap();
    drop(s);
    // The forger's session is over once the listener has seen the connection close; a
    // verifier asking now gets the writer's own record either way.
    let v = p.run(&["fsync-check", "verify", t, "--to", &addr]);
    let out = String::from_utf8_lossy(&v.stdout);
    assert!(out.starts_with("honest: 0 of "), "{out}{}", stderr_of(&v));
    assert_eq!(v.status.code(), Some(0));
}
