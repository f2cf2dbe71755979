//! End-to-end tests of the results store (issue 4) through the binary: `list`, `show`,
//! `export`, `delete` and `compare`, files that are not ours, interrupted runs and concurrent
//! writers. Each test has its own temp dir and database.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use common::*;

const CANNOT_JUDGE: &str = "cannot judge significance (run with --repeat 3 or more)";

/// The binary with a clean environment: no IOGAUGE_DB, and XDG_DATA_HOME inside `dir` so
/// nothing lands in the real home even if a test forgets --db.
fn cmd(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iogauge"));
    c.current_dir(dir)
        .env_remove("IOGAUGE_DB")
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir));
    c
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "iogauge failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn json(out: Output) -> Value {
    let out = ok(out);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fast run with the null engine into `db`; returns what `--json` printed.
fn run(dir: &Path, db: &Path, extra: &[&str]) -> Vec<u8> {
    let target = dir.join(format!("t{}", fastrand::u32(..)));
    let mut args = vec![
        "run",
        "--engine",
        "null",
        "--time",
        "300ms",
        "--size",
        "16m",
        "--json",
        "--db",
        db.to_str().unwrap(),
        target.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ok(iogauge(dir, &args)).stdout
}

fn db_of(dir: &tempfile::TempDir) -> (PathBuf, String) {
    let p = dir.path().join("results.db");
    let s = p.to_str().unwrap().to_string();
    (p, s)
}

fn list(dir: &Path, db: &str) -> Vec<Value> {
    json(iogauge(dir, &["list", "--json", "--db", db]))["runs"]
        .as_array()
        .unwrap()
        .clone()
}

/// Exactly one line on stderr starts with the error prefix, and it names `path`.
fn assert_one_line_error(out: &Output, path: &Path) {
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("iogauge: error"))
        .collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains(path.to_str().unwrap()), "{err}");
    assert!(
        err.trim_end().ends_with(errors[0]),
        "the error is the last word: {err}"
    );
}

#[test]
fn missing_and_empty_files_become_databases() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Listing does not create anything.
    let missing = d.join("sub/dir/results.db");
    let out = json(iogauge(
        d,
        &["list", "--json", "--db", missing.to_str().unwrap()],
    ));
    assert_eq!(out["runs"], serde_json::json!([]));
    assert!(!missing.exists());
    // A run creates the file and its directories.
    run(d, &missing, &[]);
    assert_eq!(list(d, missing.to_str().unwrap()).len(), 1);
    // A 0-byte file (e.g. from `touch`) is initialised.
    let empty = d.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    run(d, &empty, &["--label", "first"]);
    let runs = list(d, empty.to_str().unwrap());
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["label"], "first");
    assert!(std::fs::metadata(&empty).unwrap().len() > 0);
}

#[test]
fn garbage_and_foreign_databases_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let garbage = d.join("garbage.db");
    std::fs::write(
        &garbage,
        (0..8192).map(|_| fastrand::u8(..)).collect::<Vec<u8>>(),
    )
    .unwrap();
    let foreign = d.join("foreign.db");
    {
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        conn.execute_batch(
            "CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO accounts (name) VALUES ('alice'), ('bob');",
        )
        .unwrap();
    }
    for path in [&garbage, &foreign] {
        let before = std::fs::read(path).unwrap();
        let p = path.to_str().unwrap();
        let target = d.join("t");
        let t = target.to_str().unwrap();
        for args in [
            vec!["list", "--db", p],
            vec!["show", "last", "--db", p],
            vec!["export", "1", "--db", p],
            vec!["delete", "1", "--db", p],
            vec!["compare", "1", "2", "--db", p],
            vec![
                "run", "--engine", "null", "--time", "100ms", "--size", "1m", "--db", p, t,
            ],
        ] {
            let out = iogauge(d, &args);
            assert_one_line_error(&out, path);
            assert_eq!(std::fs::read(path).unwrap(), before, "{args:?} changed {p}");
        }
        // The environment variable is held to the same rule.
        let out = cmd(d)
            .args(["list"])
            .env("IOGAUGE_DB", path)
            .output()
            .unwrap();
        assert_one_line_error(&out, path);
        assert_eq!(std::fs::read(path).unwrap(), before);
    }
}

