//! The database and its storage on one time axis (issue 27): while the load runs, a thread
//! takes one sample per step — the devices' counters from /sys/class/block/DEV/stat and the
//! server's own flush counters through one short client query — and afterwards the samples,
//! the per-second transactions and the server log's checkpoints become a [`TimelineDoc`].
//!
//! Samples are stamped with the wall clock, because the transactions (pgbench's log) and the
//! checkpoints (the server log) are stamped with it too; cumulative counters are interpolated
//! to the steps' boundaries, so a sample taken 300 ms late does not move its IO to the wrong
//! second.

use crate::model::{DeviceStep, FlushDoc, Sample, TimelineDoc, TimelineRow};
use iogauge_sysinfo::diskstats::DiskStat;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One sample: when, each device's cumulative counters, the server's counters and levels.
#[derive(Clone, Debug, Default)]
pub struct Raw {
    /// Microseconds since the epoch.
    pub at_us: u64,
    pub devices: Vec<Option<DiskStat>>,
    /// Empty when the server could not be asked.
    pub server: BTreeMap<String, f64>,
}

/// Microseconds since the epoch, now.
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Samples `devices` and `server` every `step` until `stop` is set; one sample at the start and
/// one at the end, so the whole load lies between two samples. Run it in a scoped thread.
pub fn sample(
    devices: &[String],
    server: &(dyn Fn() -> BTreeMap<String, f64> + Sync),
    step: Duration,
    stop: &AtomicBool,
) -> Vec<Raw> {
    let take = || Raw {
        at_us: now_us(),
        devices: devices.iter().map(|d| DiskStat::read(d)).collect(),
        server: server(),
    };
    let mut out = vec![take()];
    let mut next = std::time::Instant::now() + step;
    while !stop.load(Ordering::SeqCst) {
        let now = std::time::Instant::now();
        if now < next {
            // Short naps so a stop is seen within 20 ms: this paces a sampler, it waits for
            // nothing.
            std::thread::sleep((next - now).min(Duration::from_millis(20)));
            continue;
        }
        next += step;
        out.push(take());
    }
    out.push(take());
    out
}

/// Counters of the server that are levels, not running totals: kept as sampled.
const LEVELS: [&str; 2] = ["Innodb_checkpoint_age", "Innodb_buffer_pool_pages_dirty"];

/// The value of `f` at `t_us`, linear between the samples around it (held at the ends).
fn at(raws: &[Raw], t_us: u64, f: impl Fn(&Raw) -> Option<f64>) -> Option<f64> {
    let pts: Vec<(u64, f64)> = raws.iter().filter_map(|r| Some((r.at_us, f(r)?))).collect();
    let (first, last) = (pts.first()?, pts.last()?);
    if t_us <= first.0 {
        return Some(first.1);
    }
    if t_us >= last.0 {
        return Some(last.1);
    }
    let k = pts.partition_point(|p| p.0 <= t_us);
    let (a, b) = (pts[k - 1], pts[k]);
    let w = (t_us - a.0) as f64 / (b.0 - a.0).max(1) as f64;
    Some(a.1 + (b.1 - a.1) * w)
}

