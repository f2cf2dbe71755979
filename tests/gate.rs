//! Every path iogauge is handed passes one gate, not only the target: the results database,
//! `--output`, a report and its charts, man pages, mkfs and mount options, the files it reads,
//! and what `clean` undoes. Each attack here once destroyed data or hung; ground truth is the
//! device's own bytes, blkid, and the file system a test made.

use crate::common;
use common::*;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output};

/// The device's first 128 KiB: a superblock, a partition table, a file system's first files.
fn head(dev: &str) -> Vec<u8> {
    let mut buf = vec![0u8; 128 << 10];
    std::fs::File::open(dev)
        .unwrap()
        .read_exact(&mut buf)
        .unwrap();
    buf
}

/// The command was refused as bad input: exit 2 and one line on stderr holding `says`.
fn refused(out: &Output, says: &str) {
    let err = stderr_of(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(says), "wanted '{says}' in: {err}");
}

/// Issue 34, items 1 and 2: `--db DEV`, `IOGAUGE_DB=DEV` and `-o DEV` wrote an SQLite header
/// or JSON over a mounted ext4's superblock; `report --charts /dev` wrote files into /dev.
#[test]
fn a_results_database_or_an_output_is_never_a_device() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let ram = RamLoop::new(64 << 20);
    let dev = ram.dev.dev.clone();
    // Inode tables zeroed by mkfs, not by ext4's lazy-init thread after the mount: that thread
    // marks each group's descriptor as it goes, in these first blocks, and on a busy machine it
    // did so during the test (a fresh-clone CI: "the device's first blocks changed").
    sh(
        "mkfs.ext4",
        &["-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", &dev],
    );
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Mount::new(&dev, &mnt, "");
    std::fs::write(mnt.join("precious"), b"the user's data").unwrap();
    // The file system's own writes for the file done before the device is looked at.
    sh("sync", &["-f", mnt.to_str().unwrap()]);
    let before = head(&dev);
    let db = format!("--db={dev}");
    for args in [
        vec!["list", db.as_str()],
        vec!["show", "last", db.as_str()],
        vec![
            "run", ".", "--size", "8m", "--time", "1s", "-o", &dev, "--format", "json",
        ],
    ] {
        let out = iogauge(dir.path(), &args);
        refused(&out, &dev);
    }
    let out = Command::new(BIN)
        .args(["list"])
        .current_dir(dir.path())
        .env("IOGAUGE_DB", &dev)
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .output()
        .unwrap();
    refused(&out, "is under /dev");
    // Nothing of the device changed, and the run wrote no test file before it was refused.
    assert!(head(&dev) == before, "the device's first blocks changed");
    assert!(std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().starts_with("iogauge-test")));
    drop(mounted);
    sh("fsck.ext4", &["-n", &dev]);
    // A link to the device is where it leads.
    let link = dir.path().join("results.db.link");
    std::os::unix::fs::symlink(&dev, &link).unwrap();
    let out = iogauge(dir.path(), &["list", "--db", link.to_str().unwrap()]);
    refused(&out, &format!("(that is {dev})"));
    // Charts and man pages: never into /dev. Only regular files are counted: other tests
    // running beside this one make and remove loop devices there.
    let files_in_dev = || -> Vec<_> {
        let mut v: Vec<_> = std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name())
            .collect();
        v.sort();
        v
    };
    let before = files_in_dev();
    let out = iogauge(
        dir.path(),
        &["report", "--from-json", "x.json", "--charts", "/dev"],
    );
    refused(&out, "--charts /dev is under /dev");
    let out = iogauge(dir.path(), &["man", "--dir", "/dev"]);
    refused(&out, "--dir /dev is under /dev");
    assert_eq!(before, files_in_dev(), "a regular file appeared in /dev");
}

