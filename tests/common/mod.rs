//! Helpers shared by the end-to-end tests: run the binary in a test's own directory (with its
//! own results database) and read what it printed.

// Each test crate uses its own subset.
#![allow(dead_code, unused_macros)]

pub mod guest;
pub mod trace;

use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_iogauge");

/// Runs iogauge in `dir`, with `dir/results.db` as its results database and its own run
/// directory (crash ledgers, knob journals), so what one test's killed run leaves is never
/// named or cleaned by another test's command.
pub fn iogauge(dir: &Path, args: &[&str]) -> Output {
    iogauge_env(dir, args, &[])
}

/// [`iogauge`] with more variables in its environment.
pub fn iogauge_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    output_within(
        Command::new(BIN)
            .args(args)
            .current_dir(dir)
            .env("IOGAUGE_DB", dir.join("results.db"))
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir))
            .envs(env.iter().copied()),
        DEADLINE,
    )
}

/// The longest any one command of a test may take: the longest runs (a suite of the
/// precision tests on a busy machine) take about two minutes, so a command still running after
/// ten has hung, and the test fails saying so instead of holding CI until its own limit.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

/// `cmd.output()`, but a command still running after `limit` is killed (SIGKILL) and the test
/// fails naming it. The watchdog is a thread waiting on a channel with a time-out, not a
/// polling loop: the command's end wakes it at once.
pub fn output_within(cmd: &mut Command, limit: std::time::Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {cmd:?}: {e}"));
    let pid = child.id();
    let (done, ended) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        match ended.recv_timeout(limit) {
            // The child is not reaped until wait_with_output returns, so its PID is still
            // its own here.
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
                true
            }
            _ => false,
        }
    });
    let out = child.wait_with_output().expect("wait for the command");
    let _ = done.send(());
    let killed = watchdog.join().unwrap_or(false);
    assert!(
        !killed,
        "{cmd:?} was still running after {limit:?} and was killed; its stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `n` RAM-backed loop devices of `size` bytes, the members of an array a test builds, and
/// their names as `--scratch` takes them (comma-separated).
pub fn ram_members(n: usize, size: u64) -> (Vec<RamLoop>, String) {
    let members: Vec<RamLoop> = (0..n).map(|_| RamLoop::new(size)).collect();
    let list = dev_list(members.iter().map(|m| &m.dev));
    (members, list)
}

/// Loop devices' names as `--scratch` takes them (comma-separated).
pub fn dev_list<'a>(devs: impl IntoIterator<Item = &'a LoopDev>) -> String {
    devs.into_iter()
        .map(|d| d.dev.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// A suite file of `body` (TOML: defaults and groups) in `dir`; its path.
pub fn suite_file(dir: &Path, body: &str) -> String {
    let p = dir.join("t.toml");
    std::fs::write(&p, format!("name = \"t\"\ndescription = \"x\"\n{body}")).unwrap();
    p.to_str().unwrap().to_string()
}

/// A number of turns that tests share: `take` waits until one is free and holds it until the
/// turn is dropped. Guests take them: each is a software-emulated CPU, and at most two run at
/// a time so that a third does not slow the others towards their time limit.
pub struct Turns {
    taken: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
    limit: usize,
}

/// A turn of [`Turns`], given back when dropped.
pub struct Turn<'a>(&'a Turns);

impl Turns {
    pub const fn new(limit: usize) -> Turns {
        Turns {
            taken: std::sync::Mutex::new(0),
            freed: std::sync::Condvar::new(),
            limit,
        }
    }

    pub fn take(&self) -> Turn<'_> {
        let asked = std::time::Instant::now();
        // A test that panicked holding the lock poisoned it; the count is still right.
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        while *taken >= self.limit {
            taken = self.freed.wait(taken).unwrap_or_else(|e| e.into_inner());
        }
        *taken += 1;
        waited(asked);
        Turn(self)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *self.0.taken.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        self.0.freed.notify_one();
    }
}

/// The quiet binary's turns (tests/quiet.rs): its files take the machine in turn, and within
/// a file at most two tests run at once, as they did when each file was a binary of its own
/// run with one test thread per core of this two-core machine. A test judging a rate was
/// written knowing its siblings, not another file's CPU hogs or throttles.
pub struct QuietTurn;

struct Quiet {
    /// The file whose tests hold the machine, and how many of them run.
    file: Option<&'static str>,
    running: usize,
}

static QUIET: std::sync::Mutex<Quiet> = std::sync::Mutex::new(Quiet {
    file: None,
    running: 0,
});
static QUIET_FREED: std::sync::Condvar = std::sync::Condvar::new();

