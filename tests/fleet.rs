//! `run` on many ranks under mpirun (issue 25), built with `--features mpi`: three ranks on
//! this machine, each on its own RAM-backed loop device, one of them held by a blkio throttle
//! (the kernel's ground truth for a slow host); and a rank stopped mid-cell.

#![cfg(feature = "mpi")]
#![allow(clippy::disallowed_methods)]

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// mpirun as root on one machine, three ranks on two cores, ended by mpirun itself if anything
/// hangs (its --timeout, which with the ranks' time to stop ends before the tests' watchdog, so a
/// failed test leaves no rank behind), with the test's own run directory.
fn mpirun(dir: &Path, cg: Option<&Blkio>, args: &str) -> Command {
    let line =
        format!("mpirun --allow-run-as-root --oversubscribe --timeout 90 {SIGKILL_AFTER} -n 3 '{BIN}' {args}");
    let line = match cg {
        Some(cg) => format!("echo $$ > {}/cgroup.procs && exec {line}", cg.0.display()),
        None => line,
    };
    let mut c = Command::new("sh");
    c.args(["-c", &line])
        .current_dir(dir)
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .env("IOGAUGE_DB", dir.join("results.db"))
        // Each mpirun's session directory in the test's own: under /tmp the fleet's tests,
        // started at once, raced to make the one /tmp/ompi.HOST.UID ("File exists", orte_init
        // failed).
        .env("OMPI_MCA_orte_tmpdir_base", dir)
        // OpenMPI refuses root without both.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c
}

/// mpirun gives a rank 1 s between SIGTERM and SIGKILL by default; a loaded machine needs
/// longer to stop a cell and remove its test file (docs/multi-host.md says so). Not more than it
/// needs: mpirun waits this long twice once a job is aborted, even when every rank has already
/// exited (OpenMPI 4.1.4 here: a refusal took 38.4 s to end at 20, 4.4 s at 3), and each of the
/// three tests that end a job took 39-40 s of CI's critical path at 20 (issue 57).
const SIGKILL_AFTER: &str = "--mca odls_base_sigkill_timeout 5";

fn needs_mpirun() -> bool {
    if Command::new("mpirun").arg("--version").output().is_err() {
        skip("needs OpenMPI's mpirun (apt-get install openmpi-bin)");
        return false;
    }
    true
}

/// The p-th percentile of the union of histograms given as [value, count] buckets, by the
/// rank definition (the value of the ceil(p·n)-th IO).
fn percentile(buckets: &[Vec<[u64; 2]>], p: f64) -> u64 {
    let mut all: Vec<[u64; 2]> = buckets.iter().flatten().copied().collect();
    all.sort();
    let n: u64 = all.iter().map(|b| b[1]).sum();
    let rank = (p * n as f64).ceil() as u64;
    let mut seen = 0;
    for [v, c] in all {
        seen += c;
        if seen >= rank {
            return v;
        }
    }
    0
}

fn buckets(r: &Value) -> Vec<[u64; 2]> {
    serde_json::from_value(r["lat_hist"].clone()).unwrap()
}

