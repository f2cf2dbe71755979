//! The layout axis of a sweep: each array (md, LVM, btrfs, a plain device as the baseline) built
//! from the scratch devices, optionally degraded, measured with the suite, and taken apart
//! again, in the order the settings were asked.

use super::*;

/// The axes of a layout sweep.
pub(super) struct Axes<'a> {
    pub layouts: &'a [array::Layout],
    pub chunks: &'a [u64],
    pub members: &'a [usize],
    pub fs: Option<&'a FsSpec>,
    pub mount_opts: Option<&'a str>,
    pub assume_clean: bool,
    pub degraded: bool,
    pub rebuild: Option<Rebuild>,
}

/// Every array of the axes, smallest member count first, each layout in the order given, each
/// chunk: the settings of a layout sweep. A plain single device comes first, the baseline
/// everything is judged against, unless the user named `single` themselves.
fn array_settings(ax: &Axes, devices: usize) -> Vec<Setting> {
    let fs = ax
        .fs
        .map(|f| (f.clone(), ax.mount_opts.map(str::to_string)));
    let counts: Vec<usize> = match ax.members.is_empty() {
        true => vec![devices],
        false => ax.members.to_vec(),
    };
    let mut out = Vec::new();
    // Like for like: btrfs layouts against btrfs on one device (a file system against a file
    // system), the others against the plain device (with the same --fs, when given).
    let all_btrfs = ax.layouts.iter().all(|l| l.kind == array::Kind::Btrfs);
    let single = match all_btrfs {
        true => array::Layout::parse("btrfs:single"),
        false => array::Layout::parse("single"),
    }
    .expect("a layout of iogauge's own")
    .remove(0);
    if !ax.layouts.contains(&single) {
        out.push(Setting {
            fill: None,
            knobs: Vec::new(),
            fs: fs.clone(),
            array: Some((single, 1, None, Health::Whole)),
        });
    }
    for &n in &counts {
        for l in ax.layouts {
            if l.kind == array::Kind::Single {
                if n == counts[0] {
                    out.push(Setting {
                        fill: None,
                        knobs: Vec::new(),
                        fs: fs.clone(),
                        array: Some((l.clone(), 1, None, Health::Whole)),
                    });
                }
                continue;
            }
            if n < l.min_members() {
                continue;
            }
            let chunks: Vec<Option<u64>> = match (l.takes_chunk(), ax.chunks.is_empty()) {
                (true, false) => ax.chunks.iter().map(|c| Some(*c)).collect(),
                _ => vec![None],
            };
            for c in chunks {
                // The same array with a member missing, and rebuilding it, beside the whole
                // one: what the database sees between a disk's failure and its replacement,
                // and while the replacement is filled.
                let states = [
                    (true, Health::Whole),
                    (ax.degraded && l.redundant(), Health::Degraded),
                    (ax.rebuild.is_some() && l.resyncs(), Health::Rebuilding),
                ];
                for (_, health) in states.into_iter().filter(|(asked, _)| *asked) {
                    out.push(Setting {
                        fill: None,
                        knobs: Vec::new(),
                        fs: fs.clone(),
                        array: Some((l.clone(), n, c, health)),
                    });
                }
            }
        }
    }
    out
}

