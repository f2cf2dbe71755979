//! Suites as data: each study (bm-flash's matrix, dd/bonnie++'s sequential tests, sysbench's
//! fsync and seeks tests, Orion's mixes) is a TOML file under `suites/`, embedded in the binary,
//! and a user's own suite is the same format (`iogauge suite --file my.toml`).
//!
//! A suite is a list of groups; a group is a cartesian product of lists (operation × read % ×
//! block size × threads × in-flight IOs) sharing everything else, plus a layout hint that says
//! how its table is printed. `schema` parses and checks the files, `cells` expands the products
//! into cells, `stable` is the `--until-stable` rule and `tables` prints the results.

pub mod cells;
pub mod schema;
pub mod stable;

use crate::workload::{BlockSize, SyncKind};
use std::time::Duration;

/// The suites iogauge knows by name, in the order `full` runs them.
pub const BUILTIN: [(&str, &str); 10] = [
    ("matrix", include_str!("../suites/matrix.toml")),
    ("seq", include_str!("../suites/seq.toml")),
    ("fsync", include_str!("../suites/fsync.toml")),
    ("seeks", include_str!("../suites/seeks.toml")),
    ("mixes", include_str!("../suites/mixes.toml")),
    ("quick", include_str!("../suites/quick.toml")),
    ("commit", include_str!("../suites/commit.toml")),
    ("snia-iops", include_str!("../suites/snia-iops.toml")),
    ("snia-latency", include_str!("../suites/snia-latency.toml")),
    (
        "snia-throughput",
        include_str!("../suites/snia-throughput.toml"),
    ),
];

/// The suites `full` is made of: every study with its own defaults (`quick` is their digest).
const FULL: [&str; 5] = ["matrix", "seq", "fsync", "seeks", "mixes"];

/// Cell time when neither the suite nor the group names one: bm-flash's 10 s.
pub const DEFAULT_TIME: Duration = Duration::from_secs(10);

/// A checked suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Suite {
    pub name: String,
    pub description: String,
    /// Size of a created test file, unless `--size` says otherwise.
    pub size: Option<u64>,
    pub groups: Vec<Group>,
    /// The SNIA PTS loop, for suites that run in rounds until steady state.
    pub rounds: Option<Rounds>,
}

/// Rounds until steady state (SNIA SSS PTS): every cell once per round, until the tracked cell's
/// IOPS over the last `window` rounds pass the steady-state test, at most `max` rounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Rounds {
    /// The tracked cell: operation, read percentage, block size.
    pub track: (Op, u8, u64),
    pub window: usize,
    pub max: u32,
    /// Workload-independent preconditioning first: the range written twice, 128 KiB at a time.
    pub precondition: bool,
}

/// Cells that share a layout and everything but the listed axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub title: String,
    pub layout: Layout,
    /// The suite a group came from when it was merged into `full`, to name its cells.
    pub origin: Option<String>,
    pub ops: Vec<Op>,
    pub read_pct: Vec<u8>,
    pub bs: Vec<BlockSize>,
    pub threads: Vec<u32>,
    pub iodepth: Vec<u32>,
    /// Sync after every N writes.
    pub sync: Option<(SyncKind, u32)>,
    pub odsync: bool,
    /// Forces O_DIRECT on or off; `None` follows `--direct`/`--buffered`.
    pub direct: Option<bool>,
    pub length: Length,
    /// Only the first this many bytes of the target are used (sysbench's 16 KiB fsync file).
    pub range: Option<u64>,
    /// The command-line lists that may replace this group's lists.
    pub options: Vec<CliOption>,
    /// A fio job's block-size mix, `:N` and per-clone regions (none for other suites).
    pub shape: crate::workload::Shape,
    /// Groups with the same number, next to each other, run at once ([`cells::Cell::together`]).
    pub together: Option<usize>,
    /// This group's own pace (a stream's `--rate`), over the run's.
    pub rate: Option<crate::workload::Rate>,
    /// Its pauses between bursts of IO (fio's thinktime).
    pub think: Option<crate::workload::Think>,
    /// Its IO priorities (fio's prioclass, prio, cmdprio_*).
    pub prio: Option<crate::workload::Prio>,
    /// Its share of the IOs of the streams in its flow (fio's flow).
    pub flow: Option<crate::workload::Flow>,
    /// Where its threads run and take memory from (fio's cpus_allowed, numa_*).
    pub placement: Option<crate::workload::Placement>,
    /// Its own engine (a fio job's), over the run's.
    pub engine: Option<iogauge_engine::EngineKind>,
    /// Where its random IOs land (a fio job's random_distribution), over the run's.
    pub distribution: Option<crate::workload::Distribution>,
    /// When its stream starts among the others of its cell, and whether its end ends them.
    pub beside: crate::workload::Beside,
    /// Under --verify, its writes are stamped and not read back after it (fio's
    /// do_verify=0): a later cell's reads check them.
    pub no_readback: bool,
    /// The IO errors its threads count and go on after (fio's continue_on_error).
    pub tolerate: Option<crate::workload::Tolerate>,
    /// fio's `atomic=1`: every write carries RWF_ATOMIC, stored whole or not at all.
    pub atomic: bool,
}

