//! fio's zonemode=zbd on a target that is not zoned: its options read into the job's zones,
//! sizes and offsets in zones, and each rule iogauge cannot follow refused with its reason.

use super::*;
use crate::workload::Zbd;

#[test]
fn zbd_jobs_map_with_their_zones() {
    // zbd-rand-write.fio: 256 MiB zones, 32 written at a time.
    let j =
        &jobs("[a]\nrw=randwrite\nzonemode=zbd\nzonesize=256M\nmax_open_zones=32\nbs=512K\n")[0];
    assert_eq!(
        j.zbd,
        Some(Zbd {
            zone: 256 << 20,
            max_open: 32,
            reset: None,
            table: 0,
            unit: 0,
        })
    );
    // zbd-rand-write-zone-reset-gc.fio: sizes and offsets in zones, the reset rule.
    let j = &jobs(
        "[a]\nrw=randwrite\nzonemode=zbd\nzonesize=256M\nbs=32M\nsize=8z\noffset=524z\nzone_reset_threshold=0.7\nzone_reset_frequency=0.125\n",
    )[0];
    assert_eq!((j.size, j.offset), (Some(8 << 28), 524 << 28));
    assert_eq!(j.zbd.unwrap().reset, Some((0.7, 0.125)));
    // A threshold without a frequency resets nothing, as in fio.
    let j = &jobs("[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nzone_reset_threshold=0.5\n")[0];
    assert_eq!(j.zbd.unwrap().reset, None);
    // Reads past the pointers read the whole range.
    let j = &jobs("[a]\nrw=randread\nzonemode=zbd\nzonesize=1m\nread_beyond_wp=1\n")[0];
    assert!(j.zbd.is_some());
    // Strided zones are not zbd's, nor the reverse.
    let j = &jobs("[a]\nzonemode=strided\nzonesize=1m\n")[0];
    assert_eq!((j.zbd, j.zones.is_some()), (None, true));
}

#[test]
fn zbd_rules_iogauge_cannot_follow_are_refused() {
    for (text, why) in [
        (
            "[a]\nrw=write\nzonemode=zbd\n",
            "zonemode=zbd needs zonesize=",
        ),
        (
            "[a]\nrw=read\nzonemode=zbd\nzonesize=1m\n",
            "the job would read nothing (fio reads 0 bytes)",
        ),
        (
            "[a]\nrw=randrw\nzonemode=zbd\nzonesize=1m\n",
            "which iogauge's reads in a mix do not follow",
        ),
        (
            "[a]\nrw=write\nmax_open_zones=4\n",
            "goes with zonemode=zbd",
        ),
        (
            "[a]\nrw=write\nsize=8z\n",
            "goes with zonemode=zbd and zonesize=",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nsize=2.5z\n",
            "whole number of zones",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\noffset=64k\n",
            "not at a zone's start",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nsize=512k\n",
            "less than one zone",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=100k\nbs=64k\n",
            "whole number of blocks",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nbssplit=4k/50:8k/50\n",
            "one block size",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nzoneskip=1m\n",
            "zoneskip with zonemode=zbd is not mapped",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nverify=crc32c\n",
            "fio skips full zones when it verifies",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1z\n",
            "give the zone in bytes",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nzone_reset_frequency=2\n",
            "a fraction from 0 to 1",
        ),
        (
            "[a]\nrw=write\nzonemode=zbd\nzonesize=1m\nzonecapacity=512k\n",
            "not mapped",
        ),
        (
            "[a]\nrw=randtrim\nbs=1m\n",
            "iogauge issues no trims to a device",
        ),
        ("[a]\nrw=trimwrite\n", "does not issue trims to a device"),
        (
            "[a]\nrw=randtrim\nzonemode=zbd\nzonesize=1m\nbs=64k\n",
            "fio takes only bs=zonesize",
        ),
        (
            "[a]\nrw=trim\nzonemode=zbd\nzonesize=4g\nbs=4g\n",
            "iogauge counts a trim of at most",
        ),
    ] {
        let e = refusal(text);
        assert!(e.contains(why), "{text:?}: {e}");
    }
}

/// fio's zbd-rand-write-trim-gc.fio: a writer and a trimmer that both wait for the warm-up run
/// together when it ends, as fio starts them; one that waits for the job before it runs after
/// it. (Their shared zones: `plan::tests`.)
#[test]
fn two_jobs_waiting_for_one_start_together() {
    let text = "[global]\nzonemode=zbd\nzonesize=1m\nsize=8z\ntime_based\nruntime=1\n\
        [warmup]\nrw=randwrite\nbs=64k\n[wjob]\nwait_for=warmup\nrw=randwrite\nbs=64k\nflow=8\n\
        [trimjob]\nwait_for=warmup\nrw=randtrim\nbs=1m\nflow=1\n";
    let js = jobs(text);
    assert_eq!(super::super::run_groups(&js), [0, 1, 1]);
    assert_eq!(super::super::report_groups(&js), [0, 1, 1]);
    assert_eq!(js[2].rw, crate::workload::Rw::Randtrim);
    let after = text.replace("[trimjob]\nwait_for=warmup", "[trimjob]\nwait_for=wjob");
    assert_eq!(super::super::run_groups(&jobs(&after)), [0, 1, 2]);
}
