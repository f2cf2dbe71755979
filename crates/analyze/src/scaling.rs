//! `scaling`: where an array stops scaling with its members. The studies' conclusions were
//! limits ("SSDs no longer scale after 4 disks", "starting from 6 SSDs the controller's read
//! bandwidth saturates"), read off graphs by eye; this names the member count after which one
//! more member adds less than `scaling_share` of one member's worth, with both figures, and
//! what the evidence says the limit is.
//!
//! Method: one member's worth is the fewest members' mean divided by their count. The knee is
//! the first count `n` such that, from `n` to every larger count measured, the gain per added
//! member stays below `scaling_share` of that worth even at the edges of the 95% confidence
//! intervals (the larger count's upper bound against the knee's lower bound). So linear
//! scaling names nothing, and one noisy point does not make a knee: its wide interval keeps the
//! gain's upper bound above the share. Without intervals (a single repeat) nothing is judged.

use crate::fmt::{count, pct};
use crate::{Finding, Kind, Severity, Thresholds};

/// One member count's measurement of a cell.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberPoint {
    pub members: u32,
    /// Mean over the repeats.
    pub mean: f64,
    /// The mean's 95% confidence interval; `None` when there were too few repeats.
    pub ci95: Option<[f64; 2]>,
    /// What the counters said at this count (used at the count past the knee).
    pub seen: ScalingEvidence,
}

/// What was seen at the count just past the knee, to say what the limit is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalingEvidence {
    /// Each member's share of time busy (0–1).
    pub members_util: Vec<(String, f64)>,
    /// How much of its time each thread that issues IO spent on a CPU or ready to run and
    /// waiting for one (0–1): iogauge's CPU seconds and run delay over the measurement's
    /// seconds, per submitting thread.
    pub submit_cpu: Option<f64>,
    /// The array's busiest kernel thread (md's `md100_raid5`) and its share of the time on a
    /// CPU (0–1).
    pub kernel_thread: Option<(String, f64)>,
    /// A device every member sits on (loop devices over files on one disk, partitions of one
    /// disk), and its share of time busy when counted: what all of them wait on.
    pub shared_below: Option<(String, Option<f64>)>,
}

/// A member busy at least this share of the time is at the top of its utilisation.
const BUSY: f64 = 0.9;
/// Every member below this share of the time busy is under-used.
const IDLE: f64 = 0.6;

/// The `scaling` finding for `cell` of `array` (e.g. "btrfs raid0") over `points` (any order,
/// two counts or more), or `None` when it scales or cannot be judged. The limit is named from
/// what the counters saw at the count just past the knee.
pub fn scaling(
    array: &str,
    cell: &str,
    points: &[MemberPoint],
    th: &Thresholds,
) -> Option<Finding> {
    let mut p: Vec<&MemberPoint> = points.iter().filter(|p| p.members > 0).collect();
    p.sort_by_key(|p| p.members);
    if p.len() < 2 || p.windows(2).any(|w| w[0].members == w[1].members) {
        return None;
    }
    let ci: Vec<[f64; 2]> = p.iter().map(|p| p.ci95).collect::<Option<_>>()?;
    let worth = p[0].mean / f64::from(p[0].members);
    if worth.is_nan() || worth <= 0.0 {
        return None;
    }
    let limit = th.scaling_share * worth;
    let knee = (0..p.len() - 1).find(|&i| {
        (i + 1..p.len()).all(|j| {
            let added = f64::from(p[j].members - p[i].members);
            (ci[j][1] - ci[i][0]) / added < limit
        })
    })?;
    let (k, next) = (p[knee], p[knee + 1]);
    let at_next = &next.seen;
    let added = f64::from(next.members - k.members);
    let per = (next.mean - k.mean) / added;
    let more = match next.members - k.members {
        1 => "one more member".to_string(),
        n => format!("{n} more members"),
    };
    let mut summary = format!(
        "{cell}: {array} stops scaling at {} members: {more} gave {} against {} ({}{} IOPS a member, {} of one member's worth of {} IOPS)",
        k.members,
        count(next.mean),
        count(k.mean),
        if per >= 0.0 { "+" } else { "" },
        count(per),
        pct((per / worth).max(0.0)),
        count(worth),
    );
    let (why, advice) = limit_of(at_next, next.members);
    if let Some(why) = &why {
        summary.push_str(": ");
        summary.push_str(why);
    }
    let mut f = Finding::new(Kind::Scaling, Severity::Info, summary, advice)
        .with("knee_members", f64::from(k.members))
        .with("knee_iops", k.mean)
        .with("next_members", f64::from(next.members))
        .with("next_iops", next.mean)
        .with("member_worth_iops", worth)
        .with("share", per / worth);
    if let Some(c) = at_next.submit_cpu {
        f = f.with("submit_cpu", c);
    }
    if let Some(m) = busiest(at_next) {
        f = f.with("busiest_member_util", m.1);
    }
    if let Some((_, c)) = &at_next.kernel_thread {
        f = f.with("kernel_thread_cpu", *c);
    }
    Some(f)
}