#[test]
fn list_show_and_export_give_back_what_run_printed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, db) = db_of(&dir);
    let printed = run(d, Path::new(&db), &["--label", "baseline"]);
    let doc: Value = serde_json::from_slice(&printed).unwrap();

    let exported = ok(iogauge(
        d,
        &["export", "baseline", "--format", "json", "--db", &db],
    ))
    .stdout;
    assert_eq!(
        String::from_utf8_lossy(&exported),
        String::from_utf8_lossy(&printed)
    );
    let shown = ok(iogauge(d, &["show", "last", "--json", "--db", &db])).stdout;
    assert_eq!(shown, printed);

    let runs = list(d, &db);
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!(r["id"], 1);
    assert_eq!(r["label"], "baseline");
    assert_eq!(r["run_id"], doc["run_id"]);
    assert_eq!(r["interrupted"], false);
    assert!(r["finished_at"].is_string());
    assert_eq!(r["results"][0]["iops"], doc["results"][0]["iops"]);
    assert_eq!(
        r["results"][0]["lat_p99_ns"],
        doc["results"][0]["lat_ns"]["p99"]
    );

    let table = text(&ok(iogauge(d, &["list", "--db", &db])));
    assert!(table.contains("baseline") && table.contains("MiB/s") && table.contains("IOPS"));
    assert!(table.contains("randread 4K 1×1 null"), "{table}");

    let shown = text(&ok(iogauge(d, &["show", "1", "--db", &db])));
    let kernel = doc["system"]["kernel"].as_str().unwrap();
    for want in [
        "run 1",
        "label baseline",
        "IOPS",
        "MiB/s",
        "system:",
        kernel,
        "note: null engine",
    ] {
        assert!(shown.contains(want), "show lacks {want:?}:\n{shown}");
    }
    // The test directory is on a disk (not a tmpfs): its file system and its device's
    // scheduler are known, and `show` must say both.
    let fs = doc["system"]["target"]["filesystem"]
        .as_str()
        .expect("the target's file system is known");
    assert!(shown.contains(fs), "{shown}");
    let sched = doc["system"]["target"]["devices"][0]["scheduler"]
        .as_str()
        .expect("the target's device and its scheduler are known");
    assert!(shown.contains(&format!("scheduler {sched}")), "{shown}");
}

/// Splits one CSV line, honouring RFC 4180 quotes.
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

#[test]
fn csv_has_units_in_the_header_and_a_row_per_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, db) = db_of(&dir);
    let doc: Value =
        serde_json::from_slice(&run(d, Path::new(&db), &["--label", "a,b \"quoted\""])).unwrap();
    let csv = text(&ok(iogauge(
        d,
        &["export", "last", "--format", "csv", "--db", &db],
    )));
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1 + doc["results"].as_array().unwrap().len());
    let header = csv_fields(lines[0]);
    let row = csv_fields(lines[1]);
    assert_eq!(header.len(), row.len());
    for col in [
        "bw_MiB_s",
        "bw_MB_s",
        "lat_p99_us",
        "lat_p50_us",
        "iops",
        "bs_bytes",
        "runtime_s",
    ] {
        assert!(header.iter().any(|h| h == col), "no {col} in {header:?}");
    }
    let get = |name: &str| -> String {
        let i = header.iter().position(|h| h == name).unwrap();
        row[i].clone()
    };
    assert_eq!(get("label"), "a,b \"quoted\"");
    let r = &doc["results"][0];
    let num = |s: String| s.parse::<f64>().unwrap();
    assert_eq!(num(get("iops")), r["iops"].as_f64().unwrap());
    let bw = r["bw_bytes"].as_f64().unwrap();
    assert!((num(get("bw_MiB_s")) - bw / 1048576.0).abs() <= bw * 1e-12);
    let p99 = r["lat_ns"]["p99"].as_f64().unwrap();
    assert!((num(get("lat_p99_us")) - p99 / 1000.0).abs() < 1e-9);
}

