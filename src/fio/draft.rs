//! A job as its options are read (`Draft`), and one option as its reader sees it (`Arg`):
//! what the option table (`options`) and the readers beside it (`amounts`) share.

use super::ini::Loc;
use super::values::{size, time, DirRates};
use super::Job;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// A job's options by name, each with its value as typed and where it was set.
pub(super) type Set = BTreeMap<String, (String, Loc)>;

/// A job as its options are read: the job, and what some options leave for `fixup`, which
/// needs others read first.
pub(super) struct Draft {
    pub job: Job,
    /// `rwmixread`, or 100 − `rwmixwrite`.
    pub mix: Option<u8>,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub buffered: Option<bool>,
    /// `rate=` (bytes per second) or `rate_iops=` for reads and for writes (a direction
    /// without one unpaced), in IOs of the job once the sizes and the pattern are known.
    pub rate: Option<DirRates>,
    pub number_ios: Option<u64>,
    pub blockalign: Option<u64>,
}

impl Draft {
    pub fn new(job: Job) -> Draft {
        Draft {
            job,
            mix: None,
            filename: None,
            directory: None,
            buffered: None,
            rate: None,
            number_ios: None,
            blockalign: None,
        }
    }
}

/// One option as its reader sees it, with the job's others for the rules that read them.
pub(super) struct Arg<'a> {
    pub key: &'a str,
    pub v: &'a str,
    pub at: &'a Loc,
    pub kb_base: u64,
    pub set: &'a Set,
}

impl Arg<'_> {
    /// A refusal of this option's value, with where it was set.
    pub(super) fn bad(&self, why: impl fmt::Display) -> String {
        format!("{}: {}={}: {why}", self.at, self.key, self.v)
    }

    /// The value read by `value` into `field`, or refused with `value`'s reason.
    pub(super) fn put<T>(&self, field: &mut T, value: Result<T, String>) -> Result<(), String> {
        *field = value.map_err(|e| self.bad(e))?;
        Ok(())
    }

    /// The value checked by `value`, and kept in the job's settings only.
    pub(super) fn check<T>(&self, value: Result<T, String>) -> Result<(), String> {
        value.map(drop).map_err(|e| self.bad(e))
    }

    pub(super) fn size(&self) -> Result<u64, String> {
        size(self.v, self.kb_base).map_err(|e| self.bad(e))
    }

    pub(super) fn time(&self) -> Result<Duration, String> {
        time(self.v).map_err(|e| self.bad(e))
    }
}