/// Waits for the machine to be `file`'s (`module_path!()`) with a place free; each quiet test
/// starts with `let _turn = quiet_turn(module_path!());`.
pub fn quiet_turn(file: &'static str) -> QuietTurn {
    let mut q = QUIET.lock().unwrap_or_else(|e| e.into_inner());
    let asked = std::time::Instant::now();
    while !(q.running == 0 || (q.file == Some(file) && q.running < 2)) {
        q = QUIET_FREED.wait(q).unwrap_or_else(|e| e.into_inner());
    }
    waited(asked);
    q.file = Some(file);
    q.running += 1;
    drop(q);
    first_on_the_cpus();
    QuietTurn
}

/// This test's thread, and so every process it starts (iogauge, fio, its own busy loops),
/// runs before anything else on the machine (nice −20, as root): a quiet test is given a quiet
/// machine even when other work shares it (CI beside two busy loops), rather than a looser
/// threshold. Its own CPU hogs inherit the same priority, so the contention a test makes on
/// purpose is still the contention it judges. libtest runs each test on a thread of its own.
fn first_on_the_cpus() {
    renice_me("-20");
}

/// This test's thread (and so what it starts from now on) at `nice`, as root.
fn renice_me(nice: &str) {
    if !is_root() {
        return;
    }
    let Ok(me) = std::fs::read_link("/proc/thread-self") else {
        return;
    };
    let Some(tid) = me.file_name().and_then(|t| t.to_str()) else {
        return;
    };
    let _ = Command::new("renice")
        .args(["-n", nice, "-p", tid])
        .stdout(std::process::Stdio::null())
        .status();
}

impl QuietTurn {
    /// This test's thread back at the usual priority (nice 0), its turn kept: for a test of a
    /// machine that other work keeps busy, where iogauge, the busy loops the test starts and the
    /// kernel threads that complete IO must share the CPUs as on a user's machine. At nice −20,
    /// two busy loops left a RAM loop device's kernel worker (nice 0) 1,024 / (1,024 + 88,761) of
    /// a CPU, 1.1%, and its writes fell to 1.2% of their rate: a starvation no user's machine
    /// makes, named a stall of the device (CI run 84).
    pub fn at_usual_priority(self) -> QuietTurn {
        renice_me("0");
        self
    }
}

impl Drop for QuietTurn {
    fn drop(&mut self) {
        let mut q = QUIET.lock().unwrap_or_else(|e| e.into_inner());
        q.running -= 1;
        if q.running == 0 {
            q.file = None;
        }
        QUIET_FREED.notify_all();
    }
}

/// The machine's page cache, which `--drop-caches` empties for every process: a test that
/// drops it holds this for writing, a test whose finding needs a file to stay cached for
/// reading (the tests of one binary run beside each other).
static PAGE_CACHE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held while the test drops the machine's page cache.
pub fn dropping_the_page_cache() -> std::sync::RwLockWriteGuard<'static, ()> {
    let asked = std::time::Instant::now();
    let held = PAGE_CACHE.write().unwrap_or_else(|e| e.into_inner());
    waited(asked);
    held
}

/// Held while the test needs what it cached to stay cached.
pub fn keeping_the_page_cache() -> std::sync::RwLockReadGuard<'static, ()> {
    let asked = std::time::Instant::now();
    let held = PAGE_CACHE.read().unwrap_or_else(|e| e.into_inner());
    waited(asked);
    held
}

/// A file of root's with mode 0600 in `dir`, as /etc/shadow is, for a link a server's account
/// plants; with what it holds and how it looks, to compare later.
pub fn root_secret(dir: &Path) -> (PathBuf, (Vec<u8>, u32, u32)) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("secret");
    std::fs::write(&p, "root:secret\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let look = look_at(&p);
    (p, look)
}

/// What a file holds, its owner and its mode.
pub fn look_at(p: &Path) -> (Vec<u8>, u32, u32) {
    let md = std::fs::metadata(p).unwrap();
    (std::fs::read(p).unwrap(), md.uid(), md.mode() & 0o7777)
}

/// A test directory's own IOGAUGE_RUN_DIR (iogauge makes it, 0700).
pub fn own_run_dir(dir: &Path) -> PathBuf {
    dir.join(".iogauge-run")
}

/// The JSON iogauge printed on stdout; fails the test if it failed or printed something else.
/// The last stored run's first result, a database window a Ctrl-C cut short: marked
/// interrupted and named with the part of the `window` (as iogauge prints it) that ran.
pub fn last_cut_short(dir: &Path, window: &str) -> Value {
    let doc = json_of(&iogauge(dir, &["show", "last", "--json"]));
    let r = doc["results"][0].clone();
    assert_eq!(r["interrupted"], true, "{r}");
    let name = r["name"].as_str().unwrap_or_default();
    assert!(
        name.contains(&format!(" of the {window} window (interrupted)")),
        "{name}"
    );
    r
}

