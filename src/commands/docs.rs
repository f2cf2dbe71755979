//! `iogauge completions SHELL` and `iogauge man`: both generated from the one clap definition
//! in `cli`, so they can never disagree with `--help`.

use crate::cli::{Cli, CompletionsArgs};
use anyhow::Result;
use clap::CommandFactory;

pub fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "iogauge", &mut buf);
    Ok(crate::ui::out(&String::from_utf8_lossy(&buf))?)
}

pub fn man() -> Result<()> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    Ok(crate::ui::out(&String::from_utf8_lossy(&buf))?)
}
