//! Issue 43: README's examples are run as a reader types them, and what README shows of their
//! output is checked against what they print, so README cannot drift from the tool.
//!
//! The commands are read from README itself, every line of its `sh` and `console` blocks, so a
//! new example is run without anyone adding it here. Each is given to bash as written, changed
//! only in three ways:
//! - placeholders get real targets: `/data` a directory of the test's, `/dev/nvme0n1` and
//!   `/dev/sdb`… RAM loop devices (in the guest, its virtio disks), `OTHER:5400` the listener's
//!   address, `sweep:ID` the sweep just run, paths under /etc and /usr a root of the test's;
//! - times and sizes are shortened (`--time`, `--cell-time`, `--size`, `--scale`…), so README
//!   runs in minutes;
//! - the commands that cannot run in a test on one machine are listed in [`NOT_HERE`] with the
//!   reason and where they do run.
//!
//! Under a `console` block's command, README shows what it prints; its shape — the words of
//! each line, in order, without the numbers, units, names and timestamps a run makes — must be
//! in what the command printed here. What follows `findings:` depends on the machine and is not
//! compared.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};

use crate::common;
use common::*;

const README: &str = include_str!("../README.md");

/// README commands not run by these tests, by how they start, and why.
const NOT_HERE: &[(&str, &str)] = &[
    ("cargo test", "the tests themselves"),
    (
        "cargo install",
        "cargo's own command (a second release build); the binary it installs is the one run here",
    ),
    (
        "packaging/build-static",
        ".ci/run builds it beside the tests, before tests/package.rs runs what it built",
    ),
    (
        "packaging/build-deb",
        ".ci/run builds it beside the tests, before tests/package.rs installs and runs it",
    ),
    (
        "mpirun",
        "needs the MPI build and three hosts; tests/fleet.rs runs `run` under mpirun with --features mpi",
    ),
];

/// A command as README shows it, and the lines README shows under it (console blocks only).
#[derive(Debug)]
struct Example {
    line: String,
    shown: Vec<String>,
    /// From a `console` block: README shows it as run, so a `run` keeps its time and size
    /// (they are short already, and an over-time line needs whole seconds).
    console: bool,
}

/// Where a README command runs.
#[derive(Debug, PartialEq)]
enum Place {
    /// In [`readme_examples_run_and_print_what_readme_shows`], in README's order.
    Host,
    /// A suite of README's `sh` blocks, which no later command reads:
    /// [`readme_suites_run`], beside the others.
    HostSuite,
    /// A database load: [`readme_database_examples_run`].
    Database,
    /// An md or LVM sweep: [`readme_array_examples_run_in_the_guest`].
    Guest,
    /// A database load on md or LVM arrays: [`readme_database_on_arrays_runs_in_the_guest`].
    GuestDatabase,
    NotHere(&'static str),
}

fn place(line: &str) -> Place {
    if let Some((_, why)) = NOT_HERE.iter().find(|(start, _)| line.starts_with(start)) {
        Place::NotHere(why)
    } else if line.contains("--layout md:") || line.contains("--layout lvm:") {
        match line.starts_with("iogauge db ") {
            true => Place::GuestDatabase,
            false => Place::Guest,
        }
    } else if line.starts_with("iogauge db ") {
        Place::Database
    } else if line.starts_with("iogauge suite ") && !line.contains("--label") {
        Place::HostSuite
    } else {
        Place::Host
    }
}

/// Every command of README's `sh` and `console` blocks, in order.
fn examples() -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut fence: Option<&str> = None;
    for l in README.lines() {
        if let Some(info) = l.strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim()),
                Some(_) => None,
            };
            continue;
        }
        let command = match fence {
            Some("sh") => Some(l),
            Some("console") => match l.strip_prefix("$ ") {
                Some(c) => Some(c),
                None => {
                    if let Some(last) = out.last_mut() {
                        last.shown.push(l.to_string());
                    }
                    None
                }
            },
            _ => None,
        };
        if let Some(c) = command.map(without_comment).filter(|c| !c.is_empty()) {
            // README's words for "what cargo builds" stand for the binary.
            let line = c.replace("cargo run --release --", "iogauge");
            out.push(Example {
                line,
                shown: Vec::new(),
                console: fence == Some("console"),
            });
        }
    }
    out
}

/// The command before a shell comment (a `#` that starts a word).
fn without_comment(line: &str) -> String {
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        if c == '#' && prev.is_whitespace() {
            return line[..i].trim().to_string();
        }
        prev = c;
    }
    line.trim().to_string()
}

