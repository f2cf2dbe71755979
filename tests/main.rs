//! iogauge's end-to-end tests that share the machine: one test binary, each file below a
//! module of it, so the tests of every file run beside each other (RUST_TEST_THREADS in
//! .cargo/config.toml). Most of them wait on devices, servers and guests, not on a CPU, and
//! `cargo test` runs test binaries one after another: one binary per file left the machine idle
//! most of the time. The tests that judge rates and CPU time are in tests/quiet.rs.
//!
//! Run one file's tests with `cargo test --test e2e readme::`.
// Fixtures are made with std::fs as a test likes (clippy.toml binds the program only).
#![allow(clippy::disallowed_methods)]

#[macro_use]
mod common;

mod arrays;
mod atomic;
mod ci_budget;
mod consent;
mod db;
mod db_advise;
mod db_sysbench;
mod db_tpcc;
mod devices;
mod docs;
mod fill;
mod fio;
mod fio_content;
mod fio_keys;
mod fio_pace;
mod fio_place;
mod fio_prio;
mod fio_zones;
mod fsync_check;
mod gate;
mod guest;
mod input;
mod layers;
mod package;
mod placement;
mod readme;
mod report;
mod run;
mod safety;
mod snia;
mod stack;
mod store;
mod streams;
mod suite;
mod sweep;
mod targets;
mod user;
mod verify;
