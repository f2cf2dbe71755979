//! End-to-end tests of `iogauge suite` through the binary (issue 3), each in its own temp dir.
//! The null engine and 200 ms cells keep them fast; one short quick suite does real io_uring IO.

use serde_json::Value;
use std::collections::BTreeSet;

use crate::common;
use common::*;

/// Block size label as bm-flash prints it, computed here rather than taken from iogauge.
fn label(bs: u64) -> String {
    match bs {
        b if b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b % 1024 == 0 => format!("{}K", b >> 10),
        b => format!("{b}B"),
    }
}

/// What every cell of every suite keeps: a name that matches its workload, IO done, and
/// numbers that agree with each other.
fn check_results(doc: &Value, suite: &str) -> Vec<Value> {
    assert_eq!(doc["schema"], "iogauge.run/1");
    assert_eq!(doc["suite"], suite);
    assert_eq!(doc["interrupted"], false);
    let results = doc["results"].as_array().unwrap().clone();
    for r in &results {
        let w = &r["workload"];
        let name = r["name"].as_str().expect("every cell has a name");
        let rw = w["rw"].as_str().unwrap();
        let op = if name.contains("copy") { "copy" } else { rw };
        assert!(name.contains(op), "{name} names its pattern {rw}");
        let bs = f(&w["bs"]) as u64;
        assert!(
            name.contains(&label(bs)),
            "{name} names its block size {bs}"
        );
        for key in [
            "threads",
            "iodepth",
            "engine",
            "direct",
            "mix_read_pct",
            "seed",
            "interval_s",
        ] {
            assert!(!w[key].is_null(), "{name}: workload.{key}");
        }
        assert_eq!(w["engine"], "null");
        let ios = f(&r["ios"]);
        assert!(ios > 0.0, "{name} did IO");
        assert_eq!(f(&r["bytes"]), ios * bs as f64, "{name}: bytes = ios × bs");
        assert!((f(&r["iops"]) * f(&r["runtime_s"]) - ios).abs() <= ios * 1e-9 + 1e-6);
        let in_hist: f64 = r["lat_hist"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| f(&p[1]))
            .sum();
        assert_eq!(in_hist, ios, "{name}: the histogram holds every IO");
    }
    results
}

fn rw_bs_threads(results: &[Value]) -> BTreeSet<(String, u64, u64)> {
    results
        .iter()
        .map(|r| {
            let w = &r["workload"];
            (
                w["rw"].as_str().unwrap().to_string(),
                f(&w["bs"]) as u64,
                f(&w["threads"]) as u64,
            )
        })
        .collect()
}

/// Runs a suite on a path that does not exist yet and on a directory; checks the JSON with
/// `check`, and that no test file is left behind.
fn on_file_and_directory(suite: &str, extra: &[&str], check: impl Fn(&[Value])) {
    for on_dir in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let target = if on_dir {
            work.clone()
        } else {
            work.join("created.dat")
        };
        let mut args = vec!["suite", suite, target.to_str().unwrap()];
        args.extend([
            "--engine",
            "null",
            "--cell-time",
            "200ms",
            "--json",
            "--no-store",
        ]);
        args.extend(extra);
        let doc = json_of(&iogauge(dir.path(), &args));
        let results = check_results(&doc, suite);
        check(&results);
        for r in &results {
            assert_eq!(r["target"]["created"], true);
        }
        let left: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
        assert!(
            left.is_empty(),
            "{suite}: test files removed, found {left:?}"
        );
    }
}

