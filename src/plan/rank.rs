//! `run` as one rank of a run on many hosts (under MPI): this rank's target from the
//! placeholders, and what such a run does not support, refused alike on every rank.

use super::*;

/// The plan of rank `rank` of `size` on `host`: `{host}`, `{rank}` and `{size}` in the target
/// made this rank's; nothing stored or printed by the rank itself (rank 0 stores and prints the
/// combined run), progress on rank 0's terminal only.
pub fn from_run_rank(args: &RunArgs, rank: u32, size: u32, host: &str) -> Result<Plan> {
    refuse_unsupported(args)?;
    let mut mine = args.clone();
    if let Some(t) = &mine.target.target {
        let p = placeholders(&t.to_string_lossy(), host, rank, size);
        mine.target.target = Some(p.into());
    }
    mine.output.no_store = true;
    // Every rank's messages carry its host; only rank 0 shows progress.
    mine.output.json = rank != 0 || args.output.json;
    let mut plan = of_run(&mine, true)?;
    // Ranks on one shared file system never pick one name for their test files.
    plan.target.name_tag = Some(format!("{host}.{rank}"));
    // Rank 0 merges every rank's intervals into the cluster's percentiles over time.
    plan.env.interval_hists = true;
    Ok(plan)
}

/// `{host}`, `{rank}` and `{size}` in a target path, this rank's.
pub fn placeholders(path: &str, host: &str, rank: u32, size: u32) -> String {
    path.replace("{host}", host)
        .replace("{rank}", &rank.to_string())
        .replace("{size}", &size.to_string())
}

/// What rank 0 does with the run once combined, and how the ranks stop a --data cell.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub struct Launch {
    /// Store the combined run (rank 0), in this results database.
    pub store: bool,
    pub db: Option<std::path::PathBuf>,
    /// `--stonewall first`.
    pub stonewall_first: bool,
}

/// What rank 0 does with the combined run, from the command line.
pub fn launch(args: &RunArgs) -> Launch {
    Launch {
        store: !args.output.no_store,
        db: args.output.db.db.clone(),
        stonewall_first: args.workload.stonewall == Some(crate::cli::Stonewall::First),
    }
}

/// What a run under MPI does not support yet, refused on every rank before anything runs.
fn refuse_unsupported(args: &RunArgs) -> Result<()> {
    let o = &args.output;
    let no = |what: &str, why: &str| Err(usage(format!("under MPI, {what} {why}")));
    if args.repeat.repeat.is_some_and(|n| n > 1) {
        return no(
            "--repeat",
            "is not supported yet: each rank measures once; repeat the mpirun",
        );
    }
    if args.workload.latency_target.is_some() || args.repeat.until_change.is_some() {
        return no(
            "--latency-target and --until-change",
            "would stop each rank at its own time; give --time or --data",
        );
    }
    if o.dry_run {
        return no(
            "--dry-run",
            "is not supported: run it without mpirun on one host",
        );
    }
    if o.output.is_some() {
        return no(
            "-o/--output",
            "is not supported yet: rank 0 stores the run; use iogauge export afterwards",
        );
    }
    Ok(())
}
