//! `iogauge sweep --layout`: arrays built from blank scratch devices, measured, and taken apart
//! with every member blank again. btrfs profiles run here, on RAM-backed loop devices; md and
//! LVM, which this machine's kernel lacks, run in a QEMU guest on Debian's own kernel
//! (tests/common/guest.rs). Ground truth: blkid's low-level probe, mdadm --examine and the
//! members' own counters.

use crate::common;
use common::*;

use std::path::Path;

const TWO_CELLS: &str = "[defaults]\ntime = \"300ms\"\n[[group]]\ntitle = \"t\"\nrw = [\"randwrite\", \"randread\"]\nbs = [\"4k\"]\niodepth = [8]\n";

/// Runs the shell script `body` in a guest with `disks` blank disks of 128 MiB, iogauge as
/// `$IOGAUGE` with the test's own results database and run directory; checks it ran to its end.
/// `None` when no guest can run here (said, and a failure under CI=true).
fn in_guest(dir: &Path, disks: u32, body: &str) -> Option<guest::GuestOutput> {
    let script = format!(
        "export IOGAUGE={} IOGAUGE_DB={} IOGAUGE_RUN_DIR=/tmp/run\n{body}\necho \"finished yes\"\n",
        guest::iogauge(),
        dir.join("g.db").display()
    );
    let out = guest::run(disks, "128M", &script)?;
    assert_eq!(out.value("finished"), Some("yes"), "{out}");
    Some(out)
}

/// btrfs raid0, raid1 and raid10 over two and four RAM loop devices, against btrfs on one of
/// them (a file system against a file system), each measured, every member blank afterwards;
/// each member's share judged (`imbalance`), and the report draws IOPS by member count.
#[test]
fn btrfs_layouts_are_built_measured_and_taken_apart() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    let dir = tempfile::tempdir().unwrap();
    let (members, list) = ram_members(4, 256 << 20);
    let out = iogauge(
        dir.path(),
        &[
            "sweep",
            "--file",
            &suite_file(dir.path(), TWO_CELLS),
            "--scratch",
            &list,
            "--layout",
            "btrfs:raid0,raid1,raid10",
            "--members",
            "2,4",
            "--size",
            "32m",
            "--repeat",
            "2",
            "--json",
        ],
    );
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let doc = json_of(&out);
    let settings = doc["groups"][0]["settings"].as_array().unwrap();
    let heads: Vec<&str> = settings
        .iter()
        .map(|s| s["head"].as_str().unwrap())
        .collect();
    assert_eq!(
        heads,
        [
            "btrfs single × 1",
            "btrfs raid0 × 2",
            "btrfs raid1 × 2",
            "btrfs raid10 × 2",
            "btrfs raid0 × 4",
            "btrfs raid1 × 4",
            "btrfs raid10 × 4"
        ],
        "{err}"
    );
    assert!(settings.iter().all(|s| s["skipped"].is_null()), "{doc:#}");
    // And one table per layout across its member counts, against the fewest.
    let scaling: Vec<(String, Vec<String>)> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|g| {
            let heads = g["settings"].as_array().unwrap().iter();
            (
                g["title"].as_str().unwrap().to_string(),
                heads
                    .map(|h| h["head"].as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        scaling
            .iter()
            .map(|(t, h)| format!("{t}: {}", h.join(", ")))
            .collect::<Vec<_>>(),
        [
            "btrfs raid0 by members (against the fewest): btrfs raid0 × 2, btrfs raid0 × 4",
            "btrfs raid1 by members (against the fewest): btrfs raid1 × 2, btrfs raid1 × 4",
            "btrfs raid10 by members (against the fewest): btrfs raid10 × 2, btrfs raid10 × 4"
        ]
    );
    for m in &members {
        assert!(blank(&m.dev.dev), "{} left with a signature", m.dev.dev);
    }
    // Each run records its layout.
    let runs = json_of(&iogauge(dir.path(), &["list", "--json"]));
    let layouts: Vec<String> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| Some(r["params"]["layout"].as_str()?.to_string()))
        .collect();
    assert_eq!(layouts.len(), 7, "{runs}");
    // btrfs raid1 keeps a block group on two devices: of four, the small test file reached
    // two, which is named (the kernel's own placement); with two devices, or striped over
    // four, the members share the work and nothing is named.
    for r in runs["runs"].as_array().unwrap() {
        let id = r["id"].to_string();
        let doc = json_of(&iogauge(dir.path(), &["show", &id, "--json"]));
        let imbalance: Vec<String> = doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|x| x["findings"].as_array().unwrap().clone())
            .filter(|f| f["kind"] == "imbalance")
            .map(|f| f["summary"].as_str().unwrap().to_string())
            .collect();
        match doc["params"]["sweep.setting"].as_str() {
            Some("btrfs raid1 × 4") => assert!(
                imbalance.len() == 1
                    && imbalance[0].contains("moved nothing")
                    && imbalance[0]
                        .contains("btrfs keeps each block group of raid1 on 2 of its 4 devices"),
                "{imbalance:?}"
            ),
            other => assert!(imbalance.is_empty(), "{other:?}: {imbalance:?}"),
        }
    }
    // The report draws each layout's IOPS against its member count.
    let id = doc["sweep"].as_str().unwrap_or_default().to_string();
    let page = dir.path().join("r.html");
    let out = iogauge(
        dir.path(),
        &[
            "report",
            &format!("sweep:{id}"),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("IOPS by members: randwrite 4K"), "{id}");
    assert!(html.contains("btrfs raid10"), "{id}");
}

