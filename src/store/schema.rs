//! The database file: telling ours from anything else before touching it, the schema, and the
//! migrations that bring an older file up to date.
//!
//! A file is ours when SQLite's header carries our `application_id` (the format's own way to name
//! the program that owns a file, https://www.sqlite.org/fileformat.html#application_id) and it
//! holds an `iogauge_meta` table naming the application. Everything is checked on the raw header
//! bytes or through a read-only connection first, so a file that fails the check is never
//! written to. The schema version is `PRAGMA user_version`; `MIGRATIONS[i]` takes version `i`
//! to `i + 1`, all of them in one transaction, so a file is never half migrated.

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// "ioga", in the header at offset 68.
pub const APPLICATION_ID: i32 = 0x696F_6761;
pub const APPLICATION: &str = "iogauge";
/// How long a writer waits for another iogauge process holding the write lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Version 1: runs and their results; each row keeps the document exactly as serialized, and the
/// columns beside it exist for queries and `iogauge list`.
const V1: &str = "
CREATE TABLE iogauge_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    label       TEXT,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    suite       TEXT,
    command     TEXT NOT NULL,
    system      TEXT NOT NULL,
    params      TEXT NOT NULL,
    interrupted INTEGER NOT NULL,
    notes       TEXT NOT NULL,
    findings    TEXT NOT NULL,
    doc         TEXT NOT NULL
);
CREATE INDEX runs_label ON runs (label, id);
CREATE INDEX runs_run_id ON runs (run_id, id);
CREATE TABLE results (
    run         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    name        TEXT,
    workload    TEXT NOT NULL,
    target      TEXT NOT NULL,
    iops        REAL NOT NULL,
    bw_bytes    REAL NOT NULL,
    lat_p50_ns  INTEGER NOT NULL,
    lat_p99_ns  INTEGER NOT NULL,
    interrupted INTEGER NOT NULL,
    doc         TEXT NOT NULL,
    PRIMARY KEY (run, idx)
);
";

/// Version 2: for runs with `--verify`, the generation each block must at least hold, so
/// `iogauge verify` can tell a lost write from the version before it later (little-endian u64
/// per block of `block` bytes from the run's offset; 0 = not written, 1 = written).
const V2: &str = "
CREATE TABLE verify_maps (
    run   INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    block INTEGER NOT NULL,
    map   BLOB NOT NULL
);
";

/// Every migration in order; the schema version of a file is how many it has had.
pub const MIGRATIONS: &[&str] = &[V1, V2];

/// Why a file is not ours. Each message says what to do, and that the file was not changed.
fn refuse(path: &Path, why: &str) -> anyhow::Error {
    crate::error::usage(format!(
        "{} {why}; it was left untouched. Give another file with --db or IOGAUGE_DB",
        path.display()
    ))
}

