//! `iogauge db pgbench` against a real PostgreSQL (Debian's postgresql-15 in CI): a short
//! pgbench with a buffer-ratio sweep, the server's settings and IO recorded, the runs stored;
//! and no server process or cluster directory left after a normal end, an error or a Ctrl-C.

use crate::common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Server processes whose command line names `dir`.
fn servers_in(dir: &Path) -> String {
    let out = Command::new("pgrep")
        .args(["-a", "-f", &dir.display().to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("postgres"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The cluster directories iogauge made under `dir`.
fn clusters_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("iogauge-pg-"))
        })
        .collect()
}

/// A test directory with an empty target directory in it, where PostgreSQL can run as root.
fn rig() -> Option<(tempfile::TempDir, PathBuf)> {
    if !is_root() {
        skip("needs root");
        return None;
    }
    if !have_postgres() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    std::fs::create_dir(&target).unwrap();
    Some((dir, target))
}

fn pgbench(dir: &Path, target: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "db",
        "pgbench",
        target.to_str().unwrap(),
        "--scale",
        "1",
        "--clients",
        "2",
        "--time",
        "2s",
        "--storage-time",
        "1s",
    ];
    args.extend_from_slice(extra);
    iogauge(dir, &args)
}

#[test]
fn a_buffer_ratio_sweep_is_measured_stored_and_cleaned_up() {
    let Some((dir, target)) = rig() else { return };
    let out = pgbench(
        dir.path(),
        &target,
        &[
            "--buffer-ratio",
            "50%,10%",
            "--repeat",
            "2",
            "--pg-setting",
            "synchronous_commit=off",
            "--json",
        ],
    );
    let run = json_of(&out);
    let results = run["results"].as_array().unwrap();
    let pg: Vec<&serde_json::Value> = results.iter().filter(|r| r["pg"].is_object()).collect();
    assert_eq!(pg.len(), 2, "one pgbench result per ratio");
    let mut buffers = Vec::new();
    for (r, ratio) in pg.iter().zip([0.5, 0.1]) {
        let p = &r["pg"];
        assert!(f(&r["iops"]) > 0.0, "{r}");
        // The result's TPS is all transactions over all time: between the TPS pgbench
        // printed for each repeat.
        let repeats: Vec<f64> = r["repeats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| f(&x["iops"]))
            .collect();
        assert_eq!(repeats.len(), 2, "{r}");
        let (lo, hi) = (repeats[0].min(repeats[1]), repeats[0].max(repeats[1]));
        let tps = f(&p["pgbench_tps"]);
        assert!(
            tps >= lo * (1.0 - 1e-9) && tps <= hi * (1.0 + 1e-9),
            "{tps} TPS from repeats of {repeats:?}"
        );
        assert!(
            (f(&r["ios"]) / f(&r["runtime_s"]) - tps).abs() <= tps * 1e-6,
            "{r}"
        );
        // The server's own CPU, measured: thousands of transactions cost it some.
        let cpu = f(&r["cpu"]["user_s"]) + f(&r["cpu"]["sys_s"]);
        assert!(cpu > 0.0, "the server's CPU: {}", r["cpu"]);
        assert!((f(&p["buffer_ratio"]) - ratio).abs() < 1e-9, "{p}");
        assert!(
            p["version"].as_str().unwrap().starts_with("PostgreSQL "),
            "{p}"
        );
        assert_eq!(p["settings"]["synchronous_commit"], "off", "{p}");
        assert_eq!(p["settings"]["fsync"], "on", "{p}");
        // What the server says it uses: the ratio of the data, in whole 8 kB pages.
        let sb = pg_bytes(p["settings"]["shared_buffers"].as_str().unwrap());
        let asked = f(&p["data_bytes"]) * ratio;
        assert!(
            sb as f64 <= asked && sb as f64 > asked - 8192.0,
            "shared_buffers {sb} for {ratio} of {} bytes",
            p["data_bytes"]
        );
        buffers.push(sb);
        // The latencies are those of the logged transactions: as many as pgbench counted.
        let logged: f64 = r["lat_hist"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| f(&b[1]))
            .sum();
        assert_eq!(logged, f(&r["ios"]), "{r}");
        assert!(!r["timeseries"].as_array().unwrap().is_empty());
    }
    assert!(
        buffers[0] > buffers[1],
        "shared_buffers per ratio: {buffers:?}"
    );
    // Beside the TPS, the storage cells of the same directory.
    assert!(
        results
            .iter()
            .any(|r| r["workload"]["sync"] == "fdatasync" && r["pg"].is_null()),
        "the WAL cell"
    );
    assert!(results
        .iter()
        .any(|r| r["workload"]["rw"] == "randread" && r["pg"].is_null()));
    // Stored like any run.
    let shown = json_of(&iogauge(dir.path(), &["show", "last", "--json"]));
    assert_eq!(shown["results"].as_array().unwrap().len(), results.len());
    let csv = iogauge(dir.path(), &["export", "last", "--format", "csv"]);
    assert!(csv.status.success(), "{}", stderr_of(&csv));
    // Nothing left: no server, no cluster.
    assert_eq!(servers_in(&target), "");
    assert!(
        clusters_in(&target).is_empty(),
        "{:?}",
        clusters_in(&target)
    );
}

/// The server's account may put a link to a file of root's at any name in its directory between
/// two of iogauge's steps (IOGAUGE_DEBUG_PLANT plants one, as it could). iogauge writes its own
/// file anew in place of the link, or refuses in one line; root's file stays as it was.
#[test]
fn a_link_the_servers_account_plants_never_steers_a_write() {
    let Some((dir, target)) = rig() else { return };
    let (secret, before) = root_secret(dir.path());
    let plant = |step: &str| format!("{step}:{}", secret.display());
    // Before each start (two ratios: a start and a restart), at iogauge.conf: replaced, and
    // the run goes on.
    let args = [
        "db",
        "pgbench",
        target.to_str().unwrap(),
        "--scale",
        "1",
        "--clients",
        "1",
        "--time",
        "1s",
        "--interval",
        "1s",
        "--buffer-ratio",
        "50%,100%",
        "--no-storage",
    ];
    let at_start = plant("start");
    let out = iogauge_env(
        dir.path(),
        &args,
        &[("IOGAUGE_DEBUG_PLANT", at_start.as_str())],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(look_at(&secret), before);
    // After initdb, at postgresql.conf, which iogauge reads and rewrites: refused.
    let after_initdb = plant("initdb");
    let out = iogauge_env(
        dir.path(),
        &args,
        &[("IOGAUGE_DEBUG_PLANT", after_initdb.as_str())],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("iogauge:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("postgresql.conf is a symbolic link"),
        "{err}"
    );
    assert_eq!(err.lines().last(), Some(errors[0]), "{err}");
    assert_eq!(look_at(&secret), before);
    assert_eq!(servers_in(&target), "");
    assert!(clusters_in(&target).is_empty());
}

#[test]
fn a_server_that_will_not_start_is_one_error_and_nothing_is_left() {
    let Some((dir, target)) = rig() else { return };
    let out = pgbench(dir.path(), &target, &["--pg-setting", "no_such_setting=1"]);
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(err.contains("no_such_setting"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(servers_in(&target), "");
    assert!(
        clusters_in(&target).is_empty(),
        "{:?}",
        clusters_in(&target)
    );
    // The server's refusal is the user's to fix: exit 2, quoting what the server said (read
    // before its log went with the cluster), never naming the removed log.
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unrecognized configuration parameter \"no_such_setting\""),
        "{err}"
    );
    let out = pgbench(dir.path(), &target, &["--pg-setting", "shared_buffers=abc"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains(
            "refused --pg-setting shared_buffers=abc: invalid value for parameter \"shared_buffers\": \"abc\""
        ),
        "{err}"
    );
    assert!(!err.contains("server.log"), "names a removed log: {err}");
    assert!(!err.contains("iogauge.conf"), "names a removed file: {err}");
    assert_eq!(servers_in(&target), "");
    assert!(clusters_in(&target).is_empty());
    // A setting without a value is a usage error, before anything is created.
    let out = pgbench(dir.path(), &target, &["--pg-setting", "shared_buffers"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(clusters_in(&target).is_empty());
    // A setting iogauge pins to keep the server private, in any case, and a value over two
    // lines: usage errors, before anything is created.
    for typed in [
        "Listen_Addresses=*",
        "unix_socket_permissions=0777",
        "include=/etc/passwd",
        "hba_file=/tmp/hba",
        "synchronous_commit=off\nlisten_addresses='*'",
    ] {
        let out = pgbench(dir.path(), &target, &["--pg-setting", typed]);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{typed}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{typed}: {err}");
        assert!(clusters_in(&target).is_empty());
    }
}

/// `db pgbench` for a minute, started and followed until its measurement begins ("[1/1]
/// pgbench tpcb-like · 2 clients …").
fn pgbench_measuring(dir: &Path, target: &Path) -> Spawned {
    let mut cmd = Command::new(BIN);
    cmd.env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .args(["db", "pgbench"])
        .arg(target)
        .args([
            "--scale",
            "1",
            "--clients",
            "2",
            "--time",
            "60s",
            "--no-storage",
        ])
        .env("IOGAUGE_DB", dir.join("results.db"));
    let mut run = Spawned::start(cmd);
    run.wait_for("] pgbench ", WATCHDOG);
    run
}

#[test]
fn ctrl_c_during_pgbench_stops_the_server_and_removes_the_cluster() {
    let Some((dir, target)) = rig() else { return };
    let run = pgbench_measuring(dir.path(), &target);
    assert!(
        !servers_in(&target).is_empty(),
        "a server runs in the cluster"
    );
    run.signal("INT");
    stopped_leaving_nothing(run, &target);
}

/// The end of a run a Ctrl-C stopped: exit 130, no server and no cluster left under
/// `target`. Its stderr.
fn stopped_leaving_nothing(run: Spawned, target: &Path) -> String {
    let out = run.finish(WATCHDOG);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(servers_in(target), "", "{err}");
    assert!(clusters_in(target).is_empty(), "{err}");
    err
}

/// Issue 59, item 2: a terminal's Ctrl-C during the load reaches `pgbench -i` too, which
/// cancels its COPY ("canceling statement due to user request"); that is the user's stop, not
/// a failure: "interrupted", exit 130, no error, no server and no cluster left.
#[test]
fn a_terminal_ctrl_c_during_the_load_is_the_users_stop() {
    let Some((dir, target)) = rig() else { return };
    let mut cmd = Command::new(BIN);
    cmd.env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .env("IOGAUGE_DB", dir.path().join("results.db"))
        .args(["db", "pgbench"])
        .arg(&target)
        // 5 million rows: seconds of COPY on any machine.
        .args(["--scale", "50", "--time", "10s", "--no-storage"]);
    let mut run = Spawned::start_as_job(cmd);
    run.wait_for("loading: pgbench -i", WATCHDOG);
    run.signal_group("INT");
    let err = stopped_leaving_nothing(run, &target);
    assert!(!err.contains("iogauge: error"), "{err}");
    assert!(err.contains("interrupted"), "{err}");
}

/// The longest span, in µs, from the first transaction's start to a transaction's end in
/// pgbench's per-transaction logs in the cluster under `target` (lines `client tx latency
/// script epoch µs`); 0 before there are any.
fn logged_span_us(target: &Path) -> u64 {
    let (mut first, mut last) = (u64::MAX, 0u64);
    for cluster in clusters_in(target) {
        for e in std::fs::read_dir(cluster).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("pgbench-") || name.ends_with(".out") || name.ends_with(".err") {
                continue;
            }
            for line in std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .lines()
            {
                let f: Vec<u64> = line
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
                if let [_, _, lat, _, s, us, ..] = f[..] {
                    let end = s * 1_000_000 + us;
                    first = first.min(end.saturating_sub(lat));
                    last = last.max(end);
                }
            }
        }
    }
    last.saturating_sub(first.min(last))
}

/// Issue 59, item 2: a Ctrl-C in pgbench's window keeps the part of the window its logs hold
/// whole, stored as what it is (marked interrupted, named with its length), where before it
/// was "nothing was measured". pgbench itself prints nothing when stopped: its logs are read
/// up to where every job's is complete.
#[test]
fn a_ctrl_c_in_pgbench_window_keeps_and_stores_what_ran() {
    let Some((dir, target)) = rig() else { return };
    let run = pgbench_measuring(dir.path(), &target);
    // Three seconds of transactions flushed to the logs: the window holds two whole ones or more.
    wait_until("3 s of pgbench transactions in its logs", WATCHDOG, || {
        logged_span_us(&target) >= 3_000_000
    });
    run.signal("INT");
    stopped_leaving_nothing(run, &target);
    let r = &last_cut_short(dir.path(), "1 min 00 s");
    let name = r["name"].as_str().unwrap();
    let runtime = r["runtime_s"].as_f64().unwrap();
    assert!((1.0..60.0).contains(&runtime), "{runtime} {name}");
    assert_eq!(runtime.fract(), 0.0, "whole seconds: {runtime}");
    let txns = r["ios"].as_u64().unwrap();
    assert!(txns > 0, "{r}");
    let tps = r["pg"]["pgbench_tps"].as_f64().unwrap();
    assert!(
        (tps - txns as f64 / runtime).abs() < 1e-6 * tps,
        "{tps} {txns} {runtime}"
    );
}

/// A second Ctrl-C quits at once (issue 59): the quick exit stops the server, removes the
/// cluster and takes its entry out of the crash ledger, which it left behind before, so the
/// next command named a cluster that `clean` then found "already gone".
#[test]
fn a_second_ctrl_c_quits_leaving_no_server_no_cluster_and_no_ledger_entry() {
    let Some((dir, target)) = rig() else { return };
    let mut run = pgbench_measuring(dir.path(), &target);
    run.signal("INT");
    run.wait_for("interrupted: stopping", WATCHDOG);
    run.signal("INT");
    let out = run.finish(WATCHDOG);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    // The quick exit's own line: the second signal came while the first was still stopping.
    assert!(err.contains("interrupted twice"), "{err}");
    assert_eq!(servers_in(&target), "", "{err}");
    assert!(clusters_in(&target).is_empty(), "{err}");
    let ledgers: Vec<_> = std::fs::read_dir(own_run_dir(dir.path()))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("ledger-"))
                .collect()
        })
        .unwrap_or_default();
    assert!(ledgers.is_empty(), "{ledgers:?} left after:\n{err}");
}

/// The server dies mid-run (SIGKILL to the postmaster, as the OOM killer would): iogauge ends
/// with one error naming the server's end and its pid, not the client's "connection refused",
/// warns of no server it could not stop, and leaves no server and no cluster.
#[test]
fn a_server_killed_mid_run_is_named_and_nothing_is_left() {
    let Some((dir, target)) = rig() else { return };
    let run = pgbench_measuring(dir.path(), &target);
    let postmaster =
        std::fs::read_to_string(clusters_in(&target)[0].join("data").join("postmaster.pid"))
            .unwrap();
    let pid = postmaster.lines().next().unwrap().trim().to_string();
    sh("kill", &["-KILL", &pid]);
    let out = run.finish(WATCHDOG);
    assert_named_killed_server(&out, "PostgreSQL", &pid);
    assert_eq!(servers_in(&target), "");
    assert!(clusters_in(&target).is_empty());
}

#[test]
fn the_wal_goes_where_it_is_told_and_a_memory_limit_is_kept_and_removed() {
    let Some((dir, target)) = rig() else { return };
    // Where iogauge makes the server's cgroup, and the file holding its limit.
    let (root, limit_file) = if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
        ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
    } else if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
        ("/sys/fs/cgroup", "memory.max")
    } else {
        skip("needs a memory cgroup");
        return;
    };
    let wal = dir.path().join("wal");
    std::fs::create_dir(&wal).unwrap();
    let mut cmd = Command::new(BIN);
    cmd.env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .args(["db", "pgbench"])
        .arg(&target)
        .args(["--scale", "1", "--clients", "2", "--time", "2s"])
        .args(["--storage-time", "1s", "--wal-dir", wal.to_str().unwrap()])
        .args([
            "--memory-limit",
            "256MiB",
            "--keep",
            "--no-storage",
            "--json",
        ])
        .env("IOGAUGE_DB", dir.path().join("results.db"));
    let mut running = Spawned::start(cmd);
    // "[1/1] pgbench …" comes before the measurement, with the server up: the kernel's own
    // limit on its cgroup, and the server inside it.
    running.wait_for("] pgbench ", WATCHDOG);
    // Named with this command's PID: other tests' servers have cgroups of their own beside it.
    let cgroup = Path::new(root).join(format!("iogauge-pg-{}", running.pid()));
    assert!(
        std::fs::read_to_string(cgroup.join("cgroup.procs"))
            .is_ok_and(|procs| !procs.trim().is_empty()),
        "the memory cgroup {} with the server in it",
        cgroup.display()
    );
    let limit = std::fs::read_to_string(cgroup.join(limit_file)).unwrap();
    assert_eq!(
        limit.trim(),
        (256u64 << 20).to_string(),
        "{}",
        cgroup.display()
    );
    let procs = std::fs::read_to_string(cgroup.join("cgroup.procs")).unwrap();
    let server = servers_in(&target);
    let postmaster = server.split_whitespace().next().expect("a server");
    assert!(
        procs.lines().any(|p| p == postmaster),
        "server {postmaster} in {}: {procs}",
        cgroup.display()
    );
    let run = json_of(&running.finish(WATCHDOG));
    let p = &run["results"][0]["pg"];
    assert_eq!(f(&p["memory_limit_bytes"]) as u64, 256 << 20, "{p}");
    assert!(
        p["wal_dir"]
            .as_str()
            .unwrap()
            .starts_with(wal.to_str().unwrap()),
        "{p}"
    );
    // Kept: the data directory's pg_wal is a link into the WAL directory, which holds segments.
    let kept = clusters_in(&target);
    assert_eq!(kept.len(), 1, "--keep keeps the cluster");
    let link = walk_for_pg_wal(&kept[0]).expect("a pg_wal in the kept cluster");
    let to = std::fs::read_link(&link).expect("pg_wal is a link with --wal-dir");
    assert!(to.starts_with(&wal), "{}", to.display());
    assert!(std::fs::read_dir(&to).unwrap().count() > 0);
    // The server is stopped all the same, and its cgroup is gone.
    assert_eq!(servers_in(&target), "");
    // Its own, named as the cluster is (another test's server may hold one of its own now).
    let name = kept[0].file_name().unwrap().to_string_lossy().into_owned();
    for root in ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"] {
        let cg = Path::new(root).join(&name);
        assert!(
            !cg.exists(),
            "the memory cgroup {} is removed",
            cg.display()
        );
    }
}

