//! End-to-end tests of findings and `iogauge report` through the binary (issue 5), each in its
//! own temp dir: the report of a synthetic matrix suite, an Orion sweep and a comparison has
//! every chart kind; `--charts DIR` writes them as files; an unknown run is a one-line usage
//! error; headless Chromium renders the page with its charts; and a real freeze of a
//! loop-mounted ext4 (fsfreeze) is found as a stall at the right time.

use serde_json::{json, Value};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::common;
use common::*;

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "iogauge failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// Synthetic run documents, in the JSON of `iogauge run --json` (schema iogauge.run/1).

/// A result of `iops` over 10 s with Little's-law latency, 1 s samples and 100 ms bins; bins
/// in `stall` (as [from, to) seconds) complete nothing.
fn result(
    rw: &str,
    mix: u8,
    bs: u64,
    threads: u32,
    qd: u32,
    iops: f64,
    stall: Option<(f64, f64)>,
) -> Value {
    let mean_ns = f64::from(threads * qd) / iops * 1e9;
    let ios = (iops * 10.0) as u64;
    let fine: Vec<u64> = (0..100)
        .map(|b| {
            let t = b as f64 / 10.0;
            match stall {
                Some((from, to)) if t + 1e-9 >= from && t + 1e-9 < to => 0,
                _ => (iops / 10.0) as u64,
            }
        })
        .collect();
    let timeseries: Vec<Value> = (1..=10)
        .map(|s| {
            let sum: u64 = fine[(s - 1) * 10..s * 10].iter().sum();
            json!({"t_s": s as f64, "iops": sum as f64, "bw_bytes": sum as f64 * bs as f64,
                   "lat_p50_ns": mean_ns as u64, "lat_p99_ns": (mean_ns * 3.0) as u64})
        })
        .collect();
    // A log-normal-ish histogram: most IOs near the mean, a thin tail out to 20×.
    let hist: Vec<Value> = [
        (0.5, 0.3),
        (1.0, 0.5),
        (2.0, 0.18),
        (5.0, 0.019),
        (20.0, 0.001),
    ]
    .iter()
    .map(|(f, share)| json!([(mean_ns * f) as u64, ((ios as f64) * share).max(1.0) as u64]))
    .collect();
    json!({
        "name": null,
        "workload": {"rw": rw, "bs": bs, "threads": threads, "iodepth": qd, "engine": "io_uring",
            "direct": true, "mix_read_pct": mix, "sync": null, "sync_every": null, "odsync": false,
            "seed": 1, "time_s": 10.0, "data_bytes": null, "ramp_s": 0.0, "interval_s": 1.0},
        "target": {"path": "/dev/md0", "kind": "block_device", "created": false, "offset_bytes": 0,
            "range_bytes": 1u64 << 40, "logical_block_size": 512},
        "iops": iops, "bw_bytes": iops * bs as f64, "ios": ios, "bytes": ios * bs, "runtime_s": 10.0,
        "lat_ns": {"min": (mean_ns / 4.0) as u64, "mean": mean_ns, "p50": mean_ns as u64,
            "p90": (mean_ns * 2.0) as u64, "p99": (mean_ns * 5.0) as u64,
            "p999": (mean_ns * 10.0) as u64, "p9999": (mean_ns * 20.0) as u64,
            "max": (mean_ns * 20.0) as u64},
        "lat_hist": hist,
        "read": null, "write": null, "sync": null,
        "cpu": {"user_s": 1.0, "sys_s": 2.0, "per_io_us": 3.0},
        "timeseries": timeseries,
        "fine": {"bin_s": 0.1, "ios": fine},
        "engine": {"name": "io_uring", "flags": [], "refused": [], "registered_buffers": true,
            "registered_files": true},
        "interrupted": false, "io_path": "direct", "findings": []
    })
}

fn run_doc(id: &str, suite: &str, params: Value, results: Vec<Value>) -> Value {
    json!({
        "schema": "iogauge.run/1", "run_id": id, "label": id,
        "started_at": "2024-05-01T10:00:00Z", "command": ["iogauge", "suite", suite],
        "suite": suite,
        "system": {"kernel": "6.1.0-18-amd64", "hostname": "db1", "cpu_model": "Xeon E5-2680",
            "cpu_count": 16, "mem_total_bytes": 68719476736u64,
            "target": {"path": "/dev/md0", "kind": "block_device", "filesystem": null,
                "mount_point": null, "mount_source": null, "mount_options": null,
                "fs_block_size": null,
                "devices": devices()}},
        "results": results, "findings": [], "interrupted": false,
        "notes": ["synthetic run for the report test"], "params": params
    })
}