#[test]
fn every_readme_command_has_a_place_and_every_exception_is_still_in_readme() {
    let all = examples();
    assert!(all.len() > 40, "README's examples were not found: {all:?}");
    for (start, _) in NOT_HERE {
        assert!(
            all.iter().any(|e| e.line.starts_with(start)),
            "NOT_HERE names `{start}`, which README no longer shows"
        );
    }
    for e in &all {
        if !matches!(place(&e.line), Place::NotHere(_)) {
            assert!(
                e.line.starts_with("iogauge "),
                "README shows `{}`, which these tests would not run: run it or add it to NOT_HERE",
                e.line
            );
        }
    }
    // Each console block shows output under at least one command, and each is checked.
    assert!(all.iter().filter(|e| !e.shown.is_empty()).count() >= 4);
}

// ---- what README shows, as words -----------------------------------------------------------

/// Units that follow a number; dropped with it.
const UNITS: &[&str] = &[
    "ns", "µs", "us", "ms", "s", "B", "KiB", "MiB", "GiB", "TiB", "KiB/s", "MiB/s", "GiB/s",
    "kB/s", "MB/s", "GB/s",
];

/// Lines whose words after the first the machine makes: the devices' own counts.
const MACHINE_MADE: &[&str] = &["device"];

/// Words that are a result, not a label: a comparison's verdict, and which cell won a
/// summary's "most IOPS (4K × 8 threads …)": on a busy machine a one-thread cell of 100 ms can
/// win, and then no "threads" is printed (a fresh-clone CI).
const RESULTS: &[&str] = &["faster", "slower", "no", "significant", "change", "threads"];

/// The words of a line that a run does not make: no numbers, no word glued after a number
/// (`4K`, `1×32`), no units, no verdicts; a word keeps the digits it starts with a letter
/// (`p99`, `qd32`).
fn skeleton(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut after_digit = false;
    let mut glued = false;
    let flush = |word: &mut String, glued: bool, words: &mut Vec<String>| {
        let w = std::mem::take(word);
        let w = w.trim_matches(|c| c == '-' || c == '/');
        if !w.is_empty()
            && !glued
            && w.chars().any(char::is_alphabetic)
            && !UNITS.contains(&w)
            && !RESULTS.contains(&w)
        {
            words.push(w.to_string());
        }
    };
    for c in line.chars() {
        let inside = !word.is_empty() && c.is_ascii_digit();
        if c.is_alphabetic() || c == '_' || c == '/' || c == '-' || inside {
            if word.is_empty() {
                glued = after_digit;
            }
            word.push(c);
        } else {
            flush(&mut word, glued, &mut words);
            glued = false;
        }
        after_digit = c.is_ascii_digit();
    }
    flush(&mut word, glued, &mut words);
    words
}

/// Whether `needle`'s words appear in `hay`'s, in order.
fn words_in(needle: &[String], hay: &[String]) -> bool {
    let mut it = hay.iter();
    needle.iter().all(|w| it.any(|h| h == w))
}

