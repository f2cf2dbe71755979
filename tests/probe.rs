//! `iogauge probe cache` (issue 11) against ground truth: buffered reads inside a cgroup v1
//! memory cgroup of known size make the page cache a cache of that size, and the probe must
//! name it within 25%. Needs root; says so otherwise.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

use crate::common;
use common::*;

const LIMIT: u64 = 256 << 20;

struct Cgroup(std::path::PathBuf);

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn the_probe_names_a_memory_cgroups_page_cache() {
    let _quiet = quiet_turn(module_path!());
    needs_root!();
    let memory = Path::new("/sys/fs/cgroup/memory");
    if !memory.join("cgroup.procs").exists() {
        skip("needs cgroup v1 memory");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The data lives in RAM behind a loop device with direct IO, so every miss of the cgroup's
    // page cache costs the same; a virtual disk would add its host's cache as a second level.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let image = shm.path().join("probe.img");
    // Filled outside the cgroup: none of it is in the cgroup's page cache yet.
    {
        let mut f = std::fs::File::create(&image).unwrap();
        let chunk: Vec<u8> = (0..1u32 << 20)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect();
        for _ in 0..1024 {
            std::io::Write::write_all(&mut f, &chunk).unwrap();
        }
    }
    let dev = losetup(&["-f", "--show", "--direct-io=on", image.to_str().unwrap()]);
    let dev = LoopDev {
        dev,
        file: std::fs::canonicalize(&image).unwrap(),
    };
    let file = std::path::PathBuf::from(&dev.dev);
    let cg = Cgroup(memory.join(format!("iogauge-probe-{}", std::process::id())));
    std::fs::create_dir_all(&cg.0).unwrap();
    std::fs::write(cg.0.join("memory.limit_in_bytes"), LIMIT.to_string()).unwrap();
    let written = dir.path().join("probe.json");
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec '{}' probe cache '{}' --buffered --ios 20000 --output '{}'",
        cg.0.display(),
        BIN,
        file.display(),
        written.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("IOGAUGE_DB", dir.path().join("results.db"))
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc: Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "cache" && f["result"].is_null())
        .cloned()
        .unwrap_or(Value::Null);
    eprintln!("user sees: {}", f["summary"]);
    let found = f["evidence"]["cache_bytes"]
        .as_f64()
        .expect("a cache was named");
    let ratio = found / LIMIT as f64;
    assert!(
        (0.75..=1.25).contains(&ratio),
        "found {found} bytes for a {LIMIT}-byte cgroup"
    );
    assert!(f["summary"].as_str().unwrap().contains("a cache of about"));
    // On screen: the verdict, and a row per probing step — the warm-up passes are no results
    // of the probe's and are not shown as such.
    assert!(text.contains(f["summary"].as_str().unwrap()), "{text}");
    let probes = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["workload"]["rw"] == "randread")
        .count();
    let rows = text
        .lines()
        .filter(|l| l.starts_with("  ") && l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, probes, "{text}");
    assert!(!text.contains("read 1M"), "{text}");
    // Each step's own cache warning would only repeat what the probe is for.
    assert!(doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["kind"] != "cache")));
    // A later run on the same device inside the cache is told so, stored or not (issue 37:
    // with --no-store the warning was missing, so storing changed what a run found).
    for store in [&["--no-store"][..], &[][..]] {
        let mut args = vec![
            "run", &dev.dev, "--rw", "randread", "--size", "64m", "--time", "300ms", "--json",
        ];
        args.extend_from_slice(store);
        let later = json_of(&iogauge(dir.path(), &args));
        let said: Vec<&str> = later["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["summary"].as_str())
            .collect();
        assert!(
            said.iter()
                .any(|s| s.contains("fits inside the cache of about")),
            "{store:?}: {said:?}"
        );
    }
}

#[test]
fn the_probe_plans_doubling_working_sets_and_refuses_a_small_target() {
    let _quiet = quiet_turn(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(dir.path(), &["probe", "cache", "--size", "1g", "--dry-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    // 16, 32, … 512 MiB and the whole 1 GiB: 7 sets, a warm pass and a probe each.
    assert!(text.contains("14 cells"), "{text}");
    let out = iogauge(
        dir.path(),
        &["probe", "cache", "--size", "32m", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("at least 64 MiB"),
        "{}",
        stderr_of(&out)
    );
}
