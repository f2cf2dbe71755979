//! `iogauge db advise`'s answer, kept with the run that measured it: each setting with its
//! default, the measurement and rule it comes from, and the documentation that defines it; and
//! with `--prove`, the load run with the defaults against the load run with the advice.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AdviceDoc {
    /// "PostgreSQL" or "MariaDB".
    pub server: String,
    /// The server's version the defaults are from, as its programs say it; empty when the
    /// server is not installed here (the defaults are then Debian 12's version's).
    pub version: String,
    /// Where the data would live, as given (the commits may have run elsewhere: `--wal`).
    #[serde(default)]
    pub target: String,
    /// The server's page, bytes (8 KiB PostgreSQL, 16 KiB InnoDB).
    pub page_bytes: u64,
    pub settings: Vec<SettingDoc>,
    /// What the advice cannot know, said once.
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<ProofDoc>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SettingDoc {
    pub name: String,
    /// As the server's configuration file takes it.
    pub value: String,
    pub default: String,
    /// The measurement and the rule, in one sentence with their numbers and units.
    pub why: String,
    /// The server's documentation of the setting.
    pub reference: String,
}

impl SettingDoc {
    /// Only a setting that differs from the server's default goes into the snippet.
    pub fn changed(&self) -> bool {
        self.value != self.default
    }
}

/// `--prove`: the same load on a fresh server with the defaults and with the advice,
/// alternating, each side `runs` times.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProofDoc {
    /// "tpcc", "pgbench" or "sysbench".
    pub load: String,
    /// The load's rate: "NOPM" or "TPS".
    pub unit: String,
    pub window_s: f64,
    pub defaults: Vec<ProofRun>,
    pub advised: Vec<ProofRun>,
    /// The advice's mean rate against the defaults', as a fraction (+0.05 = 5% more).
    pub change: f64,
    /// Welch's two-sided p-value of the rates; absent when a side has fewer than two runs.
    pub p_value: Option<f64>,
    /// "better", "worse" or "same": better or worse only when significant (p < 0.05) and
    /// beyond the noise threshold (2%).
    pub verdict: String,
    /// The p99 latency's change (the advice's mean against the defaults', +0.05 = 5% slower)
    /// and its Welch p-value.
    #[serde(default)]
    pub p99_change: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_p_value: Option<f64>,
    /// The WAL the load wrote with the defaults, bytes a second (PostgreSQL's pg_stat_wal, with
    /// pgbench): what max_wal_size follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_bytes_per_s: Option<f64>,
    /// The changed settings as the advised servers reported them (`SHOW`, `@@`), so the proof
    /// shows the advice was in force, not only asked for.
    #[serde(default)]
    pub applied: std::collections::BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProofRun {
    /// The run's id (`iogauge show RUN_ID` when stored).
    pub run_id: String,
    pub rate: f64,
    /// Transaction latency p99, ms.
    pub p99_ms: f64,
}