/// A RAID0 of four SSDs, the array and its first member.
fn devices() -> Value {
    let md = json!(
{"name": "md0", "dev": "9:0", "role": "md", "model": null, "vendor": null,
                     "size_bytes": 1099511627776u64, "rotational": false,
                     "logical_block_size": 512, "physical_block_size": 4096,
                     "minimum_io_size": 524288, "optimal_io_size": 2097152,
                     "scheduler": "none", "schedulers_available": ["none"], "nr_requests": null,
                     "read_ahead_kb": 4096, "write_cache": null, "queue_depth": null,
                     "partition_start_bytes": null, "aligned_1mib": null,
                     "aligned_physical": null, "md_level": "raid0", "md_chunk_bytes": 524288,
                     "md_members": ["sda", "sdb", "sdc", "sdd"], "loop_backing_file": null,
                     "dm_name": null});
    let sda = json!(
{"name": "sda", "dev": "8:0", "role": "disk", "model": "SSDSC2BB480G4",
                     "vendor": "ATA", "size_bytes": 480103981056u64, "rotational": false,
                     "logical_block_size": 512, "physical_block_size": 4096,
                     "minimum_io_size": 4096, "optimal_io_size": null, "scheduler": "mq-deadline",
                     "schedulers_available": ["mq-deadline", "none"], "nr_requests": 64,
                     "read_ahead_kb": 128, "write_cache": "write back", "queue_depth": 32,
                     "partition_start_bytes": null, "aligned_1mib": null,
                     "aligned_physical": null, "md_level": null, "md_chunk_bytes": null,
                     "md_members": [], "loop_backing_file": null, "dm_name": null});
    json!([md, sda])
}

const SIZES: [u64; 8] = [4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576];

/// bm-flash's matrix on `disks` disks: randread and randwrite, block sizes × 1/10/40 threads.
/// IOPS follow a power law in block size (so nothing is a gap) scaled by the disks up to 4;
/// one randwrite cell is a gap, one cell stalls for 3 s, and the 4 KiB cells have 5 repeats.
fn matrix(id: &str, disks: u32) -> Value {
    let mut results = Vec::new();
    for rw in ["randread", "randwrite"] {
        for bs in SIZES {
            for t in [1u32, 10, 40] {
                let scale = f64::from(disks.min(4)) * if rw == "randwrite" { 0.4 } else { 1.0 };
                let mut iops = 8_000.0 * scale * f64::from(t).sqrt() * (4096.0 / bs as f64).sqrt();
                if rw == "randwrite" && bs == 65536 && t == 10 {
                    iops /= 6.0;
                }
                let stall = (rw == "randread" && bs == 16384 && t == 1).then_some((4.0, 7.0));
                let mut r = result(rw, 50, bs, t, 1, iops, stall);
                if bs == 4096 {
                    let values: Vec<f64> = [0.97, 1.01, 1.0, 1.03, 0.99]
                        .iter()
                        .map(|f| f * iops)
                        .collect();
                    r["stats"] = json!({"iops": {"n": 5, "values": values, "mean": iops,
                        "median": iops, "stddev": iops * 0.02, "cv": 0.02,
                        "ci95": [iops * 0.975, iops * 1.025], "min": iops * 0.97,
                        "max": iops * 1.03, "outliers": [], "mean_without_outliers": iops}});
                }
                results.push(r);
            }
        }
    }
    run_doc(id, "matrix", json!({"disks": disks.to_string()}), results)
}

/// Orion's sweep: 100/90/50 % reads × 1 … 32 outstanding IOs at 8 KiB, levelling off at 8.
fn mixes(id: &str) -> Value {
    let mut results = Vec::new();
    for pct in [100u8, 90, 50] {
        for qd in [1u32, 2, 4, 8, 16, 32] {
            let iops = 6_000.0 * f64::from(qd.min(8)) * (0.5 + f64::from(pct) / 200.0);
            results.push(result("randrw", pct, 8192, 1, qd, iops, None));
        }
    }
    run_doc(id, "mixes", json!({}), results)
}

