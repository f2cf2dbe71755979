//! What every plan is built from, whoever asks (the command line, a fio job, a database's
//! storage cells): how IO is done ([`EngineChoice`] → the environment) and where it goes
//! ([`Place`] → the target), each checked here once.

use super::*;

/// How IO is done, as the command line or a fio job chose it: the one input of [`env`], so
/// every plan's environment is built from checked values, never from made-up arguments.
pub struct EngineChoice {
    pub engine: EngineKind,
    pub direct: bool,
    pub uring: UringOptions,
    pub submit_batch: u32,
    pub complete_batch: u32,
    /// `--verify`'s sample.
    pub verify: Option<f64>,
}

impl EngineChoice {
    /// What the target flags chose.
    pub(super) fn of(t: &TargetArgs) -> EngineChoice {
        EngineChoice {
            engine: EngineKind::from(t.engine),
            direct: !t.buffered,
            uring: UringOptions {
                sqpoll: t.sqpoll,
                hipri: t.hipri,
                no_register: t.no_register,
                // Not the user's: the runner sets it from the batch and threads of each run.
                look: false,
            },
            submit_batch: t.submit_batch,
            complete_batch: t.complete_batch,
            verify: match (t.verify, t.sample.verify_sample) {
                (_, Some(f)) => Some(f),
                (true, None) => Some(1.0),
                (false, None) => None,
            },
        }
    }
}

pub(super) fn env(e: EngineChoice, seed: u64, ramp: Duration, interval: Duration) -> Env {
    Env {
        engine: e.engine,
        direct: e.direct,
        seed,
        uring: e.uring,
        submit_batch: e.submit_batch,
        complete_batch: e.complete_batch,
        ram: iogauge_engine::sys::total_memory(),
        ramp,
        interval,
        distribution: Default::default(),
        file_service: Default::default(),
        invalidate: false,
        interval_hists: false,
        rate: None,
        verify: e.verify,
        verify_fatal: false,
    }
}

/// Where the IO goes, as the command line or a fio job named it: the one input of [`target`].
pub struct Place {
    pub path: Option<PathBuf>,
    pub size: Option<u64>,
    pub offset: u64,
    pub keep: bool,
    pub allow_overwrite: bool,
}

impl Place {
    /// What the target flags named.
    pub(super) fn of(t: &TargetArgs) -> Place {
        Place {
            path: t.target.clone(),
            size: t.size,
            offset: t.offset,
            keep: t.keep,
            allow_overwrite: t.allow_overwrite,
        }
    }
}

pub(super) fn target(t: Place, suite_size: Option<u64>) -> Result<TargetPlan> {
    if let Some(s) = t.size {
        if s < 4096 {
            return Err(usage(format!(
                "--size {} is smaller than one 4KiB block; give e.g. --size 1GiB",
                units::iec(s)
            )));
        }
    }
    if !t.offset.is_multiple_of(4096) {
        return Err(usage(format!(
            "--offset {} is not a multiple of 4KiB, which O_DIRECT needs; give e.g. --offset {}",
            typed("--offset", t.offset.to_string()),
            units::iec(t.offset.next_multiple_of(4096))
        )));
    }
    Ok(TargetPlan {
        path: t.path,
        size: t.size,
        created_size: suite_size.unwrap_or(crate::target::DEFAULT_CREATED_SIZE),
        offset: t.offset,
        keep: t.keep,
        allow_overwrite: t.allow_overwrite,
        files: 1,
        name_tag: None,
        streams: Vec::new(),
    })
}
