//! fio's IO priorities, once a job's options are all read: the threads' own (`prioclass`,
//! `prio`, `priohint`: ioprio_set, as fio does) and a priority of an IO's own for a share of the
//! IOs (`cmdprio_percentage` with `cmdprio_class`, `cmdprio` and `cmdprio_hint`, or one share per
//! block size with `cmdprio_bssplit`), which only io_uring and libaio carry. Values are
//! Linux's ioprio: class << 13 | hint << 3 | level.

use super::draft::Set;
use super::values::{prio_per_direction as per_direction, size};
use super::{Engine, Job};
use crate::workload::{CmdPrio, Prio};

/// The job's priorities into `j.prio`, or the first rule its options break.
pub(super) fn apply(j: &mut Job, set: &Set, kb_base: u64) -> Result<(), String> {
    let get = |k: &str, max: u32| {
        set.get(k)
            .map(|(v, l)| per_direction(v, max).map_err(|e| format!("{l}: {k}={v}: {e}")))
            .transpose()
    };
    let one = |k: &str, max: u32| get(k, max).map(|v| v.map(|[r, _]| r));
    let hint = one("priohint", 1023)?.unwrap_or(0);
    let thread = match (one("prioclass", 3)?, one("prio", 7)?) {
        (None | Some(0), None) => None,
        (Some(0) | None, Some(l)) => Some(value(Prio::BE, hint, l)),
        (Some(c), l) => Some(value(c as u8, hint, l.unwrap_or(0))),
    };
    let class = get("cmdprio_class", 3)?.unwrap_or([Prio::RT.into(); 2]);
    let level = get("cmdprio", 7)?.unwrap_or([0; 2]);
    let hints = get("cmdprio_hint", 1023)?.unwrap_or([0; 2]);
    let mut per_io: [Vec<CmdPrio>; 2] = Default::default();
    match (get("cmdprio_percentage", 100)?, set.get("cmdprio_bssplit")) {
        (Some(_), Some((_, l))) => {
            return Err(format!(
                "{l}: cmdprio_bssplit and cmdprio_percentage both give IOs a priority of their own; give one (fio takes one)"
            ))
        }
        (Some(pct), None) => {
            for d in 0..2 {
                if pct[d] > 0 {
                    let class = if class[d] == 0 { Prio::RT.into() } else { class[d] };
                    per_io[d].push(CmdPrio {
                        bs: None,
                        pct: pct[d] as u8,
                        value: value(class as u8, hints[d], level[d]),
                    });
                }
            }
        }
        (None, Some((v, l))) => {
            let bad = |e: String| format!("{l}: cmdprio_bssplit={v}: {e}");
            let parts: Vec<&str> = v.split(',').collect();
            for d in 0..2 {
                // As fio's parser: the last direction given stands for those after it.
                let part = parts.get(d).or(parts.last()).copied().unwrap_or("");
                per_io[d] = bs_split(part, kb_base, [class[d], level[d], hints[d]]).map_err(bad)?;
            }
        }
        (None, None) => {
            if let Some(k) = ["cmdprio_class", "cmdprio", "cmdprio_hint"]
                .into_iter()
                .find(|k| set.contains_key(*k))
            {
                return Err(format!(
                    "{}: {k} is the priority of the share of IOs cmdprio_percentage or cmdprio_bssplit gives, and neither is set: give one of them, or leave {k} out",
                    set[k].1
                ));
            }
        }
    }
    let any_per_io = per_io.iter().any(|d| !d.is_empty());
    if any_per_io && !matches!(j.engine, Engine::IoUring | Engine::Libaio) {
        let k = ["cmdprio_percentage", "cmdprio_bssplit"]
            .into_iter()
            .find(|k| set.contains_key(*k))
            .unwrap_or("cmdprio_percentage");
        return Err(format!(
            "{}: {k}: a priority per IO is carried by ioengine=io_uring or libaio only (as in fio); give one of them",
            set[k].1
        ));
    }
    let rt = |v: u16| v >> 13 == u16::from(Prio::RT);
    let rt_per_io = per_io.iter().flatten().any(|e| rt(e.value));
    if (thread.is_some_and(rt) || rt_per_io) && iogauge_engine::sys::euid() != 0 {
        let k = [
            "prioclass",
            "cmdprio_class",
            "cmdprio_bssplit",
            "cmdprio_percentage",
        ]
        .into_iter()
        .find(|k| set.contains_key(*k))
        .unwrap_or("prioclass");
        return Err(format!(
            "{}: {k}: the real-time IO priority class needs root (CAP_SYS_ADMIN); run as root, or give best effort (class 2) or idle (3)",
            set[k].1
        ));
    }
    if thread.is_some() || any_per_io {
        j.prio = Some(Prio { thread, per_io });
    }
    Ok(())
}

fn value(class: u8, hint: u16, level: u16) -> u16 {
    Prio::value(class, level as u8) | (hint << 3)
}

/// One direction of cmdprio_bssplit: `bs/pct[/class/level[/hint]]:…`, the short form taking
/// `defaults` (cmdprio_class, cmdprio, cmdprio_hint). One size may have several shares (each a
/// share of that size's IOs), which add up to at most 100.
fn bs_split(v: &str, kb_base: u64, defaults: [u16; 3]) -> Result<Vec<CmdPrio>, String> {
    let mut out = Vec::new();
    for part in v.split(':').filter(|p| !p.is_empty()) {
        let f: Vec<&str> = part.split('/').collect();
        let num = |i: usize, max: u32, default: u16| match f.get(i) {
            None => Ok(default),
            Some(x) => match x.parse::<u32>() {
                Ok(n) if n <= max => Ok(n as u16),
                _ => Err(format!(
                    "'{part}': field {} is not a number from 0 to {max}",
                    i + 1
                )),
            },
        };
        if f.len() < 2 || f.len() == 3 || f.len() > 5 {
            return Err(format!(
                "'{part}': give size/percentage, size/percentage/class/level or size/percentage/class/level/hint"
            ));
        }
        let bs = size(f[0], kb_base)?;
        let pct = num(1, 100, 0)? as u8;
        let class = num(2, 3, defaults[0])?;
        let class = if class == 0 { Prio::RT.into() } else { class };
        let e = CmdPrio {
            bs: Some(bs),
            pct,
            value: value(
                class as u8,
                num(4, 1023, defaults[2])?,
                num(3, 7, defaults[1])?,
            ),
        };
        if pct > 0 {
            out.push(e);
        }
    }
    for e in &out {
        let sum: u32 = out
            .iter()
            .filter(|o| o.bs == e.bs)
            .map(|o| u32::from(o.pct))
            .sum();
        if sum > 100 {
            return Err(format!(
                "the shares of {} add up to {sum}%, above 100",
                crate::units::bs_label(e.bs.unwrap_or(0))
            ));
        }
    }
    Ok(out)
}
