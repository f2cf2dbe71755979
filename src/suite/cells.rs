//! A suite's groups expanded into cells, after the command line has replaced the lists it may
//! replace. The order is the order the cells run in: operation, read %, block size, threads,
//! in-flight IOs — so a matrix runs row by row as bm-flash does, and writes follow reads.

use super::{Amount, CliOption, Layout, Length, Op, Suite};
use crate::units;
use crate::workload::{BlockSize, SyncKind};
use std::time::Duration;

/// What the command line says instead of the suite file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    pub sizes: Option<Vec<BlockSize>>,
    pub threads: Option<Vec<u32>>,
    pub read_pct: Option<Vec<u8>>,
    pub qd: Option<Vec<u32>>,
    pub files: Option<u32>,
    /// Replaces the time of every time-limited cell.
    pub cell_time: Option<Duration>,
}

/// One workload of a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Index of its group in the suite.
    pub group: usize,
    pub layout: Layout,
    pub op: Op,
    /// Percentage of reads (100 or 0 for the pure patterns).
    pub read_pct: u8,
    pub bs: BlockSize,
    pub threads: u32,
    pub iodepth: u32,
    pub sync: Option<(SyncKind, u32)>,
    pub odsync: bool,
    pub direct: Option<bool>,
    pub length: Length,
    pub range: Option<u64>,
    /// Separate files the cell reads (the seeks suite's `--files N`); 1 means the target.
    pub files: u32,
    /// The suite a cell came from in `full`, which prefixes its name.
    pub origin: Option<String>,
    pub shape: crate::workload::Shape,
    /// Cells with the same number, next to each other in the plan, run at once as the
    /// streams of one cell (fio's jobs between two `stonewall`s); `None` runs alone.
    pub together: Option<usize>,
    /// Its own target, an index into the plan's `TargetPlan::streams`; `None` is the run's.
    pub target: Option<usize>,
    /// Its own pace, over the run's (`--rate` of a stream).
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
    /// When it starts among the streams of its cell, and whether its end ends them.
    pub beside: crate::workload::Beside,
    /// Under --verify, its writes are stamped and not read back after it (fio's
    /// do_verify=0): a later cell's reads check them.
    pub no_readback: bool,
    /// The IO errors its threads count and go on after (fio's continue_on_error).
    pub tolerate: Option<crate::workload::Tolerate>,
    /// fio's `atomic=1`: every write carries RWF_ATOMIC, stored whole or not at all.
    pub atomic: bool,
}

