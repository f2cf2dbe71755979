use super::*;
use crate::{EngineConfig, Io, Op};

#[test]
fn asks_fall_by_one_a_miss_and_double_when_one_finds() {
    let mut p = Polls::new();
    assert_eq!(p.budget(), POLLS_MAX);
    p.missed();
    assert_eq!(p.budget(), POLLS_MAX - 1);
    p.found();
    assert_eq!(p.budget(), POLLS_MAX, "no more than the most");
    for _ in 0..POLLS_MAX {
        p.missed();
    }
    // None left: only one wait in POLLS_RETRY asks, once.
    let asks: Vec<u32> = (0..2 * POLLS_RETRY).map(|_| p.budget()).collect();
    assert_eq!(asks.iter().sum::<u32>(), 2, "{asks:?}");
    assert!(asks.iter().all(|&a| a <= 1), "{asks:?}");
    p.found();
    assert_eq!(
        p.budget(),
        1,
        "a retry that found one starts again from one"
    );
    p.found();
    assert_eq!(p.budget(), 2);
}

/// An engine of `depth` on a file of 64 KiB in the temporary directory, read through the
/// page cache; `None` where io_uring is refused (and not under CI).
fn engine(tag: &str, depth: u32, look: bool) -> Option<(std::path::PathBuf, UringEngine)> {
    let path = std::env::temp_dir().join(format!("iogauge-polls-{tag}-{}", std::process::id()));
    std::fs::write(&path, vec![7u8; 65536]).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let files = [file];
    let cfg = EngineConfig {
        files: &files,
        depth,
        buf_size: 4096,
        align: 4096,
        seed: 7,
        uring: UringOptions {
            look,
            ..UringOptions::default()
        },
        write_flags: 0,
    };
    match UringEngine::new(&cfg) {
        Ok(e) => Some((path, e)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
            std::fs::remove_file(&path).unwrap();
            assert!(
                std::env::var("CI").is_err(),
                "io_uring is not available here ({e}); CI must run this test"
            );
            eprintln!("SKIPPED: io_uring is not available here ({e})");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// `waits` waits for one, each after queueing one `op` (a read of a block or an fsync).
fn wait_for_each(eng: &mut UringEngine, op: Op, waits: u32) {
    let mut done = Vec::new();
    for i in 0..waits {
        let io = Io {
            slot: 0,
            file: 0,
            op,
            offset: u64::from(i % 16) * 4096,
            len: 4096,
            buf_off: 0,
            prio: 0,
        };
        eng.queue(io).unwrap();
        done.clear();
        eng.submit_and_reap(1, &mut done).unwrap();
        assert_eq!(done.len(), 1);
        assert!(done[0].res >= 0, "{:?}", done[0]);
    }
}

/// The kernel's ground truth: a read of a file in the page cache completes as it is
/// handed over, so the first ask of every wait (which hands it over) finds it and no wait
/// sleeps; no io_uring worker did any of it, so after the probe the ring no longer asks.
#[test]
fn a_wait_is_answered_by_asking_and_asking_stops_where_no_worker_does_the_io() {
    let Some((path, mut eng)) = engine("read", 1, true) else {
        return;
    };
    wait_for_each(&mut eng, Op::Read, POLLS_PROBE - 1);
    assert_eq!(
        eng.answered,
        u64::from(POLLS_PROBE - 1),
        "every wait answered by its first ask"
    );
    assert!(eng.polls.is_some());
    wait_for_each(&mut eng, Op::Read, 10);
    assert!(
        eng.polls.is_none(),
        "reads done as they were handed over: no worker, no asks"
    );
    assert!(!crate::sys::io_uring_workers_serve_this_thread());
    assert!(
        !eng.setup.looked && eng.setup.flags.contains(&"DEFER_TASKRUN"),
        "a ring that may look stays where no worker does its IO: {:?}",
        eng.setup
    );
    std::fs::remove_file(path).unwrap();
}

/// The near miss, kernel-made too: io_uring never issues an fsync without blocking, so an
/// io_uring worker of this thread does each one, and the ring keeps asking.
#[test]
fn asking_goes_on_where_an_io_uring_worker_does_the_io() {
    let Some((path, mut eng)) = engine("fsync", 1, false) else {
        return;
    };
    wait_for_each(&mut eng, Op::Fsync, POLLS_PROBE + 10);
    assert!(crate::sys::io_uring_workers_serve_this_thread());
    assert!(
        eng.polls.is_some(),
        "the fsyncs were done by io_uring's worker: asks go on"
    );
    assert!(!eng.setup.looked, "only a ring told it may look moves");
    std::fs::remove_file(path).unwrap();
}

/// Kernel-made too: io_uring's worker does every fsync, so a ring that may look moves after
/// its probe, with IOs in flight on the ring it leaves; they complete there, and from then on
/// a wait finds each fsync's completion by looking at the completion queue (given a second,
/// so the test does not hang on how soon the worker gets a CPU). Two fsyncs are kept in
/// flight, so the move leaves them on the old ring, and each is reaped once. In a thread of
/// its own, so a wait that never ends fails the test instead of hanging it.
#[test]
fn a_ring_that_may_look_moves_where_a_worker_does_the_io_and_finds_its_completions() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Some((path, mut eng)) = engine("look", 2, true) else {
            return;
        };
        eng.look_for = std::time::Duration::from_secs(1);
        let mut done = Vec::with_capacity(4);
        let fsync = |slot| Io {
            slot,
            file: 0,
            op: Op::Fsync,
            offset: 0,
            len: 0,
            buf_off: 0,
            prio: 0,
        };
        eng.queue(fsync(0)).unwrap();
        eng.queue(fsync(1)).unwrap();
        let (mut answered_when_moved, mut left_with) = (None, 0);
        let mut reaped = 0;
        for _ in 0..POLLS_PROBE + 40 {
            done.clear();
            eng.submit_and_reap(1, &mut done).unwrap();
            assert!(!done.is_empty());
            reaped += done.len();
            if eng.setup.looked && answered_when_moved.is_none() {
                answered_when_moved = Some(eng.answered);
                left_with = eng.leaving.as_ref().map_or(0, |l| l.outstanding) + done.len();
            }
            for d in &done {
                assert_eq!(d.res, 0, "{d:?}");
                eng.queue(fsync(d.slot)).unwrap();
            }
        }
        let moved = answered_when_moved.expect("the ring moved after its probe");
        assert_eq!(
            eng.in_flight(),
            2,
            "every fsync but the last two reaped once: {reaped}"
        );
        tx.send((
            eng.setup.clone(),
            left_with,
            eng.leaving.is_none(),
            eng.answered - moved,
        ))
        .unwrap();
        drop(eng);
        std::fs::remove_file(path).unwrap();
    });
    let Ok((setup, left_with, left_closed, looked)) =
        rx.recv_timeout(std::time::Duration::from_secs(120))
    else {
        panic!("a wait did not end (or the thread failed, see above)");
    };
    assert!(!setup.flags.contains(&"DEFER_TASKRUN"), "{setup:?}");
    assert_eq!(
        left_with, 2,
        "both fsyncs were in flight on the ring left behind"
    );
    assert!(
        left_closed,
        "the ring left behind is closed once its IO completed"
    );
    assert!(
        looked >= 35,
        "nearly every wait after the move found its fsync by looking: {looked}"
    );
}