/// btrfs raid5 over four RAM loop devices: 4 KiB random writes make its members read
/// (`read-modify-write`, with btrfs's full stripe of three 64 KiB stripes), seen in each
/// member's own counters; 768 KiB sequential writes (four full stripes, which copy-on-write
/// writes whole) and raid10 are not named. No warning on any of them: each member sees its share of the IO,
/// which is not IO gone missing (it read as `absorbed` while only the first member was
/// watched).
#[test]
fn read_modify_write_is_named_on_btrfs_raid5_and_not_on_raid10() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    let dir = tempfile::tempdir().unwrap();
    let (members, list) = ram_members(4, 256 << 20);
    let s = suite_file(
        dir.path(),
        "[defaults]\ntime = \"2s\"\n[[group]]\ntitle = \"small\"\nrw = [\"randwrite\"]\nbs = [\"4k\"]\niodepth = [4]\ndata = \"32m\"\n[[group]]\ntitle = \"full\"\nrw = [\"write\"]\nbs = [\"768k\"]\niodepth = [4]\n",
    );
    // The small writes are an amount, not a time: 8,192 IOs whatever the machine's pace, so
    // the device findings' minimum evidence (1,000 IOs) holds on a loaded machine too, where a
    // 2 s cell once wrote too little to be judged and the test saw no finding at all.
    let out = iogauge(
        dir.path(),
        &[
            "sweep",
            "--file",
            &s,
            "--scratch",
            &list,
            "--layout",
            "btrfs:raid5,raid10",
            "--size",
            "64m",
            "--repeat",
            "1",
        ],
    );
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    // Runs 2 and 3 are raid5 and raid10 (run 1 is btrfs on one device).
    for (run, layout, rmw) in [("2", "btrfs raid5", [1, 0]), ("3", "btrfs raid10", [0, 0])] {
        let doc = json_of(&iogauge(dir.path(), &["show", run, "--json"]));
        assert_eq!(doc["params"]["layout"], layout, "{doc:#}");
        let devices = &doc["system"]["target"]["btrfs"]["members"];
        assert_eq!(devices.as_array().map(Vec::len), Some(4), "{doc:#}");
        for (cell, want) in rmw.iter().enumerate() {
            let r = &doc["results"][cell];
            // Each member's counters were kept for the result.
            assert_eq!(r["devices"].as_array().map(Vec::len), Some(4), "{r:#}");
            let findings = r["findings"].as_array().unwrap();
            let named: Vec<&str> = findings
                .iter()
                .filter(|f| f["kind"] == "read-modify-write")
                .map(|f| f["summary"].as_str().unwrap())
                .collect();
            assert_eq!(named.len(), *want, "{layout} cell {cell}: {findings:#?}");
            if let Some(said) = named.first() {
                assert!(said.contains("(raid5) read"), "{said}");
                assert!(said.contains("full stripe of 192 KiB"), "{said}");
            }
            // What the devices saw raises no warning (how steady the rate was on a busy
            // machine is another matter, judged elsewhere).
            let warned: Vec<&serde_json::Value> = findings
                .iter()
                .filter(|f| f["severity"] == "warning")
                .filter(|f| {
                    [
                        "absorbed",
                        "split",
                        "queue",
                        "other-io",
                        "imbalance",
                        "slow-member",
                        "misaligned",
                    ]
                    .contains(&f["kind"].as_str().unwrap_or_default())
                })
                .collect();
            assert!(warned.is_empty(), "{layout} cell {cell}: {warned:#?}");
        }
    }
    for m in &members {
        assert!(blank(&m.dev.dev), "{} left with a signature", m.dev.dev);
    }
}

/// kill -9 at four pseudo-random moments of btrfs layout sweeps over three RAM loop devices
/// (building, filling, measuring, taking apart), each followed by `iogauge clean`: no mount
/// and no signature left on any member. With the md and LVM kills in the guest, twelve in all.
#[test]
fn a_killed_btrfs_layout_sweep_is_undone_by_clean() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    let dir = tempfile::tempdir().unwrap();
    let (members, list) = ram_members(3, 256 << 20);
    let s = suite_file(dir.path(), TWO_CELLS);
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut left_something = false;
    for k in 0..4 {
        let run = common::Spawned::iogauge(
            dir.path(),
            &[
                "sweep",
                "--file",
                &s,
                "--scratch",
                &list,
                "--layout",
                "btrfs:raid0,raid1",
                "--size",
                "32m",
                "--repeat",
                "1",
            ],
        );
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // The moment is the experiment's design, not a wait for anything.
        std::thread::sleep(std::time::Duration::from_millis(300 + rng % 2500));
        run.signal("KILL");
        let _ = run.finish(common::DEADLINE);
        let pending = iogauge(dir.path(), &["clean", "--dry-run"]);
        left_something |= !String::from_utf8_lossy(&pending.stdout).contains("nothing to clean");
        let out = iogauge(dir.path(), &["clean"]);
        assert!(
            out.status.success(),
            "kill {k}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            stderr_of(&out)
        );
        // Its own members only: other tests here mount scratch file systems meanwhile.
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        for m in &members {
            let source = format!(" {} ", m.dev.dev);
            assert!(
                !mounts.lines().any(|l| l.contains(&source)),
                "kill {k}: {} is still mounted",
                m.dev.dev
            );
        }
        for m in &members {
            assert!(
                blank(&m.dev.dev),
                "kill {k}: {} left with a signature",
                m.dev.dev
            );
        }
    }
    // Else this test proves nothing about clean.
    assert!(left_something, "no kill left anything for clean to undo");
}

