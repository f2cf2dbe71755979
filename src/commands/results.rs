//! `iogauge list`, `show`, `export`, `delete` and `compare`: the results store from the command
//! line. The store itself is `crate::store`, the comparison `crate::compare`; what the user
//! reads of them is written in `present` (`present::results`, `present::compare`,
//! `present::csv`).

use crate::cli::{
    CompareArgs, DeleteArgs, ExportArgs, ExportFormat, ImportArgs, ListArgs, ShowArgs,
};
use crate::store::{self, Store};
use anyhow::{Context, Result};

/// Writes to stdout as every command does; a closed pipe (`| head`) is not an error.
fn emit(text: &str) -> Result<()> {
    Ok(crate::ui::out(text)?)
}

pub fn list(args: &ListArgs) -> Result<()> {
    let path = store::db_path(args.db.path())?;
    // Listing never creates the database: a fresh machine just has no runs yet.
    let runs = if path.exists() {
        Store::open_path(&path)?.runs(args.limit)?
    } else {
        Vec::new()
    };
    if args.json {
        let runs: Vec<serde_json::Value> = runs
            .iter()
            .map(crate::present::results::run_row_json)
            .collect();
        let doc = serde_json::json!({ "database": path.display().to_string(), "runs": runs });
        return emit(&(serde_json::to_string_pretty(&doc)? + "\n"));
    }
    if runs.is_empty() {
        say!("no runs stored in {}", path.display());
        return Ok(());
    }
    emit(&crate::present::results::list(
        &runs,
        crate::ui::stdout_width(),
    ))
}

pub fn show(args: &ShowArgs) -> Result<()> {
    let store = Store::open_existing(args.db.path())?;
    let id = store.resolve(&args.run)?;
    if args.json {
        return emit(&(store.load_json_pretty(id)? + "\n"));
    }
    emit(&crate::present::results::show(id, &store.load(id)?))
}

pub fn export(args: &ExportArgs) -> Result<()> {
    if let Some(path) = &args.bundle {
        crate::target::gate::output_file(
            "--bundle",
            path,
            "give the bundle a file path on a file system",
        )?;
        let store = Store::open_existing(args.db.path())?;
        let mut ids = Vec::new();
        for s in &args.runs {
            match s.trim().strip_prefix("sweep:") {
                Some(sweep) => ids.extend(store.sweep(sweep)?),
                None => ids.push(store.resolve(s)?),
            }
        }
        ids.dedup();
        // As stored, byte for byte: the bundle carries what this database holds.
        let docs: Vec<String> = ids
            .iter()
            .map(|&id| store.load_json(id))
            .collect::<Result<_>>()?;
        crate::target::files::replace(path, store::bundle::write(&docs).as_bytes())
            .with_context(|| format!("writing --bundle {}", path.display()))?;
        say!(
            "wrote {n} run{s} to {p} (iogauge import {p} reads it into another results database)",
            n = docs.len(),
            s = crate::units::plural(docs.len()),
            p = path.display()
        );
        return Ok(());
    }
    if args.format == ExportFormat::FioJson
        && (args.runs.len() > 1 || args.runs[0].starts_with("sweep:"))
    {
        return Err(crate::error::usage(
            "--format fio-json exports one run (fio-plot and the other readers of fio's JSON take a file per run); export each run by itself",
        ));
    }
    let runs = store::load_runs(args.db.path(), &args.runs)?;
    let docs = || runs.iter().map(|s| &s.doc);
    match args.format {
        ExportFormat::Json => {
            // As stored, field for field: a document from an older version keeps what it had.
            let store = Store::open_existing(args.db.path())?;
            let texts: Vec<String> = runs
                .iter()
                .map(|r| store.load_json_pretty(r.id))
                .collect::<Result<_>>()?;
            emit(&match texts.as_slice() {
                [one] => format!("{one}\n"),
                many => format!("[\n{}\n]\n", many.join(",\n")),
            })
        }
        ExportFormat::Csv => emit(
            &crate::present::export::of(args.format.into(), &String::new)
                .many(&docs().collect::<Vec<_>>())?,
        ),
        ExportFormat::FioJson => {
            if let Some(r) = runs
                .iter()
                .find(|r| r.doc.results.iter().any(|x| x.is_db()))
            {
                return Err(crate::error::usage(format!(
                    "run {} is a database run: its results are transactions, for which fio's JSON has no place (fio-plot would draw zeros); export it with --format json or csv",
                    r.id
                )));
            }
            emit(
                &crate::present::export::of(args.format.into(), &String::new)
                    .many(&docs().collect::<Vec<_>>())?,
            )
        }
    }
}

