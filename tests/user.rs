//! What a new user meets first, each as they would try it: a plan that lists what runs and says
//! what a read-only suite leaves out, a JSON plan, the id a run was stored under, the statistics
//! of repeats, hints for a suite's flags, a man page per subcommand (issue 22).

use crate::common;

use common::*;

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_dry_run_lists_the_cells_and_prints_json_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let out = iogauge(dir.path(), &["suite", "quick", "--dry-run", "--json"]);
    let plan = json_of(&out);
    let cells = plan["cells"].as_array().unwrap();
    assert_eq!(plan["what"], "suite quick");
    assert!(cells.len() >= 10, "{plan}");
    assert!(cells.iter().all(|c| c["skipped"].is_null()));
    assert_eq!(plan["target"]["created"], true);
    let (least, most) = (f(&plan["estimate_s"][0]), f(&plan["estimate_s"][1]));
    assert!(least >= 1.0 && most >= least, "{plan}");

    // The text says the same cells by name, one a line.
    let text = stdout_of(&iogauge(dir.path(), &["suite", "quick", "--dry-run"]));
    for c in cells {
        let name = c["name"].as_str().unwrap();
        assert!(text.lines().any(|l| l.trim() == name), "{name} in\n{text}");
    }
    let left = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-test"))
        .count();
    assert_eq!(left, 0, "a dry run created a test file");
}

#[test]
fn a_read_only_suite_names_the_writing_cells_it_skips_and_destroys_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.bin");
    let bytes: Vec<u8> = (0..(8u32 << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    std::fs::write(&data, &bytes).unwrap();
    let path = data.to_str().unwrap();
    let plan = json_of(&iogauge(
        dir.path(),
        &["suite", "quick", path, "--dry-run", "--json"],
    ));
    let cells = plan["cells"].as_array().unwrap();
    let writers = cells.iter().filter(|c| c["writes"] == true).count();
    assert!(writers > 0 && writers < cells.len());
    let skipped = cells.iter().filter(|c| !c["skipped"].is_null()).count();
    assert_eq!(skipped, writers, "{plan}");
    assert_eq!(plan["target"]["written"], false);

    let text = stdout_of(&iogauge(dir.path(), &["suite", "quick", path, "--dry-run"]));
    assert!(
        text.contains(&format!(
            "read only: the {writers} cells that write are skipped"
        )),
        "{text}"
    );
    assert!(text.contains("read only)"), "{text}");
    assert!(!text.contains("destroyed"), "{text}");
    assert_eq!(std::fs::read(&data).unwrap(), bytes);
}

#[test]
fn a_stored_run_says_its_id_and_an_unstored_one_says_nothing_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--size", "8M", "--time", "300ms", "--engine", "psync",
    ];
    let out = iogauge(dir.path(), &args);
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let listed = json_of(&iogauge(dir.path(), &["list", "--json"]));
    let id = listed["runs"][0]["id"].as_i64().unwrap();
    assert!(
        err.contains(&format!("stored as run {id} (`iogauge show {id}`)")),
        "{err}"
    );

    let mut unstored = args.to_vec();
    unstored.push("--no-store");
    let err = stderr_of(&iogauge(dir.path(), &unstored));
    assert!(!err.contains("stored as run"), "{err}");
}

/// `--repeat` promises "mean, spread, 95% CI": the summary prints them, the same numbers the
/// stored document holds.
#[test]
fn repeats_print_their_statistics_on_run_and_suite() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    let out = iogauge(
        dir.path(),
        &[
            "run",
            "--size",
            "8M",
            "--time",
            "300ms",
            "--engine",
            "psync",
            "--repeat",
            "3",
            "--no-store",
            "--output",
            doc.to_str().unwrap(),
        ],
    );
    let text = stdout_of(&out);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&doc).unwrap()).unwrap();
    let st = &doc["results"][0]["stats"]["iops"];
    assert_eq!(st["n"], 3, "{doc}");
    let line = text
        .lines()
        .find(|l| {
            l.trim_start().starts_with("IOPS ")
                && (l.contains('…') || l.contains("too few repeats to tell"))
        })
        .unwrap_or_else(|| panic!("no IOPS statistics in\n{text}"));
    let mean = format!("{} IOPS", commas(f(&st["mean"])));
    // The interval as the document holds it, or — when it reaches zero (three repeats far
    // apart on a busy machine) — that it tells nothing.
    let interval = match f(&st["ci95"][0]) > 0.0 {
        true => format!("{} IOPS …", commas(f(&st["ci95"][0]))),
        false => "too few repeats to tell".to_string(),
    };
    assert!(
        line.contains(&mean) && line.contains(&interval),
        "{mean}, {interval} in {line}"
    );
    assert!(text.contains("statistics over 3 repeats"), "{text}");

    // One run: the table on stdout, the document it came from in --output.
    let written = dir.path().join("suite.json");
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "seq",
            "--size",
            "8M",
            "--cell-time",
            "300ms",
            "--repeat",
            "2",
            "--no-store",
            "--output",
            written.to_str().unwrap(),
        ],
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let section = text
        .split("Repeats (mean and 95% confidence interval over the repeats)")
        .nth(1)
        .unwrap_or_else(|| panic!("no repeats table in\n{text}"));
    let rows = section
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .count();
    assert_eq!(rows, doc["results"].as_array().unwrap().len(), "{section}");
}

