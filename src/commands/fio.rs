//! `iogauge fio`: fio job files as a suite of cells, told first what each job really measures.

use crate::cli::FioArgs;
use anyhow::Result;

pub fn run(args: &FioArgs) -> Result<()> {
    let plan = crate::plan::from_fio(args)?;
    crate::ui::part(&crate::present::plan_notes(&plan.notes));
    crate::commands::execute(&plan)
}
