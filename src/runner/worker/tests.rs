use super::*;
use crate::runner::Live;
use crate::workload::Rw;
use iogauge_engine::{Caps, UringOptions};
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Completes every IO at once, and records how many IOs each hand-over to the "kernel"
/// (submit or submit_and_reap) carried.
struct Recorder {
    buf: Vec<u8>,
    queued: Vec<Io>,
    unsubmitted: usize,
    handed: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
    /// The completions each wait asked for.
    waits: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
    /// Every IO queued: its file and offset.
    seen: std::rc::Rc<std::cell::RefCell<Vec<(u16, u64)>>>,
}

impl Engine for Recorder {
    fn caps(&self) -> Caps {
        Caps {
            async_depth: true,
            does_io: false,
            sync_ops: true,
        }
    }
    fn buffer_mut(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }
    fn buffer(&self, _slot: u32) -> Option<&[u8]> {
        Some(&self.buf)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        self.seen.borrow_mut().push((io.file, io.offset));
        self.queued.push(io);
        self.unsubmitted += 1;
        Ok(())
    }
    fn submit(&mut self) -> std::io::Result<()> {
        self.handed
            .borrow_mut()
            .push(std::mem::take(&mut self.unsubmitted));
        Ok(())
    }
    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<Done>) -> std::io::Result<()> {
        self.waits.borrow_mut().push(min);
        if self.unsubmitted > 0 {
            self.handed
                .borrow_mut()
                .push(std::mem::take(&mut self.unsubmitted));
        }
        done.extend(self.queued.drain(..).map(|io| Done {
            slot: io.slot,
            res: io.len as i32,
        }));
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.queued.len()
    }
}

/// A workload for the worker's tests: 4 KiB random writes at QD `depth` on the null engine,
/// one thread, moving `data` bytes; each test sets what it is about.
fn spec(depth: u32, data: u64) -> Spec {
    Spec {
        rw: Rw::Randwrite,
        bs: crate::workload::BlockSize::known(4096),
        threads: 1,
        iodepth: depth,
        engine: iogauge_engine::EngineKind::Null,
        direct: false,
        mix_read_pct: 0,
        sync: None,
        odsync: false,
        seed: 1,
        limit: Limit::Data(data),
        ramp: Duration::ZERO,
        interval: Duration::from_secs(1),
        uring: UringOptions::default(),
        submit_batch: 1,
        complete_batch: 1,
        distribution: Default::default(),
        rate_per_thread: None,
        shape: Default::default(),
        file_service: Default::default(),
        interval_hists: false,
        tolerate: None,
        atomic: false,
        rate_poisson: false,
        think: None,
        prio: None,
        flow: None,
        placement: None,
    }
}

/// Runs one worker of `spec` over `range` bytes of `files` files on `eng`, from now.
fn run<E: Engine>(eng: E, spec: &Spec, files: usize, range: u64) -> WorkerOut {
    let cfg = WorkerCfg {
        id: 0,
        spec,
        range_start: 0,
        range_bytes: range,
        data_budget: match spec.limit {
            Limit::Data(d) => Some(d),
            Limit::Time(_) => None,
        },
        verify: None,
        zones: None,
    };
    let shared = Shared {
        stop: AtomicBool::new(false),
        finished: AtomicUsize::new(0),
        progress: vec![Live::default()],
    };
    let (tx, _rx) = std::sync::mpsc::channel();
    let (out, _) = work(eng, &cfg, files, &shared, &tx, Instant::now());
    assert!(out.error.is_none());
    out
}

// A mix's bytes are each IO's own size, and the buffers hold the largest.
#[test]
fn a_mix_counts_each_ios_own_size() {
    use crate::workload::blocks::BsWeight;
    let sizes = vec![
        BsWeight {
            bs: 4096,
            weight: 50,
        },
        BsWeight {
            bs: 65536,
            weight: 50,
        },
    ];
    let spec = Spec {
        seed: 3,
        shape: crate::workload::Shape {
            mix: Some(crate::workload::BsMix {
                read: sizes.clone(),
                write: sizes,
                align: None,
            }),
            ..Default::default()
        },
        ..spec(4, 64 << 20)
    };
    assert_eq!(spec.max_bs(), 65536);
    let eng = Recorder {
        buf: vec![0; 65536],
        queued: Vec::new(),
        unsubmitted: 0,
        handed: std::rc::Rc::default(),
        waits: std::rc::Rc::default(),
        seen: std::rc::Rc::default(),
    };
    let out = run(eng, &spec, 1, 1 << 30);
    let mean = out.write_bytes as f64 / out.writes as f64;
    assert!(out.write_bytes >= 64 << 20 && out.write_bytes < (64 << 20) + 4 * 65536);
    assert!((mean - 34816.0).abs() < 34816.0 * 0.05, "mean {mean}");
}