/// The timeline of one run: `series` is the transactions per step (the result's timeseries,
/// step `step_s`, time zero at `start_us`), `raws` the sampler's samples.
pub fn build(
    start_us: u64,
    step_s: f64,
    series: &[Sample],
    raws: &[Raw],
    device_names: &[String],
    server_source: &str,
    flushes: Vec<FlushDoc>,
) -> TimelineDoc {
    let step_us = (step_s * 1e6) as u64;
    let rows = series
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let (a, b) = (
                start_us + k as u64 * step_us,
                start_us + (k as u64 + 1) * step_us,
            );
            let delta = |f: &dyn Fn(&Raw) -> Option<f64>| Some(at(raws, b, f)? - at(raws, a, f)?);
            let devices = (0..device_names.len())
                .map(|i| {
                    let field = |g: fn(&DiskStat) -> u64| {
                        delta(&move |r: &Raw| r.devices.get(i)?.as_ref().map(|d| g(d) as f64))
                    };
                    let ms = step_s * 1000.0;
                    let ios = field(|d| d.reads)? + field(|d| d.writes)?;
                    let ticks = field(|d| d.read_ticks_ms)? + field(|d| d.write_ticks_ms)?;
                    Some(DeviceStep {
                        read_bytes_s: field(|d| d.sectors_read)? * 512.0 / step_s,
                        write_bytes_s: field(|d| d.sectors_written)? * 512.0 / step_s,
                        iops: ios / step_s,
                        util: (field(|d| d.io_ticks_ms)? / ms).clamp(0.0, 1.0),
                        queue: field(|d| d.time_in_queue_ms)? / ms,
                        lat_ms: if ios > 0.0 { ticks / ios } else { 0.0 },
                    })
                })
                .collect();
            let names: Vec<&String> = raws.iter().flat_map(|r| r.server.keys()).collect();
            let mut server = BTreeMap::new();
            for name in names {
                if server.contains_key(name.as_str()) || server.contains_key(&per_s(name)) {
                    continue;
                }
                let get = |r: &Raw| r.server.get(name).copied();
                if LEVELS.contains(&name.as_str()) {
                    if let Some(v) = at(raws, b, get) {
                        server.insert(name.clone(), v);
                    }
                } else if let Some(d) = delta(&get) {
                    server.insert(per_s(name), d / step_s);
                }
            }
            TimelineRow {
                t_s: s.t_s,
                tps: s.iops,
                lat_p99_ns: s.lat_p99_ns,
                server,
                devices,
            }
        })
        .collect();
    TimelineDoc {
        started_unix_s: start_us as f64 / 1e6,
        step_s,
        devices: device_names.to_vec(),
        server_source: server_source.into(),
        rows,
        flushes,
    }
}

fn per_s(name: &str) -> String {
    format!("{name}_per_s")
}

/// Appends `more` (a later repeat) to `into`, its seconds shifted past the end of `into`.
pub fn append(into: &mut TimelineDoc, more: TimelineDoc) {
    let offset = into.rows.last().map_or(0.0, |r| r.t_s);
    let n = into.flushes.len() as u32;
    into.rows.extend(more.rows.into_iter().map(|r| TimelineRow {
        t_s: r.t_s + offset,
        ..r
    }));
    into.flushes
        .extend(more.flushes.into_iter().map(|f| FlushDoc {
            n: f.n + n,
            start_s: f.start_s + offset,
            end_s: f.end_s + offset,
            ..f
        }));
}

/// The checkpoints in a PostgreSQL server log (`log_checkpoints = on`, `log_timezone = UTC`,
/// lines starting with `%m`) that overlap the run from `start_us` to `end_us`, in seconds since
/// `start_us`. A checkpoint begins at its "checkpoint starting: …" line and ends at the next
/// "checkpoint complete: wrote N buffers …"; restartpoints count the same.
pub fn checkpoints_in_log(log: &str, start_us: u64, end_us: u64) -> Vec<FlushDoc> {
    let mut out: Vec<FlushDoc> = Vec::new();
    let mut open: Option<(u64, String)> = None;
    let end_s = end_us.saturating_sub(start_us) as f64 / 1e6;
    let secs = |t: u64| (t as f64 - start_us as f64) / 1e6;
    let mut push = |begin: u64, end: Option<u64>, trigger: String, pages: Option<u64>| {
        let finish = end.unwrap_or(end_us);
        if finish < start_us || begin > end_us {
            return;
        }
        out.push(FlushDoc {
            what: "checkpoint".into(),
            n: 0,
            start_s: secs(begin).max(0.0),
            end_s: secs(finish).min(end_s),
            trigger,
            pages,
            complete: end.is_some(),
        });
    };
    for line in log.lines() {
        let Some(t) = log_time_us(line) else { continue };
        if let Some(rest) = after(line, &["checkpoint starting:", "restartpoint starting:"]) {
            open = Some((t, rest.trim().to_string()));
        } else if let Some(rest) = after(line, &["checkpoint complete:", "restartpoint complete:"])
        {
            // "wrote 1234 buffers (7.5%); …"
            let pages = rest
                .trim()
                .strip_prefix("wrote ")
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok());
            let (begin, trigger) = open.take().unwrap_or((t, String::new()));
            push(begin, Some(t), trigger, pages);
        }
    }
    if let Some((begin, trigger)) = open {
        push(begin, None, trigger, None);
    }
    for (i, f) in out.iter_mut().enumerate() {
        f.n = i as u32 + 1;
    }
    out
}

