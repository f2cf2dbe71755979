//! Which charts a report draws from which data, and what the page says about the rest.

use super::*;
use crate::analysis::tests::{doc, matrix, result};
use crate::workload::Rw;

fn kinds(r: &Report) -> Vec<Kind> {
    let mut k: Vec<Kind> = r.charts.iter().map(|c| c.kind).collect();
    k.dedup();
    k
}

fn input(name: &str, mut d: RunDoc) -> Input {
    crate::analysis::annotate(&mut d, None);
    Input {
        name: name.into(),
        doc: d,
    }
}

/// Orion's sweep: 100/90/50 % reads × 1…16 outstanding IOs at 8 KiB.
fn mixes() -> RunDoc {
    let mut results = Vec::new();
    for pct in [100u8, 90, 50] {
        for qd in [1, 2, 4, 8, 16] {
            let mut r = result(Rw::Randrw, 8192, 1, qd, 5_000.0 * f64::from(qd).min(4.0));
            r.workload.mix_read_pct = pct;
            results.push(r);
        }
    }
    let mut d = doc(results);
    d.suite = Some("mixes".into());
    d
}

#[test]
fn percentiles_from_a_histogram_follow_the_rank_definition() {
    let mut r = result(Rw::Randread, 4096, 1, 1, 100.0);
    // One IO at each of 1 … 1000 ns: the p-th percentile is the value of rank ceil(p/100 × n).
    r.lat_hist = (1..=1000).rev().map(|v| [v, 1]).collect();
    let p = figures::percentiles(&r);
    assert_eq!(
        p,
        vec![
            (50.0, 500.0),
            (75.0, 750.0),
            (90.0, 900.0),
            (95.0, 950.0),
            (99.0, 990.0),
            (99.5, 995.0),
            (99.9, 999.0)
        ],
        "p99.95 and p99.99 need more than 1000 IOs to mean anything"
    );
    // Without a histogram the summary's percentiles are used.
    r.lat_hist.clear();
    r.ios = 1_000_000;
    let p = figures::percentiles(&r);
    assert_eq!(p.len(), 5);
    assert_eq!(p[4], (99.99, r.lat_ns.p9999 as f64));
}

#[test]
fn a_matrix_gets_block_size_charts_per_pattern_and_no_orion() {
    let mut results = matrix(Rw::Randread, &[1, 10, 40]);
    results.extend(matrix(Rw::Randwrite, &[1, 10, 40]));
    let report = build(&[input("matrix", doc(results))]);
    let count = |k: Kind| report.charts.iter().filter(|c| c.kind == k).count();
    assert_eq!(count(Kind::BsIops), 2);
    assert_eq!(count(Kind::BsBw), 2);
    assert_eq!(count(Kind::Orion), 0);
    assert!(report
        .charts
        .iter()
        .any(|c| c.title == "randread, iodepth 1: IOPS by block size"));
    // 54 results: latency charts capped, time series only for results with stalls (none).
    assert_eq!(count(Kind::Latency), 2);
    assert_eq!(count(Kind::TimeSeries), 0);
    let absent = report.absent.join("\n");
    assert!(
        absent.contains("latency percentiles of 42 more results"),
        "{absent}"
    );
    assert!(absent.contains("time series of 54 results"), "{absent}");
    assert!(
        absent.contains("runs compared: needs two or more runs"),
        "{absent}"
    );
    // Each thread count is a line of the chart.
    let svg = &report
        .charts
        .iter()
        .find(|c| c.kind == Kind::BsIops)
        .unwrap()
        .svg;
    for t in ["1 thread", "10 threads", "40 threads"] {
        assert!(svg.contains(t), "{t}");
    }
}

#[test]
fn an_orion_sweep_gets_its_chart_with_a_line_pair_per_read_share() {
    let report = build(&[input("mixes", mixes())]);
    assert_eq!(kinds(&report)[0], Kind::Orion);
    let orion: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.kind == Kind::Orion)
        .collect();
    assert_eq!(orion.len(), 1);
    for s in ["100% reads", "90% reads", "50% reads", "50% reads, latency"] {
        assert!(orion[0].svg.contains(s), "{s}");
    }
    assert!(!report.charts.iter().any(|c| c.kind == Kind::BsIops));
}

#[test]
fn stalls_get_a_shaded_time_series_even_in_a_large_run() {
    let mut results = matrix(Rw::Randwrite, &[1, 10]);
    for b in &mut results[7].fine.ios[20..50] {
        *b = 0;
    }
    let report = build(&[input("matrix", doc(results))]);
    let ts: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.kind == Kind::TimeSeries)
        .collect();
    assert_eq!(ts.len(), 1);
    assert!(ts[0].svg.contains("stall 3.0 s"), "the band is labelled");
    assert!(report.html.contains("data-kind=\"stall\""));
}

