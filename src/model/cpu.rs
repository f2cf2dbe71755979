//! The CPU time a result's IOs cost the process.

use serde::{Deserialize, Serialize};

/// The process's CPU time over a measurement, and its cost per IO.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuDoc {
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) / ios, in microseconds.
    pub per_io_us: f64,
}

impl CpuDoc {
    /// CPU seconds spent on `ios` IOs.
    pub fn new(user_s: f64, sys_s: f64, ios: u64) -> CpuDoc {
        CpuDoc {
            user_s,
            sys_s,
            per_io_us: if ios > 0 {
                (user_s + sys_s) * 1e6 / ios as f64
            } else {
                0.0
            },
        }
    }
}
