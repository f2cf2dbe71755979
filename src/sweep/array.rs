//! Arrays on scratch devices, as a sweep's layout axis: md RAID through `mdadm`, LVM striping
//! through lvm2, btrfs profiles through mkfs.btrfs, and a plain single device as the baseline —
//! built from blank members the user named, measured, and taken apart again so every member is
//! blank afterwards ("One DVD per second" built RAID0 on 1 to 12 SSDs and RAID5 on 3 to 12 by
//! hand, mdadm against lvm2 striping; "SSD Performance" swept RAID levels and stripe sizes).
//!
//! Rules, and why:
//! - Every member is a block device the user named, distinct, unused (not mounted, swap, or held
//!   by md/dm/LVM: the target's rule) and blank (no signature: iogauge never writes over one it
//!   did not write). Checked for all of them before anything is built.
//! - Each array is written down in the crash ledger before it exists, with the name iogauge
//!   gives it — the md array's UUID (`mdadm --uuid`), the volume group's name, the btrfs file
//!   system's UUID — so `clean` undoes exactly it and nothing else: an md superblock, a PV or a
//!   btrfs member of another UUID or group is left alone.
//! - Taking an array apart stops it, removes what lvm or md wrote on the members and wipes every
//!   signature; each member is then checked blank, and one that is not is named.
//! - The initial resync of a redundant md array is waited for (`mdadm --wait`) unless the user
//!   says `--assume-clean`: a resync running under a measurement is another measurement. The
//!   plan says which.

use super::fs::{new_uuid, run};
pub use crate::plan::axes::{Kind, Layout};
use crate::target::signatures;
use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the ledger keeps of an array, written before it exists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Who built it (the ledger's own `kind` tag names the entry).
    pub made_by: Kind,
    /// The device the suite runs on (md, the logical volume, btrfs's first member).
    pub device: PathBuf,
    pub members: Vec<PathBuf>,
    /// The md array's UUID or the btrfs file system's, given at creation.
    #[serde(default)]
    pub uuid: Option<String>,
    /// The volume group's name.
    #[serde(default)]
    pub vg: Option<String>,
    /// Each member's PV UUID (lvm), given at pvcreate: a member whose group is already gone
    /// (a run killed between vgremove and pvremove) is still known as iogauge's by it.
    #[serde(default)]
    pub pvs: Vec<String>,
}

/// An array iogauge built; taken apart on drop, its members left blank.
pub struct Array {
    pub record: Record,
    pub layout: Layout,
    pub chunk: Option<u64>,
    /// What was done to build it, for the run's notes.
    pub built: String,
    entry: crate::ledger::Entry,
    hook: u64,
}

