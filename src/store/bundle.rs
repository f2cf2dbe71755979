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

/// Largest bundle `import` reads: a bundle is read one run at a time, so this bounds the time an
/// import takes and the database's growth, not iogauge's memory.
pub const LIMIT: u64 = 4 << 30;

/// Reads the bundle `what` from `from` one run at a time, handing each run (and its number,
/// from 1) to `each` as soon as it is read: memory holds one run, never the bundle. A bundle of
/// another format, a run of another schema or one that does not read as a run document is
/// refused with one line; an error of `each` ends the reading and is returned as it is.
pub fn stream(
    what: &str,
    from: impl std::io::Read,
    each: &mut dyn FnMut(usize, RunDoc) -> Result<()>,
) -> Result<usize> {
    let mut reader = Reader {
        what,
        each,
        failed: None,
        count: 0,
    };
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(from));
    let parsed = serde::Deserializer::deserialize_map(&mut de, &mut reader).and_then(|()| de.end());
    if let Some(e) = reader.failed.take() {
        return Err(e);
    }
    parsed.map_err(|e| {
        crate::error::usage(format!(
            "{what} is not an iogauge bundle ({e}); `iogauge export RUN… --bundle FILE` writes one"
        ))
    })?;
    Ok(reader.count)
}

/// The bundle's object: `schema` and `runs`, each run deserialized and handed on as the array is
/// read.
struct Reader<'a> {
    what: &'a str,
    each: &'a mut dyn FnMut(usize, RunDoc) -> Result<()>,
    /// An error that is not the JSON's (a wrong schema, `each`'s own), carried past serde.
    failed: Option<anyhow::Error>,
    count: usize,
}

impl Reader<'_> {
    fn fail<E: serde::de::Error>(&mut self, e: anyhow::Error) -> E {
        let text = e.to_string();
        self.failed = Some(e);
        E::custom(text)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Reader<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object with schema and runs")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut schema_seen = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema" => {
                    let schema: String = map.next_value()?;
                    if schema != SCHEMA {
                        let e = crate::error::usage(format!(
                            "{} is a bundle of format {}, and this iogauge reads {SCHEMA}; import it with the iogauge that wrote it, or a newer one",
                            self.what,
                            crate::units::quoted(&schema, 40)
                        ));
                        return Err(self.fail(e));
                    }
                    schema_seen = true;
                }
                // Before or after the schema (a bundle rewritten by a JSON tool has its keys
                // sorted): `import` reads every bundle through once before it stores a run,
                // so a wrong format is refused before anything is stored either way.
                "runs" => map.next_value_seed(Runs(&mut *self))?,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        match schema_seen {
            true => Ok(()),
            false => Err(serde::de::Error::missing_field("schema")),
        }
    }
}

struct Runs<'r, 'a>(&'r mut Reader<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for Runs<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Runs<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of run documents")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let r = self.0;
        loop {
            let n = r.count + 1;
            let doc = match seq.next_element::<RunDoc>() {
                Ok(Some(doc)) => doc,
                Ok(None) => return Ok(()),
                Err(e) => {
                    let e = crate::error::usage(format!(
                        "{}: run {n} does not read as a run document ({e})",
                        r.what
                    ));
                    return Err(r.fail(e));
                }
            };
            if doc.schema != crate::model::SCHEMA {
                let e = crate::error::usage(format!(
                    "{}: run {n} has schema {}, and this iogauge stores {}; import it with the iogauge that wrote it",
                    r.what,
                    crate::units::quoted(&doc.schema, 40),
                    crate::model::SCHEMA
                ));
                return Err(r.fail(e));
            }
            r.count = n;
            if let Err(e) = (r.each)(n, doc) {
                return Err(r.fail(e));
            }
        }
    }
}
