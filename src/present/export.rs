//! One exporter per format of a run document, behind one trait: what `--output FILE` writes
//! (JSON, CSV, the summary, fio's JSON) and what `export` writes of stored runs, so a format
//! is added in one place and both take it.

use super::{csv, fio_json};
use crate::model::RunDoc;
use crate::plan::Format;
use anyhow::Result;

pub trait Exporter {
    /// One run in this format.
    fn one(&self, doc: &RunDoc) -> Result<String>;

    /// Several runs in one file; by default each after the other.
    fn many(&self, docs: &[&RunDoc]) -> Result<String> {
        docs.iter().map(|d| self.one(d)).collect()
    }
}

/// The exporter of `format`; the summary (`Format::Text`) is the one `human` writes.
pub fn of<'a>(format: Format, human: &'a dyn Fn() -> String) -> Box<dyn Exporter + 'a> {
    match format {
        Format::Json => Box::new(Json),
        Format::Csv => Box::new(Csv),
        Format::Text => Box::new(Text(human)),
        Format::FioJson => Box::new(FioJson),
    }
}

struct Json;

impl Exporter for Json {
    fn one(&self, doc: &RunDoc) -> Result<String> {
        Ok(serde_json::to_string_pretty(doc)? + "\n")
    }

    /// One document as it is, several as one JSON array.
    fn many(&self, docs: &[&RunDoc]) -> Result<String> {
        match docs {
            [one] => self.one(one),
            many => Ok(serde_json::to_string_pretty(many)? + "\n"),
        }
    }
}

struct Csv;

impl Exporter for Csv {
    fn one(&self, doc: &RunDoc) -> Result<String> {
        Ok(csv::run(doc))
    }

    /// One header, then every run's rows.
    fn many(&self, docs: &[&RunDoc]) -> Result<String> {
        Ok(csv::runs(docs.iter().copied()))
    }
}

struct FioJson;

impl Exporter for FioJson {
    fn one(&self, doc: &RunDoc) -> Result<String> {
        Ok(fio_json::run(doc))
    }
}

struct Text<'a>(&'a dyn Fn() -> String);

impl Exporter for Text<'_> {
    fn one(&self, _doc: &RunDoc) -> Result<String> {
        Ok((self.0)())
    }
}