/// What the worker handed over at each submit, the IOs written, and the completions each
/// wait asked for.
fn handed_over(
    submit_batch: u32,
    depth: u32,
    complete_batch: u32,
) -> (Vec<usize>, u64, Vec<usize>) {
    let spec = Spec {
        submit_batch,
        complete_batch,
        ..spec(depth, 64 * 4096)
    };
    let handed = std::rc::Rc::default();
    let waits = std::rc::Rc::default();
    let eng = Recorder {
        buf: vec![0; 4096],
        queued: Vec::new(),
        unsubmitted: 0,
        handed: std::rc::Rc::clone(&handed),
        waits: std::rc::Rc::clone(&waits),
        seen: std::rc::Rc::default(),
    };
    let out = run(eng, &spec, 1, 1 << 20);
    let handed = handed.borrow().clone();
    let waits = waits.borrow().clone();
    (handed, out.writes, waits)
}

#[test]
fn queued_ios_reach_the_kernel_in_groups_of_the_submit_batch() {
    let (handed, writes, waits) = handed_over(2, 8, 1);
    assert!(waits.iter().all(|&w| w == 1), "{waits:?}");
    assert_eq!(writes, 64, "every IO completed");
    assert_eq!(
        handed.iter().sum::<usize>(),
        64,
        "every IO handed over once"
    );
    assert_eq!(
        handed.iter().max(),
        Some(&2),
        "never more than 2 at a time: {handed:?}"
    );
    // A batch as large as the depth hands each refill over in one burst.
    let (handed, _, _) = handed_over(8, 8, 1);
    assert_eq!(handed.iter().max(), Some(&8), "{handed:?}");
}

#[test]
fn each_wait_asks_for_the_complete_batch() {
    let (_, writes, waits) = handed_over(2, 8, 4);
    assert_eq!(writes, 64);
    assert!(
        !waits.is_empty() && waits.iter().all(|&w| w == 4),
        "{waits:?}"
    );
}

/// Completes `min` IOs per wait (at least one), spinning `per_wait` for each wait (a wake-up's
/// cost) and `per_io` for each IO (the device's work): a stand-in for a device that outruns
/// wake-ups, or one that does not.
struct Paced {
    buf: Vec<u8>,
    queued: std::collections::VecDeque<Io>,
    per_wait: Duration,
    per_io: Duration,
    /// Extra per IO when the wait is for more than one: a queue that empties while the worker
    /// waits for all of it leaves the device idle (the virtual disk's case).
    drained: Duration,
    /// Extra per IO whenever the wait is for more than one (a device that serves a shallow
    /// queue worse).
    batched: Duration,
}

fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

impl Engine for Paced {
    fn caps(&self) -> Caps {
        Caps {
            async_depth: true,
            does_io: false,
            sync_ops: false,
        }
    }
    fn buffer_mut(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }
    fn buffer(&self, _slot: u32) -> Option<&[u8]> {
        Some(&self.buf)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        self.queued.push_back(io);
        Ok(())
    }
    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<Done>) -> std::io::Result<()> {
        let n = min.max(1).min(self.queued.len());
        // Waiting for every IO in flight lets the queue run dry: each IO then costs more.
        let each = self.per_io
            + if min > 1 && n == self.queued.len() {
                self.drained
            } else {
                Duration::ZERO
            }
            + if min > 1 {
                self.batched
            } else {
                Duration::ZERO
            };
        spin(self.per_wait + each * n as u32);
        done.extend(self.queued.drain(..n).map(|io| Done {
            slot: io.slot,
            res: io.len as i32,
        }));
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.queued.len()
    }
}

