use super::sched::{flight_per_bin, rate_per_bin};
use super::*;
use crate::workload::Rw;
use iogauge_engine::UringOptions;

fn null_spec(limit: Limit) -> Spec {
    Spec {
        rw: Rw::Randread,
        bs: crate::workload::BlockSize::known(4096),
        threads: 2,
        iodepth: 4,
        engine: EngineKind::Null,
        direct: false,
        mix_read_pct: 100,
        sync: None,
        odsync: false,
        seed: 1,
        limit,
        ramp: Duration::ZERO,
        interval: Duration::from_millis(100),
        uring: UringOptions::default(),
        submit_batch: 2,
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

#[test]
fn stop_when_ends_a_timed_run_early_and_keeps_its_numbers() {
    let file = tempfile::tempfile().unwrap();
    let spec = null_spec(Limit::Time(Duration::from_secs(30)));
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let stop = |iops: &[f64]| {
        seen.store(iops.len(), Ordering::SeqCst);
        iops.len() >= 3
    };
    let display = Display {
        stop_when: Some(&stop),
        ..Display::default()
    };
    let begun = Instant::now();
    let open = || Ok(vec![file.try_clone()?]);
    let m = run(&spec, &open, 0, 1 << 20, &display, None).unwrap();
    assert!(
        begun.elapsed() < Duration::from_secs(5),
        "stopped long before 30 s"
    );
    assert!(m.stopped_early);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "judged interval by interval"
    );
    assert!(
        m.runtime_s >= 0.3 && m.runtime_s < 5.0,
        "runtime {}",
        m.runtime_s
    );
    assert!(m.ios > 0);
    assert!(m.interrupted.is_none() && m.error.is_none());
}

// Regression (issue 10, item 7): with --ramp, --data was spent during the ramp, so the
// measured window moved less data than asked (none at all on a fast engine).
#[test]
fn a_data_budget_is_measured_after_the_ramp() {
    let file = tempfile::tempfile().unwrap();
    let spec = Spec {
        ramp: Duration::from_millis(200),
        ..null_spec(Limit::Data(1 << 20))
    };
    let open = || Ok(vec![file.try_clone()?]);
    let m = run(&spec, &open, 0, 1 << 20, &Display::default(), None).unwrap();
    assert!(m.bytes >= 1 << 20, "measured {} bytes of 1 MiB", m.bytes);
}

// Regression (issue 10, item 7): without a ramp, the CPU of the first 100 ms was left
// out while its IOs were counted; a run shorter than that had no CPU at all.
#[test]
fn cpu_is_counted_from_the_first_io() {
    let file = tempfile::tempfile().unwrap();
    let spec = null_spec(Limit::Data(4096 * 4096));
    let open = || Ok(vec![file.try_clone()?]);
    let m = run(&spec, &open, 0, 1 << 20, &Display::default(), None).unwrap();
    assert!(m.ios >= 4096);
    assert!(m.cpu.user_s + m.cpu.sys_s > 0.0, "{:?}", m.cpu);
}

// Each worker opens its own file description.
#[test]
fn every_worker_opens_the_target_itself() {
    let file = tempfile::tempfile().unwrap();
    let opened = AtomicUsize::new(0);
    let open = || {
        opened.fetch_add(1, Ordering::SeqCst);
        Ok(vec![file.try_clone()?])
    };
    let spec = Spec {
        threads: 3,
        ..null_spec(Limit::Data(64 * 4096))
    };
    run(&spec, &open, 0, 1 << 20, &Display::default(), None).unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 3);
    let refuse = || -> Result<Vec<File>> { Err(anyhow!("no such target")) };
    let e = run(&spec, &refuse, 0, 1 << 20, &Display::default(), None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("no such target"), "{e}");
}

#[test]
fn fixed_data_is_split_over_threads_in_whole_blocks() {
    let spec = Spec {
        threads: 3,
        ..null_spec(Limit::Data(10 * 4096 + 1))
    };
    let b = spec.data_budgets().unwrap();
    assert_eq!(b, vec![4 * 4096, 4 * 4096, 3 * 4096]);
    assert!(null_spec(Limit::Time(Duration::from_secs(1)))
        .data_budgets()
        .is_none());
}