/// How a group's results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// bm-flash: one table per operation, block sizes down, threads across, IOPS and MiB/s.
    Matrix,
    /// Orion: in-flight IOs down, read percentages across; IOPS and latency tables.
    Mixes,
    /// dd/bonnie++: block sizes down, write/read/copy across, MiB/s and where data came from.
    Seq,
    /// sysbench fsync: one row per cell with syncs/s and sync latency percentiles.
    Fsync,
    /// One row per cell: IOPS, bandwidth and latency percentiles.
    Plain,
    /// The SNIA PTS tables: block sizes down, read/write mixes across; IOPS, mean and maximum
    /// latency, and bandwidth.
    Snia,
}

/// What a cell does: a workload pattern, or `copy` (read one region while writing another).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Randread,
    Randwrite,
    Rw,
    Randrw,
    /// A fio job's trims with zonemode=zbd (zone resets); a suite file cannot name them.
    #[serde(skip)]
    Trim,
    #[serde(skip)]
    Randtrim,
    /// `cp`: a sequential read stream over the first half of the target and, at the same
    /// time, a sequential write stream over the second half.
    Copy,
}

/// A workload pattern as a suite's cell names it.
impl From<crate::workload::Rw> for Op {
    fn from(rw: crate::workload::Rw) -> Op {
        use crate::workload::Rw;
        match rw {
            Rw::Read => Op::Read,
            Rw::Write => Op::Write,
            Rw::Randread => Op::Randread,
            Rw::Randwrite => Op::Randwrite,
            Rw::Rw => Op::Rw,
            Rw::Randrw => Op::Randrw,
            Rw::Trim => Op::Trim,
            Rw::Randtrim => Op::Randtrim,
        }
    }
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Copy => "copy",
            _ => self.rw().map_or("copy", crate::workload::Rw::name),
        }
    }

    /// The workload pattern, or `None` for `copy`, which is two patterns at once.
    pub fn rw(self) -> Option<crate::workload::Rw> {
        use crate::workload::Rw;
        Some(match self {
            Op::Read => Rw::Read,
            Op::Write => Rw::Write,
            Op::Randread => Rw::Randread,
            Op::Randwrite => Rw::Randwrite,
            Op::Rw => Rw::Rw,
            Op::Randrw => Rw::Randrw,
            Op::Trim => Rw::Trim,
            Op::Randtrim => Rw::Randtrim,
            Op::Copy => return None,
        })
    }

    /// Whether the read percentage is a free parameter of this operation.
    pub fn mixed(self) -> bool {
        matches!(self, Op::Rw | Op::Randrw)
    }

    pub fn writes(self, read_pct: u8) -> bool {
        match self.rw() {
            Some(rw) => rw.writes(read_pct),
            None => true,
        }
    }
}

