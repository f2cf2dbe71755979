//! Each run's system in the report: kernel, CPU, RAM, file system and mount options, and the
//! device stack with scheduler, queue settings, RAID layout and alignment ("100K+ IOPS on semi-commodity hardware": "document
//! all involved settings for each and every test run").

use crate::units;
use iogauge_charts::escape as esc;
use iogauge_sysinfo::{BlockDevice, SystemInfo};
use std::fmt::Write;

/// The machine, the target's file system and the device stack under it.
pub(super) fn table(s: &mut String, sys: &SystemInfo) {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    let mut rows: Vec<(&str, String)> = vec![
        ("Host", opt(&sys.hostname)),
        ("Kernel", opt(&sys.kernel)),
        (
            "CPU",
            match (&sys.cpu_model, sys.cpu_count) {
                (Some(m), Some(n)) => format!("{m} × {n} logical CPUs"),
                (Some(m), None) => m.clone(),
                (None, Some(n)) => format!("{n} logical CPUs"),
                (None, None) => "—".into(),
            },
        ),
        (
            "RAM",
            sys.mem_total_bytes
                .map(units::iec)
                .unwrap_or_else(|| "—".into()),
        ),
    ];
    if let Some(t) = &sys.target {
        rows.push(("Target", t.path.clone()));
        rows.push(("File system", opt(&t.filesystem)));
        rows.push((
            "Mounted",
            match (&t.mount_source, &t.mount_point) {
                (Some(src), Some(mp)) => format!("{src} on {mp}"),
                (None, Some(mp)) => mp.clone(),
                _ => "—".into(),
            },
        ));
        rows.push(("Mount options", opt(&t.mount_options)));
        rows.push((
            "FS block size",
            t.fs_block_size
                .map(units::iec)
                .unwrap_or_else(|| "—".into()),
        ));
    }
    s.push_str("<div class=\"table-wrap\"><table class=\"kv\"><tbody>\n");
    for (k, v) in rows {
        let _ = writeln!(s, "<tr><th>{k}</th><td>{}</td></tr>", esc(&v));
    }
    s.push_str("</tbody></table></div>\n");
    let devices = sys
        .target
        .as_ref()
        .map(|t| t.devices.as_slice())
        .unwrap_or(&[]);
    if devices.is_empty() {
        return;
    }
    if let Some(t) = &sys.target {
        let _ = writeln!(
            s,
            "<pre class=\"stack\">{}</pre>",
            esc(&crate::report::stack::tree(t).join("\n"))
        );
    }
    s.push_str(
        "<p>Device stack, from the file system down:</p>\n<div class=\"table-wrap\"><table class=\"devices\">\n<thead><tr>\
         <th>Device</th><th>Role</th><th>Model</th><th class=\"num\">Size</th><th>Media</th>\
         <th>Scheduler</th><th class=\"num\">nr_requests</th><th class=\"num\">read-ahead</th>\
         <th>Write cache</th><th class=\"num\">Queue depth</th><th>Blocks (logical/physical)</th>\
         <th>Layout</th></tr></thead><tbody>\n",
    );
    for d in devices {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td>{}</td><td class=\"layout\">{}</td></tr>",
            esc(&d.name),
            esc(&format!("{:?}", d.role).to_lowercase()),
            esc(&[d.vendor.clone(), d.model.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ")),
            d.size_bytes.map(units::iec).unwrap_or_default(),
            match d.rotational {
                Some(true) => "rotational",
                Some(false) => "solid state",
                None => "",
            },
            esc(&d.scheduler.clone().unwrap_or_default()),
            num(d.nr_requests),
            d.read_ahead_kb
                .map(|k| format!("{k} KiB"))
                .unwrap_or_default(),
            esc(&d.write_cache.clone().unwrap_or_default()),
            num(d.queue_depth),
            match (d.logical_block_size, d.physical_block_size) {
                (Some(l), Some(p)) => format!("{l} / {p}"),
                _ => String::new(),
            },
            esc(&layout(d))
        );
    }
    s.push_str("</tbody></table></div>\n");
    for (t, l) in sys
        .target
        .iter()
        .flat_map(|t| t.io_limits.iter().map(move |l| (t, l)))
    {
        let _ = writeln!(
            s,
            "<p class=\"limit\">Limit: {}.</p>",
            esc(&crate::analysis::io_limit(t, l))
        );
    }
}

/// RAID level and chunk, partition alignment, loop backing file, dm name: whichever apply.
fn layout(d: &BlockDevice) -> String {
    let mut parts = Vec::new();
    if let Some(level) = &d.md_level {
        let mut p = level.clone();
        if let Some(c) = d.md_chunk_bytes {
            let _ = write!(p, ", chunk {}", units::iec(c));
        }
        if !d.md_members.is_empty() {
            let _ = write!(p, " over {}", d.md_members.join(", "));
        }
        parts.push(p);
    }
    if let Some(start) = d.partition_start_bytes {
        let aligned = match d.aligned_1mib {
            Some(true) => "1 MiB aligned",
            Some(false) => "NOT 1 MiB aligned",
            None => "",
        };
        parts.push(
            format!("starts at {} {aligned}", units::iec(start))
                .trim_end()
                .to_string(),
        );
    }
    if let Some(o) = d.optimal_io_size {
        parts.push(format!("optimal IO {}", units::iec(u64::from(o))));
    }
    if let Some(f) = &d.loop_backing_file {
        parts.push(format!("backed by {f}"));
    }
    if let Some(n) = &d.dm_name {
        parts.push(format!("dm {n}"));
    }
    parts.join("; ")
}

fn num(v: Option<u32>) -> String {
    v.map(|n| n.to_string()).unwrap_or_default()
}
