//! What a sweep changes, as the user asked for it and checked: the knobs and their values, the
//! file systems with their mkfs options, the array layouts, and the sweep's plan that holds
//! them with the suite every setting runs. `sweep` carries them out; the rules that read them
//! from the command line live here, with every other plan's.

use crate::error::usage;
use crate::plan::Plan;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A sweep as asked, checked before anything changes: what to change, and the suite's one plan
/// that every setting runs.
pub struct SweepPlan {
    pub knobs: Vec<KnobSpec>,
    /// `--grid`: every combination of the knobs' values rather than one change at a time.
    pub grid: bool,
    /// `--fill`: levels of use (percent) of the target's file system to measure at.
    pub fill: Vec<f64>,
    pub built: Built,
    pub check: Plan,
}

/// What is built on blank devices to measure in (`--scratch` with `--fs` or `--layout`), for a
/// sweep's suite or a database load; empty `scratch`: nothing is built.
#[derive(Clone, Debug, Default)]
pub struct Built {
    pub fss: Vec<FsSpec>,
    /// `--scratch DEV[,DEV…]`: the device file systems are made on, or an array's members.
    pub scratch: Vec<PathBuf>,
    /// `--layout`: the arrays to build from the scratch devices (none: no layout sweep).
    pub layouts: Vec<Layout>,
    /// `--chunk`: stripe units to try, bytes (for the layouts that take one).
    pub chunks: Vec<u64>,
    /// `--members`: how many of the scratch devices each array is built from (all by default).
    pub members: Vec<usize>,
    /// `--assume-clean`: no initial resync of redundant md arrays.
    pub assume_clean: bool,
    /// `--degraded`: each redundant layout measured again with one member missing.
    pub degraded: bool,
    /// `--rebuild`: each redundant md layout measured again while it recovers a member, with
    /// `--rebuild-speed`'s limits (KiB/s, md's unit) when given.
    pub rebuild: Option<Rebuild>,
    pub mount_opts: Vec<String>,
}

/// `--rebuild [--rebuild-speed MIN,MAX]`: md's recovery limits for the array while it is
/// measured, in KiB/s as md's `sync_speed_min`/`sync_speed_max` take them; `None` keeps the
/// system's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rebuild {
    pub speed_kib: Option<(u64, u64)>,
}

/// The state an array is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    Whole,
    /// One member missing: md's last member failed and removed, btrfs mounted without it.
    Degraded,
    /// That member added back, the suite measured while md recovers it.
    Rebuilding,
}

impl Health {
    /// What a setting's label adds.
    pub fn suffix(self) -> &'static str {
        match self {
            Health::Whole => "",
            Health::Degraded => " · degraded",
            Health::Rebuilding => " · rebuilding",
        }
    }
}

/// One `--fs` entry: a file system and the options for its mkfs, e.g. `ext4:-b 1024`.
#[derive(Clone, Debug, PartialEq)]
pub struct FsSpec {
    pub fs: String,
    pub mkfs_opts: Vec<String>,
}

impl FsSpec {
    pub fn parse(s: &str) -> Result<Vec<FsSpec>> {
        // `ext4,xfs,btrfs` is three; `ext4:-b 1024` is one with options (which may hold commas
        // only in a list of its own entries: `--fs 'ext4:-E stride=16,stripe_width=64'`).
        let entries: Vec<&str> = match s.contains(':') {
            true => vec![s],
            false => s.split(',').collect(),
        };
        entries
            .into_iter()
            .map(|e| {
                let (fs, opts) = e.split_once(':').unwrap_or((e, ""));
                let fs = fs.trim();
                if fs.is_empty() || !fs.chars().all(|c| c.is_ascii_alphanumeric()) {
                    return Err(usage(format!(
                        "--fs '{s}': '{fs}' is not a file system name; give e.g. --fs ext4,xfs,btrfs or --fs 'ext4:-b 1024'"
                    )));
                }
                crate::target::gate::option_words("--fs", s, opts.split_whitespace())?;
                if opts
                    .split_whitespace()
                    .any(|w| w.starts_with("-U") || w.to_ascii_lowercase().contains("uuid="))
                {
                    return Err(usage(format!(
                        "--fs '{}': iogauge gives the file system a UUID of its own, so that `iogauge clean` never wipes one it did not make; leave out -U and uuid=",
                        crate::units::quoted(s, 80)
                    )));
                }
                Ok(FsSpec {
                    fs: fs.to_string(),
                    mkfs_opts: opts.split_whitespace().map(str::to_string).collect(),
                })
            })
            .collect()
    }