/// Checks an existing, non-empty file before anything opens it for writing: SQLite's magic
/// string, then our application id or (for a file whose header says nothing) our meta table,
/// read through a read-only connection.
pub fn check_existing(path: &Path) -> Result<()> {
    let mut header = [0u8; 100];
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let n = read_up_to(&mut f, &mut header)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if n < header.len() || &header[..16] != b"SQLite format 3\0" {
        return Err(refuse(
            path,
            "is not an SQLite file, so not an iogauge results database",
        ));
    }
    let app = i32::from_be_bytes([header[68], header[69], header[70], header[71]]);
    if app != 0 && app != APPLICATION_ID {
        return Err(refuse(path, "is another application's SQLite database"));
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    match meta_application(&conn) {
        Ok(Some(name)) if name == APPLICATION => Ok(()),
        Ok(_) => Err(refuse(
            path,
            "is an SQLite database but not iogauge's (it has no iogauge_meta table naming iogauge)",
        )),
        Err(e) => Err(match unwritable(path) {
            // SQLite cannot even read a WAL database it may not write its index beside; the
            // user needs to hear why, not that the file is not a database.
            Some(why) => crate::error::usage(format!(
                "the results database {} {why}, so iogauge cannot use it ({e}); give --db PATH for a writable place, or --no-store to keep nothing",
                path.display()
            )),
            None => refuse(
                path,
                &format!("could not be read as an SQLite database ({e})"),
            ),
        }),
    }
}

/// Why the database file or its directory cannot be written, if that is so: a read-only file
/// system, or permissions (for a user other than root).
pub fn unwritable(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    if iogauge_engine::sys::read_only(&file).unwrap_or(false) {
        return Some("is on a read-only file system".into());
    }
    if let Some(why) = short_of_space(&file) {
        return Some(why);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let denied = |p: &Path| {
        std::fs::OpenOptions::new()
            .append(true)
            .open(p)
            .err()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
    };
    if denied(path) {
        return Some("is not writable by this user".into());
    }
    let probe = std::fs::metadata(dir).ok()?;
    (probe.permissions().readonly()).then(|| "is in a directory this user cannot write".into())
}

/// The least free space a results database's file system must have before a run: a stored run
/// is its document, histograms and 100 ms series (tens to hundreds of KiB), and SQLite needs
/// room for its write-ahead log beside it. Less is told before anything is measured, not after.
pub const MIN_FREE: u64 = 1 << 20;

/// Why the file system holding `file` cannot take a stored run, if it cannot: less than
/// [`MIN_FREE`] free (a file system that reports no size is given the benefit of the doubt).
pub fn short_of_space(file: &std::fs::File) -> Option<String> {
    let free = iogauge_engine::sys::free_bytes(file).ok()?;
    (free < MIN_FREE).then(|| {
        format!(
            "is on a file system with {} free, less than the {} iogauge asks for to store a run",
            iogauge_units::iec(free),
            iogauge_units::iec(MIN_FREE)
        )
    })
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The application named in `iogauge_meta`, or `None` when there is no such table or row.
fn meta_application(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let has_table: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'iogauge_meta')",
        [],
        |r| r.get(0),
    )?;
    if !has_table {
        return Ok(None);
    }
    let mut stmt = conn.prepare("SELECT value FROM iogauge_meta WHERE key = 'application'")?;
    let mut rows = stmt.query([])?;
    match rows.next()? {
        Some(row) => Ok(Some(row.get(0)?)),
        None => Ok(None),
    }
}

/// Brings a file that passed [`check_existing`] (or was empty or missing) to the newest schema,
/// in one write transaction, then switches it to WAL so readers and the other writers' waits stay
/// short. Another process initialising the same new file at the same moment is fine: the second
/// one waits for the lock and then finds the schema in place.
pub fn prepare(conn: &mut Connection, path: &Path) -> Result<()> {
    migrate(conn, path, MIGRATIONS)?;
    // Switching to WAL needs the file to itself for a moment, and SQLite answers "locked"
    // at once instead of waiting (its busy handler does not cover this step) when another
    // process is opening the same new database: retry within the busy timeout.
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    let mode: String = loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => break r?,
        }
    };
    if !mode.eq_ignore_ascii_case("wal") {
        // WAL needs shared memory, which some network file systems lack; rollback mode still
        // works, writers just wait for each other longer.
        say!(
            "note: {} is in {mode} journal mode (WAL unavailable here)",
            path.display()
        );
    }
    Ok(())
}

/// Applies `migrations[user_version..]` in one transaction. Also used by tests with their own
/// list, to show that data survives a migration.
pub fn migrate(conn: &mut Connection, path: &Path, migrations: &[&str]) -> Result<()> {
    // The common case, an up-to-date file, needs no write lock (and works on a read-only file).
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == migrations.len() as i64 && meta_application(conn)?.as_deref() == Some(APPLICATION)
    {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let objects: i64 = tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if objects == 0 && version == 0 {
        tx.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID};"))?;
        tx.execute_batch(migrations[0])?;
        tx.execute(
            "INSERT INTO iogauge_meta (key, value) VALUES ('application', ?1), ('created_by', ?2), ('created_at', ?3)",
            (
                APPLICATION,
                concat!("iogauge ", env!("CARGO_PKG_VERSION")),
                humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            ),
        )?;
        apply(&tx, migrations, 1)?;
        tx.commit()?;
        return Ok(());
    }
    // The pre-check ran before we held the lock; check again now that nobody can change it.
    if meta_application(&tx)?.as_deref() != Some(APPLICATION) {
        return Err(refuse(path, "is an SQLite database but not iogauge's"));
    }
    let known = migrations.len() as i64;
    if version > known {
        return Err(crate::error::usage(format!(
            "{} was written by a newer iogauge (schema version {version}; this one knows up to {known}); use a newer iogauge or another --db",
            path.display()
        )));
    }
    if version < known {
        apply(&tx, migrations, version.max(1) as usize)?;
        tx.commit()?;
    }
    Ok(())
}

fn apply(tx: &rusqlite::Transaction<'_>, migrations: &[&str], from: usize) -> Result<()> {
    for (i, sql) in migrations.iter().enumerate().skip(from) {
        tx.execute_batch(sql)
            .with_context(|| format!("schema migration to version {}", i + 1))?;
    }
    tx.execute_batch(&format!("PRAGMA user_version = {};", migrations.len()))?;
    Ok(())
}