/// Each line README shows under a command (up to `findings:`), by its words, in order in what
/// the command printed, each in a line that begins with the same word. README shows a
/// terminal, where a progress line ends on the line it began ("Filling … done in 628 ms"); to
/// a pipe the end comes on a line of its own, so a printed line is also read joined with the
/// next.
fn check_shape(example: &Example, printed: &str) {
    // A slow fill says how far it got every 10 s on a line of its own ("35% · 256.0 MiB/s ·
    // about 25 s left"); on a terminal that line is redrawn in place and README never shows it.
    let lines: Vec<Vec<String>> = printed
        .lines()
        .filter(|l| !(l.contains("% · ") && l.trim_end().ends_with(" left")))
        .map(skeleton)
        .collect();
    let printed: Vec<Vec<String>> = (0..lines.len())
        .map(|i| [&lines[i][..], lines.get(i + 1).map_or(&[][..], |n| &n[..])].concat())
        .collect();
    let mut from = 0;
    for shown in &example.shown {
        if shown.trim_start().starts_with("findings:") {
            break;
        }
        let mut want = skeleton(shown);
        if want.is_empty() {
            continue;
        }
        // What the devices counted is the machine's (which device, whether anything else
        // wrote meanwhile): only that the line is there is README's.
        if MACHINE_MADE.contains(&want[0].as_str()) {
            want.truncate(1);
        }
        match printed[from..]
            .iter()
            .position(|p| p.first() == want.first() && words_in(&want, p))
        {
            Some(i) => from += i + 1,
            None => panic!(
                "README shows, under `{}`:\n  {shown}\nbut no line after the {from}th of what it printed has those words ({want:?}):\n{}",
                example.line,
                printed
                    .iter()
                    .map(|p| p.join(" "))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        }
    }
}

#[test]
fn a_shape_ignores_numbers_and_names_but_not_labels() {
    let a = skeleton("  latency     min 46.0 µs · mean 467 µs · p50 452 µs · max 4.81 ms");
    let b = skeleton("  latency     min 1.20 ms · mean 3.4 ms · p50 2 ms · max 9 s");
    assert_eq!(a, b);
    assert_eq!(a, ["latency", "min", "mean", "p50", "max"]);
    assert_eq!(
        skeleton("Filling iogauge-test.9485 (1 GiB) with random data ... done in 628 ms"),
        [
            "Filling",
            "iogauge-test",
            "with",
            "random",
            "data",
            "done",
            "in"
        ]
    );
    assert_eq!(
        skeleton(" 3  2026-11-21 02:12  qd32  randread 4K 1×32 io_uring"),
        ["qd32", "randread", "io_uring"]
    );
    // A renamed label is a different shape.
    assert_ne!(skeleton("  IOPS  68,319"), skeleton("  iops  68,319"));
    let e = Example {
        line: "x".into(),
        shown: vec!["  IOPS  1".into(), "  bandwidth  2 MiB/s".into()],
        console: true,
    };
    check_shape(&e, "head\n  IOPS 5 IOPS\n  other\n  bandwidth 9 GiB/s\n");
    let missing = std::panic::catch_unwind(|| check_shape(&e, "  bandwidth 9 GiB/s\n  IOPS 5\n"));
    assert!(missing.is_err(), "lines out of order must not match");
}

// ---- typing README's commands ----------------------------------------------------------------

/// Bytes in a size as README types it (`4g`, `1GiB`, `256m`, `16m`).
fn bytes(s: &str) -> u64 {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    let n: u64 = digits.parse().unwrap_or(0);
    let shift = match s[digits.len()..]
        .chars()
        .next()
        .map(|c| c.to_ascii_lowercase())
    {
        Some('k') => 10,
        Some('m') => 20,
        Some('g') => 30,
        Some('t') => 40,
        _ => 0,
    };
    n << shift
}

/// One iogauge invocation's words with its times and sizes shortened: each flag set to the
/// short value (added when a run would otherwise take its long default), sizes only lowered.
fn shorten(cmd: &mut Vec<String>, size: &str, console: bool) {
    let has = |cmd: &Vec<String>, flag: &str| cmd.iter().any(|w| w == flag);
    let set =
        |cmd: &mut Vec<String>, flag: &str, value: &str| match cmd.iter().position(|w| w == flag) {
            Some(i) => cmd[i + 1] = value.to_string(),
            None => cmd.extend([flag.to_string(), value.to_string()]),
        };
    let lower = |cmd: &mut Vec<String>, flag: &str, value: &str| {
        if let Some(i) = cmd.iter().position(|w| w == flag) {
            if bytes(&cmd[i + 1]) > bytes(value) || bytes(value) == 0 {
                cmd[i + 1] = value.to_string();
            }
        }
    };
    let on_device = cmd.iter().any(|w| w.starts_with("/dev/"));
    let creates = |cmd: &mut Vec<String>| {
        if !on_device && !has(cmd, "--size") {
            set(cmd, "--size", size);
        }
    };
    // A cell of 8 or more in flight would first spend 0.7 s trying ways to wait for
    // completions, seven times a shortened cell; each IO is timed at its own completion
    // instead (the trial is tests/complete_batch.rs's).
    let exact = |cmd: &mut Vec<String>| {
        if !has(cmd, "--complete-batch") {
            set(cmd, "--complete-batch", "1");
        }
    };
    let words: Vec<String> = cmd.iter().skip(1).cloned().collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["run", ..] if !console => {
            lower(cmd, "--size", size);
            lower(cmd, "--data", "32m");
            if !has(cmd, "--data") {
                set(cmd, "--time", "500ms");
            }
            creates(cmd);
            exact(cmd);
        }
        ["suite", ..] if !has(cmd, "--dry-run") => {
            set(cmd, "--cell-time", "100ms");
            lower(cmd, "--size", size);
            creates(cmd);
            if words.iter().any(|w| w.starts_with("snia-")) {
                set(cmd, "--max-rounds", "5");
            }
            exact(cmd);
        }
        ["sweep", ..] => {
            set(cmd, "--cell-time", "100ms");
            lower(cmd, "--size", size);
            if !has(cmd, "--size") {
                set(cmd, "--size", size);
            }
            // A sweep measures each setting three times by default; once shows that every
            // setting is built, measured and taken apart (tests/sweep.rs checks the repeats).
            if !has(cmd, "--repeat") {
                set(cmd, "--repeat", "1");
            }
            exact(cmd);
        }
        ["probe", "cache", ..] => set(cmd, "--ios", "2000"),
        ["db", "advise", ..] => {
            set(cmd, "--cell-time", "300ms");
            if !has(cmd, "--size") {
                set(cmd, "--size", size);
            }
        }
        ["db", load, ..] => {
            set(cmd, "--time", "4s");
            if !has(cmd, "--no-storage") {
                set(cmd, "--storage-time", "1s");
            }
            match *load {
                "pgbench" => set(cmd, "--scale", "1"),
                "sysbench" => set(cmd, "--data", "32MiB"),
                "tpcc" => set(cmd, "--warehouses", "1"),
                _ => {}
            }
        }
        ["fsync-check", "write", ..] => {
            set(cmd, "--size", "4MiB");
            set(cmd, "--count", "60");
        }
        _ => {}
    }
}