/// What no flag allows, refused before anything is built: a member with a signature, a member
/// named twice, a layout that needs more members than given, --chunk for layouts without one,
/// --assume-clean with no md array to resync, --degraded with no redundant layout, --rebuild
/// with no md array to rebuild, --rebuild-speed that is not MIN,MAX.
#[test]
fn members_and_axes_are_checked_before_anything_is_built() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let a = RamLoop::new(64 << 20);
    let b = RamLoop::new(64 << 20);
    sh("mkfs.ext4", &["-q", &b.dev.dev]);
    let s = suite_file(dir.path(), TWO_CELLS);
    let both = format!("{},{}", a.dev.dev, b.dev.dev);
    let twice = format!("{},{}", a.dev.dev, a.dev.dev);
    for (args, says) in [
        (
            vec!["--scratch", &both, "--layout", "md:raid1"],
            "must carry no signature",
        ),
        (vec!["--scratch", &twice, "--layout", "md:raid1"], "names"),
        (
            vec!["--scratch", &both, "--layout", "md:raid5"],
            "needs at least 3 members",
        ),
        (
            vec![
                "--scratch",
                &both,
                "--layout",
                "btrfs:raid1",
                "--chunk",
                "64k",
            ],
            "--chunk sets",
        ),
        (
            vec![
                "--scratch",
                &both,
                "--layout",
                "btrfs:raid1",
                "--assume-clean",
            ],
            "--assume-clean skips",
        ),
        (
            vec!["--scratch", &both, "--layout", "btrfs:raid0", "--degraded"],
            "--degraded measures arrays with a member missing",
        ),
        (
            vec!["--scratch", &both, "--layout", "btrfs:raid1", "--rebuild"],
            "--rebuild measures md arrays",
        ),
        (
            vec![
                "--scratch",
                &both,
                "--layout",
                "md:raid1",
                "--rebuild",
                "--rebuild-speed",
                "50m,10m",
            ],
            "MIN is above MAX",
        ),
        (
            vec![
                "--scratch",
                &both,
                "--layout",
                "md:raid1",
                "--rebuild",
                "--rebuild-speed",
                "10m",
            ],
            "it takes two sizes",
        ),
    ] {
        let mut all = vec!["sweep", "--file", &s];
        all.extend(args);
        let out = iogauge(dir.path(), &all);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{says}: {err}");
    }
    assert!(blank(&a.dev.dev));
    assert!(sh("blkid", &["-p", "-o", "value", "-s", "TYPE", &b.dev.dev]).contains("ext4"));
}

/// A layout is refused before anything is measured or made when the kernel cannot build it:
/// this machine's kernel has no md, so an md sweep stops at once, with nothing measured and no
/// /dev/md1xx node left, while a btrfs layout (which the kernel has) is planned. On a kernel
/// that has md the same md plan is made instead; both sides are checked against
/// what the kernel itself shows (/sys/module, /proc/mdstat).
#[test]
fn a_layout_the_kernel_cannot_build_is_refused_before_anything_runs() {
    needs_root!();
    let dir = tempfile::tempdir().unwrap();
    let (_members, list) = ram_members(3, 64 << 20);
    let md_nodes = || {
        (100..200)
            .filter(|n| Path::new(&format!("/dev/md{n}")).exists())
            .count()
    };
    let before = md_nodes();
    let s = suite_file(dir.path(), TWO_CELLS);
    for dry in [true, false] {
        let mut args = vec![
            "sweep",
            "--file",
            &s,
            "--scratch",
            &list,
            "--layout",
            "md:raid0,raid5",
            "--fs",
            "ext4",
        ];
        if dry {
            args.push("--dry-run");
        }
        let out = iogauge(dir.path(), &args);
        let err = stderr_of(&out);
        let kernel_has_md = kernel_has_md();
        if kernel_has_md && dry {
            assert!(out.status.success(), "{err}");
            continue;
        }
        if kernel_has_md {
            continue;
        }
        assert_refused(&out, &["--layout md raid0", "has no md RAID", "md_mod"]);
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("setting 1/"),
            "nothing measured"
        );
        assert_eq!(md_nodes(), before, "no md node made");
    }
    // Near miss: btrfs, which this kernel has, is planned.
    if iogauge_has_btrfs() {
        let out = iogauge(
            dir.path(),
            &[
                "sweep",
                "--file",
                &s,
                "--scratch",
                &list,
                "--layout",
                "btrfs:raid0",
                "--dry-run",
            ],
        );
        assert!(out.status.success(), "{}", stderr_of(&out));
    }
}

/// md loaded or built in, or its module installed for the running kernel (as modprobe would
/// find it).
fn kernel_has_md() -> bool {
    let release = sh("uname", &["-r"]);
    let listed = |f: &str| {
        std::fs::read_to_string(format!("/lib/modules/{release}/{f}"))
            .is_ok_and(|t| t.contains("/md-mod.ko") || t.contains("/md_mod.ko"))
    };
    Path::new("/sys/module/md_mod").exists()
        || Path::new("/proc/mdstat").exists()
        || listed("modules.dep")
        || listed("modules.builtin")
}

fn iogauge_has_btrfs() -> bool {
    std::fs::read_to_string("/proc/filesystems").is_ok_and(|f| f.contains("btrfs"))
        && have("mkfs.btrfs")
}

