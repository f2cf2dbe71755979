//! A throwaway PostgreSQL cluster on the storage under test: found, created with initdb,
//! started on a private Unix socket with TCP off, and always stopped and removed — on a normal
//! end, an error, a panic (by `Drop`) and a second Ctrl-C (by an `interrupt` hook). Nothing of
//! any other PostgreSQL on the machine is touched: every tool is given the cluster's socket
//! directory and the `PG*` environment is cleared.
//!
//! initdb and the server refuse to run as root, so when iogauge is root every PostgreSQL tool
//! runs as an unprivileged user (`postgres` if it exists, else `nobody`), the cluster directory
//! is that user's, and the user is named in the output.

use super::cgroup::{oom_kills, Cgroup};
pub use super::owner::{
    check_reachable_by, owner, owner_among, read_back, remove_dirs, Dir, Owner,
};
use super::owner::{debug_plant, ServerRecord};
use super::process::last_lines;
use crate::error::usage;
use anyhow::{anyhow, Context, Result};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod settings;
mod undo;

use settings::{conf_string, include_own_conf, refused_setting, server_said, write_conf};
pub use settings::{owns, setting_name};
pub use undo::PgCluster;

/// The tools a run needs, all from one installation.
const TOOLS: [&str; 5] = ["initdb", "pg_ctl", "postgres", "pgbench", "psql"];
/// The port names the socket file; with a private socket directory no other server shares it.
pub const PORT: u16 = 5432;
/// The superuser initdb creates, whatever the operating-system user.
pub const ROLE: &str = "iogauge";
/// The longest Unix socket path (sun_path holds 108 bytes with its NUL).
const SOCKET_PATH_MAX: usize = 107;
/// How long pg_ctl waits for the server to start or stop before iogauge gives up on it.
const PG_CTL_WAIT: Duration = Duration::from_secs(120);
/// Variables through which libpq and the server tools would find another server.
const PG_ENV: [&str; 16] = [
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGDATABASE",
    "PGUSER",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGOPTIONS",
    "PGDATA",
    "PGSSLMODE",
    "PGAPPNAME",
    "PGTZ",
    "PGCONNECT_TIMEOUT",
    "PGTARGETSESSIONATTRS",
];

/// One PostgreSQL installation's programs.
#[derive(Clone, Debug)]
pub struct PgBin {
    pub dir: PathBuf,
    /// As `pg_ctl --version` says it, e.g. "15.18 (Debian 15.18-0+deb12u1)".
    pub version: String,
}

