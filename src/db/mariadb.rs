//! A throwaway MariaDB server on the storage under test, the `db sysbench` counterpart of
//! `cluster`: found, created with mariadb-install-db, started on a private Unix socket with TCP
//! off, and always stopped and removed — on a normal end, an error, a panic (by `Drop`) and a
//! second Ctrl-C (by an `interrupt` hook); named in the crash ledger while it exists.
//!
//! Every server and client program gets `--no-defaults` as its first argument: without it the
//! package's /etc/mysql/my.cnf would point them at the system server's socket. mariadbd refuses
//! to run as root, so when iogauge is root the server runs as `mysql` (else `nobody`), like the
//! PostgreSQL cluster, and the clients (run as the invoking user) reach its socket all the same.

use super::cgroup::Cgroup;
use super::cluster::Site;
use super::owner::{debug_plant, read_back, remove_dirs, Dir, Owner, ServerRecord};
use super::process::{gone, last_lines};
use crate::error::usage;
use anyhow::{anyhow, Context, Result};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod settings;
mod undo;

use settings::refused_setting;
pub use settings::{owns, setting_name};
pub use undo::MyServer;

/// The longest Unix socket path (sun_path holds 108 bytes with its NUL).
const SOCKET_PATH_MAX: usize = 107;
/// How long a start or a stop may take before iogauge gives up on the server.
const SERVER_WAIT: Duration = Duration::from_secs(120);
/// How long a second Ctrl-C lets the server shut down cleanly before killing it.
const QUICK_STOP: Duration = Duration::from_secs(5);
/// How often readiness is asked: a start takes ~0.2 s, so a few polls.
const POLL: Duration = Duration::from_millis(50);
/// Variables through which the client library would find another server or password.
const MY_ENV: [&str; 5] = [
    "MYSQL_HOST",
    "MYSQL_TCP_PORT",
    "MYSQL_UNIX_PORT",
    "MYSQL_PWD",
    "MYSQL_HOME",
];
/// Defaults iogauge sets before the user's settings (which may override them): the issue's
/// O_DIRECT, and no buffer pool carried over a restart, so each ratio starts cold.
pub const DEFAULT_SETTINGS: [&str; 3] = [
    "--innodb-flush-method=O_DIRECT",
    "--innodb-buffer-pool-dump-at-shutdown=OFF",
    "--innodb-buffer-pool-load-at-startup=OFF",
];

/// The programs a run needs.
#[derive(Clone, Debug)]
pub struct MyBin {
    pub mariadbd: PathBuf,
    pub install_db: PathBuf,
    pub client: PathBuf,
    pub admin: PathBuf,
    /// As `mariadbd --version` says it, e.g. "10.11.19-MariaDB-0+deb12u1".
    pub version: String,
}

/// `tool` on PATH, else in /usr/sbin, /usr/bin or /usr/local/sbin (mariadbd is off an ordinary
/// user's PATH); missing, a usage error naming the Debian `package`.
pub fn look(tool: &str, package: &str) -> Result<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/bin", "/usr/local/sbin"].map(PathBuf::from));
    dirs.iter()
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            usage(format!(
                "{tool} not found on PATH or in /usr/sbin; install it (Debian: apt-get install {package})"
            ))
        })
}

/// The programs on PATH, and mariadbd also in /usr/sbin (off an ordinary user's PATH).
pub fn find() -> Result<MyBin> {
    let mariadbd = look("mariadbd", "mariadb-server")?;
    let bin = MyBin {
        install_db: look("mariadb-install-db", "mariadb-server")?,
        client: look("mariadb", "mariadb-client")?,
        admin: look("mariadb-admin", "mariadb-client")?,
        version: String::new(),
        mariadbd,
    };
    let out = Command::new(&bin.mariadbd)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", bin.mariadbd.display()))?;
    // "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text
        .split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .unwrap_or("?")
        .to_string();
    Ok(MyBin { version, ..bin })
}

/// What undoes a server: shared by `Drop` and the second-signal hook.
#[derive(Clone, Debug, Default)]
struct Teardown {
    /// The running server's pid.
    pid: Option<u32>,
    /// Directories iogauge created, removed unless kept.
    dirs: Vec<PathBuf>,
    keep: bool,
    /// The server's memory cgroup (`--memory-limit`), removed once it has stopped.
    cgroup: Option<Cgroup>,
    /// Its entry in the crash ledger as it stands (none when kept), taken out once the rest is
    /// undone: by `Drop` and by a second Ctrl-C alike, which otherwise left a server already
    /// gone named for the next command and `clean`.
    entry: Option<crate::ledger::Entry>,
}