/// An error before the measurement is placed in the trial or the ramp; after it, nowhere.
#[test]
fn an_error_before_the_measurement_says_where_the_run_was() {
    let ms = Duration::from_millis;
    let spec = Spec {
        complete_batch: 0,
        ramp: ms(2000),
        ..null_spec(Limit::Time(ms(1000)))
    };
    let trial = crate::workload::CALIBRATION;
    let at = |t| before_measuring(&spec, t);
    assert!(
        at(trial / 2).unwrap().contains("trial"),
        "{:?}",
        at(trial / 2)
    );
    let ramp = at(trial + ms(100)).unwrap();
    assert!(ramp.contains("ramp") && !ramp.contains("trial"), "{ramp}");
    assert_eq!(at(trial + ms(2100)), None);
    let plain = Spec {
        complete_batch: 1,
        ramp: Duration::ZERO,
        ..null_spec(Limit::Time(ms(1000)))
    };
    assert_eq!(before_measuring(&plain, Duration::ZERO), None);
}

/// The CPU series come out a bin each: rates of a nanosecond counter between samples, the last
/// bins repeating the last rate where the samples stop short.
#[test]
fn cpu_time_is_spread_over_the_bins_it_was_sampled_in() {
    // 0.5 CPU seconds per second for 0.2 s, then 1.0 for 0.2 s; samples every 0.1 s.
    let samples = [
        (0.0, 0u64),
        (0.1, 50_000_000),
        (0.2, 100_000_000),
        (0.3, 200_000_000),
        (0.4, 300_000_000),
    ];
    let bins = rate_per_bin(&samples, 0.1, 5);
    let want = [0.5, 0.5, 1.0, 1.0, 1.0];
    assert_eq!(bins.len(), 5);
    for (b, w) in bins.iter().zip(want) {
        assert!((f64::from(*b) - w).abs() < 1e-6, "{bins:?}");
    }
    // Samples between bin edges are interpolated: half of a sample's span per bin.
    let bins = rate_per_bin(&[(0.0, 0), (0.2, 200_000_000)], 0.1, 2);
    assert!(bins.iter().all(|b| (b - 1.0).abs() < 1e-6), "{bins:?}");
    assert!(
        rate_per_bin(&[(0.0, 0)], 0.1, 3).is_empty(),
        "one sample is no rate"
    );
}

/// The busy time of the CPUs a run may use: the machine's first line, or the lines of its own
/// CPUs (user nice system irq softirq steal; not idle or iowait), in nanoseconds.
#[test]
fn busy_time_is_the_machines_or_that_of_the_cpus_a_run_may_use() {
    let stat = "cpu  10 1 5 100 7 2 3 4 0 0\n\
                cpu0 9 1 4 10 1 1 2 3 0 0\n\
                cpu1 1 0 1 90 6 1 1 1 0 0\n\
                intr 12345\n";
    let ns = |t: u64| t * 10_000_000;
    assert_eq!(super::sched::busy_ns(stat, None), Some(ns(25)));
    assert_eq!(super::sched::busy_ns(stat, Some(&[0])), Some(ns(20)));
    assert_eq!(super::sched::busy_ns(stat, Some(&[0, 1])), Some(ns(25)));
    assert_eq!(super::sched::busy_ns(stat, Some(&[2])), None, "no such CPU");
}

/// The watcher's nap ends when the last worker's sender goes, not when its tick is out: with a
/// tick of an hour, a nap that slept it out would hang this test. What a worker sent before it
/// went is taken in.
#[test]
fn a_nap_ends_when_the_last_worker_has_gone() {
    let (tx, rx) = channel::<IntervalMsg>();
    let worker = std::thread::spawn(move || {
        tx.send(IntervalMsg {
            idx: 0,
            ios: 7,
            bytes: 7 * 4096,
            hist: Box::new(crate::measure::interval_hist()),
        })
        .unwrap();
    });
    let mut agg = Intervals::default();
    nap(&rx, &mut agg, Duration::from_secs(3600));
    worker.join().unwrap();
    let samples = agg.samples(Duration::from_millis(100), Duration::from_millis(100));
    assert_eq!(samples.len(), 1);
    assert!((samples[0].iops - 70.0).abs() < 1e-9, "{}", samples[0].iops);
}

/// A count the watching thread read at its ticks is each bin's as last read in it; a bin it
/// did not look in is −1, not the count before it; no read, no series.
#[test]
fn in_flight_is_the_last_count_read_in_each_bin() {
    let samples = [(0.05, 1), (0.15, 0), (0.18, 3), (0.32, 2)];
    assert_eq!(
        flight_per_bin(&samples, 0.1, 5),
        vec![1.0, 3.0, -1.0, 2.0, -1.0]
    );
    assert!(flight_per_bin(&[], 0.1, 3).is_empty());
}
