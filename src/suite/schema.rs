//! The suite file format and its checks. A mistake in a user's file is one line naming the file,
//! line and column and what to write instead; values are checked where they are read, so even a
//! rule between two keys points at the key that breaks it.
//!
//! ```toml
//! name = "mine"                      # required
//! description = "what it answers"    # required
//!
//! [defaults]                         # optional
//! time = "10s"                       # per cell, unless a group says otherwise; --cell-time wins
//! size = "1GiB"                      # created test file, unless --size says otherwise
//!
//! [[group]]                          # one or more; each is a cartesian product of its lists
//! title = "Read Tests"
//! layout = "matrix"                  # matrix | mixes | seq | fsync | plain (how it is printed;
//!                                    # default plain: one row per cell)
//! rw = ["randread", "randwrite"]     # read write randread randwrite rw randrw copy
//! bs = ["4k", "1m"]                  # 512 … 64m, multiples of 512
//! threads = [1, 10]                  # default [1]
//! iodepth = [1]                      # IOs in flight per thread, default [1]
//! read_pct = [70]                    # for rw and randrw only, and required there
//! sync = "fsync"                     # or "fdatasync": sync after writes …
//! sync_every = 1                     # … every N of them (default 1)
//! odsync = false                     # open with O_DSYNC
//! direct = true                      # force O_DIRECT on or off; default follows the flags
//! time = "5s"                        # or data = "1GiB" / data = "range" (one pass); not both
//! range = "16k"                      # use only the first bytes of the target
//! options = ["sizes", "threads"]     # command-line lists that may replace this group's:
//!                                    # sizes threads read-pct qd files
//! stream = "wal"                     # a named stream: its cell is named `wal: …`
//! with_previous = true               # runs at the same time as the group before (a stream
//!                                    # of one cell each; each reported alone, and their sum)
//! ```

use super::{Amount, CliOption, Group, Layout, Length, Op, Rounds, Suite, DEFAULT_TIME};
use crate::units;
use crate::workload::{BlockSize, SyncKind, MAX_IODEPTH, MAX_THREADS, MIN_BS};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use std::time::Duration;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    name: Spanned<String>,
    description: String,
    #[serde(default)]
    defaults: DefaultsDoc,
    #[serde(default, rename = "group")]
    groups: Vec<Spanned<GroupDoc>>,
    rounds: Option<Spanned<RoundsDoc>>,
}

/// `[rounds]`: the SNIA PTS loop — every cell once per round, rounds repeated until the tracked
/// cell's IOPS are steady over a window of rounds.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoundsDoc {
    /// The tracked cell: its rw, read percentage (for rw/randrw) and block size.
    track_rw: Op,
    track_read_pct: Option<Bounded<0, 100>>,
    track_bs: Bs,
    window: Option<Bounded<2, 100>>,
    max: Option<Bounded<1, 1000>>,
    /// Write the range twice in 128 KiB sequential writes before the first round.
    #[serde(default)]
    precondition: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DefaultsDoc {
    time: Option<Time>,
    size: Option<Size>,
}

fn plain() -> Layout {
    Layout::Plain
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupDoc {
    title: String,
    /// One row per cell unless the group asks for a study's table.
    #[serde(default = "plain")]
    layout: Layout,
    rw: Spanned<Vec<Op>>,
    bs: Spanned<Vec<Bs>>,
    threads: Option<Spanned<Vec<Bounded<1, { MAX_THREADS as u64 }>>>>,
    iodepth: Option<Spanned<Vec<Bounded<1, { MAX_IODEPTH as u64 }>>>>,
    read_pct: Option<Spanned<Vec<Bounded<0, 100>>>>,
    sync: Option<Spanned<SyncKind>>,
    sync_every: Option<Spanned<Bounded<1, 1_000_000>>>,
    odsync: Option<Spanned<bool>>,
    direct: Option<bool>,
    time: Option<Spanned<Time>>,
    data: Option<Spanned<AmountValue>>,
    range: Option<Spanned<Size>>,
    options: Option<Spanned<Vec<CliOption>>>,
    stream: Option<Spanned<String>>,
    with_previous: Option<Spanned<bool>>,
}

/// Parses and checks a suite file; `origin` names it in errors (a path, or `suites/x.toml`).
pub fn parse(text: &str, origin: &str) -> Result<Suite, String> {
    let doc: FileDoc = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| s.start);
        one_line(origin, text, at, e.message())
    })?;
    check(doc).map_err(|(span, msg)| one_line(origin, text, span.map(|s| s.start), &msg))
}

