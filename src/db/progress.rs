//! A database run's progress on a terminal: how much of the measurement is done, the time
//! left, and the last second's transactions per second where the load says them. Drawn on
//! stderr only when it is a terminal, at most four times a second; gone when the measurement
//! ends.

use crate::units;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

pub struct Progress {
    bar: Option<ProgressBar>,
    total: Duration,
}

impl Progress {
    /// A bar for a measurement of `total`.
    pub fn start(total: Duration) -> Progress {
        let target = ProgressDrawTarget::stderr_with_hz(4);
        if target.is_hidden() {
            return Progress { bar: None, total };
        }
        let bar = ProgressBar::with_draw_target(Some(total.as_millis() as u64), target);
        bar.set_style(
            ProgressStyle::with_template("[{elapsed_precise}] {wide_bar} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Progress {
            bar: Some(bar),
            total,
        }
    }

    /// `done` of the measurement, at `tps` over the last second when the load knows it.
    pub fn at(&self, done: Duration, tps: Option<f64>) {
        if let Some(b) = &self.bar {
            let done = done.min(self.total);
            b.set_position(done.as_millis() as u64);
            b.set_message(format!(
                "{} left{}",
                units::duration(self.total - done),
                tps.map_or(String::new(), |t| format!(" · {} TPS", units::count(t)))
            ));
        }
    }

    /// Before the measurement: a ramp of `ramp` so far, of at most `limit`.
    pub fn ramp(&self, ramp: Duration, limit: Duration, tps: f64) {
        if let Some(b) = &self.bar {
            b.set_position(0);
            b.set_message(format!(
                "ramp-up {} of at most {}, until the rate settles · {} TPS",
                units::duration(ramp),
                units::duration(limit),
                units::count(tps)
            ));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