/// A layout sweep: each array built from the scratch devices, measured (on the raw array, or
/// in the file system made on it, aligned to its stripe), taken apart with every member blank.
pub(super) fn array_sweep(
    m: &dyn Measure,
    id: &str,
    devices: &[PathBuf],
    ax: &Axes,
    hooks: &dyn crate::exec::Hooks,
) -> Result<Settings> {
    let names: Vec<String> = devices
        .iter()
        .map(|d| {
            std::fs::canonicalize(d)
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| d.display().to_string())
        })
        .collect();
    // A dry run changes nothing and holds nothing.
    let _lock = match m.dry_run() {
        true => Vec::new(),
        false => crate::ledger::lock_devices(&names)?,
    };
    crate::target::scratch(devices, "an array's member")?;
    if let Some((l, why)) = ax.layouts.iter().find_map(|l| Some((l, l.missing()?))) {
        return Err(crate::error::usage(format!(
            "--layout {}: {why}; run on a machine that has it, or leave this layout out",
            l.label()
        )));
    }
    let settings = array_settings(ax, devices.len());
    say!(
        "sweep {id}: {} layouts from {} ({}) · {}{}",
        settings.len(),
        devices.len(),
        names.join(", "),
        runs_each(m.repeats()),
        match (ax.layouts.iter().any(|l| l.resyncs()), ax.assume_clean) {
            (false, _) => "",
            (true, true) => " · md arrays not resynced (--assume-clean)",
            (true, false) => " · md arrays resynced before they are measured",
        }
    );
    for (n, s) in settings.iter().enumerate() {
        say!("  [{}/{}] {}", n + 1, settings.len(), label_of(&[], s));
    }
    if m.dry_run() {
        say!(
            "dry run: nothing is built; each layout runs {}, {}",
            m.each(),
            match ax.fs {
                Some(f) => format!("in {} made on the array, aligned to its stripe", f.fs),
                None => "on the raw array (btrfs layouts in their own file system)".to_string(),
            }
        );
        return Ok(None);
    }
    let mut out = Vec::new();
    for (n, s) in settings.iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let label = label_of(&[], s);
        let Some((layout, count, chunk, health)) = &s.array else {
            continue;
        };
        say!("[setting {}/{}] {label}", n + 1, settings.len());
        let built = array::Array::build(layout, &devices[..*count], *chunk, ax.assume_clean);
        let arr = match built {
            Ok(a) => a,
            Err(e) => {
                out.push((
                    s.clone(),
                    skipped(n, settings.len(), label, format!("{e:#}")),
                ));
                continue;
            }
        };
        let mut notes = vec![format!("sweep {id}: {}", arr.built)];
        let mut gone = None;
        if *health != Health::Whole {
            match arr.degrade() {
                Ok(m) => {
                    notes.push(match (layout.kind, health) {
                        (array::Kind::Btrfs, _) => format!(
                            "degraded: {} left out of the btrfs file system (btrfs device scan --forget, mounted -o degraded) before the measurement",
                            m.display()
                        ),
                        (_, Health::Rebuilding) => format!(
                            "rebuilding: {} failed and removed from {} (mdadm --fail, --remove), then added back as the first measurement started (mdadm --add)",
                            m.display(),
                            arr.record.device.display()
                        ),
                        _ => format!(
                            "degraded: {} failed and removed from {} (mdadm --fail, --remove) before the measurement",
                            m.display(),
                            arr.record.device.display()
                        ),
                    });
                    gone = Some(m);
                }
                Err(e) => {
                    drop(arr);
                    out.push((
                        s.clone(),
                        skipped(n, settings.len(), label, format!("{e:#}")),
                    ));
                    continue;
                }
            }
        }
        // Where the suite runs: the btrfs file system the array is, a file system made on the
        // array (aligned to its stripe), or the raw array.
        let mounted = match (layout.kind, &s.fs) {
            (array::Kind::Btrfs, _) => {
                let opts = match (&gone, ax.mount_opts) {
                    (None, o) => o.map(str::to_string),
                    (Some(_), None) => Some("degraded".to_string()),
                    (Some(_), Some(o)) => Some(format!("{o},degraded")),
                };
                fs::Mounted::existing(
                    &arr.record.device,
                    "btrfs",
                    arr.record.uuid.clone(),
                    opts.as_deref(),
                )
                .and_then(|m| match &gone {
                    Some(g) => arr.left_out(g).map(|()| m),
                    None => Ok(m),
                })
                .map(Some)
            }
            (_, Some((f, o))) => {
                let spec = aligned(f, arr.geometry());
                if spec.mkfs_opts.len() > f.mkfs_opts.len() {
                    notes.push(format!(
                        "{} made aligned to the array: {}",
                        f.fs,
                        spec.mkfs_opts[f.mkfs_opts.len()..].join(" ")
                    ));
                }
                fs::Mounted::make(&arr.record.device, &spec, o.as_deref()).map(Some)
            }
            (_, None) => Ok(None),
        };
        // What was built, said as it is done (and kept in the run's notes).
        for note in &notes {
            say!("  {note}");
        }
        let mounted = match mounted {
            Ok(m) => m,
            Err(e) => {
                drop(arr);
                out.push((
                    s.clone(),
                    skipped(n, settings.len(), label, format!("{e:#}")),
                ));
                continue;
            }
        };
        let mut params = BTreeMap::from([
            ("layout".to_string(), layout.label()),
            ("layout.members".to_string(), count.to_string()),
        ]);
        if let Some(c) = chunk.filter(|_| layout.takes_chunk()) {
            params.insert("layout.chunk".into(), units::bs_label(c));
        }
        if let Some((f, _)) = &s.fs {
            params.insert("fs".into(), f.fs.clone());
        }
        let at = match &mounted {
            Some(d) => At::new(id, &label, params, Some(d.dir.clone()), notes),
            None => At {
                raw: true,
                ..At::new(id, &label, params, Some(arr.record.device.clone()), notes)
            },
        };
        let rebuilding = match (health, &gone) {
            (Health::Rebuilding, Some(g)) => Some(super::rebuild::Rebuilding::new(
                hooks,
                &arr.record.device,
                g,
                ax.rebuild.and_then(|r| r.speed_kib),
            )),
            _ => None,
        };
        let doc = match rebuilding {
            Some(Ok(r)) => m.measure(at, &r),
            Some(Err(e)) => Err(e),
            None => m.measure(at, hooks),
        };
        drop(mounted);
        drop(arr);
        out.push((s.clone(), outcome(n, settings.len(), label, doc)?));
    }
    Ok(Some((Vec::new(), out)))
}