#[test]
fn two_runs_are_compared_and_scaled_by_their_parameter() {
    let mut a = doc(matrix(Rw::Randread, &[1, 10]));
    a.params.insert("disks".into(), "2".into());
    let mut b = doc(matrix(Rw::Randread, &[1, 10])
        .into_iter()
        .map(|mut r| {
            r.iops *= 1.8;
            r
        })
        .collect());
    b.params.insert("disks".into(), "4".into());
    let mut c = b.clone();
    c.params.insert("disks".into(), "8".into());
    let report = build(&[input("two", a), input("four", b), input("eight", c)]);
    let ks = kinds(&report);
    assert!(
        ks.contains(&Kind::Compare) && ks.contains(&Kind::Scaling),
        "{ks:?}"
    );
    // 18 shared workloads: the first 12 get a chart of IOPS and one of p99 latency each.
    assert_eq!(
        report
            .charts
            .iter()
            .filter(|c| c.kind == Kind::Compare)
            .count(),
        2 * 12
    );
    let scaling = report
        .charts
        .iter()
        .find(|c| c.kind == Kind::Scaling)
        .unwrap();
    assert_eq!(scaling.title, "IOPS by disks");
    // 4 → 8 disks gained nothing: the series levels off at 4.
    assert!(
        scaling.svg.contains("levels off at disks = 4"),
        "{}",
        scaling.svg
    );
    // Every series levels off at 4: each is ringed, the setting said once, so no two labels
    // lie on each other.
    let rings = scaling.svg.matches("class=\"mark\"").count();
    assert!(rings > 1, "{}", scaling.svg);
    assert_eq!(
        scaling.svg.matches("class=\"mark-label\"").count(),
        1,
        "{}",
        scaling.svg
    );
    // Chart titles carry the run's name once there are several runs.
    assert!(report.charts.iter().any(|c| c.title.starts_with("two: ")));
}

// Regression (issue 12): `report A qd1 qd32` said "the runs share no workload" while
// `compare qd1 qd32` compared them; one rule now decides for both, and each workload has its
// own chart so 4K beside 1M stays readable.
#[test]
fn report_and_compare_share_one_rule_for_matching() {
    let qd1 = doc(vec![result(Rw::Randread, 8192, 1, 1, 5_000.0)]);
    let qd32 = doc(vec![result(Rw::Randread, 8192, 1, 32, 60_000.0)]);
    assert_eq!(
        crate::matching::counterpart(&qd1, &qd1.results[0], &qd32),
        Some(0),
        "two runs of one result each are compared whatever their workloads"
    );
    let report = build(&[input("qd1", qd1), input("qd32", qd32)]);
    let compared: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.kind == Kind::Compare)
        .collect();
    assert_eq!(compared.len(), 2, "IOPS and p99 latency");
    assert!(
        compared[0].svg.contains("class=\"value\""),
        "values on the bars"
    );
}