pub fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "iogauge failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A JSON number.
pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// fio itself run on job file `job` in `dir`, the reference a test holds iogauge to: its JSON.
pub fn fio_json(dir: &Path, job: &Path) -> Value {
    let out = Command::new("fio")
        .args(["--output-format=json", job.to_str().unwrap()])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", stderr_of(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether PostgreSQL's programs are installed where iogauge looks for them (Debian's
/// /usr/lib/postgresql/N/bin); says why not, as a skip.
pub fn have_postgres() -> bool {
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().any(|e| e.path().join("bin/pgbench").exists()))
        .unwrap_or(false);
    if !found {
        skip("PostgreSQL is not installed (apt-get install postgresql-15)");
    }
    found
}

pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Why a test cannot run here. Under CI (`CI=true`) that is a failure naming what is missing,
/// because a green CI must mean every test ran; elsewhere the test says why on stderr and adds a
/// line to [`skips_file`], so a developer (and .ci/run) sees "3 skipped: needs root" instead of
/// a row of `ok`. The caller returns right after.
pub fn skip(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("an unnamed test")
        .to_string();
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} cannot run here: {why} (CI=true: every test must run)");
    }
    eprintln!("skipped: {why}");
    append_line(&skips_file(), &format!("{why}\t{test}\n"));
}

/// One short append of `line` to `path`: lines from test binaries running at once do not
/// interleave. A file that cannot be written loses the line, never the test.
fn append_line(path: &Path, line: &str) {
    use std::io::Write;
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
}

/// `lock` of a mutex some tests of one file take to run alone (each keeps both CPUs busy, or
/// one device), with the wait recorded as [`waited`]. A test that panicked holding it poisoned
/// it; what it guards is still whole.
pub fn hold(lock: &'static std::sync::Mutex<()>) -> std::sync::MutexGuard<'static, ()> {
    let asked = std::time::Instant::now();
    let held = lock.lock().unwrap_or_else(|e| e.into_inner());
    waited(asked);
    held
}

/// Records how long this test waited for a turn since `asked` (another test held the guests
/// or the quiet machine): libtest times a test from its start, and .ci/budget judges a test
/// by its own time, not its neighbours'. One line "test<TAB>seconds" in [`waits_file`].
pub fn waited(asked: std::time::Instant) {
    let secs = asked.elapsed().as_secs_f64();
    if secs < 0.01 {
        return;
    }
    let test = std::thread::current().name().unwrap_or("").to_string();
    append_line(&waits_file(), &format!("{test}\t{secs:.3}\n"));
}

/// The waits of [`waited`], beside the skips; .ci/run empties it before `cargo test`.
pub fn waits_file() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("iogauge-waits.txt")
}

/// One line per skipped test ("why<TAB>test"), in the target directory; .ci/run empties it
/// before `cargo test` and counts it after.
pub fn skips_file() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("iogauge-skips.txt")
}

macro_rules! needs_root {
    () => {
        if !is_root() {
            skip("needs root");
            return;
        }
    };
}

macro_rules! needs_tool {
    ($tool:expr) => {
        if !have($tool) {
            skip(&format!("needs {}", $tool));
            return;
        }
    };
}

pub fn have(tool: &str) -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .any(|d| Path::new(d).join(tool).is_file());
    found
}