/// The complete batch an auto worker settles on against a [`Paced`] engine, and its reads.
fn auto_choice(
    per_wait: Duration,
    per_io: Duration,
    drained: Duration,
    batched: Duration,
) -> (u32, u64) {
    let spec = Spec {
        rw: Rw::Randread,
        mix_read_pct: 100,
        limit: Limit::Time(Duration::from_millis(100)),
        submit_batch: 2,
        complete_batch: 0,
        ..spec(8, 0)
    };
    // The costs are spun in wall time, so a run tells the trial's rule only while this thread
    // has its CPU: one where the kernel gave it less than nine tenths of the wall time (other
    // tests, a loaded machine) timed the machine, and is run again, for up to 3 minutes. Where
    // it may (as root), the thread holds its CPU at nice -20, where a busy loop beside it
    // weighs 1/87 of it; the thread is this test's own and ends with it.
    // One such test at a time: beside each other they would take each other's CPU.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(tid) = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse::<u32>().ok())
    {
        let _ = std::process::Command::new("renice")
            .args(["-n", "-20", "-p", &tid.to_string()])
            .output();
    }
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let eng = Paced {
            buf: vec![0; 4096],
            queued: Default::default(),
            per_wait,
            per_io,
            drained,
            batched,
        };
        let (wall, cpu) = (Instant::now(), iogauge_engine::sys::thread_cpu());
        let out = run(eng, &spec, 1, 1 << 20);
        let used = iogauge_engine::sys::thread_cpu().since(cpu);
        if (used.user + used.sys).as_secs_f64() >= 0.9 * wall.elapsed().as_secs_f64() {
            return (out.complete_batch, out.reads);
        }
        assert!(
            Instant::now() < deadline,
            "in 3 minutes this thread never had its CPU for nine tenths of a run"
        );
    }
}

#[test]
fn auto_waits_for_all_in_flight_when_each_wake_up_costs_more_than_the_io() {
    // Each wait costs 40 µs whatever it reaps: one at a time moves an eighth of what eight do.
    let (batch, reads) = auto_choice(
        Duration::from_micros(40),
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
    );
    assert_eq!(
        batch, 8,
        "the trial should keep waiting for all 8 in flight"
    );
    assert!(reads > 0, "the measurement after the trial counted nothing");
}

#[test]
fn auto_waits_for_half_when_waiting_for_all_runs_the_queue_dry() {
    // Each wait costs 40 µs, and an IO 40 µs more when the queue has run dry: one at a time
    // moves one IO per 40 µs, all eight one per 45 µs, half (four) one per 10 µs.
    let us = Duration::from_micros;
    let (batch, reads) = auto_choice(us(40), Duration::ZERO, us(40), Duration::ZERO);
    assert_eq!(
        batch, 4,
        "the trial should wait for half of the 8 in flight"
    );
    assert!(reads > 0);
}

#[test]
fn auto_keeps_one_at_a_time_when_the_device_is_the_limit() {
    // The near miss: each wait costs nothing and every IO its 20 µs, a wait for several 5 µs
    // more per IO (half moves a fifth less than one at a time), and waiting for all in flight
    // lets the queue run dry (as on the virtual disk), so it moves fewer still. The costs are
    // spun in wall time, so a test thread that loses its CPU in one phase counts fewer IOs
    // there: with half merely equal to one at a time, losing the CPU in both phases of one at
    // a time made half "win" on a busy machine; a fifth less leaves room for that.
    let us = Duration::from_micros;
    let (batch, _) = auto_choice(Duration::ZERO, us(20), us(10), us(5));
    assert_eq!(batch, 1, "batching lost and must not be chosen");
}

#[test]
fn batching_must_win_by_a_tenth_in_both_halves() {
    // Each way's waits took the same time: the counts alone decide.
    let trial = |halves: [[u64; 3]; 2]| Trial {
        halves,
        spans: [[Duration::from_millis(100); 3]; 2],
        ..Trial::new(Instant::now(), 8)
    };
    assert_eq!(trial([[100, 0, 120], [100, 0, 115]]).choice(), Way::All);
    assert_eq!(
        trial([[100, 0, 120], [100, 0, 105]]).choice(),
        Way::One,
        "one half"
    );
    assert_eq!(
        trial([[100, 110, 110], [100, 200, 200]]).choice(),
        Way::One,
        "a tenth is not more"
    );
    assert_eq!(trial([[0; 3], [0; 3]]).choice(), Way::One, "nothing moved");
    // Both win: the one that moved more, even where the other won one half by more.
    assert_eq!(
        trial([[100, 135, 120], [100, 130, 140]]).choice(),
        Way::Half
    );
    assert_eq!(trial([[100, 130, 150], [100, 120, 140]]).choice(), Way::All);
    // Only half wins in both halves: half, though all moved more in all.
    assert_eq!(
        trial([[100, 120, 300], [100, 120, 105]]).choice(),
        Way::Half
    );
}

