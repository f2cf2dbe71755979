//! Where a stream's threads run and take their memory from (fio's cpus_allowed, cpumask,
//! cpus_allowed_policy, numa_cpu_nodes and numa_mem_policy): checked against the machine's
//! online CPUs and NUMA nodes before anything runs, and applied by each worker thread to itself
//! before it builds its engine and buffers, so those are placed too.

use iogauge_engine::sys;

/// A stream's placement. The default places nothing: the kernel's choice.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    /// The CPUs its threads may run on (any when empty).
    pub cpus: Vec<u32>,
    /// Each thread on one CPU of the set, in turn (fio's cpus_allowed_policy=split).
    pub split: bool,
    /// Where its threads' memory comes from (fio's numa_mem_policy).
    pub mem: Option<MemPolicy>,
}

/// A memory policy as set_mempolicy(2) takes it, spelled as fio's numa_mem_policy.
#[derive(Clone, Debug, PartialEq)]
pub struct MemPolicy {
    pub mode: MemMode,
    pub nodes: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MemMode {
    Default,
    Prefer,
    Bind,
    Interleave,
    Local,
}

impl MemPolicy {
    /// fio's `mode[:nodes]`: default, prefer:N, bind:LIST, interleave:LIST, local.
    pub fn parse(v: &str) -> Result<MemPolicy, String> {
        let (mode, nodes) = v.split_once(':').unwrap_or((v, ""));
        let mode = match mode {
            "default" => MemMode::Default,
            "prefer" => MemMode::Prefer,
            "bind" => MemMode::Bind,
            "interleave" => MemMode::Interleave,
            "local" => MemMode::Local,
            _ => return Err(
                "fio's numa_mem_policy is default, prefer:N, bind:NODES, interleave:NODES or local"
                    .into(),
            ),
        };
        let nodes = match (mode, nodes) {
            (MemMode::Default | MemMode::Local, "") => Vec::new(),
            (MemMode::Default | MemMode::Local, _) => {
                return Err("default and local take no nodes".into())
            }
            (_, "") => return Err("give the nodes after a colon, e.g. bind:0".into()),
            (m, l) => {
                let n = iogauge_sysinfo::parse_list(l)
                    .ok_or_else(|| format!("'{l}' is not a list of nodes such as 0-1"))?;
                if m == MemMode::Prefer && n.len() != 1 {
                    return Err("prefer takes one node".into());
                }
                n
            }
        };
        Ok(MemPolicy { mode, nodes })
    }

    fn mpol(&self) -> i32 {
        match self.mode {
            MemMode::Default => sys::MPOL_DEFAULT,
            MemMode::Prefer => sys::MPOL_PREFERRED,
            MemMode::Bind => sys::MPOL_BIND,
            MemMode::Interleave => sys::MPOL_INTERLEAVE,
            MemMode::Local => sys::MPOL_LOCAL,
        }
    }
}

impl std::fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.mode {
            MemMode::Default => "default",
            MemMode::Prefer => "prefer",
            MemMode::Bind => "bind",
            MemMode::Interleave => "interleave",
            MemMode::Local => "local",
        };
        match self.nodes.is_empty() {
            true => f.write_str(mode),
            false => write!(f, "{mode}:{}", list(&self.nodes)),
        }
    }
}

impl Placement {
    /// The CPUs thread `thread` of the stream may run on.
    pub fn cpus_of(&self, thread: u32) -> Vec<u32> {
        match (self.split, self.cpus.len()) {
            (true, n) if n > 0 => vec![self.cpus[thread as usize % n]],
            _ => self.cpus.clone(),
        }
    }

    /// Whether every CPU and node named is online here; else what the machine has.
    pub fn check(&self) -> Result<(), String> {
        let cpus = iogauge_sysinfo::online("cpu");
        if let Some(c) = self.cpus.iter().find(|c| !cpus.contains(c)) {
            return Err(format!("CPU {c} is not online here (CPUs {})", list(&cpus)));
        }
        let nodes = iogauge_sysinfo::online("node");
        if let Some(n) = self
            .mem
            .iter()
            .flat_map(|m| &m.nodes)
            .find(|n| !nodes.contains(n))
        {
            return Err(format!(
                "NUMA node {n} is not online here (nodes {})",
                list(&nodes)
            ));
        }
        Ok(())
    }

    /// Places the calling thread, thread `thread` of its stream.
    pub fn apply(&self, thread: u32) -> std::io::Result<()> {
        if !self.cpus.is_empty() {
            sys::set_thread_cpus(&self.cpus_of(thread))?;
        }
        match &self.mem {
            Some(m) => sys::set_thread_mempolicy(m.mpol(), &m.nodes),
            None => Ok(()),
        }
    }
}

impl std::fmt::Display for Placement {
    /// How a cell's name says it: "CPUs 0-3 one each · memory bind:0".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.cpus.is_empty() {
            let n = if self.cpus.len() == 1 { "CPU" } else { "CPUs" };
            parts.push(format!(
                "{n} {}{}",
                list(&self.cpus),
                if self.split { " one each" } else { "" }
            ));
        }
        if let Some(m) = &self.mem {
            parts.push(format!("memory {m}"));
        }
        f.write_str(&parts.join(" · "))
    }
}

/// The kernel's list format for sorted numbers: `0-3,8`.
pub fn list(v: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(match j > i {
            true => format!("{}-{}", v[i], v[j]),
            false => v[i].to_string(),
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_policies_and_split_cpus_read_as_fio_and_the_kernel_write_them() {
        assert_eq!(list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        let m = MemPolicy::parse("interleave:0-1").unwrap();
        assert_eq!((m.mode, m.nodes.clone()), (MemMode::Interleave, vec![0, 1]));
        assert_eq!(m.to_string(), "interleave:0-1");
        assert_eq!(MemPolicy::parse("local").unwrap().to_string(), "local");
        for bad in ["bind", "local:0", "prefer:0-1", "mbind:0", "bind:x"] {
            assert!(MemPolicy::parse(bad).is_err(), "{bad}");
        }
        let p = Placement {
            cpus: vec![2, 3, 5],
            split: true,
            mem: Some(m),
        };
        assert_eq!(
            (0..4).map(|t| p.cpus_of(t)[0]).collect::<Vec<_>>(),
            [2, 3, 5, 2]
        );
        assert_eq!(p.to_string(), "CPUs 2-3,5 one each · memory interleave:0-1");
        let shared = Placement { split: false, ..p };
        assert_eq!(shared.cpus_of(7), [2, 3, 5]);
    }
}