/// Runs a helper command that must succeed; its trimmed stdout.
pub fn sh(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `losetup ARGS` that attaches a loop device (with `--show`), its name. The kernel keeps a loop
/// device's queue limits after `losetup -d`, so a device got this way may carry what another
/// tool (or a killed test) left: a `max_sectors_kb` of 128 made four precision tests see a true
/// split, and a throttled read half as fast. The limits the tests rely on are put back to the
/// kernel's own for a new loop device, and what was found is said.
pub fn losetup(args: &[&str]) -> String {
    let dev = sh("losetup", args);
    fresh_limits(&dev);
    dev
}

/// The queue limits of a loop device just attached, put back to a new loop device's (see
/// [`losetup`]).
pub fn fresh_limits(dev: &str) {
    let queue = PathBuf::from(format!(
        "/sys/block/{}/queue",
        dev.trim_start_matches("/dev/")
    ));
    let read = |attr: &str| {
        std::fs::read_to_string(queue.join(attr))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    // (knob, what a new loop device has): requests as large as the device takes, no scheduler.
    let scheduler = if read("scheduler").contains("[none]") {
        None
    } else {
        Some("none".to_string())
    };
    let max = read("max_hw_sectors_kb");
    for (attr, want) in [("max_sectors_kb", Some(max)), ("scheduler", scheduler)] {
        let Some(want) = want.filter(|w| !w.is_empty()) else {
            continue;
        };
        let was = read(attr);
        if was != want {
            std::fs::write(queue.join(attr), &want)
                .unwrap_or_else(|e| panic!("{dev}: set {attr} to {want}: {e}"));
            eprintln!("{dev}: {attr} was {was} (left by an earlier user of this loop device), set to {want}");
        }
    }
}

/// A loop device over `file`, detached on drop — only if it still is ours (a device the kernel
/// auto-detached may meanwhile belong to someone else).
pub struct LoopDev {
    pub dev: String,
    pub file: PathBuf,
}

impl LoopDev {
    pub fn attach(file: &Path) -> LoopDev {
        let dev = losetup(&["-f", "--show", file.to_str().unwrap()]);
        LoopDev {
            dev,
            file: std::fs::canonicalize(file).unwrap(),
        }
    }

    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    pub fn still_ours(&self) -> bool {
        std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", self.name()))
            .is_ok_and(|b| Path::new(b.trim_end()) == self.file)
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if self.still_ours() {
            let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        }
    }
}

/// A mount, unmounted on drop (lazily if it is busy); thawed first in case a test froze it.
pub struct Mount(pub PathBuf);

impl Mount {
    pub fn new(source: &str, dir: &Path, opts: &str) -> Mount {
        std::fs::create_dir_all(dir).unwrap();
        sh("mount", &["-o", opts, source, dir.to_str().unwrap()]);
        Mount(dir.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("fsfreeze").arg("-u").arg(&self.0).output();
        let ok = Command::new("umount")
            .arg(&self.0)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// A file system frozen (fsfreeze) until dropped: a test that fails while it is frozen still
/// thaws it, so the writers stuck in it can end and the mount can go.
pub struct Frozen(PathBuf);

impl Frozen {
    pub fn new(mnt: &Path) -> Frozen {
        sh("fsfreeze", &["-f", mnt.to_str().unwrap()]);
        Frozen(mnt.to_path_buf())
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        let _ = Command::new("fsfreeze").arg("-u").arg(&self.0).status();
    }
}

/// Whether `dev` carries no signature at all, by blkid's low-level probe.
pub fn blank(dev: &str) -> bool {
    let probe = std::process::Command::new("blkid")
        .args(["-p", dev])
        .output()
        .unwrap();
    probe.stdout.is_empty()
}

/// A blank image of `size` bytes in `dir` attached as a loop device with direct IO and `sector`
/// logical blocks (4,096: a 4Kn disk; 512). Detached on drop.
pub fn blank_loop(dir: &Path, name: &str, size: u64, sector: u32) -> LoopDev {
    let img = dir.join(name);
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let dev = losetup(&[
        "-f",
        "--show",
        "--direct-io=on",
        "--sector-size",
        &sector.to_string(),
        img.to_str().unwrap(),
    ]);
    LoopDev {
        dev,
        file: std::fs::canonicalize(&img).unwrap(),
    }
}

/// A loop device with direct IO over a `size`-byte image in RAM (/dev/shm): nothing but what a
/// test sets (a throttle) decides its speed, and no other test's disk IO disturbs it. The
/// directory must outlive the device (fields drop in order: device first).
pub struct RamLoop {
    pub dev: LoopDev,
    pub dir: tempfile::TempDir,
}

impl RamLoop {
    pub fn new(size: u64) -> RamLoop {
        RamLoop::with(size, "on")
    }

    /// One whose loop device reads and writes its image through the page cache: the kernel
    /// serves one cgroup's requests one after another in one worker, where with direct IO it
    /// serves them in the submitter's context as they come (Linux 6.18's loop driver).
    pub fn serial(size: u64) -> RamLoop {
        RamLoop::with(size, "off")
    }

    fn with(size: u64, direct: &str) -> RamLoop {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let img = dir.path().join("d.img");
        std::fs::File::create(&img).unwrap().set_len(size).unwrap();
        let dio = format!("--direct-io={direct}");
        let dev = losetup(&["-f", "--show", &dio, img.to_str().unwrap()]);
        RamLoop {
            dev: LoopDev {
                dev,
                file: std::fs::canonicalize(&img).unwrap(),
            },
            dir,
        }
    }
}

/// A blkio group of the test's own (`tag` names it) and a 64 MiB RAM-backed loop device to
/// throttle in it; `None`, having said why, without root or cgroup v1 blkio.
pub fn throttle_rig(tag: &str) -> Option<(Blkio, RamLoop)> {
    if !is_root() {
        skip("needs root");
        return None;
    }
    let Some(cg) = Blkio::new(tag) else {
        skip("needs cgroup v1 blkio");
        return None;
    };
    Some((cg, RamLoop::new(64 << 20)))
}

/// A cgroup v1 blkio group of the test's own, removed on drop; `None` where cgroup v1 blkio
/// is missing.
pub struct Blkio(pub PathBuf);

impl Blkio {
    pub fn new(tag: &str) -> Option<Blkio> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        if !root.join("cgroup.procs").exists() {
            return None;
        }
        let path = root.join(format!("iogauge-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Some(Blkio(path))
    }

    /// Limits `dev` to `iops` per second; `which` is "read" or "write".
    pub fn throttle(&self, dev: &LoopDev, which: &str, iops: u32) {
        let majmin = std::fs::read_to_string(format!("/sys/block/{}/dev", dev.name())).unwrap();
        std::fs::write(
            self.0.join(format!("blkio.throttle.{which}_iops_device")),
            format!("{} {iops}", majmin.trim()),
        )
        .unwrap();
    }

    /// A shell command line that joins the group and then becomes iogauge with `args`.
    /// Runs iogauge with `args` in this group, in `dir` with `dir/results.db`; its output.
    pub fn run_in(&self, dir: &Path, args: &str) -> Output {
        output_within(
            Command::new("sh")
                .args(["-c", &self.iogauge(args)])
                .current_dir(dir)
                .env("IOGAUGE_DB", dir.join("results.db")),
            DEADLINE,
        )
    }

    pub fn iogauge(&self, args: &str) -> String {
        format!(
            // The run directory (ledger, knob journal) is the test's own, in the directory it
            // runs in, unless the caller set one: never the machine's /run/iogauge, where
            // another test's command could name or undo what this one holds.
            "echo $$ > {}/cgroup.procs && export IOGAUGE_RUN_DIR=\"${{IOGAUGE_RUN_DIR:-$PWD/.iogauge-run}}\" && exec '{BIN}' {args}",
            self.0.display()
        )
    }
}

impl Drop for Blkio {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A queue setting of a device changed for a test, put back on drop: the kernel keeps a loop
/// device's queue settings after it is detached, so a setting left behind would change the
/// next test that gets the same loop device.
pub struct QueueSetting {
    path: PathBuf,
    original: String,
}

impl QueueSetting {
    /// Sets `/sys/block/DEV/queue/ATTR` to `value`; `None` when the kernel refuses.
    pub fn set(dev: &LoopDev, attr: &str, value: &str) -> Option<QueueSetting> {
        QueueSetting::at(&format!("/sys/block/{}/queue/{attr}", dev.name()), value)
    }

    /// Any setting of the kernel's in sysfs or /proc, at `path`, put back on drop the same
    /// way (the CPUs of the kernel's unbound workers, say).
    pub fn at(path: &str, value: &str) -> Option<QueueSetting> {
        let path = PathBuf::from(path);
        let original = std::fs::read_to_string(&path).ok()?.trim().to_string();
        std::fs::write(&path, value).ok()?;
        Some(QueueSetting { path, original })
    }
}

impl Drop for QueueSetting {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, &self.original);
    }
}

/// `iogauge-fakedisk` (crates/fakedisk), built by the first test that asks, once per test
/// binary. `cargo test` builds plain binaries only for integration tests of their own package,
/// and the fake disk is a package of its own: a file left in target/ by hand would be missing in
/// a fresh clone (the tests then never ran) or stale after a change to the fake disk. Cargo
/// decides whether anything needs rebuilding, in the same profile and target directory as this
/// test, and names the executable it made.
pub fn fakedisk_bin() -> PathBuf {
    static BIN_PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN_PATH
        .get_or_init(|| build_bin("iogauge-fakedisk"))
        .clone()
}

/// Builds the workspace's binary `bin` with the cargo that runs this test; the path of the
/// executable. The profile is the one iogauge was built with (the name of the directory holding
/// it), and the packages and features are the test build's (the whole workspace, with `mpi` when
/// this test has it): built with its own package alone, the fake disk's dependencies took other
/// features (log, smallvec, syn's) and were compiled again, 35 s after every CI's test build.
fn build_bin(bin: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let profile = Path::new(BIN)
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or("debug");
    let profile = match profile {
        "debug" => "dev",
        other => other,
    };
    let mut build = Command::new(&cargo);
    build
        .args(["build", "--quiet", "--message-format=json", "--profile"])
        .args([profile, "--workspace", "--bin", bin]);
    if cfg!(feature = "mpi") {
        build.args(["--features", "iogauge/mpi"]);
    }
    let out = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("{cargo} build --bin {bin}: {e}"));
    assert!(out.status.success(), "{cargo} build --bin {bin} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == bin)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("{cargo} build --bin {bin} named no executable"))
}

/// Whether this machine can mount the fake disk; when not, skips the test saying why.
pub fn can_mount_fakedisk() -> bool {
    let why = if !is_root() {
        "needs root to mount a FUSE file system"
    } else if !Path::new("/dev/fuse").exists() {
        "/dev/fuse is missing (load the fuse module)"
    } else {
        // Built here, so a test that can mount never runs an old fake disk.
        return fakedisk_bin().exists();
    };
    skip(why);
    false
}

/// The fake disk mounted on `mnt` over `backing` (created with `size` bytes on the first
/// mount); its file is `mnt/disk`. Dropping it is a power cut: the process is killed with all
/// it held in memory and the dead mount detached.
pub struct FakeDisk {
    child: std::process::Child,
    mnt: PathBuf,
}

impl FakeDisk {
    pub fn mount(backing: &Path, mnt: &Path, size: u64, args: &[&str]) -> FakeDisk {
        let child = Command::new(fakedisk_bin())
            .arg(backing)
            .arg(mnt)
            .args(["--size", &size.to_string()])
            .args(args)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut disk = FakeDisk {
            child,
            mnt: mnt.to_path_buf(),
        };
        let mounted = poll_until(std::time::Duration::from_secs(60), || {
            if let Some(st) = disk.child.try_wait().unwrap() {
                panic!("iogauge-fakedisk exited before mounting: {st}");
            }
            disk.target().exists()
        });
        assert!(mounted, "the fake disk did not mount in 60 s");
        disk
    }

    pub fn target(&self) -> PathBuf {
        self.mnt.join("disk")
    }
}

impl Drop for FakeDisk {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mnt)
            .stderr(Stdio::null())
            .status();
    }
}

/// How long a test waits for something iogauge or the kernel is sure to do. Far above any
/// honest wait even on a loaded machine: it only turns a hang into a failure that says what
/// did not happen.
pub const WATCHDOG: std::time::Duration = std::time::Duration::from_secs(120);

/// Waits until `done()` holds, looking every 10 ms; fails the test naming `what` after `limit`.
/// The one place the tests wait by polling: for a condition, never for a length of time.
pub fn wait_until(what: &str, limit: std::time::Duration, done: impl FnMut() -> bool) {
    assert!(poll_until(limit, done), "waited {limit:?} for {what}");
}

/// Whether `done()` came to hold within `limit`, looking every 10 ms.
pub fn poll_until(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while !done() {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    true
}

/// Read and write system calls the IO threads of iogauge process `pid` (`iogauge-w0`, …) have
/// made (/proc/PID/task/TID/io, syscr + syscw): with the psync engine, a count that grows
/// once the measurement is under way. Not the whole process's: after a fill, the steps before
/// the measurement (the trial, device discovery, the store) make system calls too, and on a
/// busy machine a hundred of them came before the workers had opened the target.
pub fn syscalls_of(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("iogauge-w"))
        })
        .map(|t| {
            std::fs::read_to_string(t.path().join("io"))
                .unwrap_or_default()
                .lines()
                .filter(|l| l.starts_with("syscr:") || l.starts_with("syscw:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}

/// The fields of /sys/block/NAME/stat (reads, merges, sectors read, …, writes at 4).
fn block_stat(name: &str) -> Vec<u64> {
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

/// iogauge's CPU seconds so far (utime + stime of /proc/PID/stat, in clock ticks of 10 ms).
pub fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    // Fields 14 and 15 of the line; the 12th and 13th after the name.
    let ticks: u64 = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// IOs block device `name` has completed (reads + writes).
pub fn device_ios(name: &str) -> u64 {
    let v = block_stat(name);
    v[0] + v[4]
}

/// Bytes block device `name` has read and written (its 512-byte sectors).
pub fn sectors_moved(name: &str) -> (u64, u64) {
    let v = block_stat(name);
    (v[2] * 512, v[6] * 512)
}

/// A spawned process (iogauge, a server, a load) whose stderr is read line by line as it
/// comes, so a test waits for what it prints rather than for a length of time. Killed on drop,
/// so a failing test leaves nothing running.
pub struct Spawned {
    child: Option<std::process::Child>,
    lines: std::sync::mpsc::Receiver<String>,
    /// Every stderr line read so far.
    pub stderr: String,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl Spawned {
    /// Starts `cmd` with stdout and stderr piped to the test.
    pub fn start(mut cmd: Command) -> Spawned {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {cmd:?}: {e}"));
        let (tx, lines) = std::sync::mpsc::channel();
        let mut err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            use std::io::Read;
            // Lines end in \n, or \r for a progress line redrawn in place.
            let (mut buf, mut line) = ([0u8; 4096], Vec::new());
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                for &b in &buf[..n] {
                    if b == b'\n' || b == b'\r' {
                        let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
                        line.clear();
                    } else {
                        line.push(b);
                    }
                }
            }
            if !line.is_empty() {
                let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
            }
        });
        let mut out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = std::io::Read::read_to_end(&mut out, &mut all);
            all
        });
        Spawned {
            child: Some(child),
            lines,
            stderr: String::new(),
            stdout: Some(stdout),
        }
    }

    /// Starts iogauge with `args` in `dir`, with `dir/results.db` as its results database.
    pub fn iogauge(dir: &Path, args: &[&str]) -> Spawned {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .current_dir(dir)
            .env("IOGAUGE_DB", dir.join("results.db"))
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir));
        Spawned::start(cmd)
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| c.try_wait().ok().flatten().is_none())
    }

    /// Waits for a stderr line containing `needle`; that line. Fails after `limit`, or when
    /// stderr ends without it, showing what was printed.
    pub fn wait_for(&mut self, needle: &str, limit: std::time::Duration) -> String {
        let until = std::time::Instant::now() + limit;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stderr.push_str(&line);
                    self.stderr.push('\n');
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(e) => panic!(
                    "{needle:?} not printed ({e}, waited up to {limit:?}); stderr so far:\n{}",
                    self.stderr
                ),
            }
        }
    }

    /// Sends signal `sig` ("INT", "TERM", …).
    pub fn signal(&self, sig: &str) {
        sh("kill", &[&format!("-{sig}"), &self.pid().to_string()]);
    }

    /// Starts `cmd` as [`Spawned::start`] does, in a process group of its own, as a shell
    /// starts a foreground job: [`Spawned::signal_group`] then reaches it and every process
    /// it started in its group, as a terminal's Ctrl-C does.
    pub fn start_as_job(mut cmd: Command) -> Spawned {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        Spawned::start(cmd)
    }

    /// Sends `sig` to the whole group of a [`Spawned::start_as_job`].
    pub fn signal_group(&self, sig: &str) {
        sh(
            "kill",
            &[&format!("-{sig}"), "--", &format!("-{}", self.pid())],
        );
    }

    /// Waits for the process to end (its stderr closing), at most `limit`; its output.
    pub fn finish(mut self, limit: std::time::Duration) -> Output {
        let until = std::time::Instant::now() + limit;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stderr.push_str(&line);
                    self.stderr.push('\n');
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!(
                    "the process did not end within {limit:?}; stderr so far:\n{}",
                    self.stderr
                ),
            }
        }
        let status = self.child.take().unwrap().wait().unwrap();
        let stdout = self.stdout.take().unwrap().join().unwrap_or_default();
        Output {
            status,
            stdout,
            stderr: std::mem::take(&mut self.stderr).into_bytes(),
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A helper shell command (a load, a loop of dd) in a process group of its own, killed whole
/// on drop, so a failing test leaves none of it running.
pub struct Helper(std::process::Child);

impl Helper {
    pub fn shell(script: &str) -> Helper {
        use std::os::unix::process::CommandExt;
        let child = Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("sh -c {script:?}: {e}"));
        Helper(child)
    }

    /// The shell's process ID.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.wait();
    }
}

