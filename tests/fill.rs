//! `iogauge sweep --fill` on ext4 on RAM loop devices: each level reached (statvfs, read by
//! the test while the level's cells run, and as the run recorded it), nothing of iogauge's
//! left on the file system or in the ledger afterwards; a level already passed, a level out of
//! range and a raw device refused before a byte is written; a SIGKILLed fill's file removed by
//! `iogauge clean`.

use crate::common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One short writing cell: the filler beside the test file is what changes.
const SUITE: &str = r#"
[defaults]
time = "1s"
[[group]]
title = "writes"
rw = ["randwrite"]
bs = ["16k"]
iodepth = [4]
"#;

/// ext4 on a RAM loop device of `size`, mounted at `dir/mnt`; unmounted, then detached, on drop.
struct Ext4 {
    mnt: PathBuf,
    _mount: Mount,
    dev: RamLoop,
}

impl Ext4 {
    fn new(dir: &Path, size: u64) -> Ext4 {
        let dev = RamLoop::new(size);
        sh("mkfs.ext4", &["-q", &dev.dev.dev]);
        let mnt = dir.join("mnt");
        let mount = Mount::new(&dev.dev.dev, &mnt, "noatime");
        Ext4 {
            mnt,
            _mount: mount,
            dev,
        }
    }

    /// Its use in percent, as statvfs counts it: (f_blocks − f_bfree) / f_blocks.
    fn used(&self) -> f64 {
        let out = sh("stat", &["-f", "-c", "%b %f", self.mnt.to_str().unwrap()]);
        let v: Vec<f64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
        (v[0] - v[1]) * 100.0 / v[0]
    }

    /// What iogauge made there (its test files and fillers).
    fn iogauges(&self) -> Vec<String> {
        std::fs::read_dir(&self.mnt)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("iogauge-"))
            .collect()
    }
}

fn ready(dir: &Path) -> Option<Ext4> {
    if !is_root() {
        skip("needs root (loop devices, mkfs, mount)");
        return None;
    }
    if !have("mkfs.ext4") {
        skip("mkfs.ext4 is not installed (apt-get install e2fsprogs)");
        return None;
    }
    Some(Ext4::new(dir, 512 << 20))
}

fn suite(dir: &Path) -> String {
    suite_file(dir, SUITE)
}

fn ledgers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(own_run_dir(dir))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("ledger-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn each_level_is_reached_while_its_cells_run_and_nothing_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = ready(dir.path()) else { return };
    let mut run = Spawned::iogauge(
        dir.path(),
        &[
            "sweep",
            "--file",
            &suite(dir.path()),
            fs.mnt.to_str().unwrap(),
            "--fill",
            "40%,80%",
            "--size",
            "32m",
            "--json",
        ],
    );
    // Each setting says its level once the filler is written and synced, and its cells (three
    // repeats of a second) follow at once, the filler held until they end: the file system
    // read now is the one they measure.
    for asked in ["as found", "40", "80", "as found"] {
        let line = run.wait_for("% used as its cells begin", WATCHDOG);
        let said: f64 = line
            .rsplit(" is ")
            .next()
            .and_then(|t| t.strip_suffix("% used as its cells begin"))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no level in {line:?}"));
        let seen = fs.used();
        assert!(
            (seen - said).abs() < 1.0,
            "{asked}: said {said}%, statvfs {seen}%"
        );
        if let Ok(want) = asked.parse::<f64>() {
            assert!((seen - want).abs() <= 1.0, "fill {want}%: statvfs {seen}%");
            assert_eq!(fs.iogauges().len(), 2, "{:?}", fs.iogauges());
        }
    }
    let out = run.finish(DEADLINE);
    let doc = json_of(&out);
    let settings = doc["groups"][0]["settings"].as_array().unwrap();
    let heads: Vec<&str> = settings
        .iter()
        .map(|s| s["head"].as_str().unwrap())
        .collect();
    assert_eq!(heads, ["as found", "40%", "80%"], "{doc}");
    for s in &settings[1..] {
        let want: f64 = s["head"]
            .as_str()
            .unwrap()
            .trim_end_matches('%')
            .parse()
            .unwrap();
        let used: f64 = s["used"]
            .as_str()
            .unwrap_or_else(|| panic!("no level: {s}"))
            .trim_end_matches('%')
            .parse()
            .unwrap();
        assert!((used - want).abs() <= 1.0, "asked {want}%, reached {used}%");
    }
    // Stored with each run: the level asked and the level reached.
    let runs = json_of(&iogauge(dir.path(), &["list", "--json"]));
    let mut stored: Vec<(String, String)> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            Some((
                r["params"]["fill"].as_str()?.to_string(),
                r["params"]["fill.level"].as_str()?.to_string(),
            ))
        })
        .collect();
    stored.sort();
    assert_eq!(stored.len(), 2, "{runs}");
    assert_eq!(stored[0].0, "40%");
    assert_eq!(stored[1].0, "80%");
    // Nothing of iogauge's is left, on the file system or in the ledger.
    assert_eq!(fs.iogauges(), Vec::<String>::new());
    assert!(fs.used() < 1.0, "{}% used after the sweep", fs.used());
    assert_eq!(ledgers(dir.path()), Vec::<String>::new());
}

