//! One module per subcommand; each takes its parsed arguments and returns an error or nothing.

pub mod run;