fn busiest(e: &ScalingEvidence) -> Option<&(String, f64)> {
    e.members_util.iter().max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The advice when the counters name no limit.
const NO_LIMIT_SEEN: &str =
    "Read the members' counters (iogauge show) to see what held the array back.";

/// Every member on one device they share: what they all wait on.
fn shared(e: &ScalingEvidence) -> Option<(Option<String>, String)> {
    let (shared, util) = e.shared_below.as_ref()?;
    Some((
        Some(format!(
            "every member sits on {shared}{}, which they all share: more members only queue more IO on it",
            match util {
                Some(u) => format!(" (busy {} of the time)", pct(*u)),
                None => String::new(),
            }
        )),
        format!("Put the members on devices that do not share {shared}, or measure {shared} itself: it is the limit, not the array."),
    ))
}

/// What the evidence at the count past the knee says the limit is, and what to try.
fn limit_of(e: &ScalingEvidence, members: u32) -> (Option<String>, String) {
    if let Some(c) = e.submit_cpu.filter(|c| *c >= BUSY) {
        return (
            Some(format!(
                "iogauge's submitting threads were on a CPU or waiting for one {} of the time, so the CPU that issues the IO is the limit, not the members",
                pct(c)
            )),
            "Add threads (--threads) or depth, or measure on a machine with more cores, before reading this as the array's limit.".into(),
        );
    }
    let top = busiest(e).map_or(0.0, |m| m.1);
    if let Some((thread, c)) = e.kernel_thread.as_ref().filter(|(_, c)| *c >= BUSY) {
        if top < BUSY {
            return (
                Some(format!(
                    "{thread}, the array's own kernel thread, was on a CPU {} of the time while no member was busy more than {}: the array's code on one CPU is the limit, not the members",
                    pct(*c),
                    pct(top)
                )),
                format!(
                    "md handles every stripe of a raid4/5/6 array in that one thread: more workers (echo 4 > /sys/block/{}/md/group_thread_cnt) or a layout without parity (raid10) lift it; a faster CPU does too.",
                    thread.split('_').next().unwrap_or("mdN")
                ),
            );
        }
    }
    let Some((name, top)) = busiest(e) else {
        return shared(e).unwrap_or((None, NO_LIMIT_SEEN.into()));
    };
    let others = e
        .members_util
        .iter()
        .filter(|m| &m.0 != name)
        .map(|m| m.1)
        .fold(0.0f64, f64::max);
    if *top >= BUSY && others < IDLE {
        return (
            Some(format!(
                "{name} was busy {} of the time while the other members were at most {}: one member sets the pace",
                pct(*top),
                pct(others)
            )),
            format!("Look at {name}: a slower disk, another path or a throttle holds the whole array back."),
        );
    }
    if let Some(s) = shared(e) {
        return s;
    }
    if e.members_util.len() as u32 >= members && *top < IDLE {
        return (
            Some(format!(
                "every member was busy at most {} of the time, so the limit lies above them (a controller, a shared path or throttle, or the array's own code)",
                pct(*top)
            )),
            "More members will not help here: look at what every member's IO passes through.".into(),
        );
    }
    (None, NO_LIMIT_SEEN.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(v: &[(u32, f64, f64)], e: &ScalingEvidence) -> Vec<MemberPoint> {
        v.iter()
            .map(|&(members, mean, half)| MemberPoint {
                members,
                mean,
                ci95: Some([mean - half, mean + half]),
                seen: e.clone(),
            })
            .collect()
    }

    /// Members that all sit on one device name it as the limit; members apart (the near miss)
    /// fall through to the members' own counters.
    #[test]
    fn a_device_every_member_sits_on_is_named() {
        let e = ScalingEvidence {
            shared_below: Some(("loop9".into(), Some(0.97))),
            members_util: vec![("loop1".into(), 0.3), ("loop2".into(), 0.3)],
            submit_cpu: Some(0.2),
            kernel_thread: None,
        };
        let f = judge(
            &[(1, 5000.0, 50.0), (2, 5050.0, 50.0), (4, 5020.0, 50.0)],
            &e,
        )
        .unwrap();
        assert!(
            f.summary
                .contains("every member sits on loop9 (busy 97% of the time)"),
            "{}",
            f.summary
        );
        let apart = ScalingEvidence {
            shared_below: None,
            ..e
        };
        let f = judge(
            &[(1, 5000.0, 50.0), (2, 5050.0, 50.0), (4, 5020.0, 50.0)],
            &apart,
        )
        .unwrap();
        assert!(!f.summary.contains("sits on"), "{}", f.summary);
    }

    fn judge(v: &[(u32, f64, f64)], e: &ScalingEvidence) -> Option<Finding> {
        scaling(
            "btrfs raid0",
            "randread 4K",
            &pts(v, e),
            &Thresholds::default(),
        )
    }

    #[test]
    fn a_ceiling_above_the_members_is_named_at_its_count() {
        // Members of 300 reads a second each under a shared limit of 750.
        let e = ScalingEvidence {
            shared_below: None,
            members_util: vec![
                ("loop1".into(), 0.2),
                ("loop2".into(), 0.2),
                ("loop3".into(), 0.2),
                ("loop4".into(), 0.2),
            ],
            submit_cpu: Some(0.05),
            kernel_thread: None,
        };
        let f = judge(&[(2, 600.0, 5.0), (3, 750.0, 5.0), (4, 748.0, 6.0)], &e).unwrap();
        assert_eq!(f.kind, Kind::Scaling);
        assert_eq!(f.evidence["knee_members"], 3.0);
        assert!(f.summary.starts_with("randread 4K: btrfs raid0 stops scaling at 3 members: one more member gave 748 against 750"), "{}", f.summary);
        assert!(
            f.summary.contains("the limit lies above them"),
            "{}",
            f.summary
        );
        // Given in any order.
        let g = judge(&[(4, 748.0, 6.0), (2, 600.0, 5.0), (3, 750.0, 5.0)], &e).unwrap();
        assert_eq!(g.summary, f.summary);
    }

    #[test]
    fn linear_scaling_and_a_noisy_point_name_nothing() {
        let e = ScalingEvidence::default();
        assert!(judge(&[(2, 600.0, 5.0), (3, 900.0, 5.0), (4, 1200.0, 5.0)], &e).is_none());
        // A dip at three members that its interval does not confirm.
        assert!(judge(&[(2, 600.0, 5.0), (3, 700.0, 250.0), (4, 1200.0, 5.0)], &e).is_none());
        // A last point lower, but within an interval that reaches linear.
        assert!(judge(&[(2, 600.0, 5.0), (3, 900.0, 5.0), (4, 950.0, 200.0)], &e).is_none());
        // Half a member's worth per member is scaling, if poorly.
        assert!(judge(&[(2, 600.0, 5.0), (3, 750.0, 5.0), (4, 900.0, 5.0)], &e).is_none());
    }

    #[test]
    fn without_intervals_nothing_is_judged() {
        let mut p = pts(
            &[(2, 600.0, 5.0), (3, 600.0, 5.0)],
            &ScalingEvidence::default(),
        );
        p[1].ci95 = None;
        assert!(scaling("md raid0", "c", &p, &Thresholds::default()).is_none());
    }

    #[test]
    fn the_limit_is_named_from_the_evidence() {
        let flat = [(2, 600.0, 5.0), (4, 610.0, 5.0)];
        let cpu = ScalingEvidence {
            shared_below: None,
            members_util: vec![("a".into(), 0.3)],
            submit_cpu: Some(0.97),
            kernel_thread: None,
        };
        let f = judge(&flat, &cpu).unwrap();
        assert!(
            f.summary
                .contains("the CPU that issues the IO is the limit"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("2 more members gave 610 against 600"),
            "{}",
            f.summary
        );
        let one = ScalingEvidence {
            shared_below: None,
            members_util: vec![
                ("a".into(), 0.98),
                ("b".into(), 0.3),
                ("c".into(), 0.25),
                ("d".into(), 0.3),
            ],
            submit_cpu: Some(0.2),
            kernel_thread: None,
        };
        assert!(judge(&flat, &one)
            .unwrap()
            .summary
            .contains("a was busy 98% of the time while the other members were at most 30%"));
        // Every member busy: saturated members are not a knee's explanation to invent.
        let all = ScalingEvidence {
            shared_below: None,
            members_util: vec![
                ("a".into(), 0.95),
                ("b".into(), 0.95),
                ("c".into(), 0.95),
                ("d".into(), 0.95),
            ],
            submit_cpu: Some(0.2),
            kernel_thread: None,
        };
        let f = judge(&flat, &all).unwrap();
        assert!(f.summary.ends_with("IOPS)"), "{}", f.summary);
    }

    /// md's raid5 thread on a CPU 97% of the time while every member idles: the knee is the
    /// thread's. The near misses: the same thread at 50% names the limit above the members,
    /// and a member at the top of its utilisation is not the thread's doing.
    #[test]
    fn a_saturated_array_thread_is_named_the_limit() {
        let flat = [(3, 600.0, 5.0), (5, 610.0, 5.0)];
        let at = |thread: f64, member: f64| ScalingEvidence {
            shared_below: None,
            members_util: vec![
                ("vda".into(), member),
                ("vdb".into(), 0.3),
                ("vdc".into(), 0.3),
                ("vdd".into(), 0.3),
                ("vde".into(), 0.3),
            ],
            submit_cpu: Some(0.3),
            kernel_thread: Some(("md100_raid5".into(), thread)),
        };
        let f = scaling(
            "md raid5",
            "c",
            &pts(&flat, &at(0.97, 0.3)),
            &Thresholds::default(),
        )
        .unwrap();
        assert!(
            f.summary.contains("md100_raid5, the array's own kernel thread, was on a CPU 97% of the time while no member was busy more than 30%"),
            "{}",
            f.summary
        );
        assert!(
            f.advice.contains("/sys/block/md100/md/group_thread_cnt"),
            "{}",
            f.advice
        );
        assert_eq!(f.evidence["kernel_thread_cpu"], 0.97);
        let f = scaling(
            "md raid5",
            "c",
            &pts(&flat, &at(0.5, 0.3)),
            &Thresholds::default(),
        )
        .unwrap();
        assert!(
            f.summary.contains("the limit lies above them"),
            "{}",
            f.summary
        );
        let f = scaling(
            "md raid5",
            "c",
            &pts(&flat, &at(0.97, 0.96)),
            &Thresholds::default(),
        )
        .unwrap();
        assert!(f.summary.contains("vda was busy 96%"), "{}", f.summary);
    }
}