/// A memory setting as PostgreSQL shows it ("1600kB", "12MB", "1GB") in bytes.
fn pg_bytes(v: &str) -> u64 {
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let n: u64 = digits.parse().unwrap_or_else(|_| panic!("not a size: {v}"));
    n * match &v[digits.len()..] {
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        "" => 8192,
        u => panic!("unit {u} in {v}"),
    }
}

fn walk_for_pg_wal(dir: &Path) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == "pg_wal") {
            return Some(p);
        }
        if p.is_dir() && !p.is_symlink() {
            if let Some(found) = walk_for_pg_wal(&p) {
                return Some(found);
            }
        }
    }
    None
}

/// Issue 34, item 9: a database run on a file system that fills said `pgbench failed: ` with no
/// reason. A database that cannot fit is refused before any server is made (exit 2, one line
/// with the room and the need); one whose data fits but whose load's WAL fills the rest is
/// named as a full disk, in one line; nothing is left behind either way.
#[test]
fn a_full_file_system_is_refused_up_front_or_named_as_such() {
    let Some((_dir, _)) = rig() else { return };
    let fs = Fs::ext4(96 << 20, "");
    let target = fs.path().join("data");
    std::fs::create_dir(&target).unwrap();
    let pgbench = |scale: &str| {
        iogauge(
            fs.path(),
            &[
                "db",
                "pgbench",
                target.to_str().unwrap(),
                "--scale",
                scale,
                "--clients",
                "2",
                "--time",
                "2s",
                "--storage-time",
                "1s",
                "--no-store",
            ],
        )
    };
    // Scale 20 is about 300 MiB of data: it cannot fit in 96 MiB.
    let out = pgbench("20");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("free, and the database needs at least") && err.contains("--scale or --data"),
        "{err}"
    );
    assert!(
        std::fs::read_dir(&target).unwrap().next().is_none(),
        "nothing made"
    );
    // Scale 2 (about 32 MiB) fits beside an empty server, and its load's WAL fills the rest.
    let out = pgbench("2");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains("ran out of space") || last.contains("is full"),
        "{err}"
    );
    assert!(
        clusters_in(&target).is_empty(),
        "{:?}",
        clusters_in(&target)
    );
    assert_eq!(servers_in(&target), "");
}

