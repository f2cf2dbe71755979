//! The operating-system user a database server runs as (never root), and the directories it
//! may reach and that are removed after it.

use crate::error::usage;
use anyhow::{anyhow, Context, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The operating-system user the cluster belongs to.
#[derive(Clone, Debug)]
pub struct Owner {
    pub name: String,
    /// Set when iogauge is root and runs PostgreSQL as someone else.
    pub ids: Option<(u32, u32)>,
}

/// The invoking user, or when root an unprivileged one: initdb refuses root.
pub fn owner() -> Result<Owner> {
    owner_among(&["postgres", "nobody"], "PostgreSQL (initdb refuses root)")
}

/// The invoking user, or when root the first of `names` that exists: database servers refuse
/// to run as root. `server` names the server in the error.
pub fn owner_among(names: &[&str], server: &str) -> Result<Owner> {
    if !crate::db::is_root() {
        let name = std::env::var("USER").unwrap_or_else(|_| "the invoking user".into());
        return Ok(Owner { name, ids: None });
    }
    let passwd = std::fs::read_to_string("/etc/passwd").context("reading /etc/passwd")?;
    let user = |want: &str| {
        passwd.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 3 && f[0] == want)
                .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
                .flatten()
        })
    };
    for &name in names {
        if let Some(ids) = user(name) {
            return Ok(Owner {
                name: name.into(),
                ids: Some(ids),
            });
        }
    }
    Err(anyhow!(
        "running as root, and none of the users {} exists to run {server} as; create one or run iogauge as an ordinary user",
        names.join(", ")
    ))
}

/// As root, PostgreSQL runs as another user, who must be able to reach `dir`: every directory
/// above it searchable by that user. Checked before anything is created, so the error names the
/// directory to open up rather than initdb's "Permission denied".
pub fn check_reachable(dir: &Path, owner: &Owner) -> Result<()> {
    check_reachable_by(
        dir,
        owner,
        "PostgreSQL runs as user {} (initdb refuses root)",
    )
}

/// [`check_reachable`] for any server; `runs_as` says who runs it, `{}` standing for the user.
pub fn check_reachable_by(dir: &Path, owner: &Owner, runs_as: &str) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Some((uid, gid)) = owner.ids else {
        return Ok(());
    };
    let abs = std::path::absolute(dir)?;
    for d in abs.ancestors() {
        let md = std::fs::metadata(d).with_context(|| format!("looking at {}", d.display()))?;
        let mode = md.mode();
        let ok = match (md.uid() == uid, md.gid() == gid) {
            (true, _) => mode & 0o100 != 0,
            (_, true) => mode & 0o010 != 0,
            _ => mode & 0o001 != 0,
        };
        if !ok {
            return Err(usage(format!(
                "{}, who cannot enter {} (mode {:o}); allow it (chmod o+x {}) or choose another directory",
                runs_as.replace("{}", &owner.name),
                d.display(),
                mode & 0o7777,
                d.display()
            )));
        }
    }
    Ok(())
}

/// Removes the directories a server's run created, saying which could not be.
pub fn remove_dirs(dirs: &[PathBuf]) {
    for d in dirs {
        if let Err(e) = std::fs::remove_dir_all(d) {
            if e.kind() != std::io::ErrorKind::NotFound {
                say!("warning: could not remove {}: {e}", d.display());
            }
        }
    }
}

/// Makes the directory `d` iogauge just created the server's alone: mode 0700, owned by the
/// server's user.
pub fn set_private(d: &Path, owner: &Owner) -> Result<()> {
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))?;
    if let Some((uid, gid)) = owner.ids {
        std::os::unix::fs::chown(d, Some(uid), Some(gid))?;
    }
    Ok(())
}

/// `iogauge clean`'s last step for a dead run's server: its directories, only those named as
/// iogauge names them (`prefix`), each said as removed or not; whether all went.
pub fn remove_own_dirs(dirs: &[PathBuf], prefix: &str, done: &mut Vec<String>) -> bool {
    let mut ok = true;
    for d in dirs {
        let named_ours = d
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix));
        if !named_ours {
            continue;
        }
        match std::fs::remove_dir_all(d) {
            Ok(()) => done.push(format!("{} removed", d.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                ok = false;
                done.push(format!("{} could not be removed: {e}", d.display()));
            }
        }
    }
    ok
}