impl Cell {
    /// A short name that tells the cells of a suite apart, e.g. `randread 4K × 10 threads`,
    /// `randrw 70/30 8K · QD 16`, `write 8K + fdatasync`.
    pub fn name(&self) -> String {
        let mut s = String::new();
        if let Some(o) = &self.origin {
            s.push_str(o);
            s.push_str(": ");
        }
        s.push_str(self.op.name());
        // fio's `rw=randread:8` / `rw=read:64k`, as the job wrote it.
        match (self.shape.seq_run, self.shape.seq_skip) {
            (n, _) if n > 1 => s.push_str(&format!(":{n}")),
            (_, b) if b > 0 => s.push_str(&format!(":{}", units::bs_label(b.unsigned_abs()))),
            (_, b) if b < 0 => s.push_str(&format!(":-{}", units::bs_label(b.unsigned_abs()))),
            _ => {}
        }
        if self.op.mixed() {
            s.push_str(&format!(" {}/{}", self.read_pct, 100 - self.read_pct));
        }
        s.push(' ');
        match &self.shape.mix {
            Some(m) => s.push_str(&m.label()),
            None => s.push_str(&units::bs_label(self.bs.bytes())),
        }
        if self.threads > 1 || self.layout == Layout::Matrix {
            let plural = crate::units::plural(self.threads as usize);
            s.push_str(&format!(" × {} thread{plural}", self.threads));
        }
        if self.iodepth > 1 || self.layout == Layout::Mixes {
            s.push_str(&format!(" · QD {}", self.iodepth));
        }
        if let Some((kind, every)) = self.sync {
            let k = match kind {
                SyncKind::Fsync => "fsync",
                SyncKind::Fdatasync => "fdatasync",
            };
            s.push_str(&format!(" + {k}"));
            if every > 1 {
                s.push_str(&format!(" every {every} writes"));
            }
        }
        if self.odsync {
            s.push_str(" O_DSYNC");
        }
        if self.atomic {
            s.push_str(" atomic");
        }
        if self.files > 1 {
            s.push_str(&format!(" · {} files", self.files));
        }
        // fio's thinktime: the pause, and the IOs between two when more than one.
        if let Some(t) = &self.think {
            s.push_str(&format!(" · think {}", units::duration(t.pause)));
            if t.blocks > 1 && t.blocks != u32::MAX {
                s.push_str(&format!("/{}", t.blocks));
            }
        }
        // fio's strided zones: what moves in each zone, and what is skipped between two.
        if let Some(z) = &self.shape.zones {
            s.push_str(&format!(
                " · {} in each zone of {}, {} skipped",
                units::iec(z.size),
                units::iec(z.range),
                units::iec(z.skip)
            ));
        }
        // fio's zonemode=zbd: writes at write pointers in zones of this size.
        if let Some(z) = &self.shape.zbd {
            let what = match self.op.rw().is_some_and(|rw| rw.trims()) {
                true => "resets write pointers",
                false => "writes at write pointers",
            };
            s.push_str(&format!(" · {what} in {} zones", units::iec(z.zone)));
            if z.max_open > 0 {
                s.push_str(&format!(", {} open", z.max_open));
            }
        }
        // fio's sprandom: the over-provisioning and the regions.
        if let Some(z) = &self.shape.spr {
            s.push_str(&format!(
                " · sprandom op {}%, {} regions",
                (z.op * 100.0).round(),
                z.regions
            ));
        }
        // Where its threads run (fio's cpus_allowed, numa_*).
        if let Some(p) = &self.placement {
            s.push_str(&format!(" · {p}"));
        }
        // What the writes carry, when not iogauge's unique, incompressible bytes.
        if !self.shape.content.is_plain() {
            s.push_str(&format!(" · {}", self.shape.content));
        }
        // fio's IO priorities: the threads', and the share of IOs with their own.
        if let Some(p) = &self.prio {
            use crate::workload::Prio;
            let mut parts: Vec<String> = p.thread.map(Prio::label).into_iter().collect();
            parts.extend(p.shares());
            s.push_str(&format!(" · ioprio {}", parts.join(", ")));
        }
        // fio's flow: the stream's weight among those of its flow.
        if let Some(f) = &self.flow {
            s.push_str(&format!(" · flow {} weight {}", f.id, f.weight));
        }
        // Cells that differ only in their range (a working-set sweep) are told apart by it.
        if let (Some(r), Layout::Plain) = (self.range, self.layout) {
            s.push_str(&format!(" over {}", units::iec(r)));
        }
        s
    }

    pub fn writes(&self) -> bool {
        self.op.writes(self.read_pct)
    }

    /// Time the cell is planned to take, when that is known before it runs.
    pub fn planned_time(&self) -> Option<Duration> {
        match self.length {
            Length::Time(t) => Some(t),
            Length::Data(_) => None,
        }
    }
}