/// README's line as the test types it: placeholders replaced (`subst`, whole words or a
/// word's start), then each `iogauge …` between `;` and redirections shortened.
fn typed(line: &str, subst: &BTreeMap<String, String>, size: &str, console: bool) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut cmd: Vec<String> = Vec::new();
    let end = |cmd: &mut Vec<String>, out: &mut Vec<String>| {
        if cmd.first().is_some_and(|w| w == "iogauge") {
            shorten(cmd, size, console);
        }
        out.append(cmd);
    };
    for word in line.split_whitespace() {
        let mut w = word.to_string();
        for (from, to) in subst {
            for quote in ["", "'"] {
                let from = format!("{quote}{from}");
                if w == from
                    || w.starts_with(&format!("{from}/"))
                    || w.starts_with(&format!("{from},"))
                {
                    w = w.replacen(&from, &format!("{quote}{to}"), 1);
                }
            }
            w = w.replace(&format!(",{from}"), &format!(",{to}"));
        }
        if w == ";" || w.starts_with('>') || w == "|" || w == "&&" {
            end(&mut cmd, &mut out);
            out.push(w);
        } else {
            cmd.push(w);
        }
    }
    end(&mut cmd, &mut out);
    out.join(" ")
}

/// Where README's commands run: a working directory, `/data`, a results database, a run
/// directory and a root for /etc and /usr, all the test's own, and `iogauge` on PATH.
struct Desk {
    dir: tempfile::TempDir,
    subst: BTreeMap<String, String>,
}

impl Desk {
    fn new() -> Desk {
        Desk::with(BIN)
    }

    /// A desk whose `iogauge` is `bin`: a guest's desk runs the guests' binary
    /// ([`guest::iogauge`]).
    fn with(bin: &str) -> Desk {
        let dir = tempfile::tempdir().unwrap();
        // A database server's account must reach `/data` (a temporary directory is 0700).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for d in [
            "work",
            "data",
            "bin",
            "root/etc/bash_completion.d",
            "root/usr/local/share/man/man1",
        ] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::os::unix::fs::symlink(bin, dir.path().join("bin/iogauge")).unwrap();
        let mut subst = BTreeMap::new();
        let root = dir.path().join("root");
        for (from, to) in [
            ("/data", dir.path().join("data")),
            ("/etc", root.join("etc")),
            ("/usr", root.join("usr")),
        ] {
            subst.insert(from.to_string(), to.display().to_string());
        }
        // Your own files, as README names them: a suite from docs/suite-format.md's example
        // and a short fio job.
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/suite-format.md"))
                .unwrap();
        let toml = doc
            .split("```toml\n")
            .nth(1)
            .and_then(|s| s.split("```").next())
            .expect("docs/suite-format.md has a toml example");
        std::fs::write(dir.path().join("work/my.toml"), toml).unwrap();
        std::fs::write(
            dir.path().join("work/job.fio"),
            "[global]\nioengine=io_uring\ndirect=1\nfilename=fio-test.bin\nsize=32m\nruntime=1\ntime_based\n\n[randread]\nrw=randread\nbs=4k\niodepth=8\n",
        )
        .unwrap();
        Desk { dir, subst }
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn name(&mut self, placeholder: &str, real: &str) {
        self.subst.insert(placeholder.to_string(), real.to_string());
    }

