//! MariaDB's settings as iogauge handles them: the options it owns and refuses from the user
//! under any spelling mariadbd takes, how a typed name is read, and a refusal in the server's
//! error log turned into one line naming the setting.

use crate::error::usage;

/// Options iogauge gives mariadbd to keep it private and its files in its own directory, and
/// extra_port (a second TCP listener); a --db-setting may not change them, under any spelling
/// mariadbd takes ([`owns`]).
pub const OWN_SETTINGS: [&str; 12] = [
    "tmpdir",
    "datadir",
    "socket",
    "skip_networking",
    "port",
    "bind_address",
    "pid_file",
    "log_error",
    "user",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "extra_port",
];
/// The prefixes mariadbd's option parser (my_getopt) strips from a name it does not know
/// before looking again: `loose-` (ignore if unknown), `skip-` and `disable-` (set off),
/// `enable-` (set on), `maximum-` (the session's cap), `autoset-` (automatic value); and
/// `plugin-`, under which a plugin's options (InnoDB's) are known too.
const SPECIAL_PREFIXES: [&str; 7] = [
    "loose_", "skip_", "disable_", "enable_", "maximum_", "autoset_", "plugin_",
];

/// A --db-setting name as mariadbd reads it: `-` and `_` are the same, and iogauge lower-cases
/// it (mariadbd's own names are lower case). `None` when it is not an option's name at all.
pub fn setting_name(typed: &str) -> Option<String> {
    let k = typed
        .trim_start_matches("--")
        .to_ascii_lowercase()
        .replace('-', "_");
    let ok = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.');
    ok.then_some(k)
}

/// Whether the setting `name` (as [`setting_name`] gives it) would reach one of
/// [`OWN_SETTINGS`] in mariadbd: its name or what is left after stripping any of the
/// [`SPECIAL_PREFIXES`] (one after another, in any order), equal to an own setting or a
/// prefix of one (mariadbd takes a unique prefix for the whole name: `skip_networkin`).
/// Conservative: a prefix shared with other options, which mariadbd would call ambiguous, is
/// refused all the same.
pub fn owns(name: &str) -> bool {
    let mut names = vec![name];
    let mut i = 0;
    while let Some(n) = names.get(i).copied() {
        for p in SPECIAL_PREFIXES {
            if let Some(rest) = n.strip_prefix(p) {
                names.push(rest);
            }
        }
        i += 1;
    }
    names
        .iter()
        .any(|n| OWN_SETTINGS.iter().any(|own| own.starts_with(n)))
}

/// The user's setting the server refused, as a usage error quoting the server: the first
/// `[ERROR]` line naming one of `asked` (`unknown variable 'no-such=1'`, `Error while setting
/// value 'abc' to 'innodb-buffer-pool-size'`). mariadbd writes names with `-` or `_` as given.
pub(super) fn refused_setting(said: &str, asked: &[(String, String)]) -> Option<anyhow::Error> {
    let (line, (k, v)) = said.lines().find_map(|l| {
        let (_, msg) = l.split_once("[ERROR] ")?;
        let norm = msg.replace('_', "-");
        asked
            .iter()
            .find(|(k, _)| norm.contains(&format!("'{}", k.replace('_', "-"))))
            .map(|kv| (msg, kv))
    })?;
    let todo = match line.contains("unknown variable") || line.contains("unknown option") {
        true => format!("check the name (mariadbd --verbose --help lists them) or leave out {k}"),
        false => format!("give a value it takes (SHOW GLOBAL VARIABLES LIKE '{k}' shows its form) or leave it out"),
    };
    Some(usage(format!(
        "the MariaDB server refused --db-setting {k}={v}: {}; {todo}",
        line.trim()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_setting_is_quoted_from_the_error_line() {
        let log = "2026-11-22 22:07:25 0 [Note] Starting\n2026-11-22 22:07:25 0 [ERROR] mariadbd: unknown variable 'no-such-setting=1'\n2026-11-22 22:07:25 0 [ERROR] Aborting\n";
        let asked = [("no_such_setting".to_string(), "1".to_string())];
        let e = refused_setting(log, &asked).unwrap().to_string();
        assert_eq!(
            e,
            "the MariaDB server refused --db-setting no_such_setting=1: mariadbd: unknown variable 'no-such-setting=1'; check the name (mariadbd --verbose --help lists them) or leave out no_such_setting"
        );
        let log = "0 [ERROR] Unknown suffix 'a' used for variable 'innodb-buffer-pool-size' (value 'abc'). Legal suffix characters are: K, M, G, T, P, E\n";
        let asked = [("innodb_buffer_pool_size".to_string(), "abc".to_string())];
        let e = refused_setting(log, &asked).unwrap().to_string();
        assert!(e.contains("Unknown suffix 'a'"), "{e}");
        assert!(e.contains("give a value it takes"), "{e}");
        // A failure that names none of the user's settings is not theirs to fix.
        assert!(refused_setting("0 [ERROR] Aborting", &asked).is_none());
    }

    #[test]
    fn an_own_setting_is_known_under_every_spelling_mariadbd_takes() {
        let own = |typed: &str| owns(&setting_name(typed).unwrap());
        for typed in [
            "skip_networking",
            "skip-networking",
            "--skip-networking",
            "Skip_Networking",
            "skip_networkin",
            "skip_net",
            "loose_skip_networking",
            "loose-skip-networking",
            "disable_skip_networking",
            "enable_skip_networking",
            "loose_disable_skip_networking",
            "maximum_port",
            "autoset_port",
            "loose_socket",
            "sock",
            "bind_address",
            "bind",
            "loose_bind_address",
            "po",
            "extra_port",
            "loose_extra_port",
            "datadir",
            "loose_innodb_log_group_home_dir",
            "plugin_innodb_data_home_dir",
            "user",
        ] {
            assert!(own(typed), "{typed} is not refused");
        }
        // Near misses: options of their own, which mariadbd does not take for an own one.
        for typed in [
            "skip_name_resolve",
            "innodb_buffer_pool_size",
            "innodb_log_file_size",
            "innodb-flush-method",
            "loose_innodb_flush_log_at_trx_commit",
            "port_open_timeout",
            "sync_binlog",
            "skip_log_bin",
            "max_connections",
        ] {
            assert!(!own(typed), "{typed} is refused");
        }
        assert!(setting_name("a b").is_none());
        assert!(setting_name("x;y").is_none());
    }
}
