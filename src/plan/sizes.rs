//! Values as the user typed them (`--bs 128m`, not 134217728), and block sizes held to
//! [`BlockSize`]'s rules: the flag or line they came from named when refused, and direct IO's
//! whole sectors checked where each cell knows whether it goes direct.

use super::Plan;
use crate::error::usage;
use crate::units;
use crate::workload::BlockSize;
use anyhow::Result;

/// The value of `flag` as the user typed it (`--bs 128m`, not 134217728), else `shown`.
pub(super) fn typed(flag: &str, shown: String) -> String {
    let args: Vec<String> = std::env::args().collect();
    let eq = format!("{flag}=");
    args.iter()
        .enumerate()
        .rev()
        .find_map(|(i, a)| match a.strip_prefix(&eq) {
            Some(v) => Some(v.to_string()),
            None if a == flag => args.get(i + 1).cloned(),
            None => None,
        })
        .unwrap_or(shown)
}

/// Direct IO moves whole sectors: every block size of a cell that goes direct (its group's
/// `direct`, else `--buffered`'s absence) is checked here, where that is known. (`run`'s and
/// fio's were checked as they were typed, naming the flag or the line.)
pub(super) fn direct_block_sizes(plan: &Plan) -> Result<()> {
    for c in plan
        .cells
        .iter()
        .filter(|c| c.direct.unwrap_or(plan.env.direct))
        // A trim on emulated zones moves no data: its block is a whole zone.
        .filter(|c| c.op.rw().is_none_or(|rw| !rw.trims()))
    {
        let mix = c.shape.mix.iter().flat_map(|m| m.all().map(|w| w.bs));
        for b in std::iter::once(c.bs.bytes()).chain(mix) {
            if let Err(why) = BlockSize::new(b).and_then(BlockSize::direct) {
                return Err(usage(format!(
                    "{}: a block of {}: {why}; give a multiple of 512 bytes, or --buffered",
                    c.name(),
                    units::bs_label(b)
                )));
            }
        }
    }
    Ok(())
}

/// The block size typed after `flag`, as [`BlockSize`] has its rules (`direct`: for direct IO);
/// refused naming the flag.
pub(crate) fn check_bs(flag: &str, bs: u64, direct: bool) -> Result<BlockSize> {
    BlockSize::new(bs)
        .and_then(|b| if direct { b.direct() } else { Ok(b) })
        .map_err(|why| {
            usage(match bs {
                0 => format!("{flag} 0: {why}, e.g. {flag} 4k"),
                _ => format!(
                    "{flag} {}: {why}, e.g. 4k or 1m",
                    typed(flag, units::bs_label(bs))
                ),
            })
        })
}