#[test]
fn selectors_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (p, db) = db_of(&dir);
    let first: Value = serde_json::from_slice(&run(d, &p, &["--label", "a"])).unwrap();
    let second: Value = serde_json::from_slice(&run(d, &p, &["--label", "b"])).unwrap();
    let third: Value = serde_json::from_slice(&run(d, &p, &["--label", "a"])).unwrap();
    let run_id =
        |sel: &str| json(iogauge(d, &["show", sel, "--json", "--db", &db]))["run_id"].clone();
    assert_eq!(run_id("1"), first["run_id"]);
    assert_eq!(run_id("b"), second["run_id"]);
    assert_eq!(run_id("a"), third["run_id"], "a label names its newest run");
    assert_eq!(run_id("last"), third["run_id"]);
    assert_eq!(run_id(first["run_id"].as_str().unwrap()), first["run_id"]);
    let out = iogauge(d, &["show", "nothing-called-this", "--db", &db]);
    assert_eq!(out.status.code(), Some(2));

    ok(iogauge(d, &["delete", "a", "--db", &db]));
    let ids: Vec<i64> = list(d, &db)
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2, 1], "newest first, run 3 gone");
    assert_eq!(
        run_id("a"),
        first["run_id"],
        "the label now names the older run"
    );
    assert!(!iogauge(d, &["show", "3", "--db", &db]).status.success());
    ok(iogauge(d, &["delete", "1", "--db", &db]));
    ok(iogauge(d, &["delete", "last", "--db", &db]));
    assert!(list(d, &db).is_empty());
}

#[test]
fn compare_pairs_two_workloads_and_names_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (p, db) = db_of(&dir);
    run(d, &p, &["--bs", "4k", "--label", "small"]);
    run(d, &p, &["--bs", "1m", "--label", "large"]);
    let out = json(iogauge(
        d,
        &["compare", "small", "large", "--json", "--db", &db],
    ));
    let comps = out["comparisons"].as_array().unwrap();
    assert_eq!(comps.len(), 4, "iops, bw_bytes, lat_p50_ns, lat_p99_ns");
    let bw = comps.iter().find(|c| c["metric"] == "bw_bytes").unwrap();
    for key in [
        "workload",
        "metric",
        "baseline",
        "candidate",
        "ratio",
        "p_value",
        "verdict",
    ] {
        assert!(bw.get(key).is_some(), "no {key} in {bw}");
    }
    let ratio = bw["ratio"].as_f64().unwrap();
    let expect = bw["candidate"].as_f64().unwrap() / bw["baseline"].as_f64().unwrap();
    assert!((ratio - expect).abs() <= expect * 1e-12);
    // 256 times the bytes per IO: far more bandwidth, even from a CPU-bound null engine.
    assert!(ratio > 10.0, "{bw}");
    assert_eq!(bw["differences"], serde_json::json!(["block size 4K → 1M"]));
    // One value per side: no variance, no verdict.
    assert_eq!(bw["verdict"], CANNOT_JUDGE);
    assert!(bw["p_value"].is_null());
    let table = text(&ok(iogauge(d, &["compare", "1", "2", "--db", &db])));
    assert!(
        table.contains("bandwidth") && table.contains("MiB/s") && table.contains(CANNOT_JUDGE),
        "{table}"
    );
    // Bad noise thresholds are a usage error.
    assert_eq!(
        iogauge(d, &["compare", "1", "2", "--noise", "-1", "--db", &db])
            .status
            .code(),
        Some(2)
    );
}

/// 256 times the bytes per IO on the CPU-bound null engine: bandwidth differs by two orders of
/// magnitude. Five repeats, because a busy machine can spread three so wide that Welch's test
/// (2 degrees of freedom) no longer calls even that significant.
#[test]
fn compare_with_repeats_gives_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (p, db) = db_of(&dir);
    let small: Value =
        serde_json::from_slice(&run(d, &p, &["--bs", "4k", "--repeat", "5"])).unwrap();
    run(d, &p, &["--bs", "1m", "--repeat", "5"]);
    assert_eq!(small["results"][0]["repeats"].as_array().unwrap().len(), 5);
    assert_eq!(small["results"][0]["stats"]["iops"]["n"], 5);
    let verdict = |a: &str, b: &str, metric: &str| -> String {
        let out = json(iogauge(d, &["compare", a, b, "--json", "--db", &db]));
        let c = out["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == metric)
            .unwrap()
            .clone();
        c["verdict"].as_str().unwrap().to_string()
    };
    assert_eq!(verdict("1", "2", "bw_bytes"), "faster");
    assert_eq!(verdict("2", "1", "bw_bytes"), "slower");
    // The same repeats against themselves: no change in any metric.
    for metric in ["iops", "bw_bytes", "lat_p50_ns", "lat_p99_ns"] {
        assert_eq!(verdict("1", "1", metric), "no significant change");
    }
    let shown = text(&ok(iogauge(d, &["show", "1", "--db", &db])));
    assert!(shown.contains("statistics over 5 repeats"), "{shown}");
}