/// `f` with the options that align it to an array's stripe (stripe unit `chunk`, `data`
/// members): ext2/3/4's stride and stripe width in its blocks, xfs's su and sw. Unchanged
/// for other file systems and for arrays without a stripe.
fn aligned(f: &FsSpec, geometry: Option<(u64, usize)>) -> FsSpec {
    let mut spec = f.clone();
    let Some((chunk, data)) = geometry else {
        return spec;
    };
    match f.fs.as_str() {
        // The user's own stride is theirs to get right (the misalignment finding checks it).
        "ext2" | "ext3" | "ext4" if f.mkfs_opts.iter().any(|o| o.contains("stride")) => {}
        "ext2" | "ext3" | "ext4" if chunk >= 4096 => {
            // Stride and stripe width count file-system blocks, and mke2fs picks 1 KiB blocks
            // on a file system under 512 MiB (mke2fs.conf's "small"): the block size is set
            // (4 KiB unless the user's options name one) so that the stride means the chunk.
            let given = spec
                .mkfs_opts
                .iter()
                .position(|o| o == "-b")
                .and_then(|i| spec.mkfs_opts.get(i + 1))
                .and_then(|b| b.parse::<u64>().ok());
            let block = given.unwrap_or(4096);
            if given.is_none() {
                spec.mkfs_opts.push("-b".into());
                spec.mkfs_opts.push("4096".into());
            }
            let stride = chunk / block;
            if stride > 0 {
                spec.mkfs_opts.push("-E".into());
                spec.mkfs_opts.push(format!(
                    "stride={stride},stripe_width={}",
                    stride * data as u64
                ));
            }
        }
        "xfs" => {
            spec.mkfs_opts.push("-d".into());
            spec.mkfs_opts
                .push(format!("su={}k,sw={data}", chunk / 1024));
        }
        _ => {}
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext4(opts: &[&str]) -> FsSpec {
        FsSpec {
            fs: "ext4".into(),
            mkfs_opts: opts.iter().map(|o| o.to_string()).collect(),
        }
    }

    /// A 512 MiB md raid0 of four 128 MiB disks got 1 KiB blocks from mke2fs and a stride of 16
    /// meant for 4 KiB ones: 16 KiB against a 64 KiB chunk, which the misalignment finding
    /// named. The block size is now given with the stride, or the user's is counted in.
    #[test]
    fn the_stride_counts_the_blocks_the_file_system_is_made_with() {
        let a = aligned(&ext4(&[]), Some((64 << 10, 4)));
        assert_eq!(
            a.mkfs_opts,
            ["-b", "4096", "-E", "stride=16,stripe_width=64"]
        );
        let a = aligned(&ext4(&["-b", "1024"]), Some((64 << 10, 4)));
        assert_eq!(
            a.mkfs_opts,
            ["-b", "1024", "-E", "stride=64,stripe_width=256"]
        );
        // A chunk smaller than the user's block: no stride at all rather than a stride of 0.
        let a = aligned(&ext4(&["-b", "65536"]), Some((16 << 10, 2)));
        assert_eq!(a.mkfs_opts, ["-b", "65536"]);
        assert_eq!(aligned(&ext4(&[]), None).mkfs_opts, Vec::<String>::new());
        let own = ext4(&["-E", "stride=3,stripe_width=7"]);
        assert_eq!(aligned(&own, Some((64 << 10, 4))).mkfs_opts, own.mkfs_opts);
    }
}
