//! iogauge: a storage benchmark workbench for database servers.
//!
//! The map: parse the command line (`cli`), dispatch to a command (`commands`), print any error
//! as one line and exit with its code (2 usage, 1 failure, 128+N interrupted, 101 a bug).
//!
//! Every command that measures goes one way: its arguments become a checked plan (`plan`, the
//! last place that reads clap's types; `db::plan` for the database commands), a feature runs
//! it and returns a document (`exec` for run, suite, fio and probe; `db`, `sweep`, `fleet`;
//! `compare` over stored runs), and `present` writes every byte the user reads of it. Below
//! them: `target` (the only code that looks at a target), `runner` and `crates/engine` (the IO),
//! `analysis` and `crates/analyze` (findings), `store` (SQLite), `model` (the documents).

// Tests make their fixtures with std::fs as they like; the program itself creates files only
// through target::files (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

#[macro_use]
mod ui;
mod analysis;
mod cli;
mod commands;
mod compare;
mod db;
mod error;
mod exec;
mod fio;
mod fleet;
mod fsync_check;
mod interrupt;
mod ledger;
mod matching;
mod measure;
mod model;
mod plan;
mod present;
mod repeats;
mod report;
mod runner;
mod store;
mod suite;
mod sweep;
mod target;
mod units;
mod workload;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return error::clap_exit(e, suite::names()),
    };
    units::set_si_bandwidth(cli.bandwidth_units == cli::BandwidthUnits::Si);
    interrupt::install();
    // Device settings a killed sweep left changed are put back before anything else runs.
    sweep::recover();
    // What a killed run left (test files, mounts, clusters) is named, except by `clean` itself,
    // which lists it anyway.
    if !matches!(cli.command, cli::Command::Clean(_)) {
        ledger::announce(&commands::clean::kinds());
    }
    // Lets tests check what a bug looks like to the user; not compiled into release builds.
    #[cfg(debug_assertions)]
    if std::env::var_os("IOGAUGE_DEBUG_PANIC").is_some_and(|v| v == "main") {
        panic!("IOGAUGE_DEBUG_PANIC=main");
    }
    // Under mpirun every command but `run` would run once per rank, each on its own.
    if let Err(e) = fleet::only_run(matches!(cli.command, cli::Command::Run(_))) {
        say!("iogauge: error: {e:#}");
        return ExitCode::from(error::exit_code(&e));
    }
    let result = match &cli.command {
        cli::Command::Run(args) => commands::run::run(args),
        cli::Command::Suite(args) => commands::suite::run(args),
        cli::Command::Fio(args) => commands::fio::run(args),
        cli::Command::List(args) => commands::results::list(args),
        cli::Command::Show(args) => commands::results::show(args),
        cli::Command::Compare(args) => commands::results::compare(args),
        cli::Command::Export(args) => commands::results::export(args),
        cli::Command::Import(args) => commands::results::import(args),
        cli::Command::Delete(args) => commands::results::delete(args),
        cli::Command::Verify(args) => commands::verify::verify(args),
        cli::Command::Sweep(args) => commands::sweep::sweep(args),
        cli::Command::Report(args) => commands::report::run(args),
        cli::Command::Probe(cli::ProbeCommand::Cache(args)) => commands::probe::cache(args),
        cli::Command::Completions(args) => commands::docs::completions(args),
        cli::Command::Man(args) => commands::docs::man(args),
        cli::Command::Db(cli::DbCommand::Pgbench(args)) => commands::db::pgbench(args),
        cli::Command::Db(cli::DbCommand::Sysbench(args)) => commands::db::sysbench(args),
        cli::Command::Db(cli::DbCommand::Tpcc(args)) => commands::db::tpcc(args),
        cli::Command::Db(cli::DbCommand::TpccCheck(args)) => commands::db::tpcc_check(args),
        cli::Command::Db(cli::DbCommand::Advise(args)) => commands::db::advise(args),
        cli::Command::FsyncCheck(args) => commands::fsync_check::run(args),
        cli::Command::Clean(args) => commands::clean::clean(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.downcast_ref::<error::Interrupted>().is_none() {
                say!("iogauge: error: {e:#}");
            }
            ExitCode::from(error::exit_code(&e))
        }
    }
}

/// A bug shows as one line that says it is one, instead of Rust's panic message and backtrace
/// note. Unwinding still runs, so test files are removed; a panic in a worker also becomes the
/// run's error (see `runner`).
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("panic")
            .replace('\n', " ");
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        say!("iogauge: internal error: {what}{at} — this is a bug; please report it");
    }));
}
