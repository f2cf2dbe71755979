//! `iogauge completions SHELL` and `iogauge man`: both generated from the one clap definition
//! in `cli`, so they can never disagree with `--help`.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::usage;
use anyhow::Result;
use clap::CommandFactory;

pub fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "iogauge", &mut buf);
    Ok(crate::ui::out(&String::from_utf8_lossy(&buf))?)
}

/// One page on stdout (iogauge's, or a subcommand's with all its options), or every page
/// into a directory. A file there that is not an iogauge man page is never overwritten.
pub fn man(args: &ManArgs) -> Result<()> {
    let mut top = Cli::command().disable_help_subcommand(true);
    top.build();
    if let Some(dir) = &args.dir {
        crate::target::gate::output_dir(
            "--dir",
            dir,
            "give a directory for man pages, e.g. /usr/local/share/man/man1",
        )?;
        if !dir.is_dir() {
            return Err(usage(format!(
                "--dir {}: no such directory; create it first (e.g. mkdir -p {0})",
                dir.display()
            )));
        }
        let mut pages = Vec::new();
        pages_of(&top, &mut pages);
        for page in &pages {
            let path = dir.join(format!(
                "{}.1",
                page.get_display_name().unwrap_or(page.get_name())
            ));
            if let Ok(old) = std::fs::read(&path) {
                let ours = String::from_utf8_lossy(&old)
                    .lines()
                    .take(5)
                    .any(|l| l.starts_with(".TH iogauge"));
                if !ours {
                    return Err(usage(format!(
                        "{} exists and is not an iogauge man page; remove it or give another --dir",
                        path.display()
                    )));
                }
            }
        }
        for page in pages {
            let path = dir.join(format!(
                "{}.1",
                page.get_display_name().unwrap_or(page.get_name())
            ));
            let mut buf = Vec::new();
            page_of(page).render(&mut buf)?;
            crate::target::files::replace(&path, &buf)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        say!("wrote the iogauge man pages into {}", dir.display());
        return Ok(());
    }
    let mut cmd = top;
    for (i, name) in args.command.iter().enumerate() {
        let Some(sub) = cmd.find_subcommand(name).cloned() else {
            let known: Vec<&str> = cmd.get_subcommands().map(clap::Command::get_name).collect();
            return Err(usage(
                format!(
                    "iogauge {} has no subcommand {name}; it has {}",
                    args.command[..i].join(" "),
                    known.join(", ")
                )
                .replace("iogauge  has", "iogauge has"),
            ));
        };
        cmd = sub;
    }
    let mut buf = Vec::new();
    page_of(cmd).render(&mut buf)?;
    Ok(crate::ui::out(&String::from_utf8_lossy(&buf))?)
}

/// A command's page, every one saying iogauge's version (a subcommand has none of its own).
fn page_of(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(format!("iogauge {}", env!("CARGO_PKG_VERSION")))
}

/// A command and every subcommand below it, each a page.
fn pages_of(cmd: &clap::Command, out: &mut Vec<clap::Command>) {
    out.push(cmd.clone());
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages_of(sub, out);
    }
}
