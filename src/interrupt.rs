//! Signals and the files to remove whatever happens.
//!
//! SIGINT, SIGTERM and SIGHUP set a flag that every loop in iogauge looks at (workers between
//! completion batches, the fill between chunks), so the run stops within a second, keeps what
//! it measured, removes its test files and exits 128 + the signal. A second signal means "now":
//! the signal thread removes the test files itself and exits at once — after at most
//! [`REMOVE_WAIT`], even when the file system has stopped answering ([`SERVER_WAIT`] when a
//! database server of the run's must be stopped first). So does the first, for a
//! rank under MPI blocked in an exchange with the others ([`waiting_for_others`]), which no
//! loop of its own will notice.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a second signal waits for the test files to be removed before quitting anyway.
pub const REMOVE_WAIT: Duration = Duration::from_secs(2);
/// The same when work of a hook comes first: a database server's immediate stop, which on a
/// loaded 2-CPU machine took more than 2 s (CI: the quick exit left a PostgreSQL cluster).
pub const SERVER_WAIT: Duration = Duration::from_secs(30);

static COUNT: AtomicUsize = AtomicUsize::new(0);
/// Whether IO is being measured yet (false while the target is prepared and filled), so the
/// first signal's message says what a stop keeps.
static MEASURING: AtomicBool = AtomicBool::new(false);
/// Results stored so far, so a second signal's message says what is kept.
static STORED: AtomicUsize = AtomicUsize::new(0);
/// The whole run is in the store (only printing is left).
static FINISHED: AtomicBool = AtomicBool::new(false);
/// Blocked in an exchange with other MPI ranks, which a signal cannot interrupt.
static WAITING: AtomicBool = AtomicBool::new(false);
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Files this invocation created, with the device and inode they had then.
static CREATED: Mutex<Vec<Created>> = Mutex::new(Vec::new());

/// (path, its device and inode when created, kept with --keep).
type Created = (PathBuf, Option<(u64, u64)>, bool);

/// Work a second signal's quick exit does before removing files: what a plain unlink cannot
/// undo, such as a database server `db pgbench` started (stopped, its cluster removed).
type Hook = Box<dyn Fn() + Send>;
static HOOKS: Mutex<Vec<(u64, Hook)>> = Mutex::new(Vec::new());
static NEXT_HOOK: AtomicUsize = AtomicUsize::new(1);

/// Starts the signal thread. Call once, early in main.
pub fn install() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        // Without the thread, signals keep their default action (terminate): the run is lost
        // but nothing is corrupted; say so rather than fail.
        say!("warning: could not install signal handlers; an interrupt will not clean up");
        return;
    };
    std::thread::Builder::new()
        .name("iogauge-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
                let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                if n == 1 && WAITING.load(Ordering::SeqCst) {
                    // Blocked in an exchange with other MPI ranks, which may never answer (one
                    // stopped): nothing is being measured, so stop now rather than at a loop.
                    // No leading newline: under MPI every line carries the rank's label.
                    quit_now(sig, "interrupted while waiting for the other ranks");
                } else if n == 1 {
                    if MEASURING.load(Ordering::SeqCst) {
                        say!("\ninterrupted: stopping, keeping what was measured (press Ctrl-C again to quit now)");
                    } else if created().iter().any(|f| !f.2) {
                        say!("\ninterrupted: stopping before anything was measured; the test file is removed (press Ctrl-C again to quit now)");
                    } else {
                        // Nothing measured and no test file: a listener, a look-up.
                        say!("\ninterrupted: stopping (press Ctrl-C again to quit now)");
                    }
                } else {
                    quit_now(sig, "interrupted twice");
                }
            }
        })
        .ok();
}

