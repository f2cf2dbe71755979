//! What the device saw (issue 11): each result carries the block layer's own counters for the
//! devices of its target's stack, and the findings that hold them against what iogauge issued
//! are provoked for real on loop devices — split (a lowered max_sectors_kb), merged (buffered
//! sequential reads), absorbed (a loop device without direct IO over a cached file), other-io
//! (a second reader), queue (a lowered nr_requests) — and stay silent on a clean run. Needs
//! root; says so otherwise.

use serde_json::Value;
use std::path::Path;

use crate::common;
use common::*;

const MIB: u64 = 1 << 20;

/// A loop device over a new image of `size` bytes in `dir` (RAM when `dir` is in /dev/shm).
fn loop_over(dir: &Path, size: u64, direct: bool) -> LoopDev {
    let img = dir.join("d.img");
    // Real data, so no read is answered from a hole.
    let mut f = std::fs::File::create(&img).unwrap();
    let chunk: Vec<u8> = (0..MIB).map(|i| (i * 2654435761 % 251) as u8).collect();
    for _ in 0..size / MIB {
        std::io::Write::write_all(&mut f, &chunk).unwrap();
    }
    drop(f);
    let dio = if direct {
        "--direct-io=on"
    } else {
        "--direct-io=off"
    };
    let dev = losetup(&["-f", "--show", dio, img.to_str().unwrap()]);
    LoopDev {
        dev,
        file: std::fs::canonicalize(&img).unwrap(),
    }
}

/// A run of a second unless `extra` names its own length (`--time`, `--data`).
fn run(dir: &Path, dev: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", dev, "--json", "--no-store"];
    if !extra.contains(&"--data") && !extra.contains(&"--time") {
        args.extend(["--time", "1s"]);
    }
    args.extend_from_slice(extra);
    json_of(&iogauge(dir, &args))
}

fn kinds(doc: &Value) -> Vec<String> {
    doc["results"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

fn finding<'a>(doc: &'a Value, kind: &str) -> &'a Value {
    doc["results"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} finding in {:?}", kinds(doc)))
}

const DEVICE_KINDS: [&str; 5] = ["split", "merged", "absorbed", "other-io", "queue"];

fn sysfs(dev: &LoopDev, attr: &str) -> String {
    std::fs::read_to_string(format!("/sys/block/{}/queue/{attr}", dev.name()))
        .unwrap()
        .trim()
        .to_string()
}

/// The devices' window is the measurement's: a 2 s ramp and the complete batch's 0.7 s trial
/// before a 1 s measurement moved 3.7 times the measured bytes, which the window held until it
/// opened at the measurement's start (on a loaded machine the trial's rate and the measured one
/// differ, and their average read as another's IO). On RAM nobody else uses, the device's
/// bytes are iogauge's measured ones and its edges'.
#[test]
fn the_ramp_and_the_trial_are_not_in_the_devices_window() {
    needs_root!();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dev = loop_over(shm.path(), 64 * MIB, true);
    let doc = run(
        shm.path(),
        &dev.dev,
        &["--rw", "randread", "--iodepth", "4", "--ramp", "2s"],
    );
    let r = &doc["results"][0];
    let issued = r["read"]["bytes"].as_f64().unwrap();
    let seen = r["devices"][0]["read_bytes"].as_f64().unwrap();
    assert!(
        seen >= 0.95 * issued && seen < 1.5 * issued,
        "the device read {seen} B in its window for {issued} B measured"
    );
}

