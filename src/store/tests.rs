//! Unit tests of the store: opening and refusing files, migrations, recording as a run goes,
//! exact round trips, selectors and concurrent writers.

use super::*;
use crate::model::ResultDoc;
use serde_json::json;

fn db_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("results.db")
}

fn output(db: &Path) -> Option<Store> {
    Some(Store::open(Some(db)).unwrap())
}

/// A result with awkward numbers. serde_json's default parser reads 5.810589763872054e-10 back
/// one ulp off (about one float in seven is), so a store that parsed and re-printed documents
/// would fail the byte-identical tests.
fn result(i: u32) -> ResultDoc {
    let doc = json!({
        "name": format!("cell {i}"),
        "workload": {"rw": "randread", "bs": 4096, "threads": 1, "iodepth": i + 1, "engine": "null",
            "direct": true, "mix_read_pct": 100, "sync": null, "sync_every": null, "odsync": false,
            "seed": 1, "time_s": 0.3, "data_bytes": null, "ramp_s": 0.0, "interval_s": 1.0},
        "target": {"path": "/tmp/x", "kind": "file", "created": true, "offset_bytes": 0,
            "range_bytes": 16777216, "logical_block_size": 512},
        "iops": 1163549.9876543211 + f64::from(i), "bw_bytes": 4765900800.123457, "ios": 349065,
        "bytes": 1429770240u64, "runtime_s": 0.30000000000000004,
        "lat_ns": {"min": 110, "mean": 272.6066892985548, "p50": 120, "p90": 130, "p99": 140 + i,
            "p999": 170, "p9999": 2685, "max": 8036351},
        "read": null, "write": null, "sync": null,
        "cpu": {"user_s": 0.10046, "sys_s": 5.810589763872054e-10, "per_io_us": 0.28845630469969774},
        "timeseries": [{"t_s": 0.1, "iops": 1e-300, "bw_bytes": 1.7976931348623157e308,
            "lat_p50_ns": 120, "lat_p99_ns": 140}],
        "fine": {"bin_s": 0.01, "ios": [1, 2, 3]},
        "engine": {"name": "null", "flags": [], "refused": [], "registered_buffers": false,
            "registered_files": false},
        "interrupted": false, "io_path": "direct", "findings": [{"kind": "stall", "severity": "info", "summary": "", "evidence": {"v": 0.1}, "advice": "", "result": null}],
    });
    serde_json::from_value(doc).expect("test result document")
}

fn header(label: Option<&str>) -> RunDoc {
    let doc = json!({
        "schema": crate::model::SCHEMA, "run_id": "6b00f1a4-09e6", "label": label,
        "started_at": "2026-01-01T00:00:00Z", "command": ["iogauge", "run", "--label", "a,b \"c\""],
        "suite": null,
        "system": {"kernel": "6.1", "hostname": "h", "cpu_model": null, "cpu_count": 2,
            "mem_total_bytes": 1024, "target": null},
        "results": [], "findings": [], "interrupted": false, "notes": ["ünïcode note"],
        "params": {"disks": "4"},
    });
    serde_json::from_value(doc).expect("test run document")
}

fn record(db: &Path, label: Option<&str>, n: u32) -> (i64, RunDoc) {
    let mut doc = header(label);
    let mut rec = Recorder::start(output(db), &doc).unwrap();
    for i in 0..n {
        let r = result(i);
        rec.add(&r).unwrap();
        doc.results.push(r);
    }
    doc.findings.push(
        iogauge_analyze::Finding::new(
            iogauge_analyze::Kind::Outlier,
            iogauge_analyze::Severity::Info,
            String::new(),
            "",
        )
        .with("mean", 0.30000000000000004),
    );
    let id = rec.finish(&doc).unwrap().unwrap();
    (id, doc)
}

fn raw(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

#[test]
fn a_missing_file_and_an_empty_file_become_databases() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/results.db");
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    for path in [nested, empty] {
        let store = Store::open_path(&path).unwrap();
        drop(store);
        let conn = raw(&path);
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, schema::MIGRATIONS.len() as i64);
        let app: String = conn
            .query_row(
                "SELECT value FROM iogauge_meta WHERE key = 'application'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(app, "iogauge");
        let id: i32 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(id, i32::from_be_bytes(*b"ioga"));
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        // Opening again is a no-op, not a second initialisation.
        Store::open_path(&path).unwrap();
    }
}