/// `--db /dev/null` left /dev/null-journal behind (root, mode 0666); as any user, a character
/// device or a FIFO is no database and no output.
#[test]
fn null_zero_and_fifos_are_no_database_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    for dev in ["/dev/null", "/dev/zero"] {
        let out = iogauge(dir.path(), &["list", "--db", dev]);
        refused(&out, &format!("--db (or IOGAUGE_DB) {dev} is under /dev"));
        assert!(!Path::new(&format!("{dev}-journal")).exists());
    }
    let fifo = dir.path().join("fifo");
    sh("mkfifo", &[fifo.to_str().unwrap()]);
    let out = iogauge(dir.path(), &["list", "--db", fifo.to_str().unwrap()]);
    refused(&out, "is a FIFO, not a file");
    let out = iogauge(
        dir.path(),
        &[
            "run",
            ".",
            "--size",
            "8m",
            "--time",
            "1s",
            "-o",
            fifo.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    refused(&out, "is a FIFO, not a file");
    let out = iogauge(
        dir.path(),
        &["report", "--from-json", "x.json", "-o", "/dev/null.html"],
    );
    refused(&out, "is under /dev");
}

/// Issue 34, item 8: a FIFO as a job file, include, suite file or run document blocked forever
/// (with --dry-run too); /dev/zero grew past 6 GB; 30,000 nested parentheses overflowed the
/// stack (exit 134). Each is one line and exit 2 now, at once.
#[test]
fn inputs_are_regular_files_of_bounded_size() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    sh("mkfifo", &[fifo.to_str().unwrap()]);
    let f = fifo.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["fio", "--dry-run", f], "job file"),
        (
            vec!["fio", "--dry-run", "/dev/zero"],
            "job file /dev/zero is a character device",
        ),
        (vec!["suite", "--file", f, ".", "--dry-run"], "suite file"),
        (vec!["report", "--from-json", f], "run document"),
        (
            vec!["report", "--from-json", "/dev/zero"],
            "is a character device",
        ),
        (
            vec![
                "report",
                "--from-json",
                "x.json",
                "--thresholds",
                "/dev/zero",
            ],
            "thresholds file",
        ),
    ];
    for (args, says) in cases {
        // A watchdog, not a wait: without the gate these block forever.
        let run = Spawned::iogauge(dir.path(), &args);
        let out = run.finish(WATCHDOG);
        refused(&out, says);
    }
    let inc = dir.path().join("inc.fio");
    std::fs::write(&inc, format!("[a]\ninclude {f}\n")).unwrap();
    let out =
        Spawned::iogauge(dir.path(), &["fio", "--dry-run", inc.to_str().unwrap()]).finish(WATCHDOG);
    refused(&out, "inc.fio:2: include");
    assert!(stderr_of(&out).contains("is a FIFO, not a file"));
    // A job file past the bound.
    let big = dir.path().join("big.fio");
    std::fs::write(&big, "#".repeat(5 << 20)).unwrap();
    let out = iogauge(dir.path(), &["fio", "--dry-run", big.to_str().unwrap()]);
    refused(&out, "is larger than 4 MiB");
    // Deep nesting is refused, and the error line does not quote 60,000 characters.
    let deep = dir.path().join("deep.fio");
    std::fs::write(
        &deep,
        format!(
            "[a]\nrw=read\nsize=({}1{})\n",
            "(".repeat(30_000),
            ")".repeat(30_000)
        ),
    )
    .unwrap();
    let out = iogauge(dir.path(), &["fio", "--dry-run", deep.to_str().unwrap()]);
    refused(&out, "nest more than 64 deep");
    assert!(stderr_of(&out).len() < 400, "{}", stderr_of(&out));
}