/// A zram device of the test's own (hot-added, so a zram0 someone else is using is left
/// alone), sized `size`, removed on drop.
pub struct Zram(pub u32);

impl Zram {
    /// `None`, having said why, where zram cannot be had.
    pub fn new(size: &str) -> Option<Zram> {
        let control = Path::new("/sys/class/zram-control");
        if !control.exists() {
            let _ = Command::new("modprobe").arg("zram").status();
        }
        let Ok(id) = std::fs::read_to_string(control.join("hot_add")) else {
            skip("needs zram (modprobe zram)");
            return None;
        };
        let zram = Zram(id.trim().parse().expect("hot_add gives a device number"));
        std::fs::write(zram.sys().join("disksize"), size).expect("size the zram device");
        Some(zram)
    }

    pub fn sys(&self) -> std::path::PathBuf {
        Path::new("/sys/block").join(format!("zram{}", self.0))
    }

    pub fn dev(&self) -> String {
        format!("/dev/zram{}", self.0)
    }
}

impl Drop for Zram {
    /// The kernel refuses to remove a device someone has open, and udev opens it to probe
    /// right after iogauge closes it: removing is retried until the device is gone.
    fn drop(&mut self) {
        let gone = poll_until(std::time::Duration::from_secs(10), || {
            let _ = std::fs::write("/sys/class/zram-control/hot_remove", self.0.to_string());
            !self.sys().exists()
        });
        if !gone {
            eprintln!(
                "{} is still open after 10 s and was left behind",
                self.dev()
            );
        }
    }
}