/// `file:line:column: message`, on one line whatever the message holds.
fn one_line(origin: &str, text: &str, at: Option<usize>, msg: &str) -> String {
    let msg = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    match at {
        Some(offset) => {
            let (line, col) = line_col(text, offset);
            format!("{origin}:{line}:{col}: {msg}")
        }
        None => format!("{origin}: {msg}"),
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before, |i| &before[i + 1..])
        .chars()
        .count()
        + 1;
    (line, col)
}

type CheckError = (Option<Range<usize>>, String);

fn at<T>(s: &Spanned<T>, msg: impl Into<String>) -> CheckError {
    (Some(s.span()), msg.into())
}

fn check(doc: FileDoc) -> Result<Suite, CheckError> {
    let name = doc.name.get_ref().trim();
    if name.is_empty() || name.chars().any(|c| c.is_whitespace()) {
        return Err(at(
            &doc.name,
            "name must be one word, e.g. name = \"nightly\"",
        ));
    }
    if doc.groups.is_empty() {
        return Err((
            None,
            "the suite has no [[group]]; add at least one, e.g. [[group]] with title, layout, rw and bs".into(),
        ));
    }
    let time = doc.defaults.time.map_or(DEFAULT_TIME, |t| t.0);
    if let Some(why) = crate::workload::too_short(time) {
        return Err((None, format!("[defaults] time {why}")));
    }
    let groups = streams(doc.groups, time)?;
    let rounds = match doc.rounds {
        None => None,
        Some(r) => {
            let span = r.span();
            let r = r.into_inner();
            let read_pct = match r.track_rw.rw() {
                Some(_) if r.track_rw.mixed() => match r.track_read_pct {
                    Some(p) => p.0 as u8,
                    None => {
                        return Err((
                            Some(span),
                            "track_rw is a mix: say which with track_read_pct, e.g. 0".into(),
                        ))
                    }
                },
                Some(rw) => rw.read_pct(0),
                None => return Err((Some(span), "track_rw cannot be copy".into())),
            };
            let rounds = Rounds {
                track: (r.track_rw, read_pct, r.track_bs.0.bytes()),
                window: r.window.map_or(5, |w| w.0 as usize),
                max: r.max.map_or(25, |m| m.0 as u32),
                precondition: r.precondition,
            };
            let tracked = groups.iter().any(|g| {
                g.ops.contains(&rounds.track.0)
                    && g.bs.iter().any(|b| b.bytes() == rounds.track.2)
                    && (!rounds.track.0.mixed() || g.read_pct.contains(&rounds.track.1))
            });
            if !tracked {
                return Err((
                    Some(span),
                    "no group has the tracked cell; name an rw, read percentage and block size a group lists".into(),
                ));
            }
            Some(rounds)
        }
    };
    Ok(Suite {
        name: name.to_string(),
        description: doc.description,
        size: doc.defaults.size.map(|s| s.0),
        groups,
        rounds,
    })
}

/// The groups, checked, with `with_previous` chains made into sets of streams that run at once:
/// each stream one cell with a name of its own in its set.
fn streams(docs: Vec<Spanned<GroupDoc>>, time: Duration) -> Result<Vec<Group>, CheckError> {
    let mut groups: Vec<Group> = Vec::with_capacity(docs.len());
    let mut sets = 0;
    for (i, g) in docs.into_iter().enumerate() {
        let g = g.into_inner();
        let with = g.with_previous.as_ref().filter(|w| *w.get_ref()).cloned();
        let stream = g.stream.clone();
        let mut checked = check_group(g, time)?;
        let one_cell = |c: &Group| {
            c.ops.len() == 1
                && c.bs.len() == 1
                && c.threads.len() == 1
                && c.iodepth.len() == 1
                && c.read_pct.len() <= 1
                && c.ops[0] != Op::Copy
                && c.options.is_empty()
        };
        if let Some(w) = &with {
            let Some(prev) = groups.last_mut() else {
                return Err(at(
                    w,
                    "with_previous on the first group: there is no group before it to run beside",
                ));
            };
            let name_of = |g: &Group| g.origin.clone();
            if !one_cell(prev) || prev.origin.is_none() {
                return Err(at(w, "the group before is not a stream: give it stream = \"NAME\" and one rw, bs, threads and iodepth (no copy, no options)"));
            }
            if prev.together.is_none() {
                prev.together = Some(sets);
                sets += 1;
            }
            checked.together = prev.together;
            let Some(name) = &stream else {
                return Err(at(
                    w,
                    "a group that runs beside another is a stream: name it, e.g. stream = \"data\"",
                ));
            };
            let taken = groups
                .iter()
                .filter(|x| x.together.is_some() && x.together == checked.together)
                .any(|x| name_of(x).as_deref() == Some(name.get_ref().as_str()));
            if taken {
                return Err(at(
                    name,
                    "another stream of this set has this name; give each its own",
                ));
            }
        }
        if let Some(name) = &stream {
            let n = name.get_ref().trim();
            if n.is_empty() || n.contains(':') || n.contains('+') {
                return Err(at(
                    name,
                    "stream must be a short name without : or +, e.g. stream = \"wal\"",
                ));
            }
            if with.is_some() && !one_cell(&checked) {
                return Err(at(name, "a stream is one cell: give one rw, bs, threads and iodepth (no copy, no options)"));
            }
            checked.origin = Some(n.to_string());
        }
        let _ = i;
        groups.push(checked);
    }
    Ok(groups)
}