#[test]
fn slugs_are_unique_safe_ids() {
    let report = build(&[input("x", mixes()), input("y", mixes())]);
    let mut slugs: Vec<&str> = report.charts.iter().map(|c| c.slug.as_str()).collect();
    assert!(slugs.iter().all(|s| s
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')));
    let n = slugs.len();
    slugs.sort();
    slugs.dedup();
    assert_eq!(slugs.len(), n);
    assert_eq!(
        slugify("randread 4K, 1 thread: IOPS by block size"),
        "randread-4k-1-thread-iops-by-block-size"
    );
    assert_eq!(slugify("../../etc/passwd"), "etc-passwd");
    assert!(slugify(&"x".repeat(200)).len() <= 60);
}

#[test]
fn text_from_documents_is_escaped() {
    let mut d = mixes();
    d.label = Some("<script>alert(1)</script>".into());
    d.notes.push("a & b < c".into());
    let report = build(&[input("<b>run</b>", d)]);
    assert!(!report.html.contains("<script>"));
    assert!(!report.html.contains("<b>run</b>"));
    assert!(report.html.contains("&lt;b&gt;run&lt;/b&gt;"));
    assert!(report.html.contains("a &amp; b &lt; c"));
    // The hostname of the fixture has angle brackets too.
    assert!(report.html.contains("bench &lt;1&gt;"));
}

// Issue 11: the report has a table of what each device saw, and its request size and queue
// depth over time.
#[test]
fn devices_get_a_table_and_a_chart() {
    let mut r = result(Rw::Read, 1 << 20, 1, 4, 1000.0);
    let s = iogauge_sysinfo::diskstats::DiskStat {
        reads: 1000,
        sectors_read: 1000 * 2048,
        time_in_queue_ms: 4000,
        io_ticks_ms: 1000,
        ..Default::default()
    };
    let intervals: Vec<(f64, Option<iogauge_sysinfo::diskstats::DiskStat>)> =
        (1..=3).map(|t| (t as f64, Some(s))).collect();
    r.devices = vec![crate::model::DeviceDoc::of(
        "vda",
        Some(&s),
        1.0,
        &intervals,
        Default::default(),
    )];
    assert_eq!(r.devices[0].avg_read_request_bytes, Some(1048576.0));
    assert_eq!(r.devices[0].avg_queue_depth, Some(4.0));
    let report = build(&[input("dev", doc(vec![r]))]);
    assert!(report.html.contains("What the devices saw"));
    assert!(
        report.html.contains("<td>vda</td>"),
        "the table names the device"
    );
    assert!(report
        .charts
        .iter()
        .any(|c| c.title.contains("what vda saw")));
}

#[test]
fn a_database_timeline_is_one_chart_of_two_panels_with_its_checkpoints_shaded() {
    use crate::model::{DeviceStep, FlushDoc, TimelineDoc, TimelineRow};
    let mut r = result(Rw::Randrw, 8192, 4, 1, 1000.0);
    r.timeline = Some(Box::new(TimelineDoc {
        started_unix_s: 0.0,
        step_s: 1.0,
        devices: vec!["loop1".into()],
        server_source: "pg_stat_bgwriter, pg_stat_wal".into(),
        rows: (1..=20)
            .map(|k| TimelineRow {
                t_s: k as f64,
                tps: 1000.0,
                lat_p99_ns: 2_000_000,
                devices: vec![Some(DeviceStep {
                    write_bytes_s: 15e6,
                    queue: 30.0,
                    ..DeviceStep::default()
                })],
                ..TimelineRow::default()
            })
            .collect(),
        flushes: vec![FlushDoc {
            what: "checkpoint".into(),
            n: 1,
            start_s: 8.0,
            end_s: 14.0,
            complete: true,
            ..FlushDoc::default()
        }],
    }));
    let report = build(&[input("db", doc(vec![r]))]);
    let db: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.title.contains("the database and its devices"))
        .collect();
    assert_eq!(db.len(), 1);
    let svg = &db[0].svg;
    assert_eq!(svg.matches("<svg").count(), 1, "one chart");
    let panels: Vec<&str> = svg.split("<g transform=").skip(1).collect();
    assert_eq!(panels.len(), 2, "TPS above, devices below");
    assert!(
        panels.iter().all(|p| p.contains("checkpoint 1")),
        "shaded in both panels"
    );
    assert!(svg.contains("loop1 written") && svg.contains("loop1 queue"));
    assert!(db[0].caption.contains("checkpoints from the server log"));
}

/// Compared runs: a small p99 reads in µs with its unit on the bar, never "0.0545" of a ms;
/// a confidence interval that would reach below zero is cut there and the caption says so.
#[test]
fn compared_bars_carry_units_and_whiskers_stop_at_zero() {
    let mut a = result(Rw::Randread, 4096, 1, 1, 20_000.0);
    a.lat_ns.p99 = 54_500;
    let mut b = a.clone();
    b.lat_ns.p99 = 61_200;
    b.stats.insert(
        "iops".into(),
        crate::model::StatsDoc {
            n: 2,
            values: vec![1_000.0, 39_000.0],
            mean: 20_000.0,
            ci95: [-150_000.0, 190_000.0],
            ..crate::model::StatsDoc::default()
        },
    );
    let report = build(&[input("a", doc(vec![a])), input("b", doc(vec![b]))]);
    let lat = report
        .charts
        .iter()
        .find(|c| c.kind == Kind::Compare && c.title.starts_with("p99 latency"))
        .unwrap();
    assert!(
        lat.svg.contains("54.5 µs") && lat.svg.contains("(µs)"),
        "{}",
        lat.svg
    );
    assert!(!lat.svg.contains("0.0545"));
    let iops = report
        .charts
        .iter()
        .find(|c| c.kind == Kind::Compare && c.title.starts_with("IOPS"))
        .unwrap();
    assert!(iops.svg.contains("20,000"), "{}", iops.svg);
    assert!(iops.caption.contains("cut at zero"), "{}", iops.caption);
    assert!(!iops.svg.contains("-150"), "no tick or whisker below zero");
    assert!(!lat.caption.contains("cut at zero"));
}

/// A database run: its transactions in a table of their own (TPS, not IOPS and MiB/s), and a
/// buffer sweep drawn as TPS by the buffer's share of the data.
#[test]
fn a_database_run_shows_transactions_and_its_buffer_sweep() {
    let results: Vec<crate::model::ResultDoc> = [(0.25, 459.0), (1.0, 1_400.0)]
        .into_iter()
        .map(|(ratio, tps)| {
            let mut r = result(Rw::Randrw, 16384, 2, 1, tps);
            r.bw_bytes = 0.0;
            r.sysbench = Some(Box::new(crate::model::SysbenchDoc {
                buffer_ratio: Some(ratio),
                ..crate::model::SysbenchDoc::default()
            }));
            r
        })
        .collect();
    let report = build(&[input("sb", doc(results))]);
    assert!(report.html.contains("<h3>Transactions</h3>"));
    assert!(report.html.contains("1,400 TPS") && report.html.contains(">25%<"));
    assert!(
        !report.html.contains("<h3>Results</h3>"),
        "no IOPS table of transactions"
    );
    let bars: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.kind == Kind::Buffers)
        .collect();
    assert_eq!(bars.len(), 2, "TPS and p99");
    assert!(bars[0].title.contains("TPS by innodb_buffer_pool_size"));
    assert!(bars[0].svg.contains("1,400") && bars[0].svg.contains("25%"));
    assert!(!report.absent.iter().any(|a| a.contains("buffer size")));
    // Transactions over time are TPS, never IOPS.
    let over_time: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.kind == Kind::TimeSeries)
        .collect();
    assert!(!over_time.is_empty());
    assert!(
        over_time
            .iter()
            .all(|c| c.title.contains("TPS over time") && !c.svg.contains(">IOPS<")),
        "{:?}",
        over_time.iter().map(|c| &c.title).collect::<Vec<_>>()
    );

    // A storage-only report never mentions a buffer chart.
    let plain = build(&[input("m", doc(matrix(Rw::Randread, &[1, 4])))]);
    assert!(!plain.absent.iter().any(|a| a.contains("buffer size")));
}

