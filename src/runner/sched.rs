//! Where the CPU went while a workload ran, read by the main thread every tick and never on
//! the IO path: this process's threads' time on a CPU and waiting for one (schedstat), and the
//! busy time of the CPUs it may run on (/proc/stat: the whole machine's, or those of its
//! affinity when it has fewer), each as CPU seconds per second in the run's bins.

use std::time::{Duration, Instant};

/// The process's threads' time on a CPU and time runnable but waiting for one (the first two
/// fields of each thread's schedstat), summed over every thread it has had (the workers, and
/// io_uring's own workers that the kernel starts inside the process), at moments of the
/// measured window: read by the main thread every tick, never on the IO path.
#[derive(Default)]
pub(super) struct Sched {
    origin: Option<Instant>,
    /// Each thread's last reading, by thread id: a thread that has ended counts what it had.
    threads: Vec<(u32, [u64; 2])>,
    /// What threads whose id was taken again by a new thread had counted.
    retired: [u64; 2],
    /// (seconds since the measurement started, [on-CPU ns, waiting ns] summed, and the whole
    /// machine's busy CPU ns from /proc/stat).
    samples: Vec<(f64, [u64; 3])>,
    /// The CPUs this process may run on, when fewer than the machine's online ones (taskset,
    /// a cpuset): their busy time is the "machine" then, since a run pinned to CPU 0 beside
    /// work on CPU 0 is starved however idle the others are.
    cpus: Option<Vec<u32>>,
    /// The target's block device's `inflight` file in sysfs, and what it said at each sample
    /// (seconds since the measurement started, reads and writes in flight).
    inflight: Option<std::path::PathBuf>,
    flights: Vec<(f64, u32)>,
}

impl Sched {
    /// Watching `device` (a kernel name: "loop0", "sda1") too: its IOs in flight at each
    /// sample, for a stall on a machine with no idle CPU (`stall`'s rule).
    pub(super) fn with_device(device: Option<&str>) -> Sched {
        Sched {
            inflight: device.map(|d| {
                std::path::Path::new("/sys/class/block")
                    .join(d)
                    .join("inflight")
            }),
            ..Sched::default()
        }
    }

    pub(super) fn start(&mut self, origin: Instant) {
        self.origin = Some(origin);
        // The main thread's affinity is the process's: workers placed on CPUs of their own
        // (cpus_allowed) are placed within it.
        let online = iogauge_sysinfo::online("cpu");
        self.cpus = iogauge_engine::sys::thread_cpus()
            .ok()
            .map(|mine| {
                mine.into_iter()
                    .filter(|c| online.contains(c))
                    .collect::<Vec<_>>()
            })
            .filter(|mine| !mine.is_empty() && mine.len() < online.len());
        self.sample();
    }

    /// How many CPUs the busy series counts when fewer than the machine's.
    pub(super) fn cpus(&self) -> Option<u32> {
        self.cpus.as_ref().map(|c| c.len() as u32)
    }

    pub(super) fn sample(&mut self) {
        let Some(origin) = self.origin else {
            return;
        };
        // Read first: the counts are the kernel's at this moment, whatever came before.
        if let Some(n) = self.inflight.as_deref().and_then(read_inflight) {
            self.flights.push((origin.elapsed().as_secs_f64(), n));
        }
        // A kernel without schedstat leaves the run without these series, nothing more.
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return;
        };
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Some(now) = read_schedstat(&e.path().join("schedstat")) else {
                continue;
            };
            match self.threads.iter_mut().find(|(t, _)| *t == tid) {
                Some((_, last)) => {
                    // A reading below the last is a new thread with an ended one's id: what
                    // the ended one counted stays counted.
                    if now[0] < last[0] || now[1] < last[1] {
                        self.retired[0] += last[0];
                        self.retired[1] += last[1];
                    }
                    *last = now;
                }
                None => self.threads.push((tid, now)),
            }
        }
        if self.threads.is_empty() {
            return;
        }
        let sum = |i: usize| self.retired[i] + self.threads.iter().map(|(_, v)| v[i]).sum::<u64>();
        let at = origin.elapsed().as_secs_f64();
        // Without /proc/stat the machine's series is left out (zero throughout).
        let busy = machine_busy_ns(self.cpus.as_deref()).unwrap_or(0);
        self.samples.push((at, [sum(0), sum(1), busy]));
    }

    /// The fine series of the run's `fine.ios.len()` bins of `bin`: the CPU's (below), the
    /// CPUs counted, and the device's IOs in flight.
    pub(super) fn fill(&self, fine: &mut crate::model::FineDoc, bin: Duration) {
        let bins = fine.ios.len();
        (fine.cpu_run, fine.cpu_wait, fine.cpu_others) = self.per_bin(bin, bins);
        fine.cpus = self.cpus();
        fine.in_flight = flight_per_bin(&self.flights, bin.as_secs_f64(), bins);
    }

    /// CPU seconds per second on a CPU, and waiting for one, in each of `bins` bins of `bin`
    /// from the measurement's start (empty without two samples); and the CPUs' worth of the
    /// machine's work that was not iogauge's threads (other processes, and kernel threads —
    /// the loop device's or a file system's that serve iogauge's IO among them), empty without
    /// /proc/stat.
    pub(super) fn per_bin(&self, bin: Duration, bins: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let of = |i: usize| {
            let s: Vec<(f64, u64)> = self.samples.iter().map(|(t, v)| (*t, v[i])).collect();
            rate_per_bin(&s, bin.as_secs_f64(), bins)
        };
        let run = of(0);
        let others = match self.samples.iter().all(|(_, v)| v[2] > 0) {
            true => of(2)
                .iter()
                .zip(&run)
                .map(|(busy, own)| (busy - own).max(0.0))
                .collect(),
            false => Vec::new(),
        };
        (run, of(1), others)
    }
}

