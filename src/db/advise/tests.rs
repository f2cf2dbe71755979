//! From results to advice: the right result feeds each rule, a cut cell is named, the snippet
//! holds only what changed.

use super::*;
use crate::analysis::tests::result;
use crate::model::SyncDoc;

fn wal(sync: Option<SyncKind>, odsync: bool, iops: f64) -> ResultDoc {
    let mut r = result(Rw::Write, 8192, 1, 1, iops);
    r.workload.sync = sync;
    r.workload.odsync = odsync;
    if sync.is_some() {
        r.sync = Some(SyncDoc {
            kind: sync,
            count: r.ios,
            per_s: iops,
            lat_ns: r.lat_ns,
        });
    }
    r
}

fn postgres() -> Vec<ResultDoc> {
    let mut seq = result(Rw::Read, 128 << 10, 1, 1, 1_000.0);
    seq.bw_bytes = 1_000.0 * 131_072.0; // 16,000 pages/s
    let mut v = vec![seq];
    for (qd, iops) in [(1, 8_000.0), (2, 15_000.0), (4, 28_000.0), (8, 30_000.0)] {
        v.push(result(Rw::Randread, 8192, 1, qd, iops));
    }
    v.push(wal(Some(SyncKind::Fdatasync), false, 1_000.0));
    v.push(wal(Some(SyncKind::Fsync), false, 950.0));
    v.push(wal(None, true, 1_500.0));
    v
}

fn value<'a>(a: &'a AdviceDoc, name: &str) -> &'a str {
    &a.settings.iter().find(|s| s.name == name).unwrap().value
}

#[test]
fn each_postgres_setting_comes_from_its_own_result() {
    let a = derive(
        &postgres(),
        SysbenchServer::Postgres,
        "15.18 (Debian 15.18-0+deb12u1)",
    );
    assert_eq!(value(&a, "random_page_cost"), "2.0");
    assert_eq!(value(&a, "effective_io_concurrency"), "4");
    assert_eq!(value(&a, "wal_sync_method"), "open_datasync");
    assert!(
        a.notes.iter().any(|n| n.contains("PostgreSQL 15 has none")),
        "{:?}",
        a.notes
    );
    let s = snippet(&a, "r1");
    assert!(s.contains("random_page_cost = 2.0\n"), "{s}");
    assert!(s.contains("wal_sync_method = 'open_datasync'\n"), "{s}");
    assert!(
        !s.contains("seq_page_cost"),
        "unchanged settings stay out: {s}"
    );
    // PostgreSQL 18's defaults: 16 in flight is no change there, 4 is.
    let v18 = derive(&postgres(), SysbenchServer::Postgres, "18.1");
    let eic = v18
        .settings
        .iter()
        .find(|s| s.name == "effective_io_concurrency")
        .unwrap();
    assert_eq!(eic.default, "16");
    assert!(eic.changed(), "4 against 18's 16");
    // 12 has no maintenance_io_concurrency: a line for it would stop the server.
    let v12 = derive(&postgres(), SysbenchServer::Postgres, "12.20");
    assert!(v12
        .settings
        .iter()
        .all(|s| s.name != "maintenance_io_concurrency"));
    assert_eq!(major("18beta1"), Some(18));
}

#[test]
fn a_cell_cut_short_is_named_not_advised() {
    let mut results = postgres();
    results[0].interrupted = true;
    let a = derive(&results, SysbenchServer::Postgres, "");
    assert!(a.settings.iter().all(|s| s.name != "random_page_cost"));
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("did not run to their end: random_page_cost")),
        "{:?}",
        a.notes
    );
    assert!(
        a.notes.iter().any(|n| n.contains("not installed here")),
        "{:?}",
        a.notes
    );
}

#[test]
fn each_mariadb_setting_comes_from_its_own_result() {
    let mut results: Vec<ResultDoc> = [(1, 5_000.0), (4, 18_000.0), (16, 40_000.0), (64, 41_000.0)]
        .into_iter()
        .map(|(qd, iops)| result(Rw::Randread, 16384, 1, qd, iops))
        .collect();
    let mut random = result(Rw::Randwrite, 16384, 1, 16, 9_000.0);
    // A burst first, then what the device sustains.
    random.timeseries = [20_000.0, 20_000.0, 6_000.0, 6_100.0]
        .iter()
        .enumerate()
        .map(|(i, &iops)| crate::model::Sample {
            t_s: i as f64 + 1.0,
            iops,
            ..Default::default()
        })
        .collect();
    random.workload.interval_s = 1.0;
    results.push(random);
    results.push(result(Rw::Write, 16384, 1, 16, 9_500.0));
    let mut redo = result(Rw::Write, 4096, 1, 1, 700.0);
    redo.workload.sync = Some(SyncKind::Fdatasync);
    results.push(redo);
    for r in &mut results {
        r.io_path = "direct".into();
    }
    let a = derive(
        &results,
        SysbenchServer::Mariadb,
        "10.11.19-MariaDB-0+deb12u1",
    );
    assert_eq!(value(&a, "innodb_io_capacity_max"), "6000");
    assert_eq!(value(&a, "innodb_io_capacity"), "3000");
    assert_eq!(value(&a, "innodb_flush_neighbors"), "0");
    assert_eq!(value(&a, "innodb_flush_method"), "O_DIRECT");
    assert_eq!(value(&a, "innodb_read_io_threads"), "4");
    assert!(snippet(&a, "r2").starts_with("# iogauge db advise (run r2)"));
    let s = snippet(&a, "r2");
    assert!(s.contains("[mariadbd]\n# random 16 KiB writes"), "{s}");
    assert!(s.contains("\ninnodb_io_capacity = 3000\n"), "{s}");
    assert!(
        !s.contains("innodb_flush_method"),
        "unchanged settings stay out: {s}"
    );
}

#[test]
fn a_short_cell_is_taken_whole_and_says_so() {
    let mut r = result(Rw::Randwrite, 16384, 1, 16, 9_000.0);
    r.timeseries.truncate(1);
    let s = sustained(&r);
    assert!(!s.burst_left_out);
    assert_eq!(s.iops, 9_000.0);
}

#[test]
fn the_devices_under_the_data_are_named_as_the_kernel_describes_them() {
    let d: Vec<iogauge_sysinfo::BlockDevice> = serde_json::from_value(serde_json::json!([
        {"name": "sdb", "role": "disk", "rotational": true, "write_cache": "write back"},
        {"name": "zram0", "role": "disk", "rotational": false},
    ]))
    .unwrap();
    let note = stack_note(&d).unwrap();
    assert!(
        note.ends_with("sdb (rotational, write cache write back), zram0 (not rotational)"),
        "{note}"
    );
    assert!(stack_note(&[]).is_none());
}

#[test]
fn the_proofs_wal_rate_gives_max_wal_size_for_postgres_only() {
    let proof = crate::model::ProofDoc {
        wal_bytes_per_s: Some(5.0 * 1_048_576.0),
        ..Default::default()
    };
    assert_eq!(
        from_proof(&proof, SysbenchServer::Postgres).unwrap().value,
        "4GB"
    );
    assert!(from_proof(&proof, SysbenchServer::Mariadb).is_none());
    assert!(from_proof(&Default::default(), SysbenchServer::Postgres).is_none());
    assert!(mariadb_before("10.5.23-MariaDB", 10, 6));
    assert!(!mariadb_before("10.11.19-MariaDB-0+deb12u1", 10, 6));
}