#[test]
fn migrations_keep_the_data_and_newer_schemas_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (id, doc) = record(&db, Some("before"), 2);
    let path = db.clone();
    // A later version: every migration this build knows, and one more.
    let mut next = schema::MIGRATIONS.to_vec();
    next.push("ALTER TABLE runs ADD COLUMN host TEXT; UPDATE runs SET host = 'h';");
    let mut conn = raw(&path);
    schema::migrate(&mut conn, &path, &next).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, next.len() as i64);
    let host: String = conn
        .query_row("SELECT host FROM runs WHERE id = ?1", [id], |r| r.get(0))
        .unwrap();
    assert_eq!(host, "h");
    drop(conn);
    // This build knows one version fewer than the file: it refuses rather than guess.
    let before = std::fs::read(&path).unwrap();
    let err = Store::open_path(&path).err().unwrap();
    assert!(format!("{err:#}").contains("newer iogauge"), "{err:#}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // A build that knows the later version reads the run as it was written.
    let mut conn = raw(&path);
    schema::migrate(&mut conn, &path, &next).unwrap();
    let store = Store {
        conn,
        path: path.clone(),
    };
    assert_eq!(
        store.load_json_pretty(id).unwrap(),
        serde_json::to_string_pretty(&doc).unwrap()
    );
}

/// Refused with one line naming the file, and not a byte changed, no side files left.
fn assert_refused(path: &Path, expect: &str) {
    let before = std::fs::read(path).unwrap();
    let err = Store::open_path(path).err().expect("should be refused");
    let msg = format!("{err:#}");
    assert!(msg.contains(expect), "{msg}");
    assert!(
        msg.contains(&path.display().to_string()) && !msg.contains('\n'),
        "{msg}"
    );
    assert_eq!(std::fs::read(path).unwrap(), before);
    assert_eq!(crate::error::exit_code(&err), 2);
}

#[test]
fn files_that_are_not_ours_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(
        &garbage,
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert_refused(&garbage, "not an SQLite file");
    let short = dir.path().join("short.db");
    std::fs::write(&short, b"SQLite format 3\0").unwrap();
    assert_refused(&short, "not an SQLite file");

    let foreign = dir.path().join("foreign.db");
    raw(&foreign)
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    assert_refused(&foreign, "not iogauge's");
    let other_app = dir.path().join("other.db");
    raw(&other_app)
        .execute_batch("PRAGMA application_id = 42; CREATE TABLE t (x);")
        .unwrap();
    assert_refused(&other_app, "another application");
    // Even an iogauge_meta table is not enough when it names someone else.
    let impostor = dir.path().join("impostor.db");
    raw(&impostor)
        .execute_batch("CREATE TABLE iogauge_meta (key, value); INSERT INTO iogauge_meta VALUES ('application', 'other');")
        .unwrap();
    assert_refused(&impostor, "not iogauge's");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with("-wal") && !n.ends_with("-shm")),
        "{names:?}"
    );
}

#[test]
fn a_run_keeps_its_results_as_it_goes_and_is_marked_interrupted_until_finished() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut rec = Recorder::start(output(&db), &header(Some("partial"))).unwrap();
    rec.add(&result(0)).unwrap();
    rec.add(&result(1)).unwrap();
    // Dropped without finish: the process died after two cells.
    drop(rec);
    let store = Store::open(Some(&db)).unwrap();
    let id = store.resolve("last").unwrap();
    let doc = store.load(id).unwrap();
    assert!(doc.interrupted);
    assert_eq!(doc.results.len(), 2);
    assert_eq!(doc.results[1].name.as_deref(), Some("cell 1"));
    let row = &store.runs(10).unwrap()[0];
    assert!(row.interrupted && row.finished_at.is_none());
    assert_eq!(row.results.len(), 2);
    assert_eq!(row.results[1].lat_p99_ns, 141);

    // finish replaces everything with the final document, results included.
    let mut rec = Recorder::start(output(&db), &header(Some("final"))).unwrap();
    rec.add(&result(0)).unwrap();
    let mut last = header(Some("final"));
    let mut changed = result(0);
    changed.findings.push(iogauge_analyze::Finding::new(
        iogauge_analyze::Kind::Stall,
        iogauge_analyze::Severity::Warning,
        String::new(),
        "",
    ));
    last.results = vec![changed, result(1)];
    last.interrupted = true;
    let id = rec.finish(&last).unwrap().unwrap();
    assert_eq!(
        store.load_json(id).unwrap(),
        serde_json::to_string(&last).unwrap()
    );
    assert!(store.runs(1).unwrap()[0].finished_at.is_some());
}

#[test]
fn no_store_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut rec = Recorder::start(None, &header(None)).unwrap();
    rec.add(&result(0)).unwrap();
    assert_eq!(rec.finish(&header(None)).unwrap(), None);
    assert!(!db.exists());
}

#[test]
fn stored_json_is_byte_identical_to_the_documents_serialization() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (id, doc) = record(&db, Some("exact"), 3);
    let store = Store::open(Some(&db)).unwrap();
    assert_eq!(
        store.load_json_pretty(id).unwrap(),
        serde_json::to_string_pretty(&doc).unwrap()
    );
    assert_eq!(
        store.load_json(id).unwrap(),
        serde_json::to_string(&doc).unwrap()
    );
}