#[test]
fn a_level_already_passed_or_a_raw_device_is_refused_before_a_byte() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = ready(dir.path()) else { return };
    // The user's own data: about 60% of the file system.
    let theirs = fs.mnt.join("theirs");
    std::fs::write(&theirs, vec![7u8; 300 << 20]).unwrap();
    sh("sync", &[]);
    let before = fs.used();
    assert!(before > 50.0, "{before}");
    let suite = suite(dir.path());
    let mnt = fs.mnt.to_str().unwrap();
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut args = vec![
            "sweep", "--file", &suite, mnt, "--fill", "40%,80%", "--size", "32m",
        ];
        args.extend(extra);
        let out = iogauge(dir.path(), &args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("already") && err.contains("above --fill 40%"),
            "{err}"
        );
        assert_eq!(fs.iogauges(), Vec::<String>::new());
        assert!(
            (fs.used() - before).abs() < 0.1,
            "{} then {}",
            before,
            fs.used()
        );
    }
    // Out of range, and a raw device: no file system to fill.
    for (target, level, says) in [
        (mnt, "99%", "outside 1–95%"),
        (fs.dev.dev.dev.as_str(), "40%", "raw block device"),
    ] {
        let out = iogauge(
            dir.path(),
            &["sweep", "--file", &suite, target, "--fill", level],
        );
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
    assert_eq!(ledgers(dir.path()), Vec::<String>::new());
}