/// Writes the three documents and returns their paths.
fn write_docs(dir: &Path) -> Vec<PathBuf> {
    [
        ("raid0-2", matrix("raid0-2", 2)),
        ("raid0-4", matrix("raid0-4", 4)),
        ("orion", mixes("orion")),
    ]
    .into_iter()
    .map(|(name, doc)| {
        let p = dir.join(format!("{name}.json"));
        std::fs::write(&p, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        p
    })
    .collect()
}

fn report_args<'a>(docs: &'a [PathBuf], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["report"];
    for d in docs {
        args.push("--from-json");
        args.push(d.to_str().unwrap());
    }
    args.extend_from_slice(extra);
    args
}

const KINDS: [&str; 7] = [
    "bs-iops",
    "bs-bw",
    "orion",
    "latency",
    "timeseries",
    "compare",
    "scaling",
];

#[test]
fn matrix_suite_and_comparison_show_every_chart_and_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = write_docs(tmp.path());
    let out = iogauge(
        tmp.path(),
        &report_args(&docs, &["-o", "report.html", "--charts", "charts"]),
    );
    ok(&out);
    let html = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
    for kind in KINDS {
        assert!(
            html.contains(&format!("data-kind=\"{kind}\"")),
            "no {kind} chart"
        );
    }
    // Self-contained: no scripts, no fetches, no links out; readable on a phone, printable.
    assert!(!html.contains("<script"));
    let outside = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!outside.contains("http://") && !outside.contains("https://"));
    assert!(
        !outside.contains(" src="),
        "nothing is loaded from elsewhere"
    );
    assert!(html.contains("name=\"viewport\""));
    assert!(html.contains("@media print"));
    // The system of each run, with its device stack and scheduler.
    for s in [
        "6.1.0-18-amd64",
        "Xeon E5-2680",
        "64 GiB",
        "raid0, chunk 512 KiB",
        "mq-deadline",
    ] {
        assert!(html.contains(s), "system: {s}");
    }
    // Findings the data was built to have: the stall, the gap (in both matrix runs), the
    // Orion ceiling from 8 outstanding IOs.
    for kind in ["stall", "gap", "ceiling"] {
        assert!(
            html.contains(&format!("class=\"finding warning\" data-kind=\"{kind}\""))
                || html.contains(&format!("class=\"finding info\" data-kind=\"{kind}\"")),
            "finding {kind}"
        );
    }
    assert!(
        html.contains("randwrite, iodepth 1: IOPS at 64 KiB, 10 threads is"),
        "the gap names its cell"
    );
    // Every kind is drawn: the "not drawn" line only names what the caps left out, and the
    // convergence of runs in rounds (SNIA suites), which these runs are not.
    let absent = html
        .lines()
        .find(|l| l.contains("id=\"absent\""))
        .unwrap_or("")
        .replace(
            "steady-state convergence: no run went in rounds (the snia-iops, snia-latency and snia-throughput suites do)",
            "",
        );
    for why in ["needs", "no run", "no result", "share no"] {
        assert!(!absent.contains(why), "{absent}");
    }

    // --charts DIR: one SVG and one PNG file per figure on the page.
    let figures = html.matches("<figure class=\"chart\"").count();
    let all: Vec<PathBuf> = std::fs::read_dir(tmp.path().join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let mut files: Vec<PathBuf> = all
        .iter()
        .filter(|f| f.extension().unwrap() == "svg")
        .cloned()
        .collect();
    files.sort();
    assert_eq!(files.len(), figures);
    for svg in &files {
        let png = std::fs::read(svg.with_extension("png")).expect("a PNG beside each SVG");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{}", svg.display());
        assert!(png.len() > 5_000, "{} is not blank", svg.display());
    }
    assert_eq!(all.len(), 2 * figures, "nothing else in the directory");
    for f in &files {
        assert_eq!(f.extension().unwrap(), "svg");
        let svg = std::fs::read_to_string(f).unwrap();
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{}",
            f.display()
        );
        assert!(svg.trim_end().ends_with("</svg>"));
        let id = f.file_stem().unwrap().to_str().unwrap();
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "file {id} is a figure on the page"
        );
    }
    for kind in KINDS {
        assert!(
            files
                .iter()
                .any(|f| f.to_str().unwrap().contains(&format!("-{kind}-"))),
            "no {kind} file"
        );
    }
}

