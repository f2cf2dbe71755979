//! The storage cells beside a database run (`db pgbench`, `db sysbench`, `db tpcc`) as a plan,
//! built like every other: the database names its suite (its commit's writes and syncs, its
//! page reads) and where the database lives; the environment, the target and the checks are
//! the plan builders'.

use super::*;
use std::path::Path;

/// The plan of `suite` on `target` over a file as large as the database (`data_bytes`, at
/// least 64 MiB), io_uring with O_DIRECT and each IO timed at its completion, stored with the
/// database's run rather than on its own.
pub fn storage_cells(
    suite: Suite,
    target: &Path,
    data_bytes: u64,
    output: &Output,
) -> Result<Plan> {
    let cells = cells::expand(&suite, &Overrides::default()).map_err(usage)?;
    let engine = EngineChoice {
        engine: EngineKind::IoUring,
        direct: true,
        uring: Default::default(),
        submit_batch: iogauge_engine::DEFAULT_SUBMIT_BATCH,
        complete_batch: 1,
        verify: None,
    };
    let place = Place {
        path: Some(target.to_path_buf()),
        size: None,
        offset: 0,
        keep: false,
        allow_overwrite: false,
    };
    let created = data_bytes.next_multiple_of(1 << 20).max(64 << 20);
    checked(Plan {
        kind: Kind::Suite,
        suite,
        cells,
        env: env(engine, 1, Duration::ZERO, SUITE_INTERVAL),
        target: self::target(place, Some(created))?,
        repeat: Repeat {
            n: 1,
            drop_caches: false,
        },
        until: Until::Limit,
        precondition: false,
        max_rounds: None,
        params: BTreeMap::new(),
        output: Output {
            no_store: true,
            dry_run: false,
            ..output.clone()
        },
        file: None,
        notes: Vec::new(),
        probe: false,
        latency_target: None,
    })
}
