//! The rules of `db advise`, each written once: from measured numbers to one setting, with the
//! sentence that says which numbers and why, and the server's documentation of the setting.
//! Pure functions of numbers, so each rule is tested from numbers to setting.

use crate::model::SettingDoc;
use crate::units;

/// Reads in flight beyond which a gain under this share of the best is no gain: the depth
/// where random reads stop scaling is the smallest that reaches 90% of the best rate.
const KNEE_SHARE: f64 = 0.9;
/// Two rates this close are one rate measured twice (a throttle's grain, a short cell's noise).
const SAME_RATE: f64 = 0.95;
/// A sync method must beat the default by this much to replace it: less is within the noise of
/// one short cell (a throttled device's first-second allowance alone gives 10%), and the default
/// is what every guide and the server's own tests assume. A device that makes an O_DSYNC write
/// one request (FUA) against a write and a flush gives about twice.
const SYNC_MARGIN: f64 = 1.20;
/// Sequential writes must be this much faster than random ones for flushing a page's
/// neighbours with it to pay (rotating disks: several times; flash: about the same).
const NEIGHBOUR_GAIN: f64 = 1.5;
/// InnoDB: each read or write IO thread keeps up to 256 requests in flight (MariaDB's
/// documentation of innodb_read_io_threads).
const INNODB_SLOTS_PER_THREAD: u32 = 256;

const PG_DOCS: &str = "https://www.postgresql.org/docs/current/runtime-config";
const MARIADB_DOCS: &str = "https://mariadb.com/kb/en/innodb-system-variables/#";

/// One point of a curve of random reads: IOs in flight and the IOPS they gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Depth {
    pub in_flight: u32,
    pub iops: f64,
}

/// A commit's cost with one way of making it durable: its rate, and the latencies of its
/// write and (unless the write itself is durable, O_DSYNC) of its sync call, p50 and p99.
#[derive(Clone, Debug, PartialEq)]
pub struct Commit {
    /// wal_sync_method's name for it.
    pub method: &'static str,
    pub per_s: f64,
    pub write_ns: (u64, u64),
    pub sync_ns: Option<(u64, u64)>,
}

impl Commit {
    /// "p99 write 99.4 ms + sync 102 µs", or "p99 write 71.0 µs" for a durable write.
    fn p99(&self) -> String {
        let w = units::latency(self.write_ns.1 as f64);
        match self.sync_ns {
            Some((_, s)) => format!("p99 write {w} + sync {}", units::latency(s as f64)),
            None => format!("p99 write {w}"),
        }
    }
}

/// Where random reads stop scaling: the smallest depth within [`KNEE_SHARE`] of the best rate,
/// the best rate, and whether the curve still rose at its deepest point (so the knee may lie
/// beyond what was measured).
pub fn knee(curve: &[Depth]) -> Option<(Depth, Depth, bool)> {
    let best = *curve.iter().max_by(|a, b| a.iops.total_cmp(&b.iops))?;
    let mut knee = *curve
        .iter()
        .filter(|d| d.iops >= KNEE_SHARE * best.iops)
        .min_by_key(|d| d.in_flight)?;
    // A shallower depth within [`SAME_RATE`] of the knee's rate is no slower: the knee is where
    // the rate rose, not where a flat curve's noise first crossed the line (a device throttled
    // to 200 reads gave 208 at 1, 210 at 2 and 232 at 16, and 2 was advised).
    while let Some(shallower) = curve
        .iter()
        .filter(|d| d.in_flight < knee.in_flight && d.iops >= SAME_RATE * knee.iops)
        .min_by_key(|d| d.in_flight)
    {
        knee = *shallower;
    }
    let deepest = curve.iter().map(|d| d.in_flight).max()?;
    Some((knee, best, knee.in_flight == deepest))
}

fn setting(name: &str, value: String, default: &str, why: String, reference: String) -> SettingDoc {
    SettingDoc {
        name: name.into(),
        value,
        default: default.into(),
        why,
        reference,
    }
}

fn pg(name: &str, value: String, default: &str, why: String, page: &str) -> SettingDoc {
    setting(
        name,
        value,
        default,
        why,
        format!(
            "{PG_DOCS}-{page}.html#GUC-{}",
            name.replace('_', "-").to_uppercase()
        ),
    )
}