/// `db pgbench --scratch … --layout … --degraded`: the database in each array iogauge builds,
/// as `sweep` builds them (btrfs raid1 over two RAM loop devices, against btrfs on one, and
/// the raid1 again mounted degraded without its second member), one stored run each tagged
/// with the sweep; the member left out is named, every member is blank afterwards. Ground
/// truth: the kernel's own list of the file system's members in each run's system section.
#[test]
fn a_database_runs_in_each_array_built_and_degraded() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    if !have_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let members: Vec<RamLoop> = (0..2).map(|_| RamLoop::new(256 << 20)).collect();
    let (a, b) = (&members[0].dev.dev, &members[1].dev.dev);
    let out = iogauge(
        dir.path(),
        &[
            "db",
            "pgbench",
            "--scratch",
            &format!("{a},{b}"),
            "--layout",
            "btrfs:raid1",
            "--degraded",
            "--scale",
            "1",
            "--clients",
            "2",
            "--time",
            "1s",
            "--no-storage",
            "--json",
        ],
    );
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let doc = json_of(&out);
    assert_eq!(doc["suite"], "db-pgbench", "{doc:#}");
    let settings = doc["groups"][0]["settings"].as_array().unwrap();
    let heads: Vec<&str> = settings
        .iter()
        .map(|s| s["head"].as_str().unwrap())
        .collect();
    assert_eq!(
        heads,
        [
            "btrfs single × 1",
            "btrfs raid1 × 2",
            "btrfs raid1 × 2 · degraded"
        ],
        "{err}"
    );
    assert!(
        err.contains(&format!("degraded: {b} left out of the btrfs file system")),
        "{err}"
    );
    let short = |d: &str| {
        std::fs::canonicalize(d)
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    for (s, want) in settings
        .iter()
        .zip([vec![short(a)], vec![short(a), short(b)], vec![short(a)]])
    {
        let id = s["run_id"]
            .as_str()
            .expect("each setting ran and was stored");
        let run = json_of(&iogauge(dir.path(), &["show", id, "--json"]));
        assert_eq!(run["suite"], "db-pgbench", "{run:#}");
        assert_eq!(run["params"]["sweep"], doc["sweep"], "{run:#}");
        let tps = run["results"][0]["iops"].as_f64().unwrap();
        assert!(tps > 0.0, "{run:#}");
        let mut seen: Vec<String> = run["system"]["target"]["btrfs"]["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        seen.sort();
        let mut want = want;
        want.sort();
        assert_eq!(seen, want, "{}", s["head"]);
    }
    for m in &members {
        assert!(blank(&m.dev.dev), "{} keeps a signature", m.dev.dev);
    }
}

/// What `db … --scratch` cannot do is refused before anything is built: a TARGET_DIR beside
/// it, an md array with no file system for the server, --output (each setting is its own
/// run), and --rebuild with no md layout (the sweep's own rule, the same words).
#[test]
fn a_database_on_scratch_devices_is_checked_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let devs = [RamLoop::new(16 << 20), RamLoop::new(16 << 20)];
    let d = devs[0].dev.dev.as_str();
    let both = format!("{d},{}", devs[1].dev.dev);
    let cases: [(&[&str], &str); 4] = [
        (
            &["db", "pgbench", "/tmp", "--scratch", d, "--fs", "ext4"],
            "give no TARGET_DIR",
        ),
        (
            &["db", "pgbench", "--scratch", &both, "--layout", "md:raid1"],
            "a database server needs a file system on what --scratch builds: add --fs ext4",
        ),
        (
            &[
                "db",
                "sysbench",
                "--scratch",
                d,
                "--fs",
                "ext4",
                "-o",
                "x.json",
            ],
            "leave out --output",
        ),
        (
            &[
                "db",
                "tpcc",
                "--scratch",
                &both,
                "--layout",
                "btrfs:raid1",
                "--rebuild",
            ],
            "--rebuild measures md arrays",
        ),
    ];
    for (args, want) in cases {
        let out = iogauge(dir.path(), args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    for dev in &devs {
        assert!(
            blank(&dev.dev.dev),
            "a refused command wrote to {}",
            dev.dev.dev
        );
    }
    assert!(!dir.path().join("x.json").exists());
}

/// Issue 59, item 3: a server the kernel's OOM killer stopped is named by that cause, not by
/// its client's "connection closed". Ground truth from the kernel: PostgreSQL's 128 MiB of
/// shared buffers in a 64 MiB memory cgroup, touched by pgbench's load, get a backend killed
/// (the cgroup's `oom_kill` count). The near miss: 256 MiB holds the server, and nothing of the
/// OOM killer is said. Kept, the killed run's server log shows how the server was stopped:
/// immediately, never fast (a fast stop of the server restarting after the kill waited out
/// pg_ctl's 60 s in 2 CI runs of 6, process accounting said).
#[test]
fn a_server_the_oom_killer_stopped_is_named_by_its_cause() {
    let Some((dir, target)) = rig() else { return };
    if !Path::new("/sys/fs/cgroup/memory").is_dir()
        && !Path::new("/sys/fs/cgroup/cgroup.controllers").is_file()
    {
        skip("needs a memory cgroup");
        return;
    }
    let run = |scale: &str, limit: &str, keep: bool| {
        let mut args = vec!["db", "pgbench", target.to_str().unwrap(), "--scale", scale];
        args.extend(["--clients", "2", "--time", "1s", "--memory-limit", limit]);
        args.extend(["--no-storage", "--no-store"]);
        if keep {
            args.push("--keep");
        }
        iogauge(dir.path(), &args)
    };
    let out = run("5", "64MiB", false);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("iogauge: error: the kernel's OOM killer killed ")
            && last.contains("PostgreSQL server in its memory cgroup (--memory-limit 64 MiB")
            && last.contains("give a larger --memory-limit"),
        "{err}"
    );
    assert_eq!(servers_in(&target), "");
    assert!(
        clusters_in(&target).is_empty(),
        "{:?}",
        clusters_in(&target)
    );
    let out = run("1", "256MiB", false);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("OOM"), "{err}");
    let out = run("5", "64MiB", true);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // The kill as the kernel counted it (the cgroup's `oom_kill`): the server's own log line
    // for it can come after the stop's, beside two busy loops.
    assert!(err.contains("the kernel's OOM killer killed "), "{err}");
    let kept = clusters_in(&target);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let log = std::fs::read_to_string(kept[0].join("server.log")).unwrap();
    assert!(
        log.contains("received immediate shutdown request")
            && !log.contains("received fast shutdown request"),
        "{log}"
    );
    assert_eq!(servers_in(&target), "");
}
