//! Helpers shared by the end-to-end tests: run the binary in a test's own directory (with its
//! own results database) and read what it printed.

// Each test crate uses its own subset.
#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_iogauge");

/// Runs iogauge in `dir`, with `dir/results.db` as its results database.
pub fn iogauge(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("IOGAUGE_DB", dir.join("results.db"))
        .output()
        .expect("run iogauge")
}

/// The JSON iogauge printed on stdout; fails the test if it failed or printed something else.
pub fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "iogauge failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A JSON number.
pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