fn maria(name: &str, value: String, default: &str, why: String) -> SettingDoc {
    setting(name, value, default, why, format!("{MARIADB_DOCS}{name}"))
}

fn rate(v: f64) -> String {
    units::count(v)
}

/// `random_page_cost`: what a random page costs against a sequentially fetched one, uncached,
/// never under seq_page_cost (1.0) and never over the default 4.0, which already models random
/// reads 40× slower than sequential ones with 90% of them cached (PostgreSQL's documentation).
pub fn random_page_cost(seq_pages_per_s: f64, random_pages_per_s: f64) -> SettingDoc {
    let ratio = seq_pages_per_s / random_pages_per_s.max(f64::MIN_POSITIVE);
    let value = ((ratio * 10.0).round() / 10.0).clamp(1.0, 4.0);
    let mut why = format!(
        "uncached random 8 KiB reads cost {ratio:.1}× a sequentially read page here: {} against {} pages/s",
        rate(random_pages_per_s),
        rate(seq_pages_per_s)
    );
    if ratio > 4.0 {
        why += "; kept at the default 4.0, which already models random reads 40× slower with 90% of them cached";
    } else if ratio < 1.0 {
        why += "; never under seq_page_cost (1.0)";
    }
    pg(
        "random_page_cost",
        format!("{value:.1}"),
        "4.0",
        why,
        "query",
    )
}

/// `seq_page_cost`: the unit the other costs are counted in; left at 1.0.
pub fn seq_page_cost() -> SettingDoc {
    pg(
        "seq_page_cost",
        "1.0".into(),
        "1.0",
        "the unit the other page costs are counted in: random_page_cost is measured against it"
            .into(),
        "query",
    )
}

/// `effective_io_concurrency` and `maintenance_io_concurrency`: the reads in flight where
/// random reads stop scaling — prefetching more only queues them. `defaults` are the server's
/// (1 and 10 before PostgreSQL 18, 16 and 16 from 18).
pub fn io_concurrency(curve: &[Depth], defaults: (u32, u32)) -> Vec<SettingDoc> {
    let Some((knee, best, open)) = knee(curve) else {
        return Vec::new();
    };
    let one = curve
        .iter()
        .find(|d| d.in_flight == 1)
        .map_or(0.0, |d| d.iops);
    let why = match (knee.in_flight, open) {
        (1, _) => format!(
            "random 8 KiB reads do not go faster with more in flight here ({} IOPS at 1, at best {} at {}): prefetching more only queues them",
            rate(one),
            rate(best.iops),
            best.in_flight
        ),
        (n, false) => format!(
            "random 8 KiB reads rise to {} IOPS at {n} in flight ({:.1}× the {} at 1) and no more than 10% beyond",
            rate(knee.iops),
            knee.iops / one.max(f64::MIN_POSITIVE),
            rate(one)
        ),
        (n, true) => format!(
            "random 8 KiB reads still rose at {n} in flight, the deepest measured ({} IOPS, {:.1}× the {} at 1): at least {n}",
            rate(knee.iops),
            knee.iops / one.max(f64::MIN_POSITIVE),
            rate(one)
        ),
    };
    vec![
        pg(
            "effective_io_concurrency",
            knee.in_flight.to_string(),
            &defaults.0.to_string(),
            why.clone(),
            "resource",
        ),
        pg(
            "maintenance_io_concurrency",
            knee.in_flight.to_string(),
            &defaults.1.to_string(),
            format!("{why} (vacuum and index builds prefetch alike)"),
            "resource",
        ),
    ]
}

/// `wal_sync_method`: the method with the most commits a second, when it beats the default
/// (fdatasync on Linux) by [`SYNC_MARGIN`]; otherwise the default.
pub fn wal_sync_method(commits: &[Commit]) -> Option<SettingDoc> {
    let default = commits.iter().find(|c| c.method == "fdatasync")?;
    let best = commits.iter().max_by(|a, b| a.per_s.total_cmp(&b.per_s))?;
    let all: Vec<String> = commits
        .iter()
        .map(|c| format!("{} {}/s ({})", c.method, rate(c.per_s), c.p99()))
        .collect();
    let (value, why) = if best.method != default.method && best.per_s >= SYNC_MARGIN * default.per_s
    {
        (
            best.method,
            format!(
                "commits of one 8 KiB WAL page: {}; {} gives {:.0}% more than fdatasync",
                all.join(", "),
                best.method,
                (best.per_s / default.per_s - 1.0) * 100.0
            ),
        )
    } else {
        (
            default.method,
            format!(
                "commits of one 8 KiB WAL page: {}; no method gives 20% more than fdatasync",
                all.join(", ")
            ),
        )
    };
    Some(pg("wal_sync_method", value.into(), "fdatasync", why, "wal"))
}

