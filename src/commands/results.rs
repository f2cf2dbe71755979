//! `iogauge list`, `show`, `compare`, `export` and `delete`: the results store from the command
//! line.

use crate::cli::{CompareArgs, DeleteArgs, ExportArgs, ListArgs, ShowArgs};
use anyhow::Result;

fn not_yet() -> Result<()> {
    Err(crate::error::usage("the results store is being built"))
}

pub fn list(_args: &ListArgs) -> Result<()> {
    not_yet()
}

pub fn show(_args: &ShowArgs) -> Result<()> {
    not_yet()
}

pub fn compare(_args: &CompareArgs) -> Result<()> {
    not_yet()
}

pub fn export(_args: &ExportArgs) -> Result<()> {
    not_yet()
}

pub fn delete(_args: &DeleteArgs) -> Result<()> {
    not_yet()
}
