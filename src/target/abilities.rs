//! What a target can do that a run may ask of it, asked of the kernel once the target is looked
//! at and before anything is made or written: poll queues for `--hipri`, atomic writes for
//! fio's `atomic=1`.

use super::Resolved;
use crate::error::usage;
use anyhow::Result;
use iogauge_engine::sys;
use std::path::Path;

/// `--hipri` completes IO by polling the device's poll queues (IORING_SETUP_IOPOLL). A device
/// without them (loop, zram, virtio-blk, NVMe without `nvme.poll_queues`) fails every IO with
/// EOPNOTSUPP, so it is refused here, after the target is looked at and before a file is made
/// or filled. A device the kernel does not describe (tmpfs, btrfs) is left to the run.
pub fn check_poll_queues(resolved: &Resolved) -> Result<()> {
    // The path the user typed is named, not the test file's made-up name in it.
    let (path, typed) = match resolved {
        Resolved::Ready(t) => (t.path.as_path(), t.path.as_path()),
        Resolved::Create { path, req, .. } => (path.as_path(), req.path.unwrap_or(Path::new("."))),
    };
    match iogauge_sysinfo::poll_queues_for(path) {
        Some((dev, false)) => Err(usage(format!(
            "--hipri needs a device with poll queues, and {dev} (under {}) has none (/sys/block/{dev}/queue/io_poll is 0); drop --hipri, or use an NVMe device loaded with nvme.poll_queues=N",
            typed.display()
        ))),
        _ => Ok(()),
    }
}

/// An atomic write (fio's atomic=1, RWF_ATOMIC) of `bs` bytes needs a target that offers
/// atomic writes of that size: asked of the kernel (statx) once the target is looked at, for a
/// test file not made yet of an unnamed file in its directory, so a refusal comes before
/// anything is made or filled.
pub fn check_atomic(resolved: &Resolved, bs: u64) -> Result<()> {
    let (units, typed) = match resolved {
        Resolved::Ready(t) => (sys::atomic_write_units(&t.handle), t.path.clone()),
        Resolved::Create { path, req, .. } => (
            sys::atomic_write_units_in(path.parent().unwrap_or(Path::new("."))),
            req.path.unwrap_or(Path::new(".")).to_path_buf(),
        ),
    };
    let label = crate::units::bs_label;
    match units {
        Some((min, max)) if (u64::from(min)..=u64::from(max)).contains(&bs) => Ok(()),
        Some((min, max)) => Err(usage(format!(
            "atomic writes of {}: {} takes atomic writes of {} to {} (statx); give a block size in that range",
            label(bs),
            typed.display(),
            label(u64::from(min)),
            label(u64::from(max))
        ))),
        None => Err(usage(format!(
            "atomic writes of {}: {} offers none (statx reports no atomic write size); use a device that does (its queue/atomic_write_unit_max_bytes above 0), or a file on one that does, or on xfs with reflink (Linux 6.16+)",
            label(bs),
            typed.display()
        ))),
    }
}