/// Stops the run as `sig` would, without a message (stderr may be what is gone): a closed
/// pipe on stdout or stderr.
pub fn raise(sig: i32) {
    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// The first signal received, if any, ordered with [`waiting_for_others`]: the rank marks
/// itself waiting and then looks, the signal thread records the signal and then looks, so one
/// of the two sees the other (a relaxed load could be reordered before the mark).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn requested_now() -> Option<i32> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The first signal received, if any.
#[inline]
pub fn requested() -> Option<i32> {
    match FIRST.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// This rank of a run under MPI is (or is no longer) blocked in an exchange with the others:
/// a signal then ends the process from the signal thread, as a second one would.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn waiting_for_others(on: bool) {
    WAITING.store(on, Ordering::SeqCst);
}

/// From now on a stop keeps what was measured.
pub fn measuring() {
    MEASURING.store(true, Ordering::SeqCst);
}

/// `n` results of this run are in the results store.
pub fn note_stored(n: usize) {
    STORED.store(n, Ordering::SeqCst);
}

/// The run's final document is in the store.
pub fn note_finished() {
    FINISHED.store(true, Ordering::SeqCst);
}

/// What a second signal leaves in the store, in words.
fn kept() -> String {
    if FINISHED.load(Ordering::SeqCst) {
        return "quit now; the whole run was already stored".into();
    }
    match STORED.load(Ordering::SeqCst) {
        0 => "quit without saving".into(),
        1 => "quit now; the 1 result finished before is stored, the one running is lost".into(),
        n => {
            format!("quit now; the {n} results finished before are stored, the one running is lost")
        }
    }
}

/// Remembers a file this invocation created, so an emergency exit removes it — unless the
/// user asked to keep it (`keep`), which a second Ctrl-C honours as much as a clean end.
pub fn register_created(path: &Path, identity: Option<(u64, u64)>, keep: bool) {
    created().push((path.to_path_buf(), identity, keep));
}

/// Forgets a file once it has been removed (or is to be kept).
pub fn unregister_created(path: &Path) {
    created().retain(|(p, _, _)| p != path);
}

/// Registers `hook` to run if a second signal quits at once; the id unregisters it.
pub fn register_hook(hook: Hook) -> u64 {
    let id = NEXT_HOOK.fetch_add(1, Ordering::SeqCst) as u64;
    hooks().push((id, hook));
    id
}

/// Forgets a hook once its owner has done the work itself.
pub fn unregister_hook(id: u64) {
    hooks().retain(|(h, _)| *h != id);
}

fn hooks() -> MutexGuard<'static, Vec<(u64, Hook)>> {
    HOOKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The list stays usable even if a thread panicked while holding it: removing test files is
/// exactly what must still work then.
fn created() -> MutexGuard<'static, Vec<Created>> {
    CREATED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the test files and exits 128 + `sig`, saying why (`what`). Unlinking on a hung file
/// system can block for good, so a second thread exits after [`REMOVE_WAIT`] whatever the
/// removal is doing.
fn quit_now(sig: i32, what: &'static str) -> ! {
    let code = 128 + sig;
    let all: Vec<Created> = created().clone();
    let files: Vec<&Created> = all.iter().filter(|f| !f.2).collect();
    let names = files
        .iter()
        .map(|(p, _, _)| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let (wait, work) = match hooks().is_empty() {
        true => (REMOVE_WAIT, "removing the test files"),
        false => (
            SERVER_WAIT,
            "stopping the database server and removing its files",
        ),
    };
    let watchdog = std::thread::Builder::new()
        .name("iogauge-quit".into())
        .spawn(move || {
            std::thread::sleep(wait);
            match names.is_empty() {
                true => say!("{what}: {}; {work} did not finish (is the file system hung?); `iogauge clean` finishes it", kept()),
                false => say!("{what}: {}; {work} did not finish (is the file system hung?); remove them by hand: {names}", kept()),
            }
            iogauge_engine::sys::exit_now(code);
        });
    if watchdog.is_err() {
        // No thread to bound the wait: quitting now matters more than cleaning up.
        say!("{what}: {}", kept());
        iogauge_engine::sys::exit_now(code);
    }
    for (_, hook) in hooks().iter() {
        hook();
    }
    // Every file first (the ledger's lock may be held by the thread this one interrupts), then
    // the crash ledger: a file removed or kept on purpose is not left behind, and the next
    // command must not name it so.
    let gone: Vec<bool> = all
        .iter()
        .map(|(p, id, keep)| *keep || remove_if_ours(p, *id))
        .collect();
    for ((p, id, _), _) in all.iter().zip(&gone).filter(|(_, g)| **g) {
        if let Some(id) = *id {
            crate::ledger::remove(&crate::ledger::TestFile::entry(p, id));
        }
    }
    let left: Vec<String> = all
        .iter()
        .zip(&gone)
        .filter(|(_, g)| !**g)
        .map(|((p, _, _), _)| p.display().to_string())
        .collect();
    let kept_files: Vec<String> = all
        .iter()
        .filter(|f| f.2)
        .map(|(p, _, _)| p.display().to_string())
        .collect();
    let kept_files = match kept_files.is_empty() {
        true => String::new(),
        false => format!("; kept as asked: {}", kept_files.join(", ")),
    };
    if left.is_empty() {
        let removed = match files.is_empty() {
            true => "",
            false => "; test files removed",
        };
        say!("{what}: {}{removed}{kept_files}", kept());
    } else {
        say!(
            "{what}: {}; could not remove {}; remove by hand",
            kept(),
            left.join(", ")
        );
    }
    // _exit, not exit: another thread may be inside a library (MPI) whose exit handlers would
    // hang or crash, and the watchdog may be exiting at the same moment.
    iogauge_engine::sys::exit_now(code);
}

/// Removes `path` if it is still the file that was created (a file that replaced it belongs
/// to someone else). True when nothing of ours is left there.
fn remove_if_ours(path: &Path, identity: Option<(u64, u64)>) -> bool {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Ok(m) if identity.is_some_and(|id| id != (m.dev(), m.ino())) => true,
        _ => match std::fs::remove_file(path) {
            Ok(()) => true,
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        },
    }
}