    /// Runs README's `line` (already typed) in bash, stdout and stderr in one stream in the
    /// order written, with `db` as the results database.
    fn bash(&self, typed: &str, db: &str) -> Output {
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        output_within(
            Command::new("bash")
                .args(["-c", &format!("exec 2>&1\n{typed}")])
                .current_dir(self.work())
                .env("PATH", path)
                .env("HOME", self.dir.path())
                .env("IOGAUGE_DB", self.work().join(db))
                .env("IOGAUGE_RUN_DIR", own_run_dir(self.dir.path())),
            DEADLINE,
        )
    }

    /// Types and runs `e`; fails the test unless it succeeds, makes the files it names and
    /// prints what README shows under it.
    fn run(&self, e: &Example, size: &str) -> String {
        // README's second machine: what it imports goes to a database of its own.
        let db = if e.line.starts_with("iogauge import") {
            "laptop.db"
        } else {
            "results.db"
        };
        let typed = typed(&e.line, &self.subst, size, e.console);
        no_stray_path(&typed, self);
        eprintln!("$ {typed}");
        let start = std::time::Instant::now();
        let out = self.bash(&typed, db);
        eprintln!("  ({:.1} s)", start.elapsed().as_secs_f64());
        let printed = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "README's `{}`, typed as `{typed}`, failed ({}):\n{printed}",
            e.line,
            out.status
        );
        for file in made(&typed) {
            let p = self.work().join(&file);
            let there = std::fs::metadata(&p).is_ok_and(|m| m.is_dir() || m.len() > 0);
            assert!(there, "README's `{}` made no {file}:\n{printed}", e.line);
        }
        check_shape(e, &printed);
        printed
    }
}

/// The files a typed command writes: `-o`, `--bundle`, `--charts`, `--dir` and `>`.
fn made(typed: &str) -> Vec<String> {
    let words: Vec<&str> = typed.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| ["-o", "--bundle", "--charts", "--dir", ">"].contains(&w[0]))
        .map(|w| w[1].to_string())
        .collect()
}

#[test]
fn typing_shortens_and_places_without_changing_what_is_asked() {
    let mut subst = BTreeMap::new();
    subst.insert("/data".to_string(), "/t/data".to_string());
    subst.insert("/dev/sdc".to_string(), "/dev/loop7".to_string());
    subst.insert("/dev/sdd".to_string(), "/dev/loop8".to_string());
    assert_eq!(
        typed("iogauge run /data --rw randwrite --precondition", &subst, "64m", false),
        "iogauge run /t/data --rw randwrite --precondition --time 500ms --size 64m --complete-batch 1"
    );
    assert_eq!(
        typed(
            "iogauge run /data/test --iodepth 16 --data 4GiB",
            &subst,
            "64m",
            false
        ),
        "iogauge run /t/data/test --iodepth 16 --data 32m --size 64m --complete-batch 1"
    );
    assert_eq!(
        typed("iogauge run x --size 16m --time 10s", &subst, "64m", false),
        "iogauge run x --size 16m --time 500ms --complete-batch 1"
    );
    assert_eq!(
        typed("iogauge sweep quick --scratch /dev/sdc,/dev/sdd --size 4g", &subst, "64m", false),
        "iogauge sweep quick --scratch /dev/loop7,/dev/loop8 --size 64m --cell-time 100ms --repeat 1 --complete-batch 1"
    );
    assert_eq!(
        typed(
            "iogauge show last ; iogauge export qd1 --format csv",
            &subst,
            "64m",
            false
        ),
        "iogauge show last ; iogauge export qd1 --format csv"
    );
    assert_eq!(
        typed(
            "iogauge run --json --no-store > run.json",
            &subst,
            "64m",
            false
        ),
        "iogauge run --json --no-store --time 500ms --size 64m --complete-batch 1 > run.json"
    );
    assert_eq!(
        typed(
            "mpirun -n 3 iogauge run '/data/{host}'",
            &subst,
            "64m",
            false
        ),
        "mpirun -n 3 iogauge run '/t/data/{host}'"
    );
}

