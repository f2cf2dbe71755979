//! The end-to-end tests that judge rates, latencies and CPU time against what the kernel
//! makes (a throttle, a busy loop, a frozen file system) and so need the machine quiet: one
//! binary, run after tests/main.rs's, whose files take the machine in turn and whose tests run
//! at most two at a time within a file (`common::quiet_turn`, which each takes first), as they
//! ran when each file was a binary of its own.
//!
//! Run one file's tests with `cargo test --test quiet regime::`.
// Fixtures are made with std::fs as a test likes (clippy.toml binds the program only).
#![allow(clippy::disallowed_methods)]

#[macro_use]
mod common;

mod advise;
mod complete_batch;
mod cpu_contention;
mod db_timeline;
mod fio_together;
mod ground_truth;
mod hugepages;
mod interference;
mod outlier_gap;
mod precision;
mod probe;
mod rate;
mod regime;
mod scaling;
mod stall;
mod until_stable;