/// The aggregate is the ranks' sum, its p99 the p99 of every rank's IOs together, the cluster
/// has percentiles over time, and the rank throttled lowest is named as the straggler at its
/// throttle.
#[test]
fn three_ranks_reduce_exactly_and_the_throttled_one_straggles() {
    if !needs_mpirun() {
        return;
    }
    needs_root!();
    let Some(cg) = Blkio::new("fleet") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let disks: Vec<RamLoop> = (0..3).map(|_| RamLoop::new(64 << 20)).collect();
    for (i, d) in disks.iter().enumerate() {
        std::os::unix::fs::symlink(&d.dev.dev, dir.path().join(format!("disk{i}"))).unwrap();
    }
    // Rank 1's device is held at 250 reads/s, the others' at 1,000: every level is the
    // kernel's, whatever else the test machine's CPUs are busy with (ranks running free on RAM
    // would take both CPUs, and their rates would be the other tests' to decide). At 1,000 and
    // 4,000 a CI machine busy with the guests beside this test ran every rank about 11% under
    // its throttle (891 reads/s at 1,000): the levels are low enough now for the CPU to keep.
    for (i, d) in disks.iter().enumerate() {
        cg.throttle(&d.dev, "read", if i == 1 { 250 } else { 1000 });
    }
    let out = Spawned::start(mpirun(
        dir.path(),
        Some(&cg),
        "run 'disk{rank}' --rw randread --iodepth 4 --time 4s --json --no-store",
    ))
    .finish(WATCHDOG);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "the aggregate and three hosts");
    let (agg, hosts) = (&results[0], &results[1..]);
    let sum: f64 = hosts.iter().map(|r| r["iops"].as_f64().unwrap()).sum();
    let iops = agg["iops"].as_f64().unwrap();
    eprintln!("aggregate {iops:.0} IOPS, the hosts' sum {sum:.0}");
    assert!(
        (iops / sum - 1.0).abs() < 0.05,
        "aggregate {iops}, sum {sum}"
    );
    let ios: u64 = hosts.iter().map(|r| r["ios"].as_u64().unwrap()).sum();
    assert_eq!(doc["fleet"]["total_ios"].as_u64().unwrap(), ios);
    // The aggregate's own arithmetic holds: its IOs over its window are its IOPS.
    let (n, t) = (
        agg["ios"].as_f64().unwrap(),
        agg["runtime_s"].as_f64().unwrap(),
    );
    assert!(
        (n / t / iops - 1.0).abs() < 1e-3,
        "{n} IOs in {t} s against {iops} IOPS"
    );
    // The merged p99 is the p99 of the union of the hosts' histograms (to the histogram's
    // 0.1% precision), not an average of their p99s.
    let union: Vec<Vec<[u64; 2]>> = hosts.iter().map(buckets).collect();
    let truth = percentile(&union, 0.99) as f64;
    let p99 = agg["lat_ns"]["p99"].as_f64().unwrap();
    eprintln!("cluster p99 {p99} ns, p99 of the union {truth} ns");
    assert!(
        (p99 / truth - 1.0).abs() < 0.002,
        "p99 {p99}, union {truth}"
    );
    let series = agg["timeseries"].as_array().unwrap();
    assert!(series.len() >= 3, "{series:?}");
    assert!(series.iter().all(|s| s["lat_p99_ns"].as_u64().unwrap() > 0));
    let slow = hosts[1]["iops"].as_f64().unwrap();
    assert!(
        (slow / 250.0 - 1.0).abs() < 0.1,
        "the throttled rank did {slow} IOPS"
    );
    let stragglers: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "straggler")
        .collect();
    assert_eq!(stragglers.len(), 1, "{:#}", doc["findings"]);
    eprintln!("user sees: {}", stragglers[0]["summary"]);
    assert_eq!(stragglers[0]["result"], 2, "rank 1 is result 2");
    assert!(stragglers[0]["summary"]
        .as_str()
        .unwrap()
        .contains("(rank 1)"));
    let fleet = &doc["fleet"];
    assert_eq!(fleet["hosts"].as_array().unwrap().len(), 3);
    assert!(fleet["hosts"][1]["target"]
        .as_str()
        .unwrap()
        .contains("disk1"));
    // The report draws the hosts over time, a row each.
    let json = dir.path().join("run.json");
    std::fs::write(&json, &out.stdout).unwrap();
    let html = dir.path().join("r.html");
    let rep = iogauge(
        dir.path(),
        &[
            "report",
            "--from-json",
            json.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert!(rep.status.success(), "{}", stderr_of(&rep));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("IOPS per host over time"), "no hosts chart");
    assert!(page.contains("(rank 1), "), "a cell of rank 1's row");
}