/// The findings of `kind` in a run's JSON document.
pub fn findings_of(doc: &Value, kind: &str) -> Vec<Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .cloned()
        .collect()
}

/// Whether a paced result that fell short of `rate` IOs/s did so for want of a CPU: its
/// threads, ready to run, waited for one (the kernel's schedstat, `fine.cpu_wait` over the run)
/// at least half as long as the IOs it missed would have taken at the pace. What a loaded test
/// machine, not the pacer under test, takes from a run.
pub fn short_for_want_of_a_cpu(result: &Value, rate: f64) -> bool {
    let bin_s = result["fine"]["bin_s"].as_f64().unwrap_or(0.0);
    let waited_s: f64 = result["fine"]["cpu_wait"].as_array().map_or(0.0, |a| {
        a.iter().filter_map(Value::as_f64).sum::<f64>() * bin_s
    });
    let runtime = result["runtime_s"].as_f64().unwrap_or(0.0);
    let ios = result["ios"].as_f64().unwrap_or(0.0);
    let lost_s = (rate * runtime - ios).max(0.0) / rate;
    waited_s >= 0.5 * lost_s
}

/// A small file system on a loop device, in its own temp dir. Fields drop in order: unmount,
/// detach, then remove the image.
pub struct Fs {
    pub mount: Mount,
    pub dev: LoopDev,
    pub dir: tempfile::TempDir,
}