/// The settings that follow the load rather than the storage: left at their defaults, saying so.
pub fn pg_load_bound() -> Vec<SettingDoc> {
    let why = "follows the WAL a load writes between checkpoints, which storage measurements do not see: `--prove --load pgbench` measures it (as `iogauge db pgbench` shows its checkpoints and WAL)";
    vec![
        pg("max_wal_size", "1GB".into(), "1GB", why.into(), "wal"),
        pg(
            "checkpoint_completion_target",
            "0.9".into(),
            "0.9",
            "spreads each checkpoint's writes over 90% of its interval; nothing measured here argues for another spread".into(),
            "wal",
        ),
    ]
}

/// PostgreSQL's checkpoint_timeout default (5 min), the interval a checkpoint should come by
/// rather than by WAL volume.
const CHECKPOINT_TIMEOUT_S: f64 = 300.0;

/// `max_wal_size` from a load's WAL rate: PostgreSQL requests a checkpoint once the WAL since the
/// last reaches max_wal_size / (1 + checkpoint_completion_target), so for checkpoints to come by
/// time (checkpoint_timeout) rather than by volume it must hold the rate × 5 min × 1.9; the
/// smallest power of two GB that does, never under the default 1GB. The load's WAL rate is the
/// proof's, with the defaults: this setting is not itself proven.
pub fn max_wal_size(wal_bytes_per_s: f64, completion_target: f64) -> SettingDoc {
    let needed = wal_bytes_per_s * CHECKPOINT_TIMEOUT_S * (1.0 + completion_target);
    let gib = (needed / (1u64 << 30) as f64).max(1.0);
    let value = gib.log2().ceil().exp2() as u64;
    pg(
        "max_wal_size",
        format!("{value}GB"),
        "1GB",
        format!(
            "the proof's load wrote {}/s of WAL with the defaults: {} in a checkpoint_timeout of 5 min, {} with checkpoint_completion_target {completion_target} on top, so checkpoints come by time, not by volume (from the load, not the storage; not itself proven)",
            units::iec(wal_bytes_per_s as u64),
            units::iec((wal_bytes_per_s * CHECKPOINT_TIMEOUT_S) as u64),
            units::iec(needed as u64)
        ),
        "wal",
    )
}

/// What random page writes sustained: the rate, over how long, and whether a first burst was
/// left out (a result of one interval is taken whole).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sustained {
    pub iops: f64,
    pub seconds: f64,
    pub burst_left_out: bool,
}

/// `innodb_io_capacity` and `innodb_io_capacity_max`: what random page writes sustain once a
/// burst is over is the most background flushing may ask (`_max`); half of it is the steady
/// pace, leaving the other half to the queries' own IO. Rounded down to a hundred, at least
/// 100 (the server's minimum).
pub fn io_capacity(sustained: Sustained) -> Vec<SettingDoc> {
    let hundreds = |v: f64| ((v / 100.0).floor().max(0.0) as u64 * 100).max(100);
    let max = hundreds(sustained.iops);
    let steady = hundreds(max as f64 / 2.0);
    let seconds = match sustained.seconds.is_finite() && sustained.seconds > 0.0 {
        true => sustained.seconds,
        false => 0.0,
    };
    let over = units::duration(std::time::Duration::from_secs_f64(seconds));
    let why = match sustained.burst_left_out {
        true => format!(
            "random 16 KiB writes at 16 in flight sustained {} IOPS over their last {over} (a first burst left out)",
            rate(sustained.iops)
        ),
        false => format!(
            "random 16 KiB writes at 16 in flight made {} IOPS over {over}, the whole cell (too short to leave a first burst out: a longer --cell-time would)",
            rate(sustained.iops)
        ),
    };
    vec![
        maria(
            "innodb_io_capacity",
            steady.to_string(),
            "200",
            format!("{why}: half of it, the other half left to the queries' own IO"),
        ),
        maria(
            "innodb_io_capacity_max",
            max.to_string(),
            "2000",
            format!("{why}: all of it, for flushing that falls behind"),
        ),
    ]
}

