//! Shell completions and the man page, generated from the one command-line definition
//! (issue 12): every subcommand and flag is in them, and the shells accept what is generated.

use std::process::Command;

use crate::common;
use common::*;

#[test]
fn completions_cover_every_command_and_parse_in_their_shell() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = iogauge(dir.path(), &["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr_of(&out));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // fish names a long flag `-l allow-overwrite`, the others `--allow-overwrite`.
        for word in ["suite", "compare", "report", "allow-overwrite", "dry-run"] {
            assert!(text.contains(word), "{shell} completions lack {word}");
        }
        // Each shell parses its own script without running it (bash -n, zsh -n, fish -n).
        if !have(shell) {
            skip(&format!("needs {shell} to parse its completions"));
            continue;
        }
        let script = dir.path().join(format!("iogauge.{shell}"));
        std::fs::write(&script, &text).unwrap();
        let check = Command::new(shell).arg("-n").arg(&script).output().unwrap();
        assert!(check.status.success(), "{shell} -n: {}", stderr_of(&check));
    }
    let out = iogauge(dir.path(), &["completions", "tcsh"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn the_man_page_documents_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(dir.path(), &["man"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(".TH iogauge 1"), "{text}");
    for word in ["run", "suite", "compare", "completions"] {
        assert!(text.contains(word), "man page lacks {word}");
    }
}

/// Issue 43, item 3: the top-level help names every database load, not only pgbench.
#[test]
fn the_help_names_every_database_load() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--help", "-h"] {
        let out = iogauge(dir.path(), &[flag]);
        assert!(out.status.success());
        // Words as wrapped at any width.
        let text = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for load in ["db pgbench", "db sysbench", "db tpcc"] {
            assert!(text.contains(load), "iogauge {flag} lacks {load}:\n{text}");
        }
    }
}

/// docs/findings.md has a row for every kind of finding the code can make (issue 23).
#[test]
fn every_finding_kind_is_documented() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/findings.md")).unwrap();
    for kind in iogauge_analyze::Kind::ALL {
        let row = format!("| `{}` |", kind.as_str());
        assert!(doc.contains(&row), "docs/findings.md has no row {row}");
    }
}