#[test]
fn a_single_run_says_which_charts_are_absent_and_why() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = write_docs(tmp.path());
    let out = iogauge(tmp.path(), &report_args(&docs[2..], &["-o", "orion.html"]));
    ok(&out);
    let html = std::fs::read_to_string(tmp.path().join("orion.html")).unwrap();
    assert!(html.contains("data-kind=\"orion\""));
    let absent = html
        .lines()
        .find(|l| l.contains("id=\"absent\""))
        .expect("a line saying what is not drawn");
    for why in [
        "by block size",
        "runs compared: needs two or more runs",
        "scaling: needs",
    ] {
        assert!(absent.contains(why), "{why} in {absent}");
    }
}

#[test]
fn stored_runs_are_reported_and_an_unknown_run_is_one_line_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = iogauge(
        dir,
        &[
            "run", "t.dat", "--engine", "null", "--size", "1m", "--time", "1s", "--label",
            "nullrun",
        ],
    );
    ok(&out);
    let out = iogauge(dir, &["report", "nullrun", "-o", "stored.html"]);
    ok(&out);
    let html = std::fs::read_to_string(dir.join("stored.html")).unwrap();
    assert!(html.contains("nullrun"));
    assert!(html.contains("data-kind=\"latency\""));

    let out = iogauge(dir, &["report", "no-such-run", "-o", "x.html"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no-such-run"), "{err}");
    assert!(!dir.join("x.html").exists());

    // A file that is not a run document is a usage error too.
    std::fs::write(dir.join("bad.json"), "{\"schema\": 1}").unwrap();
    let out = iogauge(dir, &["report", "--from-json", "bad.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .trim_end()
            .lines()
            .count(),
        1
    );
}

#[test]
fn thresholds_file_changes_the_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = write_docs(tmp.path());
    // The gap cell is at 1/6 of its trend: found at gap_frac 0.5, not at 0.1.
    std::fs::write(tmp.path().join("th.toml"), "gap_frac = 0.1\n").unwrap();
    let out = iogauge(
        tmp.path(),
        &report_args(&docs[..1], &["-o", "a.html", "--thresholds", "th.toml"]),
    );
    ok(&out);
    let html = std::fs::read_to_string(tmp.path().join("a.html")).unwrap();
    assert!(!html.contains("data-kind=\"gap\""));
    assert!(html.contains("data-kind=\"stall\""));
    std::fs::write(tmp.path().join("bad.toml"), "gap_frac = 5\n").unwrap();
    let out = iogauge(
        tmp.path(),
        &report_args(&docs[..1], &["--thresholds", "bad.toml"]),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gap_frac"));
}

/// Issue 43, item 2: a thresholds file's names were only in the source, and a misspelled one
/// was ignored (the findings came out with the default the user meant to change). Now
/// `--list-thresholds` prints them with their defaults, and a name not among them is refused.
#[test]
fn thresholds_are_listed_and_an_unknown_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = iogauge(tmp.path(), &["report", "--list-thresholds"]);
    ok(&out);
    let list = String::from_utf8_lossy(&out.stdout).into_owned();
    let row = |name: &str| {
        list.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in:\n{list}"))
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_eq!(row("gap_frac"), "0.5");
    assert_eq!(row("stall_min_count"), "10");
    // Every name listed is one a thresholds file may set, at its default.
    let every: String = list
        .lines()
        .skip(1)
        .map(|l| {
            let name = l.split_whitespace().next().unwrap();
            format!("{name} = {}\n", row(name).parse::<f64>().unwrap())
        })
        .collect();
    assert_eq!(every.lines().count(), 21, "{list}");
    std::fs::write(tmp.path().join("all.toml"), every).unwrap();
    let docs = write_docs(tmp.path());
    let out = iogauge(
        tmp.path(),
        &report_args(&docs[..1], &["-o", "all.html", "--thresholds", "all.toml"]),
    );
    ok(&out);
    // A misspelled name: one line naming it and the one meant, exit 2, no report.
    std::fs::write(tmp.path().join("typo.toml"), "gap_fraction = 0.3\n").unwrap();
    let out = iogauge(
        tmp.path(),
        &report_args(
            &docs[..1],
            &["-o", "typo.html", "--thresholds", "typo.toml"],
        ),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("'gap_fraction'") && err.contains("nearest is gap_frac"),
        "{err}"
    );
    assert!(err.contains("--list-thresholds"), "{err}");
    assert!(!tmp.path().join("typo.html").exists());
}

// ---------------------------------------------------------------------------------------------
// Headless Chromium.

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Waits for `child`, killing it after `limit`; its output, or `None` on timeout. Its pipes are
/// drained meanwhile, so that a child writing more than a pipe holds does not block forever.
fn wait_for(mut child: Child, limit: Duration) -> Option<Output> {
    fn drain(
        pipe: Option<impl std::io::Read + Send + 'static>,
    ) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    }
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let mut status = None;
    // An error asking for its status ends the wait as an exit would: the child is ended below.
    poll_until(limit, || match child.try_wait() {
        Ok(Some(s)) => {
            status = Some(s);
            true
        }
        Ok(None) => false,
        Err(_) => true,
    });
    if status.is_none() {
        // Chromium's launcher is a script that does not exec: end the whole group.
        let group = format!("-{}", child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = child.kill();
        let _ = child.wait();
    }
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    status.map(|status| Output {
        status,
        stdout,
        stderr,
    })
}

fn chrome(bin: &str, profile: &Path, args: &[&str], url: &str) -> Output {
    let child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    wait_for(child, Duration::from_secs(120)).expect("chromium finished within 2 minutes")
}

/// Width, height and the summed IDAT (compressed pixel) bytes of a PNG.
fn png_facts(png: &[u8]) -> (u32, u32, usize) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG file");
    let (mut w, mut h, mut idat) = (0, 0, 0);
    let mut at = 8;
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..(at + 8 + len).min(png.len())];
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap());
                h = u32::from_be_bytes(data[4..8].try_into().unwrap());
            }
            b"IDAT" => idat += len,
            _ => {}
        }
        at += 12 + len;
    }
    (w, h, idat)
}