/// Expands `suite` into its cells. Fails when the command line gives a list no group of the
/// suite takes (it would be silently ignored otherwise).
pub fn expand(suite: &Suite, o: &Overrides) -> Result<Vec<Cell>, String> {
    let given = [
        (CliOption::Sizes, o.sizes.is_some()),
        (CliOption::Threads, o.threads.is_some()),
        (CliOption::ReadPct, o.read_pct.is_some()),
        (CliOption::Qd, o.qd.is_some()),
        (CliOption::Files, o.files.is_some()),
    ];
    for (opt, is_given) in given {
        if is_given && !suite.groups.iter().any(|g| g.options.contains(&opt)) {
            let mut takes: Vec<&str> = Vec::new();
            for g in &suite.groups {
                for t in &g.options {
                    if !takes.contains(&t.flag()) {
                        takes.push(t.flag());
                    }
                }
            }
            let takes = if takes.is_empty() {
                "none of these lists".to_string()
            } else {
                takes.join(", ")
            };
            return Err(format!(
                "{} does not apply to suite {} (it takes {takes})",
                opt.flag(),
                suite.name
            ));
        }
    }
    let mut cells = Vec::new();
    for (gi, g) in suite.groups.iter().enumerate() {
        let pick = |opt: CliOption| g.options.contains(&opt);
        let bs = o
            .sizes
            .clone()
            .filter(|_| pick(CliOption::Sizes))
            .unwrap_or_else(|| g.bs.clone());
        let threads = o
            .threads
            .clone()
            .filter(|_| pick(CliOption::Threads))
            .unwrap_or_else(|| g.threads.clone());
        let iodepth =
            o.qd.clone()
                .filter(|_| pick(CliOption::Qd))
                .unwrap_or_else(|| g.iodepth.clone());
        let mixed_pcts = o
            .read_pct
            .clone()
            .filter(|_| pick(CliOption::ReadPct))
            .unwrap_or_else(|| g.read_pct.clone());
        let files = o.files.filter(|_| pick(CliOption::Files)).unwrap_or(1);
        let length = match (g.length, o.cell_time) {
            (Length::Time(_), Some(t)) => Length::Time(t),
            (l, _) => l,
        };
        for &op in &g.ops {
            let pcts = match op.rw() {
                _ if op.mixed() => mixed_pcts.clone(),
                Some(rw) => vec![rw.read_pct(0)],
                None => vec![50],
            };
            for &read_pct in &pcts {
                for &b in &bs {
                    for &t in &threads {
                        for &d in &iodepth {
                            cells.push(Cell {
                                group: gi,
                                layout: g.layout,
                                op,
                                read_pct,
                                bs: b,
                                threads: t,
                                iodepth: d,
                                sync: g.sync,
                                odsync: g.odsync,
                                direct: g.direct,
                                length,
                                range: g.range,
                                files,
                                origin: g.origin.clone(),
                                shape: g.shape.clone(),
                                together: g.together,
                                target: None,
                                rate: g.rate,
                                think: g.think,
                                prio: g.prio.clone(),
                                flow: g.flow,
                                placement: g.placement.clone(),
                                engine: g.engine,
                                distribution: g.distribution,
                                beside: g.beside,
                                no_readback: g.no_readback,
                                tolerate: g.tolerate,
                                atomic: g.atomic,
                            });
                        }
                    }
                }
            }
        }
    }
    Ok(cells)
}

