//! Where a job's threads run and take memory from (fio's cpus_allowed, cpumask, numa_*).

use super::*;

#[test]
fn cpu_and_memory_placement_read_as_fio_reads_them() {
    let p = |text: &str| jobs(text)[0].placement.clone();
    let one = p("[a]\ncpus_allowed=0\n").unwrap();
    assert_eq!(
        (one.cpus.clone(), one.split, one.mem.clone()),
        (vec![0], false, None)
    );
    assert_eq!(p("[a]\ncpumask=0x1\n"), Some(one));
    // Node 0's CPUs, as the kernel lists them; every machine has node 0.
    let node0 = iogauge_sysinfo::node_cpus(0).unwrap();
    let n =
        p("[a]\nnuma_cpu_nodes=0\nnuma_mem_policy=bind:0\ncpus_allowed_policy=split\n").unwrap();
    assert_eq!(n.cpus, node0);
    assert!(n.split);
    assert_eq!(n.mem.unwrap().to_string(), "bind:0");
    assert!(
        !p("[a]
cpus_allowed_policy=shared
cpus_allowed=0
")
        .unwrap()
        .split
    );
    assert_eq!(p("[a]\n"), None);
}

#[test]
fn placement_rules_are_refused_at_their_lines() {
    super::refusals::refused_at(&[
        (
            "[a]\nnuma_cpu_nodes=77\n",
            2,
            "NUMA node 77 is not online here",
        ),
        ("[a]\ncpus_allowed=4000\n", 2, "CPU 4000 is not online here"),
        ("[a]\ncpus_allowed=0\ncpumask=1\n", 3, "give one"),
        (
            "[a]\ncpus_allowed_policy=split\n",
            2,
            "none of which is set",
        ),
        ("[a]\nnuma_mem_policy=bind\n", 2, "after a colon"),
        (
            "[a]\nnuma_mem_policy=bind:77\n",
            2,
            "NUMA node 77 is not online",
        ),
    ]);
}