#[test]
fn selectors_name_runs_by_id_run_id_label_and_last() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let store_err = Store::open(Some(&db))
        .unwrap()
        .resolve("last")
        .err()
        .unwrap();
    assert!(format!("{store_err}").contains("no runs"), "{store_err}");
    let (a, _) = record(&db, Some("base"), 1);
    let (b, _) = record(&db, Some("base"), 1);
    let (c, _) = record(&db, Some("other"), 1);
    let store = Store::open(Some(&db)).unwrap();
    assert_eq!(store.resolve("last").unwrap(), c);
    assert_eq!(store.resolve(&a.to_string()).unwrap(), a);
    assert_eq!(
        store.resolve("base").unwrap(),
        b,
        "a label names its newest run"
    );
    assert_eq!(
        store.resolve("6b00f1a4-09e6").unwrap(),
        c,
        "a run id names its newest run"
    );
    let err = store.resolve("nope").err().unwrap();
    assert!(format!("{err}").contains("'nope'"));
    assert_eq!(crate::error::exit_code(&err), 2);
    let other = store.resolve("other").unwrap();
    assert_eq!(store.load(other).unwrap().label.as_deref(), Some("other"));
}

#[test]
fn delete_removes_the_run_and_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (a, _) = record(&db, None, 2);
    let (b, _) = record(&db, None, 1);
    let mut store = Store::open(Some(&db)).unwrap();
    store.delete(a).unwrap();
    let ids: Vec<i64> = store.runs(10).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, [b]);
    let orphans: i64 = store
        .conn
        .query_row("SELECT count(*) FROM results WHERE run = ?1", [a], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(orphans, 0);
    assert!(store.delete(a).is_err());
    assert!(store.load(a).is_err());
}

#[test]
fn concurrent_writers_lose_no_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..5 {
                    ids.push(record(&db, Some(&format!("t{t}")), 2).0);
                }
                ids
            })
        })
        .collect();
    let mut ids: Vec<i64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    ids.sort_unstable();
    let store = Store::open(Some(&db)).unwrap();
    let mut stored: Vec<i64> = store.runs(100).unwrap().iter().map(|r| r.id).collect();
    stored.sort_unstable();
    assert_eq!(stored, ids);
    assert_eq!(ids.len(), 20);
    assert!(store
        .runs(100)
        .unwrap()
        .iter()
        .all(|r| r.results.len() == 2 && !r.interrupted));
}

#[test]
fn default_path_follows_xdg() {
    // Only the explicit path is tested here; the environment is process-wide, so the XDG
    // fallbacks are tested through the binary (tests/store.rs), each with its own environment.
    let p = db_path(Some(Path::new("/x/y.db"))).unwrap();
    assert_eq!(p, PathBuf::from("/x/y.db"));
    assert!(db_path(Some(Path::new(""))).is_err());
}

#[test]
fn a_version_1_file_gains_the_verify_maps_and_keeps_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    let mut conn = raw(&path);
    schema::migrate(&mut conn, &path, &schema::MIGRATIONS[..1]).unwrap();
    drop(conn);
    let db = path.clone();
    let (id, _) = record(&db, Some("old"), 1);
    let mut store = Store::open_path(&path).unwrap();
    assert_eq!(store.verify_map(id).unwrap(), None);
    store.save_verify_map(id, 4096, &[0, 1, 5 << 32]).unwrap();
    assert_eq!(
        store.verify_map(id).unwrap(),
        Some((4096, vec![0, 1, 5 << 32]))
    );
    // Deleting the run takes its map with it.
    store.delete(id).unwrap();
    assert_eq!(store.verify_map(id).unwrap(), None);
}

/// Issue 34, item 9: a file damaged mid-way passed the check before the fill and failed when
/// the first result was inserted after the measuring. It is told when the store opens now;
/// the same file undamaged opens.
#[test]
fn a_damaged_database_is_told_before_anything_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    for _ in 0..4 {
        record(&db, None, 40);
    }
    assert!(Store::open(Some(&db)).is_ok());
    let page = raw(&db)
        .query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .unwrap() as u64;
    let len = std::fs::metadata(&db).unwrap().len();
    assert!(
        len >= 6 * page,
        "{len} bytes: the damage must fall mid-file"
    );
    // Garbage over a page in the middle: a b-tree page of the results, not the header.
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.write_all_at(&vec![0xa5u8; page as usize], (len / page / 2) * page)
        .unwrap();
    drop(f);
    let e = Store::open(Some(&db))
        .err()
        .expect("a damaged file is refused");
    assert!(
        e.downcast_ref::<crate::error::UsageError>().is_some(),
        "{e:#}"
    );
    assert!(
        format!("{e:#}").contains("is damaged (SQLite's quick_check"),
        "{e:#}"
    );
}