/// `innodb_flush_neighbors`: 1 where writing a page's neighbours in order is much faster than
/// writing pages apart (a rotating disk), 0 where it is not (flash: writing neighbours only
/// writes more).
pub fn flush_neighbors(sequential_iops: f64, random_iops: f64) -> SettingDoc {
    let gain = sequential_iops / random_iops.max(f64::MIN_POSITIVE);
    let (value, verdict) = match gain >= NEIGHBOUR_GAIN {
        true => ("1", "flushing a page's neighbours with it pays"),
        false => (
            "0",
            "flushing a page's neighbours with it writes more pages for nothing",
        ),
    };
    maria(
        "innodb_flush_neighbors",
        value.into(),
        "1",
        format!(
            "sequential 16 KiB writes give {} IOPS, {gain:.1}× the {} of random ones: {verdict}",
            rate(sequential_iops),
            rate(random_iops)
        ),
    )
}

/// `innodb_flush_method`: O_DIRECT where direct IO works (the buffer pool holds each page once,
/// not once more in the page cache); fsync where it does not. The default is O_DIRECT from
/// MariaDB 10.6, fsync before (`before_10_6`).
pub fn flush_method(direct: bool, before_10_6: bool) -> SettingDoc {
    let (value, why) = match direct {
        true => ("O_DIRECT", "direct IO works on this storage (every measurement here used it): pages are cached once, in the buffer pool, and not again in the page cache"),
        false => ("fsync", "direct IO does not work on this storage: pages go through the page cache and are made durable with fsync"),
    };
    let default = match before_10_6 {
        true => "fsync",
        false => "O_DIRECT",
    };
    maria("innodb_flush_method", value.into(), default, why.into())
}

/// `innodb_read_io_threads` / `innodb_write_io_threads`: more threads only where the IOs in
/// flight that still pay exceed what the default 4 threads keep (256 each).
pub fn io_threads(read: &[Depth]) -> Vec<SettingDoc> {
    let Some((knee, _, open)) = knee(read) else {
        return Vec::new();
    };
    let slots = 4 * INNODB_SLOTS_PER_THREAD;
    let needed = knee.in_flight.div_ceil(INNODB_SLOTS_PER_THREAD).max(4);
    let read_why = format!(
        "random 16 KiB reads stop scaling at {}{} in flight; the 4 default threads keep up to {} (256 each)",
        if open { "no less than " } else { "" },
        knee.in_flight,
        units::count(f64::from(slots))
    );
    vec![
        maria(
            "innodb_read_io_threads",
            needed.to_string(),
            "4",
            read_why,
        ),
        maria(
            "innodb_write_io_threads",
            "4".into(),
            "4",
            "page flushes were measured at 16 in flight, far under the 1,024 the 4 default threads keep: nothing here asks for more".into(),
        ),
    ]
}

/// `innodb_flush_log_at_trx_commit`: left at 1 (durable commits); the cost of each commit's
/// redo sync is said, since 0 and 2 trade commits lost in a crash for it — a choice of
/// durability, not of storage.
pub fn flush_log_at_trx_commit(redo: &Commit) -> SettingDoc {
    maria(
        "innodb_flush_log_at_trx_commit",
        "1".into(),
        "1",
        format!(
            "a commit's 4 KiB redo write and sync take {}/s in a row here ({}); 2 or 0 skip the sync by losing up to a second of commits in a crash, a choice of durability rather than storage",
            rate(redo.per_s),
            redo.p99()
        ),
    )
}

