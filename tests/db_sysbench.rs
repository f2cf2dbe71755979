//! `iogauge db sysbench` against a real MariaDB, PostgreSQL and sysbench (Debian's
//! mariadb-server, postgresql-15 and sysbench in CI): a short OLTP run on each server whose TPS
//! and p99 agree with sysbench's own report, stored like any run; a setting each server
//! refuses; the plan of a dry run; the log in its own directory (--log-dir, --wal-dir) and the
//! server in a memory cgroup while it runs (--memory-limit), gone afterwards; the storage cells
//! of each server's commit beside the TPS; and no server process or server directory left after
//! a normal end, an error or a Ctrl-C.

use crate::common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// mariadbd processes whose command line names `dir`.
fn servers_in(dir: &Path) -> String {
    let out = Command::new("pgrep")
        .args(["-a", "-f", &dir.display().to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("mariadbd"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// PostgreSQL servers whose command line names `dir` (not iogauge's own, `--server postgres`).
fn pg_servers_in(dir: &Path) -> String {
    let out = Command::new("pgrep")
        .args(["-a", "-f", &dir.display().to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|program| program.ends_with("/postgres"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Everything in `dir` (the target must be as empty afterwards as before).
fn left_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect()
}

/// A test directory with an empty target directory in it, reachable by the server's user (as
/// root that is `mysql`, and a temporary directory is 0700).
fn rig() -> Option<(tempfile::TempDir, PathBuf)> {
    for tool in ["mariadbd", "mariadb-install-db", "sysbench"] {
        // mariadbd lives in /usr/sbin, off an ordinary user's PATH.
        let found = have(tool) || Path::new("/usr/sbin").join(tool).is_file();
        if !found {
            skip(&format!(
                "needs {tool} (apt-get install mariadb-server sysbench)"
            ));
            return None;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let target = dir.path().join("data");
    std::fs::create_dir(&target).unwrap();
    Some((dir, target))
}

/// [`rig`] for PostgreSQL: sysbench, and PostgreSQL's programs where the command looks.
fn pg_rig() -> Option<(tempfile::TempDir, PathBuf)> {
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().any(|e| e.path().join("bin/initdb").exists()))
        .unwrap_or(false);
    if !found {
        skip("needs PostgreSQL (apt-get install postgresql-15)");
        return None;
    }
    rig()
}

/// Where iogauge makes a server's memory cgroup, and the file holding its limit; `None` (the
/// test skipped) without root or a memory cgroup.
fn memory_cgroups() -> Option<(&'static str, &'static str)> {
    if !is_root() {
        skip("--memory-limit needs root");
        return None;
    }
    if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
        Some(("/sys/fs/cgroup/memory", "memory.limit_in_bytes"))
    } else if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
        Some(("/sys/fs/cgroup", "memory.max"))
    } else {
        skip("needs a memory cgroup");
        None
    }
}

/// The storage cells of a run: the commit cell's block size and sync, and the page reads'
/// block size and threads; each measured (a rate above zero).
fn storage_cells(run: &serde_json::Value) -> ((f64, String), (f64, f64)) {
    let results = run["results"].as_array().unwrap();
    let storage: Vec<&serde_json::Value> =
        results.iter().filter(|r| r["sysbench"].is_null()).collect();
    assert_eq!(storage.len(), 2, "the commit cell and the reads: {run}");
    let commit = storage
        .iter()
        .find(|r| !r["sync"].is_null())
        .expect("a cell with syncs");
    assert!(f(&commit["sync"]["per_s"]) > 0.0, "{commit}");
    assert_eq!(commit["workload"]["rw"], "write", "{commit}");
    assert!(commit["workload"]["direct"].as_bool().unwrap(), "{commit}");
    let reads = storage
        .iter()
        .find(|r| r["workload"]["rw"] == "randread")
        .expect("a random-read cell");
    assert!(f(&reads["iops"]) > 0.0, "{reads}");
    (
        (
            f(&commit["workload"]["bs"]),
            commit["workload"]["sync"].as_str().unwrap().to_string(),
        ),
        (
            f(&reads["workload"]["bs"]),
            f(&reads["workload"]["threads"]),
        ),
    )
}

fn sysbench(dir: &Path, target: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "db",
        "sysbench",
        target.to_str().unwrap(),
        "--tables",
        "2",
        "--table-size",
        "1000",
        "--threads",
        "2",
    ];
    if !extra.contains(&"--storage-time") {
        args.push("--no-storage");
    }
    if !extra.contains(&"--time") {
        args.extend(["--time", "3s"]);
    }
    args.extend_from_slice(extra);
    iogauge(dir, &args)
}

/// A result of `db sysbench` agrees with sysbench's own report: TPS is its transactions over its
/// total time and its "per sec." within 1%, the histogram holds every transaction, and the p99
/// is sysbench's within the histogram's precision. Returns the TPS.
fn agrees_with_sysbench(r: &serde_json::Value) -> f64 {
    let sb = &r["sysbench"];
    // TPS: sysbench's transaction count over its total time, which is also its "per sec.".
    let txns = f(&sb["transactions"]);
    assert!(txns > 0.0, "{sb}");
    assert_eq!(f(&r["ios"]), txns);
    let tps = f(&r["iops"]);
    assert!(
        (tps - txns / f(&sb["total_time_s"])).abs() <= tps * 1e-9,
        "{tps} against {txns} in {}",
        sb["total_time_s"]
    );
    assert!(
        (tps - f(&sb["sysbench_tps"])).abs() <= f(&sb["sysbench_tps"]) * 0.01,
        "{tps} against sysbench's {}",
        sb["sysbench_tps"]
    );
    // The histogram holds every transaction, and its p99 is sysbench's own within the
    // histogram's precision: the value of the same transaction's bucket (sysbench prints two
    // decimals of ms; iogauge's layout keeps 0.1%). The two ranks may differ by one
    // transaction: sysbench takes the round(0.99 n)-th, the hdr histogram the ceil(0.99 n)-th,
    // and in a sparse tail one transaction can be a bucket or two further.
    let buckets: Vec<(f64, f64)> = r["lat_hist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (f(&b[0]) / 1e6, f(&b[1])))
        .collect();
    let counted: f64 = buckets.iter().map(|b| b.1).sum();
    assert_eq!(counted, txns, "{r}");
    let at_rank = |k: f64| {
        let mut cum = 0.0;
        buckets
            .iter()
            .find(|(_, n)| {
                cum += n;
                cum >= k
            })
            .map_or(0.0, |b| b.0)
    };
    let theirs = f(&sb["sysbench_p99_ms"]);
    let sysbench_rank = at_rank((0.99 * txns).round());
    assert!(
        (sysbench_rank - theirs).abs() <= theirs * 0.002 + 0.005,
        "sysbench's p99 {theirs} ms is the {}th transaction's bucket, {sysbench_rank} ms",
        (0.99 * txns).round()
    );
    let p99_ms = f(&r["lat_ns"]["p99"]) / 1e6;
    let hdr_rank = at_rank((0.99 * txns).ceil());
    assert!(
        (p99_ms - hdr_rank).abs() <= hdr_rank * 0.002,
        "p99 {p99_ms} ms against the {}th transaction's bucket, {hdr_rank} ms",
        (0.99 * txns).ceil()
    );
    assert!(
        (p99_ms - theirs).abs() <= theirs * 0.002 + 0.005 || (0.99 * txns).fract() != 0.0,
        "p99 {p99_ms} ms against sysbench's {theirs} ms at the same rank"
    );
    tps
}

#[test]
fn a_short_run_agrees_with_sysbench_is_stored_and_leaves_nothing() {
    let Some((dir, target)) = rig() else { return };
    let out = sysbench(dir.path(), &target, &["--json"]);
    let run = json_of(&out);
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{run}");
    let r = &results[0];
    let sb = &r["sysbench"];
    assert_eq!(sb["script"], "oltp_read_write");
    assert_eq!((f(&sb["tables"]), f(&sb["table_size"])), (2.0, 1000.0));
    let tps = agrees_with_sysbench(r);
    assert!(f(&r["lat_ns"]["p50"]) <= f(&r["lat_ns"]["p99"]));
    assert!(f(&r["lat_ns"]["p99"]) <= f(&r["lat_ns"]["p999"]));
    assert!(f(&sb["qps"]) > tps, "{sb}");
    assert!(sb["errors"].is_u64() && sb["reconnects"].is_u64(), "{sb}");
    // A second per interval line.
    let seconds = sb["seconds"].as_array().unwrap();
    assert!(seconds.len() >= 2, "{sb}");
    assert_eq!(r["timeseries"].as_array().unwrap().len(), seconds.len());
    // The server: its version, its settings, InnoDB's counters and its own CPU, not zeros.
    assert!(sb["version"].as_str().unwrap().contains("MariaDB"), "{sb}");
    assert_eq!(sb["settings"]["innodb_flush_method"], "O_DIRECT", "{sb}");
    assert_eq!(sb["settings"]["skip_networking"], "ON", "{sb}");
    assert!(
        sb["settings"]["innodb_buffer_pool_size"].is_string(),
        "{sb}"
    );
    assert!(f(&sb["status"]["Innodb_os_log_written"]) > 0.0, "{sb}");
    assert!(f(&sb["status"]["Innodb_data_fsyncs"]) > 0.0, "{sb}");
    let cpu = f(&r["cpu"]["user_s"]) + f(&r["cpu"]["sys_s"]);
    assert!(cpu > 0.0, "the server's CPU: {}", r["cpu"]);
    // The timeline: one row per sysbench second, InnoDB's redo written each second (a
    // read-write load writes some every second), the data directory's device beside it.
    let t = &r["timeline"];
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), seconds.len(), "{t}");
    assert_eq!(t["server_source"], "SHOW GLOBAL STATUS", "{t}");
    let redo: f64 = rows
        .iter()
        .map(|row| {
            row["server"]["Innodb_os_log_written_per_s"]
                .as_f64()
                .unwrap_or(0.0)
        })
        .sum();
    assert!(redo > 0.0, "{t}");
    assert!(
        rows[0]["server"]["Innodb_buffer_pool_pages_dirty"].is_number(),
        "{t}"
    );
    assert!(!t["devices"].as_array().unwrap().is_empty(), "{t}");
    // Stored like any run.
    let shown = json_of(&iogauge(dir.path(), &["show", "last", "--json"]));
    assert_eq!(shown["results"].as_array().unwrap().len(), 1);
    assert_eq!(
        shown["results"][0]["sysbench"]["transactions"],
        sb["transactions"]
    );
    // `show` names the rate and its unit: transactions, not IOs.
    let shown = iogauge(dir.path(), &["show", "last"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains(" TPS") && text.contains(" transactions in "),
        "{text}"
    );
    assert!(!text.contains("IOPS"), "{text}");
    let list = iogauge(dir.path(), &["list"]);
    assert!(list.status.success(), "{}", stderr_of(&list));
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("db sysbench (1 measurement"),
        "{}",
        String::from_utf8_lossy(&list.stdout)
    );
    // Nothing left: no server, nothing in the target.
    assert_eq!(servers_in(&target), "");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}

#[test]
fn a_buffer_ratio_sweep_restarts_the_server_with_each_share_of_the_data() {
    let Some((dir, target)) = rig() else { return };
    let out = iogauge(
        dir.path(),
        &[
            "db",
            "sysbench",
            target.to_str().unwrap(),
            "--tables",
            "1",
            "--table-size",
            "100000",
            "--threads",
            "2",
            "--time",
            "2s",
            "--script",
            "oltp_read_only",
            "--buffer-ratio",
            "0.5,1",
            "--no-storage",
            "--json",
            "--no-store",
        ],
    );
    let run = json_of(&out);
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "one result per ratio: {run}");
    let mut pools = Vec::new();
    for (r, ratio) in results.iter().zip([0.5, 1.0]) {
        let sb = &r["sysbench"];
        assert_eq!(f(&sb["buffer_ratio"]), ratio, "{sb}");
        // What the server says it uses: the share of the data, in whole MiB.
        let pool: f64 = sb["settings"]["innodb_buffer_pool_size"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let asked = f(&sb["data_bytes"]) * ratio;
        assert!(
            pool <= asked && pool > asked - (1 << 20) as f64,
            "innodb_buffer_pool_size {pool} for {ratio} of {}",
            sb["data_bytes"]
        );
        assert!(f(&r["iops"]) > 0.0, "{r}");
        pools.push(pool);
    }
    assert!(pools[0] < pools[1], "{pools:?}");
    assert!(!dir.path().join("results.db").exists(), "--no-store");
    assert_eq!(servers_in(&target), "");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}

#[test]
fn the_text_summary_names_the_server_and_the_table() {
    let Some((dir, target)) = rig() else { return };
    let out = sysbench(
        dir.path(),
        &target,
        &[
            "--script",
            "oltp_point_select",
            "--time",
            "1s",
            "--no-store",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(text.starts_with("sysbench oltp_point_select on "), "{text}");
    assert!(text.contains("innodb_flush_method=O_DIRECT"), "{text}");
    assert!(
        text.contains("TPS") && text.contains("redo written"),
        "{text}"
    );
    // InnoDB's default buffer pool holds the 544 KiB of tables whole: said as PostgreSQL's
    // page cache is.
    assert!(
        text.contains("the server's buffer (innodb_buffer_pool_size = 128 MiB) holds all"),
        "{text}"
    );
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}

/// The server's account may put a link to a file of root's at server.out, which iogauge writes
/// before each start (IOGAUGE_DEBUG_PLANT plants one, as it could): iogauge writes its own file
/// anew in place of the link, and root's file stays as it was.
#[test]
fn a_link_the_servers_account_plants_never_steers_a_write() {
    let Some((dir, target)) = rig() else { return };
    let (secret, before) = root_secret(dir.path());
    let plant = format!("start:{}", secret.display());
    let args = [
        "db",
        "sysbench",
        target.to_str().unwrap(),
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        "1",
        "--time",
        "1s",
        "--buffer-ratio",
        "50%,100%",
        "--no-storage",
    ];
    let out = iogauge_env(
        dir.path(),
        &args,
        &[("IOGAUGE_DEBUG_PLANT", plant.as_str())],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(look_at(&secret), before);
    assert_eq!(servers_in(&target), "");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}

#[test]
fn a_setting_the_server_refuses_exits_2_with_its_words_and_leaves_nothing() {
    let Some((dir, target)) = rig() else { return };
    let out = sysbench(dir.path(), &target, &["--db-setting", "no_such_setting=1"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // The server's own words, read before its log went with its directory.
    assert!(
        err.contains("unknown variable 'no_such_setting=1'"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(servers_in(&target), "");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
    // A bad value of a real setting, refused the same way.
    let out = sysbench(
        dir.path(),
        &target,
        &["--db-setting", "innodb_buffer_pool_size=abc"],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("innodb_buffer_pool_size"), "{err}");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}

#[test]
fn a_dry_run_prints_the_plan_and_starts_nothing() {
    let Some((dir, target)) = rig() else { return };
    let out = iogauge(
        dir.path(),
        &[
            "db",
            "sysbench",
            target.to_str().unwrap(),
            "--tables",
            "4",
            "--data",
            "100000000",
            "--script",
            "oltp_write_only",
            "--dry-run",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(text.starts_with("plan: db sysbench"), "{text}");
    // 100,000,000 bytes over 4 tables at ~250 bytes a row.
    assert!(text.contains("100000 rows per table"), "{text}");
    assert!(text.contains("oltp_write_only"), "{text}");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
    assert!(!dir.path().join("results.db").exists());
    assert_eq!(servers_in(&target), "");
}

#[test]
fn what_the_user_typed_wrong_is_refused_before_anything_is_made() {
    let Some((dir, target)) = rig() else { return };
    for (extra, says) in [
        (&["--db-setting", "socket=/tmp/x"][..], "iogauge sets it"),
        // Every spelling mariadbd takes for an own setting: a unique prefix, its special
        // prefixes (loose-, disable-, …), `-` for `_`.
        (&["--db-setting", "skip_networkin=0"][..], "iogauge sets it"),
        (
            &["--db-setting", "loose_skip_networking=0"][..],
            "iogauge sets it",
        ),
        (
            &["--db-setting", "disable_skip_networking=1"][..],
            "iogauge sets it",
        ),
        (
            &["--db-setting", "loose-socket=/tmp/x.sock"][..],
            "iogauge sets it",
        ),
        (
            &["--db-setting", "Bind-Address=0.0.0.0"][..],
            "iogauge sets it",
        ),
        (
            &["--server", "postgres", "--db-setting", "listen_addresses=*"][..],
            "iogauge sets it",
        ),
        (
            &["--server", "postgres", "--db-setting", "include_dir=/etc"][..],
            "iogauge sets it",
        ),
        (
            &[
                "--server",
                "postgres",
                "--db-setting",
                "unix_socket_permissions=0777",
            ][..],
            "iogauge sets it",
        ),
        (
            &[
                "--server",
                "postgres",
                "--db-setting",
                "work_mem 1MB\nlisten_addresses=*",
            ][..],
            "is not a setting's name",
        ),
        (&["--db-setting", "nonsense"][..], "is not KEY=VALUE"),
        (&["--time", "500ms"][..], "--time is under 1s"),
        (&["--buffer-ratio", "0"][..], "above 0"),
        (&["--wal-dir", "/"][..], "--wal-dir is PostgreSQL's"),
        (&["--log-dir", "/no/such/dir"][..], "is not a directory"),
        (
            &["--server", "postgres", "--log-dir", "/"][..],
            "--log-dir is MariaDB's",
        ),
        (
            &[
                "--buffer-ratio",
                "1",
                "--db-setting",
                "innodb_buffer_pool_size=1G",
            ][..],
            "leave out --db-setting innodb_buffer_pool_size",
        ),
    ] {
        let out = sysbench(dir.path(), &target, extra);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
    }
}

#[test]
fn ctrl_c_during_sysbench_stops_the_server_and_removes_its_directory() {
    let Some((dir, target)) = rig() else { return };
    ctrl_c_stops_the_server(dir.path(), &target, &[], servers_in);
}

#[test]
fn postgres_sysbench_agrees_with_sysbench_is_stored_and_leaves_nothing() {
    let Some((dir, target)) = pg_rig() else {
        return;
    };
    let out = sysbench(
        dir.path(),
        &target,
        &["--server", "postgres", "--buffer-ratio", "50%", "--json"],
    );
    let run = json_of(&out);
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{run}");
    let r = &results[0];
    let sb = &r["sysbench"];
    assert_eq!(sb["server"], "PostgreSQL", "{sb}");
    assert!(
        sb["version"].as_str().unwrap().starts_with("PostgreSQL "),
        "{sb}"
    );
    assert_eq!((f(&sb["tables"]), f(&sb["table_size"])), (2.0, 1000.0));
    agrees_with_sysbench(r);
    // shared_buffers is half the tables, in 8 KiB pages (or PostgreSQL's least, 128 kB).
    assert_eq!(f(&sb["buffer_ratio"]), 0.5, "{sb}");
    let shared = sb["settings"]["shared_buffers"].as_str().unwrap();
    // As PostgreSQL shows it: in the largest unit that divides it (1272kB, 2MB).
    let digits = shared.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = match &shared[digits.len()..] {
        "kB" => 1u64 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        u => panic!("unit {u} in shared_buffers {shared}"),
    };
    let bytes = digits.parse::<u64>().unwrap() * unit;
    assert_eq!(
        bytes,
        (f(&sb["data_bytes"]) as u64 / 2 / 8192 * 8192).max(128 << 10),
        "shared_buffers {shared} for half of {}",
        sb["data_bytes"]
    );
    assert_eq!(sb["settings"]["fsync"], "on", "{sb}");
    // The server's own counters over the run, its CPU, and the timeline of its WAL.
    assert!(f(&sb["status"]["pg_stat_wal.wal_bytes"]) > 0.0, "{sb}");
    assert!(
        f(&r["cpu"]["user_s"]) + f(&r["cpu"]["sys_s"]) > 0.0,
        "{}",
        r["cpu"]
    );
    assert_eq!(r["io_path"], "postgresql (buffered)");
    let t = &r["timeline"];
    assert!(
        t["server_source"].as_str().unwrap().contains("pg_stat_wal"),
        "{t}"
    );
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), sb["seconds"].as_array().unwrap().len(), "{t}");
    let wal: f64 = rows
        .iter()
        .map(|row| row["server"]["wal_bytes_per_s"].as_f64().unwrap_or(0.0))
        .sum();
    assert!(wal > 0.0, "{t}");
    // The page cache is said to answer for the storage here: nothing limited the server.
    assert!(
        run["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["kind"] == "cache"),
        "{run}"
    );
    let shown = json_of(&iogauge(dir.path(), &["show", "last", "--json"]));
    assert_eq!(shown["results"][0]["sysbench"]["server"], "PostgreSQL");
    assert_eq!(pg_servers_in(&target), "");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}

#[test]
fn a_setting_postgres_refuses_exits_2_with_its_words_and_leaves_nothing() {
    let Some((dir, target)) = pg_rig() else {
        return;
    };
    let out = sysbench(
        dir.path(),
        &target,
        &["--server", "postgres", "--db-setting", "no_such_setting=1"],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refused --db-setting no_such_setting=1: unrecognized configuration parameter \"no_such_setting\""),
        "{err}"
    );
    assert_eq!(pg_servers_in(&target), "");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
    // A setting iogauge owns is refused before anything is made.
    let out = sysbench(
        dir.path(),
        &target,
        &["--server", "postgres", "--db-setting", "port=1"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("iogauge sets it"));
}

/// A run in its own process, watched while it measures: `extra` after the common arguments.
fn spawn_sysbench(dir: &Path, target: &Path, extra: &[&str]) -> Spawned {
    let mut cmd = Command::new(BIN);
    cmd.env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .env("IOGAUGE_DB", dir.join("results.db"))
        .args(["db", "sysbench"])
        .arg(target)
        .args(["--tables", "2", "--table-size", "1000", "--threads", "2"])
        // Long enough to look at the server while sysbench runs; the look takes milliseconds.
        .args(["--time", "5s", "--storage-time", "1s", "--json"])
        .args(extra);
    Spawned::start(cmd)
}

/// The cgroup `name` (iogauge's, named for its pid: `iogauge-pg-PID`, `iogauge-my-PID`) has
/// the kernel's limit of `bytes` and the server `servers` lists first in it.
fn assert_server_in_cgroup(
    (root, limit_file): (&str, &str),
    name: &str,
    bytes: u64,
    servers: &str,
) {
    let dir = Path::new(root).join(name);
    let limit = std::fs::read_to_string(dir.join(limit_file))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert_eq!(limit.trim(), bytes.to_string(), "{}", dir.display());
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap();
    let server = servers.split_whitespace().next().expect("a server");
    assert!(
        procs.lines().any(|p| p == server),
        "server {server} in {name}: {procs}"
    );
}

#[test]
fn postgres_wal_dir_memory_limit_and_storage_cells() {
    let Some((root, limit_file)) = memory_cgroups() else {
        return;
    };
    let Some((dir, target)) = pg_rig() else {
        return;
    };
    let wal = dir.path().join("wal");
    std::fs::create_dir(&wal).unwrap();
    let mut running = spawn_sysbench(
        dir.path(),
        &target,
        &[
            "--server",
            "postgres",
            "--wal-dir",
            wal.to_str().unwrap(),
            "--memory-limit",
            "256MiB",
        ],
    );
    let name = format!("iogauge-pg-{}", running.pid());
    // "[1/1] sysbench …" comes with the server up, just before sysbench runs.
    running.wait_for("] sysbench ", WATCHDOG);
    assert_server_in_cgroup(
        (root, limit_file),
        &name,
        256 << 20,
        &pg_servers_in(&target),
    );
    // The WAL: pg_wal is a link into a directory of the run's own under --wal-dir, which
    // holds the segments.
    let pg_wal = target.join(&name).join("data/pg_wal");
    let to = std::fs::read_link(&pg_wal).expect("pg_wal is a link with --wal-dir");
    assert_eq!(to, wal.join(format!("{name}-wal")));
    assert!(std::fs::read_dir(&to).unwrap().count() > 0);
    let run = json_of(&running.finish(WATCHDOG));
    let sb = &run["results"][0]["sysbench"];
    assert_eq!(f(&sb["memory_limit_bytes"]) as u64, 256 << 20, "{sb}");
    assert_eq!(
        sb["log_dir"].as_str().unwrap(),
        to.to_str().unwrap(),
        "{sb}"
    );
    // PostgreSQL's storage cells: the WAL's 8 KiB writes + fdatasync, 8 KiB page reads at
    // the clients' concurrency.
    assert_eq!(
        storage_cells(&run),
        ((8192.0, "fdatasync".to_string()), (8192.0, 2.0))
    );
    // Gone: the server, its cgroup, its directories under the target and the WAL directory.
    assert_eq!(pg_servers_in(&target), "");
    assert!(!Path::new(root).join(&name).exists(), "{name} is removed");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
    assert!(left_in(&wal).is_empty(), "{:?}", left_in(&wal));
}

/// A MariaDB run with `--log-dir` (a directory the server's user can enter) and
/// `--memory-limit 512MiB`, measuring: the run, the log directory, and the name iogauge gives
/// its directories and cgroup.
fn mariadb_with_log_dir_and_limit(dir: &Path, target: &Path) -> (Spawned, PathBuf, String) {
    let logs = dir.join("redo");
    std::fs::create_dir(&logs).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut running = spawn_sysbench(
        dir,
        target,
        &[
            "--log-dir",
            logs.to_str().unwrap(),
            "--memory-limit",
            "512MiB",
        ],
    );
    let name = format!("iogauge-my-{}", running.pid());
    running.wait_for("] sysbench ", WATCHDOG);
    (running, logs, name)
}

#[test]
fn mariadb_log_dir_memory_limit_and_storage_cells() {
    let Some((root, limit_file)) = memory_cgroups() else {
        return;
    };
    let Some((dir, target)) = rig() else { return };
    let (running, logs, name) = mariadb_with_log_dir_and_limit(dir.path(), &target);
    assert_server_in_cgroup((root, limit_file), &name, 512 << 20, &servers_in(&target));
    // The redo log is in the run's own directory under --log-dir, not in the data directory.
    let redo = logs.join(format!("{name}-log"));
    assert!(redo.join("ib_logfile0").is_file(), "{:?}", left_in(&redo));
    assert!(!target.join(&name).join("data/ib_logfile0").exists());
    let run = json_of(&running.finish(WATCHDOG));
    let sb = &run["results"][0]["sysbench"];
    assert_eq!(f(&sb["memory_limit_bytes"]) as u64, 512 << 20, "{sb}");
    assert_eq!(
        sb["log_dir"].as_str().unwrap(),
        redo.to_str().unwrap(),
        "{sb}"
    );
    assert_eq!(
        sb["settings"]["innodb_log_group_home_dir"]
            .as_str()
            .unwrap(),
        redo.to_str().unwrap(),
        "{sb}"
    );
    // InnoDB's storage cells: 16 KiB page writes + fsync, 16 KiB page reads.
    assert_eq!(
        storage_cells(&run),
        ((16384.0, "fsync".to_string()), (16384.0, 2.0))
    );
    assert_eq!(servers_in(&target), "");
    assert!(!Path::new(root).join(&name).exists(), "{name} is removed");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
    assert!(left_in(&logs).is_empty(), "{:?}", left_in(&logs));
}

#[test]
fn ctrl_c_during_postgres_sysbench_stops_the_cluster_and_removes_it() {
    let Some((dir, target)) = pg_rig() else {
        return;
    };
    ctrl_c_stops_the_server(
        dir.path(),
        &target,
        &["--server", "postgres"],
        pg_servers_in,
    );
}

/// Ctrl-C once the measurement has begun: exit 130, the server stopped (`servers` lists the
/// ones running from `target`), and nothing left in `target`.
/// `db sysbench` for a minute on `server`, started and followed until its measurement begins
/// ("[1/1] sysbench oltp_read_write · 1 threads …").
fn sysbench_measuring(dir: &Path, target: &Path, server: &[&str]) -> Spawned {
    let mut cmd = Command::new(BIN);
    cmd.env("IOGAUGE_RUN_DIR", own_run_dir(dir))
        .env("IOGAUGE_DB", dir.join("results.db"))
        .args(["db", "sysbench"])
        .arg(target)
        .args(server)
        .args([
            "--tables",
            "1",
            "--table-size",
            "1000",
            "--threads",
            "1",
            "--time",
            "60s",
        ]);
    let mut run = Spawned::start(cmd);
    run.wait_for("] sysbench ", WATCHDOG);
    run
}

fn ctrl_c_stops_the_server(
    dir: &Path,
    target: &Path,
    server: &[&str],
    servers: fn(&Path) -> String,
) {
    let run = sysbench_measuring(dir, target, server);
    assert!(!servers(target).is_empty(), "a server runs");
    run.signal("INT");
    let out = run.finish(WATCHDOG);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(servers(target), "", "{err}");
    assert!(left_in(target).is_empty(), "{:?}", left_in(target));
}

/// Whether a sysbench output file under `dir` (the server's directory) holds `needle`.
fn sysbench_said(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            match p.is_dir() {
                true => sysbench_said(&p, needle),
                false => {
                    name.starts_with("sysbench-")
                        && std::fs::read_to_string(&p).is_ok_and(|t| t.contains(needle))
                }
            }
        })
}

/// Issue 59, item 2: a terminal's Ctrl-C (the signal to iogauge's whole process group, which
/// holds the clients it started) during sysbench's prepare and during its window is the
/// user's stop: exit 130, no error, no server and nothing left. The window cut short is kept
/// and stored as what it is: sysbench's own report of the seconds that ran (it has no SIGINT
/// handler; iogauge asks for the report with the SIGALRM of its forced shutdown).
#[test]
fn a_terminal_ctrl_c_during_the_load_or_the_window_is_the_users_stop() {
    let Some((dir, target)) = rig() else { return };
    for (phase, after) in [("load", "loading: sysbench"), ("window", "] sysbench ")] {
        let mut cmd = Command::new(BIN);
        cmd.env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
            .env("IOGAUGE_DB", dir.path().join("results.db"))
            .args(["db", "sysbench"])
            .arg(&target)
            // 400,000 rows: seconds of inserts on any machine.
            .args(["--tables", "2", "--table-size", "200000", "--threads", "1"])
            .args(["--time", "60s", "--no-storage"]);
        let mut run = Spawned::start_as_job(cmd);
        run.wait_for(after, WATCHDOG);
        if phase == "window" {
            // Two of sysbench's seconds reported: a window with something in it to keep.
            wait_until("sysbench's second interval", WATCHDOG, || {
                sysbench_said(&target, "[ 2s ]")
            });
        }
        run.signal_group("INT");
        let out = run.finish(WATCHDOG);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(130), "{phase}: {err}");
        assert!(!err.contains("iogauge: error"), "{phase}: {err}");
        assert_eq!(servers_in(&target), "", "{phase}: {err}");
        assert!(
            left_in(&target).is_empty(),
            "{phase}: {:?}",
            left_in(&target)
        );
        if phase == "window" {
            assert!(!err.contains("nothing was measured"), "{err}");
            let r = &last_cut_short(dir.path(), "1 min 00 s");
            let sb = &r["sysbench"];
            let (txns, secs) = (f(&sb["transactions"]), f(&sb["total_time_s"]));
            assert!(txns > 0.0 && (2.0..60.0).contains(&secs), "{sb}");
            // The rate is sysbench's own, and the latencies its report's (no histogram).
            assert!(
                (f(&r["tps"]) - txns / secs).abs() <= 0.01 * txns / secs,
                "{r}"
            );
            assert!(f(&r["lat_ns"]["p99"]) > 0.0, "{}", r["lat_ns"]);
            assert!(
                f(&r["lat_ns"]["max"]) >= f(&r["lat_ns"]["p99"]),
                "{}",
                r["lat_ns"]
            );
        }
    }
}

/// mariadbd dies mid-run (SIGKILL, as the OOM killer would): one error naming the server's
/// end and its pid, not the client's lost connection; no warning of a server iogauge could not
/// stop; nothing left.
#[test]
fn a_server_killed_mid_run_is_named_and_nothing_is_left() {
    let Some((dir, target)) = rig() else { return };
    let run = sysbench_measuring(dir.path(), &target, &[]);
    let servers = servers_in(&target);
    let pid = servers
        .split_whitespace()
        .next()
        .expect("a server runs")
        .to_string();
    sh("kill", &["-KILL", &pid]);
    let out = run.finish(WATCHDOG);
    assert_named_killed_server(&out, "MariaDB", &pid);
    assert_eq!(servers_in(&target), "");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}

#[test]
fn clean_after_a_killed_run_stops_mariadb_and_removes_its_log_dir_and_cgroup() {
    let Some((root, _)) = memory_cgroups() else {
        return;
    };
    let Some((dir, target)) = rig() else { return };
    let (running, logs, name) = mariadb_with_log_dir_and_limit(dir.path(), &target);
    // Killed outright: nothing of iogauge's own cleanup runs; the server runs on.
    running.signal("KILL");
    let out = running.finish(WATCHDOG);
    assert_eq!(out.status.code(), None, "{}", stderr_of(&out));
    assert!(
        !servers_in(&target).is_empty(),
        "the server outlives iogauge"
    );
    assert!(Path::new(root).join(&name).exists());
    let out = iogauge(dir.path(), &["clean"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", stderr_of(&out));
    assert!(said.contains("stopped"), "{said}");
    assert!(
        said.contains(&format!("cgroup {root}/{name} removed")),
        "{said}"
    );
    assert_eq!(servers_in(&target), "", "{said}");
    assert!(!Path::new(root).join(&name).exists(), "{said}");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
    assert!(left_in(&logs).is_empty(), "{:?}", left_in(&logs));
}

/// `--repeat` on a database load (sysbench has no repeats of its own): each measurement three
/// times on the same loaded database, stored as one result whose repeats are the three runs
/// of sysbench (their transactions add up to the result's), with the statistics `compare`
/// judges by; the text gives each repeat's TPS.
#[test]
fn a_repeated_load_keeps_each_repeat_and_compare_judges_it() {
    let Some((dir, target)) = rig() else { return };
    let run = |label: &str| {
        let out = sysbench(
            dir.path(),
            &target,
            &[
                "--script",
                "oltp_point_select",
                "--time",
                "1s",
                "--repeat",
                "3",
                "--label",
                label,
            ],
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{}\n{text}", stderr_of(&out));
        assert!(text.contains("\n  over 3 repeats: "), "{text}");
    };
    run("first");
    run("second");
    let doc = json_of(&iogauge(dir.path(), &["show", "first", "--json"]));
    let r = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["sysbench"].is_object())
        .expect("the load's result");
    let repeats = r["repeats"].as_array().expect("repeats");
    assert_eq!(repeats.len(), 3, "{r}");
    let each: u64 = repeats.iter().map(|x| x["ios"].as_u64().unwrap()).sum();
    assert_eq!(r["ios"].as_u64(), Some(each), "{r}");
    assert_eq!(r["stats"]["iops"]["n"], 3, "{r}");
    let cmp = json_of(&iogauge(
        dir.path(),
        &["compare", "first", "second", "--json"],
    ));
    let tps = cmp["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "tps")
        .expect("a TPS comparison");
    assert_eq!(tps["baseline_n"], 3, "{tps}");
    assert!(
        !tps["verdict"].as_str().unwrap().starts_with("cannot judge"),
        "{tps}"
    );
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}