impl Fs {
    pub fn new(mkfs: &str, mkfs_args: &[&str], size: u64, mount_opts: &str) -> Fs {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("fs.img");
        std::fs::File::create(&img).unwrap().set_len(size).unwrap();
        let mut args = mkfs_args.to_vec();
        args.push(img.to_str().unwrap());
        sh(mkfs, &args);
        let dev = LoopDev::attach(&img);
        let mount = Mount::new(&dev.dev, &dir.path().join("mnt"), mount_opts);
        Fs { mount, dev, dir }
    }

    pub fn ext4(size: u64, mount_opts: &str) -> Fs {
        // No blocks reserved for root: the test's own fillers then see what iogauge sees.
        Fs::new("mkfs.ext4", &["-q", "-F", "-m", "0"], size, mount_opts)
    }

    pub fn path(&self) -> &Path {
        &self.mount.0
    }

    pub fn shutdown(&self) {
        // The ext4/XFS "going down" ioctl: every later IO on the file system fails with EIO.
        sh(
            "xfs_io",
            &["-x", "-c", "shutdown", self.path().to_str().unwrap()],
        );
    }

    /// Writes a file until the file system is full; true if it ended on ENOSPC.
    pub fn fill_up(&self) -> bool {
        self.fill_up_as("filler")
    }