impl Teardown {
    /// SIGTERM is mariadbd's clean shutdown; SIGKILL if it has not gone within `wait` (nothing
    /// of the server is kept anyway). Then the directories.
    fn run(&self, wait: Duration) {
        if let Some(pid) = self.pid {
            if !stop_pid(pid, wait) {
                say!(
                    "warning: the MariaDB server (pid {pid}) did not stop; stop it with kill -KILL {pid}"
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

/// SIGTERM, wait up to `wait` for the process to go, then SIGKILL. Whether it went.
fn stop_pid(pid: u32, wait: Duration) -> bool {
    let signal = |sig: &str| {
        let _ = Command::new("kill")
            .args([sig, &pid.to_string()])
            .stderr(Stdio::null())
            .status();
    };
    let wait_gone = |wait: Duration| {
        let until = Instant::now() + wait;
        while !gone(pid) && Instant::now() < until {
            std::thread::sleep(POLL);
        }
        gone(pid)
    };
    if gone(pid) {
        return true;
    }
    signal("-TERM");
    if wait_gone(wait) {
        return true;
    }
    signal("-KILL");
    wait_gone(Duration::from_secs(10))
}

/// A MariaDB server iogauge created; stopped and removed when dropped (unless kept).
pub struct Server {
    pub bin: MyBin,
    pub owner: Owner,
    /// The directory of iogauge's own under the target: data, logs and the socket.
    pub work: PathBuf,
    pub data: PathBuf,
    /// Where InnoDB's redo log is when `--log-dir` moved it (innodb_log_group_home_dir).
    pub redo: Option<PathBuf>,
    pub socket: PathBuf,
    pub log: PathBuf,
    /// `work` held open: it is the server's account's, so every file iogauge writes or reads
    /// there is reached from this (see `owner`). Set by `create`.
    work_dir: Option<Dir>,
    child: Option<Child>,
    teardown: Arc<Mutex<Teardown>>,
    hook: u64,
}

impl Server {
    /// Creates `iogauge-my-PID` under the site's target (and `iogauge-my-PID-log` under its log
    /// directory, for the redo log), prepares its memory cgroup for the server, and runs
    /// mariadb-install-db.
    pub fn create(bin: &MyBin, site: &Site) -> Result<Server> {
        let Site {
            owner,
            target,
            log_dir,
            memory_limit,
            keep,
        } = *site;
        let name = format!("iogauge-my-{}", std::process::id());
        let work = std::path::absolute(target)?.join(&name);
        let short_socket = crate::target::files::temp_dir()?.join(format!("{name}-socket"));
        let redo = match log_dir {
            Some(d) => Some(std::path::absolute(d)?.join(format!("{name}-log"))),
            None => None,
        };
        // Written down before anything exists, so a killed run's server, directories and
        // cgroup are named by the next command and removed by `iogauge clean`.
        // Directories and the cgroup are added as each is made (`record`), each directory
        // with its device and inode: `clean` never touches one iogauge did not make.
        let planned =
            crate::ledger::Entry::of(&MyServer(ServerRecord::of(&work.join("data"), &[], None)));
        if !keep {
            crate::ledger::add(planned.clone());
        }
        let teardown = Arc::new(Mutex::new(Teardown {
            keep,
            entry: (!keep).then(|| planned.clone()),
            ..Teardown::default()
        }));
        // Registered before the first directory exists, so every later failure cleans up.
        let hook = {
            let td = teardown.clone();
            crate::interrupt::register_hook(Box::new(move || {
                // A second Ctrl-C means "now": a clean shutdown gets a little time, then SIGKILL.
                if let Some(t) = td.lock().ok().map(|g| g.clone()) {
                    t.run(QUICK_STOP);
                }
            }))
        };
        let mut server = Server {
            bin: bin.clone(),
            owner: owner.clone(),
            data: work.join("data"),
            redo: None,
            socket: work.join("mysqld.sock"),
            log: work.join("server.log"),
            work: work.clone(),
            work_dir: None,
            child: None,
            teardown,
            hook,
        };
        server.work_dir = Some(server.private_dir(&work)?);
        server.private_dir_in_work("data")?;
        // Temporary tables go in the server's own directory: /tmp is shared by every server on
        // the machine (two bootstraps at once there have failed on each other's files), and
        // the database's temporary files belong on the storage under test anyway.
        server.private_dir_in_work("tmp")?;
        // A socket path too long for sun_path goes to a private directory in /tmp instead.
        if server.socket.as_os_str().len() > SOCKET_PATH_MAX {
            server.private_dir(&short_socket)?;
            server.socket = short_socket.join("mysqld.sock");
        }
        if let Some(r) = redo {
            server.private_dir(&r)?;
            server.redo = Some(r);
        }
        if let Some(limit) = memory_limit {
            let cg = Cgroup::create(&name, limit, owner)?;
            server.update(|t| t.cgroup = Some(cg));
            server.record();
        }
        let out = server
            .as_owner(&bin.install_db)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", server.data.display()))
            .arg(format!("--tmpdir={}", server.work.join("tmp").display()))
            .args(server.redo_option())
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .output()
            .context("running mariadb-install-db")?;
        if !out.status.success() {
            let said = format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            return Err(anyhow!(
                "mariadb-install-db failed in {}: {}",
                server.data.display(),
                last_lines(&said, 3)
            ));
        }
        Ok(server)
    }

    /// The server an earlier run kept (`--keep`) in its directory `work`, as it was left: to
    /// be started and stopped again. Nothing of it is removed afterwards, and no crash entry
    /// is made: it is the user's now. A redo log kept in another directory (`--log-dir`) is
    /// refused: started without it, InnoDB would begin a new one.
    pub fn reopen(bin: &MyBin, owner: &Owner, work: &Path) -> Result<Server> {
        let name = work
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let data = work.join("data");
        if !data.join("ib_logfile0").exists() {
            return Err(crate::error::usage(format!(
                "{} has no redo log in its data directory: it was kept from a run with --log-dir, which this check cannot find",
                work.display()
            )));
        }
        let teardown = Arc::new(Mutex::new(Teardown {
            keep: true,
            ..Teardown::default()
        }));
        let hook = {
            let td = teardown.clone();
            crate::interrupt::register_hook(Box::new(move || {
                if let Some(t) = td.lock().ok().map(|g| g.clone()) {
                    t.run(QUICK_STOP);
                }
            }))
        };
        let mut socket = work.join("mysqld.sock");
        if socket.as_os_str().len() > SOCKET_PATH_MAX {
            socket = std::env::temp_dir()
                .join(format!("{name}-socket"))
                .join("mysqld.sock");
        }
        Ok(Server {
            bin: bin.clone(),
            owner: owner.clone(),
            work: work.to_path_buf(),
            data: data.clone(),
            redo: None,
            socket,
            log: work.join("server.log"),
            work_dir: Some(Dir::open(work)?),
            child: None,
            teardown,
            hook,
        })
    }

    fn private_dir(&mut self, d: &Path) -> Result<Dir> {
        let dir = Dir::create(d)?;
        // Listed for removal once it is ours, before its mode and owner are set.
        self.update(|t| t.dirs.push(d.to_path_buf()));
        self.record();
        dir.make_private(&self.owner)?;
        Ok(dir)
    }

    /// A private directory inside `work`, which is the server's account's already: made from
    /// its handle.
    fn private_dir_in_work(&mut self, name: &str) -> Result<()> {
        self.work_dir()?.create_in(name, &self.owner)?;
        let path = self.work.join(name);
        self.update(|t| t.dirs.push(path));
        self.record();
        Ok(())
    }

    /// The server's own directory held open; `create` sets it first.
    pub fn work_dir(&self) -> Result<&Dir> {
        self.work_dir
            .as_ref()
            .ok_or_else(|| anyhow!("bug: the MariaDB server's directory is not open"))
    }

    /// The option that puts the redo log in its own directory, when there is one.
    /// mariadbd and its options before the run's settings: its own files in the server's
    /// directory, its private socket, no TCP, iogauge's defaults. One list for a start and for
    /// a kept server's start.sh.
    pub fn start_words(&self) -> Vec<String> {
        let mut w = vec![
            self.bin.mariadbd.display().to_string(),
            "--no-defaults".into(),
            format!("--datadir={}", self.data.display()),
            format!("--tmpdir={}", self.work.join("tmp").display()),
            format!("--socket={}", self.socket.display()),
            "--skip-networking".into(),
            format!("--pid-file={}", self.work.join("mysqld.pid").display()),
            format!("--log-error={}", self.log.display()),
        ];
        w.extend(self.redo_option());
        w.extend(DEFAULT_SETTINGS.iter().map(|s| s.to_string()));
        w
    }

    fn redo_option(&self) -> Option<String> {
        self.redo
            .as_ref()
            .map(|r| format!("--innodb-log-group-home-dir={}", r.display()))
    }

    /// The memory cgroup the server runs in (`--memory-limit`).
    pub fn cgroup(&self) -> Option<PathBuf> {
        self.teardown
            .lock()
            .ok()
            .and_then(|t| t.cgroup.as_ref().map(|c| c.dir.clone()))
    }

    /// Writes down in the crash ledger what exists so far: the directories made (with their
    /// device and inode) and the cgroup.
    fn record(&mut self) {
        let Ok(t) = self.teardown.lock().map(|g| g.clone()) else {
            return;
        };
        if t.keep {
            return;
        }
        let now = crate::ledger::Entry::of(&MyServer(ServerRecord::of(
            &self.data,
            &t.dirs,
            t.cgroup.as_ref().map(|c| c.dir.clone()),
        )));
        if let Some(old) = &t.entry {
            crate::ledger::replace(old, now.clone());
        }
        self.update(|t| t.entry = Some(now));
    }

    fn update(&self, f: impl FnOnce(&mut Teardown)) {
        if let Ok(mut g) = self.teardown.lock() {
            f(&mut g);
        }
    }

    /// A server program, run as the server's owner.
    fn as_owner(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        if let Some((uid, gid)) = self.owner.ids {
            c.uid(uid).gid(gid);
        }
        c.current_dir(&self.work).stdin(Stdio::null());
        c
    }

    /// A client program (`mariadb`, `mariadb-admin`) on this server's socket as root, seeing
    /// no configuration file and no other server.
    pub fn client(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        for v in MY_ENV {
            c.env_remove(v);
        }
        c.arg("--no-defaults")
            .arg(format!("--socket={}", self.socket.display()))
            .arg("--user=root")
            .current_dir(&self.work)
            .stdin(Stdio::null());
        c
    }

    /// sysbench pointed at this server's socket as the `sbtest` user, on the `sbtest` database.
    pub fn sysbench(&self, sysbench: &Path, script: &str) -> Command {
        let mut c = Command::new(sysbench);
        for v in MY_ENV {
            c.env_remove(v);
        }
        c.arg(script)
            .arg("--db-driver=mysql")
            .arg(format!("--mysql-socket={}", self.socket.display()))
            .args(["--mysql-user=sbtest", "--mysql-db=sbtest"])
            .current_dir(&self.work)
            .stdin(Stdio::null());
        c
    }

    /// The server's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Starts mariadbd with iogauge's defaults, then `settings` (each `--KEY=VALUE`, later ones
    /// win), and waits until it answers a ping. A server that does not start is one error
    /// quoting what it said, read now: its log goes with the directory. A setting of `asked`
    /// (the user's --db-setting) it refused is a usage error.
    pub fn start(
        &mut self,
        settings: &[(String, String)],
        asked: &[(String, String)],
    ) -> Result<()> {
        let work = self.work_dir()?;
        debug_plant(work, "start", &["server.out"]);
        // iogauge's own file in the server's account's directory: made anew from the handle
        // and read back through it, never through whatever is at its name later.
        let out = work.replace("server.out", None)?;
        let mut out_read = out.try_clone()?;
        let cgroup = self.teardown.lock().ok().and_then(|t| t.cgroup.clone());
        let mut c = match cgroup {
            // The launcher enters the cgroup itself, so mariadbd is inside and iogauge and
            // sysbench are not; exec keeps its pid, which `stop` waits on.
            Some(cg) => cg.launcher(self.as_owner(Path::new("/bin/sh")), &self.bin.mariadbd),
            None => self.as_owner(&self.bin.mariadbd),
        };
        c.args(&self.start_words()[1..])
            .args(settings.iter().map(|(k, v)| format!("--{k}={v}")))
            .stdout(Stdio::from(out.try_clone()?))
            .stderr(Stdio::from(out))
            // Its own process group: a Ctrl-C at the terminal reaches iogauge, which stops the
            // server itself, in order, rather than the server dying under a running sysbench.
            .process_group(0);
        let mut child = c.spawn().context("starting mariadbd")?;
        self.update(|t| t.pid = Some(child.id()));
        let until = Instant::now() + SERVER_WAIT;
        let exited = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if self.ping() {
                break None;
            }
            let interrupted = crate::interrupt::requested();
            if Instant::now() > until || interrupted.is_some() {
                let _ = stop_pid(child.id(), Duration::from_secs(10));
                let _ = child.wait();
                self.update(|t| t.pid = None);
                // A Ctrl-C while it started is the user's stop, not the server's silence.
                if let Some(sig) = interrupted {
                    return Err(crate::error::Interrupted(sig).into());
                }
                return Err(anyhow!(
                    "the MariaDB server did not answer within {}",
                    crate::units::duration(SERVER_WAIT)
                ));
            }
            std::thread::sleep(POLL);
        };
        let Some(status) = exited else {
            let private =
                super::process::check_private("MariaDB", "--db-setting", child.id(), &self.socket);
            if private.is_err() {
                let _ = stop_pid(child.id(), SERVER_WAIT);
                let _ = child.wait();
                self.update(|t| t.pid = None);
                return private;
            }
            self.child = Some(child);
            return Ok(());
        };
        self.update(|t| t.pid = None);
        let said = format!(
            "{}\n{}",
            self.work_dir()?
                .read_servers("server.log", &self.owner)
                .unwrap_or_default(),
            read_back(&mut out_read)
        );
        if let Some(e) = refused_setting(&said, asked) {
            return Err(e);
        }
        let errors: Vec<&str> = said
            .lines()
            .filter_map(|l| l.split_once("[ERROR] ").map(|(_, m)| m))
            .collect();
        let why = match errors.is_empty() {
            true => format!("it exited with {status}"),
            false => errors[errors.len().saturating_sub(3)..].join(" | "),
        };
        Err(anyhow!("the MariaDB server did not start: {why}"))
    }

    /// Whether the server answers on its socket.
    fn ping(&self) -> bool {
        self.client(&self.bin.admin)
            .arg("ping")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Stops the server cleanly (mariadb-admin shutdown) and waits for its process to exit:
    /// the shutdown returns when the pid file is gone, a moment before the process is.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let out = self
            .client(&self.bin.admin)
            .arg("shutdown")
            .output()
            .context("running mariadb-admin shutdown")?;
        if !out.status.success() {
            let _ = stop_pid(child.id(), SERVER_WAIT);
        }
        child.wait().context("waiting for mariadbd")?;
        self.update(|t| t.pid = None);
        Ok(())
    }

    /// Why the server is not running, when it started and is gone (killed, crashed).
    pub fn down(&self) -> Option<String> {
        let pid = self.teardown.lock().ok()?.pid?;
        if !super::process::ended(pid) {
            return None;
        }
        // The server's account owns the log: read through the directory's handle.
        let log = self
            .work_dir()
            .ok()
            .and_then(|d| d.read_servers("server.log", &self.owner).ok())
            .unwrap_or_default();
        let log = match last_lines(&log, 2) {
            l if l.is_empty() => String::new(),
            l => format!(
                "; the last lines of its log: {}",
                crate::units::quoted(&l, 300)
            ),
        };
        Some(format!(
            "the MariaDB server ended during the run: mariadbd (pid {pid}) is gone, killed or crashed (the kernel log says whether the OOM killer took it){log}"
        ))
    }

    /// One SQL statement's rows, tab-separated, without column names.
    pub fn query(&self, sql: &str) -> Result<String> {
        let out = self
            .client(&self.bin.client)
            .args(["-N", "-B", "-e", sql])
            .output()
            .context("running mariadb")?;
        if !out.status.success() {
            if let Some(why) = self.down() {
                return Err(anyhow!(why));
            }
            return Err(anyhow!(
                "mariadb failed on `{sql}`: {}",
                last_lines(&String::from_utf8_lossy(&out.stderr), 2)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// `name<TAB>value` rows as pairs.
    pub fn pairs(&self, sql: &str) -> Result<Vec<(String, String)>> {
        Ok(self
            .query(sql)?
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    pub fn kept(&self) -> bool {
        self.teardown.lock().map(|t| t.keep).unwrap_or(false)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The clean way first when the server is ours to wait on; the teardown then finds it
        // gone and only removes the directories.
        if self.child.is_some() {
            if let Err(e) = self.stop() {
                say!("warning: {e:#}");
            }
        }
        if let Some(mut child) = self.child.take() {
            let _ = stop_pid(child.id(), SERVER_WAIT);
            let _ = child.wait();
        }
        if let Ok(t) = self.teardown.lock() {
            t.run(SERVER_WAIT);
        }
        crate::interrupt::unregister_hook(self.hook);
    }
}
