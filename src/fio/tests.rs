//! The job-file reader against fio's documented meanings.

use super::*;
use crate::workload::blocks::BsWeight;

mod content;
mod errors;
mod place;
mod refusals;
mod spr;
mod verify;
mod zbd;

fn no_env(_: &str) -> Option<String> {
    None
}

fn jobs(text: &str) -> Vec<Job> {
    parse(text, "t.fio", &no_env).unwrap_or_else(|e| panic!("{e}"))
}

fn refusal(text: &str) -> String {
    parse(text, "t.fio", &no_env).unwrap_err()
}

#[test]
fn global_is_inherited_and_jobs_override_it() {
    let j = jobs(
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\nruntime=1m\ntime_based\nsize=1g\n\
         [seq-read]\nrw=read\nbs=1m\niodepth=8\n[rand-write]\nreadwrite=randwrite\nnumjobs=4\n",
    );
    assert_eq!(j.len(), 2);
    assert_eq!(
        (j[0].name.as_str(), j[0].rw, j[0].bs, j[0].iodepth),
        ("seq-read", Rw::Read, 1 << 20, 8)
    );
    assert_eq!((j[1].rw, j[1].bs, j[1].numjobs), (Rw::Randwrite, 4096, 4));
    for job in &j {
        assert!(job.direct && job.time_based);
        assert_eq!(job.engine, Engine::Libaio);
        assert_eq!(job.runtime, Some(Duration::from_secs(60)));
        assert_eq!(job.size, Some(1 << 30));
    }
    assert_eq!(j[0].at("bs").line, 10, "the job's own bs, not global's");
    assert_eq!(j[1].at("bs").line, 4, "global's bs");
}

#[test]
fn fio_defaults_are_buffered_psync_read_4k() {
    let j = &jobs("[a]\n")[0];
    assert_eq!((j.rw, j.bs, j.iodepth, j.numjobs), (Rw::Read, 4096, 1, 1));
    assert!(!j.direct, "fio's default is buffered");
    assert_eq!(j.engine, Engine::Sync);
    assert_eq!(j.seed, Some(1), "randrepeat=1 is fio's default");
}

