//! Signals and the files to remove whatever happens.
//!
//! SIGINT, SIGTERM and SIGHUP set a flag that every loop in iogauge looks at (workers between
//! completion batches, the fill between chunks), so the run stops within a second, keeps what
//! it measured, removes its test files and exits 128 + the signal. A second SIGINT means "now":
//! the signal thread removes the test files itself and exits at once.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;

static COUNT: AtomicUsize = AtomicUsize::new(0);
static FIRST: AtomicI32 = AtomicI32::new(0);
static CREATED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts the signal thread. Call once, early in main.
pub fn install() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        // Without the thread, signals keep their default action (terminate): the run is lost
        // but nothing is corrupted; say so rather than fail.
        eprintln!("warning: could not install signal handlers; an interrupt will not clean up");
        return;
    };
    std::thread::Builder::new()
        .name("iogauge-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
                let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                if n == 1 {
                    eprintln!("\ninterrupted: stopping, keeping what was measured (press Ctrl-C again to quit now)");
                } else if sig == SIGINT {
                    remove_created();
                    eprintln!("interrupted twice: quit without saving; test files removed");
                    std::process::exit(128 + SIGINT);
                }
            }
        })
        .ok();
}

/// The first signal received, if any.
#[inline]
pub fn requested() -> Option<i32> {
    match FIRST.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// Remembers a file this invocation created, so an emergency exit removes it.
pub fn register_created(path: &Path) {
    if let Ok(mut v) = CREATED.lock() {
        v.push(path.to_path_buf());
    }
}

/// Forgets a file once it has been removed (or is to be kept).
pub fn unregister_created(path: &Path) {
    if let Ok(mut v) = CREATED.lock() {
        v.retain(|p| p != path);
    }
}

fn remove_created() {
    if let Ok(v) = CREATED.lock() {
        for p in v.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
}
