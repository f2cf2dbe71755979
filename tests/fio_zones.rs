//! Where fio puts a job's IOs (issue 60): strided zones (`disk-zone-profile.fio`: a job moves
//! `zonesize` bytes in a zone, then skips `zoneskip` to the next, back at the start past the
//! end) and a fixed sequence of blocks (`sequence-distribution.fio`). Ground truth: the places
//! of the requests the kernel sent the device (`block:block_rq_issue`), for iogauge and for
//! fio itself on the same RAM loop device.

use std::path::Path;

use crate::common;
use common::trace::Issued;
use common::*;

/// A RAM loop device of `bytes` and the requests the kernel sends it, with fio at hand; `None`
/// (said) where the machine cannot give them.
fn traced_ram(bytes: u64) -> Option<(RamLoop, Issued)> {
    if !is_root() {
        skip("needs root (a loop device, the tracepoint)");
        return None;
    }
    if !have("fio") {
        skip("needs fio");
        return None;
    }
    let ram = RamLoop::new(bytes);
    let issued = Issued::on(&ram.dev.dev)?;
    Some((ram, issued))
}

/// The writes the kernel sent the traced device while `iogauge fio` ran the job file `file`
/// (writing allowed), and the run's document.
fn written_by(issued: &Issued, dir: &Path, file: &Path) -> (Vec<(u64, u64)>, serde_json::Value) {
    let (reqs, doc) = issued_by(issued, dir, file);
    let writes = reqs.into_iter().filter(|r| r.0.contains('W'));
    (writes.map(|(_, at, len)| (at, len)).collect(), doc)
}

/// Every request the kernel sent the traced device, with its flags, while `iogauge fio` ran
/// the job file `file` (writing allowed), and the run's document.
fn issued_by(
    issued: &Issued,
    dir: &Path,
    file: &Path,
) -> (Vec<(String, u64, u64)>, serde_json::Value) {
    let (reqs, doc) = timed_by(issued, dir, file);
    let reqs = reqs.into_iter().map(|(_, f, at, len)| (f, at, len));
    (reqs.collect(), doc)
}

/// Requests as [`Issued::timed`] gives them: the kernel's time of the issue first.
type Timed = Vec<(f64, String, u64, u64)>;

