//! A database run's figures: its transactions and devices on one time axis, and its buffer
//! sweep.

use super::{Chart, Kind};
use crate::model::{ResultDoc, RunDoc};
use iogauge_charts::{Axis, Band, Bar, BarChart, BarSeries, LineChart, Series};

/// A database's buffer sweep (`--buffer-ratio`, the Solid State Disk Benchmarking study's
/// buffer-to-data ratio): TPS and p99 of each measurement against the buffer's share of the
/// data.
pub(super) fn buffer_charts(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) {
    let points: Vec<(f64, &ResultDoc)> = doc
        .results
        .iter()
        .filter_map(|r| Some((r.buffer_ratio()?, r)))
        .collect();
    if points.len() < 2 {
        return;
    }
    let server = match points[0].1.db_server() {
        Some("PostgreSQL") => "shared_buffers",
        _ => "innodb_buffer_pool_size",
    };
    let groups: Vec<String> = points
        .iter()
        .map(|(x, _)| format!("{:.0}%", x * 100.0))
        .collect();
    for (what, axis, value, fmt) in [
        (
            "TPS",
            "Transactions per second",
            (|r: &ResultDoc| r.iops) as fn(&ResultDoc) -> f64,
            (|v: f64| crate::units::count(v)) as fn(f64) -> String,
        ),
        (
            "p99 latency",
            "p99 transaction latency (ms)",
            |r: &ResultDoc| r.lat_ns.p99 as f64 / 1e6,
            |v: f64| format!("{v:.1} ms"),
        ),
    ] {
        let title = format!("{prefix}{what} by {server} as a share of the data");
        let chart = BarChart::new(title.clone())
            .groups(groups.clone())
            .x_title(format!("{server} / data"))
            .y_axis(Axis::linear(axis).format(fmt))
            .values_on_bars()
            .series(BarSeries::new(
                what,
                points.iter().map(|(_, r)| Bar::new(value(r))),
            ));
        out.push(Chart::new(
            Kind::Buffers,
            Some(run),
            title,
            chart.to_svg(),
            "one measurement per buffer size, each after a restart with that setting",
        ));
    }
}

/// A database run on one time axis: TPS and p99 above, each device's writes and queue below,
/// the server's checkpoints (or InnoDB's flush bursts) shaded in both.
pub(super) fn db_timeline_charts(doc: &RunDoc, run: usize, prefix: &str, out: &mut Vec<Chart>) {
    for r in &doc.results {
        let Some(t) = r.timeline.as_deref().filter(|t| !t.rows.is_empty()) else {
            continue;
        };
        let name = r.display_name();
        let title = format!("{prefix}{name}: the database and its devices over time");
        // Each step drawn at its middle, as the time series are.
        let mid = |row: &crate::model::TimelineRow| row.t_s - t.step_s / 2.0;
        let x = || Axis::linear("Time since the first transaction (s)").from_zero();
        // A TPC-C-derived load ramps up before its window: the seconds before it are no part
        // of the result, and the chart says which they are.
        let ramp = r.tpcc.as_deref().map(|c| c.ramp_s).filter(|s| *s > 0.0);
        let bands: Vec<Band> = ramp
            .map(|s| Band::new(0.0, s, "ramp (not measured)".to_string()))
            .into_iter()
            .chain(
                t.flushes
                    .iter()
                    .map(|f| Band::new(f.start_s, f.end_s, format!("{} {}", f.what, f.n))),
            )
            .collect();
        let mut top = LineChart::new("Transactions")
            .x_axis(x())
            .y_axis(Axis::linear("TPS").from_zero())
            .series(Series::new(
                "TPS",
                t.rows.iter().map(|row| (mid(row), row.tps)),
            ));
        // A load whose seconds carry no latency draws none, rather than a flat line at zero.
        let p99 = t.rows.iter().any(|row| row.lat_p99_ns > 0);
        if p99 {
            top = top
                .y2_axis(Axis::linear("p99 latency (ms)").from_zero())
                .series(
                    Series::new(
                        "p99 latency",
                        t.rows
                            .iter()
                            .map(|row| (mid(row), row.lat_p99_ns as f64 / 1e6)),
                    )
                    .right_axis(),
                );
        }
        let mut bottom = LineChart::new("Devices")
            .x_axis(x())
            .y_axis(Axis::linear(format!("Written ({})", crate::units::bw_unit())).from_zero())
            .y2_axis(Axis::linear("Requests queued").from_zero());
        for (i, dev) in t.devices.iter().enumerate() {
            let step = |g: fn(&crate::model::DeviceStep) -> f64| -> Vec<(f64, f64)> {
                t.rows
                    .iter()
                    .filter_map(|row| Some((mid(row), g(row.devices.get(i)?.as_ref()?))))
                    .collect()
            };
            bottom = bottom
                .series(Series::new(
                    format!("{dev} written"),
                    step(|d| crate::units::bw_value(d.write_bytes_s)),
                ))
                .series(Series::new(format!("{dev} queue"), step(|d| d.queue)).right_axis());
        }
        for b in &bands {
            top = top.band(b.clone());
            bottom = bottom.band(b.clone());
        }
        let mut caption = match t.flushes.first().map(|f| f.what.as_str()) {
            None => format!("{name}; the server flushed nothing apart"),
            Some("checkpoint") => format!("{name}; shaded: checkpoints from the server log"),
            Some(_) => format!("{name}; shaded: bursts of InnoDB page flushing"),
        };
        if let Some(s) = ramp {
            caption.push_str(&format!(
                "; the first {} shaded: the ramp before the measured window",
                crate::units::duration(std::time::Duration::from_secs_f64(s))
            ));
        }
        if !p99 {
            caption.push_str("; no per-second latency was recorded for this load");
        }
        out.push(Chart::new(
            Kind::TimeSeries,
            Some(run),
            title.clone(),
            iogauge_charts::stack(&title, vec![top, bottom]),
            &caption,
        ));
    }
}