/// The issue's known-different pair: random reads through io_uring, one IO in flight against
/// 32, on a device of known latency: the fake disk answers every read 5 ms after it arrives,
/// each on its own timer, and nothing else uses it. At one in flight a read cannot be faster
/// than 5 ms; 32 in flight overlap, so IOPS must be significantly higher. Repeats of 1 s: at
/// 300 ms, beside CI's other tests, one run's five repeats spread so far (mean 8× the
/// baseline's) that Welch's test rightly could not tell them apart (p 0.085).
#[test]
fn compare_qd1_against_qd32_is_faster() {
    if !can_mount_fakedisk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, db) = db_of(&dir);
    std::fs::create_dir(d.join("mnt")).unwrap();
    let disk = FakeDisk::mount(
        &d.join("backing.img"),
        &d.join("mnt"),
        16 << 20,
        &["--read-latency", "5"],
    );
    let target = disk.target();
    for qd in ["1", "32"] {
        let run = json(iogauge(
            d,
            &[
                "run",
                "--engine",
                "io_uring",
                "--rw",
                "randread",
                "--iodepth",
                qd,
                "--repeat",
                "5",
                "--time",
                "1s",
                "--json",
                "--label",
                &format!("qd{qd}"),
                "--db",
                &db,
                target.to_str().unwrap(),
            ],
        ));
        if qd == "1" {
            // The device's law: one read at a time, each at least 5 ms.
            let iops = run["results"][0]["iops"].as_f64().unwrap();
            assert!(iops <= 200.0, "{iops} IOPS at queue depth 1");
        }
    }
    let out = json(iogauge(
        d,
        &["compare", "qd1", "qd32", "--json", "--db", &db],
    ));
    let iops = out["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "iops")
        .unwrap()
        .clone();
    assert_eq!(iops["verdict"], "faster", "{iops}");
    assert!(iops["p_value"].as_f64().unwrap() < 0.05);
    assert!(iops["ratio"].as_f64().unwrap() > 1.02);
    assert_eq!(iops["differences"], serde_json::json!(["iodepth 1 → 32"]));
}

#[test]
fn compare_orders_runs_by_their_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (p, db) = db_of(&dir);
    // Runs given to compare out of order; the parameter orders them.
    for (bs, disks) in [("64k", "8"), ("4k", "2"), ("16k", "4")] {
        let param = format!("disks={disks}");
        let doc: Value =
            serde_json::from_slice(&run(d, &p, &["--bs", bs, "--param", &param])).unwrap();
        assert_eq!(doc["params"]["disks"], disks);
    }
    let out = json(iogauge(
        d,
        &["compare", "1", "2", "3", "--json", "--db", &db],
    ));
    let ids: Vec<i64> = out["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2, 3, 1]);
    let bw = out["scaling"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["metric"] == "bw_bytes")
        .unwrap()
        .clone();
    let xs: Vec<f64> = bw["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["value"].as_f64().unwrap())
        .collect();
    assert_eq!(xs, [2.0, 4.0, 8.0]);
}

#[test]
fn an_interrupted_run_is_stored_with_its_partial_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, db) = db_of(&dir);
    let mut c = cmd(d);
    c.args([
        "run", "--engine", "psync", "--size", "8m", "--time", "30s", "--json",
    ])
    .args(["--label", "cut", "--db", &db]);
    let mut run = Spawned::start(c);
    // Stopped once the fill is over and the run's own reads are under way.
    run.wait_for("done in", WATCHDOG);
    let before = syscalls_of(run.pid());
    wait_until("the run's first reads", WATCHDOG, || {
        syscalls_of(run.pid()) > before + 100
    });
    run.signal("INT");
    let out = run.finish(WATCHDOG);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored = json(iogauge(d, &["show", "cut", "--json", "--db", &db]));
    assert_eq!(stored["interrupted"], true);
    let r = &stored["results"][0];
    assert_eq!(r["interrupted"], true);
    assert!(r["ios"].as_u64().unwrap() > 0);
    assert!(r["runtime_s"].as_f64().unwrap() < 30.0);
    // What the interrupted run printed is what was stored.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&ok(iogauge(d, &["export", "cut", "--db", &db])).stdout)
    );
    let table = text(&ok(iogauge(d, &["list", "--db", &db])));
    assert!(table.contains("(interrupted)"), "{table}");
}