fn check_group(g: GroupDoc, default_time: Duration) -> Result<Group, CheckError> {
    let ops = nonempty_unique(&g.rw, "rw", |o| o.name().to_string())?;
    let bs: Vec<BlockSize> = nonempty_unique(&g.bs, "bs", |b| units::bs_label(b.0.bytes()))?
        .into_iter()
        .map(|b| b.0)
        .collect();
    let threads = list_or_one(&g.threads, "threads")?;
    let iodepth = list_or_one(&g.iodepth, "iodepth")?;
    let mixed = ops.iter().any(|o| o.mixed());
    let read_pct: Vec<u8> = match &g.read_pct {
        Some(p) if !mixed => {
            return Err(at(
                p,
                "read_pct applies to rw and randrw only; remove it or add one of them to rw",
            ))
        }
        Some(p) => nonempty_unique(p, "read_pct", |v| v.0.to_string())?
            .into_iter()
            .map(|v| v.0 as u8)
            .collect(),
        None if mixed => return Err(at(
            &g.rw,
            "rw lists rw or randrw: say which read percentages with read_pct, e.g. read_pct = [70]",
        )),
        None => Vec::new(),
    };
    let sync = match (&g.sync, &g.sync_every) {
        (None, Some(e)) => return Err(at(e, "sync_every needs sync = \"fsync\" or \"fdatasync\"")),
        (None, None) => None,
        (Some(kind), every) => {
            let pcts = if read_pct.is_empty() {
                vec![100]
            } else {
                read_pct.clone()
            };
            for op in &ops {
                if *op == Op::Copy {
                    return Err(at(
                        kind,
                        "copy takes no sync; put sync in a group of writes",
                    ));
                }
                if pcts.iter().any(|&p| !op.writes(p)) {
                    return Err(at(
                        kind,
                        format!(
                            "sync follows writes, and {} at these read percentages does not write; use write or randwrite",
                            op.name()
                        ),
                    ));
                }
            }
            Some((
                *kind.get_ref(),
                every.as_ref().map_or(1, |e| e.get_ref().0 as u32),
            ))
        }
    };
    let odsync = match &g.odsync {
        Some(o) if *o.get_ref() && ops.contains(&Op::Copy) => {
            return Err(at(
                o,
                "copy takes no odsync; put odsync in a group of writes",
            ))
        }
        Some(o) => *o.get_ref(),
        None => false,
    };
    let length = match (&g.time, &g.data) {
        (Some(_), Some(d)) => return Err(at(
            d,
            "give time or data, not both: a cell runs for a fixed time or a fixed amount of data",
        )),
        (Some(t), None) => match crate::workload::too_short(t.get_ref().0) {
            Some(why) => return Err(at(t, format!("time {why}"))),
            None => Length::Time(t.get_ref().0),
        },
        (None, Some(d)) => {
            if let AmountValue(Amount::Bytes(b)) = d.get_ref() {
                if let Some(big) = bs.iter().find(|x| x.bytes() > *b) {
                    return Err(at(
                        d,
                        format!(
                            "data is less than one {} block; give more data",
                            units::bs_label(big.bytes())
                        ),
                    ));
                }
            }
            Length::Data(d.get_ref().0)
        }
        (None, None) => Length::Time(default_time),
    };
    let range = match &g.range {
        Some(r) => {
            let v = r.get_ref().0;
            let largest = bs.iter().map(|b| b.bytes()).max().unwrap_or(0);
            if v < largest || v % MIN_BS != 0 {
                return Err(at(
                    r,
                    format!(
                        "range must hold the largest block ({}) and be a multiple of 512 bytes",
                        units::bs_label(largest)
                    ),
                ));
            }
            Some(v)
        }
        None => None,
    };
    let options = match &g.options {
        Some(o) => {
            let v = nonempty_unique(o, "options", |c| c.flag().to_string())?;
            if v.contains(&CliOption::Files)
                && ops.iter().any(|op| !matches!(op, Op::Read | Op::Randread))
            {
                return Err(at(o, "files applies to groups of read and randread only"));
            }
            v
        }
        None => Vec::new(),
    };
    Ok(Group {
        title: g.title,
        layout: g.layout,
        origin: None,
        ops,
        read_pct,
        bs,
        threads,
        iodepth,
        sync,
        odsync,
        direct: g.direct,
        length,
        range,
        options,
        shape: Default::default(),
        together: None,
        rate: None,
        think: None,
        prio: None,
        flow: None,
        placement: None,
        engine: None,
        distribution: None,
        beside: Default::default(),
        no_readback: false,
        tolerate: None,
        atomic: false,
    })
}

