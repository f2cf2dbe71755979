//! Prints what iogauge records about this machine and, optionally, a target path:
//! `cargo run -p iogauge-sysinfo --example capture -- /path/to/target`.
#![allow(clippy::disallowed_methods)] // a demo's own files; clippy.toml binds the program

fn main() {
    let target = std::env::args_os().nth(1).map(std::path::PathBuf::from);
    let info = iogauge_sysinfo::capture(target.as_deref());
    match serde_json::to_string_pretty(&info) {
        Ok(json) => println!("{json}"),
        Err(e) => eprintln!("cannot serialize: {e}"),
    }
}
