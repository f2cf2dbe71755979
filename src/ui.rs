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

pub fn line(text: &str) {
    write_err(format_args!("{text}\n"));
}

pub fn part(text: &str) {
    write_err(format_args!("{text}"));
}

fn write_err(args: std::fmt::Arguments) {
    let mut err = std::io::stderr().lock();
    if let Err(e) = err.write_fmt(args).and_then(|()| err.flush()) {
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
