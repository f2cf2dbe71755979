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

/// The width of the terminal stdout goes to, or `None` when it goes to a pipe or a file.
pub fn stdout_width() -> Option<usize> {
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| usize::from(cols))
}

/// The text as a terminal may show it: every byte a user reads passes here, and some of it
/// comes from elsewhere (a fio job's section names, stored paths and labels, a server's log),
/// where a terminal escape could retitle the window or rewrite what was printed before. Control
/// characters are shown escaped (`\u{1b}`), but for line ends, tabs, and iogauge's own one
/// sequence, erase-to-end-of-line after a carriage return (the fill's progress line).
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let harmless = |c: char| matches!(c, '\n' | '\t' | '\r') || !c.is_control();
    if text.chars().all(harmless) && !text.contains('\x1b') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with(ERASE_LINE) {
            out.push_str(ERASE_LINE);
            rest = &rest[ERASE_LINE.len()..];
            continue;
        }
        match harmless(c) {
            true => out.push(c),
            false => out.extend(c.escape_default()),
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Erase to the end of the line: the one terminal sequence iogauge writes itself.
pub const ERASE_LINE: &str = "\x1b[K";

/// One write per message, so mpirun never splices two ranks' lines together.
fn write_err(text: &str) {
    let text = terminal_safe(text);
    let mut err = std::io::stderr().lock();
    if let Err(e) = err.write_all(text.as_bytes()).and_then(|()| err.flush()) {
        closed(&e);
    }
}

/// Writes `text` to stdout. A closed stdout (`| head`) is not a failure of what was measured:
/// the run is asked to stop like on a signal, and the caller goes on cleaning up.
pub fn out(text: &str) -> std::io::Result<()> {
    let text = terminal_safe(text);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_not_obeyed_but_for_our_own() {
        assert_eq!(terminal_safe("plain\tline\n"), "plain\tline\n");
        assert_eq!(
            terminal_safe("[\x1b]0;pwned\x07]"),
            "[\\u{1b}]0;pwned\\u{7}]"
        );
        assert_eq!(
            terminal_safe("\rfill ... 50%\x1b[K"),
            "\rfill ... 50%\x1b[K"
        );
    }
}
