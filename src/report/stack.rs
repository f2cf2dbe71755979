//! The target's stack drawn as a tree, for `show`, the report and every dry run: one drawing
//! of what lies under a target, from the file system down to the disks.

use crate::units;

/// The target's stack as a tree, top first: the file system (or the device named), then each
/// device with what lies beneath it, e.g.
/// `ext4 at /srv` / `└─ dm-0 (dm g-a)` / `   └─ md0 (md raid1 · 2 members)` / `      ├─ vda …`.
/// Empty when nothing lies under the target (tmpfs) or the stack was not recorded.
pub fn tree(t: &iogauge_sysinfo::TargetInfo) -> Vec<String> {
    if t.devices.is_empty() {
        return Vec::new();
    }
    let root = match (&t.filesystem, &t.mount_point) {
        (Some(fs), Some(mp)) => format!("{fs} at {}", crate::units::printable(mp)),
        _ => crate::units::printable(&t.path).into_owned(),
    };
    let below: Vec<&str> = t
        .devices
        .iter()
        .flat_map(|d| d.below.iter().map(String::as_str))
        .collect();
    // A chain recorded before `below` was (older runs) is drawn as the list it is.
    let chain = t.devices.iter().all(|d| d.below.is_empty());
    let tops: Vec<&iogauge_sysinfo::BlockDevice> = match chain {
        true => t.devices.iter().take(1).collect(),
        false => t
            .devices
            .iter()
            .filter(|d| !below.contains(&d.name.as_str()))
            .collect(),
    };
    let mut out = vec![root];
    let mut seen = Vec::new();
    let n = tops.len();
    for (i, d) in tops.into_iter().enumerate() {
        tree_node(t, d, "", i + 1 == n, chain, &mut seen, &mut out);
    }
    out
}

fn tree_node<'a>(
    t: &'a iogauge_sysinfo::TargetInfo,
    d: &'a iogauge_sysinfo::BlockDevice,
    indent: &str,
    last: bool,
    chain: bool,
    seen: &mut Vec<&'a str>,
    out: &mut Vec<String>,
) {
    let again = seen.contains(&d.name.as_str());
    out.push(format!(
        "{indent}{} {}{}",
        if last { "└─" } else { "├─" },
        node_words(d),
        if again { " (as above)" } else { "" }
    ));
    if again || seen.len() > 64 {
        return;
    }
    seen.push(&d.name);
    let next: Vec<&iogauge_sysinfo::BlockDevice> = match chain {
        // In a chain, the next device listed lies beneath.
        true => t
            .devices
            .iter()
            .skip_while(|x| x.name != d.name)
            .nth(1)
            .into_iter()
            .collect(),
        false => d
            .below
            .iter()
            .filter_map(|b| t.devices.iter().find(|x| &x.name == b))
            .collect(),
    };
    let inner = format!("{indent}{}", if last { "   " } else { "│  " });
    let n = next.len();
    for (i, b) in next.into_iter().enumerate() {
        tree_node(t, b, &inner, i + 1 == n, chain, seen, out);
    }
}

/// A device in the tree: its name and, in brackets, what it is.
fn node_words(d: &iogauge_sysinfo::BlockDevice) -> String {
    use iogauge_sysinfo::DeviceRole;
    let mut w: Vec<String> = Vec::new();
    match d.role {
        DeviceRole::Md => {
            w.push(format!("md {}", d.md_level.as_deref().unwrap_or("?")));
            // RAID1 has no chunk: md says 0.
            w.extend(
                d.md_chunk_bytes
                    .filter(|&c| c > 0)
                    .map(|c| format!("chunk {}", units::iec(c))),
            );
            if !d.md_members.is_empty() {
                w.push(format!("{} members", d.md_members.len()));
            }
        }
        DeviceRole::Dm => w.push(format!("dm {}", d.dm_name.as_deref().unwrap_or("?"))),
        DeviceRole::Loop => w.push(match (&d.loop_backing_file, &d.loop_backing_fs) {
            (Some(f), Some(fs)) => format!("loop over {} on {fs}", crate::units::printable(f)),
            (Some(f), None) => format!("loop over {}", crate::units::printable(f)),
            _ => "loop".into(),
        }),
        DeviceRole::Partition => w.push(match d.partition_start_bytes {
            Some(b) => format!("partition from {}", units::iec(b)),
            None => "partition".into(),
        }),
        DeviceRole::Disk => {
            w.push("disk".into());
            w.extend(d.model.clone());
        }
        DeviceRole::Stacked => w.push("stacked".into()),
    }
    w.extend(d.size_bytes.map(units::iec));
    format!("{} ({})", d.name, w.join(" · "))
}

#[cfg(test)]
mod tree_tests {
    use super::*;

    fn device(
        name: &str,
        role: &str,
        below: &[&str],
        extra: serde_json::Value,
    ) -> serde_json::Value {
        let mut d = serde_json::json!({
            "name": name, "role": role, "below": below, "schedulers_available": [],
            "md_members": [],
        });
        d.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        d
    }

    /// ext4 on LVM on md RAID1 over two disks, and a multi-branch stack that meets on one
    /// disk (three loop devices over files on vda): each device once, the shared one said as
    /// above.
    #[test]
    fn the_stack_is_drawn_as_a_tree() {
        let t: iogauge_sysinfo::TargetInfo = serde_json::from_value(serde_json::json!({
            "path": "/srv/t", "filesystem": "ext4", "mount_point": "/srv",
            "devices": [
                device("dm-0", "dm", &["md0"], serde_json::json!({"dm_name": "g-a", "size_bytes": 20971520})),
                device("md0", "md", &["vda", "vdb"], serde_json::json!({"md_level": "raid1", "md_members": ["vda", "vdb"]})),
                device("vda", "disk", &[], serde_json::json!({})),
                device("vdb", "disk", &[], serde_json::json!({})),
            ],
            "io_limits": [],
        }))
        .unwrap();
        assert_eq!(
            tree(&t),
            [
                "ext4 at /srv",
                "└─ dm-0 (dm g-a · 20 MiB)",
                "   └─ md0 (md raid1 · 2 members)",
                "      ├─ vda (disk)",
                "      └─ vdb (disk)",
            ]
        );
        let b: iogauge_sysinfo::TargetInfo = serde_json::from_value(serde_json::json!({
            "path": "/mnt/t", "filesystem": "btrfs", "mount_point": "/mnt",
            "devices": [
                device("loop0", "loop", &["vda"], serde_json::json!({"loop_backing_file": "/var/tmp/a.img", "loop_backing_fs": "ext4"})),
                device("vda", "disk", &[], serde_json::json!({})),
                device("loop1", "loop", &["vda"], serde_json::json!({"loop_backing_file": "/var/tmp/b.img", "loop_backing_fs": "ext4"})),
            ],
            "io_limits": [],
        }))
        .unwrap();
        assert_eq!(
            tree(&b),
            [
                "btrfs at /mnt",
                "├─ loop0 (loop over /var/tmp/a.img on ext4)",
                "│  └─ vda (disk)",
                "└─ loop1 (loop over /var/tmp/b.img on ext4)",
                "   └─ vda (disk) (as above)",
            ]
        );
    }
}