fn after<'a>(line: &'a str, marks: &[&str]) -> Option<&'a str> {
    marks
        .iter()
        .find_map(|m| line.find(m).map(|i| &line[i + m.len()..]))
}

/// The time of a log line that starts "2026-11-22 21:22:38.846 UTC [123] LOG: …".
fn log_time_us(line: &str) -> Option<u64> {
    let stamp = line.get(..23)?;
    if !line[23..].starts_with(" UTC") {
        return None;
    }
    let t = humantime::parse_rfc3339_weak(stamp).ok()?;
    Some(t.duration_since(UNIX_EPOCH).ok()?.as_micros() as u64)
}

/// Seconds of InnoDB page flushing well above its usual rate (at least twice the run's median
/// and 100 pages/s), joined into intervals: InnoDB logs no checkpoints, so a burst of flushing
/// is what a checkpoint looks like from outside.
pub fn flush_bursts(t: &TimelineDoc) -> Vec<FlushDoc> {
    let key = "Innodb_buffer_pool_pages_flushed_per_s";
    let rates: Vec<f64> = t
        .rows
        .iter()
        .map(|r| r.server.get(key).copied().unwrap_or(0.0))
        .collect();
    let mut sorted = rates.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let floor = (2.0 * median).max(100.0);
    let mut out: Vec<FlushDoc> = Vec::new();
    for (k, &v) in rates.iter().enumerate() {
        if v < floor {
            continue;
        }
        let (a, b) = (k as f64 * t.step_s, (k + 1) as f64 * t.step_s);
        let pages = (v * t.step_s) as u64;
        match out.last_mut() {
            Some(f) if (f.end_s - a).abs() < 1e-9 => {
                f.end_s = b;
                f.pages = Some(f.pages.unwrap_or(0) + pages);
            }
            _ => out.push(FlushDoc {
                what: "page flushing".into(),
                n: out.len() as u32 + 1,
                start_s: a,
                end_s: b,
                trigger: String::new(),
                pages: Some(pages),
                complete: true,
            }),
        }
    }
    out
}

/// What [`watch`] saw around a load: the devices over the whole load, the timeline's samples,
/// and when the load began.
pub struct Watched {
    pub windows: Vec<iogauge_sysinfo::diskstats::DeviceWindow>,
    pub raws: Vec<Raw>,
    pub start_us: u64,
}

impl Watched {
    /// The load's timeline: its transactions per second (`series`, time zero at the start)
    /// beside the samples, with the server's flushes since `mark` (its log's length before).
    pub fn timeline(
        &self,
        s: &dyn super::backend::Backend,
        mark: u64,
        series: &[Sample],
        timeline_devices: &[String],
    ) -> TimelineDoc {
        let mut seconds = build(
            self.start_us,
            1.0,
            series,
            &self.raws,
            timeline_devices,
            s.probe_source(),
            Vec::new(),
        );
        seconds.flushes = s.flushes(mark, &seconds, self.start_us);
        seconds
    }
}