/// [`issued_by`], each request with the kernel's time of its issue.
fn timed_by(issued: &Issued, dir: &Path, file: &Path) -> (Timed, serde_json::Value) {
    issued.timed();
    let job = file.to_str().unwrap();
    let out = iogauge(
        dir,
        &["fio", "--no-store", "--json", "--allow-overwrite", job],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    (issued.timed(), json_of(&out))
}

/// 64 KiB reads one at a time, 1 MiB in each zone, 3 MiB skipped, over 64 MiB: the i-th read at
/// (i / 16) × 4 MiB + (i % 16) × 64 KiB, the 257th back at the start.
#[test]
fn strided_zones_read_each_zones_share_then_skip_as_fio_does() {
    let Some((ram, issued)) = traced_ram(64 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zones.fio");
    std::fs::write(
        &file,
        format!(
            "[zones]\nfilename={}\ndirect=1\nioengine=psync\nrw=read\nbs=64k\nsize=64m\n\
             zonemode=strided\nzonesize=1m\nzoneskip=3m\nruntime=1\ntime_based\n",
            ram.dev.dev
        ),
    )
    .unwrap();
    let want = |i: usize| ((i / 16) % 16) as u64 * (4 << 20) + (i % 16) as u64 * (64 << 10);
    issued.places();
    let out = iogauge(
        dir.path(),
        &["fio", "--no-store", "--json", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let ours = issued.places();
    let doc = json_of(&out);
    let r = &doc["results"][0];
    assert_eq!(r["workload"]["zones"]["skip_bytes"], 3 << 20, "{r}");
    assert!(f(&r["read"]["ios"]) as usize <= ours.len(), "{r}");
    // Past one wrap: every read in its zone, in fio's order.
    assert!(ours.len() > 300, "{} reads", ours.len());
    for (i, &(at, len)) in ours.iter().enumerate() {
        assert_eq!((at, len), (want(i), 64 << 10), "read {i} of {}", ours.len());
    }
    fio_json(dir.path(), &file);
    let theirs = issued.places();
    let n = theirs.len().min(ours.len()).min(400);
    assert_eq!(theirs[..n], ours[..n]);
}

/// `random_distribution=sequence:2,0,1`: six 4 KiB reads at blocks 2, 0, 1, 2, 0, 1; with
/// `random_sequence_stride=1` each pass a group of three further on: 2, 0, 1, 5, 3, 4 (fio's
/// sequence-distribution.fio, on a device instead of the null engine). fio's own io_u.c walks it
/// so; Debian 12's fio (3.33) predates the distribution, so fio is not run beside it.
#[test]
fn a_fixed_sequence_of_blocks_is_read_in_fios_order() {
    if !is_root() {
        skip("needs root (a loop device, the tracepoint)");
        return;
    }
    let ram = RamLoop::new(4 << 20);
    let Some(issued) = Issued::on(&ram.dev.dev) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sequence.fio");
    std::fs::write(
        &file,
        format!(
            "[global]\nfilename={}\ndirect=1\nioengine=psync\nrw=randread\nbs=4k\nsize=48k\nio_size=24k\n\
             random_distribution=sequence:2,0,1\n[repeating]\n[strided]\nstonewall\nrandom_sequence_stride=1\n",
            ram.dev.dev
        ),
    )
    .unwrap();
    issued.places();
    let out = iogauge(
        dir.path(),
        &["fio", "--no-store", "--json", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let blocks = |places: Vec<(u64, u64)>| -> Vec<u64> {
        places
            .into_iter()
            .map(|(at, len)| {
                assert_eq!(len, 4096);
                at / 4096
            })
            .collect()
    };
    let ours = blocks(issued.places());
    assert_eq!(ours, [2, 0, 1, 2, 0, 1, 2, 0, 1, 5, 3, 4]);
    let doc = json_of(&out);
    assert_eq!(
        doc["results"][1]["workload"]["distribution"], "sequence:2,0,1 strided",
        "{doc}"
    );
}

/// A sequence must fit the range: a block past its end is refused before anything is written
/// (exit 2, one line, no file made); the last block in it runs.
#[test]
fn a_sequence_past_the_range_is_refused_and_one_inside_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("seq.dat");
    let seq = |list: &str| {
        iogauge(
            dir.path(),
            &[
                "fio",
                "--dry-run",
                "--",
                "--name=a",
                "--rw=randread",
                "--direct=1",
                "--size=48k",
                &format!("--filename={}", target.display()),
                &format!("--random_distribution=sequence:{list}"),
            ],
        )
    };
    let out = seq("12,0");
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out)
            .contains("the sequence reaches block 12, past the range's last (12 blocks of 4K)"),
        "{}",
        stderr_of(&out)
    );
    assert!(!target.exists());
    let out = seq("11,0");
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// fio's zonemode=zbd on a device that is not zoned (zbd-rand-write.fio, smaller): 64 KiB
/// random writes into 1 MiB zones go to the zones' write pointers, each zone written from its
/// start in order, and never more than max_open_zones=4 zones part-written at once, while the
/// writes still reach far more zones than four. Ground truth: the writes the kernel sent the RAM
/// loop device, for iogauge and for fio itself. Near miss: without zonemode the same random
/// writes land anywhere in a zone.
#[test]
fn zbd_random_writes_append_at_write_pointers_in_max_open_zones_as_fio_does() {
    let Some((ram, issued)) = traced_ram(32 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job = |name: &str, zones: &str| {
        let file = dir.path().join(name);
        std::fs::write(
            &file,
            format!(
                "[w]\nfilename={}\ndirect=1\nioengine=psync\nrw=randwrite\nbs=64k\nsize=32m\n\
                 io_size=24m\n{zones}\n",
                ram.dev.dev
            ),
        )
        .unwrap();
        file
    };
    let zbd = job("zbd.fio", "zonemode=zbd\nzonesize=1m\nmax_open_zones=4");
    let run = |file: &Path| written_by(&issued, dir.path(), file);
    // (writes at their zone's write pointer, most zones part-written at once, zones reached)
    let judge = |writes: &[(u64, u64)]| {
        let mut next = [0u64; 32];
        let (mut appends, mut most) = (0, 0);
        let mut reached = std::collections::BTreeSet::new();
        for &(at, len) in writes {
            assert_eq!(len, 64 << 10, "a write of {len} bytes at {at}");
            let (z, b) = ((at >> 20) as usize, (at % (1 << 20)) >> 16);
            if b == next[z] % 16 {
                appends += 1;
            }
            next[z] = b + 1;
            reached.insert(z);
            most = most.max(next.iter().filter(|n| **n % 16 != 0).count());
        }
        (appends, most, reached.len())
    };
    let (ours, doc) = run(&zbd);
    assert_eq!(ours.len(), 384, "24 MiB in 64 KiB writes");
    assert_eq!(judge(&ours).0, 384, "writes away from a write pointer");
    let (_, most, reached) = judge(&ours);
    assert!(most <= 4, "{most} zones part-written at once");
    assert!(reached >= 12, "{reached} of 32 zones written");
    assert_eq!(doc["results"][0]["workload"]["zbd"]["zone_bytes"], 1 << 20);
    fio_json(dir.path(), &zbd);
    let theirs = issued.writes();
    let (appends, most, _) = judge(&theirs);
    assert_eq!((appends, theirs.len()), (384, 384), "fio's writes");
    assert!(most <= 4, "fio: {most} zones part-written at once");
    // Near miss: plain random writes.
    let (plain, _) = run(&job("plain.fio", ""));
    let (appends, _, _) = judge(&plain);
    assert!(
        appends < 100,
        "{appends} of {} plain random writes at a write pointer",
        plain.len()
    );
}

/// fio's zbd-rand-write-trim-gc.fio, smaller: a warm-up writes 64 KiB blocks at random zones'
/// write pointers for a second; then a writer and a trimmer that both waited for it run together,
/// one trim (a whole 1 MiB zone) for every 8 writes (flow). The three jobs share the file's
/// pointers: the writer goes on where the warm-up left each zone, and each trim resets a zone in
/// memory, so the writer's next write there is at the zone's start though it was not full.
/// Ground truth: the requests the kernel sent the RAM loop device — every write at its zone's
/// pointer or, after a trim, at its start, and no discard — for iogauge and for fio itself.
/// Near miss: without the trimmer, a zone starts over only when it is full, which also shows the
/// pointers carried from the warm-up to the writer (a table of its own would start the writer's
/// part-written zones over).
#[test]
fn zbd_trims_reset_the_zones_the_writers_share_as_fio_does() {
    let Some((ram, issued)) = traced_ram(16 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job = |name: &str, trims: bool| {
        let file = dir.path().join(name);
        std::fs::write(
            &file,
            format!(
                "[global]\nfilename={}\ndirect=1\nioengine=psync\nzonemode=zbd\nzonesize=1m\n\
                 size=16m\ntime_based\nruntime=1\n\n[warmup]\nrw=randwrite\nbs=64k\n\n\
                 [wjob]\nwait_for=warmup\nrw=randwrite\nbs=64k\nflow=8\n{}",
                ram.dev.dev,
                match trims {
                    true => "\n[trimjob]\nwait_for=warmup\nrw=randtrim\nbs=1m\nflow=1\n",
                    false => "",
                }
            ),
        )
        .unwrap();
        file
    };
    // The writes in order, each judged against its zone's pointer: (at the pointer, at the
    // start of a zone that was not full, anywhere else), and the discards.
    let judge = |reqs: Vec<(String, u64, u64)>| {
        let mut next = [0u64; 16];
        let (mut at_pointer, mut restarts, mut elsewhere) = (0, 0, 0);
        for (_, at, len) in reqs.iter().filter(|r| r.0.contains('W')) {
            assert_eq!(*len, 64 << 10, "a write of {len} bytes at {at}");
            let (z, b) = ((at >> 20) as usize, (at % (1 << 20)) >> 16);
            match b {
                _ if b == next[z] % 16 => at_pointer += 1,
                0 => restarts += 1,
                _ => elsewhere += 1,
            }
            next[z] = b + 1;
        }
        let discards = reqs.iter().filter(|r| r.0.contains('D')).count();
        (at_pointer, restarts, elsewhere, discards)
    };
    let trimmed = job("trim-gc.fio", true);
    let (reqs, doc) = issued_by(&issued, dir.path(), &trimmed);
    let (at_pointer, restarts, elsewhere, discards) = judge(reqs);
    let r = &doc["results"];
    assert_eq!(r[2]["workload"]["rw"], "randtrim", "{r:#}");
    assert!(r[2]["write"].is_null(), "{:#}", r[2]);
    let (trims, writes) = (f(&r[2]["trim"]["ios"]), f(&r[1]["write"]["ios"]));
    assert!(
        trims >= 10.0 && (4.0..=16.0).contains(&(writes / trims)),
        "{trims} trims, {writes} writes"
    );
    assert_eq!(
        (elsewhere, discards),
        (0, 0),
        "{at_pointer} writes at a pointer"
    );
    assert!(
        restarts > 0 && restarts as f64 <= trims,
        "{restarts} restarts, {trims} trims"
    );
    // fio on the same file: the same kind of writes, restarted by its trims.
    fio_json(dir.path(), &trimmed);
    let (_, fio_restarts, fio_elsewhere, fio_discards) = judge(issued.flagged());
    assert_eq!((fio_elsewhere, fio_discards), (0, 0), "fio's writes");
    assert!(fio_restarts > 0, "fio's trims restarted no zone");
    // Near miss: no trimmer.
    let (reqs, _) = issued_by(&issued, dir.path(), &job("no-trims.fio", false));
    let (at_pointer, restarts, elsewhere, _) = judge(reqs);
    assert_eq!(
        (restarts, elsewhere),
        (0, 0),
        "{at_pointer} writes at a pointer"
    );
}

/// fio's sprandom (sprandom.fio, on 16 MiB in 10 regions): every 4 KiB block of the range is
/// written, about the range and spr_op=0.15 of it in all (fio's physical size, which bounds it;
/// it ends, as fio's, once every block has come: here 98.6% of it), and the second
/// region starts by writing again fio's share of the first region's blocks (24.79%). Ground
/// truth: the writes the kernel sent the RAM loop device. Debian 12's fio (3.33) predates
/// sprandom, so fio is not run beside it. Near miss: plain random writes of the same amount
/// leave blocks unwritten.
#[test]
fn sprandom_writes_every_block_and_rewrites_each_regions_share() {
    let Some((ram, issued)) = traced_ram(16 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, job: &str| {
        let file = dir.path().join(name);
        std::fs::write(
            &file,
            format!(
                "[p]\nfilename={}\ndirect=1\nioengine=psync\nrw=randwrite\nbs=4k\nsize=16m\n{job}\n",
                ram.dev.dev
            ),
        )
        .unwrap();
        written_by(&issued, dir.path(), &file)
    };
    let (writes, doc) = run("spr.fio", "sprandom=1\nspr_op=0.15\nspr_num_regions=10");
    assert_eq!(doc["results"][0]["workload"]["sprandom"]["regions"], 10);
    let blocks = 4096usize;
    // fio's physical size: 16 MiB and 15% of it, in whole 4 KiB blocks.
    let physical = ((16u64 << 20) + ((16u64 << 20) as f64 * 0.15).ceil() as u64) / 4096;
    assert!(
        writes.len() as u64 <= physical && writes.len() as u64 >= physical * 97 / 100,
        "{} writes, {physical} physical: {:?}",
        writes.len(),
        doc["results"][0]
    );
    let mut count = vec![0u32; blocks];
    for &(at, len) in &writes {
        assert_eq!(len, 4096);
        count[(at / 4096) as usize] += 1;
    }
    let unwritten = count.iter().filter(|c| **c == 0).count();
    assert_eq!(unwritten, 0, "blocks never written");
    // The second region: a new block, then the first region's rewrites.
    let per = (physical / 10) as usize;
    let first: std::collections::HashSet<u64> = writes[..per].iter().map(|w| w.0).collect();
    let again = writes[per + 1..]
        .iter()
        .take_while(|w| first.contains(&w.0))
        .count();
    let share = again as f64 / per as f64;
    assert!(
        (share - 0.2479).abs() < 0.04,
        "{share} of the first region written again"
    );
    // Near miss: as many plain random writes leave about a third of the blocks unwritten.
    let (plain, _) = run("plain.fio", &format!("io_size={}", writes.len() * 4096));
    let mut seen = vec![false; blocks];
    for &(at, _) in &plain {
        seen[(at / 4096) as usize] = true;
    }
    let unwritten = seen.iter().filter(|s| !**s).count();
    assert!(
        unwritten > blocks / 5,
        "{unwritten} blocks unwritten by plain random writes"
    );
}

/// A trimmer with nothing to trim does not hold its flow's writer, as fio's does not (fio
/// counts each pass of its flow check, not the trim after it): a writer of weight 1 beside a
/// trimmer of weight 8, every zone empty at the start. The trimmer resets each zone the writer
/// wrote and then finds none holding data; had that not counted, the writer, ahead of its
/// share, would wait for trims that wait for its writes (1 write in 1 s; and in one CI run a
/// writer of weight 8 held after 214 writes in 7 ms, for the rest of its second). Ground truth:
/// the writes the kernel sent the device and when, for iogauge and for fio on the same job:
/// they go on through the run's second, at whatever pace the machine allows.
#[test]
fn a_trimmer_with_nothing_to_trim_does_not_hold_its_flows_writer() {
    let Some((ram, issued)) = traced_ram(16 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("idle-trimmer.fio");
    std::fs::write(
        &file,
        format!(
            "[global]\nfilename={}\ndirect=1\nioengine=psync\nzonemode=zbd\nzonesize=1m\n\
             size=16m\ntime_based\nruntime=1\n\n[wjob]\nrw=randwrite\nbs=64k\nflow=1\n\n\
             [trimjob]\nrw=randtrim\nbs=1m\nflow=8\n",
            ram.dev.dev
        ),
    )
    .unwrap();
    // The writes' times on the kernel's clock: from the first to the last, at least half the
    // run's second (a held writer's all fall in its first moments), and more than a few.
    let spread = |who: &str, reqs: Timed| {
        let writes: Vec<f64> = reqs
            .into_iter()
            .filter(|r| r.1.contains('W'))
            .map(|r| r.0)
            .collect();
        let span = writes.last().unwrap_or(&0.0) - writes.first().unwrap_or(&0.0);
        assert!(
            writes.len() >= 10 && span >= 0.5,
            "{who}: {} writes reached the device, over {span:.3} s",
            writes.len()
        );
        writes.len()
    };
    let (reqs, doc) = timed_by(&issued, dir.path(), &file);
    let writes = spread("iogauge", reqs);
    let r = &doc["results"];
    assert_eq!(r[1]["workload"]["rw"], "randtrim", "{r:#}");
    let (counted, trims) = (f(&r[0]["write"]["ios"]), f(&r[1]["trim"]["ios"]));
    // The writer's last write may complete past the run's end, uncounted (one in flight).
    assert!(
        (writes.saturating_sub(1)..=writes).contains(&(counted as usize)),
        "{counted} writes counted, {writes} sent"
    );
    assert!(trims >= 1.0, "{trims} trims");
    // fio on the same job, the reference.
    fio_json(dir.path(), &file);
    spread("fio", issued.timed());
}