/// A layout sweep over member counts and chunks: IOPS by members with a line per layout and
/// chunk, bars by layout per chunk; its member count is not drawn as a parameter across
/// layouts, and a sweep of one count and one chunk says why these are absent.
#[test]
fn a_layout_sweep_is_drawn_by_members_and_by_chunk() {
    let run = |layout: &str, members: u32, chunk: Option<&str>, iops: f64| {
        let mut d = doc(vec![result(Rw::Randread, 4096, 1, 8, iops)]);
        d.params.insert("layout".into(), layout.into());
        d.params
            .insert("layout.members".into(), members.to_string());
        if let Some(c) = chunk {
            d.params.insert("layout.chunk".into(), c.into());
        }
        input(&format!("{layout} {members} {chunk:?}"), d)
    };
    let runs = vec![
        run("single", 1, None, 1000.0),
        run("md raid0", 2, Some("64K"), 2000.0),
        run("md raid0", 4, Some("64K"), 3900.0),
        run("md raid5", 3, Some("64K"), 1500.0),
        run("md raid5", 4, Some("64K"), 2100.0),
        run("md raid0", 4, Some("512K"), 3700.0),
    ];
    let report = build(&runs);
    let layouts: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.kind == Kind::Layouts)
        .collect();
    let titles: Vec<&str> = layouts.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "IOPS by members: randread 4K, 1 thread, iodepth 8",
            "IOPS by layout and chunk: randread 4K, 1 thread, iodepth 8"
        ],
        "{titles:?}"
    );
    let lines = &layouts[0].svg;
    assert!(lines.contains("md raid0 · chunk 64K") && lines.contains("md raid5 · chunk 64K"));
    // A line needs two counts: raid0 at 512K was built at one.
    assert!(!lines.contains("md raid0 · chunk 512K"), "{lines}");
    let bars = &layouts[1].svg;
    assert!(
        bars.contains("chunk 512K") && bars.contains("3,900"),
        "{bars}"
    );
    assert!(!report.charts.iter().any(|c| c.kind == Kind::Scaling));
    // On the page, in a section of their own.
    assert!(report.html.contains("<section id=\"layouts\">"));
    assert!(report.html.contains("href=\"#layouts\""));
    // One count and one chunk: nothing to draw, and the page says why.
    let flat = build(&[
        run("single", 1, None, 1000.0),
        run("md raid0", 2, Some("64K"), 2000.0),
    ]);
    assert!(!flat.charts.iter().any(|c| c.kind == Kind::Layouts));
    assert!(
        flat.absent
            .iter()
            .any(|a| a.starts_with("arrays by member count")),
        "{:?}",
        flat.absent
    );
}