#[test]
fn units_follow_fio_kb_base() {
    assert_eq!(size("4k", 1024), Ok(4096));
    assert_eq!(size("4K", 1024), Ok(4096));
    assert_eq!(size("4KB", 1024), Ok(4096));
    // fio's compatibility mode: the IEC spelling is the decimal one.
    assert_eq!(size("4KiB", 1024), Ok(4000));
    assert_eq!(size("1g", 1024), Ok(1 << 30));
    assert_eq!(size("512", 1024), Ok(512));
    assert_eq!(size("4k", 1000), Ok(4000));
    assert_eq!(size("4KiB", 1000), Ok(4096));
    assert!(size("4x", 1024).is_err());
    let j = &jobs("[a]\nkb_base=1000\nbs=8k\n")[0];
    assert_eq!(j.bs, 8000);
    assert_eq!(time("60"), Ok(Duration::from_secs(60)));
    assert_eq!(time("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(time("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(time("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(time("250us"), Ok(Duration::from_micros(250)));
    assert!(time("10 fortnights").is_err());
}

#[test]
fn mixes_engines_syncs_and_distributions() {
    let j = &jobs("[a]\nrw=randrw\nrwmixread=70\n")[0];
    assert_eq!((j.rw, j.read_pct), (Rw::Randrw, 70));
    let j = &jobs("[a]\nrw=rw\nrwmixwrite=30\n")[0];
    assert_eq!(j.read_pct, 70);
    assert_eq!(
        jobs("[a]\nrw=randrw\n")[0].read_pct,
        50,
        "fio's default mix"
    );
    for (e, want) in [
        ("io_uring", Engine::IoUring),
        ("libaio", Engine::Libaio),
        ("psync", Engine::Sync),
        ("sync", Engine::Sync),
        ("pvsync", Engine::Sync),
        ("null", Engine::Null),
    ] {
        assert_eq!(jobs(&format!("[a]\nioengine={e}\n"))[0].engine, want);
    }
    assert!(jobs("[a]\nrw=write\nsync=dsync\n")[0].odsync);
    assert!(!jobs("[a]\nrw=write\nsync=none\n")[0].odsync);
    assert!(refusal("[a]\nrw=write\nsync=1\n").contains("O_SYNC is not mapped"));
    let j = &jobs("[a]\nrw=write\nfdatasync=8\n")[0];
    assert_eq!(j.sync, Some((SyncKind::Fdatasync, 8)));
    let j = &jobs("[a]\nrw=randread\nrandom_distribution=zipf:1.2\n")[0];
    assert_eq!(j.distribution, Distribution::Zipf(1.2));
    let j = &jobs("[a]\nrw=randread\nrandom_distribution=pareto:0.9\n")[0];
    assert_eq!(j.distribution, Distribution::Pareto(0.9));
    let j = &jobs("[a]\nrw=randread\nrandom_distribution=normal:5\n")[0];
    assert_eq!(j.distribution, Distribution::Normal(0.05));
    let j = &jobs("[a]\nrate_iops=500\nrandrepeat=0\nbuffered=0\nstonewall\n")[0];
    assert_eq!(j.rate_iops, Some(500.0));
    assert_eq!(j.seed, None);
    assert!(j.direct && j.stonewall);
    assert_eq!(jobs("[a]\nrandseed=42\n")[0].seed, Some(42));
    let j = &jobs("[a]\niodepth=64\niodepth_batch_submit=64\niodepth_batch_complete_max=64\n")[0];
    assert_eq!(j.submit_batch, Some(64));
    let j = &jobs("[a]\niodepth=32\niodepth_batch_complete=8\n")[0];
    assert_eq!(j.complete_batch, Some(8));
    assert!(refusal("[a]\niodepth_batch_complete_min=0\n").contains("at least one"));
    assert!(refusal("[a]\niodepth=64\niodepth_batch_complete_max=8\n").contains("below iodepth"));
}

#[test]
fn filename_and_directory_make_the_target() {
    let j = &jobs("[a]\ndirectory=/mnt/x\nfilename=t.dat\n")[0];
    assert_eq!(j.path, Some(PathBuf::from("/mnt/x/t.dat")));
    let j = &jobs("[a]\nfilename=/dev/nvme0n1\nname=real\n")[0];
    assert_eq!(j.path, Some(PathBuf::from("/dev/nvme0n1")));
    assert_eq!(j.name, "real", "name= renames the job");
}

#[test]
fn the_command_line_form_is_global_then_one_job_per_name() {
    let args: Vec<String> = [
        "--ioengine=libaio",
        "--direct=1",
        "--name=a",
        "--rw=randread",
        "--bs=4k",
        "--name=b",
        "--rw=write",
        "--bs=1m",
        "--time_based",
        "--runtime=5",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let j = parse_args(&args, &no_env).unwrap();
    assert_eq!(j.len(), 2);
    assert_eq!(
        (j[0].name.as_str(), j[0].rw, j[0].bs),
        ("a", Rw::Randread, 4096)
    );
    assert_eq!(
        (j[1].name.as_str(), j[1].rw, j[1].bs),
        ("b", Rw::Write, 1 << 20)
    );
    assert!(j.iter().all(|j| j.direct && j.engine == Engine::Libaio));
    assert!(j[1].time_based && !j[0].time_based);
    let refuse = |a: &[&str]| {
        let v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        parse_args(&v, &no_env).unwrap_err()
    };
    let e = refuse(&["--name=a", "--file_service_type=pareto"]);
    assert!(e.starts_with("fio option 2: file_service_type"), "{e}");
    let e = refuse(&["--name=a", "--allow-overwrite"]);
    assert!(e.contains("put it before"), "{e}");
    let e = refuse(&["--name=a", "job.fio"]);
    assert!(e.contains("fio's --option=value options only"), "{e}");
}

#[test]
fn rate_verify_and_latency_target_map_to_iogauges_own() {
    let j = &jobs("[a]\nbs=4k\nrate=100m\n")[0];
    assert_eq!(j.rate_iops, Some(25_600.0));
    // Below one IO a second the IOs are seconds apart (1mbs_clients.fio); 0 is no limit.
    let j = &jobs("[a]\nbs=4k\nrate=1024\n")[0];
    assert_eq!(j.rate_iops, Some(0.25));
    assert_eq!(jobs("[a]\nbs=4k\nrate=0\n")[0].rate_iops, None);
    assert!(refusal("[a]\nrate=1m\nrate_iops=10\n").contains("give one"));
    // Per direction, as fio's parser reads R,W,T: a job of one direction is paced by its own;
    // a mix with both paced issues each at its rate whatever rwmixread says (fio's rate_ddir).
    assert_eq!(
        jobs("[a]\nrw=write\nbs=4k\nrate=1m,2m\n")[0].rate_iops,
        Some(512.0)
    );
    assert_eq!(
        jobs("[a]\nrw=read\nbs=4k\nrate=1m,,5m\n")[0].rate_iops,
        Some(256.0)
    );
    let j = &jobs("[a]\nrw=randrw\nrwmixread=90\nbs=4k\nrate=1m,2m\n")[0];
    assert_eq!((j.rate_iops, j.read_pct), (Some(768.0), 33));
    let j = &jobs("[a]\nrw=randrw\nrate_iops=300,300,300\n")[0];
    assert_eq!((j.rate_iops, j.read_pct), (Some(600.0), 50));
    // One value is every direction's (fio's parser), so a 50/50 mix moves twice it.
    assert_eq!(
        jobs("[a]\nrw=randrw\nbs=4k\nrate=1m\n")[0].rate_iops,
        Some(512.0)
    );
    // Near misses: one direction of a mix paced; a pace for the direction a job does not do.
    let e = refusal("[a]\nrw=randrw\nrate=,500k\n");
    assert!(
        e.contains("leaves the other as fast as the device goes"),
        "{e}"
    );
    let e = refusal("[a]\nrw=read\nrate_iops=,50\n");
    assert!(e.contains("paces writes, and rw=read does none"), "{e}");
    assert!(refusal("[a]\nrate=1m,2m,3m,4m\n").contains("at most read,write,trim"));
    assert!(jobs("[a]\nverify=md5\n")[0].verify);
    // A writer with do_verify=0 and nothing after it to read: nothing is checked, so nothing
    // is stamped either.
    assert!(!jobs("[a]\nrw=write\nverify=md5\ndo_verify=0\n")[0].verify);
    assert!(!jobs("[a]\nverify=0\n")[0].verify);
    let t = jobs("[a]\nlatency_target=10000\nlatency_percentile=99\nlatency_window=5s\n")[0]
        .latency_target
        .unwrap();
    assert_eq!((t.percentile, t.limit), (99.0, Duration::from_millis(10)));
    let t = jobs("[a]\nlatency_target=2ms\n")[0].latency_target.unwrap();
    assert_eq!((t.percentile, t.limit), (100.0, Duration::from_millis(2)));
    assert!(refusal("[a]\nlatency_percentile=99\n").contains("latency_target"));
}

#[test]
fn thinktime_and_its_companions_map_to_pauses() {
    use crate::workload::Think;
    let think = |text: &str| jobs(text)[0].think;
    let ms = Duration::from_millis;
    // Microseconds when bare, after every IO unless thinktime_blocks says; spin within it.
    assert_eq!(
        think("[a]\nthinktime=2000\n"),
        Some(Think {
            pause: ms(2),
            spin: Duration::ZERO,
            blocks: 1,
            iotime: None
        })
    );
    assert_eq!(
        think("[a]\nthinktime=10ms\nthinktime_spin=4000\nthinktime_blocks=8\nthinktime_blocks_type=issue\n"),
        Some(Think { pause: ms(10), spin: ms(4), blocks: 8, iotime: None })
    );
    // fio clamps the spin to the pause; with only an iotime, no count of IOs stops the burst.
    let t = think("[a]\nthinktime=1ms\nthinktime_spin=5ms\nthinktime_iotime=2\n").unwrap();
    assert_eq!(
        (t.spin, t.blocks, t.iotime),
        (ms(1), u32::MAX, Some(Duration::from_secs(2)))
    );
    assert_eq!(think("[a]\nthinktime=0\n"), None);
    // Near misses: a companion without thinktime, a pause beside a rate, a bad count type.
    let e = refusal("[a]\nthinktime_blocks=4\n");
    assert!(e.contains("goes with thinktime, which is not set"), "{e}");
    let e = refusal("[a]\nthinktime=100\nrate_iops=50\n");
    assert!(e.contains("either by a rate or by pauses"), "{e}");
    assert!(refusal("[a]\nthinktime=1\nthinktime_blocks_type=both\n").contains("complete or issue"));
}

#[test]
fn io_priorities_map_to_the_threads_and_a_share_of_ios() {
    use crate::workload::{CmdPrio, Prio};
    let prio = |text: &str| jobs(text)[0].prio.clone();
    let (idle, rt0) = (Prio::value(Prio::IDLE, 0), Prio::value(Prio::RT, 0));
    let any = |pct, value| CmdPrio {
        bs: None,
        pct,
        value,
    };
    // cmdprio-percentage.fio: the threads idle, a fifth of the IOs real-time (fio's default class).
    let p = prio("[a]\nioengine=io_uring\nprioclass=3\ncmdprio_percentage=20\n").unwrap();
    assert_eq!(
        p,
        Prio {
            thread: Some(idle),
            per_io: [vec![any(20, rt0)], vec![any(20, rt0)]]
        }
    );
    // Per direction, the last value standing for the directions after it; class 2, level 6.
    let p =
        prio("[a]\nioengine=libaio\ncmdprio_percentage=5,0\ncmdprio_class=2\ncmdprio=6\n").unwrap();
    assert_eq!(p.per_io, [vec![any(5, Prio::value(Prio::BE, 6))], vec![]]);
    // prio alone is best effort at that level; class 0 is the kernel's default; a hint.
    assert_eq!(
        prio("[a]\nprio=7\n").unwrap().thread,
        Some(Prio::value(Prio::BE, 7))
    );
    assert_eq!(prio("[a]\nprioclass=0\n"), None);
    assert_eq!(Prio::label(Prio::value(Prio::BE, 7)), "be/7");
    assert_eq!(
        Prio::label(Prio::value(Prio::RT, 1) | 2 << 3),
        "rt/1+hint 2"
    );
    // cmdprio-bssplit.fio: shares per size with their own class and level; the draw walks them.
    let p = prio(
        "[a]\nioengine=libaio\nrw=randrw\ncmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0\n",
    )
    .unwrap();
    let k64 = |pct, class, level| CmdPrio {
        bs: Some(65536),
        pct,
        value: Prio::value(class, level),
    };
    assert_eq!(
        p.per_io,
        [vec![k64(25, Prio::RT, 1), k64(75, Prio::IDLE, 2)], vec![]]
    );
    assert_eq!(p.draw(true, 65536, 24), Prio::value(Prio::RT, 1));
    assert_eq!(p.draw(true, 65536, 25), Prio::value(Prio::IDLE, 2));
    assert_eq!((p.draw(true, 1 << 20, 0), p.draw(false, 65536, 0)), (0, 0));
    // The short form takes cmdprio_class and cmdprio; a fifth field is a hint.
    let p = prio(
        "[a]\nioengine=io_uring\ncmdprio_bssplit=4k/10:8k/100/2/0/3\ncmdprio_class=1\ncmdprio=2\n",
    )
    .unwrap();
    assert_eq!(p.per_io[0][0].value, Prio::value(Prio::RT, 2));
    assert_eq!(p.per_io[1][1].value, Prio::value(Prio::BE, 0) | 3 << 3);
    // Near misses: a per-IO priority on a sync engine, a class without its share, both forms,
    // shares of one size above 100%, a level out of range.
    let e = refusal("[a]\ncmdprio_percentage=20\n");
    assert!(e.contains("io_uring or libaio only"), "{e}");
    let e = refusal("[a]\nioengine=io_uring\ncmdprio_class=1\n");
    assert!(e.contains("neither is set: give one of them"), "{e}");
    let e = refusal("[a]\nioengine=io_uring\ncmdprio_percentage=1\ncmdprio_bssplit=4k/10\n");
    assert!(e.contains("give one (fio takes one)"), "{e}");
    let e = refusal("[a]\nioengine=io_uring\ncmdprio_bssplit=4k/60/1/0:4k/50/3/0\n");
    assert!(e.contains("the shares of 4K add up to 110%"), "{e}");
    assert!(refusal("[a]\nprio=8\n").contains("from 0 to 7"));
}

#[test]
fn strided_zones_map_with_fios_defaults() {
    use crate::workload::Strided;
    // disk-zone-profile.fio: 256 MiB read, 2 GiB skipped; zonerange defaults to zonesize.
    let j = &jobs("[a]\nbs=64k\nzonemode=strided\nzonesize=256m\nzoneskip=2g\n")[0];
    assert_eq!(
        j.zones,
        Some(Strided {
            range: 256 << 20,
            size: 256 << 20,
            skip: 2 << 30
        })
    );
    // zonesize alone is strided (fio's old spelling); zonerange apart.
    let j = &jobs("[a]\nzonesize=8k\nzonerange=1m\n")[0];
    assert_eq!(
        j.zones,
        Some(Strided {
            range: 1 << 20,
            size: 8192,
            skip: 0
        })
    );
    assert_eq!(jobs("[a]\nzonemode=none\n")[0].zones, None);
    // Near misses: strided without a size, none with one, zbd, a mix, part of a block.
    assert!(refusal("[a]\nzonemode=strided\n").contains("needs zonesize="));
    assert!(refusal("[a]\nzonemode=none\nzonesize=1m\n").contains("fio refuses them"));
    assert!(refusal("[a]\nzonemode=zbd\n").contains("zonemode=zbd needs zonesize="));
    assert!(refusal("[a]\nzonesize=1m\nbssplit=4k/50:8k/50\n").contains("one block size"));
    assert!(refusal("[a]\nbs=64k\nzonesize=1m\nzoneskip=4k\n").contains("whole number of blocks"));
    assert!(refusal("[a]\nzoneskip=1m\n").contains("goes with zonemode=strided"));
}

#[test]
fn size_as_a_share_is_kept_for_the_plan() {
    assert_eq!(jobs("[a]\nsize=50%\n")[0].size_pct, Some(50.0));
    assert!(refusal("[a]\nsize=0%\n").contains("1% to 100%"));
    assert!(refusal("[a]\nsize=150%\n").contains("1% to 100%"));
}

#[test]
fn steady_state_options_map_to_until_stable() {
    assert!(jobs("[a]\nss=iops:10%\nss_dur=30\nss_ramp=5\n")[0].steady);
    // A steady mean latency at a fixed depth is a steady rate (Little's law); not when paced.
    let j = &jobs("[a]\nss=lat:5%\n")[0];
    assert!(j.steady && j.steady_latency);
    assert!(refusal("[a]\nss=lat:5%\nrate_iops=100\n").contains("a paced job's rate is fixed"));
    assert!(refusal("[a]\nss=latency:10%\n").contains("iops, iops_slope"));
    assert!(refusal("[a]\nss_dur=30\n").contains("goes with ss="));
}

fn w(bs: u64, weight: u64) -> BsWeight {
    BsWeight { bs, weight }
}

#[test]
fn block_size_mixes_map_to_a_mix() {
    // bssplit: the same sizes for reads and writes; the job's bs is the smallest.
    let j = &jobs("[a]\nrw=randrw\nbssplit=4k/50:64k/50\n")[0];
    let m = j.mix.as_ref().unwrap();
    assert_eq!(m.read, vec![w(4096, 50), w(65536, 50)]);
    assert_eq!(m.write, m.read);
    assert_eq!(j.bs, 4096);
    // Sizes without a percentage share what is left, as in fio.
    let j = &jobs("[a]\nrw=randread\nbssplit=4k/10:8k:16k\n")[0];
    assert_eq!(
        j.mix.as_ref().unwrap().read,
        vec![w(4096, 10), w(8192, 45), w(16384, 45)]
    );
    // Per direction with ','.
    let j = &jobs("[a]\nrw=randrw\nbssplit=4k/90:8k/10,64k/50:1m/50\n")[0];
    let m = j.mix.as_ref().unwrap();
    assert_eq!(m.read, vec![w(4096, 90), w(8192, 10)]);
    assert_eq!(m.write, vec![w(65536, 50), w(1 << 20, 50)]);
    // bs=R,W: one size per direction.
    let j = &jobs("[a]\nrw=randrw\nbs=4k,64k\n")[0];
    let m = j.mix.as_ref().unwrap();
    assert_eq!(
        (m.read.clone(), m.write.clone()),
        (vec![w(4096, 1)], vec![w(65536, 1)])
    );
    // ... which on a pattern that only reads is one size: no mix.
    let j = &jobs("[a]\nrw=randread\nbs=4k,64k\n")[0];
    assert_eq!((j.mix.clone(), j.bs), (None, 4096));
    let j = &jobs("[a]\nrw=write\nbs=4k,64k\n")[0];
    assert_eq!((j.mix.clone(), j.bs), (None, 65536));
    assert_eq!(jobs("[a]\nbs=8k,8k\n")[0].mix, None);
    // bsrange (and its long name): fio's sizes, the multiples of the smallest.
    let j = &jobs("[a]\nrw=randread\nbsrange=4k-16k\n")[0];
    assert_eq!(
        j.mix.as_ref().unwrap().read,
        vec![w(4096, 4096), w(8192, 4096), w(12288, 4096), w(16384, 4096)]
    );
    let j = &jobs("[a]\nrw=randread\nblocksize_range=16k-4k\n")[0];
    assert_eq!(j.mix.as_ref().unwrap().read.len(), 4);
    // bssplit wins over bs, as in fio.
    let j = &jobs("[global]\nbs=4k\n[a]\nrw=randread\nbssplit=8k/50:16k/50\n")[0];
    assert_eq!(j.bs, 8192);
    // rate= paces the mean size.
    let j = &jobs("[a]\nrw=randread\nbssplit=4k/50:12k/50\nrate=8m\n")[0];
    assert_eq!(j.rate_iops, Some(1024.0));
    // ... of the sizes the pattern issues: a read job's bs=4k,64k paces 4k reads.
    let j = &jobs("[a]\nrw=randread\nbs=4k,64k\nrate=4m\n")[0];
    assert_eq!(j.rate_iops, Some(1024.0));
}

#[test]
fn rw_suffixes_map_to_runs_and_skips() {
    let j = &jobs("[a]\nrw=randread:8\n")[0];
    assert_eq!((j.rw, j.seq_run, j.seq_skip), (Rw::Randread, 8, 0));
    let j = &jobs("[a]\nreadwrite=randrw:16\nrw_sequencer=sequential\n")[0];
    assert_eq!((j.rw, j.seq_run), (Rw::Randrw, 16));
    // On a sequential pattern the number is a size: bytes skipped after each IO.
    let j = &jobs("[a]\nrw=write:64k\n")[0];
    assert_eq!((j.rw, j.seq_run, j.seq_skip), (Rw::Write, 1, 65536));
    // A negative one walks backwards (backwards-read.fio).
    let j = &jobs("[a]\nrw=read:-8k\n")[0];
    assert_eq!((j.rw, j.seq_skip), (Rw::Read, -8192));
    let j = &jobs("[a]\nrw=read\n")[0];
    assert_eq!((j.seq_run, j.seq_skip), (1, 0));
}

#[test]
fn offset_increment_gives_each_clone_its_region() {
    let j = &jobs("[a]\nsize=1g\nnumjobs=4\noffset_increment=2g\n")[0];
    assert_eq!((j.offset_increment, j.size), (Some(2 << 30), Some(1 << 30)));
    assert_eq!(
        jobs("[a]\nsize=1g\noffset_increment=0\n")[0].offset_increment,
        None
    );
}

#[test]
fn a_random_mix_under_fios_random_map_is_told() {
    let notes = |text: &str| super::measures::notes(&jobs(text), 0, &|_| None, &|_| true);
    let n = notes("[a]\nrw=randread\nbssplit=4k/50:64k/50\n");
    assert!(
        n.iter().any(
            |n| n.starts_with("t.fio:3: bssplit=4k/50:64k/50 on random IO")
                && n.contains("cuts each IO short")
                && n.contains("mean 34 KiB")
        ),
        "{n:?}"
    );
    // Near misses: norandommap=1, a sequential pattern, one size.
    for text in [
        "[a]\nrw=randread\nbssplit=4k/50:64k/50\nnorandommap=1\n",
        "[a]\nrw=read\nbssplit=4k/50:64k/50\n",
        "[a]\nrw=randread\nbs=4k\n",
    ] {
        assert!(
            !notes(text).iter().any(|n| n.contains("random map")),
            "{text}"
        );
    }
}

#[test]
fn nrfiles_splits_size_and_file_service_type_picks_the_file() {
    let j = &jobs("[a]\nsize=1g\nnrfiles=4\n")[0];
    assert_eq!(
        (j.nrfiles, j.size),
        (4, Some(1 << 30)),
        "size is the job's total"
    );
    assert_eq!(j.file_service, FileService::RoundRobin(1), "fio's default");
    assert_eq!(jobs("[a]\n")[0].nrfiles, 1);
    // filesize is each file's size.
    let j = &jobs("[a]\nfilesize=256m\nnrfiles=4\n")[0];
    assert_eq!(j.size, Some(1 << 30));
    for (v, want) in [
        ("roundrobin", FileService::RoundRobin(1)),
        ("roundrobin:8", FileService::RoundRobin(8)),
        ("sequential", FileService::Sequential),
        ("random", FileService::Random(1)),
        ("random:4", FileService::Random(4)),
    ] {
        let j = &jobs(&format!("[a]\nnrfiles=2\nfile_service_type={v}\n"))[0];
        assert_eq!(j.file_service, want, "{v}");
        assert_eq!(want.to_string(), v, "said as fio writes it");
    }
    for v in ["zipf", "pareto:0.5", "normal", "gauss"] {
        let e = refusal(&format!("[a]\nnrfiles=2\nfile_service_type={v}\n"));
        assert!(e.starts_with("t.fio:3: file_service_type"), "{e}");
        assert!(e.contains("skewed"), "{e}");
    }
    assert!(refusal("[a]\nfile_service_type=sequential:2\n").contains("no ':K'"));
    // openfiles at or above nrfiles changes nothing: iogauge keeps them all open.
    assert_eq!(jobs("[a]\nnrfiles=4\nopenfiles=4\n")[0].nrfiles, 4);
}

// What the job measures counts every file: size is the job's total over its files, per clone.
#[test]
fn the_notes_count_all_of_a_jobs_files() {
    let j = jobs("[a]\nsize=1g\nnrfiles=4\nnumjobs=2\n");
    let n = super::measures::notes(&j, 8 << 30, &|j| j.size, &|_| true);
    assert!(
        n.iter().any(|n| n.contains(
            "fio lays out 4 files of 256 MiB per clone, 2 GiB in all next to 8 GiB of RAM; iogauge's 2 threads share 4 files of 256 MiB (1 GiB)"
        )),
        "{n:?}"
    );
    assert!(
        n.iter()
            .any(|n| n.contains("working set of 1 GiB that fits in RAM")),
        "{n:?}"
    );
    // One file: the note as it always was.
    let one = super::measures::notes(&jobs("[a]\nsize=1g\nnumjobs=2\n"), 0, &|j| j.size, &|_| {
        true
    });
    assert!(
        one.iter()
            .any(|n| n.contains("a file of that size per clone, 2 GiB in all; iogauge's 2 threads share one range of 1 GiB")),
        "{one:?}"
    );
}

#[test]
fn clones_walking_one_file_from_its_start_are_told() {
    let notes = |text: &str| super::measures::notes(&jobs(text), 0, &|_| None, &|_| true);
    let n = notes("[a]\nfilename=/data/t.bin\nrw=write\nbs=1m\nnumjobs=16\n");
    assert!(
        n.iter().any(
            |n| n.starts_with("t.fio:5: numjobs=16 with one filename and rw=write")
                && n.contains("each take their own part")
        ),
        "{n:?}"
    );
    // The near misses: random IO, one clone, or clones given their own regions.
    for text in [
        "[a]\nfilename=/data/t.bin\nrw=randwrite\nnumjobs=16\n",
        "[a]\nfilename=/data/t.bin\nrw=write\n",
        "[a]\nfilename=/data/t.bin\nrw=write\nsize=1g\nnumjobs=4\noffset_increment=1g\n",
    ] {
        let n = notes(text);
        assert!(
            !n.iter().any(|n| n.contains("with one filename")),
            "{text}: {n:?}"
        );
    }
}

#[test]
fn a_write_only_job_on_a_new_file_is_told_fio_would_not_write_it_first() {
    let notes = |text: &str, laid_out: bool| {
        super::measures::notes(&jobs(text), 0, &|_| None, &|_| laid_out)
    };
    let n = notes("[a]\nfilename=/data/t.bin\nrw=randwrite\nsize=1g\n", false);
    assert!(
        n.iter().any(
            |n| n.starts_with("t.fio:3: rw=randwrite without overwrite=1 (job a)")
                && n.contains("add overwrite=1")
        ),
        "{n:?}"
    );
    // The near misses: overwrite=1, a file already laid out, a job that reads (fio writes its
    // file first then), and overwrite=0 said outright is still told.
    for (text, laid_out) in [
        ("[a]\nrw=randwrite\noverwrite=1\n", false),
        ("[a]\nfilename=/data/t.bin\nrw=write\n", true),
        ("[a]\nrw=randrw\nrwmixread=0\n", false),
        ("[a]\nrw=read\n", false),
    ] {
        let n = notes(text, laid_out);
        assert!(
            !n.iter().any(|n| n.contains("without overwrite=1")),
            "{text}: {n:?}"
        );
    }
    let n = notes("[a]\nrw=write\noverwrite=0\n", false);
    assert!(
        n.iter().any(|n| n.contains("rw=write without overwrite=1")),
        "{n:?}"
    );
}

/// fio's aliases read as the options they stand for; fio's zoned distribution is mapped.
#[test]
fn aliases_and_zones_are_read_as_fio_reads_them() {
    let jobs = parse(
        "[a]\nrw=randread\nnr_files=1\nfileoffset=4k\ntimeout=2s\nrandom_distribution=zoned:50/5:30/15:20/\n",
        "t.fio",
        &no_env,
    )
    .unwrap();
    let j = &jobs[0];
    assert_eq!(j.offset, 4096);
    assert_eq!(j.runtime, Some(Duration::from_secs(2)));
    assert_eq!(j.distribution.to_string(), "zoned:50/5:30/15:20/80");
}

/// Options that change what fio records, not the IO, run with a note of what iogauge keeps
/// instead, on the line they were set; so do those iogauge's way of running already gives.
#[test]
fn noted_options_run_with_what_iogauge_does_instead() {
    let text = "[global]\nthreads=1\nwrite_lat_log=lat\nlog_avg_msec=1000\n[a]\ngtod_reduce=1\n\
                random_generator=lfsr\nstartdelay=2-4\nratemin=1m\ndisable_bw=1\npercentile_list=99.5\n";
    let j = jobs(text);
    let n = super::measures::notes(&j, 0, &|_| None, &|_| true);
    for (key, line, says) in [
        ("threads", 2, "tiobench profile"),
        ("write_lat_log", 3, "writes no log files"),
        ("log_avg_msec", 4, "writes no log files"),
        ("gtod_reduce", 6, "always times every IO"),
        ("random_generator", 7, "its own generator"),
        ("startdelay", 8, "changes nothing it measures"),
        ("rate_min", 9, "does not end a job"),
        ("disable_bw_measurement", 10, "always times every IO"),
        ("percentile_list", 11, "whole latency histogram"),
    ] {
        let want = format!("t.fio:{line}: {key} (job a): ");
        assert!(
            n.iter().any(|n| n.starts_with(&want) && n.contains(says)),
            "{key}: {n:#?}"
        );
    }
}

/// blockalign: a mix's offsets aligned to it (JESD219's 512 B to 64 KiB IOs at 4 KiB offsets);
/// at the smallest size, fio's default and iogauge's, nothing to carry.
#[test]
fn blockalign_aligns_a_mix_and_at_the_smallest_size_changes_nothing() {
    let j = &jobs("[a]\nrw=randrw\nbssplit=512/10:4k/60:64k/30\nba=4k\n")[0];
    assert_eq!(j.mix.as_ref().and_then(|m| m.align), Some(4096));
    let j = &jobs("[a]\nrw=randrw\nbssplit=4k/50:64k/50\nblockalign=4k\n")[0];
    assert_eq!(j.mix.as_ref().and_then(|m| m.align), None);
    let j = &jobs("[a]\nbs=8k\nblockalign=8k,8k\n")[0];
    assert_eq!((j.bs, j.mix.is_some()), (8192, false));
}

/// io_size (io_limit) and number_ios set what a clone moves apart from the region of size=,
/// loops multiplies it, wait_for names an earlier job, and a job without size= whose clones
/// each go over the whole file moves that many passes.
#[test]
fn io_size_number_ios_loops_and_passes_set_the_amount() {
    let j = &jobs("[a]\nsize=64m\nio_limit=16m\nloops=3\n")[0];
    assert_eq!(
        (j.size, j.io_size, j.loops),
        (Some(64 << 20), Some(16 << 20), 3)
    );
    let j = &jobs("[a]\nsize=64m\nbs=8k\nnumber_ios=100\n")[0];
    assert_eq!(j.io_size, Some(800 << 10));
    let j = &jobs("[a]\nsize=64m\nio_size=4k\nnumber_ios=100\n")[0];
    assert_eq!(j.io_size, Some(4096), "number_ios only stops a job earlier");
    let two = jobs("[w]\nrw=write\n[r]\nwait_for=w\n");
    assert_eq!(two[1].typed("wait_for"), "w");
}

/// fio names a job by its section; a name= in [global] names none of them, one in the section
/// renames that job.
#[test]
fn a_job_is_named_by_its_section_not_by_globals_name() {
    let j = jobs("[global]\nname=everyone\n[first]\n[second]\nname=renamed\n");
    let names: Vec<&str> = j.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["first", "renamed"]);
}