/// `innodb_log_file_size`: follows the load's redo rate, which storage cells do not see.
pub fn log_file_size() -> SettingDoc {
    maria(
        "innodb_log_file_size",
        "96M".into(),
        "96M",
        "follows the redo a load writes between checkpoints, which storage measurements do not see: run `iogauge db tpcc --server mariadb` and read its redo rate".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(points: &[(u32, f64)]) -> Vec<Depth> {
        points
            .iter()
            .map(|&(in_flight, iops)| Depth { in_flight, iops })
            .collect()
    }

    #[test]
    fn random_page_cost_is_the_measured_ratio_within_one_and_the_default() {
        let near = random_page_cost(49_000.0, 41_000.0);
        assert_eq!(near.value, "1.2");
        assert!(
            near.why.contains("41,000 against 49,000 pages/s"),
            "{}",
            near.why
        );
        assert!(near.changed());
        // A rotating disk's 40×: capped at the default, which already assumes caching.
        let disk = random_page_cost(12_800.0, 200.0);
        assert_eq!(disk.value, "4.0");
        assert!(!disk.changed());
        assert!(disk.why.contains("kept at the default"), "{}", disk.why);
        // Random faster than sequential (a cache): never under seq_page_cost.
        assert_eq!(random_page_cost(900.0, 1_000.0).value, "1.0");
        assert_eq!(random_page_cost(25_000.0, 10_000.0).value, "2.5");
    }

    #[test]
    fn io_concurrency_is_where_reads_stop_scaling() {
        let flash = curve(&[
            (1, 10_000.0),
            (2, 19_000.0),
            (4, 36_000.0),
            (8, 60_000.0),
            (16, 64_000.0),
            (32, 65_000.0),
        ]);
        let s = io_concurrency(&flash, (1, 10));
        assert_eq!((s[0].value.as_str(), s[1].value.as_str()), ("8", "8"));
        assert!(s[0].why.contains("at 8 in flight"), "{}", s[0].why);
        // 90% of the best is the line: 58,499 at 8 would leave it to 16.
        let short = curve(&[(1, 10_000.0), (8, 58_499.0), (16, 64_000.0), (32, 65_000.0)]);
        assert_eq!(io_concurrency(&short, (1, 10))[0].value, "16");
        // A device that serves one read at a time (a throttled IOPS limit).
        let flat = curve(&[(1, 200.0), (2, 201.0), (64, 199.0)]);
        let s = io_concurrency(&flat, (1, 10));
        assert_eq!(s[0].value, "1");
        assert!(!s[0].changed());
        assert!(s[1].changed(), "maintenance_io_concurrency's default is 10");
        assert!(s[0].why.contains("do not go faster"), "{}", s[0].why);
        // Still rising at the deepest point: at least that.
        let open = curve(&[(1, 1_000.0), (32, 20_000.0), (64, 40_000.0)]);
        assert!(io_concurrency(&open, (16, 16))[0]
            .why
            .contains("at least 64"));
        assert!(io_concurrency(&[], (1, 10)).is_empty());
    }

    fn commit(method: &'static str, per_s: f64) -> Commit {
        Commit {
            method,
            per_s,
            write_ns: (50_000, 90_000),
            sync_ns: Some((1_000_000, 2_000_000)),
        }
    }

    #[test]
    fn wal_sync_method_changes_only_for_a_fifth_more_commits() {
        let won = wal_sync_method(&[
            commit("fdatasync", 1_000.0),
            commit("fsync", 990.0),
            commit("open_datasync", 1_200.0),
        ])
        .unwrap();
        assert_eq!(won.value, "open_datasync");
        assert!(won.why.contains("20% more than fdatasync"), "{}", won.why);
        let near = wal_sync_method(&[
            commit("fdatasync", 1_000.0),
            commit("open_datasync", 1_199.0),
        ])
        .unwrap();
        assert_eq!(near.value, "fdatasync");
        assert!(!near.changed());
        assert!(wal_sync_method(&[commit("fsync", 1.0)]).is_none());
    }

    #[test]
    fn max_wal_size_holds_a_checkpoint_timeouts_wal() {
        // 1 MiB/s: 300 MiB in 5 min, 570 MiB with the target: the default holds it.
        let small = max_wal_size(1_048_576.0, 0.9);
        assert_eq!(small.value, "1GB");
        assert!(!small.changed());
        assert!(small.why.contains("1 MiB/s of WAL"), "{}", small.why);
        // 5 MiB/s: 2.8 GiB needed, 4GB the power of two that holds it.
        assert_eq!(max_wal_size(5.0 * 1_048_576.0, 0.9).value, "4GB");
        // Exactly 2 GiB needed: 2GB.
        let two = (2u64 << 30) as f64 / (300.0 * 1.9);
        assert_eq!(max_wal_size(two, 0.9).value, "2GB");
    }

    #[test]
    fn io_capacity_is_what_writes_sustain_halved_for_the_steady_pace() {
        let s = io_capacity(Sustained {
            iops: 4_321.0,
            seconds: 3.0,
            burst_left_out: true,
        });
        assert_eq!((s[0].value.as_str(), s[1].value.as_str()), ("2100", "4300"));
        assert!(
            s[1].why.contains("4,321 IOPS over their last 3.0 s"),
            "{}",
            s[1].why
        );
        // A slow device: never under the server's minimum.
        let slow = io_capacity(Sustained {
            iops: 150.0,
            seconds: 1.0,
            burst_left_out: false,
        });
        assert!(slow[0].why.contains("the whole cell"), "{}", slow[0].why);
        // A NaN length cannot panic the sentence.
        let odd = io_capacity(Sustained {
            iops: 150.0,
            seconds: f64::NAN,
            burst_left_out: true,
        });
        assert_eq!(odd[1].value, "100");
        assert_eq!(
            (slow[0].value.as_str(), slow[1].value.as_str()),
            ("100", "100")
        );
    }

    #[test]
    fn flush_neighbors_pays_only_where_sequential_writes_are_much_faster() {
        assert_eq!(flush_neighbors(9_000.0, 6_000.0).value, "1");
        assert_eq!(flush_neighbors(8_999.0, 6_000.0).value, "0");
        assert!(flush_neighbors(8_999.0, 6_000.0).changed());
    }

    #[test]
    fn flush_method_is_direct_where_direct_io_works() {
        assert_eq!(flush_method(true, false).value, "O_DIRECT");
        assert!(!flush_method(true, false).changed());
        assert_eq!(flush_method(false, false).value, "fsync");
        // Before 10.6 the default was fsync: O_DIRECT is then the change.
        assert!(flush_method(true, true).changed());
    }

    #[test]
    fn io_threads_grow_only_past_what_four_threads_keep() {
        let s = io_threads(&curve(&[(1, 100.0), (64, 5_000.0)]));
        assert_eq!(s[0].value, "4");
        assert!(s[0].why.contains("no less than 64"), "{}", s[0].why);
        let deep = io_threads(&curve(&[(1, 100.0), (2_048, 50_000.0)]));
        assert_eq!(deep[0].value, "8");
    }

    #[test]
    fn commit_cost_is_said_and_durability_kept() {
        let s = flush_log_at_trx_commit(&commit("fdatasync", 812.0));
        assert_eq!(s.value, "1");
        assert!(s.why.contains("812/s"), "{}", s.why);
    }

    #[test]
    fn references_name_each_setting_in_its_servers_documentation() {
        assert!(random_page_cost(1.0, 1.0)
            .reference
            .ends_with("runtime-config-query.html#GUC-RANDOM-PAGE-COST"));
        assert!(flush_method(true, false)
            .reference
            .ends_with("#innodb_flush_method"));
    }

    /// A flat curve's noise is no knee (CI, a device throttled to 200 reads a second): 208 at 1
    /// and 210 at 2 are one rate, though 208 falls just under 90% of the best, 232.
    #[test]
    fn a_flat_curves_noise_is_no_knee() {
        let curve: Vec<Depth> = [
            (1, 208.0),
            (2, 210.0),
            (4, 219.0),
            (8, 225.0),
            (16, 232.0),
            (64, 231.0),
        ]
        .into_iter()
        .map(|(in_flight, iops)| Depth { in_flight, iops })
        .collect();
        let (at, best, open) = knee(&curve).unwrap();
        assert_eq!((at.in_flight, best.in_flight, open), (1, 16, false));
        // Near miss: a real rise keeps its knee where the rate reached 90% of the best.
        let rising: Vec<Depth> = [(1, 10e3), (2, 19e3), (4, 35e3), (8, 60e3), (16, 62e3)]
            .into_iter()
            .map(|(in_flight, iops)| Depth { in_flight, iops })
            .collect();
        assert_eq!(knee(&rising).unwrap().0.in_flight, 8);
    }
}