/// Issue 34, item 5: `--scratch /dev/loop0 --fs 'btrfs:-f /dev/loop1'` formatted loop1 too
/// (mkfs.btrfs takes every device it is given). A path among mkfs or mount options is refused
/// before anything runs; a plain option still goes through.
#[test]
fn mkfs_and_mount_options_cannot_name_another_device() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    let dir = tempfile::tempdir().unwrap();
    let scratch = RamLoop::new(256 << 20);
    let other = RamLoop::new(256 << 20);
    let suite = dir.path().join("tiny.toml");
    std::fs::write(
        &suite,
        "name = \"tiny\"\ndescription = \"one cell\"\n[defaults]\ntime = \"200ms\"\n[[group]]\ntitle = \"t\"\nrw = [\"randread\"]\nbs = [\"4k\"]\n",
    )
    .unwrap();
    let s = suite.to_str().unwrap();
    let fs_opts = format!("btrfs:-f {}", other.dev.dev);
    let bare = format!("btrfs:-f {}", other.dev.name());
    let logdev = format!("logdev={}", other.dev.dev);
    for (args, cwd) in [
        (
            vec![
                "sweep",
                "--file",
                s,
                "--scratch",
                &scratch.dev.dev,
                "--fs",
                &fs_opts,
            ],
            dir.path(),
        ),
        // A bare device name, typed where it names one.
        (
            vec![
                "sweep",
                "--file",
                s,
                "--scratch",
                &scratch.dev.dev,
                "--fs",
                &bare,
            ],
            Path::new("/dev"),
        ),
        (
            vec![
                "sweep",
                "--file",
                s,
                "--scratch",
                &scratch.dev.dev,
                "--fs",
                "xfs",
                "--mount-opts",
                &logdev,
            ],
            dir.path(),
        ),
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(cwd)
            .env("IOGAUGE_DB", dir.path().join("results.db"))
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
            .output()
            .unwrap();
        refused(&out, "names a path");
    }
    // Issue 56, item 2: a plain file in the working directory, named bare, even by a dry run
    // (whose room check runs mkfs on an image of its own).
    let user_file = dir.path().join("userdata.img");
    std::fs::File::create(&user_file)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    for dry in [&["--dry-run"][..], &[]] {
        let mut args = vec![
            "sweep",
            "--file",
            s,
            "--scratch",
            &scratch.dev.dev,
            "--fs",
            "btrfs:-f userdata.img",
        ];
        args.extend(dry);
        refused(&iogauge(dir.path(), &args), "'userdata.img' names a path");
    }
    let user_file = user_file.to_str().unwrap().to_string();
    for dev in [&scratch.dev.dev, &other.dev.dev, &user_file] {
        let probe = Command::new("blkid").args(["-p", dev]).output().unwrap();
        assert!(
            probe.stdout.is_empty(),
            "{dev}: {}",
            String::from_utf8_lossy(&probe.stdout)
        );
    }
}

/// Issue 34, item 4: after a killed file-system sweep, the user unmounted iogauge's scratch and
/// made an ext4 of their own with data on that device; `clean` wiped it (it checked the type
/// only). Now it compares the UUID iogauge recorded; the user's file system stays, named.
#[test]
fn clean_wipes_only_the_file_system_iogauge_made() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let scratch = RamLoop::new(256 << 20);
    let dev = scratch.dev.dev.clone();
    let suite = dir.path().join("long.toml");
    std::fs::write(
        &suite,
        "name = \"long\"\ndescription = \"one long cell\"\n[defaults]\ntime = \"10m\"\n[[group]]\ntitle = \"t\"\nrw = [\"randread\"]\nbs = [\"4k\"]\n",
    )
    .unwrap();
    let mut run = Spawned::iogauge(
        dir.path(),
        &[
            "sweep",
            "--file",
            suite.to_str().unwrap(),
            "--scratch",
            &dev,
            "--fs",
            "ext4",
            "--size",
            "16m",
            "--repeat",
            "1",
        ],
    );
    // The ledger names the file system before mkfs; the run is killed once it is mounted.
    let scratch_mount = || {
        std::fs::read_to_string("/proc/self/mounts")
            .unwrap()
            .lines()
            .find(|l| l.starts_with(&format!("{dev} ")))
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
    };
    wait_until("the scratch file system to be mounted", WATCHDOG, || {
        scratch_mount().is_some() || !run.alive()
    });
    let at = scratch_mount().expect("the sweep mounted its file system");
    run.signal("KILL");
    run.finish(WATCHDOG);
    let theirs = sh("blkid", &["-p", "-o", "value", "-s", "UUID", &dev]);
    assert!(!theirs.is_empty());
    // The user takes the device back by hand: their own ext4, with their data.
    // The killed run's io_uring ring may hold the file system busy for a moment after it died.
    wait_until("the killed run's file system to unmount", WATCHDOG, || {
        Command::new("umount")
            .arg(&at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    sh("mkfs.ext4", &["-q", "-F", &dev]);
    let user_uuid = sh("blkid", &["-p", "-o", "value", "-s", "UUID", &dev]);
    assert_ne!(user_uuid, theirs);
    let dry = iogauge(dir.path(), &["clean", "--dry-run"]);
    let listed = String::from_utf8_lossy(&dry.stdout).into_owned();
    assert!(listed.contains("left alone"), "{listed}{}", stderr_of(&dry));
    assert!(!listed.contains("would be wiped"), "{listed}");
    let out = iogauge(dir.path(), &["clean"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains("not the file system iogauge made"),
        "{said}{}",
        stderr_of(&out)
    );
    assert_eq!(
        sh("blkid", &["-p", "-o", "value", "-s", "UUID", &dev]),
        user_uuid
    );
}

/// Issue 34, item 9: a fio section name with a terminal escape reached the terminal raw.
#[test]
fn text_from_files_reaches_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("esc.fio");
    std::fs::write(&job, "[\x1b]0;pwned\x07]\nrw=read\nsize=1m\nfilename=x\n").unwrap();
    let out = iogauge(dir.path(), &["fio", "--dry-run", job.to_str().unwrap()]);
    let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
    assert!(
        !all.contains(&0x1b) && !all.contains(&0x07),
        "{}",
        String::from_utf8_lossy(&all)
    );
    assert!(
        String::from_utf8_lossy(&all).contains("\\u{1b}]0;pwned"),
        "{}",
        String::from_utf8_lossy(&all)
    );
}

/// Issue 34, item 9: an immutable results database passed the check before the fill (SQLite
/// opened it read-only without a word) and failed after measuring. Now it is refused first.
#[test]
fn an_immutable_results_database_is_refused_before_the_fill() {
    needs_root!();
    needs_tool!("chattr");
    let dir = tempfile::tempdir().unwrap();
    let first = iogauge(dir.path(), &["run", ".", "--size", "8m", "--time", "200ms"]);
    assert!(first.status.success(), "{}", stderr_of(&first));
    let db = dir.path().join("results.db");
    let immutable = Command::new("chattr").arg("+i").arg(&db).status().unwrap();
    if !immutable.success() {
        skip("the file system of the temporary directory has no immutable flag");
        return;
    }
    struct Mutable<'a>(&'a Path);
    impl Drop for Mutable<'_> {
        fn drop(&mut self) {
            let _ = Command::new("chattr").arg("-i").arg(self.0).status();
        }
    }
    let _undo = Mutable(&db);
    let out = iogauge(dir.path(), &["run", ".", "--size", "8m", "--time", "200ms"]);
    refused(&out, "cannot be written (");
    assert!(!stderr_of(&out).contains("Filling"), "{}", stderr_of(&out));
    // Reading it still works.
    let list = iogauge(dir.path(), &["list"]);
    assert!(list.status.success(), "{}", stderr_of(&list));
}