/// How long a cell runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    Time(Duration),
    Data(Amount),
}

/// A fixed amount of data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    Bytes(u64),
    /// One pass over the range the cell uses (`data = "range"`), as dd writes a file once.
    Range,
    /// Several passes over the range: an fio job without size= whose clones each go over the
    /// whole file (numjobs), `loops` times.
    Ranges(u32),
    /// Thousandths of the range: fio's sprandom writes the range and its over-provisioning.
    Permille(u32),
}

/// Command-line lists a group may take in place of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CliOption {
    Sizes,
    Threads,
    ReadPct,
    Qd,
    Files,
}

impl CliOption {
    pub fn flag(self) -> &'static str {
        match self {
            CliOption::Sizes => "--sizes",
            CliOption::Threads => "--threads",
            CliOption::ReadPct => "--read-pct",
            CliOption::Qd => "--qd",
            CliOption::Files => "--files",
        }
    }
}

/// Every name `builtin` takes.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(n, _)| *n).chain(["full"])
}

/// Loads a suite by name: one of [`BUILTIN`], or `full`.
pub fn builtin(name: &str) -> Result<Suite, String> {
    if name == "full" {
        return full();
    }
    let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) else {
        let all: Vec<&str> = names().collect();
        let typed = crate::units::quoted(name, 60);
        return Err(match crate::error::did_you_mean(name, names()) {
            Some(like) => format!(
                "there is no suite '{typed}'; did you mean {like}? (the suites: {}; or give your own with --file)",
                all.join(", ")
            ),
            None => format!(
                "there is no suite '{typed}'; choose one of {}, or give your own with --file",
                all.join(", ")
            ),
        });
    };
    // The embedded files are tested to parse; an error here is a bug, reported like any other.
    schema::parse(text, &format!("suites/{name}.toml"))
}

/// All studies in one: their groups in order, each keeping its own suite's cell time.
fn full() -> Result<Suite, String> {
    let mut groups = Vec::new();
    let mut size: Option<u64> = None;
    for name in FULL {
        let s = builtin(name)?;
        size = match (size, s.size) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        groups.extend(s.groups.into_iter().map(|g| Group {
            origin: Some(s.name.clone()),
            ..g
        }));
    }
    Ok(Suite {
        name: "full".into(),
        description: "every study with its own defaults: matrix, seq, fsync, seeks, mixes".into(),
        size,
        groups,
        rounds: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_suite_parses_and_has_cells() {
        for (name, _) in BUILTIN {
            let s = builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.name, name, "a suite file names itself");
            let cells = cells::expand(&s, &cells::Overrides::default()).unwrap();
            assert!(!cells.is_empty(), "{name} has cells");
        }
    }

    #[test]
    fn full_is_the_studies_in_order() {
        let full = builtin("full").unwrap();
        let mut expect = Vec::new();
        for name in FULL {
            expect.extend(builtin(name).unwrap().groups.into_iter().map(|g| g.title));
        }
        let titles: Vec<String> = full.groups.iter().map(|g| g.title.clone()).collect();
        assert_eq!(titles, expect);
        assert!(full.groups.iter().all(|g| g.origin.is_some()));
    }

    #[test]
    fn unknown_suite_names_the_choices() {
        let e = builtin("bogus").unwrap_err();
        assert!(
            e.contains("matrix") && e.contains("full") && e.contains("--file"),
            "{e}"
        );
        assert!(!e.contains("did you mean"), "nothing is like bogus: {e}");
    }

    #[test]
    fn a_misspelled_suite_is_named_with_the_one_meant() {
        for (typed, meant) in [
            ("qiuck", "quick"),
            ("matirx", "matrix"),
            ("snia-iosp", "snia-iops"),
        ] {
            let e = builtin(typed).unwrap_err();
            assert!(
                e.contains(&format!("did you mean {meant}?")),
                "{typed}: {e}"
            );
        }
    }
}