#[test]
fn a_clean_run_has_device_counters_and_no_device_finding() {
    needs_root!();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dev = loop_over(shm.path(), 64 * MIB, true);
    // Nobody but iogauge uses this RAM-backed device: every read it completes while iogauge
    // runs is iogauge's.
    let before = device_ios(dev.name());
    let doc = run(
        shm.path(),
        &dev.dev,
        &["--rw", "randread", "--iodepth", "4"],
    );
    let all = device_ios(dev.name()) - before;
    let d = &doc["results"][0]["devices"][0];
    assert_eq!(d["name"], dev.name());
    let ios = doc["results"][0]["ios"].as_u64().unwrap();
    let reads = d["reads"].as_u64().unwrap();
    // The device window holds every measured IO (and the workers' start and stop), and lies
    // within the whole process's life.
    assert!(
        reads >= ios && reads <= all,
        "{reads} reads in the window for {ios} IOs, {all} in the whole run"
    );
    // Every IO the device was handed was iogauge's 4 KiB: the requests it completed, with the
    // ones the block layer merged into them, are 4,096 B each. (The average request alone is
    // not: on a loaded machine the queue holds more, and two random reads that happen to be
    // neighbours merge, which is true and counted.)
    let bytes = d["read_bytes"].as_f64().unwrap();
    let merges = d["read_merges"].as_f64().unwrap();
    assert_eq!((bytes / (reads as f64 + merges)).round(), 4096.0, "{d:#}");
    assert_eq!(
        d["avg_read_request_bytes"].as_f64().unwrap().round(),
        (bytes / reads as f64).round(),
        "{d:#}"
    );
    let util = d["util"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&util));
    assert!(!d["intervals"].as_array().unwrap().is_empty());
    for k in kinds(&doc) {
        assert!(!DEVICE_KINDS.contains(&k.as_str()), "{k} on a clean run");
    }
    // The CSV carries the top device's figures too.
    let csv = shm.path().join("r.csv");
    let out = iogauge(
        shm.path(),
        &[
            "run",
            &dev.dev,
            "--time",
            "300ms",
            "--no-store",
            "--output",
            csv.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "dev_avg_read_request_bytes")
        .unwrap();
    assert_eq!(row[col], "4096");
}

#[test]
fn a_lowered_max_sectors_kb_splits_the_ios_and_is_named() {
    needs_root!();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dev = loop_over(shm.path(), 64 * MIB, true);
    let _limit =
        QueueSetting::set(&dev, "max_sectors_kb", "128").expect("max_sectors_kb is writable");
    // A device finding needs 1,000 IOs and half a second: two seconds of 1 MiB reads from
    // RAM, where one was short of 1,000 on a machine busy with other tests.
    let doc = run(
        shm.path(),
        &dev.dev,
        &[
            "--rw",
            "read",
            "--bs",
            "1m",
            "--iodepth",
            "4",
            "--time",
            "2s",
        ],
    );
    let f = finding(&doc, "split");
    let summary = f["summary"].as_str().unwrap();
    assert!(summary.contains("max_sectors_kb is 128"), "{summary}");
    let avg = doc["results"][0]["devices"][0]["avg_read_request_bytes"]
        .as_f64()
        .unwrap();
    assert!(avg <= 128.0 * 1024.0, "{avg}");
    eprintln!("user sees: {summary}");
}

#[test]
fn reads_a_cached_backing_file_answers_are_absorbed() {
    needs_root!();
    let _cache = keeping_the_page_cache();
    // The image on a file system of its own, on a RAM-backed loop device only this test uses
    // (another process's IO on a shared disk would reach "the disk beneath" and hide the
    // finding). The image is read once so its pages are cached; the upper loop device, without
    // direct IO, then serves O_DIRECT reads from the page cache.
    let ram = RamLoop::new(160 * MIB);
    sh("mkfs.ext4", &["-q", "-F", &ram.dev.dev]);
    let dir = tempfile::tempdir().unwrap();
    let _mount = Mount::new(&ram.dev.dev, &dir.path().join("mnt"), "rw");
    let dev = loop_over(&dir.path().join("mnt"), 64 * MIB, false);
    let _ = std::fs::read(&dev.file).unwrap();
    let doc = run(
        dir.path(),
        &dev.dev,
        &["--rw", "randread", "--iodepth", "4"],
    );
    let names: Vec<&str> = doc["results"][0]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(
        names.len() >= 2,
        "the loop device and the disk beneath: {names:?}"
    );
    assert_eq!(names[names.len() - 1], ram.dev.name(), "{names:?}");
    let f = finding(&doc, "absorbed");
    let summary = f["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!("never reached {}", names[names.len() - 1])),
        "{summary}"
    );
    eprintln!("user sees: {summary}");
}