/// md RAID0, RAID5 and RAID10 and an LVM stripe over four guest disks with chunks of 64 and
/// 512 KiB, on the raw arrays: every layout measured, the md superblocks and PVs gone and every
/// member blank afterwards. The same with ext4 on each array, aligned to its stripe, is README's
/// own sweep, checked where README's commands run in a guest
/// (readme::readme_array_examples_run_in_the_guest): a guest's time is the tests' dearest.
#[test]
fn md_and_lvm_layouts_in_the_guest_leave_every_member_blank() {
    let dir = tempfile::tempdir().unwrap();
    let s = suite_file(dir.path(), TWO_CELLS);
    let script = format!(
        r#"
$IOGAUGE sweep --file {s} --scratch /dev/vda,/dev/vdb,/dev/vdc,/dev/vdd --layout md:raid0,raid5,raid10 \
  --layout lvm:stripe --chunk 64k,512k --assume-clean --size 16m --repeat 1 --json > /tmp/out.json 2>/tmp/err.txt
echo "status_raw $?"
echo "ran_raw $(grep -c '"run_id": "' /tmp/out.json)"
tail -3 /tmp/err.txt >&2
for d in vda vdb vdc vdd; do
  blkid -p /dev/$d >/dev/null 2>&1 && echo "signature_left $d"
  mdadm --examine /dev/$d >/dev/null 2>&1 && echo "md_superblock_left $d"
done
echo "arrays_left $(ls /sys/block | grep -c '^md')"
"#,
    );
    let Some(out) = in_guest(dir.path(), 4, &script) else {
        return;
    };
    assert_eq!(out.value("status_raw"), Some("0"), "{out}");
    // single, then raid0, raid5, raid10 and lvm at each chunk: each ran.
    assert_eq!(out.number("ran_raw"), 9, "{out}");
    assert!(!out.stdout.contains("signature_left"), "{out}");
    assert!(!out.stdout.contains("md_superblock_left"), "{out}");
    assert_eq!(out.number("arrays_left"), 0, "{out}");
}

/// 4 KiB random writes on md RAID5 make its members read (`read-modify-write`, named with the
/// full stripe); 128 KiB writes on a 3-disk RAID5 with a 64 KiB chunk are full stripes and read
/// (almost) nothing, and RAID10 has no parity in any of its layouts (near, far, offset): none
/// of them is named. The far and offset layouts are built as md reports them back.
#[test]
fn read_modify_write_is_named_on_raid5_and_not_on_full_stripes_or_raid10_in_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let s = suite_file(
        dir.path(),
        "[[group]]\ntitle = \"small\"\nrw = [\"randwrite\"]\nbs = [\"4k\"]\niodepth = [4]\ndata = \"16m\"\n[[group]]\ntitle = \"full\"\nrw = [\"write\"]\nbs = [\"128k\"]\niodepth = [4]\ndata = \"128m\"\n",
    );
    // Amounts, not times: 4,096 small writes and 1,024 full stripes whatever the emulated
    // CPU's pace, each past the device findings' minimum evidence (1,000 IOs), so the finding
    // and its absence are both judged; 3 s cells took a minute of the guest's CPU.
    // Runs 2 and 3 are RAID5 and RAID10 (run 1 is the single-device baseline); each cell's
    // findings are counted by kind, per cell.
    let script = format!(
        r#"
$IOGAUGE sweep --file {s} --scratch /dev/vda,/dev/vdb,/dev/vdc --layout md:raid5,raid10,raid10-far,raid10-offset \
  --chunk 64k --assume-clean --size 32m --repeat 1 > /tmp/out.txt 2>/tmp/err.txt
echo "status $?"
tail -3 /tmp/err.txt >&2
grep -q 'mdadm --create /dev/md[0-9]* .*--level=raid10 .*--layout=f2' /tmp/err.txt && echo "built_far yes"
grep -q 'mdadm --create /dev/md[0-9]* .*--level=raid10 .*--layout=o2' /tmp/err.txt && echo "built_offset yes"
for run in 2 3 4 5; do
  $IOGAUGE show $run --json > /tmp/run.json
  for cell in 0 1; do
    n=$(python3 -c "import json,sys; d=json.load(open('/tmp/run.json')); print(sum(f['kind']=='read-modify-write' for f in d['results'][$cell]['findings']))")
    echo "rmw_${{run}}_$cell $n"
  done
  python3 -c "import json; d=json.load(open('/tmp/run.json')); print('level_$run', d['params']['layout'].replace(' ', '_'))"
done
python3 -c "import json; d=json.load(open('/tmp/run.json')); [print('said', f['summary']) for r in d['results'] for f in r['findings']]" >&2
$IOGAUGE show 2 --json | python3 -c "import json,sys; d=json.load(sys.stdin); [print('said', f['summary']) for r in d['results'] for f in r['findings'] if f['kind']=='read-modify-write']"
"#,
    );
    let Some(out) = in_guest(dir.path(), 3, &script) else {
        return;
    };
    assert_eq!(out.value("status"), Some("0"), "{out}");
    assert_eq!(out.value("level_2"), Some("md_raid5"), "{out}");
    assert_eq!(out.value("level_3"), Some("md_raid10"), "{out}");
    assert_eq!(out.value("level_4"), Some("md_raid10-far"), "{out}");
    assert_eq!(out.value("level_5"), Some("md_raid10-offset"), "{out}");
    assert_eq!(out.value("built_far"), Some("yes"), "{out}");
    assert_eq!(out.value("built_offset"), Some("yes"), "{out}");
    // RAID5: the small writes are named, the full stripes are not; RAID10 never.
    assert_eq!(out.number("rmw_2_0"), 1, "{out}");
    assert_eq!(out.number("rmw_2_1"), 0, "{out}");
    for run in 3..=5 {
        for cell in 0..=1 {
            assert_eq!(out.number(&format!("rmw_{run}_{cell}")), 0, "{out}");
        }
    }
    assert!(out.stdout.contains("full stripe of 128 KiB"), "{out}");
}