#[test]
fn the_trial_waits_all_half_one_one_half_all_after_a_warm_up() {
    let t = Trial::new(Instant::now(), 8);
    let at = |ms: u64| t.at(t.start + Duration::from_millis(ms));
    assert_eq!(
        at(50),
        Some((0, Way::All)),
        "the warm-up waits as the first phase"
    );
    assert_eq!(at(150), Some((1, Way::All)));
    assert_eq!(at(250), Some((2, Way::Half)));
    assert_eq!(at(350), Some((3, Way::One)));
    assert_eq!(at(450), Some((4, Way::One)));
    assert_eq!(at(550), Some((5, Way::Half)));
    assert_eq!(at(650), Some((6, Way::All)));
    assert_eq!(at(750), None);
}

// fio's nrfiles with its default file_service_type: the next file every IO, each file walked
// from its own start (a position per file), and a one-file job names file 0 only.
#[test]
fn ios_go_round_the_files_each_with_its_own_position() {
    let go = |files: usize| {
        let spec = Spec {
            rw: Rw::Write,
            ..spec(2, 12 * 4096)
        };
        let seen = std::rc::Rc::default();
        let eng = Recorder {
            buf: vec![0; 4096],
            queued: Vec::new(),
            unsubmitted: 0,
            handed: std::rc::Rc::default(),
            waits: std::rc::Rc::default(),
            seen: std::rc::Rc::clone(&seen),
        };
        let out = run(eng, &spec, files, 1 << 20);
        assert_eq!(out.writes, 12);
        let seen = seen.borrow().clone();
        seen
    };
    let four = go(4);
    let want: Vec<(u16, u64)> = (0..12u64).map(|i| ((i % 4) as u16, i / 4 * 4096)).collect();
    assert_eq!(four, want);
    let one = go(1);
    let want: Vec<(u16, u64)> = (0..12u64).map(|i| (0, i * 4096)).collect();
    assert_eq!(one, want);
}

/// A device that serves one IO each 500 µs whatever the queue (a throttle at 2,000 a second),
/// 32 in flight: every way of waiting moves the same. A wait for all ends up to 16 ms past its
/// phase, the last one past the trial: each way's rate is what it reaped over the time its
/// waits took, so every way reads 2,000 a second and the trial keeps one at a time.
#[test]
fn trial_judges_ways_by_rate_over_the_time_their_waits_took() {
    let origin = Instant::now();
    let mut trial = Trial::new(origin, 32);
    let per_io = Duration::from_micros(500);
    let (mut now, mut way) = (origin, Way::One);
    loop {
        let n = way.batches(32, 1).0 as u64;
        now += per_io * n as u32;
        match trial.waited(now, n) {
            Some(w) => way = w,
            None => break,
        }
    }
    for h in 0..2 {
        for w in [Way::One, Way::Half, Way::All] {
            let (n, t) = (trial.halves[h][w as usize], trial.spans[h][w as usize]);
            let rate = n as f64 / t.as_secs_f64();
            assert!(
                (rate - 2000.0).abs() < 1.0,
                "{w:?} in half {h}: {n} in {t:?}"
            );
        }
    }
    assert_eq!(trial.choice(), Way::One);
}

/// Counts come in steps of a whole wait: 224 against 200 is 1.12×, but one wait for all 32
/// more, so it is no win at 32 in flight; at 16 in flight the same counts are one and a half
/// waits more, a win.
#[test]
fn a_gain_of_less_than_one_wait_is_the_counts_own_step() {
    let trial = |depth: usize| Trial {
        halves: [[200, 0, 224], [200, 0, 224]],
        spans: [[Duration::from_millis(100); 3]; 2],
        ..Trial::new(Instant::now(), depth)
    };
    assert_eq!(trial(32).choice(), Way::One);
    assert_eq!(trial(16).choice(), Way::All);
}
