//! `iogauge db sysbench` against a real MariaDB and sysbench (Debian's mariadb-server and
//! sysbench in CI): a short OLTP run whose TPS and p99 agree with sysbench's own report, stored
//! like any run; a setting the server refuses; the plan of a dry run; and no server process or
//! server directory left after a normal end, an error or a Ctrl-C.

mod common;
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
    if !extra.contains(&"--time") {
        args.extend(["--time", "3s"]);
    }
    args.extend_from_slice(extra);
    iogauge(dir, &args)
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
    assert_eq!(shown["results"][0]["sysbench"]["transactions"], txns as u64);
    // `show` names the rate and its unit: transactions, not IOs.
    let shown = iogauge(dir.path(), &["show", "last"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains(" TPS") && text.contains(" transactions · "),
        "{text}"
    );
    assert!(!text.contains("IOPS"), "{text}");
    let list = iogauge(dir.path(), &["list"]);
    assert!(list.status.success(), "{}", stderr_of(&list));
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("db-sysbench"),
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
        (&["--db-setting", "nonsense"][..], "is not KEY=VALUE"),
        (&["--time", "500ms"][..], "--time is under 1s"),
        (&["--buffer-ratio", "0"][..], "above 0"),
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
    let mut cmd = Command::new(BIN);
    cmd.env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .env("IOGAUGE_DB", dir.path().join("results.db"))
        .args(["db", "sysbench"])
        .arg(&target)
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
    // "[1/1] sysbench oltp_read_write · 1 threads …": the measurement begins.
    run.wait_for("] sysbench ", WATCHDOG);
    assert!(!servers_in(&target).is_empty(), "a server runs");
    run.signal("INT");
    let out = run.finish(WATCHDOG);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(servers_in(&target), "", "{err}");
    assert!(left_in(&target).is_empty(), "{:?}", left_in(&target));
}