impl Array {
    /// Builds `layout` from `members` with `chunk` (bytes), waiting out an md resync unless
    /// `assume_clean`.
    pub fn build(
        layout: &Layout,
        members: &[PathBuf],
        chunk: Option<u64>,
        assume_clean: bool,
    ) -> Result<Array> {
        let tag = format!("iogauge{}", std::process::id());
        let uuid = new_uuid();
        let (device, vg) = match layout.kind {
            Kind::Single => (members[0].clone(), None),
            Kind::Md => (free_md()?, None),
            Kind::Lvm => {
                let vg = format!("{tag}-{:04x}", fastrand::u16(..));
                (PathBuf::from(format!("/dev/{vg}/lv")), Some(vg))
            }
            Kind::Btrfs => (members[0].clone(), None),
        };
        let record = Record {
            made_by: layout.kind,
            device: device.clone(),
            members: members.to_vec(),
            uuid: matches!(layout.kind, Kind::Md | Kind::Btrfs).then(|| uuid.clone()),
            vg: vg.clone(),
            pvs: match layout.kind {
                Kind::Lvm => members.iter().map(|_| lvm_uuid()).collect(),
                _ => Vec::new(),
            },
        };
        let entry = crate::ledger::Entry::of(&record);
        // Written down before anything is written to a member.
        crate::ledger::add(entry.clone());
        let r = record.clone();
        let hook = crate::interrupt::register_hook(Box::new(move || {
            let _ = take_apart(&r);
        }));
        let mut me = Array {
            record,
            layout: layout.clone(),
            chunk,
            built: String::new(),
            entry,
            hook,
        };
        let n = members.len().to_string();
        let kib = chunk.map(|c| (c / 1024).to_string());
        let args: Vec<String> = match layout.kind {
            Kind::Single => Vec::new(),
            Kind::Md => {
                let mut a = vec![
                    "--create".to_string(),
                    device.display().to_string(),
                    "--run".into(),
                    "--quiet".into(),
                    format!("--level={}", layout.md_level().0),
                    format!("--raid-devices={n}"),
                    "--metadata=1.2".into(),
                    format!("--uuid={uuid}"),
                ];
                if let Some(l) = layout.md_level().1 {
                    a.push(format!("--layout={l}"));
                }
                if layout.level != "raid0" {
                    // No write-intent bitmap: it writes on its own, beside the workload.
                    a.push("--bitmap=none".into());
                }
                if let Some(k) = &kib {
                    a.push(format!("--chunk={k}"));
                }
                if assume_clean {
                    a.push("--assume-clean".into());
                }
                a.extend(members.iter().map(|m| m.display().to_string()));
                run(Command::new("mdadm").args(&a)).context("mdadm --create")?;
                if !assume_clean && layout.level != "raid0" {
                    // Returns at once when there is nothing to resync; 1 means that too.
                    let _ = run(Command::new("mdadm").arg("--wait").arg(&device));
                }
                a
            }
            Kind::Lvm => {
                let vg = vg.as_deref().unwrap_or_default();
                for (m, id) in members.iter().zip(&me.record.pvs) {
                    lvm(&[
                        "pvcreate".to_string(),
                        "-q".into(),
                        "-y".into(),
                        "--norestorefile".into(),
                        "--uuid".into(),
                        id.clone(),
                        m.display().to_string(),
                    ])
                    .context("pvcreate")?;
                }
                let mut vgc = vec!["vgcreate".to_string(), "-q".into(), vg.to_string()];
                vgc.extend(members.iter().map(|m| m.display().to_string()));
                lvm(&vgc).context("vgcreate")?;
                let mut lvc = vec![
                    "lvcreate".to_string(),
                    "-q".into(),
                    "-y".into(),
                    "-i".into(),
                    n.clone(),
                    "-l".into(),
                    "100%FREE".into(),
                    "-n".into(),
                    "lv".into(),
                    "-Wy".into(),
                    "-Zy".into(),
                ];
                if let Some(k) = &kib {
                    lvc.push("-I".into());
                    lvc.push(format!("{k}k"));
                }
                lvc.push(vg.to_string());
                lvm(&lvc).context("lvcreate")?;
                lvc
            }
            Kind::Btrfs => {
                let mut a = vec![
                    "-q".to_string(),
                    "-U".into(),
                    uuid.clone(),
                    "-d".into(),
                    layout.level.clone(),
                    "-m".into(),
                    // Metadata as the data where btrfs allows it; raid0 metadata is refused
                    // by nothing but means one member lost loses the file system, as the data.
                    layout.level.clone(),
                ];
                a.extend(members.iter().map(|m| m.display().to_string()));
                run(Command::new("mkfs.btrfs").args(&a)).context("mkfs.btrfs")?;
                a
            }
        };
        me.built = match layout.kind {
            Kind::Single => format!("{} as it is", device.display()),
            Kind::Md => format!(
                "mdadm {}{}",
                args.join(" "),
                match (assume_clean, layout.level.as_str()) {
                    (_, "raid0") => String::new(),
                    (true, _) => " (no initial resync: --assume-clean)".into(),
                    (false, _) => " (the initial resync was waited for)".into(),
                }
            ),
            Kind::Lvm => format!("{} on {}", args.join(" "), members.len()),
            Kind::Btrfs => format!("mkfs.btrfs {}", args.join(" ")),
        };
        Ok(me)
    }

    /// Takes the last member out, so the array runs degraded; the member it was. md: failed
    /// and removed (its superblock stays until the array is taken apart, which zeroes every
    /// member's). btrfs, not yet mounted: the kernel told to forget it, so a mount finds it
    /// missing and must be made `-o degraded` (its signature stays until the wipe).
    pub fn degrade(&self) -> Result<PathBuf> {
        let gone = self
            .record
            .members
            .last()
            .cloned()
            .ok_or_else(|| anyhow!("an array without members"))?;
        match self.layout.kind {
            Kind::Btrfs => run(Command::new("btrfs")
                .args(["device", "scan", "--forget"])
                .arg(&gone))
            .context("btrfs device scan --forget")?,
            _ => run(Command::new("mdadm")
                .args(["--manage", "--quiet"])
                .arg(&self.record.device)
                .arg("--fail")
                .arg(&gone)
                .arg("--remove")
                .arg(&gone))
            .context("mdadm --fail")?,
        }
        Ok(gone)
    }