/// Data a cell moves given the range it uses, for fixed-data cells.
pub fn data_bytes(amount: Amount, range: u64) -> u64 {
    match amount {
        Amount::Bytes(b) => b,
        Amount::Range => range,
        Amount::Ranges(n) => range.saturating_mul(u64::from(n)),
        Amount::Permille(n) => (u128::from(range) * u128::from(n) / 1000) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{builtin, schema};

    fn suite(text: &str) -> Suite {
        schema::parse(text, "t.toml").unwrap()
    }

    const TWO_GROUPS: &str = r#"
name = "t"
description = "t"
[[group]]
title = "m"
layout = "matrix"
rw = ["randread", "randwrite"]
bs = ["4k", "8k", "16k"]
threads = [1, 10]
options = ["sizes", "threads"]
[[group]]
title = "x"
layout = "mixes"
rw = ["randrw", "read"]
bs = ["8k"]
iodepth = [1, 2, 4]
read_pct = [90, 50]
time = "3s"
options = ["read-pct", "qd"]
"#;

    #[test]
    fn cells_are_the_cartesian_product_in_run_order() {
        let cells = expand(&suite(TWO_GROUPS), &Overrides::default()).unwrap();
        // matrix: 2 ops × 3 sizes × 2 thread counts; mixes: randrw 2 pcts × 3 depths + read 3.
        assert_eq!(cells.len(), 2 * 3 * 2 + 2 * 3 + 3);
        let m: Vec<(Op, u64, u32)> = cells[..12]
            .iter()
            .map(|c| (c.op, c.bs.bytes(), c.threads))
            .collect();
        let mut expect = Vec::new();
        for op in [Op::Randread, Op::Randwrite] {
            for bs in [4096, 8192, 16384] {
                for t in [1, 10] {
                    expect.push((op, bs, t));
                }
            }
        }
        assert_eq!(m, expect);
        let pcts: Vec<u8> = cells[12..].iter().map(|c| c.read_pct).collect();
        assert_eq!(
            pcts,
            [90, 90, 90, 50, 50, 50, 100, 100, 100],
            "read is 100% reads"
        );
        assert!(cells[12..]
            .iter()
            .all(|c| c.length == Length::Time(Duration::from_secs(3))));
        let names: Vec<String> = cells.iter().map(Cell::name).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "names are unique: {n}");
        }
    }

    #[test]
    fn command_line_lists_replace_only_the_groups_that_take_them() {
        let s = suite(TWO_GROUPS);
        let o = Overrides {
            sizes: Some(vec![BlockSize::known(512), BlockSize::known(1 << 20)]),
            qd: Some(vec![64]),
            cell_time: Some(Duration::from_millis(200)),
            ..Overrides::default()
        };
        let cells = expand(&s, &o).unwrap();
        assert_eq!(cells.len(), 2 * 2 * 2 + 2 + 1);
        assert!(cells[..8]
            .iter()
            .all(|c| [512, 1 << 20].contains(&c.bs.bytes())));
        assert!(
            cells[8..].iter().all(|c| c.bs.bytes() == 8192),
            "mixes keep their 8K"
        );
        assert!(cells[8..].iter().all(|c| c.iodepth == 64));
        assert!(
            cells[..8].iter().all(|c| c.iodepth == 1),
            "matrix keeps QD 1"
        );
        assert!(cells
            .iter()
            .all(|c| c.length == Length::Time(Duration::from_millis(200))));
    }

    #[test]
    fn a_list_no_group_takes_is_refused() {
        let s = suite(TWO_GROUPS);
        let o = Overrides {
            files: Some(4),
            ..Overrides::default()
        };
        let e = expand(&s, &o).unwrap_err();
        assert!(e.contains("--files") && e.contains("--sizes"), "{e}");
    }

    #[test]
    fn matrix_is_bm_flash() {
        let cells = expand(&builtin("matrix").unwrap(), &Overrides::default()).unwrap();
        // 14 block sizes 512B … 4MiB doubling × threads 1, 10, 40 × read and write.
        assert_eq!(cells.len(), 14 * 3 * 2);
        let sizes: Vec<u64> = (0..14).map(|i| 512u64 << i).collect();
        for op in [Op::Randread, Op::Randwrite] {
            let mine: Vec<&Cell> = cells.iter().filter(|c| c.op == op).collect();
            assert_eq!(mine.len(), 42);
            for (i, c) in mine.iter().enumerate() {
                assert_eq!(c.bs.bytes(), sizes[i / 3]);
                assert_eq!(c.threads, [1, 10, 40][i % 3]);
                assert_eq!(c.iodepth, 1);
                assert_eq!(c.length, Length::Time(Duration::from_secs(10)));
            }
        }
    }

    #[test]
    fn mixes_is_orion_plus_a_stream() {
        let cells = expand(&builtin("mixes").unwrap(), &Overrides::default()).unwrap();
        let small: Vec<&Cell> = cells.iter().filter(|c| c.layout == Layout::Mixes).collect();
        assert_eq!(small.len(), 4 * 7);
        assert!(small
            .iter()
            .all(|c| c.bs.bytes() == 8192 && c.op == Op::Randrw));
        let mut combos: Vec<(u8, u32)> = small.iter().map(|c| (c.read_pct, c.iodepth)).collect();
        combos.sort();
        let mut expect = Vec::new();
        for p in [50, 80, 90, 100] {
            for d in [1, 2, 4, 8, 16, 32, 64] {
                expect.push((p, d));
            }
        }
        assert_eq!(combos, expect);
        assert!(cells
            .iter()
            .any(|c| c.bs.bytes() == 1 << 20 && !c.op.rw().is_some_and(|r| r.random())));
    }

    #[test]
    fn seq_moves_a_fixed_amount_write_then_read_then_copy() {
        let cells = expand(&builtin("seq").unwrap(), &Overrides::default()).unwrap();
        let sizes: Vec<u64> = (0..11).map(|i| 4096u64 << i).collect();
        assert_eq!(cells.len(), 3 * sizes.len());
        for (i, c) in cells.iter().enumerate() {
            assert_eq!(c.op, [Op::Write, Op::Read, Op::Copy][i / sizes.len()]);
            assert_eq!(c.bs.bytes(), sizes[i % sizes.len()]);
            assert!(matches!(c.length, Length::Data(_)));
        }
    }

    #[test]
    fn fsync_and_seeks_are_the_sysbench_tests() {
        let f = expand(&builtin("fsync").unwrap(), &Overrides::default()).unwrap();
        let with = |k: SyncKind| f.iter().filter(move |c| c.sync.map(|s| s.0) == Some(k));
        let fs: Vec<u64> = with(SyncKind::Fsync).map(|c| c.bs.bytes()).collect();
        assert_eq!(fs, [4096, 16384]);
        assert!(with(SyncKind::Fsync).all(|c| c.sync == Some((SyncKind::Fsync, 1))));
        assert!(
            with(SyncKind::Fdatasync).any(|c| c.bs.bytes() == 8192 && c.op == Op::Write),
            "WAL"
        );
        assert!(f.iter().any(|c| c.odsync && c.sync.is_none()));
        let s = expand(
            &builtin("seeks").unwrap(),
            &Overrides {
                files: Some(8),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(s.len(), 1);
        let c = &s[0];
        assert_eq!(
            (c.op, c.bs.bytes(), c.threads, c.iodepth),
            (Op::Randread, 8192, 1, 1)
        );
        assert_eq!(c.direct, Some(true));
        assert_eq!(c.files, 8);
    }

    #[test]
    fn quick_is_small() {
        let q = builtin("quick").unwrap();
        let cells = expand(&q, &Overrides::default()).unwrap();
        let planned: Duration = cells.iter().filter_map(Cell::planned_time).sum();
        assert!(
            planned <= Duration::from_secs(75),
            "{planned:?} leaves time for the fill"
        );
        assert!(
            cells.iter().all(|c| matches!(c.length, Length::Time(_))),
            "no open-ended cell"
        );
        let matrix: Vec<(u64, u32)> = cells
            .iter()
            .filter(|c| c.layout == Layout::Matrix)
            .map(|c| (c.bs.bytes(), c.threads))
            .collect();
        for want in [(4096, 1), (4096, 8), (1 << 20, 1), (1 << 20, 8)] {
            assert!(matrix.contains(&want), "{want:?}");
        }
        assert!(cells.iter().any(|c| c.op == Op::Randrw && c.read_pct == 70));
        assert!(cells.iter().any(|c| c.sync.is_some()));
        assert!(cells.iter().any(|c| c.op == Op::Read) && cells.iter().any(|c| c.op == Op::Write));
    }
}
