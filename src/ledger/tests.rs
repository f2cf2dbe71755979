use super::*;

/// A journal at `dir/name`, held locked by the returned file as its live owner holds it, with
/// `contents` saved the way the owner saves it.
fn held_journal(dir: &Path, name: &str, contents: &[u8]) -> (PathBuf, File) {
    let path = dir.join(name);
    let mut file = create_private(&path).unwrap();
    file.try_lock().unwrap();
    replace_locked(&path, &mut file, contents).unwrap();
    (path, file)
}

/// A journal is replaced whole: a save that fails before its rename (here the staging name
/// is taken by a directory) leaves the last whole journal, never a truncated one.
#[test]
fn a_save_that_fails_leaves_the_last_whole_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut file) = held_journal(dir.path(), "ledger-1.json", b"{\"first\": 1}");
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"first\": 1}");
    std::fs::create_dir(staged(&path)).unwrap();
    assert!(replace_locked(&path, &mut file, b"{\"second\": 2}").is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"first\": 1}");
    // The lock went with the contents: the path's inode is held.
    let other = open_owned(&path).unwrap();
    assert!(other.try_lock().is_err());
}

/// A reader that opened a journal just before its live owner renamed a new one over it
/// takes the old inode's lock once the owner lets it go; it must not read that as a dead
/// run's ledger.
#[test]
fn a_journal_renamed_over_is_not_a_dead_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut file) = held_journal(dir.path(), "ledger-4242.json", b"{}");
    let stale = open_owned(&path).unwrap();
    replace_locked(&path, &mut file, b"{}").unwrap();
    // The old inode's lock is free, and the path names the new one: what `dead` checks.
    assert!(once_no_child_holds_it(|| stale.try_lock().is_ok()));
    assert!(!still_named(&stale, &path));
    assert!(still_named(&file, &path));
    drop(stale);
    assert!(
        dead_in(dir.path(), "ledger-").is_empty(),
        "a live run's journal was taken for dead"
    );
    drop(file);
    let mut found = Vec::new();
    once_no_child_holds_it(|| {
        found = dead_in(dir.path(), "ledger-")
            .iter()
            .map(|d| d.pid)
            .collect();
        !found.is_empty()
    });
    assert_eq!(found, [4242]);
}

/// Whether `free` comes true within a minute. A lock is free once no process holds its
/// open file: a child another test of this binary forks in between keeps a copy until its
/// exec closes it — a moment, but on a busy CPU a moment may be long (CI once saw a
/// hundred thousand yields go by). A deadline, not a count, so only a lock that stays held
/// fails the test.
fn once_no_child_holds_it(mut free: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if free() {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
}

/// The entry written before a test file's create names only a file born after it: what the
/// run was creating when it died is removed, a file that held the name before is not.
#[test]
fn an_entry_before_the_create_removes_only_a_file_born_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let there = dir.path().join("there");
    std::fs::write(&there, b"the user's").unwrap();
    let born = std::fs::metadata(&there).unwrap().created();
    if born.is_err() {
        // Without birth times both files are left alone; the second assertion below says so.
        assert!(
            std::env::var("CI").is_err(),
            "{} keeps no birth times",
            dir.path().display()
        );
        return;
    }
    // The entry's clock is the kernel's coarse one, which lags the true time by up to a tick
    // (and a birth time may be stamped finer): wait until it has passed the file's birth,
    // judged by the clock itself, not by a sleep.
    let born_ns = born
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    while iogauge_engine::sys::coarse_realtime_ns() <= born_ns {
        std::hint::spin_loop();
    }
    let old = TestFile::before_create(&there).read::<TestFile>().unwrap();
    assert_eq!(
        old.undo(false),
        ("left alone: it was there before the run".into(), true)
    );
    assert!(there.exists());

    let made = dir.path().join("made");
    let new = TestFile::before_create(&made).read::<TestFile>().unwrap();
    assert_eq!(new.undo(true), ("already gone".into(), true));
    std::fs::write(&made, b"the run's").unwrap();
    assert_eq!(new.undo(true), ("would be removed".into(), true));
    assert!(made.exists());
    assert_eq!(new.undo(false), ("removed".into(), true));
    assert!(!made.exists());
}