    pub fn fill_up_as(&self, name: &str) -> bool {
        let Ok(mut f) = std::fs::File::create(self.path().join(name)) else {
            return false;
        };
        let big = vec![0u8; 1 << 20];
        let small = vec![0u8; 4096];
        let mut enospc = false;
        for chunk in [&big, &small] {
            loop {
                if let Err(e) = std::io::Write::write_all(&mut f, chunk) {
                    enospc = e.raw_os_error() == Some(ENOSPC);
                    break;
                }
            }
        }
        let _ = f.sync_all();
        enospc
    }
}

/// errno of "No space left on device" on Linux.
const ENOSPC: i32 = 28;

/// A database run whose server was killed mid-run: exit code 1, one error line that names the
/// server's end and its pid (`server`: "PostgreSQL" or "MariaDB") rather than the client's lost
/// connection, and no warning of a server iogauge could not stop.
pub fn assert_named_killed_server(out: &Output, server: &str, pid: &str) {
    let err = stderr_of(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("iogauge: error"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].contains(&format!("the {server} server ended during the run"))
            && said[0].contains(&format!("(pid {pid})")),
        "{err}"
    );
    assert!(!err.contains("did not stop"), "{err}");
}

pub fn assert_no_panic(stderr: &str) {
    // Rust's own panic report, as opposed to iogauge's one-line messages about one.
    assert!(
        !stderr.contains("panicked at") && !stderr.contains("RUST_BACKTRACE"),
        "no panic: {stderr}"
    );
}

/// A refusal: exit 2, one line on stderr containing every `needle`, nothing on stdout.
pub fn assert_refused(out: &Output, needles: &[&str]) -> String {
    let err = stderr_of(out);
    assert_eq!(out.status.code(), Some(2), "exit 2, stderr: {err}");
    assert_no_panic(&err);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, got:\n{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} in {err}");
    }
    assert!(out.stdout.is_empty(), "nothing on stdout");
    err
}