#[test]
fn a_second_reader_is_other_io() {
    needs_root!();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    // 256 MiB in RAM: each dd reads it in a tenth of a second or so, so one is alive at each
    // edge of the window almost surely (the shell is counted as its parent), and the shell
    // reaps several inside the window, whose bytes the kernel adds to the shell's. (With 4 MiB
    // no dd was alive at either edge now and then, and nothing tied the shell to the device.)
    let dev = loop_over(shm.path(), 256 * MIB, true);
    let before = device_ios(dev.name());
    let reader = Helper::shell(&format!(
        "while true; do dd if={} of=/dev/null bs=1M iflag=direct status=none; done",
        dev.dev
    ));
    // The second reader is reading before the run starts.
    wait_until("the second reader's reads", WATCHDOG, || {
        device_ios(dev.name()) > before + 10
    });
    let doc = run(shm.path(), &dev.dev, &["--rw", "randread", "--bs", "4k"]);
    let f = finding(&doc, "other-io");
    let summary = f["summary"].as_str().unwrap();
    // Named from the kernel's per-process accounting: the reader is dd, with its PID, or the
    // shell running the loop when the dds it started ended inside the window (a dd reads the
    // 64 MiB in tens of milliseconds on a fast machine): the kernel adds a reaped child's bytes
    // to its parent's, and the summary says that is where they came from. On a loaded machine
    // the shell reaps late, and a dd that ended unreaped as the window closed is in no
    // process's count: the raw device's own counters still make it another's (CI with other
    // tests beside this one called it amplification).
    let named = summary.contains("other processes moved")
        && (summary.contains("dd (pid ")
            || summary.contains(&format!(
                "sh (pid {}) through processes it started",
                reader.pid()
            )));
    assert!(
        named || summary.contains("to which the kernel adds none of its own"),
        "{summary}"
    );
    assert!(!kinds(&doc).contains(&"amplification".to_string()));
    drop(reader);
    eprintln!("user sees: {summary}");
}

/// btrfs writes its log tree and copy-on-write metadata for every fdatasync: the device moves
/// several times what iogauge issued though nothing else runs. That is the file system's write
/// amplification, an `info` with its factor, never `other-io` (issue 37: "another process used
/// the disk" on every btrfs fsync cell). The near miss: direct overwrites without a sync on
/// ext4 move what was issued, and neither is named.
#[test]
fn btrfs_under_fdatasync_is_amplification_and_plain_direct_writes_are_neither() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    for (mkfs, args, extra) in [
        ("mkfs.btrfs", vec!["-q", "-f"], vec!["--fdatasync", "1"]),
        ("mkfs.ext4", vec!["-q", "-F"], vec![]),
    ] {
        let ram = RamLoop::new(512 * MIB);
        let mut a = args.clone();
        a.push(&ram.dev.dev);
        sh(mkfs, &a);
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        let _mount = Mount::new(&ram.dev.dev, &mnt, "");
        // 2,048 writes and syncs: a thousand at least however busy the machine (the device
        // findings' minimum evidence), where three seconds were a machine's mood.
        let mut args = vec![
            "run",
            mnt.to_str().unwrap(),
            "--data",
            "32m",
            "--json",
            "--no-store",
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--size",
            "64m",
        ];
        args.extend(&extra);
        let doc = json_of(&iogauge(dir.path(), &args));
        assert!(
            doc["results"][0]["ios"].as_u64().unwrap() >= 1000,
            "{}",
            doc["results"][0]["ios"]
        );
        let k = kinds(&doc);
        assert!(!k.contains(&"other-io".to_string()), "{mkfs}: {k:?}");
        match extra.is_empty() {
            false => {
                let f = finding(&doc, "amplification");
                let summary = f["summary"].as_str().unwrap();
                assert_eq!(f["severity"], "info");
                assert!(
                    f["evidence"]["amplification"].as_f64().unwrap() > 1.5,
                    "{summary}"
                );
                assert!(
                    summary.contains("for each sync") && summary.contains("btrfs"),
                    "{summary}"
                );
                eprintln!("user sees: {summary}");
            }
            true => assert!(!k.contains(&"amplification".to_string()), "{mkfs}: {k:?}"),
        }
    }
}