/// kill -9 at several moments of md and LVM layout sweeps (building, making the file system,
/// measuring), then `iogauge clean`: no array, volume group, device-mapper device, mount,
/// superblock or signature is left on any member.
#[test]
fn a_killed_layout_sweep_is_undone_by_clean_in_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let s = suite_file(dir.path(), TWO_CELLS);
    let script = format!(
        r#"
n=0
for layout in "md:raid5 --assume-clean --fs ext4" "lvm:stripe" "md:raid10 --assume-clean" "lvm:stripe --fs ext4"; do
  for at in 3 8; do
    n=$((n + 1))
    timeout -s KILL $at $IOGAUGE sweep --file {s} --scratch /dev/vda,/dev/vdb,/dev/vdc --layout $layout \
      --chunk 64k --size 16m --repeat 1 >/dev/null 2>&1
    left=$(ls /sys/block | grep -c '^md'; dmsetup ls 2>/dev/null | grep -vc 'No devices')
    echo "killed_$n $(echo $left | tr ' ' +)"
    $IOGAUGE clean > /tmp/clean.txt 2>&1 || echo "clean_failed_$n $(tail -1 /tmp/clean.txt)"
    for d in vda vdb vdc; do
      blkid -p /dev/$d >/dev/null 2>&1 && echo "signature_left_$n $d"
    done
    [ -z "$(ls /sys/block | grep '^md')" ] || echo "array_left_$n"
    dmsetup ls 2>/dev/null | grep -v 'No devices' | grep -q . && echo "dm_left_$n"
    grep -q 'iogauge-scratch' /proc/mounts && echo "mount_left_$n"
  done
done
echo "kills $n"
"#,
    );
    let Some(out) = in_guest(dir.path(), 3, &script) else {
        return;
    };
    assert_eq!(out.number("kills"), 8, "{out}");
    for bad in [
        "clean_failed",
        "signature_left",
        "array_left",
        "dm_left",
        "mount_left",
    ] {
        assert!(!out.stdout.contains(bad), "{bad}:\n{out}");
    }
}

/// `misaligned`, judged from sysfs and the superblock and said before the run: a
/// device-mapper volume 2049 sectors into an md RAID0 with a 64 KiB chunk (the kernel's
/// alignment_offset, LVM's header case), and ext4 made with a stride for another array. The
/// near misses: a volume 2048 sectors (1 MiB) in, and ext4 as mkfs makes it on the array (its
/// stride and stripe width from the array's own sizes). And what it costs, from the members'
/// counters (`split`): 64 KiB reads on the misaligned volume reach two members each. The runs
/// move a fixed amount of data (5,120 reads), not a time: a device finding rests on 1,000 reads
/// or more and half a second or more, a guest under TCG on a busy machine did 434 reads in a
/// second, and one on a quiet fresh machine moved 1,280 in 0.45 s (and was not judged).
#[test]
fn misalignment_is_named_before_the_run_in_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
export DM_DISABLE_UDEV=1
mdadm --create /dev/md0 --level=0 --raid-devices=2 --chunk=64 --run --quiet /dev/vda /dev/vdb
echo "0 65536 linear /dev/md0 2049" | dmsetup create --noudevsync off
echo "0 65536 linear /dev/md0 2048" | dmsetup create --noudevsync on
for v in off on; do
  $IOGAUGE run /dev/mapper/$v --rw randread --bs 64k --data 320m --no-store > /tmp/$v.txt 2>&1
  echo "status_$v $?"
  echo "named_$v $(grep -c 'warning misaligned' /tmp/$v.txt)"
  echo "split_$v $(grep -cE '^ *warning +split +md0 cut each 64 KiB read into 2.0 member requests of 32 KiB' /tmp/$v.txt)"
  # What the run said of its devices, for a failure to show.
  grep -E 'split|device +(md0|vd)|transfer' /tmp/$v.txt | sed "s/^ */seen_$v /" >&2
  grep -A1 'before the run' /tmp/$v.txt | tail -1 | sed "s/^ */said_$v /"
done
# Reads larger than the chunk: cut by the layout itself, an info.
$IOGAUGE run /dev/md0 --rw randread --bs 256k --data 640m --no-store > /tmp/big.txt 2>&1
echo "status_big $?"
# md's member requests of one read may merge below it (two chunks of a member lie side by
# side), so how many it counts varies; that the layout explains the cut, as an info, does not.
echo "split_big $(grep -cE '^ *info +split +md0 cut each 256 KiB read into [0-9.]+ member requests of [0-9.]+ KiB on average: its chunk of 64 KiB' /tmp/big.txt)"
grep -E 'split|device +(md0|vd)' /tmp/big.txt | sed "s/^ */seen_big /" >&2
$IOGAUGE run /dev/md0 --rw randread --bs 64k --data 320m --no-store > /tmp/fits.txt 2>&1
echo "split_fits $(grep -c 'split' /tmp/fits.txt)"
dmsetup remove --noudevsync off
dmsetup remove --noudevsync on
mkdir -p /tmp/mnt
for v in other own; do
  case $v in
    other) mkfs.ext4 -q -F -b 4096 -E stride=3,stripe_width=7 /dev/md0 ;;
    own) mkfs.ext4 -q -F /dev/md0 ;;
  esac
  mount -t ext4 /dev/md0 /tmp/mnt
  $IOGAUGE run /tmp/mnt/t --rw randwrite --bs 4k --size 8m --time 1s --no-store > /tmp/$v.txt 2>&1
  echo "status_$v $?"
  echo "named_$v $(grep -c 'warning misaligned' /tmp/$v.txt)"
  grep 'try: Set the file system' /tmp/$v.txt | head -1 | sed "s/^ */fix_$v /"
  umount /tmp/mnt