/// Runs `load` while the devices (`devices`: the whole run; `timeline_devices`: each second)
/// and the server `s` are watched; what `load` returned, and what was seen.
pub fn watch<R>(
    s: &dyn super::backend::Backend,
    devices: &[String],
    timeline_devices: &[String],
    load: impl FnOnce() -> R,
) -> (R, Watched) {
    let watch = iogauge_sysinfo::diskstats::DeviceWatch::start(devices, Duration::from_secs(1));
    let stop = AtomicBool::new(false);
    let probe = || s.probe();
    let start_us = now_us();
    let (out, raws) = std::thread::scope(|scope| {
        let sampler =
            scope.spawn(|| sample(timeline_devices, &probe, Duration::from_secs(1), &stop));
        let out = load();
        stop.store(true, Ordering::SeqCst);
        (out, sampler.join().unwrap_or_default())
    });
    let windows = watch.stop();
    (
        out,
        Watched {
            windows,
            raws,
            start_us,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_are_read_from_the_log_and_put_on_the_runs_axis() {
        // Start at 21:22:30.000 UTC; the manual checkpoint before the run is left out, the one
        // still running at the end closes at the run's end.
        let start = log_time_us("2026-11-22 21:22:30.000 UTC").unwrap();
        let log = "\
2026-11-22 21:22:28.100 UTC [7] LOG:  checkpoint starting: immediate force wait
2026-11-22 21:22:28.300 UTC [7] LOG:  checkpoint complete: wrote 12 buffers (0.1%); 0 WAL file(s) added
2026-11-22 21:22:41.500 UTC [7] LOG:  checkpoint starting: wal
2026-11-22 21:22:48.250 UTC [7] LOG:  checkpoint complete: wrote 1834 buffers (11.2%); 0 WAL file(s) added, 0 removed, 2 recycled; write=6.1 s
2026-11-22 21:22:52.000 UTC [7] LOG:  checkpoint starting: time
";
        let c = checkpoints_in_log(log, start, start + 25_000_000);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!((c[0].n, c[0].trigger.as_str()), (1, "wal"));
        assert!((c[0].start_s - 11.5).abs() < 1e-6 && (c[0].end_s - 18.25).abs() < 1e-6);
        assert_eq!((c[0].pages, c[0].complete), (Some(1834), true));
        assert!((c[1].start_s - 22.0).abs() < 1e-6 && (c[1].end_s - 25.0).abs() < 1e-6);
        assert!(!c[1].complete);
    }

    #[test]
    fn counters_become_rates_per_step_between_samples() {
        let stat = |w: u64, ticks: u64, q: u64| DiskStat {
            writes: w,
            sectors_written: w * 16,
            write_ticks_ms: w,
            io_ticks_ms: ticks,
            time_in_queue_ms: q,
            ..DiskStat::default()
        };
        // Samples at 0, 1.5 s and 3 s; the counters grow evenly, so each second holds 2/3 of
        // a 1.5 s gap's growth.
        let raw = |t: u64, k: u64| Raw {
            at_us: 1_000_000_000 + t,
            devices: vec![Some(stat(300 * k, 750 * k, 3000 * k))],
            server: BTreeMap::from([
                ("wal_bytes".to_string(), 1.5e6 * k as f64),
                ("Innodb_checkpoint_age".to_string(), 7.0),
            ]),
        };
        let raws = [raw(0, 0), raw(1_500_000, 1), raw(3_000_000, 2)];
        let series: Vec<Sample> = (1..=4)
            .map(|k| Sample {
                t_s: k as f64,
                iops: 100.0 * k as f64,
                bw_bytes: 0.0,
                lat_p50_ns: 1,
                lat_p99_ns: 2,
            })
            .collect();
        let t = build(
            1_000_000_000,
            1.0,
            &series,
            &raws,
            &["loop1".into()],
            "x",
            Vec::new(),
        );
        assert_eq!(t.rows.len(), 4);
        let d = t.rows[0].devices[0].unwrap();
        assert!((d.iops - 200.0).abs() < 1e-6, "{d:?}");
        assert!((d.write_bytes_s - 200.0 * 16.0 * 512.0).abs() < 1e-3);
        assert!((d.util - 0.5).abs() < 1e-9 && (d.queue - 2.0).abs() < 1e-9);
        assert!((d.lat_ms - 1.0).abs() < 1e-9);
        assert!((t.rows[1].server["wal_bytes_per_s"] - 1e6).abs() < 1e-3);
        assert_eq!(t.rows[1].server["Innodb_checkpoint_age"], 7.0);
        // Past the last sample nothing moves.
        assert_eq!(t.rows[3].devices[0].unwrap().iops, 0.0);
    }

    #[test]
    fn innodb_bursts_of_flushing_become_intervals() {
        let rows = [10.0, 12.0, 900.0, 1000.0, 11.0, 10.0, 500.0]
            .iter()
            .enumerate()
            .map(|(k, &v)| TimelineRow {
                t_s: k as f64 + 1.0,
                server: BTreeMap::from([("Innodb_buffer_pool_pages_flushed_per_s".into(), v)]),
                ..TimelineRow::default()
            })
            .collect();
        let t = TimelineDoc {
            step_s: 1.0,
            rows,
            ..TimelineDoc::default()
        };
        let b = flush_bursts(&t);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!(
            (b[0].start_s, b[0].end_s, b[0].pages),
            (2.0, 4.0, Some(1900))
        );
        assert_eq!((b[1].n, b[1].start_s), (2, 6.0));
    }
}