#[test]
fn every_suite_runs_on_a_created_file_and_on_a_directory() {
    on_file_and_directory(
        "matrix",
        &["--size", "8m", "--sizes", "4k,64k", "--threads", "1,3"],
        |r| {
            let mut want = BTreeSet::new();
            for rw in ["randread", "randwrite"] {
                for bs in [4096, 65536] {
                    for t in [1, 3] {
                        want.insert((rw.to_string(), bs, t));
                    }
                }
            }
            assert_eq!(r.len(), 8);
            assert_eq!(rw_bs_threads(r), want);
            assert!(
                r.iter()
                    .all(|x| f(&x["workload"]["iodepth"]) == 1.0
                        && f(&x["workload"]["time_s"]) == 0.2)
            );
        },
    );
    on_file_and_directory("seq", &["--size", "8m", "--sizes", "4k,1m"], |r| {
        assert_eq!(r.len(), 6);
        let order: Vec<&str> = r.iter().map(|x| x["name"].as_str().unwrap()).collect();
        assert_eq!(
            order,
            ["write 4K", "write 1M", "read 4K", "read 1M", "copy 4K", "copy 1M"]
        );
        for x in r {
            // One pass over the 8 MiB file each; a copy reads half and writes half.
            assert_eq!(
                f(&x["workload"]["data_bytes"]),
                (8 << 20) as f64,
                "{}",
                x["name"]
            );
            assert_eq!(f(&x["bytes"]), (8 << 20) as f64, "{}", x["name"]);
            let says = x["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v["kind"] == "cache");
            assert!(says, "{}: says where its data came from", x["name"]);
        }
        let copy = &r[4];
        assert_eq!(copy["workload"]["rw"], "rw");
        assert_eq!(f(&copy["read"]["bytes"]), (4 << 20) as f64);
        assert_eq!(f(&copy["write"]["bytes"]), (4 << 20) as f64);
    });
    on_file_and_directory("fsync", &["--size", "32m"], |r| {
        assert_eq!(r.len(), 6);
        let sync: Vec<(Value, Value)> = r
            .iter()
            .map(|x| {
                (
                    x["workload"]["sync"].clone(),
                    x["workload"]["sync_every"].clone(),
                )
            })
            .collect();
        for (i, kind) in ["fsync", "fsync", "fdatasync", "fdatasync", "fdatasync"]
            .iter()
            .enumerate()
        {
            assert_eq!(
                sync[i],
                (Value::from(*kind), Value::from(1)),
                "{}",
                r[i]["name"]
            );
            assert!(f(&r[i]["sync"]["count"]) > 0.0);
        }
        // sysbench's one 16 KiB file; the WAL segment of 16 MiB.
        assert!(r[..4]
            .iter()
            .all(|x| f(&x["target"]["range_bytes"]) == 16384.0));
        assert_eq!(f(&r[4]["target"]["range_bytes"]), (16 << 20) as f64);
        assert_eq!(r[5]["workload"]["odsync"], true);
        assert!(r[5]["workload"]["sync"].is_null());
    });
    on_file_and_directory("seeks", &["--size", "8m"], |r| {
        assert_eq!(r.len(), 1);
        let w = &r[0]["workload"];
        assert_eq!(
            (
                w["rw"].as_str(),
                f(&w["bs"]),
                f(&w["threads"]),
                f(&w["iodepth"])
            ),
            (Some("randread"), 8192.0, 1.0, 1.0)
        );
        assert_eq!(w["direct"], true);
    });
    on_file_and_directory(
        "mixes",
        &["--size", "8m", "--read-pct", "100,70", "--qd", "1,8"],
        |r| {
            assert_eq!(r.len(), 6);
            let small: BTreeSet<(u64, u64)> = r[..4]
                .iter()
                .map(|x| {
                    (
                        f(&x["workload"]["mix_read_pct"]) as u64,
                        f(&x["workload"]["iodepth"]) as u64,
                    )
                })
                .collect();
            assert_eq!(
                small,
                [(100, 1), (100, 8), (70, 1), (70, 8)].into_iter().collect()
            );
            assert!(r[..4]
                .iter()
                .all(|x| x["workload"]["rw"] == "randrw" && f(&x["workload"]["bs"]) == 8192.0));
            assert!(r[4..]
                .iter()
                .all(|x| f(&x["workload"]["bs"]) == (1 << 20) as f64));
        },
    );
    on_file_and_directory("quick", &["--size", "16m"], |r| {
        assert_eq!(r.len(), 2 * 2 * 2 + 2 + 1 + 1);
        let has = |rw: &str, pct: f64| {
            r.iter()
                .any(|x| x["workload"]["rw"] == rw && f(&x["workload"]["mix_read_pct"]) == pct)
        };
        assert!(has("randrw", 70.0) && has("read", 100.0) && has("write", 0.0));
        assert!(r.iter().any(|x| !x["workload"]["sync"].is_null()));
    });
    on_file_and_directory(
        "full",
        &[
            "--size",
            "8m",
            "--sizes",
            "4k",
            "--threads",
            "1",
            "--read-pct",
            "50",
            "--qd",
            "2",
        ],
        |r| {
            // matrix 2, seq 3, fsync 6, seeks 1, mixes 1 + 2 streams.
            assert_eq!(r.len(), 2 + 3 + 6 + 1 + 3);
            for (prefix, n) in [
                ("matrix: ", 2),
                ("seq: ", 3),
                ("fsync: ", 6),
                ("seeks: ", 1),
                ("mixes: ", 3),
            ] {
                let k = r
                    .iter()
                    .filter(|x| x["name"].as_str().unwrap().starts_with(prefix))
                    .count();
                assert_eq!(k, n, "{prefix}");
            }
        },
    );
}

#[test]
fn a_suite_file_runs_and_a_bad_one_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = "name = \"mine\"\ndescription = \"two cells\"\n\n[[group]]\ntitle = \"t\"\nlayout = \"plain\"\nrw = [\"randread\", \"randwrite\"]\nbs = [\"4k\"]\ntime = \"200ms\"\n";
    std::fs::write(dir.path().join("mine.toml"), good).unwrap();
    let doc = json_of(&iogauge(
        dir.path(),
        &[
            "suite",
            "--file",
            "mine.toml",
            "--engine",
            "null",
            "--size",
            "4m",
            "--json",
            "--no-store",
        ],
    ));
    let r = check_results(&doc, "mine");
    assert_eq!(r.len(), 2);
    assert_eq!(f(&r[0]["workload"]["time_s"]), 0.2);

    // Line 8 holds a block size larger than any iogauge issues.
    let bad = good.replace("bs = [\"4k\"]", "bs = [\"128m\"]");
    assert_eq!(bad.lines().position(|l| l.contains("128m")), Some(7));
    std::fs::write(dir.path().join("bad.toml"), &bad).unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "--file",
            "bad.toml",
            "--engine",
            "null",
            "--no-store",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("bad.toml:8:"), "names the line: {err}");
    assert!(err.contains("64MiB"), "says what is wrong: {err}");
    assert!(out.stdout.is_empty());

    // 1000-byte blocks: refused under direct IO, naming the cell; planned buffered (issue 60).
    let odd = good.replace("bs = [\"4k\"]", "bs = [\"1000\"]");
    std::fs::write(dir.path().join("odd.toml"), &odd).unwrap();
    let odd_suite = |extra: &[&str]| {
        let mut args = vec!["suite", "--file", "odd.toml", "--dry-run"];
        args.extend_from_slice(extra);
        iogauge(dir.path(), &args)
    };
    let out = odd_suite(&[]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a block of 1000B: direct IO needs a multiple of 512 bytes"),
        "{err}"
    );
    let out = odd_suite(&["--buffered"]);
    assert!(out.status.success(), "{}", stderr_of(&out));

    // A TOML syntax error, on line 3.
    std::fs::write(
        dir.path().join("syntax.toml"),
        "name = \"x\"\ndescription = \"y\"\n[[group]\n",
    )
    .unwrap();
    let out = iogauge(
        dir.path(),
        &["suite", "--file", "syntax.toml", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("syntax.toml:3:"), "{err}");

    // A list the suite does not take is refused before anything is created.
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "matrix",
            "--qd",
            "4",
            "--engine",
            "null",
            "--no-store",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--qd"));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-test"))
        .collect();
    assert!(left.is_empty());
}

