//! What `iogauge verify` found on a target a `--verify` run left: how much was checked, against
//! what, and each class of damage with its first places.

use crate::units;
use iogauge_verify::{Class, Tally};
use std::fmt::Write;

/// The report of a read-back of run `id`'s target: checked as blocks of `block` against its
/// generations, or as 4 KiB sectors against its key alone (`None`); `filled` when iogauge
/// filled the target, so blocks the run never wrote are judged too.
pub fn text(tally: &Tally, id: i64, block: Option<u64>, filled: bool) -> String {
    let mut out = String::new();
    let what = match block {
        Some(block) => format!(
            "blocks of {} against the generations run {id} left",
            units::bs_label(block)
        ),
        None => format!(
            "4 KiB sectors against run {id}'s key (no generations kept: a lost write is not told from the version before it)"
        ),
    };
    let _ = writeln!(
        out,
        "checked {} {what}",
        units::count(tally.checked() as f64)
    );
    if !filled {
        let _ = writeln!(
            out,
            "note: iogauge did not fill this target, so blocks the run never wrote are not judged"
        );
    }
    if tally.is_clean() {
        let _ = writeln!(out, "intact: every block checked is what run {id} wrote");
        return out;
    }
    for c in Class::ALL {
        let n = tally.count(c);
        if n > 0 {
            let _ = writeln!(
                out,
                "  {:<12} {:>10}  {}",
                c.name(),
                units::count(n as f64),
                c.meaning()
            );
        }
    }
    let _ = writeln!(out, "first failures:");
    for f in tally.first() {
        let _ = writeln!(out, "  offset {:>14}  {}", f.offset, f.verdict);
    }
    out
}
