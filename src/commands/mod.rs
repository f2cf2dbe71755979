//! One module per subcommand; each takes its parsed arguments and returns an error or nothing.

pub mod clean;
pub mod db;
pub mod docs;
pub mod fio;
pub mod fsync_check;
pub mod probe;
pub mod report;
pub mod results;
pub mod run;
pub mod suite;
pub mod sweep;
pub mod verify;