#[test]
fn matrix_text_has_bm_flash_shape() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "matrix",
            "--engine",
            "null",
            "--cell-time",
            "200ms",
            "--size",
            "8m",
            "--sizes",
            "512,4k,1m",
            "--threads",
            "1,4",
            "--no-store",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    for title in ["Read Tests:", "Write Tests:"] {
        let at = lines
            .iter()
            .position(|l| *l == title)
            .unwrap_or_else(|| panic!("{title} in\n{text}"));
        assert_eq!(lines[at + 1], "");
        let head = lines[at + 2];
        assert!(head.starts_with("Block |"), "{head}");
        let cols: Vec<&str> = head.split('|').map(str::trim).collect();
        assert_eq!(cols, ["Block", "1 thread", "4 threads"]);
        let units: Vec<Vec<&str>> = lines[at + 3]
            .split('|')
            .map(|c| c.split_whitespace().collect())
            .collect();
        assert_eq!(
            units,
            [vec!["Size"], vec!["IOPS", "BW"], vec!["IOPS", "BW"]]
        );
        let spacer: Vec<&str> = lines[at + 4].split('|').map(str::trim).collect();
        assert_eq!(spacer, ["", "", ""], "an empty line with the column bars");
        for (k, bs) in ["512B", "4K", "1M"].iter().enumerate() {
            let row = lines[at + 5 + k];
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 3, "{row}");
            assert_eq!(cells[0], *bs);
            assert_eq!(row.find('|'), head.find('|'), "columns line up: {row}");
            for c in &cells[1..] {
                // IOPS with thousands separators, then bandwidth in MiB/s; or a skipped cell.
                let parts: Vec<&str> = c.split_whitespace().collect();
                let ok = *c == "skipped"
                    || (parts.len() == 3
                        && parts[0].replace(',', "").parse::<u64>().is_ok()
                        && parts[2] == "MiB/s");
                assert!(ok, "{row}");
            }
        }
        assert_eq!(
            lines.get(at + 8).copied().unwrap_or(""),
            "",
            "three rows, then a blank line"
        );
    }
    assert!(text.contains("Summary"));
}