/// Issue 34, item 7: a database run's ledger listed `$TMPDIR/iogauge-pg-PID-socket` whether it
/// was made or not, and `clean` removed another user's directory of that name; a hand-made
/// ledger could make it remove any empty cgroup. Now a directory is removed only while it is
/// the one recorded (device and inode), a ledger of paths alone removes nothing, and only a
/// cgroup as iogauge names its own is touched.
#[test]
fn clean_removes_only_the_directories_iogauge_made() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let run = own_run_dir(dir.path());
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    // Someone else's directory at the name iogauge would have used, with a file in it.
    let theirs = dir.path().join("iogauge-pg-999999-socket");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("keep"), b"theirs").unwrap();
    // A directory iogauge made, recorded with its device and inode.
    let ours = dir.path().join("iogauge-pg-999999");
    std::fs::create_dir(&ours).unwrap();
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(&ours).unwrap();
    // Another directory took the name of one iogauge recorded: same path, another inode.
    let retaken = dir.path().join("iogauge-pg-999999-wal");
    std::fs::create_dir(&retaken).unwrap();
    let ledger = serde_json::json!({
        "pid": 999_999,
        "entries": [{
            "kind": "cluster",
            "data": ours.join("data"),
            "dirs": [
                {"path": ours, "dev": md.dev(), "ino": md.ino()},
                {"path": retaken, "dev": md.dev(), "ino": md.ino() + 1_000_000},
                theirs,
            ],
            "cgroup": "/sys/fs/cgroup/memory/user.slice",
        }],
    });
    let file = run.join("ledger-999999.json");
    std::fs::write(&file, serde_json::to_vec(&ledger).unwrap()).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let dry = iogauge(dir.path(), &["clean", "--dry-run"]);
    let listed = String::from_utf8_lossy(&dry.stdout).into_owned();
    assert!(
        listed.contains(&format!("{} would be removed", ours.display())),
        "{listed}{}",
        stderr_of(&dry)
    );
    assert!(listed.contains("left alone"), "{listed}");
    let out = iogauge(dir.path(), &["clean"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!ours.exists(), "{said}{}", stderr_of(&out));
    assert!(theirs.join("keep").exists(), "{said}");
    assert!(retaken.exists(), "{said}");
    assert!(said.contains("not a cgroup iogauge makes"), "{said}");
}