fn nonempty_unique<T: Clone>(
    list: &Spanned<Vec<T>>,
    key: &str,
    label: impl Fn(&T) -> String,
) -> Result<Vec<T>, CheckError> {
    let v = list.get_ref();
    if v.is_empty() {
        return Err(at(list, format!("{key} is empty; give at least one value")));
    }
    let labels: Vec<String> = v.iter().map(&label).collect();
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) {
            return Err(at(list, format!("{key} lists {l} twice; each value once")));
        }
    }
    Ok(v.clone())
}

fn list_or_one<const HI: u64>(
    list: &Option<Spanned<Vec<Bounded<1, HI>>>>,
    key: &str,
) -> Result<Vec<u32>, CheckError> {
    match list {
        Some(l) => Ok(nonempty_unique(l, key, |v| v.0.to_string())?
            .into_iter()
            .map(|v| v.0 as u32)
            .collect()),
        None => Ok(vec![1]),
    }
}

/// A whole number in `LO..=HI`.
#[derive(Clone, Copy, Debug)]
struct Bounded<const LO: u64, const HI: u64>(u64);

impl<'de, const LO: u64, const HI: u64> Deserialize<'de> for Bounded<LO, HI> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const LO: u64, const HI: u64>;
        impl<const LO: u64, const HI: u64> Visitor<'_> for V<LO, HI> {
            type Value = Bounded<LO, HI>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a whole number from {LO} to {HI}")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::custom(format!(
                        "{v} is negative; give a whole number from {LO} to {HI}"
                    ))),
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                if (LO..=HI).contains(&v) {
                    Ok(Bounded(v))
                } else {
                    Err(E::custom(format!(
                        "{v} is out of range; give a whole number from {LO} to {HI}"
                    )))
                }
            }
        }
        d.deserialize_any(V::<LO, HI>)
    }
}

/// A byte size: a number of bytes, or a string such as "4k" or "1GiB".
#[derive(Clone, Copy, Debug)]
struct Size(u64);

struct SizeVisitor;

impl Visitor<'_> for SizeVisitor {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a size such as \"4k\", \"1m\" or 4096")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::custom(format!("size {v} is negative; write e.g. \"4k\"")))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        units::parse_size(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor).map(Size)
    }
}

/// A block size as a suite file writes it ("4k" or 1048576), held to [`BlockSize`]'s rule.
#[derive(Clone, Copy, Debug)]
struct Bs(BlockSize);

impl<'de> Deserialize<'de> for Bs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = d.deserialize_any(SizeVisitor)?;
        BlockSize::new(v).map(Bs).map_err(|why| {
            de::Error::custom(format!("{v} bytes: {why}; write e.g. \"4k\" or \"1m\""))
        })
    }
}

/// A positive duration: "10s", "500ms", "2m", or a number of seconds.
#[derive(Clone, Copy, Debug)]
struct Time(Duration);

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"10s\" or \"500ms\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                match units::parse_duration(v) {
                    Ok(d) if d.is_zero() => Err(E::custom(
                        "a duration of 0 runs nothing; write e.g. \"10s\"",
                    )),
                    Ok(d) => Ok(d),
                    Err(e) => Err(E::custom(e)),
                }
            }
        }
        d.deserialize_any(V).map(Time)
    }
}

/// `data`: a size, or "range" for one pass over the range a cell uses.
#[derive(Clone, Copy, Debug)]
struct AmountValue(Amount);

impl<'de> Deserialize<'de> for AmountValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Amount;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"1GiB\", or \"range\" for one pass over the range")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Amount, E> {
                SizeVisitor.visit_i64(v).and_then(|b| self.visit_u64(b))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Amount, E> {
                if v == 0 {
                    return Err(E::custom(
                        "data = 0 moves nothing; write e.g. \"1GiB\" or \"range\"",
                    ));
                }
                Ok(Amount::Bytes(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Amount, E> {
                if v.trim() == "range" {
                    return Ok(Amount::Range);
                }
                units::parse_size(v)
                    .map_err(E::custom)
                    .and_then(|b| self.visit_u64(b))
            }
        }
        d.deserialize_any(V).map(AmountValue)
    }
}

#[cfg(test)]
mod tests;
