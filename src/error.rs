//! How iogauge fails: a usage error (exit 2) names what the user typed wrong and how to fix it;
//! anything else (exit 1) names the target and what the system said. Either is one line.

use std::fmt;

/// A problem with what the user asked for. Exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Builds a usage error: `bail!(usage(format!(...)))`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// The run was stopped by a signal; the process exits 128 + the signal number.
#[derive(Debug)]
pub struct Interrupted(pub i32);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interrupted by signal {}", self.0)
    }
}

impl std::error::Error for Interrupted {}

/// The exit code for an error from anywhere in iogauge.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<UsageError>().is_some() {
        2
    } else if let Some(Interrupted(sig)) = err.downcast_ref::<Interrupted>() {
        (128 + sig) as u8
    } else {
        1
    }
}

/// Prints a command-line error from clap as one line (help and version as they are) and
/// returns its exit code: 2 for usage errors, as clap itself uses.
pub fn clap_exit(e: clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return std::process::ExitCode::from(if e.use_stderr() { 2 } else { 0 });
    }
    let text = e.render().to_string();
    let line = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("For more information") && !l.starts_with("Usage:")
        })
        .collect::<Vec<_>>()
        .join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    say!("iogauge: error: {line} (see --help)");
    std::process::ExitCode::from(2)
}