/// One rank refuses its target before anything is written: every rank stops, the refusing
/// host is named, nothing is left behind.
#[test]
fn one_refusal_stops_every_rank_before_anything_is_written() {
    if !needs_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for i in [0, 2] {
        std::fs::create_dir(dir.path().join(format!("d{i}"))).unwrap();
    }
    // d1 does not exist: rank 1 refuses to create a file in it.
    let out = Spawned::start(mpirun(
        dir.path(),
        None,
        "run 'd{rank}/t' --size 8m --time 2s --no-store",
    ))
    .finish(WATCHDOG);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("(rank 1)") && err.contains("does not exist"),
        "{err}"
    );
    for i in [0, 2] {
        let left: Vec<_> = std::fs::read_dir(dir.path().join(format!("d{i}")))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "rank {i} wrote {left:?}: {err}");
    }
}

/// A rank stopped mid-cell (SIGTERM, as a batch system ends a job): it and every other rank
/// end, nothing hangs, and every rank's test file is removed.
#[test]
fn a_rank_stopped_mid_cell_ends_the_run_and_every_rank_cleans_up() {
    if !needs_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        std::fs::create_dir(dir.path().join(format!("d{i}"))).unwrap();
    }
    let mut run = Spawned::start(mpirun(
        dir.path(),
        None,
        "run 'd{rank}' --size 8m --time 60s --no-store",
    ));
    // Every rank fills its file, then measures.
    for _ in 0..3 {
        run.wait_for("done in", WATCHDOG);
    }
    let file = |i: usize| test_files(&dir.path().join(format!("d{i}"))).pop();
    let victim = file(1).expect("rank 1's test file");
    assert!(file(0).is_some() && file(2).is_some());
    // The rank's process is the one whose test file it is (its pid ends the name).
    let pid = victim
        .file_name()
        .unwrap()
        .to_string_lossy()
        .rsplit('.')
        .next()
        .unwrap()
        .to_string();
    sh("kill", &["-TERM", &pid]);
    let out = run.finish(WATCHDOG);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    for i in 0..3 {
        assert!(file(i).is_none(), "rank {i} left {:?}: {err}", file(i));
    }
}

/// A rank lost before its cell while the others wait for it at the barrier, where MPI does not
/// let them go: rank 1's file system is frozen (fsfreeze), so it cannot create its test file
/// while ranks 0 and 2 fill theirs and go on to the barrier. Rank 1 is killed (SIGKILL, as the
/// OOM killer would; it dies once thawed); mpirun ends the job with SIGTERM, and ranks 0 and 2,
/// blocked in the exchange, remove their test files and end — before mpirun's SIGKILL would
/// leave the files behind.
#[test]
fn a_rank_lost_while_the_others_wait_at_the_barrier_leaves_no_test_file() {
    if !needs_mpirun() {
        return;
    }
    needs_root!();
    needs_tool!("fsfreeze");
    let dir = tempfile::tempdir().unwrap();
    for i in [0, 2] {
        std::fs::create_dir(dir.path().join(format!("d{i}"))).unwrap();
    }
    // Rank 1's directory is a file system of its own; dropped in reverse: thawed, then gone.
    let fs = Fs::ext4(64 << 20, "rw");
    std::os::unix::fs::symlink(fs.path(), dir.path().join("d1")).unwrap();
    let frozen = Frozen::new(fs.path());
    let mut run = Spawned::start(mpirun(
        dir.path(),
        None,
        "run 'd{rank}' --size 8m --time 60s --no-store",
    ));
    for _ in 0..2 {
        run.wait_for("done in", WATCHDOG);
    }
    // A signal that can be caught would wait for the thaw too: the kernel gives it to the
    // thread stuck on the frozen file system.
    sh("kill", &["-KILL", &rank_pid(dir.path(), 1).to_string()]);
    drop(frozen);
    let out = run.finish(WATCHDOG);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    for i in [0, 2] {
        let left = test_files(&dir.path().join(format!("d{i}")));
        assert!(left.is_empty(), "rank {i} left {left:?}: {err}");
    }
}

