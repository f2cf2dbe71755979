use super::*;

const GOOD: &str = r#"
name = "mine"
description = "a test"

[defaults]
time = "2s"
size = "64m"

[[group]]
title = "Random"
layout = "matrix"
rw = ["randread", "randwrite"]
bs = ["4k", 1048576]
threads = [1, 8]
options = ["sizes", "threads"]

[[group]]
title = "Mix"
layout = "mixes"
rw = ["randrw"]
bs = ["8k"]
iodepth = [1, 4]
read_pct = [70, 50]
time = "1s"

[[group]]
title = "Commit"
layout = "fsync"
rw = ["write"]
bs = ["8k"]
sync = "fdatasync"
range = "16m"

[[group]]
title = "Seq"
layout = "seq"
rw = ["write", "read", "copy"]
bs = ["1m"]
data = "range"
"#;

#[test]
fn a_good_file_reads_as_written() {
    let s = parse(GOOD, "mine.toml").unwrap();
    assert_eq!(s.name, "mine");
    assert_eq!(s.size, Some(64 << 20));
    assert_eq!(s.groups.len(), 4);
    let g = &s.groups[0];
    assert_eq!(g.layout, Layout::Matrix);
    assert_eq!(g.ops, vec![Op::Randread, Op::Randwrite]);
    assert_eq!(
        g.bs,
        vec![BlockSize::known(4096), BlockSize::known(1 << 20)]
    );
    assert_eq!(g.threads, vec![1, 8]);
    assert_eq!(g.iodepth, vec![1], "iodepth defaults to one");
    assert_eq!(
        g.length,
        Length::Time(Duration::from_secs(2)),
        "the suite's time"
    );
    assert_eq!(g.options, vec![CliOption::Sizes, CliOption::Threads]);
    let m = &s.groups[1];
    assert_eq!(m.read_pct, vec![70, 50]);
    assert_eq!(m.iodepth, vec![1, 4]);
    assert_eq!(
        m.length,
        Length::Time(Duration::from_secs(1)),
        "the group's own time"
    );
    let f = &s.groups[2];
    assert_eq!(
        f.sync,
        Some((SyncKind::Fdatasync, 1)),
        "sync_every defaults to one"
    );
    assert_eq!(f.range, Some(16 << 20));
    assert_eq!(s.groups[3].length, Length::Data(Amount::Range));
    assert_eq!(s.groups[3].ops[2], Op::Copy);
}

/// Replaces the first `from` in GOOD and returns the error, which must be one line.
fn error_with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    let text = GOOD.replacen(from, to, 1);
    let e = parse(&text, "mine.toml").unwrap_err();
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn errors_name_the_line_of_the_mistake() {
    let cases = [
        // (replace, with, the text on the line the error must name, words it must hold)
        (
            "bs = [\"4k\", 1048576]",
            "bs = [\"128m\", 1048576]",
            "128m",
            "at most 64MiB",
        ),
        ("layout = \"mixes\"", "layout = \"orion\"", "orion", "orion"),
        (
            "threads = [1, 8]",
            "threads = [1, 0]",
            "threads = [1, 0]",
            "out of range",
        ),
        (
            "read_pct = [70, 50]",
            "read_pct = [70, 101]",
            "101",
            "0 to 100",
        ),
        ("time = \"1s\"", "time = \"soon\"", "soon", "not a duration"),
        ("time = \"1s\"", "time = \"0s\"", "\"0s\"", "0"),
        (
            "range = \"16m\"",
            "range = \"4k\"",
            "range = \"4k\"",
            "largest block",
        ),
        (
            "sync = \"fdatasync\"",
            "sync = \"fdatasync\"\nodsync = 3",
            "odsync = 3",
            "bool",
        ),
        (
            "data = \"range\"",
            "data = \"range\"\ntime = \"1s\"",
            "data = \"range\"",
            "not both",
        ),
        (
            "title = \"Mix\"",
            "title = \"Mix\"\ncolor = \"red\"",
            "color",
            "color",
        ),
        (
            "rw = [\"randrw\"]",
            "rw = [\"randread\"]",
            "read_pct = [70, 50]",
            "rw and randrw only",
        ),
        (
            "rw = [\"write\"]",
            "rw = [\"read\"]",
            "sync = \"fdatasync\"",
            "does not write",
        ),
        (
            "[\"4k\", 1048576]",
            "[\"4k\", \"4k\"]",
            "[\"4k\", \"4k\"]",
            "twice",
        ),
        (
            "options = [\"sizes\", \"threads\"]",
            "options = [\"files\"]",
            "[\"files\"]",
            "read",
        ),
        (
            "description = \"a test\"",
            "description = \"a test",
            "description",
            "",
        ),
    ];
    for (from, to, on_line, words) in cases {
        let e = error_with(from, to);
        let text = GOOD.replacen(from, to, 1);
        let want = format!("mine.toml:{}:", line_of(&text, on_line));
        assert!(
            e.starts_with(&want),
            "{from} -> {to}: expected {want}…, got {e}"
        );
        assert!(e.contains(words), "{from} -> {to}: {e} should say {words}");
    }
}

#[test]
fn mixed_patterns_need_read_percentages() {
    let e = error_with("read_pct = [70, 50]\n", "");
    assert!(e.contains("read_pct"), "{e}");
}

#[test]
fn a_file_without_groups_is_refused() {
    let e = parse("name = \"x\"\ndescription = \"y\"\n", "x.toml").unwrap_err();
    assert!(e.starts_with("x.toml: ") && e.contains("[[group]]"), "{e}");
}

#[test]
fn line_and_column_count_characters() {
    let text = "ab\ncdé\nf";
    assert_eq!(line_col(text, 0), (1, 1));
    assert_eq!(line_col(text, 3), (2, 1));
    assert_eq!(line_col(text, 5), (2, 3));
    // Past the two-byte é: third character of line 2 is the 4th column.
    assert_eq!(line_col(text, 7), (2, 4));
    assert_eq!(line_col(text, 8), (3, 1));
    assert_eq!(line_col(text, 99), (3, 2));
}

#[test]
fn rounds_name_a_cell_the_suite_has() {
    let base = "name = \"r\"\ndescription = \"d\"\n[[group]]\ntitle = \"t\"\nrw = [\"randrw\"]\nread_pct = [0, 100]\nbs = [\"4k\"]\n";
    let ok =
        format!("{base}[rounds]\ntrack_rw = \"randrw\"\ntrack_read_pct = 0\ntrack_bs = \"4k\"\n");
    let r = parse(&ok, "t.toml").unwrap().rounds.unwrap();
    assert_eq!(r.track, (Op::Randrw, 0, 4096));
    assert_eq!((r.window, r.max, r.precondition), (5, 25, false));
    let missing_pct = format!("{base}[rounds]\ntrack_rw = \"randrw\"\ntrack_bs = \"4k\"\n");
    let e = parse(&missing_pct, "t.toml").unwrap_err();
    assert!(e.contains("track_read_pct"), "{e}");
    let absent =
        format!("{base}[rounds]\ntrack_rw = \"randrw\"\ntrack_read_pct = 0\ntrack_bs = \"8k\"\n");
    let e = parse(&absent, "t.toml").unwrap_err();
    assert!(
        e.contains("no group has the tracked cell") && e.starts_with("t.toml:"),
        "{e}"
    );
}