/// A count as iogauge prints it: rounded, thousands separated by commas.
fn commas(v: f64) -> String {
    let digits = format!("{}", v.round() as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Another command's option typed to this one gets this one's way of saying it, in one line.
#[test]
fn a_suite_or_run_option_typed_to_the_other_command_is_pointed_to_its_own() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (
            &["suite", "quick", "--time", "1s"][..],
            "--cell-time DURATION",
        ),
        (&["suite", "quick", "--bs", "4k"], "--sizes 4k,64k"),
        (&["suite", "matrix", "--iodepth=4"], "--qd 1,16"),
        (&["run", "--qd", "4"], "--iodepth N"),
        (&["run", "--cell-time", "1s"], "--time DURATION"),
    ] {
        let out = iogauge(dir.path(), args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(needle) && !err.contains("tip:"),
            "{args:?}: {err}"
        );
    }
}

/// `suite --ramp` runs each cell that long before measuring it, as `run --ramp` does.
#[test]
fn a_suite_ramps_each_cell() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json_of(&iogauge(
        dir.path(),
        &[
            "suite",
            "seq",
            "--size",
            "8M",
            "--cell-time",
            "200ms",
            "--ramp",
            "100ms",
            "--no-store",
            "--json",
        ],
    ));
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert_eq!(f(&r["workload"]["ramp_s"]), 0.1, "{r}");
    }
}