/// iogauge's test files in `dir`.
fn test_files(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().contains("iogauge-test"))
                .collect()
        })
        .unwrap_or_default()
}

/// The pid of rank `rank` of the mpirun started in `dir` (its ranks run there; other tests'
/// ranks run in their own directories).
fn rank_pid(dir: &Path, rank: u32) -> u32 {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd"));
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            cwd.is_ok_and(|c| c == dir)
                && env.split(|&b| b == 0).any(|v| v == want.as_bytes())
                && std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|e| e.to_string_lossy().contains("iogauge"))
        })
        .unwrap_or_else(|| panic!("no rank {rank} running in {}", dir.display()))
}

/// A real multi-host launch: OpenMPI's ssh launcher into two network namespaces the test makes
/// (tests/mpi-hosts.sh: each with its own hostname and sshd, traffic only between them). Each
/// rank reports its own host, and rank 0's run has both.
#[test]
fn two_hosts_over_ssh_in_namespaces_make_one_run() {
    if !needs_mpirun() {
        return;
    }
    needs_root!();
    if !Path::new("/usr/sbin/sshd").exists() {
        skip("needs sshd (apt-get install openssh-server)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("run.json");
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mpi-hosts.sh"))
        .env("IOGAUGE", BIN)
        .env("IOGAUGE_ARGS", "--size 8m --time 2s --no-store --json")
        .env("RESULT", &result)
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
    let names: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["all 2 ranks (2 hosts)", "h1 (rank 0)", "h2 (rank 1)"],
        "{err}"
    );
    let hosts = doc["fleet"]["hosts"].as_array().unwrap();
    assert_eq!(hosts[1]["host"], "h2");
    // Over a real (virtual) network the clock was read with a round trip.
    assert!(hosts[1]["rtt_ns"].as_u64().unwrap() > 0);
    assert!(hosts[1]["target"]
        .as_str()
        .unwrap()
        .contains("/h2/iogauge-test.h2.1."));
}

/// `--stonewall first`: every rank stops when the first has moved its --data. Rank 1, held at
/// 250 reads/s, would need 33 s for 32 MiB; the others, held at 8,000, move theirs in about one,
/// and rank 1 stops then, having moved a fraction of it (under 8 MiB: 8 s at its rate).
#[test]
fn stonewall_first_stops_every_rank_when_the_first_is_done() {
    if !needs_mpirun() {
        return;
    }
    needs_root!();
    let Some(cg) = Blkio::new("fleet-first") else {
        skip("needs cgroup v1 blkio");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let disks: Vec<RamLoop> = (0..3).map(|_| RamLoop::new(64 << 20)).collect();
    for (i, d) in disks.iter().enumerate() {
        std::os::unix::fs::symlink(&d.dev.dev, dir.path().join(format!("disk{i}"))).unwrap();
    }
    for (i, d) in disks.iter().enumerate() {
        cg.throttle(&d.dev, "read", if i == 1 { 250 } else { 8000 });
    }
    let out = Spawned::start(mpirun(
        dir.path(),
        Some(&cg),
        "run 'disk{rank}' --rw randread --iodepth 4 --data 32m --stonewall first --json --no-store",
    ))
    .finish(WATCHDOG);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["fleet"]["stonewall"], "first", "{err}");
    let results = doc["results"].as_array().unwrap();
    let moved = |i: usize| results[i]["bytes"].as_u64().unwrap();
    assert!(
        moved(1) + 4096 >= 32 << 20 || moved(3) + 4096 >= 32 << 20,
        "a free rank moved all"
    );
    assert!(
        moved(2) < 8 << 20,
        "the held rank stopped early: {} bytes",
        moved(2)
    );
    // Without it, each rank moves all of its data (IOR's wear-out): said and refused where it
    // cannot apply.
    let alone = iogauge(dir.path(), &["run", "--stonewall", "first", "--data", "8m"]);
    assert_eq!(alone.status.code(), Some(2), "{}", stderr_of(&alone));
    assert!(stderr_of(&alone).contains("without mpirun"));
}
