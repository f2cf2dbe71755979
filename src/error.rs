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

/// The known name most like a misspelled one, and how alike they are (0 to 1): Jaro–Winkler,
/// which weighs a shared start and forgives a swapped pair (`qiuck`), like clap's own
/// suggestions for subcommands and flags. `None` only when there are no names.
pub fn nearest<'a>(
    typed: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Option<(&'a str, f64)> {
    names
        .into_iter()
        .map(|n| (n, strsim::jaro_winkler(typed, n)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// How alike a name must be to be offered unasked ("did you mean"); below it a suggestion is
/// more often wrong than right.
pub const ALIKE: f64 = 0.8;

/// The known name to offer for a misspelled one, if one is alike enough.
pub fn did_you_mean<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    nearest(typed, names)
        .filter(|(_, s)| *s >= ALIKE)
        .map(|(n, _)| n)
}

/// What a command takes instead of another command's option typed to it: a suite (or a sweep
/// of one) its lists, `run` its single values.
fn hint_for(command: &str, typed: &str) -> Option<&'static str> {
    let flag = typed.split('=').next().unwrap_or(typed);
    Some(match (command, flag) {
        ("suite" | "sweep", "--time") => "a suite times each cell with --cell-time DURATION",
        ("suite" | "sweep", "--data") => "a suite's cells are timed: --cell-time DURATION, or a suite file for cells of fixed data",
        ("suite" | "sweep", "--bs") => "a suite takes its block sizes as a list: --sizes 4k,64k",
        ("suite" | "sweep", "--iodepth") => "a suite takes its queue depths as a list: --qd 1,16",
        ("suite" | "sweep", "--mix") => "a suite takes its read shares as a list: --read-pct 70,90",
        ("suite" | "sweep", "--rw") => "a suite's cells name their own patterns; `iogauge run --rw …` runs one workload",
        ("run", "--cell-time") => "a run is one cell: --time DURATION",
        ("run", "--sizes") => "a run has one block size: --bs 4k (`iogauge suite matrix --sizes …` runs several)",
        ("run", "--qd") => "a run has one queue depth: --iodepth N",
        ("run", "--read-pct") => "a run's read share is --mix PCT (with --rw randrw or rw)",
        _ => return None,
    })
}

/// Prints a command-line error from clap as one line (help and version as they are) and
/// returns its exit code: 2 for usage errors, as clap itself uses. `suites` are the built-in
/// suites' names, offered when one is typed as a command.
pub fn clap_exit(
    e: clap::Error,
    suites: impl IntoIterator<Item = &'static str>,
) -> std::process::ExitCode {
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
    // An option of another command: say which of this one's does that, not clap's nearest
    // spelling (`suite --time` is not `-- --time`, `--iodepth` is not `--sizes`).
    if e.kind() == ErrorKind::UnknownArgument {
        let typed = e
            .get(clap::error::ContextKind::InvalidArg)
            .map(|v| v.to_string());
        let command = std::env::args().nth(1).unwrap_or_default();
        if let Some(hint) = typed.as_deref().and_then(|t| hint_for(&command, t)) {
            let flag = typed.as_deref().unwrap_or_default();
            say!("iogauge: error: {command} has no {flag}: {hint} (see iogauge {command} --help)");
            return std::process::ExitCode::from(2);
        }
    }
    // A suite's name typed as a command (`iogauge qiuck`, `iogauge matrix /data`): clap knows
    // no command like it, but the user meant `iogauge suite NAME`.
    if e.kind() == ErrorKind::InvalidSubcommand
        && e.get(clap::error::ContextKind::SuggestedSubcommand)
            .is_none()
    {
        let typed = e
            .get(clap::error::ContextKind::InvalidSubcommand)
            .map(|v| v.to_string());
        let top = std::env::args().nth(1);
        if let Some(suite) = typed
            .as_deref()
            .filter(|t| Some(*t) == top.as_deref())
            .and_then(|t| did_you_mean(t, suites))
        {
            let typed = crate::units::quoted(typed.as_deref().unwrap_or_default(), 60);
            say!("iogauge: error: there is no command '{typed}'; did you mean `iogauge suite {suite}`? (see --help)");
            return std::process::ExitCode::from(2);
        }
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