    pub fn label(&self) -> String {
        match self.mkfs_opts.is_empty() {
            true => self.fs.clone(),
            false => format!("{} ({})", self.fs, self.mkfs_opts.join(" ")),
        }
    }

    /// The mkfs program, if installed.
    pub fn mkfs(&self) -> Option<PathBuf> {
        system_tool(&format!("mkfs.{}", self.fs))
    }
}

/// A system tool iogauge runs as root, found only in the system's own directories (never a
/// directory of PATH another account could have put first).
pub fn system_tool(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// One knob as the user asked for it: `[DEV:]NAME=v1,v2,...`.
#[derive(Clone, Debug, PartialEq)]
pub struct KnobSpec {
    pub device: Option<String>,
    pub name: String,
    pub values: Vec<String>,
}

impl KnobSpec {
    pub fn parse(s: &str) -> Result<KnobSpec> {
        let bad = || {
            usage(format!(
                "--knob '{s}' is not NAME=VALUE,VALUE…; give e.g. --knob scheduler=none,mq-deadline or --knob sda:read_ahead_kb=128,4096"
            ))
        };
        let (lhs, rhs) = s.split_once('=').ok_or_else(bad)?;
        let (device, name) = match lhs.split_once(':') {
            Some((d, n)) => (Some(d.trim().to_string()), n.trim().to_string()),
            None => (None, lhs.trim().to_string()),
        };
        let values: Vec<String> = rhs
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        let plain = |t: &str| {
            !t.is_empty()
                && t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if !plain(&name) || device.as_deref().is_some_and(|d| !plain(d)) || values.is_empty() {
            return Err(bad());
        }
        Ok(KnobSpec {
            device,
            name,
            values,
        })
    }

    /// How the knob is named in tables and run parameters.
    pub fn label(&self) -> String {
        match &self.device {
            Some(d) => format!("{d}:{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// Who builds the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One member, as it is: the baseline.
    Single,
    Md,
    Lvm,
    Btrfs,
}

/// One layout of the axis: a kind and its level (md `raid5`, btrfs `raid10`, lvm `stripe`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub kind: Kind,
    pub level: String,
}

/// The levels each kind takes, with the fewest members each needs. md's RAID10 comes in its
/// three layouts of two copies (md(4)): near (`raid10`, mdadm's default n2: the copies of a
/// chunk side by side), far (f2: a second full stripe set in the far half of every member,
/// reads striped like RAID0) and offset (o2: each stripe repeated one chunk further on).
const MD_LEVELS: [(&str, usize); 7] = [
    ("raid0", 2),
    ("raid1", 2),
    ("raid10", 2),
    ("raid10-far", 2),
    ("raid10-offset", 2),
    ("raid5", 3),
    ("raid6", 4),
];
const BTRFS_LEVELS: [(&str, usize); 7] = [
    ("single", 1),
    ("raid0", 2),
    ("raid1", 2),
    ("raid10", 2),
    ("raid5", 2),
    ("raid6", 3),
    ("raid1c3", 3),
];

impl Layout {
    /// `--layout md:raid0,raid5`, `lvm:stripe`, `btrfs:raid1`, `single`.
    pub fn parse(s: &str) -> Result<Vec<Layout>> {
        let bad = |why: String| {
            usage(format!(
                "--layout '{}': {why}; give e.g. --layout md:raid0,raid10,raid5 or lvm:stripe or btrfs:raid1 or single",
                crate::units::quoted(s, 60)
            ))
        };
        let (kind, levels) = s.split_once(':').unwrap_or((s, ""));
        let kind = match kind.trim() {
            "single" if levels.is_empty() => {
                return Ok(vec![Layout {
                    kind: Kind::Single,
                    level: "single".into(),
                }])
            }
            "md" => Kind::Md,
            "lvm" => Kind::Lvm,
            "btrfs" => Kind::Btrfs,
            other => return Err(bad(format!("'{other}' is not md, lvm, btrfs or single"))),
        };
        if levels.trim().is_empty() {
            return Err(bad("name the levels after the colon".into()));
        }
        levels
            .split(',')
            .map(|l| {
                let level = l.trim().to_ascii_lowercase();
                let known = match kind {
                    Kind::Md => MD_LEVELS.iter().any(|(n, _)| *n == level),
                    Kind::Btrfs => BTRFS_LEVELS.iter().any(|(n, _)| *n == level),
                    Kind::Lvm => level == "stripe",
                    Kind::Single => false,
                };
                match known {
                    true => Ok(Layout { kind, level }),
                    false => Err(bad(format!(
                        "'{level}' is not a level iogauge builds with it"
                    ))),
                }
            })
            .collect()
    }

    /// The fewest members this layout needs.
    pub fn min_members(&self) -> usize {
        let find = |t: &[(&str, usize)]| {
            t.iter()
                .find(|(n, _)| *n == self.level)
                .map_or(1, |(_, m)| *m)
        };
        match self.kind {
            Kind::Single => 1,
            Kind::Md => find(&MD_LEVELS),
            Kind::Lvm => 2,
            Kind::Btrfs => find(&BTRFS_LEVELS),
        }
    }

    /// Whether it survives a member's loss: what `--degraded` measures (md's mirrors and
    /// parity levels; btrfs's profiles that keep a copy or parity).
    pub fn redundant(&self) -> bool {
        match self.kind {
            Kind::Md => self.level != "raid0",
            Kind::Btrfs => !matches!(self.level.as_str(), "single" | "raid0"),
            Kind::Lvm | Kind::Single => false,
        }
    }

    /// What this machine lacks to build it, if anything: the kernel's part (md and the level's
    /// personality, device-mapper, btrfs), loaded, built in or installed to load on demand, and
    /// the tool that builds it. Read, never loaded: a layout the kernel cannot build is refused
    /// before anything is measured or made, instead of failing at `mdadm --create` after the
    /// baseline was measured and leaving device nodes behind.
    pub fn missing(&self) -> Option<String> {
        let has = iogauge_sysinfo::kernel_module_available;
        let kernel = || {
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|r| r.trim().to_string())
                .unwrap_or_else(|_| "?".into())
        };
        let (modules, part, tool): (&[&str], &str, &str) = match (self.kind, self.md_level().0) {
            (Kind::Single, _) => return None,
            (Kind::Md, "raid4" | "raid5" | "raid6") => (&["md_mod", "raid456"], "md RAID", "mdadm"),
            (Kind::Md, level) => {
                return self.missing_of(&["md_mod", level], "md RAID", "mdadm", kernel, has);
            }
            (Kind::Lvm, _) => (&["dm_mod"], "device-mapper", "lvm"),
            (Kind::Btrfs, _) => (&["btrfs"], "btrfs", "mkfs.btrfs"),
        };
        self.missing_of(modules, part, tool, kernel, has)
    }

    fn missing_of(
        &self,
        modules: &[&str],
        part: &str,
        tool: &str,
        kernel: impl Fn() -> String,
        has: impl Fn(&str) -> bool,
    ) -> Option<String> {
        if let Some(m) = modules.iter().find(|m| !has(m)) {
            return Some(format!(
                "this kernel ({}) has no {part}{} (module {m} is neither loaded, built in nor installed under /lib/modules)",
                kernel(),
                match modules.len() > 1 && *m != modules[0] {
                    true => format!(" {}", self.level),
                    false => String::new(),
                }
            ));
        }
        system_tool(tool).is_none().then(|| {
            format!(
                "{tool} is not installed (apt-get install {})",
                match tool {
                    "mdadm" => "mdadm",
                    "lvm" => "lvm2",
                    _ => "btrfs-progs",
                }
            )
        })
    }

    /// Whether md resyncs it (its initial resync, and the recovery `--rebuild` measures).
    pub fn resyncs(&self) -> bool {
        self.kind == Kind::Md && self.redundant()
    }

    /// Whether a chunk (stripe unit) size means anything for it.
    pub fn takes_chunk(&self) -> bool {
        match self.kind {
            Kind::Md => self.level != "raid1",
            Kind::Lvm => true,
            Kind::Single | Kind::Btrfs => false,
        }
    }

    /// mdadm's `--level` and `--layout` for an md level.
    pub fn md_level(&self) -> (&str, Option<&str>) {
        match self.level.as_str() {
            "raid10-far" => ("raid10", Some("f2")),
            "raid10-offset" => ("raid10", Some("o2")),
            l => (l, None),
        }
    }

    /// Members that hold distinct data in one stripe (what a file system's stripe width
    /// counts): raid0 and lvm stripes all, raid10 (two copies, any layout) half, raid5 one
    /// fewer, raid6 two fewer.
    pub fn data_members(&self, members: usize) -> usize {
        match (self.kind, self.md_level().0) {
            (Kind::Md, "raid10") => (members / 2).max(1),
            (Kind::Md, "raid5") => members.saturating_sub(1).max(1),
            (Kind::Md, "raid6") => members.saturating_sub(2).max(1),
            (Kind::Md, "raid1") | (Kind::Single, _) => 1,
            _ => members,
        }
    }

    pub fn label(&self) -> String {
        match self.kind {
            Kind::Single => "single".into(),
            Kind::Md => format!("md {}", self.level),
            Kind::Lvm => "lvm stripe".into(),
            Kind::Btrfs => format!("btrfs {}", self.level),
        }
    }
}
