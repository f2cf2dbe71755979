//! `iogauge probe cache`: the caches of a storage stack, found by their knee.

use crate::cli::ProbeCacheArgs;
use anyhow::Result;

pub fn cache(args: &ProbeCacheArgs) -> Result<()> {
    crate::commands::execute(&crate::plan::from_probe_cache(args)?)
}