    /// Checks that a degraded btrfs, now mounted, runs without `gone`: the kernel lists the
    /// devices it opened under /sys/fs/btrfs/FSID/devices/ (a member found again by a scan
    /// would measure a whole array under a degraded one's name).
    pub fn left_out(&self, gone: &Path) -> Result<()> {
        let uuid = self.record.uuid.as_deref().unwrap_or_default();
        let dir = Path::new("/sys/fs/btrfs").join(uuid).join("devices");
        let name = std::fs::canonicalize(gone)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_os_string()))
            .ok_or_else(|| anyhow!("{} is gone", gone.display()))?;
        let opened: Vec<_> = std::fs::read_dir(&dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .flatten()
            .map(|e| e.file_name())
            .collect();
        match opened.contains(&name) {
            true => Err(anyhow!(
                "{} is still part of the btrfs file system after it was forgotten (a device scan found it again), so it would not be measured degraded",
                gone.display()
            )),
            false => Ok(()),
        }
    }

    /// Stripe unit and data members, for a file system made on the array.
    pub fn geometry(&self) -> Option<(u64, usize)> {
        let chunk = self.chunk.filter(|_| self.layout.takes_chunk())?;
        Some((chunk, self.layout.data_members(self.record.members.len())))
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        match take_apart(&self.record) {
            Ok(()) => crate::ledger::remove(&self.entry),
            Err(e) => say!("warning: {e:#}"),
        }
        crate::interrupt::unregister_hook(self.hook);
    }
}

/// Takes an array apart and leaves its members blank: stops md, removes the logical volume,
/// group and PVs, wipes every member; each member checked blank after. Used on every exit path
/// of a live run; a killed run's is [`undo`].
fn take_apart(r: &Record) -> Result<()> {
    match r.made_by {
        Kind::Single | Kind::Btrfs => {}
        Kind::Md => {
            let _ = run(Command::new("mdadm").arg("--stop").arg(&r.device));
            for m in &r.members {
                let _ = run(Command::new("mdadm").arg("--zero-superblock").arg(m));
            }
        }
        Kind::Lvm => {
            if let Some(vg) = &r.vg {
                let _ = lvm(&["vgremove".into(), "-q".into(), "-f".into(), vg.clone()]);
            }
            let mut pv = vec![
                "pvremove".to_string(),
                "-q".into(),
                "-y".into(),
                "-ff".into(),
            ];
            pv.extend(r.members.iter().map(|m| m.display().to_string()));
            let _ = lvm(&pv);
        }
    }
    let left: Vec<String> = r
        .members
        .iter()
        .filter_map(|m| super::fs::wipe(m).err().map(|e| format!("{e:#}")))
        .collect();
    match left.is_empty() {
        true => Ok(()),
        false => Err(anyhow!("taking the array apart: {}", left.join("; "))),
    }
}

impl crate::ledger::Resource for Record {
    const KIND: &'static str = "array";