/// Issue 56, items 1 and 3: as root, in a directory another account controls, that account's
/// links are never followed. A link named as a target or an output is refused naming its owner;
/// a link planted under a name iogauge chooses itself (a chart, a man page) is replaced by
/// iogauge's file, and what it pointed to is untouched. Planted by `nobody` (setpriv); ground
/// truth is root's 0600 file, byte for byte, owner and mode.
#[test]
fn another_accounts_links_are_never_followed() {
    needs_root!();
    needs_tool!("setpriv");
    use std::os::unix::fs::{chown, MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (secret, before) = root_secret(dir.path());
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown(&theirs, Some(65534), Some(65534)).unwrap();
    let plant = |to: &Path, name: &str| {
        let out = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "ln",
                "-sfn",
            ])
            .arg(to)
            .arg(theirs.join(name))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
    };
    let at = |name: &str| theirs.join(name).to_str().unwrap().to_string();
    // A stored run to report on and export.
    let out = iogauge(dir.path(), &["run", ".", "--size", "8m", "--time", "200ms"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let newpath = dir.path().join("newpath");
    plant(&secret, "t.dat");
    plant(&secret, "out.json");
    plant(&secret, "r.html");
    plant(&newpath, "b.json");
    for (args, link) in [
        (
            vec![
                "run",
                &at("t.dat"),
                "--allow-overwrite",
                "--rw",
                "write",
                "--time",
                "200ms",
            ],
            "t.dat",
        ),
        (
            vec![
                "run",
                ".",
                "--size",
                "8m",
                "--time",
                "200ms",
                "-o",
                &at("out.json"),
            ],
            "out.json",
        ),
        (vec!["report", "last", "-o", &at("r.html")], "r.html"),
        (vec!["export", "last", "--bundle", &at("b.json")], "b.json"),
    ] {
        let out = iogauge(dir.path(), &args);
        refused(&out, "owned by nobody (uid 65534), another account");
        assert!(stderr_of(&out).contains(&at(link)), "{}", stderr_of(&out));
    }
    // Names iogauge picks itself: every chart of a report, learnt from a first report.
    let mine = dir.path().join("mine");
    let out = iogauge(
        dir.path(),
        &[
            "report",
            "last",
            "-o",
            "r.html",
            "--charts",
            mine.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let charts: Vec<String> = std::fs::read_dir(&mine)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!charts.is_empty());
    for c in &charts {
        plant(&secret, c);
    }
    plant(&newpath, "iogauge.1");
    let out = iogauge(
        dir.path(),
        &[
            "report",
            "last",
            "-o",
            "r2.html",
            "--charts",
            theirs.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = iogauge(dir.path(), &["man", "--dir", theirs.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    for c in charts.iter().chain([&"iogauge.1".to_string()]) {
        let md = std::fs::symlink_metadata(theirs.join(c)).unwrap();
        assert!(md.is_file(), "{c} is iogauge's own file now");
        assert_eq!(md.uid(), 0, "{c}");
    }
    assert_eq!(look_at(&secret), before, "root's file untouched");
    assert!(
        !newpath.exists(),
        "nothing made where a dangling link pointed"
    );
    // A dangling link of root's own is refused with a sentence, not an errno.
    std::os::unix::fs::symlink(&newpath, dir.path().join("own.json")).unwrap();
    let out = iogauge(dir.path(), &["export", "last", "--bundle", "own.json"]);
    refused(
        &out,
        "which does not exist; iogauge creates no file through a link",
    );
}

/// Issue 56, item 5: a TMPDIR that other accounts may write without the sticky bit is refused
/// before anything is made (a scratch mount point made there could be renamed away between
/// mkdir and mount); the same directory made sticky is used.
#[test]
fn a_temporary_directory_others_may_rename_in_is_refused() {
    needs_root!();
    needs_tool!("mkfs.ext4");
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let scratch = RamLoop::new(64 << 20);
    let suite = suite_file(
        dir.path(),
        "[defaults]\ntime = \"200ms\"\n[[group]]\ntitle = \"t\"\nrw = [\"randread\"]\nbs = [\"4k\"]\n",
    );
    let sweep = |mode: u32| {
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)).unwrap();
        iogauge_env(
            dir.path(),
            &[
                "sweep",
                "--file",
                &suite,
                "--scratch",
                &scratch.dev.dev,
                "--fs",
                "ext4",
                "--size",
                "16m",
                "--dry-run",
            ],
            &[("TMPDIR", tmp.to_str().unwrap())],
        )
    };
    refused(&sweep(0o777), "has no sticky bit");
    let out = sweep(0o1777);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(blank(&scratch.dev.dev));
}