/// Bash completes a suite's name, as the shell runs the completion script.
#[test]
fn bash_completes_suite_names() {
    if !have("bash") {
        return skip("bash is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("iogauge.bash");
    let out = iogauge(dir.path(), &["completions", "bash"]);
    assert!(out.status.success());
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &str| {
        let cmd = format!(
            "source '{}'; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; _iogauge iogauge \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        sh("bash", &["-c", &cmd])
    };
    let offered = complete("iogauge suite snia-");
    let mut names: Vec<&str> = offered.split_whitespace().collect();
    names.sort();
    assert_eq!(
        names,
        ["snia-iops", "snia-latency", "snia-throughput"],
        "{offered}"
    );
    assert!(complete("iogauge suite q")
        .split_whitespace()
        .any(|w| w == "quick"));
}

/// `iogauge man --dir` writes a page for every subcommand the top page names, each with every
/// option its --help lists; `iogauge man SUBCOMMAND` prints one; a foreign file is left alone.
#[test]
fn every_subcommand_has_a_man_page_with_every_option() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    std::fs::create_dir(&pages).unwrap();
    let out = iogauge(dir.path(), &["man", "--dir", pages.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let top = std::fs::read_to_string(pages.join("iogauge.1")).unwrap();
    let named: Vec<String> = top
        .split("iogauge\\-")
        .skip(1)
        .filter_map(|s| s.split_once("(1)").map(|(n, _)| n.replace("\\-", "-")))
        .collect();
    assert!(named.len() >= 10, "{top}");
    for n in &named {
        assert!(
            pages.join(format!("iogauge-{n}.1")).exists(),
            "iogauge-{n}(1) is named but not written"
        );
    }
    for sub in [&["run"][..], &["suite"], &["db", "pgbench"], &["compare"]] {
        let mut args = sub.to_vec();
        args.push("--help");
        let help = String::from_utf8_lossy(&iogauge(dir.path(), &args).stdout).into_owned();
        let mut man_args = vec!["man"];
        man_args.extend_from_slice(sub);
        let page = String::from_utf8_lossy(&iogauge(dir.path(), &man_args).stdout).into_owned();
        assert_eq!(
            page,
            std::fs::read_to_string(pages.join(format!("iogauge-{}.1", sub.join("-")))).unwrap()
        );
        let options: Vec<&str> = help
            .split_whitespace()
            .filter(|w| {
                w.starts_with("--")
                    && w.len() > 2
                    && w[2..].chars().all(|c| c.is_ascii_lowercase() || c == '-')
            })
            .collect();
        assert!(options.len() > 3, "{help}");
        for o in options {
            assert!(
                page.contains(&o.replace('-', "\\-")),
                "{sub:?}: {o} missing from the man page"
            );
        }
    }
    let foreign = pages.join("iogauge-run.1");
    std::fs::write(&foreign, "my own notes\n").unwrap();
    let out = iogauge(dir.path(), &["man", "--dir", pages.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "my own notes\n");
    let out = iogauge(dir.path(), &["man", "db", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("pgbench, sysbench"),
        "{}",
        stderr_of(&out)
    );
}

/// `list` fits 120 columns whatever the labels, parameters and paths (a sweep's runs carry
/// all their settings); `show` keeps them whole.
#[test]
fn list_fits_the_terminal_and_cuts_nothing_into_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir
        .path()
        .join("a-rather-long-directory-name/and-another-one-below-it");
    std::fs::create_dir_all(&deep).unwrap();
    let label = "a label long enough to fill a line by itself, and then some more words";
    let out = iogauge(
        dir.path(),
        &[
            "suite",
            "seq",
            deep.to_str().unwrap(),
            "--size",
            "8M",
            "--cell-time",
            "100ms",
            "--label",
            label,
            "--param",
            "scheduler=mq-deadline",
            "--param",
            "read_ahead_kb=4096",
            "--param",
            "fs=ext4",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    // Into a pipe nothing is cut: `list | grep` finds the whole label.
    let list = iogauge(dir.path(), &["list"]);
    let text = String::from_utf8_lossy(&list.stdout).into_owned();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains(label), "{text}");
    // On a terminal the row fits its width, and a wider one shows more of the label.
    needs_tool!("script");
    let on_terminal = |cols: usize| -> String {
        let out = std::process::Command::new("script")
            .args([
                "-qec",
                &format!("stty cols {cols} rows 40; '{BIN}' list"),
                "/dev/null",
            ])
            .current_dir(dir.path())
            .env("IOGAUGE_DB", dir.path().join("results.db"))
            .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
        let rows: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(rows.len(), 2, "{text}");
        for line in &rows {
            assert!(
                line.chars().count() <= cols,
                "{} wide on {cols} columns: {line}",
                line.chars().count()
            );
        }
        rows[1].to_string()
    };
    let (narrow, wide) = (on_terminal(120), on_terminal(200));
    let shown_of = |row: &str| {
        label
            .chars()
            .zip(row.chars().skip_while(|c| *c != 'a'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    assert!(
        shown_of(&wide) > shown_of(&narrow),
        "a wider terminal shows more of the label:\n{narrow}\n{wide}"
    );
    let shown = String::from_utf8_lossy(&iogauge(dir.path(), &["show", "last", "--json"]).stdout)
        .into_owned();
    assert!(shown.contains(label));
}

/// Exports line up: every CSV has the same columns whatever a run's parameters, and several
/// runs export under one header (JSON as an array); fio's JSON stays one run a file.
#[test]
fn exports_of_runs_with_other_parameters_line_up_and_several_export_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for params in [
        &["--param", "fs=ext4"][..],
        &["--param", "scheduler=none", "--param", "nr_requests=64"],
    ] {
        let mut args = vec![
            "run", "--size", "8M", "--time", "200ms", "--engine", "psync",
        ];
        args.extend_from_slice(params);
        let out = iogauge(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr_of(&out));
    }
    let csv = |runs: &[&str]| {
        let mut args = vec!["export"];
        args.extend_from_slice(runs);
        args.extend_from_slice(&["--format", "csv"]);
        let out = iogauge(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr_of(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (one, two) = (csv(&["1"]), csv(&["2"]));
    let header = |t: &str| t.split("\r\n").next().unwrap().to_string();
    assert_eq!(header(&one), header(&two));
    let both = csv(&["1", "2"]);
    let lines: Vec<&str> = both.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "{both}");
    assert_eq!(lines[0], header(&one));
    assert!(
        lines[1].contains("fs=ext4") && lines[2].contains("nr_requests=64;scheduler=none"),
        "{both}"
    );

    let docs = json_of(&iogauge(dir.path(), &["export", "1", "2"]));
    let docs = docs.as_array().expect("several runs export as an array");
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["params"]["fs"], "ext4");
    let single = json_of(&iogauge(dir.path(), &["export", "2"]));
    assert_eq!(single, docs[1]);

    let out = iogauge(dir.path(), &["export", "1", "2", "--format", "fio-json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert_eq!(stderr_of(&out).lines().count(), 1);
}