    fn describe(&self) -> String {
        format!(
            "{:?} array {} of {}",
            self.made_by,
            self.device.display(),
            self.members
                .iter()
                .map(|m| m.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
        .to_lowercase()
    }

    fn undo(&self, dry_run: bool) -> (String, bool) {
        undo(self, dry_run)
    }
}

/// Undoes an array a killed run left (`iogauge clean`), only as far as it is provably the one
/// iogauge built: an md array whose members carry the recorded UUID, the recorded volume group,
/// btrfs members of the recorded UUID. Anything else on a member is left alone and named.
fn undo(r: &Record, dry_run: bool) -> (String, bool) {
    // Which members still hold what iogauge made there.
    let ours: Vec<&PathBuf> = r
        .members
        .iter()
        .filter(|m| match r.made_by {
            Kind::Single => false,
            Kind::Md | Kind::Btrfs => {
                r.uuid.is_some() && member_uuid(m, r.made_by).as_deref() == r.uuid.as_deref()
            }
            Kind::Lvm => {
                r.vg.as_deref()
                    .is_some_and(|vg| pv_group(m).as_deref() == Some(vg))
                    || blkid_value(m, "UUID").is_some_and(|u| r.pvs.contains(&u))
            }
        })
        .collect();
    let others: Vec<String> = r
        .members
        .iter()
        .filter(|m| !ours.contains(m))
        .filter_map(|m| {
            signatures::blkid(m).map(|f| format!("{} holds {}, left alone", m.display(), f.what))
        })
        .collect();
    if dry_run {
        let mut s = match ours.is_empty() {
            true => "nothing of it is left".to_string(),
            false => format!(
                "{} would be taken apart and {} wiped",
                r.device.display(),
                ours.iter()
                    .map(|m| m.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        for o in &others {
            s.push_str(&format!("; {o}"));
        }
        return (s, true);
    }
    if ours.is_empty() {
        let mut s = "nothing of it was left".to_string();
        for o in &others {
            s.push_str(&format!("; {o}"));
        }
        return (s, true);
    }
    let only = Record {
        members: ours.iter().map(|m| m.to_path_buf()).collect(),
        ..r.clone()
    };
    match take_apart(&only) {
        Ok(()) => {
            let mut s = format!(
                "taken apart, {} wiped",
                only.members
                    .iter()
                    .map(|m| m.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for o in &others {
                s.push_str(&format!("; {o}"));
            }
            (s, true)
        }
        Err(e) => (format!("{e:#}"), false),
    }
}

/// The UUID iogauge gave the array as a member shows it: md's array UUID (blkid prints it
/// with colons in groups of 8), btrfs's file-system UUID.
fn member_uuid(m: &Path, kind: Kind) -> Option<String> {
    let v = blkid_value(m, "UUID")?;
    Some(match kind {
        Kind::Md => dashed(&v.replace(':', "")),
        _ => v,
    })
}

/// A 32-hex-digit UUID in the 8-4-4-4-12 form.
fn dashed(hex: &str) -> String {
    if hex.len() != 32 {
        return hex.to_string();
    }
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn blkid_value(m: &Path, key: &str) -> Option<String> {
    let out = Command::new("blkid")
        .args(["-p", "-o", "value", "-s", key])
        .arg(m)
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!v.is_empty()).then_some(v)
}

/// The volume group a PV belongs to, as lvm says.
fn pv_group(m: &Path) -> Option<String> {
    let out = lvm_command()
        .args(["pvs", "--noheadings", "-o", "vg_name"])
        .arg(m)
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!v.is_empty()).then_some(v)
}

/// A PV UUID of iogauge's own, in lvm's form: 32 letters and digits grouped 6-4-4-4-4-4-6.
fn lvm_uuid() -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut s = String::new();
    for (i, n) in [6, 4, 4, 4, 4, 4, 6].into_iter().enumerate() {
        if i > 0 {
            s.push('-');
        }
        s.extend((0..n).map(|_| CHARS[fastrand::usize(..CHARS.len())] as char));
    }
    s
}

/// An md device nobody uses: /dev/md100 and up.
fn free_md() -> Result<PathBuf> {
    (100..200)
        .map(|n| (n, PathBuf::from(format!("/dev/md{n}"))))
        .find(|(n, p)| !Path::new(&format!("/sys/block/md{n}")).exists() && !p.exists())
        .map(|(_, p)| p)
        .ok_or_else(|| anyhow!("no free md device between /dev/md100 and /dev/md199"))
}

/// lvm, told not to wait for udev where none runs (a minimal system, a guest): it then makes
/// the device nodes itself.
fn lvm_command() -> Command {
    let mut c = Command::new("lvm");
    if !Path::new("/run/udev/control").exists() {
        c.env("DM_DISABLE_UDEV", "1");
    }
    c
}

fn lvm(args: &[String]) -> Result<()> {
    run(lvm_command().args(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_parse_and_know_their_members() {
        let far = Layout::parse("md:raid10-far,raid10-offset").unwrap();
        assert_eq!(far[0].md_level(), ("raid10", Some("f2")));
        assert_eq!(far[1].md_level(), ("raid10", Some("o2")));
        assert_eq!(far[0].data_members(4), 2);
        assert!(far[1].redundant() && far[1].takes_chunk());
        let l = Layout::parse("md:raid0,raid10,raid5,raid6").unwrap();
        assert_eq!(l.len(), 4);
        assert_eq!(l[2].min_members(), 3);
        assert_eq!(l[2].data_members(4), 3);
        assert_eq!(l[1].data_members(4), 2);
        assert!(Layout::parse("lvm:stripe").unwrap()[0].takes_chunk());
        assert!(!Layout::parse("btrfs:raid1").unwrap()[0].takes_chunk());
        assert_eq!(Layout::parse("single").unwrap()[0].kind, Kind::Single);
        for bad in ["md", "md:raid7", "zfs:raidz", "lvm:raid5", "single:x"] {
            let e = Layout::parse(bad).unwrap_err();
            assert!(
                e.downcast_ref::<crate::error::UsageError>().is_some(),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn md_uuids_read_as_given() {
        assert_eq!(
            dashed("0123456789abcdef0123456789abcdef"),
            "01234567-89ab-cdef-0123-456789abcdef"
        );
        let u = new_uuid();
        assert_eq!(dashed(&u.replace('-', "")), u);
    }
}
