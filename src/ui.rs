//! Messages to the user on stderr, and what a closed pipe means.
//!
//! `eprintln!` panics when stderr is gone (`iogauge suite quick 2>&1 | head -2`), which turned
//! a closed pipe into an abort that left the test file behind. Every message goes through
//! [`say`] instead: a write that fails with EPIPE asks the run to stop, as a signal would
//! (SIGPIPE itself is ignored by Rust programs, so EPIPE is what arrives), and the run then
//! stores what it measured and removes its files on the normal path.

use std::io::Write;

/// Writes one line to stderr; never panics. In scope everywhere in the crate, called bare
/// (`#[macro_use] mod ui;` comes first in main.rs).
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::ui::line(&format!($($arg)*))
    };
}

/// Writes to stderr without a newline (a line a later message completes); never panics.
macro_rules! say_part {
    ($($arg:tt)*) => {
        $crate::ui::part(&format!($($arg)*))
    };
}

/// Under MPI, every message of a rank starts with its host and rank: mpirun interleaves the
/// ranks' stderr into one.
static LABEL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn label(who: String) {
    let _ = LABEL.set(who);
}

pub fn line(text: &str) {
    match LABEL.get() {
        Some(who) => write_err(&format!("{who}: {text}\n")),
        None => write_err(&format!("{text}\n")),
    }
}

pub fn part(text: &str) {
    match LABEL.get() {
        Some(who) => write_err(&format!("{who}: {text}")),
        None => write_err(text),
    }
}

/// One write per message, so mpirun never splices two ranks' lines together.
fn write_err(text: &str) {
    let mut err = std::io::stderr().lock();
    if let Err(e) = err.write_all(text.as_bytes()).and_then(|()| err.flush()) {
        closed(&e);
    }
}

/// Writes `text` to stdout. A closed stdout (`| head`) is not a failure of what was measured:
/// the run is asked to stop like on a signal, and the caller goes on cleaning up.
pub fn out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            closed(&e);
            Ok(())
        }
        r => r,
    }
}

fn closed(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        crate::interrupt::raise(libc::SIGPIPE);
    }
}
