//! What a DBA copies to a database server: the static binary (packaging/build-static) and the
//! Debian package (packaging/build-deb), both built by .ci/run beside the other tests, these
//! tests running once they are built. The binary runs in a root that holds nothing but itself
//! (no library, no NSS module, no /etc), stores runs in its bundled SQLite, and runs PostgreSQL
//! (which looks its user up); the package installs into a root of its own with `dpkg --root`,
//! and its man pages, completions and binary work there.

use crate::common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).to_path_buf()
}

/// The static binary, or `None` (said, and a failure under CI=true) when it was not built.
fn static_binary() -> Option<PathBuf> {
    let p = target_dir().join("x86_64-unknown-linux-gnu/release/iogauge");
    if !p.exists() {
        skip("no static binary: build it first with packaging/build-static");
        return None;
    }
    Some(p)
}

/// A root directory holding only what the caller puts there, with /proc, /sys and /dev of the
/// machine bound in (iogauge reads the kernel's view of CPUs and devices); unbound on drop.
struct Root {
    dir: tempfile::TempDir,
    bound: Vec<PathBuf>,
}

impl Root {
    fn new() -> Root {
        let dir = tempfile::tempdir().unwrap();
        let mut bound = Vec::new();
        for d in ["proc", "sys", "dev"] {
            let at = dir.path().join(d);
            std::fs::create_dir_all(&at).unwrap();
            sh("mount", &["--bind", &format!("/{d}"), at.to_str().unwrap()]);
            bound.push(at);
        }
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        Root { dir, bound }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `bin` (a path inside the root) run there with `args`, as root, with no environment but
    /// the results database's path.
    fn run(&self, bin: &str, args: &[&str]) -> std::process::Output {
        output_within(
            Command::new("/usr/sbin/chroot")
                .arg(self.path())
                .arg(bin)
                .args(args)
                .env_clear()
                .env("IOGAUGE_DB", "/tmp/results.db")
                .env("IOGAUGE_RUN_DIR", "/tmp/run"),
            DEADLINE,
        )
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        for b in self.bound.iter().rev() {
            let _ = Command::new("umount").arg("-l").arg(b).status();
        }
    }
}

/// `suite quick`, short, on a file in the root, stored and listed.
fn quick_in(root: &Root, bin: &str) {
    let out = root.run(
        bin,
        &[
            "suite",
            "quick",
            "/tmp/t",
            "--size",
            "16m",
            "--cell-time",
            "200ms",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Random read and write"),
        "{err}"
    );
    let list = root.run(bin, &["list"]);
    assert!(list.status.success());
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("quick"),
        "{}",
        String::from_utf8_lossy(&list.stdout)
    );
}

/// Launched by mpirun as one of several ranks, the binary a DBA copies (built without MPI, which
/// stays a feature of the dynamic build) refuses rather than running alone N times over (issue
/// 25). Judged on the static binary, so it runs whichever features the test build has.
#[test]
fn the_static_binary_refuses_to_be_one_of_many_ranks() {
    let Some(bin) = static_binary() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin)
        .args(["run", "--size", "8m", "--time", "1s", "--no-store"])
        .current_dir(dir.path())
        .env("IOGAUGE_RUN_DIR", own_run_dir(dir.path()))
        .env("OMPI_COMM_WORLD_SIZE", "3")
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--features mpi"), "{err}");
    let made = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-test"))
        .count();
    assert_eq!(made, 0, "a test file was made");
}

/// The static binary is not dynamic (ldd, and no ELF interpreter), runs `suite quick` in a
/// root that holds nothing but itself, and runs `db pgbench` on this machine, which looks the
/// postgres user up in /etc/passwd.
#[test]
fn the_static_binary_runs_with_nothing_beside_it() {
    needs_root!();
    let Some(bin) = static_binary() else { return };
    let ldd = Command::new("ldd").arg(&bin).output().unwrap();
    let said =
        String::from_utf8_lossy(&ldd.stdout).to_string() + &String::from_utf8_lossy(&ldd.stderr);
    assert!(
        said.contains("not a dynamic executable") || said.contains("statically linked"),
        "{said}"
    );
    let elf = std::fs::read(&bin).unwrap();
    assert!(
        !elf.windows(b"ld-linux".len())
            .any(|w| w == b"ld-linux-x86-64.so"),
        "the binary names a dynamic loader"
    );
    let root = Root::new();
    std::fs::copy(&bin, root.path().join("iogauge")).unwrap();
    quick_in(&root, "/iogauge");
    // PostgreSQL runs as its own user, looked up without NSS.
    if !std::path::Path::new("/usr/lib/postgresql").exists() {
        skip("PostgreSQL is not installed (apt-get install postgresql-15)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = output_within(
        Command::new(&bin)
            .args(["db", "pgbench"])
            .arg(&data)
            .args([
                "--scale",
                "1",
                "--clients",
                "1",
                "--time",
                "2s",
                "--storage-time",
                "1s",
            ])
            .env("IOGAUGE_DB", dir.path().join("r.db"))
            .env("IOGAUGE_RUN_DIR", dir.path().join("run")),
        DEADLINE,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("] pgbench "), "{err}");
}

/// The package installs into a root of its own (`dpkg --root`), with the binary, a man page per
/// command, the three shells' completions and the docs; the binary installed there runs
/// `suite quick` in that root, and `man` reads the installed page.
#[test]
fn the_debian_package_installs_and_runs() {
    needs_root!();
    needs_tool!("dpkg");
    let debs: Vec<PathBuf> = std::fs::read_dir(target_dir().join("debian"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "deb"))
                .collect()
        })
        .unwrap_or_default();
    let Some(deb) = debs.first() else {
        skip("no Debian package: build it first with packaging/build-deb");
        return;
    };
    let root = Root::new();
    let admin = root.path().join("var/lib/dpkg");
    std::fs::create_dir_all(admin.join("info")).unwrap();
    std::fs::create_dir_all(admin.join("updates")).unwrap();
    std::fs::write(admin.join("status"), "").unwrap();
    let out = Command::new("dpkg")
        .arg(format!("--root={}", root.path().display()))
        .args(["--force-script-chrootless", "-i"])
        .arg(deb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let has = |p: &str| root.path().join(p).exists();
    for p in [
        "usr/bin/iogauge",
        "usr/share/man/man1/iogauge.1.gz",
        "usr/share/man/man1/iogauge-run.1.gz",
        "usr/share/man/man1/iogauge-db-pgbench.1.gz",
        "usr/share/bash-completion/completions/iogauge",
        "usr/share/zsh/vendor-completions/_iogauge",
        "usr/share/fish/vendor_completions.d/iogauge.fish",
        "usr/share/doc/iogauge/README.md",
        "usr/share/doc/iogauge/arrays.md",
    ] {
        assert!(has(p), "the package has no {p}");
    }
    let man = Command::new("man")
        .arg("-M")
        .arg(root.path().join("usr/share/man"))
        .args(["-P", "cat", "iogauge-run"])
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(page.contains("iogauge-run"), "{page}");
    assert!(page.contains("--iodepth"), "{page}");
    // The pages point at the docs where the package put them.
    let fio = Command::new("zcat")
        .arg(root.path().join("usr/share/man/man1/iogauge-fio.1.gz"))
        .output()
        .unwrap();
    let fio = String::from_utf8_lossy(&fio.stdout);
    assert!(fio.contains("/usr/share/doc/iogauge/fio.md"), "{fio}");
    assert!(!fio.contains("docs/"), "{fio}");
    assert!(has("usr/share/doc/iogauge/fio.md"));
    quick_in(&root, "/usr/bin/iogauge");
}
