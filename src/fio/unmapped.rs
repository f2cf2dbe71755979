//! The fio options iogauge has no reading of its own for (fio::options is the table of those
//! it has): accepted because they change nothing iogauge measures, accepted with a note of what
//! iogauge does instead (told by fio::measures), or refused, one by one or by family, each
//! with the reason the user is given.

use super::ini::Loc;

/// Accepts an option the table does not read when it changes nothing or is noted; refuses it
/// otherwise, with its own reason, its family's, or the general one.
pub(super) fn accept(key: &str, at: &Loc) -> Result<(), String> {
    if NO_EFFECT.iter().any(|(n, _)| *n == key) || NOTED.iter().any(|(n, _)| *n == key) {
        return Ok(());
    }
    let why = REFUSED
        .iter()
        .find(|(n, _)| *n == key)
        .or_else(|| FAMILIES.iter().find(|(n, _)| key.starts_with(n)))
        .map_or(
            "iogauge does not support this fio option (docs/fio.md lists those it does)",
            |(_, w)| w,
        );
    Err(format!("{at}: {key}: {why}"))
}

/// Options accepted that change nothing in iogauge, with why that is faithful.
const NO_EFFECT: [(&str, &str); 6] = [
    ("thread", "iogauge's workers are always threads"),
    ("description", "text only"),
    (
        "refill_buffers",
        "iogauge fills every write anew: its place stamped in each sector, or the content buffer_compress_percentage and dedupe_percentage ask for",
    ),
    (
        "invalidate",
        "fio's default, 1, drops the file from the page cache before a buffered job, as iogauge does; with direct IO nothing is cached",
    ),
    (
        "clat_percentiles",
        "latency percentiles are always reported",
    ),
    ("lat_percentiles", "latency percentiles are always reported"),
];

/// Options accepted with a note of what iogauge does instead (fio::measures): those that
/// change what fio records or prints, not the IO, and those whose effect iogauge's way of
/// running a file already gives or cannot change.
pub const NOTED: [(&str, &str); 28] = [
    ("write_lat_log", LOGS),
    ("write_bw_log", LOGS),
    ("write_iops_log", LOGS),
    ("write_hist_log", LOGS),
    ("log_avg_msec", LOGS),
    ("log_hist_msec", LOGS),
    ("log_max_value", LOGS),
    ("log_offset", LOGS),
    ("log_prio", LOGS),
    ("log_compression", LOGS),
    ("log_unix_epoch", LOGS),
    ("log_alternate_epoch", LOGS),
    ("per_job_logs", LOGS),
    ("gtod_reduce", TIMES_ALL),
    ("disable_lat", TIMES_ALL),
    ("disable_clat", TIMES_ALL),
    ("disable_slat", TIMES_ALL),
    ("disable_bw_measurement", TIMES_ALL),
    (
        "percentile_list",
        "iogauge keeps each result's whole latency histogram (any percentile can be read from it) and prints p50, p90, p99, p99.9 and p99.99",
    ),
    (
        "slat_percentiles",
        "iogauge times each IO from submission to completion; there is no separate submission latency",
    ),
    (
        "random_generator",
        "iogauge draws offsets from its own generator, uniform with replacement (as fio's tausworthe draws; fio's lfsr visits each block once per pass instead), seeded by randseed",
    ),
    (
        "startdelay",
        "a job that runs alone starts once the jobs before it have ended, so a delay changes nothing it measures (beside other jobs it starts that long after them, as in fio)",
    ),
    (
        "rate_min",
        "iogauge does not end a job whose rate falls below it (fio ends it with an error); read the result's rate and its per-second series against it",
    ),
    (
        "threads",
        "threads= is an option of fio's tiobench profile, which a job ignores; iogauge's workers are threads anyway",
    ),
    (
        "io_submit_mode",
        "iogauge submits from each job's own threads, not from fio's pool (offload); with a rate, each IO is timed from its planned start, so an IO submitted late behind its schedule counts its wait in the latency, the measurement offload keeps (the device may see such IOs bunched where fio's pool would have spaced them)",
    ),
    ("fallocate", LAID_OUT),
    ("create_on_open", LAID_OUT),
    ("create_serialize", LAID_OUT),
];

const LAID_OUT: &str = "iogauge lays out each new file before the job's clock starts by writing it with incompressible data (from the offset on), so how and when fio would create or preallocate it changes nothing measured";

const LOGS: &str = "iogauge writes no log files; every result keeps its latency histogram and a per-second series (IOPS, bandwidth, p50, p99) in the run document (--json, -o run.json), which report and export read";
const TIMES_ALL: &str = "fio measures less to spend less CPU per IO; iogauge always times every IO and shows its own CPU per IO beside the result";

/// Options iogauge knows and cannot honour, with the reason given to the user.
const REFUSED: [(&str, &str); 3] = [
    (
        "flow_watermark",
        "fio no longer reads it (deprecated: its flow keeps each job to its weight's share); leave it out",
    ),
    ("fsync_on_close", "not mapped; fsync=N syncs within the job"),
    (
        "filename_format",
        "iogauge names the files it creates itself (iogauge-test.PID, .1, .2 …); leave filename_format out, or give filename= for one existing file",
    ),
];

/// Options refused by family (a prefix of fio's name), with the reason.
const FAMILIES: [(&str, &str); 3] = [
    (
        "exit",
        "exitall and exit_what are honoured; ending the run at a job's error (exitall_on_error) is not mapped: iogauge stops a job at its first IO error and says which IO failed",
    ),
    (
        "zone",
        "not mapped: iogauge emulates zones of zonesize on a target that is not zoned (zonemode=zbd with max_open_zones, zone_reset_threshold, zone_reset_frequency, read_beyond_wp) and walks strided zones (zonemode=strided, zonesize, zonerange, zoneskip); a zoned device is not driven",
    ),
    (
        "verify_",
        "iogauge verifies with its own header on every sector it writes, read back after the job (verify=); fio's verify options are not mapped",
    ),
];
