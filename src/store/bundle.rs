//! Runs that travel: a bundle holds whole run documents, as stored, for `iogauge import` into
//! another results database. It is one JSON object, `{"schema": "iogauge.bundle/1", "runs":
//! [...]}`, each run the document `iogauge show --json` prints (results, histograms, timelines,
//! system and findings), so nothing is lost on the way and a round trip gives the same bytes.

use crate::model::RunDoc;
use anyhow::Result;

/// The bundle format this version writes and reads.
pub const SCHEMA: &str = "iogauge.bundle/1";

/// A bundle of runs given as their stored compact JSON.
pub fn write(docs: &[String]) -> String {
    format!(
        "{{\"schema\":\"{SCHEMA}\",\"runs\":[\n{}\n]}}\n",
        docs.join(",\n")
    )
}

/// The runs of a bundle read from `what`; a bundle of another format, or a run of another
/// schema, is refused with one line.
pub fn read(what: &str, text: &str) -> Result<Vec<RunDoc>> {
    #[derive(serde::Deserialize)]
    struct Bundle {
        schema: String,
        runs: Vec<serde_json::Value>,
    }
    let usage = crate::error::usage;
    let b: Bundle = serde_json::from_str(text).map_err(|e| {
        usage(format!(
            "{what} is not an iogauge bundle ({e}); `iogauge export RUN… --bundle FILE` writes one"
        ))
    })?;
    if b.schema != SCHEMA {
        return Err(usage(format!(
            "{what} is a bundle of format {}, and this iogauge reads {SCHEMA}; import it with the iogauge that wrote it, or a newer one",
            crate::units::quoted(&b.schema, 40)
        )));
    }
    b.runs
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let schema = v["schema"].as_str().unwrap_or("").to_string();
            if schema != crate::model::SCHEMA {
                return Err(usage(format!(
                    "{what}: run {} has schema {}, and this iogauge stores {}; import it with the iogauge that wrote it",
                    i + 1,
                    crate::units::quoted(&schema, 40),
                    crate::model::SCHEMA
                )));
            }
            serde_json::from_value(v).map_err(|e| {
                usage(format!("{what}: run {} does not read as a run document ({e})", i + 1))
            })
        })
        .collect()
}