/// Fails the test for a placeholder this test does not give a real target: a device or a path
/// of the machine's own must never be typed as README names it (loop devices are the test's,
/// and virtio disks exist only in the guest).
fn no_stray_path(typed: &str, desk: &Desk) {
    let mine = desk.dir.path().display().to_string();
    for w in typed.split(|c: char| c.is_whitespace() || c == ',' || c == '\'') {
        let device = w.starts_with("/dev/loop") || w.starts_with("/dev/vd");
        if w.starts_with('/') && !w.starts_with(&mine) && !device {
            panic!("README's `{typed}` names {w}, which this test gives no target of its own");
        }
    }
}

// ---- the tests --------------------------------------------------------------------------------

/// README's commands that run at `at`; at least `least` of them, or README lost its examples.
fn examples_at(at: Place, least: usize) -> Vec<Example> {
    let found: Vec<Example> = examples()
        .into_iter()
        .filter(|e| place(&e.line) == at)
        .collect();
    assert!(
        found.len() >= least,
        "README shows {} commands for {at:?}",
        found.len()
    );
    found
}

/// Every README command that runs on this machine alone, in README's order, on one desk: a
/// later example (list, compare, verify, import) reads what an earlier one made.
#[test]
fn readme_examples_run_and_print_what_readme_shows() {
    run_on_host(Place::Host, 25);
}

/// README's suites (its `sh` blocks; the labelled one a later `report` reads stays with the
/// others), on a desk of their own, beside the other examples: no later command reads them.
#[test]
fn readme_suites_run() {
    run_on_host(Place::HostSuite, 10);
}

/// README's commands at `at` (on this machine), in README's order, on one desk; at least
/// `least` of them.
fn run_on_host(at: Place, least: usize) {
    needs_root!();
    for tool in ["mkfs.xfs", "mkfs.btrfs", "losetup"] {
        needs_tool!(tool);
    }
    let mut desk = Desk::new();
    // Three devices README names, RAM-backed: read (nvme0n1), written and probed (sdb), and a
    // scratch device for file systems (sdc).
    let devices: Vec<RamLoop> = (0..3).map(|_| RamLoop::new(256 << 20)).collect();
    for (name, dev) in ["/dev/nvme0n1", "/dev/sdb", "/dev/sdc"]
        .iter()
        .zip(&devices)
    {
        desk.name(name, &dev.dev.dev);
    }
    let mut listener: Option<Spawned> = None;
    let mut ran = 0;
    for e in &examples_at(at, least) {
        if e.line.contains("fsync-check listen") {
            // README's second machine: a listener on a free loopback port, kept for the writer
            // and the verifier after it.
            let mut l = Spawned::iogauge(
                &desk.work(),
                &[
                    "fsync-check",
                    "listen",
                    "127.0.0.1:0",
                    "--records",
                    "records",
                ],
            );
            let said = l.wait_for("listening on", std::time::Duration::from_secs(30));
            let addr = said
                .split_whitespace()
                .skip_while(|w| *w != "on")
                .nth(1)
                .expect("the listener says where it listens")
                .trim_end_matches(',')
                .to_string();
            desk.name("OTHER:5400", &addr);
            listener = Some(l);
            ran += 1;
            continue;
        }
        let printed = desk.run(e, "64m");
        if let Some(id) = printed
            .split_whitespace()
            .find_map(|w| w.strip_prefix("sweep:"))
            .filter(|_| e.line.starts_with("iogauge sweep"))
        {
            desk.name("sweep:ID", &format!("sweep:{}", id.trim_end_matches(',')));
        }
        ran += 1;
    }
    drop(listener);
    assert!(ran >= least, "only {ran} README commands ran");
}

/// README's database loads, each on a throwaway server with its data in `/data`.
#[test]
fn readme_database_examples_run() {
    needs_root!();
    for tool in ["sysbench", "mariadbd"] {
        needs_tool!(tool);
    }
    if !have_postgres() {
        return;
    }
    let desk = Desk::new();
    for e in &examples_at(Place::Database, 3) {
        desk.run(e, "64m");
    }
}