/// /proc/stat's clock ticks per second (USER_HZ: 100 on every Linux ABI, whatever HZ the
/// kernel was built with).
const USER_HZ: u64 = 100;

/// CPU time busy so far, in nanoseconds, of the whole machine (/proc/stat's first line) or of
/// the CPUs `cpus` (their own lines): all but idle and iowait (guest time is inside user
/// already). `None` when a line is missing.
pub(super) fn machine_busy_ns(cpus: Option<&[u32]>) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    busy_ns(&text, cpus)
}

pub(super) fn busy_ns(stat: &str, cpus: Option<&[u32]>) -> Option<u64> {
    let busy = |line: &str| -> Option<u64> {
        let f: Vec<u64> = line
            .split_ascii_whitespace()
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        // user nice system idle iowait irq softirq steal
        Some(
            f.get(..8)?
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != 3 && *i != 4)
                .map(|(_, v)| v)
                .sum::<u64>(),
        )
    };
    let ticks = match cpus {
        None => busy(stat.lines().next()?.strip_prefix("cpu ")?)?,
        Some(cpus) => {
            let mut sum = 0;
            for c in cpus {
                let head = format!("cpu{c} ");
                sum += busy(stat.lines().find_map(|l| l.strip_prefix(&head))?)?;
            }
            sum
        }
    };
    Some(ticks * (1_000_000_000 / USER_HZ))
}

/// A counter of nanoseconds, sampled at `samples` (seconds, value), as seconds per second in
/// each of `bins` bins of `bin_s`: linear between samples; bins past the last sample repeat
/// the last bin's rate. Empty without two samples.
pub(super) fn rate_per_bin(samples: &[(f64, u64)], bin_s: f64, bins: usize) -> Vec<f32> {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return Vec::new();
    };
    if last.0 <= first.0 || bin_s <= 0.0 {
        return Vec::new();
    }
    let at = |t: f64| -> f64 {
        let t = t.clamp(first.0, last.0);
        let i = samples
            .partition_point(|s| s.0 < t)
            .clamp(1, samples.len() - 1);
        let ((t0, v0), (t1, v1)) = (samples[i - 1], samples[i]);
        let (v0, v1) = (v0 as f64, v1.max(v0) as f64);
        match t1 > t0 {
            true => v0 + (v1 - v0) * (t - t0) / (t1 - t0),
            false => v1,
        }
    };
    let mut out: Vec<f32> = Vec::with_capacity(bins);
    for j in 0..bins {
        let (a, b) = (j as f64 * bin_s, (j + 1) as f64 * bin_s);
        let rate = match out.last() {
            Some(&prev) if b > last.0 + 1e-9 => prev,
            _ => ((at(b) - at(a)) / 1e9 / bin_s) as f32,
        };
        out.push(rate);
    }
    out
}

/// A count sampled at `samples` (seconds, value) as the value of each of `bins` bins of
/// `bin_s`: the last sample taken in the bin, or −1 for a bin with none (the watching thread
/// looks every 100 ms or a little more, and on a busy machine may not run for longer: a count
/// read before a stall is not carried into it). Empty without a sample.
pub(super) fn flight_per_bin(samples: &[(f64, u32)], bin_s: f64, bins: usize) -> Vec<f32> {
    if samples.is_empty() {
        return Vec::new();
    }
    // One pass: samples come in time order, so a later one in a bin overwrites an earlier (a
    // search per bin cost bins × samples, 1.3e9 steps for an hour's run).
    let mut out = vec![-1.0f32; bins];
    for &(t, n) in samples {
        let j = (t / bin_s).floor();
        if j >= 0.0 && (j as usize) < bins {
            out[j as usize] = n as f32;
        }
    }
    out
}

/// Reads and writes in flight from a block device's `inflight` file: "<reads> <writes>".
fn read_inflight(path: &std::path::Path) -> Option<u32> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut f = text.split_ascii_whitespace().map(|v| v.parse::<u32>().ok());
    Some(f.next()?? + f.next()??)
}

/// On-CPU and waiting nanoseconds from a schedstat file: "<on cpu> <run delay> <timeslices>".
pub(super) fn read_schedstat(path: &std::path::Path) -> Option<[u64; 2]> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut f = text.split_ascii_whitespace().map(|v| v.parse::<u64>().ok());
    Some([f.next()??, f.next()??])
}
