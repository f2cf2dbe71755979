//! PostgreSQL's settings as iogauge handles them: the ones it owns and refuses from the user,
//! how a typed name is read, the configuration file it writes, and a refusal in the server's
//! log turned into one line naming the setting.

use super::Dir;
use super::Owner;
use anyhow::{Context, Result};

/// Settings iogauge owns: to keep the server private (no TCP, its socket where iogauge put
/// it and no one else's, no other configuration file read) and to read its checkpoints from
/// its log. A --pg-setting may not give them ([`owns`]).
pub const OWN_SETTINGS: [&str; 16] = [
    "listen_addresses",
    "unix_socket_directories",
    "unix_socket_permissions",
    "unix_socket_group",
    "port",
    "include",
    "include_dir",
    "include_if_exists",
    "data_directory",
    "config_file",
    "hba_file",
    "ident_file",
    "external_pid_file",
    "log_checkpoints",
    "log_timezone",
    "log_directory",
];

/// A --pg-setting name as PostgreSQL reads it from a configuration file: case does not count.
/// `None` unless it is a name (`shared_buffers`, an extension's `auto_explain.log_min_duration`):
/// it is written into iogauge.conf as it stands, and anything else there (a space, a newline,
/// a quote) could put a second setting on the line or the next.
pub fn setting_name(typed: &str) -> Option<String> {
    let k = typed.to_ascii_lowercase();
    let ident = |p: &str| {
        let mut b = p.bytes();
        b.next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == b'_' || c >= 0x80)
            && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'$')
    };
    let ok = match k.split_once('.') {
        Some((a, b)) => ident(a) && ident(b),
        None => ident(&k),
    };
    ok.then_some(k)
}

/// Whether the setting `name` (as [`setting_name`] gives it) is one of [`OWN_SETTINGS`].
/// PostgreSQL takes no abbreviation and no prefix of a name; on its command line `-` stands
/// for `_`, so that is the same name here too.
pub fn owns(name: &str) -> bool {
    let n = name.replace('-', "_");
    OWN_SETTINGS.contains(&n.as_str())
}

/// `v` as a quoted string of a PostgreSQL configuration file: a quote doubled, and a backslash
/// too (the file's strings take backslash escapes), so the server reads back `v` itself.
pub(super) fn conf_string(v: &str) -> String {
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''"))
}

/// Points initdb's postgresql.conf at iogauge's own file, which comes last (later lines win)
/// and is rewritten before each start. The old file is read only as the server's user's own,
/// then replaced by a new one iogauge creates: never written through a link.
pub(super) fn include_own_conf(data: &Dir, owner: &Owner) -> Result<()> {
    use std::io::Write;
    let mut text = data.read_servers("postgresql.conf", owner)?;
    text.push_str("\n# iogauge: the settings of this run\ninclude_if_exists = 'iogauge.conf'\n");
    let mut f = data.replace("postgresql.conf", Some(owner))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", data.path().join("postgresql.conf").display()))
}

/// Writes iogauge.conf anew in the data directory, the server's user's (it reads it).
pub(super) fn write_conf(data: &Dir, owner: &Owner, text: &str) -> Result<()> {
    use std::io::Write;
    let mut f = data.replace("iogauge.conf", Some(owner))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", data.path().join("iogauge.conf").display()))
}

/// The messages of a server log, without the prefix that dates them (`%m [%p] `): from the
/// severity on (`FATAL:  …`), one per line.
pub(super) fn server_said(log: &str) -> Vec<String> {
    const LEVELS: [&str; 6] = ["FATAL:", "PANIC:", "ERROR:", "LOG:", "DETAIL:", "HINT:"];
    log.lines()
        .filter_map(|l| {
            let at = LEVELS.iter().filter_map(|lv| l.find(lv)).min()?;
            Some(l[at..].split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect()
}

/// The user's setting the server refused, as a usage error quoting the server: a line of its
/// log that names one of `asked` in quotes (`invalid value for parameter "shared_buffers":
/// "abc"`, `unrecognized configuration parameter "x"`), with the DETAIL or HINT after it.
pub(super) fn refused_setting(
    log: &str,
    asked: &[(String, String)],
    flag: &str,
) -> Option<anyhow::Error> {
    let said = server_said(log);
    let (at, (k, v)) = said.iter().enumerate().find_map(|(i, l)| {
        asked
            .iter()
            .find(|(k, _)| l.contains(&format!("\"{k}\"")))
            .map(|kv| (i, kv))
    })?;
    // The configuration file it names is iogauge's, and gone with the cluster: not quoted.
    let first = said[at].trim_start_matches("LOG: ");
    let first = first.split(" in file \"").next().unwrap_or(first);
    let mut quote = vec![first];
    quote.extend(
        said[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("DETAIL:") || l.starts_with("HINT:"))
            .map(String::as_str),
    );
    let todo = match first.contains("unrecognized configuration parameter") {
        true => format!("check the name (psql: SELECT name FROM pg_settings) or leave out {k}"),
        false => format!("give a value it takes (psql: SHOW {k} shows its form) or leave it out"),
    };
    Some(crate::error::usage(format!(
        "the PostgreSQL server refused {flag} {k}={v}: {}; {todo}",
        quote.join(" | ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_own_setting_is_refused_and_a_name_is_only_a_name() {
        // Refused: not a name, or one of iogauge's.
        let own = |typed: &str| setting_name(typed).is_none_or(|k| owns(&k));
        for typed in [
            "listen_addresses",
            "LISTEN_ADDRESSES",
            "port",
            "unix_socket_directories",
            "unix_socket_permissions",
            "unix-socket-permissions",
            "include",
            "include_dir",
            "include_if_exists",
            "data_directory",
            "config_file",
            "hba_file",
            "ident_file",
            "log_checkpoints",
        ] {
            assert!(own(typed), "{typed} is not refused");
        }
        for typed in [
            "shared_buffers",
            "synchronous_commit",
            "port_x",
            "auto_explain.log_min_duration",
        ] {
            assert!(!own(typed), "{typed} is refused");
        }
        for typed in [
            "work_mem 1MB\nlisten_addresses",
            "a b",
            "a=b",
            "'x'",
            "a.b.c",
            "",
        ] {
            assert!(setting_name(typed).is_none(), "{typed:?} is a name");
        }
        assert_eq!(conf_string("it's a\\b"), "'it''s a\\\\b'");
    }

    #[test]
    fn a_refused_setting_is_quoted_without_the_log_prefix_or_the_file() {
        let log = "2026-11-22 21:22:38.846 UTC [19783] LOG:  invalid value for parameter \"shared_buffers\": \"abc\"\n2026-11-22 21:22:38.846 UTC [19783] FATAL:  configuration file \"/x/iogauge.conf\" contains errors\n";
        let asked = [("shared_buffers".to_string(), "abc".to_string())];
        let e = refused_setting(log, &asked, "--pg-setting")
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("the PostgreSQL server refused --pg-setting shared_buffers=abc: invalid value for parameter \"shared_buffers\": \"abc\"; give a value"),
            "{e}"
        );
        let log = "2026-11-22 LOG:  unrecognized configuration parameter \"nosuch\" in file \"/x/iogauge.conf\" line 2\n";
        let asked = [("nosuch".to_string(), "1".to_string())];
        let e = refused_setting(log, &asked, "--pg-setting")
            .unwrap()
            .to_string();
        assert!(!e.contains("iogauge.conf"), "{e}");
        assert!(e.contains("check the name"), "{e}");
        // A failure that names none of the user's settings is not theirs to fix.
        assert!(refused_setting("FATAL:  could not bind", &asked, "--pg-setting").is_none());
    }
}