#[test]
fn a_killed_fill_is_removed_by_clean() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = ready(dir.path()) else { return };
    let mut run = Spawned::iogauge(
        dir.path(),
        &[
            "sweep",
            "--file",
            &suite(dir.path()),
            fs.mnt.to_str().unwrap(),
            "--fill",
            "80%",
            "--size",
            "32m",
            "--cell-time",
            "10s",
            "--repeat",
            "1",
        ],
    );
    // The filler is made (its crash-ledger entry by path first, then the name) once the file
    // system as found was measured (one cell of 10 s), and held through its own level's cell
    // of 10 s: the kill lands while it exists, as early as the name shows. (CI once killed in
    // the instant between the name and an entry that followed it; the entry now comes first.)
    wait_until("the filler", WATCHDOG, || {
        fs.iogauges().iter().any(|n| n.starts_with("iogauge-fill."))
    });
    assert!(run.alive(), "the sweep ended before it was killed");
    run.signal("KILL");
    run.finish(WATCHDOG);
    assert!(
        fs.iogauges().iter().any(|n| n.starts_with("iogauge-fill.")),
        "SIGKILL leaves the filler: {:?}",
        fs.iogauges()
    );
    let out = iogauge(dir.path(), &["clean"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{text}", stderr_of(&out));
    assert!(text.contains("iogauge-fill."), "{text}");
    assert_eq!(fs.iogauges(), Vec::<String>::new());
    assert!(fs.used() < 1.0, "{}% used after clean", fs.used());
    assert_eq!(ledgers(dir.path()), Vec::<String>::new());
    let again = Command::new(BIN)
        .arg("clean")
        .current_dir(dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to clean"));
}

/// `db pgbench --fill 40%,80%` on ext4 on a RAM loop device: the database loaded once, then
/// each level filled over it before its measurement (statvfs read by the test as the level's
/// measurement begins, and as each result recorded it), the table led by the level; afterwards
/// nothing of iogauge's on the file system. A level the database alone would pass, and --fill
/// beside --scratch, are refused before a server is made.
#[test]
fn a_database_run_measures_each_level_over_the_data_as_loaded() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = ready(dir.path()) else { return };
    if !have_postgres() {
        return;
    }
    // The server's account must reach its directory.
    for d in [dir.path(), fs.mnt.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mnt = fs.mnt.to_str().unwrap();
    let db = |extra: &[&str]| {
        let mut args = vec![
            "db",
            "pgbench",
            mnt,
            "--scale",
            "2",
            "--time",
            "3s",
            "--no-storage",
        ];
        args.extend(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<String>>()
    };

    // About 70 MiB of server and data on 512 MiB: 10% is passed by the database alone.
    let args = db(&["--fill", "10%,80%"]);
    let refused = iogauge(
        dir.path(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr_of(&refused));
    let e = stderr_of(&refused);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("above --fill 10%"), "{e}");
    let scratch = iogauge(
        dir.path(),
        &[
            "db",
            "pgbench",
            "--scratch",
            "/dev/null",
            "--fs",
            "ext4",
            "--fill",
            "40%",
        ],
    );
    assert_eq!(scratch.status.code(), Some(2), "{}", stderr_of(&scratch));
    assert!(
        stderr_of(&scratch).contains("--fill"),
        "{}",
        stderr_of(&scratch)
    );
    assert_eq!(fs.iogauges(), Vec::<String>::new());

    let args = db(&["--fill", "40%,80%"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut run = Spawned::iogauge(dir.path(), &args);
    for want in [40.0, 80.0] {
        let line = run.wait_for("% used (--fill", WATCHDOG);
        let seen = fs.used();
        assert!(
            (seen - want).abs() <= 1.0,
            "fill {want}%: statvfs {seen}% ({line})"
        );
    }
    let out = run.finish(DEADLINE);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // As stored: each result with the level asked and reached.
    let doc = json_of(&iogauge(dir.path(), &["show", "last", "--json"]));
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{doc}");
    for (r, want) in results.iter().zip([40.0, 80.0]) {
        assert_eq!(r["fill"]["asked_pct"].as_f64(), Some(want), "{r}");
        let used = r["fill"]["used_pct"].as_f64().unwrap();
        assert!((used - want).abs() <= 1.0, "asked {want}%, reached {used}%");
        assert!(r["tps"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(doc["params"]["fill"], "40%,80%", "{doc}");
    // The run's table is led by the level each row was measured at.
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("file system used"))
        .skip(1)
        .take(2)
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for (row, r) in rows.iter().zip(results) {
        let used = format!("{:.1}%", r["fill"]["used_pct"].as_f64().unwrap());
        assert!(
            row.trim_start().starts_with(&used),
            "{row} against {used}\n{text}"
        );
    }
    assert_eq!(fs.iogauges(), Vec::<String>::new());
    assert!(fs.used() < 1.0, "{}% used after the run", fs.used());
    assert_eq!(ledgers(dir.path()), Vec::<String>::new());
}