#[test]
fn a_lowered_nr_requests_holds_the_queue_and_is_named() {
    needs_root!();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dev = loop_over(shm.path(), 64 * MIB, true);
    let _limit = QueueSetting::set(&dev, "nr_requests", "4");
    if _limit.is_none() || sysfs(&dev, "nr_requests") != "4" {
        skip("nr_requests of a loop device cannot be lowered to 4 here");
        return;
    }
    let doc = run(
        shm.path(),
        &dev.dev,
        &[
            "--rw",
            "randread",
            "--bs",
            "64k",
            "--iodepth",
            "32",
            "--time",
            "2s",
        ],
    );
    let f = finding(&doc, "queue");
    let summary = f["summary"].as_str().unwrap();
    assert!(summary.contains("nr_requests is 4"), "{summary}");
    eprintln!("user sees: {summary}");
}

#[test]
fn buffered_sequential_reads_are_merged_and_named() {
    needs_root!();
    // Buffered 4 KiB reads in order: the page cache reads ahead in large requests, so the
    // device, which only this test uses, completes far fewer reads than iogauge issues.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dev = loop_over(shm.path(), 64 * MIB, true);
    let before = device_ios(dev.name());
    let doc = run(
        shm.path(),
        &dev.dev,
        &["--buffered", "--rw", "read", "--bs", "4k"],
    );
    let all = device_ios(dev.name()) - before;
    let ios = doc["results"][0]["ios"].as_u64().unwrap();
    // The kernel's own count over the whole process: the ground truth of the finding.
    assert!(all * 4 < ios, "{all} device requests for {ios} IOs issued");
    let f = finding(&doc, "merged");
    let size = f["evidence"]["avg_request_bytes"].as_f64().unwrap();
    assert!(size > 4096.0 * 1.2, "{}", f["evidence"]);
    let per_s = f["evidence"]["device_requests_per_s"].as_f64().unwrap();
    let d = &doc["results"][0]["devices"][0];
    assert!(
        d["reads"].as_u64().unwrap() <= all && per_s > 0.0,
        "{} reads in the window, {all} in the run",
        d["reads"]
    );
    eprintln!("user sees: {}", f["summary"]);
}

/// btrfs sends a 1 MiB direct write to the device in pieces of its own making — more than any
/// queue limit of a 4Kn RAM loop explains, where ext4 sends it whole (issue 37): said as an info
/// naming btrfs, not as a warning that the device measured smaller IOs than asked. The near
/// miss, a raw device cut by a lowered max_sectors_kb, is a warning above.
#[test]
fn a_file_systems_own_pieces_are_an_info_naming_it() {
    needs_root!();
    if !have("mkfs.btrfs") {
        skip("needs mkfs.btrfs");
        return;
    }
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dev = blank_loop(shm.path(), "d.img", 1 << 30, 4096);
    sh("mkfs.btrfs", &["-q", "-f", &dev.dev]);
    // The image under /dev/shm, the mount point where a target may be.
    let here = tempfile::tempdir().unwrap();
    let mnt = here.path().join("mnt");
    let _m = Mount::new(&dev.dev, &mnt, "rw");
    // 1,000 IOs at least before a device finding is made: 2,048 of them, however busy the
    // machine (3 s of them were too few on a busy one).
    let doc = json_of(&iogauge(
        here.path(),
        &[
            "run",
            mnt.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--bs",
            "1m",
            "--iodepth",
            "4",
            "--data",
            "2048m",
            "--size",
            "256m",
            "--json",
            "--no-store",
        ],
    ));
    let f = finding(&doc, "split");
    let summary = f["summary"].as_str().unwrap();
    eprintln!("user sees: {summary}");
    assert_eq!(f["severity"], "info", "{summary}");
    assert!(summary.starts_with("btrfs reached"), "{summary}");
}

