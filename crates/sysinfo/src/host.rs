//! The machine itself: kernel release, host name, CPU model and count, memory, read from `/proc`
//! and `/sys` (formats as documented in proc(5) and the kernel's
//! Documentation/ABI/stable/sysfs-devices-system-cpu).

use crate::Roots;
use std::path::Path;

pub(crate) fn kernel(roots: &Roots) -> Option<String> {
    read_trimmed(&roots.proc.join("sys/kernel/osrelease"))
}

pub(crate) fn hostname(roots: &Roots) -> Option<String> {
    read_trimmed(&roots.proc.join("sys/kernel/hostname"))
}

pub(crate) fn cpu_model(roots: &Roots) -> Option<String> {
    parse_cpu_model(&std::fs::read_to_string(roots.proc.join("cpuinfo")).ok()?)
}

pub(crate) fn cpu_count(roots: &Roots) -> Option<u32> {
    let online = std::fs::read_to_string(roots.sys.join("devices/system/cpu/online")).ok();
    if let Some(count) = online.as_deref().and_then(parse_cpu_list_count) {
        return Some(count);
    }
    // /proc/cpuinfo lists online CPUs only, so it answers the same question when sysfs is absent.
    let cpuinfo = std::fs::read_to_string(roots.proc.join("cpuinfo")).ok()?;
    let count = cpuinfo
        .lines()
        .filter(|line| key_value(line).is_some_and(|(key, _)| key == "processor"))
        .count();
    u32::try_from(count).ok().filter(|&n| n > 0)
}

pub(crate) fn mem_total_bytes(roots: &Roots) -> Option<u64> {
    parse_mem_total(&std::fs::read_to_string(roots.proc.join("meminfo")).ok()?)
}

/// File contents without surrounding whitespace; `None` when unreadable or empty.
pub(crate) fn read_trimmed(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn key_value(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    Some((key.trim(), value.trim()))
}

/// The first CPU's model. x86 says `model name`; 32-bit ARM says `Processor`, MIPS `cpu model`
/// and POWER `cpu`. 64-bit ARM gives only numeric part codes, which stay unknown rather than
/// being translated by a table that would go stale.
fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    for wanted in ["model name", "Processor", "cpu model", "cpu"] {
        let found = cpuinfo
            .lines()
            .filter_map(key_value)
            .find(|(key, value)| *key == wanted && !value.is_empty());
        if let Some((_, value)) = found {
            return Some(value.to_string());
        }
    }
    None
}

/// Counts the CPUs in a kernel CPU list such as `0-3,8,10-11`.
fn parse_cpu_list_count(list: &str) -> Option<u32> {
    u32::try_from(parse_list(list)?.len()).ok()
}

/// The kernel's list format (cpu/online, node/online, a node's cpulist, taskset's and fio's
/// `0-3,8,10-11`): the numbers in order, or `None` when it is not one (or names over 2^16).
pub fn parse_list(list: &str) -> Option<Vec<u32>> {
    let list = list.trim();
    if list.is_empty() {
        return None;
    }
    let mut all = Vec::new();
    for part in list.split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let n = part.trim().parse::<u32>().ok()?;
                (n, n)
            }
        };
        if last < first || last >= 1 << 16 {
            return None;
        }
        all.extend(first..=last);
    }
    all.sort_unstable();
    all.dedup();
    Some(all)
}

/// The CPUs online, or the NUMA nodes online (`"node"`), as the kernel lists them.
pub fn online(what: &str) -> Vec<u32> {
    std::fs::read_to_string(format!("/sys/devices/system/{what}/online"))
        .ok()
        .and_then(|l| parse_list(&l))
        .unwrap_or_default()
}

/// The CPUs of NUMA node `node`, or `None` when the machine has no such node.
pub fn node_cpus(node: u32) -> Option<Vec<u32>> {
    let l = std::fs::read_to_string(format!("/sys/devices/system/node/node{node}/cpulist")).ok()?;
    // A node with memory and no CPUs lists nothing.
    Some(parse_list(&l).unwrap_or_default())
}

fn parse_mem_total(meminfo: &str) -> Option<u64> {
    let (_, value) = meminfo
        .lines()
        .filter_map(key_value)
        .find(|(key, _)| *key == "MemTotal")?;
    // proc(5): the unit is always printed as "kB" and means KiB.
    let kib = value.strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
        model\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\nflags\t\t: fpu\n\n\
        processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\n";

    #[test]
    fn cpu_model_from_x86_model_name_not_model_number() {
        assert_eq!(
            parse_cpu_model(X86).as_deref(),
            Some("Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz")
        );
    }

    #[test]
    fn cpu_model_from_older_arm_and_power() {
        let arm = "Processor\t: ARMv7 Processor rev 4 (v7l)\nprocessor\t: 0\nBogoMIPS\t: 38.40\n";
        assert_eq!(
            parse_cpu_model(arm).as_deref(),
            Some("ARMv7 Processor rev 4 (v7l)")
        );
        let power = "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 2.3GHz\n";
        assert_eq!(
            parse_cpu_model(power).as_deref(),
            Some("POWER9 (raw), altivec supported")
        );
    }

    #[test]
    fn cpu_model_unknown_on_arm64_part_codes() {
        let arm64 =
            "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert_eq!(parse_cpu_model(arm64), None);
    }

    #[test]
    fn cpu_list_counts_ranges_and_singles() {
        assert_eq!(parse_cpu_list_count("0-3,8,10-11\n"), Some(7));
        assert_eq!(parse_cpu_list_count("0"), Some(1));
        assert_eq!(parse_cpu_list_count("0-63"), Some(64));
    }

    #[test]
    fn cpu_list_rejects_garbage_instead_of_guessing() {
        assert_eq!(parse_cpu_list_count(""), None);
        assert_eq!(parse_cpu_list_count("0-x"), None);
        assert_eq!(parse_cpu_list_count("5-2"), None);
        assert_eq!(parse_list("3,0-1,1"), Some(vec![0, 1, 3]));
        assert_eq!(parse_list("0-70000"), None);
    }

    #[test]
    fn mem_total_is_kib_times_1024() {
        let meminfo = "MemTotal:       16318412 kB\nMemFree:         1000000 kB\n";
        assert_eq!(parse_mem_total(meminfo), Some(16_318_412 * 1024));
        assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn cpu_count_falls_back_to_cpuinfo_processor_lines() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots {
            sys: dir.path().join("sys"),
            proc: dir.path().join("proc"),
        };
        std::fs::create_dir_all(&roots.proc).unwrap();
        std::fs::write(roots.proc.join("cpuinfo"), X86).unwrap();
        assert_eq!(cpu_count(&roots), Some(2));
    }
}
