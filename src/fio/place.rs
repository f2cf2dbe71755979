//! Where a job's threads run (`cpus_allowed`, `cpumask`, `numa_cpu_nodes`, with
//! `cpus_allowed_policy`) and take their memory from (`numa_mem_policy`), once its options are
//! all read: every CPU and node checked online on this machine before anything runs.

use super::draft::Set;
use super::Job;
use crate::workload::{MemPolicy, Placement};

/// The job's placement into `j.placement`, or the first rule its options break.
pub(super) fn apply(j: &mut Job, set: &Set) -> Result<(), String> {
    let named: Vec<&str> = ["cpus_allowed", "cpumask", "numa_cpu_nodes"]
        .into_iter()
        .filter(|k| set.contains_key(*k))
        .collect();
    if let [a, b, ..] = named[..] {
        return Err(format!(
            "{}: {b} with {a}: both name the CPUs the job runs on; give one",
            set[b].1
        ));
    }
    let mut p = Placement::default();
    if let Some(&k) = named.first() {
        let (v, l) = &set[k];
        let bad = |e: String| format!("{l}: {k}={v}: {e}");
        p.cpus = match k {
            "cpus_allowed" => iogauge_sysinfo::parse_list(v)
                .ok_or_else(|| bad("give a list of CPUs such as 0-3,8".into()))?,
            "cpumask" => mask(v).ok_or_else(|| bad("give a mask of CPUs such as 0x3".into()))?,
            _ => {
                let nodes = iogauge_sysinfo::parse_list(v)
                    .ok_or_else(|| bad("give a list of NUMA nodes such as 0-1".into()))?;
                let mut cpus = Vec::new();
                for n in nodes {
                    let on = iogauge_sysinfo::node_cpus(n).ok_or_else(|| {
                        let have =
                            crate::workload::placement_list(&iogauge_sysinfo::online("node"));
                        bad(format!("NUMA node {n} is not online here (nodes {have})"))
                    })?;
                    cpus.extend(on);
                }
                cpus.sort_unstable();
                cpus
            }
        };
        Placement {
            cpus: p.cpus.clone(),
            ..Placement::default()
        }
        .check()
        .map_err(bad)?;
    }
    if let Some((v, l)) = set.get("cpus_allowed_policy") {
        p.split = match v.as_str() {
            "shared" => false,
            "split" => true,
            _ => {
                return Err(format!(
                    "{l}: cpus_allowed_policy={v}: fio's policy is shared or split"
                ))
            }
        };
        if p.cpus.is_empty() {
            return Err(format!("{l}: cpus_allowed_policy divides the CPUs of cpus_allowed, cpumask or numa_cpu_nodes, none of which is set: give one, or leave cpus_allowed_policy out"));
        }
    }
    if let Some((v, l)) = set.get("numa_mem_policy") {
        let bad = |e: String| format!("{l}: numa_mem_policy={v}: {e}");
        let m = MemPolicy::parse(v).map_err(bad)?;
        Placement {
            mem: Some(m.clone()),
            ..Placement::default()
        }
        .check()
        .map_err(bad)?;
        p.mem = Some(m);
    }
    j.placement = (p != Placement::default()).then_some(p);
    Ok(())
}

/// fio's cpumask: a whole number (0x… in hex) whose bit N lets the job run on CPU N.
fn mask(v: &str) -> Option<Vec<u32>> {
    let m = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None => v.parse::<u64>().ok()?,
    };
    let cpus: Vec<u32> = (0..64).filter(|b| m & (1 << b) != 0).collect();
    (!cpus.is_empty()).then_some(cpus)
}