#[test]
fn an_interrupted_suite_keeps_its_finished_cells() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = Spawned::iogauge(
        dir.path(),
        &[
            "suite",
            "matrix",
            "--engine",
            "null",
            "--cell-time",
            "200ms",
            "--size",
            "8m",
            "--threads",
            "1,2",
            "--json",
            "--no-store",
        ],
    );
    // 56 cells of 200 ms would take 11 s; stop it once two have finished.
    run.wait_for("[2/", WATCHDOG);
    run.signal("INT");
    let out = run.finish(WATCHDOG);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the finished cells as JSON");
    assert_eq!(doc["suite"], "matrix");
    assert_eq!(doc["interrupted"], true);
    let results = doc["results"].as_array().unwrap();
    assert!(
        results.len() >= 2 && results.len() < 56,
        "{} cells",
        results.len()
    );
    // Every cell but the last ran to its end; the last may have been cut short.
    for r in &results[..results.len() - 1] {
        assert_eq!(r["interrupted"], false, "{}", r["name"]);
        assert!(f(&r["ios"]) > 0.0);
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-test"))
        .collect();
    assert!(left.is_empty(), "test file removed: {left:?}");
}

#[test]
fn quick_does_real_io_with_io_uring() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "quick",
            "--cell-time",
            "200ms",
            "--size",
            "16m",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 12);
    for r in results {
        assert_eq!(r["workload"]["engine"], "io_uring");
        assert!(f(&r["ios"]) > 0.0, "{}", r["name"]);
        assert_eq!(r["io_path"], "direct");
    }
    let synced = results.iter().find(|r| !r["sync"].is_null()).unwrap();
    assert!(f(&synced["sync"]["count"]) > 0.0);
    assert!(f(&synced["sync"]["lat_ns"]["p99"]) > 0.0);
}

#[test]
fn until_stable_says_when_each_cell_was_stable() {
    let dir = tempfile::tempdir().unwrap();
    // A fixed-data cell first (no time to be stable in), then a timed one: each finding must
    // land on its own cell.
    let suite = "name = \"two\"\ndescription = \"d\"\n\n[[group]]\ntitle = \"s\"\nlayout = \"seq\"\nrw = [\"write\"]\nbs = [\"1m\"]\ndata = \"range\"\n\n[[group]]\ntitle = \"p\"\nlayout = \"plain\"\nrw = [\"randread\"]\nbs = [\"4k\"]\n";
    std::fs::write(dir.path().join("two.toml"), suite).unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "--file",
            "two.toml",
            "--engine",
            "null",
            "--cell-time",
            "3s",
            "--until-stable",
            "--size",
            "8m",
            "--json",
            "--no-store",
        ],
    );
    let doc = json_of(&out);
    let stability = |r: &Value| -> Vec<Value> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["kind"] == "steady" && !v["evidence"]["ran_s"].is_null())
            .cloned()
            .collect()
    };
    assert!(
        stability(&doc["results"][0]).is_empty(),
        "a fixed-data cell has no stability"
    );
    let timed = stability(&doc["results"][1]);
    assert_eq!(timed.len(), 1, "{}", doc["results"][1]["findings"]);
    assert_eq!(timed[0]["result"], 1);
    let e = &timed[0]["evidence"];
    let ran = f(&e["ran_s"]);
    if e["stable_after_s"].is_null() {
        assert_eq!(ran, 3.0, "not stable: it ran its whole --cell-time");
    } else {
        let after = f(&e["stable_after_s"]);
        // Judged on 100 ms samples (batch means), never before the minimum second.
        assert!((1.0..=3.0).contains(&after), "stable after {after} s");
        assert!(f(&e["ci95_half_width_frac"]) <= 0.03);
        assert!(ran <= 3.0 + 1e-9, "ran {ran} s of at most 3 s");
        // Stable means stopped there, not run to the limit.
        assert!(ran <= after + 0.5, "stable after {after} s but ran {ran} s");
    }
}

/// Issue 43, item 5: on a target it may not write, a suite skips its writing cells; the plan
/// says so once, and the notes after the tables said it again for every cell (22 lines for
/// Orion's mixes). Now one note says it, with how many.
#[test]
fn a_read_only_suite_says_once_that_its_writing_cells_were_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "mixes",
            file.to_str().unwrap(),
            "--engine",
            "null",
            "--cell-time",
            "200ms",
            "--read-pct",
            "100,50",
            "--qd",
            "1,2",
        ],
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr_of(&out)
    );
    assert!(out.status.success(), "{all}");
    // The writing cells: randrw 50/50 at QD 1 and 2, and the sequential write.
    let told: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("--allow-overwrite"))
        .collect();
    assert_eq!(told.len(), 2, "the plan and one note: {all}");
    assert!(
        told.iter()
            .any(|l| l.contains("the 3 cells that write are skipped")),
        "{all}"
    );
    assert!(
        told.iter()
            .any(|l| l.starts_with("note: skipped the 3 cells that write")),
        "{all}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 8 << 20]);
}