#[test]
fn concurrent_runs_into_one_database_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, db) = db_of(&dir);
    let children: Vec<_> = (0..3)
        .map(|i| {
            let target = d.join(format!("t{i}"));
            cmd(d)
                .args([
                    "run", "--engine", "null", "--time", "300ms", "--size", "16m", "--json",
                ])
                .args([
                    "--label",
                    &format!("p{i}"),
                    "--db",
                    &db,
                    target.to_str().unwrap(),
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        ok(c.wait_with_output().unwrap());
    }
    let mut labels: Vec<String> = list(d, &db)
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    assert_eq!(labels, ["p0", "p1", "p2"]);
}

#[test]
fn the_default_database_follows_xdg_and_iogauge_db_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let where_ =
        |c: &mut Command| json(c.args(["list", "--json"]).output().unwrap())["database"].clone();
    let xdg = d.join("xdg/iogauge/results.db");
    assert_eq!(where_(&mut cmd(d)), xdg.to_str().unwrap());
    let home = d.join(".local/share/iogauge/results.db");
    assert_eq!(
        where_(cmd(d).env_remove("XDG_DATA_HOME").env("HOME", d)),
        home.to_str().unwrap()
    );
    // A relative XDG_DATA_HOME is ignored, as the XDG spec says.
    assert_eq!(
        where_(cmd(d).env("XDG_DATA_HOME", "rel").env("HOME", d)),
        home.to_str().unwrap()
    );
    let env_db = d.join("env.db");
    assert_eq!(
        where_(cmd(d).env("IOGAUGE_DB", &env_db)),
        env_db.to_str().unwrap()
    );
    // And a run without --db lands in the XDG default.
    let target = d.join("t");
    ok(cmd(d)
        .args([
            "run",
            "--engine",
            "null",
            "--time",
            "100ms",
            "--size",
            "1m",
            "--json",
            target.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    assert!(xdg.exists());
}

/// Results that travel (issue 43): runs exported as a bundle import into an empty database,
/// where they compare as local runs; the bundle exported from there is byte for byte the first;
/// importing again adds nothing; a bundle of another format is refused in one line.
#[test]
fn a_bundle_round_trips_byte_for_byte_and_imports_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    run(dir.path(), &a, &["--label", "here"]);
    run(dir.path(), &a, &["--label", "there"]);
    let db = |p: &Path| p.to_str().unwrap().to_string();
    let (first, second) = (
        dir.path().join("first.json"),
        dir.path().join("second.json"),
    );
    ok(cmd(dir.path())
        .args([
            "export",
            "1",
            "2",
            "--bundle",
            first.to_str().unwrap(),
            "--db",
            &db(&a),
        ])
        .output()
        .unwrap());
    let imported = ok(cmd(dir.path())
        .args(["import", first.to_str().unwrap(), "--db", &db(&b)])
        .output()
        .unwrap());
    assert!(
        String::from_utf8_lossy(&imported.stderr).contains("2 runs imported"),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    ok(cmd(dir.path())
        .args([
            "export",
            "here",
            "there",
            "--bundle",
            second.to_str().unwrap(),
            "--db",
            &db(&b),
        ])
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap(),
        "the round trip changed the documents"
    );
    let again = ok(cmd(dir.path())
        .args(["import", first.to_str().unwrap(), "--db", &db(&b)])
        .output()
        .unwrap());
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 runs imported"));
    assert_eq!(list(dir.path(), &db(&b)).len(), 2, "imported twice");
    ok(cmd(dir.path())
        .args(["compare", "here", "there", "--db", &db(&b)])
        .output()
        .unwrap());
    // Runs from another machine sit beside the local ones, and `list` then names each run's
    // host; a database of one machine's runs has no host column.
    let listed = |db: &str| {
        String::from_utf8_lossy(
            &ok(cmd(dir.path()).args(["list", "--db", db]).output().unwrap()).stdout,
        )
        .to_string()
    };
    assert!(!listed(&db(&b)).contains("host"), "{}", listed(&db(&b)));
    let mut other: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    let here = other["runs"][0]["system"]["hostname"]
        .as_str()
        .unwrap()
        .to_string();
    for r in other["runs"].as_array_mut().unwrap() {
        r["system"]["hostname"] = "db-server-7".into();
        r["run_id"] = format!("elsewhere-{}", r["run_id"].as_str().unwrap()).into();
    }
    let elsewhere = dir.path().join("elsewhere.json");
    std::fs::write(&elsewhere, other.to_string()).unwrap();
    ok(cmd(dir.path())
        .args(["import", elsewhere.to_str().unwrap(), "--db", &db(&b)])
        .output()
        .unwrap());
    let both = listed(&db(&b));
    let head = both.lines().next().unwrap_or_default();
    assert!(head.contains("host"), "{both}");
    let rows: Vec<&str> = both.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{both}");
    assert_eq!(
        rows.iter().filter(|l| l.contains("db-server-7")).count(),
        2,
        "{both}"
    );
    assert_eq!(
        rows.iter().filter(|l| l.contains(&here)).count(),
        2,
        "{both}"
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"schema":"iogauge.bundle/9","runs":[]}"#).unwrap();
    let out = cmd(dir.path())
        .args(["import", bad.to_str().unwrap(), "--db", &db(&b)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("iogauge.bundle/9") && err.lines().count() == 1,
        "{err}"
    );
    // Issue 56, item 4: every bundle of a set is checked, run by run as it streams, before any
    // run is stored: a good bundle named before one whose last run is of another schema
    // imports nothing.
    let mut spoilt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    for r in spoilt["runs"].as_array_mut().unwrap() {
        r["run_id"] = format!("spoilt-{}", r["run_id"].as_str().unwrap()).into();
    }
    spoilt["runs"][1]["schema"] = "iogauge.run/0".into();
    let spoilt_file = dir.path().join("spoilt.json");
    std::fs::write(&spoilt_file, spoilt.to_string()).unwrap();
    let c = dir.path().join("c.db");
    let out = cmd(dir.path())
        .args([
            "import",
            first.to_str().unwrap(),
            spoilt_file.to_str().unwrap(),
            "--db",
            &db(&c),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("run 2 has schema iogauge.run/0") && err.lines().count() == 1,
        "{err}"
    );
    assert!(
        !c.exists() || list(dir.path(), &db(&c)).is_empty(),
        "a refused set stored runs"
    );
}

/// A results database on a file system that is all but full is refused before anything is
/// measured: one line naming the free space and the way out, exit code 2, and not a byte on
/// the target. The near miss, the same database with 1.5 MiB free, runs and stores. A 4 MiB
/// tmpfs of the test's own holds it.
#[test]
fn a_results_database_on_a_full_file_system_is_refused_before_the_run() {
    if !is_root() {
        skip("needs root (mounts a small tmpfs)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let small = d.join("small");
    std::fs::create_dir(&small).unwrap();
    sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=4m",
            "tmpfs",
            small.to_str().unwrap(),
        ],
    );
    let _m = Mount(small.clone());
    let db = small.join("r.db");
    let db = db.to_str().unwrap();
    let ram = RamLoop::new(16 << 20);
    let run = || {
        cmd(d)
            .args([
                "run",
                &ram.dev.dev,
                "--rw",
                "randwrite",
                "--time",
                "200ms",
                "--allow-overwrite",
                "--db",
                db,
            ])
            .output()
            .unwrap()
    };
    // Leaves `left` bytes free beside the database.
    let fill = |left: u64| {
        let _ = std::fs::remove_file(small.join("fill"));
        let free = {
            let out = sh("stat", &["-f", "-c", "%a %S", small.to_str().unwrap()]);
            let mut w = out.split_whitespace().map(|v| v.parse::<u64>().unwrap());
            w.next().unwrap() * w.next().unwrap()
        };
        std::fs::write(small.join("fill"), vec![1u8; (free - left) as usize]).unwrap();
    };
    ok(run());
    fill(1536 << 10);
    ok(run());
    let listed = text(&ok(cmd(d).args(["list", "--db", db]).output().unwrap()));
    assert_eq!(
        listed.lines().filter(|l| l.contains("randwrite")).count(),
        2,
        "{listed}"
    );
    fill(256 << 10);
    let image = std::fs::read(&ram.dev.file).unwrap();
    let out = run();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("free, less than the 1 MiB") && err.contains("--no-store"),
        "{err}"
    );
    assert!(
        std::fs::read(&ram.dev.file).unwrap() == image,
        "the target was written"
    );
}
