//! .ci/budget, CI's own time budget (issue 57): a test longer than 60 s of its own time fails
//! the run unless .ci/slow-tests gives it a ceiling and a reason; the waits a test recorded
//! for a turn are not its own time; times are judged on the share of the CPUs CI had and at the
//! pace of the machine the budgets were set on (.ci/run's yardstick); a line
//! naming no test is said; the step fails past its budget.

use std::path::Path;
use std::process::Command;

/// .ci/budget on `log` (libtest's lines), with `waits`, `list` and extra arguments: its exit
/// code and what it printed.
fn budget(dir: &Path, log: &str, waits: &str, list: &str, args: &[&str]) -> (i32, String) {
    let (l, w, s) = (dir.join("log"), dir.join("waits"), dir.join("slow"));
    std::fs::write(&l, log).unwrap();
    std::fs::write(&w, waits).unwrap();
    std::fs::write(&s, list).unwrap();
    let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/budget"))
        .arg(&l)
        .args([
            "--waits",
            w.to_str().unwrap(),
            "--list",
            s.to_str().unwrap(),
        ])
        .args(args)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), said)
}

const LOG: &str = "running 3 tests\n\
test a::fast ... ok <1.500s>\n\
test a::slow ... ok <90.000s>\n\
test b::slow_in_the_guest ... ok <300.000s>\n\
test result: ok. 3 passed; 0 failed\n";

const GUESTS: &str = "*in_the_guest* 400 emulated\n";

#[test]
fn a_slow_test_needs_a_line_and_its_waits_and_others_load_are_not_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 90 s and no line: named, and the run fails.
    let (code, said) = budget(d, LOG, "", GUESTS, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("a::slow took 90.0 s") && said.contains("give it a line"),
        "{said}"
    );
    assert!(!said.contains("a::fast took"), "{said}");
    // 40 s of it waiting for a turn: 50 s of its own.
    let (code, said) = budget(d, LOG, "a::slow\t30.000\na::slow\t10.000\n", GUESTS, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("50.0  a::slow"), "{said}");
    // Half the machine taken by others: judged as 45 s; a machine at 0.6 of the budgets' pace
    // the same (54 s), at 0.7 not (63 s).
    let (code, said) = budget(d, LOG, "", GUESTS, &["--share", "0.5"]);
    assert_eq!(code, 0, "{said}");
    let (code, said) = budget(d, LOG, "", GUESTS, &["--pace", "0.6"]);
    assert_eq!(code, 0, "{said}");
    let (code, said) = budget(d, LOG, "", GUESTS, &["--pace", "0.7"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("(63.0 s on a quiet machine at the reference pace)"),
        "{said}"
    );
    // A line with its ceiling: under it passes, over it fails naming the list.
    let (code, said) = budget(d, LOG, "", &format!("{GUESTS}a::slow 100 why\n"), &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("a::slow  (listed: 100 s)"), "{said}");
    let (code, said) = budget(d, LOG, "", &format!("{GUESTS}a::slow 80 why\n"), &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("over its 80 s in"), "{said}");
    // The guests' line covers the guest test; without it, the guest test fails too.
    let (code, said) = budget(d, LOG, "", "a::slow 100 why\n", &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("b::slow_in_the_guest took 300.0 s"), "{said}");
}

#[test]
fn stale_lines_a_bad_line_and_the_step_budget_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let list = format!("{GUESTS}a::slow 100 why\ngone::test 100 why\n*nowhere* 100 why\n");
    let (code, said) = budget(d, LOG, "", &list, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("gone::test, which did not run"), "{said}");
    assert!(said.contains("*nowhere*, which matched no test"), "{said}");
    let (code, said) = budget(d, LOG, "", &format!("{list}a::fast lots\n"), &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("a line wants NAME SECONDS WHY"), "{said}");
    let (code, said) = budget(d, LOG, "", &list, &["--step", "700", "--budget", "600"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(
            "the step took 700 s on a quiet machine at the reference pace, over its 600 s"
        ),
        "{said}"
    );
    let (code, said) = budget(
        d,
        LOG,
        "",
        &list,
        &["--step", "1000", "--budget", "600", "--share", "0.5"],
    );
    assert_eq!(code, 0, "{said}");
    // A machine at 0.5 of the pace the budgets were set at: judged as 500 s; at 0.9, as 630 s.
    let (code, said) = budget(
        d,
        LOG,
        "",
        &list,
        &["--step", "700", "--budget", "600", "--pace", "0.9"],
    );
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("the step took 630 s"), "{said}");
    let (code, said) = budget(
        d,
        LOG,
        "",
        &list,
        &["--step", "1000", "--budget", "600", "--pace", "0.5"],
    );
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("at a pace of 0.50"), "{said}");
    // A log without times (the runner missing) is a failure, not a pass.
    let (code, said) = budget(d, "test a::x ... ok\n", "", &list, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("no test times"), "{said}");
}