done
mdadm --stop /dev/md0 >/dev/null 2>&1
mdadm --zero-superblock /dev/vda /dev/vdb
"#;
    let Some(out) = in_guest(dir.path(), 2, script) else {
        return;
    };
    for v in ["off", "on", "other", "own"] {
        assert_eq!(out.value(&format!("status_{v}")), Some("0"), "{v}: {out}");
    }
    // Before the run and among the findings after it.
    assert_eq!(out.number("named_off"), 2, "{out}");
    assert!(
        out.value("said_off")
            .is_some_and(|s| s.contains("misaligned dm-0 does not start on a 64 KiB boundary")),
        "{out}"
    );
    assert_eq!(out.number("named_on"), 0, "{out}");
    assert_eq!(out.number("named_other"), 2, "{out}");
    assert!(
        out.value("fix_other")
            .is_some_and(|s| s.contains("tune2fs -E stride=16,stripe_width=32 /dev/md0")),
        "{out}"
    );
    assert_eq!(out.number("named_own"), 0, "{out}");
    // Reads of a chunk placed off the chunk reach two members each; placed on it, one; reads
    // of four chunks, four, which the layout explains.
    assert_eq!(out.number("split_off"), 1, "{out}");
    assert_eq!(out.number("split_on"), 0, "{out}");
    assert_eq!(out.value("status_big"), Some("0"), "{out}");
    assert_eq!(out.number("split_big"), 1, "{out}");
    assert_eq!(out.number("split_fits"), 0, "{out}");
}

/// One member of an md RAID0 behind a device-mapper delay (20 ms a request) among undelayed
/// ones: `slow-member` names it, with its latency against the others'; the same array with no
/// delay names nothing.
#[test]
fn a_slow_member_is_named_from_its_own_counters_in_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let s = suite_file(
        dir.path(),
        "[[group]]\ntitle = \"r\"\nrw = [\"randread\"]\nbs = [\"4k\"]\niodepth = [8]\ndata = \"8m\"\n",
    );
    // An amount, not a time: 2,048 reads whatever the emulated CPU's pace, past the members'
    // minimum evidence (1,000 IOs issued). 3 s cells read 384 when the guest ran last in line
    // for the CPUs (128 IOPS), and the slow member went unjudged.
    let script = format!(
        r#"
export DM_DISABLE_UDEV=1
for delay in 20 0; do
  for i in 0 1 2; do
    d=0; [ $i = 1 ] && d=$delay
    dev=/dev/vd$(echo abc | cut -c$((i + 1)))
    echo "0 $(blockdev --getsz $dev) delay $dev 0 $d" | dmsetup create --noudevsync m$i
  done
  for b in /sys/block/dm-*; do [ "$(cat $b/dm/name)" = m1 ] && echo "slow_dev_$delay $(basename $b)"; done
  $IOGAUGE sweep --file {s} --scratch /dev/mapper/m0,/dev/mapper/m1,/dev/mapper/m2 --layout md:raid0 \
    --chunk 64k --size 16m --repeat 1 > /tmp/out.txt 2>/tmp/err.txt
  echo "status_$delay $?"
  tail -2 /tmp/err.txt >&2
  id=$($IOGAUGE list --json | python3 -c "import json,sys; print(json.load(sys.stdin)['runs'][0]['id'])")
  $IOGAUGE show $id --json > /tmp/run.json
  python3 -c "import json; d=json.load(open('/tmp/run.json')); fs=[f for r in d['results'] for f in r['findings'] if f['kind']=='slow-member']; print('slow_$delay', len(fs)); [print('said_$delay', f['summary']) for f in fs]"
  for i in 0 1 2; do dmsetup remove --noudevsync m$i; done
done
"#,
    );
    let Some(out) = in_guest(dir.path(), 3, &script) else {
        return;
    };
    assert_eq!(out.value("status_20"), Some("0"), "{out}");
    assert_eq!(out.value("status_0"), Some("0"), "{out}");
    assert_eq!(out.number("slow_20"), 1, "{out}");
    let slow = out.value("slow_dev_20").unwrap_or("?").to_string();
    assert!(
        out.value("said_20")
            .is_some_and(|s| s.contains(&format!("{slow} of md100 took"))),
        "{out}"
    );
    assert_eq!(out.number("slow_0"), 0, "{out}");
}