#[test]
fn chromium_renders_the_report_with_its_charts() {
    let Some(bin) = chromium() else {
        skip("needs chromium");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let docs = write_docs(tmp.path());
    ok(&iogauge(
        tmp.path(),
        &report_args(&docs, &["-o", "report.html"]),
    ));
    let page = tmp.path().join("report.html");
    let url = format!("file://{}", page.display());
    let html = std::fs::read_to_string(&page).unwrap();
    let figures = html.matches("<figure class=\"chart\"").count();
    assert!(figures >= KINDS.len());

    // The DOM as the browser built it: every figure holds a parsed SVG with drawn lines or bars.
    let dom = chrome(bin, &tmp.path().join("profile-dom"), &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("<h1>iogauge report</h1>"),
        "the browser loaded the report"
    );
    assert_eq!(dom.matches("<figure class=\"chart\"").count(), figures);
    assert!(dom.matches("<svg").count() >= figures);
    assert!(
        dom.contains("<polyline") || dom.contains("<path"),
        "lines are drawn"
    );
    for kind in KINDS {
        assert!(
            dom.contains(&format!("data-kind=\"{kind}\"")),
            "{kind} in the DOM"
        );
    }

    // The pixels: a blank 1000 × 2000 page compresses to about 10 KB; ours is many times that.
    let shot = tmp.path().join("report.png");
    let _ = chrome(
        bin,
        &tmp.path().join("profile-shot"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1000,2000",
        ],
        &url,
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    let (w, h, idat) = png_facts(&png);
    assert_eq!((w, h), (1000, 2000));
    assert!(
        idat > 60_000,
        "the screenshot looks blank: {idat} bytes of pixels"
    );
    // For looking at: IOGAUGE_KEEP_REPORT=DIR keeps the page and its screenshot.
    if let Some(keep) = std::env::var_os("IOGAUGE_KEEP_REPORT").map(PathBuf::from) {
        let _ = std::fs::copy(&page, keep.join("report.html"));
        let _ = std::fs::copy(&shot, keep.join("report.png"));
        for d in &docs {
            let _ = std::fs::copy(d, keep.join(d.file_name().unwrap()));
        }
    }
}