/// A cgroup's limit on the target's device is part of what a run measured: `show` and `report`
/// name it on a line of their own, and the run's record keeps it. Held to 300 reads a second by the blkio
/// group the run is in; the same device outside any limit names none, and is recorded as memory
/// (a loop device over a file in tmpfs), whose moved rates are the CPU's.
#[test]
fn a_cgroup_limit_on_the_device_is_named_and_recorded() {
    let Some((cg, ram)) = throttle_rig("limit-named") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let args = format!("run {} --rw randread --time 300ms --json", ram.dev.dev);
    cg.throttle(&ram.dev, "read", 300);
    let held = json_of(&cg.run_in(dir.path(), &args));
    cg.throttle(&ram.dev, "read", 0);
    let free = json_of(&cg.run_in(dir.path(), &args));
    let majmin = std::fs::read_to_string(format!("/sys/block/{}/dev", ram.dev.name())).unwrap();
    let majmin = majmin.trim();
    assert_eq!(
        held["system"]["target"]["io_limits"],
        serde_json::json!([{"dev": majmin, "what": "read_iops", "value": 300}])
    );
    assert_eq!(free["system"]["target"]["io_limits"], serde_json::json!([]));
    assert_eq!(
        free["system"]["target"]["devices"][0]["loop_backing_fs"],
        "tmpfs"
    );
    let shown: Vec<String> = [&held, &free]
        .iter()
        .map(|d| {
            let id = d["run_id"].as_str().unwrap();
            let out = iogauge(dir.path(), &["show", id]);
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .collect();
    let limit = format!(
        "limit       {}: reads held to 300 IOPS by a cgroup iogauge ran in",
        ram.dev.name()
    );
    assert!(shown[0].contains(&limit), "{}", shown[0]);
    assert!(!shown[1].contains("limit  "), "{}", shown[1]);
    // The report says it in the same words.
    let id = held["run_id"].as_str().unwrap();
    let out = iogauge(dir.path(), &["report", id, "-o", "r.html"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    let said = format!(
        "Limit: {}: reads held to 300 IOPS by a cgroup iogauge ran in.",
        ram.dev.name()
    );
    assert!(html.contains(&said), "no {said:?} in the report");
    // And draws the stack as `show` does (issue 55).
    let drawn = format!("└─ {} (loop over ", ram.dev.name());
    assert!(
        html.contains("<pre class=\"stack\">") && html.contains(&drawn),
        "no stack drawn in the report"
    );
}

/// Issue 55, item 3: another stack's IO on a shared disk is that stack's, never the file
/// system's amplification. The "disk" is a RAM-backed loop device with an ext4 of its own;
/// the target is a loop device over one file on it, and a second loop device over another file
/// there is read by dd meanwhile: the disk moves far more than the target's stack sent it,
/// through the loop workers' kernel threads, which no process's accounting shows ("other
/// processes on it moved 0.0 MiB/s" before). The near miss: the second device idle.
#[test]
fn another_stacks_io_on_a_shared_disk_is_other_io_not_amplification() {
    needs_root!();
    let ram = RamLoop::new(512 * MIB);
    sh("mkfs.ext4", &["-q", "-F", &ram.dev.dev]);
    let dir = tempfile::tempdir().unwrap();
    let disk = Mount::new(&ram.dev.dev, &dir.path().join("disk"), "rw");
    let (a, b) = (disk.0.join("a"), disk.0.join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let target = loop_over(&a, 64 * MIB, true);
    let neighbour = loop_over(&b, 128 * MIB, true);
    let args = [
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "1",
        "--time",
        "2s",
    ];
    let quiet = run(dir.path(), &target.dev, &args);
    assert!(
        !kinds(&quiet)
            .iter()
            .any(|k| k == "other-io" || k == "amplification"),
        "{:?}",
        kinds(&quiet)
    );
    let shared = &quiet["system"]["target"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == ram.dev.name())
        .unwrap()["shared_with"];
    assert!(
        shared.to_string().contains(neighbour.name()),
        "the disk's other loop device is recorded: {shared}"
    );
    let before = device_ios(neighbour.name());
    let reader = Helper::shell(&format!(
        "while true; do dd if={} of=/dev/null bs=1M iflag=direct status=none; done",
        neighbour.dev
    ));
    wait_until("the neighbour's reads", WATCHDOG, || {
        device_ios(neighbour.name()) > before + 10
    });
    let busy = run(dir.path(), &target.dev, &args);
    drop(reader);
    let f = finding(&busy, "other-io");
    let summary = f["summary"].as_str().unwrap();
    eprintln!("user sees: {summary}");
    assert!(
        summary.starts_with(&format!("{} moved", ram.dev.name()))
            && summary.contains(&format!("{} over", neighbour.name())),
        "{summary}"
    );
    assert!(!kinds(&busy).contains(&"amplification".to_string()));
    drop(target);
    drop(neighbour);
    drop(disk);
}

/// Issue 55, item 4: a device held at its cgroup limit, interval after interval, is named as
/// the limit the result measured; the near miss, a limit far above what the device does, names
/// nothing. Ground truth: the blkio throttle the test sets on the group the run is in.
#[test]
fn a_device_held_at_its_cgroup_limit_is_named_and_one_under_a_higher_limit_is_not() {
    let Some((cg, ram)) = throttle_rig("limit-held") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let args = format!(
        "run {} --rw randread --time 5s --json --no-store",
        ram.dev.dev
    );
    // 5 s: an idle throttle lets the first moments run over its rate, and 3 s left a fresh-clone
    // CI with fewer than two intervals at the limit (as the member's test below saw).
    cg.throttle(&ram.dev, "read", 500);
    let held = json_of(&cg.run_in(dir.path(), &args));
    cg.throttle(&ram.dev, "read", 50_000_000);
    let free = json_of(&cg.run_in(dir.path(), &args));
    cg.throttle(&ram.dev, "read", 0);
    let f = finding(&held, "limit");
    let summary = f["summary"].as_str().unwrap();
    eprintln!("user sees: {summary}");
    assert!(
        summary.starts_with(&format!("{} ran at its cgroup limit", ram.dev.name()))
            && summary.contains("reads held to 500 IOPS")
            && summary.contains("this result measured the limit"),
        "{summary}"
    );
    assert!(
        !kinds(&free).contains(&"limit".to_string()),
        "{:?}",
        kinds(&free)
    );
}

/// Issue 55, items 4 and 5: one member of a two-device btrfs raid0 held by a cgroup limit holds
/// the whole array back, named as that member's limit; and a limit set while a run goes is
/// read at its end and named with when it began, where the fall was called the CPU's before
/// (a loop device over tmpfs is memory).
#[test]
fn a_limit_on_one_member_or_set_mid_run_is_named() {
    let Some((cg, ram)) = throttle_rig("limit-member") else {
        return;
    };
    needs_tool!("mkfs.btrfs");
    let other = RamLoop::new(256 * MIB);
    let one = RamLoop::new(256 * MIB);
    sh(
        "mkfs.btrfs",
        &[
            "-q",
            "-f",
            "-d",
            "raid0",
            "-m",
            "raid1",
            &one.dev.dev,
            &other.dev.dev,
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let opts = format!("device={},device={}", one.dev.dev, other.dev.dev);
    let mnt = Mount::new(&one.dev.dev, &dir.path().join("mnt"), &opts);
    cg.throttle(&other.dev, "read", 400);
    // 5 s: a throttle that was idle lets the first second run about 10% over its rate, the
    // edge of what the check allows, so three intervals could leave fewer than two at the limit.
    let doc = json_of(&cg.run_in(
        dir.path(),
        &format!(
            "run {} --rw randread --size 64m --time 5s --json --no-store",
            mnt.0.display()
        ),
    ));
    cg.throttle(&other.dev, "read", 0);
    drop(mnt);
    let summary = finding(&doc, "limit")["summary"]
        .as_str()
        .unwrap()
        .to_string();
    eprintln!("user sees: {summary}");
    assert!(
        summary.starts_with(&format!("{} ran at its cgroup limit", other.dev.name()))
            && summary.contains("one member of the multi-device btrfs"),
        "{summary}"
    );

    // Mid-run: the limit comes once the run's reads are under way. Eight in flight keep the
    // throttle's queue full however late a loaded CPU wakes the run (one at a time, each read
    // waits for a wake-up on top of the throttle's, and the rate fell under the limit's band
    // in a fresh-clone CI).
    let before = device_ios(ram.dev.name());
    let mut cmd = std::process::Command::new("sh");
    cmd.args([
        "-c",
        &cg.iogauge(&format!(
            "run {} --rw randread --iodepth 8 --time 5s --json --no-store",
            ram.dev.dev
        )),
    ])
    .current_dir(dir.path());
    let run = Spawned::start(cmd);
    // A count of reads, not a pace: once 2,000 have gone by the run is measuring, and the
    // limit holds for most of its 5 s however slowly a loaded machine let it start (after
    // 20,000 it came too late for the limit finding's evidence in CI beside other tests).
    wait_until("the run's reads", WATCHDOG, || {
        device_ios(ram.dev.name()) > before + 2_000
    });
    cg.throttle(&ram.dev, "read", 1000);
    let out = run.finish(WATCHDOG);
    cg.throttle(&ram.dev, "read", 0);
    let doc = json_of(&out);
    assert_eq!(
        doc["system"]["target"]["io_limits"][0]["set_during_run"], true,
        "{}",
        doc["system"]["target"]
    );
    let f = finding(&doc, "limit");
    let summary = f["summary"].as_str().unwrap();
    eprintln!("user sees: {summary}");
    assert!(summary.contains("(set while the run went)"), "{summary}");
    let all = doc["results"][0]["findings"].as_array().unwrap();
    assert!(
        all.iter().all(|f| !f["summary"]
            .as_str()
            .unwrap()
            .contains("which is memory: its rate is the CPU's")),
        "a fall to the limit called the CPU's: {all:?}"
    );
}

/// Issue 55, item 2: a multi-device btrfs whose devices are loop devices over files on one
/// disk is judged at that disk, the lowest device of every branch: raid1 serves one reader's
/// reads from either mirror, so no member alone sees them all, and none may be read as the
/// bottom ("100% of the reads never reached loop2" was false). The disk is a RAM-backed loop
/// device with an ext4 of its own that only this test uses. The near miss, and the positive:
/// the same btrfs over loop devices without direct IO, whose reads the page cache answers,
/// is absorbed, named at that disk.
#[test]
fn a_multi_device_btrfs_over_one_disk_is_judged_at_that_disk() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    let _cache = keeping_the_page_cache();
    let ram = RamLoop::new(1024 * MIB);
    sh("mkfs.ext4", &["-q", "-F", &ram.dev.dev]);
    let dir = tempfile::tempdir().unwrap();
    let disk = Mount::new(&ram.dev.dev, &dir.path().join("disk"), "rw");
    for direct in [true, false] {
        let members: Vec<LoopDev> = (0..3)
            .map(|i| {
                let img = disk.0.join(format!("m{i}-{direct}.img"));
                std::fs::File::create(&img)
                    .unwrap()
                    .set_len(256 * MIB)
                    .unwrap();
                let dio = format!("--direct-io={}", if direct { "on" } else { "off" });
                LoopDev {
                    dev: losetup(&["-f", "--show", &dio, img.to_str().unwrap()]),
                    file: std::fs::canonicalize(&img).unwrap(),
                }
            })
            .collect();
        let devs: Vec<&str> = members.iter().map(|m| m.dev.as_str()).collect();
        let mut mkfs = vec!["-q", "-f", "-d", "raid1", "-m", "raid1"];
        mkfs.extend(&devs);
        sh("mkfs.btrfs", &mkfs);
        let opts = devs
            .iter()
            .map(|d| format!("device={d}"))
            .collect::<Vec<_>>()
            .join(",");
        let mnt = Mount::new(devs[0], &dir.path().join("mnt"), &opts);
        let doc = run(
            dir.path(),
            mnt.0.to_str().unwrap(),
            &[
                "--rw",
                "randread",
                "--size",
                "64m",
                "--threads",
                "1",
                "--iodepth",
                "1",
            ],
        );
        let absorbed = kinds(&doc).iter().any(|k| k == "absorbed");
        match direct {
            true => assert!(!absorbed, "direct IO reached the disk: {:?}", kinds(&doc)),
            false => {
                let summary = finding(&doc, "absorbed")["summary"].as_str().unwrap();
                assert!(
                    summary.contains(&format!("never reached {}", ram.dev.name())),
                    "{summary}"
                );
                eprintln!("user sees: {summary}");
            }
        }
        drop(mnt);
        drop(members);
    }
    drop(disk);
}

/// Issue 58, item 5: `probe cache` says only what it measured. A loop device without direct IO
/// over a file on a disk of its own (a RAM-backed loop device with ext4): the page cache answers
/// every read of every working set, and the disk's counters show it, so the probe says the
/// cache holds at least the largest set, never "a cache of about 32 MiB" from a latency step.
/// The near miss: the same loop device with direct IO reaches the disk, and nothing says so.
#[test]
fn a_probe_whose_every_read_was_cached_says_at_least_the_largest_set() {
    needs_root!();
    let _cache = keeping_the_page_cache();
    let ram = RamLoop::new(384 * MIB);
    sh("mkfs.ext4", &["-q", "-F", &ram.dev.dev]);
    let dir = tempfile::tempdir().unwrap();
    let disk = Mount::new(&ram.dev.dev, &dir.path().join("disk"), "rw");
    for direct in [false, true] {
        let sub = disk.0.join(format!("d{direct}"));
        std::fs::create_dir(&sub).unwrap();
        let dev = loop_over(&sub, 128 * MIB, direct);
        let out_file = dir.path().join(format!("probe-{direct}.json"));
        let out = iogauge(
            dir.path(),
            &[
                "probe",
                "cache",
                &dev.dev,
                "--ios",
                "4000",
                "--no-store",
                "--output",
                out_file.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", stderr_of(&out));
        let doc: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
        let said: Vec<String> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "cache" && f["result"].is_null())
            .map(|f| f["summary"].as_str().unwrap().to_string())
            .collect();
        let all = said.iter().any(|s| {
            s.contains("every working set tried, up to 128 MiB") && s.contains("at least 128 MiB")
        });
        match direct {
            false => {
                assert!(all, "{said:?}");
                eprintln!("user sees: {}", said[0]);
            }
            true => assert!(!all, "{said:?}"),
        }
        drop(dev);
    }
    drop(disk);
}