/// `--degraded`: each redundant md layout measured again with its last member failed and
/// removed, beside the healthy one, and the member named; every member blank afterwards.
#[test]
fn a_degraded_array_is_measured_beside_the_healthy_one_in_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let s = suite_file(dir.path(), TWO_CELLS);
    let script = format!(
        r#"
$IOGAUGE sweep --file {s} --scratch /dev/vda,/dev/vdb,/dev/vdc --layout md:raid0,raid5 --degraded \
  --chunk 64k --assume-clean --size 16m --repeat 1 --json > /tmp/out.json 2>/tmp/err.txt
echo "status $?"
tail -2 /tmp/err.txt >&2
python3 -c "import json; d=json.load(open('/tmp/out.json')); [print('head', s['head'].replace(' ', '_'), 'ran' if s['run_id'] else 'skipped') for s in d['groups'][0]['settings']]"
grep -q 'degraded: /dev/vdc failed and removed from /dev/md' /tmp/err.txt && echo "named yes"
for d in vda vdb vdc; do blkid -p /dev/$d >/dev/null 2>&1 && echo "signature_left $d"; done
for run in 2 3; do
  $IOGAUGE show $run --json | python3 -c "import json,sys; r=json.load(sys.stdin)['results'][0]; print('threads$run', ','.join(k['name'] + '=' + str(k['cpu']) for k in r.get('kernel_threads', [])) or 'none')"
done
$IOGAUGE show 3 | grep -q '^  md thread   md100_raid5 on a CPU' && echo "thread_shown yes"
"#,
    );
    let Some(out) = in_guest(dir.path(), 3, &script) else {
        return;
    };
    // md's raid5 thread computed the randwrite cell's parity, and its CPU was measured; raid0
    // has no thread of its own (its IO is split in the submitter's context).
    assert_eq!(out.value("threads2"), Some("none"), "{out}");
    let raid5 = out.value("threads3").unwrap_or_default();
    let cpu: f64 = raid5
        .strip_prefix("md100_raid5=")
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no md100_raid5 thread in {raid5}:\n{out}"));
    assert!(cpu > 0.0 && cpu <= 1.0, "{out}");
    assert_eq!(out.value("thread_shown"), Some("yes"), "{out}");
    assert_eq!(out.value("status"), Some("0"), "{out}");
    let heads: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("head "))
        .collect();
    // raid0 has no redundancy: no degraded twin.
    assert_eq!(
        heads,
        [
            "single ran",
            "md_raid0_×_3_·_chunk_64K ran",
            "md_raid5_×_3_·_chunk_64K ran",
            "md_raid5_×_3_·_chunk_64K_·_degraded ran"
        ],
        "{out}"
    );
    assert_eq!(out.value("named"), Some("yes"), "{out}");
    assert!(!out.stdout.contains("signature_left"), "{out}");
}

/// Bytes written to a block device since boot, by the kernel's own counter.
fn written(dev: &str) -> u64 {
    let name = std::fs::canonicalize(dev).unwrap();
    let stat = std::fs::read_to_string(format!(
        "/sys/block/{}/stat",
        name.file_name().unwrap().to_string_lossy()
    ))
    .unwrap();
    let sectors: u64 = stat.split_whitespace().nth(6).unwrap().parse().unwrap();
    sectors * 512
}