/// Two TPC-C-derived runs, PostgreSQL's and MariaDB's, compared: the bars are TPS (never
/// "IOPS"), named by server, the one a warning takes the meaning from marked with the mark's
/// legend in the caption; each timeline shades its ramp and draws no p99 where the load's
/// seconds carry none.
#[test]
fn compared_database_runs_read_as_database_runs() {
    use crate::model::{TimelineDoc, TimelineRow, TpccDoc};
    let load = |server: &str| {
        let mut r = result(Rw::Randrw, 8192, 4, 1, 900.0);
        r.name = Some("TPC-C-derived · 2 warehouses · 4 terminals".into());
        r.workload.engine = "tpcc".into();
        r.tpcc = Some(Box::new(TpccDoc {
            server: server.into(),
            ramp_s: 6.0,
            ..Default::default()
        }));
        r.timeline = Some(Box::new(TimelineDoc {
            step_s: 1.0,
            rows: (1..=20)
                .map(|k| TimelineRow {
                    t_s: k as f64,
                    tps: 15.0,
                    ..TimelineRow::default()
                })
                .collect(),
            ..TimelineDoc::default()
        }));
        r
    };
    let pg = input("PostgreSQL (run 4)", doc(vec![load("PostgreSQL")]));
    let mut maria = input("MariaDB (run 5)", doc(vec![load("MariaDB")]));
    maria.doc.findings.push(iogauge_analyze::Finding::new(
        iogauge_analyze::Kind::Cache,
        iogauge_analyze::Severity::Warning,
        "the data fits the page cache".into(),
        "x",
    ));
    let report = build(&[pg, maria]);
    let compared: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.kind == Kind::Compare)
        .collect();
    let tps = compared
        .iter()
        .find(|c| c.title.starts_with("TPS: "))
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                compared.iter().map(|c| &c.title).collect::<Vec<_>>()
            )
        });
    assert!(!compared.iter().any(|c| c.title.starts_with("IOPS")));
    assert!(
        tps.svg.contains("PostgreSQL (run 4)") && tps.svg.contains("MariaDB (run 5) m"),
        "{}",
        tps.svg
    );
    assert!(tps.caption.contains("m: from memory"), "{}", tps.caption);
    let timelines: Vec<&Chart> = report
        .charts
        .iter()
        .filter(|c| c.title.contains("the database and its devices"))
        .collect();
    assert_eq!(timelines.len(), 2);
    for t in timelines {
        assert!(t.svg.contains("ramp (not measured)"), "{}", t.svg);
        assert!(!t.svg.contains("p99 latency"), "{}", t.svg);
        assert!(t.caption.contains("the ramp before the measured window"));
    }
}

/// A commit stream alone and beside readers: one chart of its syncs' p50 and p99 per case;
/// the same stream alone only (nothing to set it against) draws none.
#[test]
fn commits_beside_other_streams_get_their_latency_chart() {
    let wal = |name: &str, p99_us: u64| {
        let mut r = result(Rw::Write, 8192, 1, 1, 1_000.0);
        r.name = Some(name.into());
        r.write = Some(crate::model::OpDoc::default());
        r.sync = Some(crate::model::SyncDoc {
            kind: None,
            count: 10_000,
            per_s: 1_000.0,
            lat_ns: crate::measure::LatNs {
                p50: p99_us * 400,
                p99: p99_us * 1_000,
                ..Default::default()
            },
        });
        r
    };
    let alone = wal("wal: write 8K + fdatasync", 200);
    let mut beside = wal("wal: write 8K + fdatasync (beside reads)", 900);
    beside.together = Some(crate::model::TogetherDoc {
        cell: "wal + reads".into(),
        streams: vec!["wal".into(), "reads".into()],
        sum: false,
        targets: Vec::new(),
    });
    let commit = |c: &&Chart| c.title.contains("Commit latency");
    let report = build(&[input("commit", doc(vec![alone.clone(), beside]))]);
    let charts: Vec<&Chart> = report.charts.iter().filter(commit).collect();
    assert_eq!(charts.len(), 1);
    for s in ["wal: alone", "wal: reads", "p50", "p99"] {
        assert!(charts[0].svg.contains(s), "{s}");
    }
    let report = build(&[input("alone", doc(vec![alone]))]);
    assert!(!report.charts.iter().any(|c| commit(&c)));
}