/// `--pg-bin DIR`, else the installation whose `pg_ctl` is on PATH, else the newest
/// /usr/lib/postgresql/*/bin (Debian and Ubuntu keep the server programs off PATH).
pub fn find(pg_bin: Option<&Path>) -> Result<PgBin> {
    let complete = |d: &Path| TOOLS.iter().all(|t| d.join(t).is_file());
    let dir = match pg_bin {
        Some(d) => {
            let missing: Vec<&str> = TOOLS
                .iter()
                .copied()
                .filter(|t| !d.join(t).is_file())
                .collect();
            if !missing.is_empty() {
                return Err(usage(format!(
                    "--pg-bin {}: {} not found there; give the directory holding PostgreSQL's initdb, pg_ctl, postgres, pgbench and psql",
                    d.display(),
                    missing.join(", ")
                )));
            }
            d.to_path_buf()
        }
        None => {
            // A pg_ctl on PATH may be a link into an installation (Debian's /usr/local/bin
            // links, pg_wrapper); the installation is where it really lives.
            let on_path = std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|d| std::fs::canonicalize(d.join("pg_ctl")).ok())
                .filter_map(|p| p.parent().map(Path::to_path_buf))
                .find(|d| complete(d));
            let mut installed: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    let v = e.file_name().to_str()?.parse::<u32>().ok()?;
                    Some((v, e.path().join("bin")))
                })
                .filter(|(_, d)| complete(d))
                .collect();
            installed.sort();
            on_path
                .or_else(|| installed.pop().map(|(_, d)| d))
                .ok_or_else(|| {
                    anyhow!(
                        "PostgreSQL not found (no pg_ctl on PATH, nothing in /usr/lib/postgresql/*/bin); install it (Debian: apt-get install postgresql) or give --pg-bin DIR"
                    )
                })?
        }
    };
    let out = Command::new(dir.join("pg_ctl"))
        .arg("--version")
        .output()
        .with_context(|| format!("running {}", dir.join("pg_ctl").display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text
        .trim()
        .strip_prefix("pg_ctl (PostgreSQL) ")
        .unwrap_or(text.trim())
        .to_string();
    Ok(PgBin { dir, version })
}

/// What undoes a cluster: shared by `Drop` and the second-signal hook.
#[derive(Clone, Debug)]
struct Teardown {
    bin: PathBuf,
    owner: Owner,
    data: PathBuf,
    /// Directories iogauge created, removed unless kept.
    dirs: Vec<PathBuf>,
    keep: bool,
    cgroup: Option<Cgroup>,
    /// Its entry in the crash ledger as it stands (none when kept), taken out once the rest is
    /// undone, by `Drop` and a second Ctrl-C alike (else `clean` named a cluster already gone).
    entry: Option<crate::ledger::Entry>,
}

impl Teardown {
    fn run(&self, gently: bool) {
        // A server that was killed left its pid file: there is nothing to stop.
        let gone = super::process::pid_file(&self.data.join("postmaster.pid"))
            .is_some_and(|(_, alive)| !alive);
        if self.data.join("postmaster.pid").exists() && !gone {
            let stop = |mode: &str| {
                command(&self.bin, "pg_ctl", &self.owner)
                    .args(["stop", "-w", "-m", mode, "-t", "60", "-D"])
                    .arg(&self.data)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            // A fast stop first when the run ended normally; else, or once the OOM killer was in
            // its cgroup (a fast stop then waited out its 60 s, 2 CI runs in 6), an immediate one.
            let oom = self.cgroup.as_ref().and_then(|c| oom_kills(&c.dir));
            let stopped = (gently && oom.is_none() && stop("fast")) || stop("immediate");
            // A server that died while it was asked to stop needs no stopping either.
            let died = || {
                super::process::pid_file(&self.data.join("postmaster.pid"))
                    .is_none_or(|(pid, _)| super::process::ended(pid))
            };
            if !stopped && !died() {
                say!(
                    "warning: the PostgreSQL server of {} did not stop; stop it with pg_ctl stop -D {}",
                    self.data.display(),
                    self.data.display()
                );
            }
        }
        if let Some(cg) = &self.cgroup {
            cg.remove();
        }
        if !self.keep {
            remove_dirs(&self.dirs);
        }
        if let Some(e) = &self.entry {
            crate::ledger::remove(e);
        }
    }
}

/// A command of the installation, run as the cluster's owner, seeing no other server.
fn command(bin: &Path, tool: &str, owner: &Owner) -> Command {
    let mut c = Command::new(bin.join(tool));
    for v in PG_ENV {
        c.env_remove(v);
    }
    if let Some((uid, gid)) = owner.ids {
        c.uid(uid).gid(gid);
    }
    c.stdin(Stdio::null());
    c
}

/// Where and how a throwaway server lives, PostgreSQL's or MariaDB's: its user, the directory
/// under test, its log's own directory (WAL, redo), its memory cgroup's limit, and whether its
/// directory outlives the run.
#[derive(Clone, Copy, Debug)]
pub struct Site<'a> {
    pub owner: &'a Owner,
    pub target: &'a Path,
    pub log_dir: Option<&'a Path>,
    pub memory_limit: Option<u64>,
    pub keep: bool,
}

/// A cluster iogauge created; stopped and removed when dropped (unless kept).
pub struct Cluster {
    pub bin: PgBin,
    pub owner: Owner,
    /// The directory of iogauge's own under the target: data, logs and the socket.
    pub work: PathBuf,
    pub data: PathBuf,
    pub wal: Option<PathBuf>,
    pub socket_dir: PathBuf,
    pub log: PathBuf,
    /// The option through which the user gives settings, named when the server refuses one.
    pub setting_flag: &'static str,
    /// `work` and `data` held open: both are the server's account's, so every file iogauge
    /// writes or reads there is reached from these (see `owner`). Set by `create`.
    work_dir: Option<Dir>,
    data_dir: Option<Dir>,
    teardown: Teardown,
    hook: u64,
}

impl Cluster {
    /// Creates `iogauge-pg-PID` under the site's target (and `iogauge-pg-PID-wal` under its log
    /// directory), runs initdb there, and prepares its memory cgroup for the server.
    pub fn create(bin: &PgBin, site: &Site) -> Result<Cluster> {
        let Site {
            owner,
            target,
            log_dir: wal_dir,
            memory_limit,
            keep,
        } = *site;
        let name = format!("iogauge-pg-{}", std::process::id());
        let work = std::path::absolute(target)?.join(&name);
        // Written down before anything exists, so a killed run's cluster, server and cgroup
        // are named by the next command and removed by `iogauge clean`.
        // Directories and the cgroup are added as each is made (`publish`), each directory
        // with its device and inode: `clean` never touches one iogauge did not make.
        let planned =
            crate::ledger::Entry::of(&PgCluster(ServerRecord::of(&work.join("data"), &[], None)));
        if !keep {
            crate::ledger::add(planned.clone());
        }
        let mut teardown = Teardown {
            bin: bin.dir.clone(),
            owner: owner.clone(),
            data: work.join("data"),
            dirs: Vec::new(),
            keep,
            cgroup: None,
            entry: (!keep).then(|| planned.clone()),
        };
        let private_dir = |d: &Path, t: &mut Teardown| -> Result<Dir> {
            let dir = Dir::create(d)?;
            t.dirs.push(d.to_path_buf());
            dir.make_private(owner)?;
            Ok(dir)
        };
        // Registered before the first directory exists, so every later failure cleans up.
        let hook_td = std::sync::Arc::new(std::sync::Mutex::new(None::<Teardown>));
        let hook = {
            let td = hook_td.clone();
            crate::interrupt::register_hook(Box::new(move || {
                if let Some(t) = td.lock().ok().and_then(|g| g.clone()) {
                    t.run(false);
                }
            }))
        };
        let mut cluster = Cluster {
            bin: bin.clone(),
            owner: owner.clone(),
            data: work.join("data"),
            wal: None,
            socket_dir: work.clone(),
            log: work.join("server.log"),
            setting_flag: "--pg-setting",
            work: work.clone(),
            work_dir: None,
            data_dir: None,
            teardown: teardown.clone(),
            hook,
        };
        let publish = |c: &mut Cluster, t: &Teardown| {
            let mut t = t.clone();
            if !t.keep {
                let now = crate::ledger::Entry::of(&PgCluster(ServerRecord::of(
                    &c.data,
                    &t.dirs,
                    t.cgroup.as_ref().map(|g| g.dir.clone()),
                )));
                if let Some(old) = &c.teardown.entry {
                    crate::ledger::replace(old, now.clone());
                }
                t.entry = Some(now);
            }
            c.teardown = t.clone();
            if let Ok(mut g) = hook_td.lock() {
                *g = Some(t);
            }
        };
        cluster.work_dir = Some(private_dir(&work, &mut teardown)?);
        publish(&mut cluster, &teardown);
        // Inside `work`, which is the server's account's already: made from its handle.
        let data_dir = cluster.work_dir()?.create_in("data", owner)?;
        teardown.dirs.push(cluster.data.clone());
        publish(&mut cluster, &teardown);
        if let Some(w) = wal_dir {
            let wal = std::path::absolute(w)?.join(format!("{name}-wal"));
            private_dir(&wal, &mut teardown)?;
            publish(&mut cluster, &teardown);
            cluster.wal = Some(wal);
        }
        // A socket path too long for sun_path goes to a private directory in /tmp instead.
        if work.join(format!(".s.PGSQL.{PORT}")).as_os_str().len() > SOCKET_PATH_MAX {
            let sock = crate::target::files::temp_dir()?.join(format!("{name}-socket"));
            private_dir(&sock, &mut teardown)?;
            publish(&mut cluster, &teardown);
            cluster.socket_dir = sock;
        }
        if let Some(limit) = memory_limit {
            teardown.cgroup = Some(Cgroup::create(&name, limit, owner)?);
            publish(&mut cluster, &teardown);
        }
        let mut initdb = cluster.cmd("initdb");
        initdb
            .args(["--auth=trust", "--encoding=UTF8", "--no-instructions"])
            .arg(format!("--username={ROLE}"))
            .arg("-D")
            .arg(&cluster.data);
        if let Some(w) = &cluster.wal {
            initdb.arg("--waldir").arg(w);
        }
        let out = initdb.output().context("running initdb")?;
        if !out.status.success() {
            return Err(anyhow!(
                "initdb failed in {}: {}",
                cluster.data.display(),
                last_lines(&String::from_utf8_lossy(&out.stderr), 3)
            ));
        }
        debug_plant(&data_dir, "initdb", &["postgresql.conf"]);
        include_own_conf(&data_dir, owner)?;
        cluster.data_dir = Some(data_dir);
        Ok(cluster)
    }

    /// The cluster an earlier run kept (`--keep`) in its directory `work`, as it was left: to
    /// be started and stopped again. Nothing of it is removed afterwards, and no crash entry
    /// is made: it is the user's now.
    pub fn reopen(bin: &PgBin, owner: &Owner, work: &Path) -> Result<Cluster> {
        let name = work
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let data = work.join("data");
        let teardown = Teardown {
            bin: bin.dir.clone(),
            owner: owner.clone(),
            data: data.clone(),
            dirs: Vec::new(),
            keep: true,
            cgroup: None,
            entry: None,
        };
        let hook = {
            let t = teardown.clone();
            crate::interrupt::register_hook(Box::new(move || t.run(false)))
        };
        // Where `create` put the socket, by the same rule.
        let socket_dir =
            match work.join(format!(".s.PGSQL.{PORT}")).as_os_str().len() > SOCKET_PATH_MAX {
                true => std::env::temp_dir().join(format!("{name}-socket")),
                false => work.to_path_buf(),
            };
        Ok(Cluster {
            bin: bin.clone(),
            owner: owner.clone(),
            work: work.to_path_buf(),
            data: data.clone(),
            wal: None,
            socket_dir,
            log: work.join("server.log"),
            setting_flag: "--db-setting",
            work_dir: Some(Dir::open(work)?),
            data_dir: Some(Dir::open(&data)?),
            teardown,
            hook,
        })
    }

    /// A tool of the installation, as the cluster's owner, with no other server in sight.
    pub fn cmd(&self, tool: &str) -> Command {
        let mut c = command(&self.bin.dir, tool, &self.owner);
        c.current_dir(&self.work).env("HOME", &self.work);
        c
    }

    /// Another libpq client (sysbench) as the invoking user, with no other server in sight:
    /// the caller points it at [`Cluster::socket_dir`], [`PORT`] and [`ROLE`].
    pub fn libpq_client(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        for v in PG_ENV {
            c.env_remove(v);
        }
        c.current_dir(&self.work).stdin(Stdio::null());
        c
    }

    /// A client tool pointed at this cluster's socket as its superuser.
    pub fn client(&self, tool: &str) -> Command {
        let mut c = self.cmd(tool);
        c.arg("-h")
            .arg(&self.socket_dir)
            .arg("-p")
            .arg(PORT.to_string())
            .arg("-U")
            .arg(ROLE);
        c
    }

    /// Writes the server's settings for the next start: the user's, then the ones that keep
    /// the server private (which the user cannot override).
    pub fn configure(&self, settings: &[(String, String)]) -> Result<()> {
        let mut text = String::from("# written by iogauge for this run\n");
        for (k, v) in settings {
            text.push_str(&format!("{k} = {}\n", conf_string(v)));
        }
        // The timeline reads each checkpoint's start and end from the log, in UTC.
        text.push_str("log_checkpoints = on\nlog_timezone = 'UTC'\n");
        text.push_str(&format!(
            "listen_addresses = ''\nunix_socket_directories = {}\nport = {PORT}\n",
            conf_string(&self.socket_dir.display().to_string())
        ));
        let data = self.data_dir()?;
        debug_plant(data, "start", &["iogauge.conf"]);
        write_conf(data, &self.owner, &text)
    }

    /// The data directory held open; `create` sets it before it returns the cluster.
    fn data_dir(&self) -> Result<&Dir> {
        self.data_dir
            .as_ref()
            .ok_or_else(|| anyhow!("bug: the cluster's data directory is not open"))
    }

    /// The cluster's own directory held open (its logs and the clients' output go there).
    pub fn work_dir(&self) -> Result<&Dir> {
        self.work_dir
            .as_ref()
            .ok_or_else(|| anyhow!("bug: the cluster's directory is not open"))
    }

    /// Starts the server and waits until it accepts connections. A server that does not start
    /// is one error quoting what its log says, read now: the log goes with the cluster when the
    /// run ends, so the error never sends the user to it (unless the cluster is kept). A
    /// setting of `asked` (the user's --pg-setting) that the server refused is a usage error.
    pub fn start(&self, asked: &[(String, String)]) -> Result<()> {
        let mut c = match &self.teardown.cgroup {
            // The launcher enters the cgroup itself, so the postmaster and every backend it
            // forks are inside, and iogauge and pgbench are not.
            Some(cg) => {
                let mut sh = command(Path::new("/bin"), "sh", &self.owner);
                sh.current_dir(&self.work).env("HOME", &self.work);
                cg.launcher(sh, &self.bin.dir.join("pg_ctl"))
            }
            None => self.cmd("pg_ctl"),
        };
        c.args(["start", "-w", "-t"])
            .arg(PG_CTL_WAIT.as_secs().to_string())
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(&self.log)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let out = c.output().context("running pg_ctl start")?;
        if out.status.success() {
            return self.check_private();
        }
        let log = self
            .work_dir()?
            .read_servers("server.log", &self.owner)
            .unwrap_or_default();
        if let Some(e) = refused_setting(&log, asked, self.setting_flag) {
            return Err(e);
        }
        let said = server_said(&log);
        let why = match said.is_empty() {
            true => last_lines(&String::from_utf8_lossy(&out.stderr), 3),
            false => said[said.len().saturating_sub(3)..].join(" | "),
        };
        match self.teardown.keep {
            true => Err(anyhow!(
                "the PostgreSQL server did not start (its log, kept: {}): {why}",
                self.log.display()
            )),
            false => Err(anyhow!("the PostgreSQL server did not start: {why}")),
        }
    }

    /// The postmaster's pid, from the first line of its postmaster.pid.
    pub fn postmaster_pid(&self) -> Option<u32> {
        self.data_dir()
            .ok()?
            .read_servers("postmaster.pid", &self.owner)
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }

    /// How long the server's log is now: a mark for [`Cluster::log_since`].
    pub fn log_len(&self) -> u64 {
        self.work_dir()
            .and_then(|d| d.open_servers("server.log", &self.owner))
            .and_then(|f| Ok(f.metadata()?.len()))
            .unwrap_or(0)
    }

    /// The server log from byte `from` on: what it said during one measurement.
    pub fn log_since(&self, from: u64) -> String {
        use std::io::{Read, Seek};
        let mut text = String::new();
        if let Ok(mut f) = self
            .work_dir()
            .and_then(|d| d.open_servers("server.log", &self.owner))
        {
            if f.seek(std::io::SeekFrom::Start(from)).is_ok() {
                let _ = f.read_to_string(&mut text);
            }
        }
        text
    }

    /// The started server must listen on its private socket alone (`common::check_private`);
    /// when it does not, or its pid cannot be read to ask, it is stopped and that is the error.
    fn check_private(&self) -> Result<()> {
        let pid = self.postmaster_pid();
        let socket = self.socket_dir.join(format!(".s.PGSQL.{PORT}"));
        let checked = match pid {
            Some(pid) => super::process::check_private("PostgreSQL", self.setting_flag, pid, &socket),
            None => Err(anyhow!(
                "the PostgreSQL server's pid could not be read from its postmaster.pid, so what it listens on could not be checked; iogauge stopped it"
            )),
        };
        if checked.is_err() {
            let _ = self.stop();
        }
        checked
    }

    /// Stops the server, fast (connections cut, a shutdown checkpoint).
    pub fn stop(&self) -> Result<()> {
        let out = self
            .cmd("pg_ctl")
            .args(["stop", "-w", "-m", "fast", "-t"])
            .arg(PG_CTL_WAIT.as_secs().to_string())
            .arg("-D")
            .arg(&self.data)
            .output()
            .context("running pg_ctl stop")?;
        match out.status.success() {
            true => Ok(()),
            false => Err(anyhow!(
                "the PostgreSQL server did not stop: {}",
                last_lines(&String::from_utf8_lossy(&out.stderr), 2)
            )),
        }
    }

    /// One SQL statement's rows through psql, unaligned, fields split by `|`.
    pub fn query(&self, sql: &str) -> Result<String> {
        self.query_in("postgres", sql)
    }

    /// [`Cluster::query`] in the database `db`.
    /// Why the server is not running, when it is not: its postmaster is gone (killed, or
    /// crashed), or it was stopped. Said in place of the client's "connection refused".
    pub fn down(&self) -> Option<String> {
        let log = super::process::last_lines(&self.log_since(0), 2);
        let log = match log.is_empty() {
            true => String::new(),
            false => format!(
                "; the last lines of its log: {}",
                crate::units::quoted(&log, 300)
            ),
        };
        match super::process::pid_file(&self.data.join("postmaster.pid")) {
            Some((pid, true)) if !super::process::ended(pid) => None,
            Some((pid, _)) => Some(format!(
                "the PostgreSQL server ended during the run: its postmaster (pid {pid}) is gone, killed or crashed (the kernel log says whether the OOM killer took it){log}"
            )),
            None => Some(format!("the PostgreSQL server is not running{log}")),
        }
    }

    pub fn query_in(&self, db: &str, sql: &str) -> Result<String> {
        let out = self
            .client("psql")
            .args([
                "-X",
                "-A",
                "-t",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                db,
                "-c",
            ])
            .arg(sql)
            .output()
            .context("running psql")?;
        if !out.status.success() {
            if let Some(why) = self.down() {
                return Err(anyhow!(why));
            }
            return Err(anyhow!(
                "psql failed on `{sql}`: {}",
                last_lines(&String::from_utf8_lossy(&out.stderr), 2)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Where the memory cgroup is, when the server runs in one.
    pub fn cgroup(&self) -> Option<&Path> {
        self.teardown.cgroup.as_ref().map(|c| c.dir.as_path())
    }

    pub fn kept(&self) -> bool {
        self.teardown.keep
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.teardown.run(true);
        crate::interrupt::unregister_hook(self.hook);
    }
}

#[cfg(test)]
mod tests {
    use super::super::owner::tests::{look_at, secret, test_owner};
    use super::*;
    use std::os::unix::fs::{symlink, MetadataExt};

    #[test]
    fn the_configuration_is_never_written_through_a_link() {
        let t = tempfile::tempdir().unwrap();
        let (secret, before) = secret(t.path());
        let owner = test_owner();
        let data = Dir::create(&t.path().join("data")).unwrap();
        data.make_private(&owner).unwrap();
        // Before a start: a link at iogauge.conf is replaced by iogauge's own file.
        symlink(&secret, t.path().join("data/iogauge.conf")).unwrap();
        write_conf(&data, &owner, "port = 5432\n").unwrap();
        assert_eq!(look_at(&secret), before);
        let conf = t.path().join("data/iogauge.conf");
        let md = std::fs::symlink_metadata(&conf).unwrap();
        assert!(md.is_file());
        if let Some((uid, _)) = owner.ids {
            assert_eq!(md.uid(), uid);
        }
        assert_eq!(std::fs::read_to_string(&conf).unwrap(), "port = 5432\n");
        // After initdb: a link at postgresql.conf is refused, in one line.
        symlink(&secret, t.path().join("data/postgresql.conf")).unwrap();
        let e = include_own_conf(&data, &owner).unwrap_err();
        assert!(!format!("{e:#}").contains('\n'), "{e:#}");
        assert_eq!(look_at(&secret), before);
        // initdb's own file gets the include, in a file iogauge made.
        std::fs::remove_file(t.path().join("data/postgresql.conf")).unwrap();
        let mut f = data.create_new("postgresql.conf", Some(&owner)).unwrap();
        std::io::Write::write_all(&mut f, b"shared_buffers = 128MB\n").unwrap();
        include_own_conf(&data, &owner).unwrap();
        let text = std::fs::read_to_string(t.path().join("data/postgresql.conf")).unwrap();
        assert!(text.starts_with("shared_buffers = 128MB\n"), "{text}");
        assert!(
            text.ends_with("include_if_exists = 'iogauge.conf'\n"),
            "{text}"
        );
    }
}
