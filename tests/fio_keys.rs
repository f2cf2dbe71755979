//! fio's JSON as its readers find it (issue 60): the same job run by fio and by iogauge gives
//! the same keys, but for the few iogauge leaves out on purpose, each with its reason; the
//! percentiles come in fio's numeric order.

use serde_json::Value;
use std::collections::BTreeSet;

use crate::common;
use common::*;

/// Every key path of a document (`/jobs[]/read/iops`); a percentile table counts as one key,
/// and so do the options (their keys are the job file's, not the format's).
fn keys(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                if !matches!(k.as_str(), "percentile" | "global options" | "job options") {
                    keys(x, &p, out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(x) = a.first() {
                keys(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// What iogauge does not write, and why: it does not count how many IOs were in flight at each
/// submission and completion (iodepth_level, _submit, _complete), and keeps no histogram of
/// syncs (their standard deviation).
const LEFT_OUT: [&str; 4] = [
    "/jobs[]/iodepth_level",
    "/jobs[]/iodepth_submit",
    "/jobs[]/iodepth_complete",
    "/jobs[]/sync/lat_ns/stddev",
];

#[test]
fn fios_json_and_iogauges_have_the_same_keys_but_the_deliberate_ones() {
    if !have("fio") {
        skip("needs fio");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.bin");
    let job = dir.path().join("two.fio");
    // Amounts, not times: 256 reads and 8 synced writes, whatever the disk's pace (in 500 ms a
    // fresh-clone CI, its disk busy with other tests, completed not one synced write).
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=16m\ndirect=1\nioengine=io_uring\n\
             [r]\nrw=randread\nbs=4k\niodepth=4\nio_size=1m\n[w]\nstonewall\nrw=write\nbs=8k\nfdatasync=1\nsize=64k\n",
            data.display()
        ),
    )
    .unwrap();
    let fio = fio_json(dir.path(), &job);
    let ours = dir.path().join("ours.json");
    let out = iogauge(
        dir.path(),
        &[
            "fio",
            "--no-store",
            "--allow-overwrite",
            job.to_str().unwrap(),
            "-o",
            ours.to_str().unwrap(),
            "--format",
            "fio-json",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(&ours).unwrap();
    let ours: Value = serde_json::from_str(&text).unwrap();
    let (mut theirs_k, mut ours_k) = (BTreeSet::new(), BTreeSet::new());
    keys(&fio, "", &mut theirs_k);
    keys(&ours, "", &mut ours_k);
    let missing: Vec<&String> = theirs_k
        .difference(&ours_k)
        .filter(|k| !LEFT_OUT.iter().any(|l| k.starts_with(l)))
        .collect();
    assert!(
        missing.is_empty(),
        "fio writes, iogauge does not: {missing:#?}"
    );
    for l in LEFT_OUT {
        assert!(
            theirs_k.contains(l),
            "fio no longer writes {l}: drop it from the list"
        );
    }
    // Percentiles as fio orders them: by value, not as text ("5.000000" before "10.000000").
    let at = text.find("\"percentile\"").expect("a percentile table");
    let five = text[at..].find("\"5.000000\"").unwrap();
    let ten = text[at..].find("\"10.000000\"").unwrap();
    assert!(five < ten, "{}", &text[at..at + 200]);
    // The sync section holds the job's fdatasync calls.
    let w = ours["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == "w")
        .unwrap();
    assert!(w["sync"]["total_ios"].as_u64().unwrap() > 0, "{w}");
    assert_eq!(w["sync"]["total_ios"], w["sync"]["lat_ns"]["N"]);
}
