//! Writes one chart of each kind, drawn from the seed studies' numbers, to a directory
//! (default `/tmp/charts-demo`) for looking at in a browser:
//! `cargo run -p iogauge-charts --example demo [dir]`.
#![allow(clippy::disallowed_methods)] // a demo's own files; clippy.toml binds the program

use std::path::PathBuf;

use iogauge_charts::{format_bytes, Axis, Band, Bar, BarChart, BarSeries, LineChart, Mark, Series};

/// Block sizes 512B..4MiB, as bm-flash tests them.
fn block_sizes() -> Vec<f64> {
    (0..14).map(|i| 512.0 * 2f64.powi(i)).collect()
}

/// Random read IOPS, RAID0 of 12 SSDs on one controller ("One DVD per second", first bm-flash table).
const READ_1: [f64; 14] = [
    11307.0, 22720.0, 24788.0, 29158.0, 30170.0, 26110.0, 19936.0, 13589.0, 8273.0, 4828.0, 2563.0,
    1447.0, 796.0, 407.0,
];
const READ_10: [f64; 14] = [
    63751.0, 63717.0, 63510.0, 63088.0, 61824.0, 61337.0, 51250.0, 27716.0, 13877.0, 6942.0,
    3472.0, 1736.0, 866.0, 430.0,
];
/// Random write IOPS with 10 threads on RAID5 of 4 SSDs: the "gaps" ("One DVD per second"), with the
/// 512KiB row missing as in the original output.
const WRITE_GAPS_10: [f64; 14] = [
    7221.0,
    5218.0,
    4357.0,
    3379.0,
    2018.0,
    2659.0,
    1217.0,
    144.0,
    96.0,
    13.0,
    f64::NAN,
    10.0,
    99.0,
    54.0,
];

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "/tmp/charts-demo".into()),
    );
    std::fs::create_dir_all(&dir)?;
    let bs = block_sizes();
    let pts = |v: &[f64]| {
        bs.iter()
            .copied()
            .zip(v.iter().copied())
            .collect::<Vec<_>>()
    };

    let block_size = LineChart::new("Random read IOPS against block size, RAID0 of 12 SSDs")
        .x_axis(Axis::log2("Block size").format(format_bytes))
        .y_axis(Axis::linear("IOPS").from_zero())
        .series(Series::new("1 thread", pts(&READ_1)))
        .series(Series::new("10 threads", pts(&READ_10)))
        .series(Series::new("10 threads, RAID5 write", pts(&WRITE_GAPS_10)));

    // Orion-style: IOPS and latency against outstanding IO (MySQL "Solid State Disk Benchmarking", 100 % reads).
    let outstanding = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0];
    let mtron_iops = [
        1900.0, 3300.0, 4300.0, 4900.0, 5100.0, 5200.0, 5200.0, 5200.0,
    ];
    let raptor_iops = [110.0, 125.0, 135.0, 142.0, 145.0, 150.0, 155.0, 160.0];
    let lat = |iops: &[f64]| {
        outstanding
            .iter()
            .zip(iops)
            .map(|(&q, &r)| (q, q / r * 1000.0))
            .collect::<Vec<_>>()
    };
    let zip = |ys: &[f64]| {
        outstanding
            .iter()
            .copied()
            .zip(ys.iter().copied())
            .collect::<Vec<_>>()
    };
    let dual = LineChart::new("Orion, 100 % reads: IOPS and latency against outstanding IO")
        .x_axis(Axis::linear("Outstanding IO"))
        .y_axis(Axis::log10("IOPS (solid)"))
        .y2_axis(Axis::log10("Latency, ms (dashed)"))
        .series(Series::new("Mtron IOPS", zip(&mtron_iops)))
        .series(Series::new("Raptor IOPS", zip(&raptor_iops)))
        .series(Series::new("Mtron latency", lat(&mtron_iops)).right_axis())
        .series(Series::new("Raptor latency", lat(&raptor_iops)).right_axis());

    let pct = [50.0, 90.0, 99.0, 99.9, 99.99];
    let percentiles = LineChart::new("Read latency percentiles, 8KiB random read")
        .x_axis(Axis::nines("Percentile"))
        .y_axis(Axis::log10("Latency (ms)"))
        .series(Series::new(
            "run 1: mdadm",
            pct.iter().copied().zip([0.21, 0.35, 0.9, 4.1, 11.0]),
        ))
        .series(Series::new(
            "run 2: lvm2",
            pct.iter().copied().zip([0.23, 0.41, 1.3, 7.9, 35.0]),
        ))
        .series(Series::new(
            "run 3: lvm2, noop",
            pct.iter().copied().zip([0.22, 0.39, 1.1, 9.5, 10400.0]),
        ));

    // A minute of write bandwidth with two controller freezes ("One DVD per second"'s "10 s freezes").
    let samples: Vec<(f64, f64)> = (0..=600)
        .map(|i| {
            let t = i as f64 * 0.1;
            let stalled = (17.0..27.0).contains(&t) || (44.5..46.0).contains(&t);
            let wobble = 20.0 * (t * 3.1).sin() + 12.0 * (t * 7.7).cos();
            (t, if stalled { 0.0 } else { 480.0 + wobble })
        })
        .collect();
    let time_series = LineChart::new("Sequential write bandwidth over time")
        .x_axis(Axis::linear("Time (s)"))
        .y_axis(Axis::linear("Bandwidth (MiB/s)").from_zero())
        .series(Series::new("write, 8KiB blocks", samples))
        .band(Band::new(17.0, 27.0, "stall 10 s"))
        .band(Band::new(44.5, 46.0, "stall 1.5 s"));

    let bars = BarChart::new("8KiB random IOPS, five runs each, 95 % confidence intervals")
        .groups(["random read", "random write", "70/30 read/write", "fsync"])
        .x_title("Workload")
        .y_axis(Axis::linear("IOPS"))
        .series(BarSeries::new(
            "mdadm RAID10",
            [
                Bar::new(61824.0).ci(60100.0, 63300.0),
                Bar::new(22138.0).ci(20900.0, 23500.0),
                Bar::new(41000.0).ci(38000.0, 43900.0),
                Bar::new(5200.0).ci(4700.0, 5600.0),
            ],
        ))
        .series(BarSeries::new(
            "lvm2 RAID10",
            [
                Bar::new(56000.0).ci(54800.0, 57100.0),
                Bar::new(21500.0).ci(19000.0, 23900.0),
                Bar::new(37500.0),
                Bar::new(5150.0).ci(4900.0, 5400.0),
            ],
        ))
        .series(BarSeries::new(
            "hardware RAID10",
            [
                Bar::new(48000.0).ci(47000.0, 49500.0),
                Bar::new(26000.0).ci(25000.0, 27000.0),
                Bar::new(35000.0).ci(33000.0, 36500.0),
                Bar::new(9800.0).ci(9000.0, 10400.0),
            ],
        ));

    let disks: Vec<f64> = (1..=12).map(f64::from).collect();
    let read_mbs = [
        260.0, 510.0, 760.0, 990.0, 1200.0, 1390.0, 1410.0, 1405.0, 1412.0, 1408.0, 1415.0, 1410.0,
    ];
    let write_mbs = [
        110.0, 205.0, 300.0, 390.0, 470.0, 545.0, 610.0, 668.0, 720.0, 765.0, 800.0, 830.0,
    ];
    let scaling = LineChart::new("Sequential bandwidth against number of SSDs, RAID0, 8KiB blocks")
        .x_axis(Axis::linear("Number of SSDs").from_zero())
        .y_axis(Axis::linear("Bandwidth (MB/s)").from_zero())
        .series(Series::new("read", disks.iter().copied().zip(read_mbs)))
        .series(Series::new("write", disks.iter().copied().zip(write_mbs)))
        .mark(Mark::new(6.0, 1390.0, "plateau starts here"));

    let charts = [
        ("1-block-size.svg", block_size.to_svg()),
        ("2-dual-axis.svg", dual.to_svg()),
        ("3-percentiles.svg", percentiles.to_svg()),
        ("4-time-series.svg", time_series.to_svg()),
        ("5-bars.svg", bars.to_svg()),
        ("6-scaling.svg", scaling.to_svg()),
        (
            "7-empty.svg",
            LineChart::new("Nothing measured yet").to_svg(),
        ),
    ];
    let mut html = String::from(
        "<!doctype html><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>iogauge charts</title><body style=\"max-width:900px;margin:auto\">\n",
    );
    for (name, svg) in &charts {
        std::fs::write(dir.join(name), svg)?;
        html.push_str(svg);
    }
    html.push_str("</body>\n");
    std::fs::write(dir.join("all.html"), html)?;
    println!(
        "wrote {} charts and all.html to {}",
        charts.len(),
        dir.display()
    );
    Ok(())
}
