//! `db advise` for people: each setting with its value, its default, the measurement and rule
//! behind it and where the server documents it; the notes; the proof's table.

use crate::model::{AdviceDoc, ProofDoc};
use crate::units;

/// The advice, setting by setting.
pub fn text(a: &AdviceDoc, target: &str) -> String {
    let version = match a.version.is_empty() {
        true => String::new(),
        false => format!(" {}", a.version),
    };
    let changed = a.settings.iter().filter(|s| s.changed()).count();
    let mut s = format!(
        "\n{}{version} settings for {target}: {changed} of {} changed from the default\n\n",
        a.server,
        a.settings.len()
    );
    for set in &a.settings {
        let mark = match set.changed() {
            true => format!("(default {})", set.default),
            false => "(the default)".into(),
        };
        s.push_str(&format!("  {} = {}  {mark}\n", set.name, set.value));
        s.push_str(&format!("      {}\n", set.why));
        s.push_str(&format!("      {}\n", set.reference));
    }
    if !a.notes.is_empty() {
        s.push('\n');
        for n in &a.notes {
            s.push_str(&format!("note: {n}\n"));
        }
    }
    if let Some(p) = &a.proof {
        s.push_str(&proof(p));
    }
    s
}

/// The proof: each side's runs, means and p99, then the verdict in words.
pub fn proof(p: &ProofDoc) -> String {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut rows = vec![vec![
        "side".to_string(),
        format!("{} per run", p.unit),
        format!("mean {}", p.unit),
        "p99 (mean)".into(),
    ]];
    for (name, runs) in [("defaults", &p.defaults), ("advice", &p.advised)] {
        let rates: Vec<f64> = runs.iter().map(|r| r.rate).collect();
        let p99: Vec<f64> = runs.iter().map(|r| r.p99_ms * 1e6).collect();
        rows.push(vec![
            name.into(),
            rates
                .iter()
                .map(|&r| units::count(r))
                .collect::<Vec<_>>()
                .join(" · "),
            units::count(mean(&rates)),
            units::latency(mean(&p99)),
        ]);
    }
    let mut s = format!(
        "\nProof: {} on a fresh server, {} windows, {} runs a side, alternating\n\n",
        p.load,
        units::duration(std::time::Duration::from_secs_f64(p.window_s)),
        p.defaults.len()
    );
    for line in super::table::table(&rows, &[false, true, true, true]).lines() {
        s.push_str(&format!("  {line}\n"));
    }
    if !p.applied.is_empty() {
        let set: Vec<String> = p
            .applied
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        s.push_str(&format!(
            "\n  the advised servers reported: {}\n",
            set.join(", ")
        ));
    }
    let p_value = p
        .p_value
        .map_or("too few runs to test".into(), |v| format!("p = {v:.2}"));
    let verdict = match p.verdict.as_str() {
        "better" => "the advice is significantly faster",
        "worse" => "the advice is significantly slower: keep the defaults",
        _ => "no significant difference: the advice neither helped nor hurt this load here",
    };
    s.push_str(&format!(
        "\n  advice against defaults: {:+.1}% {} ({p_value}): {verdict}\n",
        p.change * 100.0,
        p.unit
    ));
    let p99_significant = p
        .p99_p_value
        .is_some_and(|v| v < iogauge_stats::DEFAULT_ALPHA)
        && p.p99_change.abs() > iogauge_stats::DEFAULT_NOISE;
    s.push_str(&format!(
        "  p99 latency: {:+.1}% ({}){}\n",
        p.p99_change * 100.0,
        p.p99_p_value
            .map_or("too few runs to test".into(), |v| format!("p = {v:.2}")),
        match (p99_significant, p.p99_change < 0.0) {
            (false, _) => ": no significant difference",
            (true, true) => ": significantly lower with the advice",
            (true, false) => ": significantly higher with the advice",
        }
    ));
    s
}

/// A setting the proof's load gave (its measurement is the load's, not the storage's).
pub fn from_proof(set: &crate::model::SettingDoc) -> String {
    let mark = match set.changed() {
        true => format!("(default {})", set.default),
        false => "(the default)".into(),
    };
    format!(
        "\nFrom the proof's load:\n  {} = {}  {mark}\n      {}\n      {}\n",
        set.name, set.value, set.why, set.reference
    )
}