/// README's commands at `at`, typed in one guest on Debian's kernel with four blank disks
/// (README's /dev/sdc… are its /dev/vda…), each checked to end well, then the shell script
/// `then` (the test's own look at what they left, `iogauge` on its PATH); what they printed,
/// or `None` where no guest can run. A guest under software emulation is the slowest part of
/// the tests: what the arrays and database tests would build again, they check here.
fn in_guest(at: Place, least: usize, then: &str) -> Option<guest::GuestOutput> {
    let mut desk = Desk::with(&guest::iogauge());
    for (i, name) in ["/dev/sdc", "/dev/sdd", "/dev/sde", "/dev/sdf"]
        .iter()
        .enumerate()
    {
        desk.name(name, &format!("/dev/vd{}", (b'a' + i as u8) as char));
    }
    let lines = examples_at(at, least);
    let mut script = format!(
        "export PATH={}:$PATH IOGAUGE_DB={} IOGAUGE_RUN_DIR=/tmp/run\ncd {}\n",
        desk.dir.path().join("bin").display(),
        desk.work().join("results.db").display(),
        desk.work().display()
    );
    for (i, e) in lines.iter().enumerate() {
        // A database's window in the guest is longer than on the host: under emulation, beside
        // the other tests, a degraded raid5 once completed no pgbench transaction in 4 s.
        let typed =
            typed(&e.line, &desk.subst, "16m", e.console).replace(" --time 4s", " --time 12s");
        no_stray_path(&typed, &desk);
        script.push_str(&format!(
            "echo \"$ {typed}\"\n{typed} 2>&1\necho \"status{i} $?\"\n"
        ));
    }
    script.push_str(then);
    script.push_str("\necho \"finished yes\"\n");
    let out = guest::run(4, "128M", &script)?;
    assert_eq!(out.value("finished"), Some("yes"), "{out}");
    for (i, e) in lines.iter().enumerate() {
        assert_eq!(
            out.value(&format!("status{i}")),
            Some("0"),
            "README's `{}` failed in the guest:\n{out}",
            e.line
        );
    }
    Some(out)
}

/// README's database on arrays (`db pgbench --scratch … --layout md:raid5 --fs ext4 --degraded
/// --rebuild --rebuild-speed …`), in a guest of its own: the server in each array, whole,
/// degraded and rebuilding. The rebuilding run is checked against md's own state: the third
/// member failed, removed and added back as pgbench starts measuring (after the load), md
/// recovering at a rate while pgbench measured (its samples, once a second, beside the TPS),
/// the rebuild followed to its end; the run of the whole array has no rebuild at all; every
/// member blank and no array left afterwards.
#[test]
fn readme_database_on_arrays_runs_in_the_guest() {
    needs_root!();
    if !have_postgres() {
        return;
    }
    let then = r#"
iogauge list --json > /tmp/list.json
python3 - <<'PY'
import json, subprocess
runs = sorted(r['id'] for r in json.load(open('/tmp/list.json'))['runs'])
def show(i):
    return json.loads(subprocess.run(['iogauge', 'show', str(i), '--json'], capture_output=True, text=True).stdout)
docs = [show(i) for i in runs]
print('layouts', ','.join(d['params'].get('layout', '-').replace(' ', '_') for d in docs[1:]), len(docs))
whole, rebuilding = docs[1], docs[3]
print('whole_rebuild', whole.get('rebuild') is not None)
rb = rebuilding['rebuild']
print('windows', len(rb['cells']), len(rebuilding['results']))
w = rb['cells'][0]
under = [s for s in rb['samples'] if w['from_s'] <= s['t_s'] <= w['to_s']]
print('recovering_under_pgbench', sum(1 for s in under if s['action'] == 'recover' and (s['speed_kib'] or 0) > 0))
print('limits', rb['speed_min_kib'], rb['speed_max_kib'], rb['speed_set'])
print('rebuilt', 'yes' if rb['finished_s'] else 'no')
print('first_is_pgbench', rebuilding['results'][0].get('pg') is not None)
print('kinds', ','.join(sorted({f['kind'] for f in rebuilding['findings']})))
open('/tmp/id', 'w').write(str(runs[3]))
PY
iogauge show $(cat /tmp/id) > /tmp/show.txt
grep -q 'rebuild of /dev/vdc into md100, second by second (rate and p99: the measurement running then)' /tmp/show.txt && echo "timeline yes"
grep -Eq ' TPS +[0-9.]+ (µs|ms|s) ' /tmp/show.txt && echo "tps_beside yes"
for d in vda vdb vdc; do blkid -p /dev/$d >/dev/null 2>&1 && echo "signature_left $d"; done
grep -q md100 /proc/mdstat && echo "array_left yes"
"#;
    let Some(out) = in_guest(Place::GuestDatabase, 1, then) else {
        return;
    };
    for said in ["· degraded", "· rebuilding", "TPS", "rebuilt /dev/vdc"] {
        assert!(out.stdout.contains(said), "no {said} in:\n{out}");
    }
    // The baseline, then the array whole, degraded and rebuilding, each a run of its own.
    assert_eq!(
        out.value("layouts"),
        Some("md_raid5,md_raid5,md_raid5 4"),
        "{out}"
    );
    assert_eq!(out.value("whole_rebuild"), Some("False"), "{out}");
    // pgbench and the two storage cells, each a window of the rebuild.
    assert_eq!(out.value("windows"), Some("3 3"), "{out}");
    assert_eq!(out.value("first_is_pgbench"), Some("True"), "{out}");
    // README's 20 to 40 MiB/s: a member of 127 MiB takes 3 s or more, and md's samples are
    // once a second from the moment pgbench starts measuring.
    assert_eq!(out.value("limits"), Some("20480 40960 True"), "{out}");
    assert!(out.number("recovering_under_pgbench") >= 1, "{out}");
    assert_eq!(out.value("rebuilt"), Some("yes"), "{out}");
    let kinds = out.value("kinds").unwrap_or_default();
    assert!(kinds.split(',').any(|k| k == "rebuild"), "{out}");
    assert_eq!(out.value("timeline"), Some("yes"), "{out}");
    // The TPS beside the rebuild's rate and its p99, in whatever unit: under QEMU's emulation
    // a second's p99 can pass a second (CI saw `1.16 s`).
    assert_eq!(out.value("tps_beside"), Some("yes"), "{out}");
    assert!(!out.stdout.contains("signature_left"), "{out}");
    assert!(!out.stdout.contains("array_left"), "{out}");
}