/// `--degraded` on btrfs raid1: the last member forgotten and the file system mounted degraded
/// without it, beside the whole one. Ground truth from the kernel's counters: the single
/// baseline and the degraded run write only the first member, the whole raid1 both alike, so
/// the first member ends two fills ahead of the second; had the degraded run mirrored, it would
/// be one ahead. Reads only, so that copy-on-write adds little to either.
#[test]
fn a_degraded_btrfs_runs_without_its_member() {
    needs_root!();
    needs_tool!("mkfs.btrfs");
    let dir = tempfile::tempdir().unwrap();
    let members: Vec<RamLoop> = (0..2).map(|_| RamLoop::new(256 << 20)).collect();
    let (a, b) = (&members[0].dev.dev, &members[1].dev.dev);
    let before = (written(a), written(b));
    let s = suite_file(
        dir.path(),
        "[defaults]\ntime = \"300ms\"\n[[group]]\ntitle = \"t\"\nrw = [\"randread\"]\nbs = [\"4k\"]\niodepth = [8]\n",
    );
    let out = iogauge(
        dir.path(),
        &[
            "sweep",
            "--file",
            &s,
            "--scratch",
            &format!("{a},{b}"),
            "--layout",
            "btrfs:raid1",
            "--degraded",
            "--size",
            "32m",
            "--repeat",
            "1",
            "--json",
        ],
    );
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    let doc = json_of(&out);
    let heads: Vec<&str> = doc["groups"][0]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["head"].as_str().unwrap())
        .collect();
    assert_eq!(
        heads,
        [
            "btrfs single × 1",
            "btrfs raid1 × 2",
            "btrfs raid1 × 2 · degraded"
        ],
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "degraded: {b} left out of the btrfs file system (btrfs device scan --forget, mounted -o degraded)"
        )),
        "{err}"
    );
    // The degraded run watched one member, the whole one two.
    let short = |d: &str| {
        std::fs::canonicalize(d)
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    for (run, mut want) in [("2", vec![short(a), short(b)]), ("3", vec![short(a)])] {
        let doc = json_of(&iogauge(dir.path(), &["show", run, "--json"]));
        let mut members: Vec<String> = doc["system"]["target"]["btrfs"]["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        // The kernel lists the members by its own order (loop11 before loop7), not the sweep's.
        members.sort();
        want.sort();
        assert_eq!(members, want, "run {run}: {doc:#}");
    }
    let (da, db) = (written(a) - before.0, written(b) - before.1);
    let fill = 32u64 << 20;
    assert!(
        da >= db + fill * 3 / 2,
        "the first member wrote {} MiB and the second {} MiB: the degraded run wrote to both",
        da >> 20,
        db >> 20
    );
    for m in &members {
        assert!(blank(&m.dev.dev), "{} left with a signature", m.dev.dev);
    }
}

/// `--rebuild`: an md RAID1's second member failed, removed and added back as the first cell
/// starts, the suite measured while md recovers it at the limits --rebuild-speed set, the
/// rebuild followed to its end and timed. Ground truth: md's own state (recovering, then whole)
/// and the member's write counter, which grows by the whole member as md copies onto it.
#[test]
fn a_rebuilding_array_is_measured_and_timed_in_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let s = suite_file(dir.path(), TWO_CELLS);
    let script = format!(
        r#"
before=$(awk '{{print $7}}' /sys/block/vdb/stat)
$IOGAUGE sweep --file {s} --scratch /dev/vda,/dev/vdb --layout md:raid1 --rebuild --rebuild-speed 20m,40m \
  --assume-clean --size 16m --repeat 1 > /tmp/out.txt 2>/tmp/err.txt
echo "status $?"
after=$(awk '{{print $7}}' /sys/block/vdb/stat)
echo "member_written_mib $(( (after - before) * 512 / 1048576 ))"
tail -12 /tmp/err.txt >&2
grep -q 'rebuilding, randwrite 4K · QD 8: p99 ' /tmp/out.txt && echo "cost yes"
$IOGAUGE show 3 --json > /tmp/run.json
python3 - <<'PY'
import json
d = json.load(open('/tmp/run.json'))
rb = d['rebuild']
print('limits', rb['speed_min_kib'], rb['speed_max_kib'], rb['speed_set'])
print('finished', 'yes' if rb['finished_s'] else 'no')
print('recovering', sum(1 for s in rb['samples'] if s['action'] == 'recover' and (s['speed_kib'] or 0) > 0))
print('whole_at_end', rb['samples'][-1]['degraded'] == 0)
print('windows', len(rb['cells']), len(d['results']))
print('kinds', ','.join(sorted({{f['kind'] for f in d['findings']}})))
PY
$IOGAUGE show 3 | grep -q 'rebuild of /dev/vdb into md100, second by second' && echo "timeline yes"
for d in vda vdb; do blkid -p /dev/$d >/dev/null 2>&1 && echo "signature_left $d"; done
grep -q md100 /proc/mdstat && echo "array_left yes"
"#,
    );
    let Some(out) = in_guest(dir.path(), 2, &script) else {
        return;
    };
    assert_eq!(out.value("status"), Some("0"), "{out}");
    assert_eq!(out.value("limits"), Some("20480 40960 True"), "{out}");
    assert_eq!(out.value("finished"), Some("yes"), "{out}");
    assert!(out.number("recovering") >= 1, "{out}");
    assert_eq!(out.value("whole_at_end"), Some("True"), "{out}");
    assert_eq!(out.value("windows"), Some("2 2"), "{out}");
    // md copied the whole member (127 MiB of a 128 MiB disk) onto it.
    assert!(out.number("member_written_mib") >= 120, "{out}");
    let kinds = out.value("kinds").unwrap_or_default();
    assert!(kinds.split(',').any(|k| k == "rebuild"), "{out}");
    // The rebuild's reads of the other member are the rebuild's, not the kernel's on iogauge's
    // behalf.
    assert!(!kinds.split(',').any(|k| k == "amplification"), "{out}");
    assert_eq!(out.value("cost"), Some("yes"), "{out}");
    assert_eq!(out.value("timeline"), Some("yes"), "{out}");
    assert!(!out.stdout.contains("signature_left"), "{out}");
    assert!(!out.stdout.contains("array_left"), "{out}");
}

/// kill -9 while an md array rebuilds under a `--rebuild` sweep (held slow by --rebuild-speed so
/// the kill lands mid-rebuild, which md's own `sync_action` confirms), then `iogauge clean`: no
/// array and no superblock or signature on any member, the re-added one included.
#[test]
fn a_sweep_killed_mid_rebuild_is_undone_by_clean_in_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let s = suite_file(
        dir.path(),
        "[defaults]\ntime = \"2s\"\n[[group]]\ntitle = \"t\"\nrw = [\"randread\"]\nbs = [\"4k\"]\niodepth = [8]\n",
    );
    // At 2 MiB/s the 127 MiB member takes a minute: the kill lands in the cell or while the
    // sweep follows the rebuild to its end.
    let script = format!(
        r#"
$IOGAUGE sweep --file {s} --scratch /dev/vda,/dev/vdb --layout md:raid1 --rebuild --rebuild-speed 1m,2m \
  --assume-clean --size 16m --repeat 1 >/dev/null 2>&1 &
pid=$!
# Until md says it recovers (the third setting, the first cell started), or the sweep ended.
# What md said last is what the kill follows: a second read after the loop once found md idle
# on a busy machine, a different moment from the one the kill came at.
action=none
while kill -0 $pid 2>/dev/null && [ "$action" != recover ]; do
  sleep 0.2
  action=$(cat /sys/block/md100/md/sync_action 2>/dev/null || echo none)
done
kill -9 $pid
echo "action_at_kill $action"
wait $pid
$IOGAUGE clean > /tmp/clean.txt 2>&1 || echo "clean_failed $(tail -1 /tmp/clean.txt)"
head -5 /tmp/clean.txt >&2
for d in vda vdb; do blkid -p /dev/$d >/dev/null 2>&1 && echo "signature_left $d"; done
[ -z "$(ls /sys/block | grep '^md')" ] || echo "array_left yes"
"#,
    );
    let Some(out) = in_guest(dir.path(), 2, &script) else {
        return;
    };
    assert_eq!(out.value("action_at_kill"), Some("recover"), "{out}");
    for bad in ["clean_failed", "signature_left", "array_left"] {
        assert!(!out.stdout.contains(bad), "{bad}:\n{out}");
    }
}
