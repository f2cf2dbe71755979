use super::*;
use crate::workload::Rw;
use iogauge_engine::UringOptions;

fn null_spec(limit: Limit) -> Spec {
    Spec {
        rw: Rw::Randread,
        bs: 4096,
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
    let b = data_budgets(&spec).unwrap();
    assert_eq!(b, vec![4 * 4096, 4 * 4096, 3 * 4096]);
    assert!(data_budgets(&null_spec(Limit::Time(Duration::from_secs(1)))).is_none());
}
