//! fio's atomic=1 (issue 60: `atomic-verify.fio`): every write carries RWF_ATOMIC, stored
//! whole or not at all. Ground truth from the kernel: on xfs with reflink over a device that
//! has no atomic writes of its own (a loop device), xfs keeps a write of more than one block
//! whole by writing it elsewhere and moving the file's mapping to it (its software atomic
//! writes, Linux 6.16+), where a plain direct write overwrites the blocks in place. So the
//! file's extents (FIEMAP, as `filefrag -v` prints them) move under atomic writes of 16 KiB
//! and stay put under plain ones. A file system that offers no atomic writes (ext4 without
//! atomic-capable hardware), and a size past what xfs offers, are refused before a byte is
//! written.

use std::path::Path;

use crate::common;
use common::*;

/// The physical blocks of `file`, by logical block, as FIEMAP reports them.
fn mapping(file: &Path) -> Vec<(u64, u64, u64)> {
    let out = std::process::Command::new("filefrag")
        .arg("-v")
        .arg(file)
        .output()
        .expect("filefrag (e2fsprogs)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "   0:        0..    1023:         24..      1047:   1024:             last,eof"
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').map(str::trim).collect();
            f[0].parse::<u64>().ok()?;
            let logical = f[1].split("..").next()?.trim().parse().ok()?;
            let physical = f[2].split("..").next()?.trim().parse().ok()?;
            let len = f[3].parse().ok()?;
            Some((logical, physical, len))
        })
        .collect()
}

/// Writes 4 MiB of data into `file` and puts it on the medium, as a user's file would be.
fn user_file(file: &Path) -> Vec<u8> {
    let data: Vec<u8> = (0..4u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(file, &data).unwrap();
    std::fs::File::open(file).unwrap().sync_all().unwrap();
    data
}

fn job(dir: &Path, file: &Path, engine: &str, bs: &str, atomic: bool) -> std::process::Output {
    let text = format!(
        "[w]\nfilename={}\nrw=randwrite\nbs={bs}\ndirect=1\nioengine={engine}\niodepth=8\nsize=4m\nio_size=2m\n{}",
        file.display(),
        if atomic { "atomic=1\n" } else { "" }
    );
    std::fs::write(dir.join("w.fio"), text).unwrap();
    iogauge(
        dir,
        &["fio", "w.fio", "--no-store", "--json", "--allow-overwrite"],
    )
}

#[test]
fn atomic_writes_move_a_files_blocks_on_xfs_and_plain_ones_do_not() {
    if !is_root() {
        skip("needs root to make and mount xfs on a loop device");
        return;
    }
    let xfs = Fs::new("mkfs.xfs", &["-q", "-f", "-m", "reflink=1"], 512 << 20, "");
    let dir = tempfile::tempdir().unwrap();
    let file = xfs.path().join("table.ibd");
    for engine in ["io_uring", "psync"] {
        user_file(&file);
        let before = mapping(&file);
        let out = job(dir.path(), &file, engine, "16k", true);
        assert!(out.status.success(), "{engine}: {}", stderr_of(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["results"][0]["workload"]["atomic"], true, "{engine}");
        assert_eq!(
            doc["results"][0]["write"]["bytes"].as_u64(),
            Some(2 << 20),
            "{engine}"
        );
        let after = mapping(&file);
        assert_ne!(
            before, after,
            "{engine}: atomic writes left every block in place"
        );
        assert!(
            after.len() > before.len(),
            "{engine}: {before:?} then {after:?}"
        );
    }
    // The near miss: the same writes without atomic=1 overwrite the blocks where they are.
    user_file(&file);
    let before = mapping(&file);
    let out = job(dir.path(), &file, "io_uring", "16k", false);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["results"][0]["workload"].get("atomic").is_none());
    assert_eq!(mapping(&file), before);
    // A size past the largest xfs offers is refused before a byte is written.
    let data = user_file(&file);
    let out = job(dir.path(), &file, "io_uring", "2m", true);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("takes atomic writes of 4K to"),
        "{}",
        stderr_of(&out)
    );
    assert!(
        std::fs::read(&file).unwrap() == data,
        "the refused run wrote into the file"
    );
}

#[test]
fn atomic_writes_are_refused_where_the_file_system_offers_none() {
    if !is_root() {
        skip("needs root to make and mount ext4 on a loop device");
        return;
    }
    let ext4 = Fs::ext4(64 << 20, "");
    let dir = tempfile::tempdir().unwrap();
    let file = ext4.path().join("table.ibd");
    let data = user_file(&file);
    let out = job(dir.path(), &file, "io_uring", "16k", true);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(err.contains("offers none (statx"), "{err}");
    assert_eq!(
        err.trim()
            .lines()
            .filter(|l| l.starts_with("iogauge: error"))
            .count(),
        1,
        "{err}"
    );
    assert!(
        std::fs::read(&file).unwrap() == data,
        "the refused run wrote into the file"
    );
    // A new test file there is refused the same way, and none is left behind.
    let text = format!(
        "[w]\ndirectory={}\nrw=randwrite\nbs=16k\ndirect=1\nsize=4m\natomic=1\n",
        ext4.path().display()
    );
    std::fs::write(dir.path().join("n.fio"), text).unwrap();
    let out = iogauge(dir.path(), &["fio", "n.fio", "--no-store"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("offers none"),
        "{}",
        stderr_of(&out)
    );
    let left: Vec<_> = std::fs::read_dir(ext4.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "table.ibd" && n != "lost+found")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
