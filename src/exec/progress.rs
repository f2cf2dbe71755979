//! What a running suite says on stderr: each finished cell in a line, and the time left.

use crate::model::ResultDoc;
use crate::suite::cells::{self, Cell};
use crate::suite::Length;
use crate::units;
use std::time::Duration;

/// The run's remaining time, from each cell's planned time; fixed-data cells are estimated
/// from the rate the finished ones moved data at (or 100 MB/s before any finished).
#[derive(Default)]
pub(super) struct Eta {
    data_bytes: f64,
    data_secs: f64,
    /// Start-up and wind-down per cell beyond its planned time.
    overhead_secs: f64,
    timed: u32,
}

impl Eta {
    pub(super) fn record(&mut self, cell: &Cell, r: &ResultDoc, took: Duration) {
        match cell.planned_time() {
            Some(t) => {
                self.overhead_secs += (took.as_secs_f64() - t.as_secs_f64()).max(0.0);
                self.timed += 1;
            }
            None => {
                self.data_bytes += r.bytes as f64;
                self.data_secs += took.as_secs_f64();
            }
        }
    }

    pub(super) fn left<'a>(&self, cells: impl Iterator<Item = &'a Cell>, range: u64) -> String {
        let rate = if self.data_secs > 0.0 {
            self.data_bytes / self.data_secs
        } else {
            100e6
        };
        let per_cell = if self.timed > 0 {
            self.overhead_secs / f64::from(self.timed)
        } else {
            0.0
        };
        let secs: f64 = cells
            .map(|c| match c.length {
                Length::Time(t) => t.as_secs_f64() + per_cell,
                Length::Data(a) => {
                    let span = c.range.map_or(range, |r| r.min(range));
                    cells::data_bytes(a, span) as f64 / rate.max(1.0)
                }
            })
            .sum();
        units::duration(Duration::from_secs_f64(secs))
    }
}

/// One finished cell, for the log on stderr.
pub(super) fn one_line(name: &str, r: &ResultDoc) -> String {
    // Each p99 says what it is the p99 of: a sync cell has two.
    let what = match (&r.read, &r.write) {
        (Some(_), None) => "read",
        (None, Some(_)) => "write",
        _ => "IO",
    };
    let mut s = format!(
        "{name}: {} IOPS · {} · {what} p99 {}",
        units::count(r.iops),
        units::bw(r.bw_bytes),
        units::latency(r.lat_ns.p99 as f64)
    );
    if let Some(sy) = &r.sync {
        s.push_str(&format!(
            " · {} syncs/s · sync p99 {}",
            units::count(sy.per_s),
            units::latency(sy.lat_ns.p99 as f64)
        ));
    }
    if r.interrupted {
        s.push_str(" (interrupted)");
    }
    s
}