/// `iogauge import FILE…`: every run of each bundle not already in the results database (by
/// its run id, so importing twice adds nothing).
pub fn import(args: &ImportArgs) -> Result<()> {
    // Every bundle read and checked before the database is touched, one run at a time (memory
    // holds one run, never a bundle); then read again and stored, and a failure midway takes
    // back every run this import added, so a set is stored whole or not at all.
    let open = |path: &std::path::Path| {
        let what = format!("bundle {}", path.display());
        let (file, _) = crate::target::gate::open_input(&what, path, store::bundle::LIMIT)?;
        Ok::<_, anyhow::Error>((what, file))
    };
    for path in &args.bundles {
        let (what, file) = open(path)?;
        store::bundle::stream(&what, file, &mut |_, _| Ok(()))?;
    }
    let mut store = Store::open(args.db.path())?;
    let mut all_added: Vec<i64> = Vec::new();
    let mut said = Vec::new();
    let stored = (|| -> Result<()> {
        for path in &args.bundles {
            let (what, file) = open(path)?;
            let (mut added, mut there) = (Vec::<i64>::new(), 0);
            store::bundle::stream(&what, file, &mut |_, doc| {
                match store.has_run_id(&doc.run_id)? {
                    true => there += 1,
                    false => {
                        let id = store.import(&doc)?;
                        all_added.push(id);
                        added.push(id);
                    }
                }
                Ok(())
            })?;
            said.push(format!(
                "{}: {} run{} imported into {}{}{}",
                path.display(),
                added.len(),
                crate::units::plural(added.len()),
                store.path().display(),
                match added.is_empty() {
                    true => String::new(),
                    false => format!(" as {}", id_ranges(&added)),
                },
                match there {
                    0 => String::new(),
                    n => format!("; {n} already there, left as they were"),
                }
            ));
        }
        Ok(())
    })();
    if let Err(e) = stored {
        for id in all_added.iter().rev() {
            let _ = store.delete(*id);
        }
        return Err(e.context(format!(
            "nothing was imported ({} run{} taken back)",
            all_added.len(),
            crate::units::plural(all_added.len())
        )));
    }
    for line in said {
        say!("{line}");
    }
    Ok(())
}

/// Ids as runs of consecutive numbers: "4, 7–5193" rather than five thousand numbers.
fn id_ranges(ids: &[i64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(match j - i {
            0 => ids[i].to_string(),
            1 => format!("{}, {}", ids[i], ids[j]),
            _ => format!("{}–{}", ids[i], ids[j]),
        });
        i = j + 1;
    }
    out.join(", ")
}

pub fn delete(args: &DeleteArgs) -> Result<()> {
    let mut store = Store::open_existing(args.db.path())?;
    let id = store.resolve(&args.run)?;
    let row = store.runs(u32::MAX)?.into_iter().find(|r| r.id == id);
    store.delete(id)?;
    let what = row
        .map(|r| {
            format!(
                " ({}{})",
                r.label.map(|l| format!("{l}, ")).unwrap_or_default(),
                crate::present::results::date(&r.started_at)
            )
        })
        .unwrap_or_default();
    say!("deleted run {id}{what} from {}", store.path().display());
    Ok(())
}

pub fn compare(args: &CompareArgs) -> Result<()> {
    if !args.noise.is_finite() || args.noise < 0.0 {
        return Err(crate::error::usage(format!(
            "--noise {} is not a fraction; give e.g. 0.02 for 2%",
            args.noise
        )));
    }
    let mut runs = store::load_runs(args.db.path(), &args.runs)?;
    if runs.len() < 2 {
        return Err(crate::error::usage(
            "compare needs at least two runs: give two or more RUNs, or a sweep:ID of several",
        ));
    }
    let mut used = Vec::new();
    if args.baseline {
        for s in &mut runs {
            for name in crate::analysis::use_baseline(&mut s.doc) {
                used.push(format!("{name} (run {})", s.id));
            }
        }
    }
    let report = crate::compare::compare(&runs, args.noise);
    // Which level was compared is said either way, so a number is never read as the other.
    let said = match args.baseline {
        true => crate::analysis::baseline_said(&used),
        false => String::new(),
    };
    if args.json {
        let mut j = report.json();
        j["baseline"] = serde_json::Value::from(used);
        emit(&(serde_json::to_string_pretty(&j)? + "\n"))
    } else {
        emit(&(said + &report.text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imported_ids_are_said_as_runs_of_consecutive_numbers() {
        assert_eq!(id_ranges(&[4]), "4");
        assert_eq!(id_ranges(&[4, 5]), "4, 5");
        assert_eq!(id_ranges(&[1, 2, 3, 7, 9, 10, 11, 12]), "1–3, 7, 9–12");
    }
}
