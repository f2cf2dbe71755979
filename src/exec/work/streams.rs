//! A cell of several streams as one work: each stream one workload over its range, all
//! started at once, measured apart and as their sum.

use super::*;
use crate::workload::Beside;

/// Runs the one-workload works of a cell of several streams at once, behind one gate: the
/// result is their sum (the devices and other processes watched over all of them, as the
/// device saw them together), with each stream's own measurement in `streams`.
pub fn together(
    works: &[&Work],
    beside: &[Beside],
    targets: &[&Target],
    prefix: &str,
    progress: bool,
) -> Result<Ran> {
    let mut parts = Vec::with_capacity(works.len());
    for w in works {
        match w {
            Work::One { spec, start, len } => parts.push((spec, *start, *len)),
            // The plan keeps copies and --files cells out of a cell of several streams.
            _ => anyhow::bail!("a copy or --files cell cannot run beside another stream"),
        }
    }
    let opens: Vec<_> = parts
        .iter()
        .zip(targets)
        .map(|((s, _, _), t)| move || t.open_all(s.writes(), s.direct, s.odsync))
        .collect();
    let beside_of = |i: usize| beside.get(i).copied().unwrap_or_default();
    let streams: Vec<runner::Stream> = parts
        .iter()
        .zip(&opens)
        .zip(targets)
        .enumerate()
        .map(|(i, (((spec, start, len), open), t))| runner::Stream {
            spec,
            open,
            range_start: t.offset + start,
            range_bytes: *len,
            beside: beside_of(i),
        })
        .collect();
    // Streams on several targets have no one device: their stalls are judged without it.
    let display = Display {
        progress,
        prefix: format!("{prefix} "),
        ..Display::default()
    };
    // The devices from the first stream's measurement on (each stream's lead-in and start
    // may differ).
    let lead = parts
        .iter()
        .enumerate()
        .map(|(i, p)| beside_of(i).delay + p.0.lead_in())
        .min()
        .unwrap_or_default();
    let watch = Watch::start_on(targets, parts[0].0.interval, lead);
    let measured = runner::run_together(&streams, &display)?;
    let each: Vec<Ran> = parts
        .iter()
        .zip(&measured)
        .map(|((spec, start, len), m)| Ran {
            spec: (*spec).clone(),
            start: *start,
            len: *len,
            path: None,
            m: m.copy(),
            devices: Vec::new(),
            others: None,
            kernel_threads: Vec::new(),
            streams: Vec::new(),
        })
        .collect();
    let sum = combined_spec(&each);
    let start = each.iter().map(|r| r.start).min().unwrap_or(0);
    let end = each.iter().map(|r| r.start + r.len).max().unwrap_or(0);
    // The sum over the cell's whole time: a stream that started later is placed where it ran.
    let first = (0..measured.len())
        .map(|i| beside_of(i).delay)
        .min()
        .unwrap_or_default();
    let placed = measured
        .into_iter()
        .enumerate()
        .map(|(i, m)| m.later_by(beside_of(i).delay - first))
        .collect();
    let mut ran = watch.stop(sum, start, end - start, concurrent(placed));
    ran.streams = each;
    Ok(ran)
}

/// The workload a cell of several streams adds up to, for the reader and for the findings
/// that judge the devices against it: every stream's threads, the IOs in flight they keep
/// (as a depth per thread, rounded up), reads against writes by what each stream issued.
fn combined_spec(streams: &[Ran]) -> Spec {
    let first = &streams[0].spec;
    let threads: u32 = streams.iter().map(|r| r.spec.threads).sum();
    let in_flight: u32 = streams
        .iter()
        .map(|r| r.spec.threads * r.spec.iodepth)
        .sum();
    let reads: u64 = streams
        .iter()
        .filter_map(|r| r.m.read.as_ref())
        .map(|o| o.ios)
        .sum();
    let writes: u64 = streams
        .iter()
        .filter_map(|r| r.m.write.as_ref())
        .map(|o| o.ios)
        .sum();
    let random = streams.iter().any(|r| r.spec.rw.random());
    let all_same = streams.iter().all(|r| r.spec.rw == first.rw);
    let rw = match (all_same, reads > 0 && writes > 0, random) {
        (true, _, _) => first.rw,
        (false, true, true) => Rw::Randrw,
        (false, true, false) => Rw::Rw,
        (false, false, _) => match (writes > 0, random) {
            (true, true) => Rw::Randwrite,
            (true, false) => Rw::Write,
            (false, true) => Rw::Randread,
            (false, false) => Rw::Read,
        },
    };
    let limit = match streams
        .iter()
        .map(|r| r.spec.limit)
        .max_by_key(|l| match l {
            Limit::Time(t) => t.as_nanos(),
            Limit::Data(_) => 0,
        }) {
        Some(Limit::Data(_)) | None => {
            Limit::Data(streams.iter().map(|r| r.m.bytes).sum::<u64>().max(1))
        }
        Some(t) => t,
    };
    Spec {
        rw,
        mix_read_pct: match reads + writes {
            0 => first.mix_read_pct,
            n => (reads * 100 / n) as u8,
        },
        bs: streams
            .iter()
            .map(|r| r.spec.bs)
            .min_by_key(|b| b.bytes())
            .unwrap_or(first.bs),
        threads,
        iodepth: in_flight.div_ceil(threads.max(1)),
        direct: streams.iter().all(|r| r.spec.direct),
        sync: streams.iter().find_map(|r| r.spec.sync),
        limit,
        ..first.clone()
    }
}