/// README's array sweeps (md and LVM), in a guest on Debian's kernel: README's /dev/sdc… are
/// the guest's blank virtio disks. Its sweep of md RAID0, RAID10 and RAID5 and an LVM stripe
/// over four disks with ext4 is also the arrays tests' check of a file system on an array
/// (tests/arrays.rs measures the raw arrays): ext4 made aligned to each RAID5 stripe and not
/// named misaligned, every setting measured, and the md superblocks, PVs and signatures gone
/// from every member afterwards.
#[test]
fn readme_array_examples_run_in_the_guest() {
    needs_root!();
    let then = r#"
iogauge list --json | python3 -c "import json,sys; print('ran_ext4', sum(r['params'].get('fs') == 'ext4' for r in json.load(sys.stdin)['runs']))"
for d in vda vdb vdc vdd; do
  blkid -p /dev/$d >/dev/null 2>&1 && echo "signature_left $d"
  mdadm --examine /dev/$d >/dev/null 2>&1 && echo "md_superblock_left $d"
done
echo "arrays_left $(ls /sys/block | grep -c '^md')"
"#;
    let Some(out) = in_guest(Place::Guest, 2, then) else {
        return;
    };
    // Each array the sweeps name was built and measured: a line of results per layout.
    for layout in [
        "md raid0",
        "md raid10",
        "md raid5",
        "lvm stripe",
        "rebuilding",
    ] {
        assert!(
            out.stdout.contains(layout),
            "no {layout} in what the sweeps printed:\n{out}"
        );
    }
    // The ext4 sweep: the single disk, then raid0, raid10, raid5 and lvm at each chunk.
    assert_eq!(out.number("ran_ext4"), 9, "{out}");
    // RAID5 of four: three data chunks of 64 KiB, 16 blocks of 4 KiB each; of 512 KiB, 128.
    for aligned in [
        "ext4 made aligned to the array: -b 4096 -E stride=16,stripe_width=48",
        "ext4 made aligned to the array: -b 4096 -E stride=128,stripe_width=384",
    ] {
        assert!(out.stdout.contains(aligned), "no {aligned:?} in:\n{out}");
    }
    // And the file system is what it was made to be: mke2fs gives a file system under 512 MiB
    // 1 KiB blocks, where a stride of 16 is 16 KiB, and the misalignment finding named it.
    assert!(!out.stdout.contains("misaligned"), "{out}");
    assert!(!out.stdout.contains("signature_left"), "{out}");
    assert!(!out.stdout.contains("md_superblock_left"), "{out}");
    assert_eq!(out.number("arrays_left"), 0, "{out}");
}
