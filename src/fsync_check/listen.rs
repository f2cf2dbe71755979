//! `iogauge fsync-check listen`: keeps, per target, every message a writer sent, in a file, so
//! the verifier can ask after the writer's machine lost power (and after this one restarted).

use super::protocol::{self, Run, ACK, HELLO, MESSAGE};
use crate::cli::FsyncListenArgs;
use anyhow::{Context, Result};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Clients served at once; more are told to come back later. One client can hold one slot
/// and one thread, never the listener.
const MAX_CLIENTS: usize = 64;
/// The longest first line a client may send (the hello and the target's name).
const MAX_LINE: u64 = 8 << 10;
/// How long a client may take to say who it is.
const HELLO_WAIT: Duration = Duration::from_secs(30);
/// How long a writer may stay silent before its session is over (a writer whose machine lost
/// power never says goodbye).
const WRITER_SILENCE: Duration = Duration::from_secs(600);

pub fn run(args: &FsyncListenArgs) -> Result<()> {
    private_records_dir(&args.records)?;
    let listener = TcpListener::bind(&args.addr).map_err(|e| {
        crate::error::usage(format!(
            "cannot listen on {}: {e}; name a free local address and port, e.g. 0.0.0.0:5400",
            args.addr
        ))
    })?;
    // Accept without blocking, so a signal stops the listener within a poll.
    listener.set_nonblocking(true)?;
    say!(
        "fsync-check: listening on {}, records in {}",
        listener.local_addr()?,
        args.records.display()
    );
    let clients = Arc::new(AtomicUsize::new(0));
    loop {
        if let Some(sig) = crate::interrupt::requested() {
            return Err(crate::error::Interrupted(sig).into());
        }
        match listener.accept() {
            Ok((mut stream, peer)) => {
                if clients.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
                    clients.fetch_sub(1, Ordering::SeqCst);
                    let _ = stream.write_all(b"error the listener is serving as many clients as it can; try again later\n");
                    continue;
                }
                let dir = args.records.clone();
                let slot = clients.clone();
                let spawned = std::thread::Builder::new()
                    .name("fsync-check-client".into())
                    .spawn(move || {
                        if let Err(e) = serve(stream, &dir) {
                            say!("fsync-check: {peer}: {e:#}");
                        }
                        slot.fetch_sub(1, Ordering::SeqCst);
                    });
                if spawned.is_err() {
                    // The system gave no thread: this client is dropped, the listener goes on.
                    clients.fetch_sub(1, Ordering::SeqCst);
                    say!("fsync-check: {peer}: no thread to serve it (system limit); connection closed");
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            // Out of file descriptors or a connection reset before accept: that client is lost,
            // not the listener.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ECONNABORTED)
                ) =>
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e).context("accepting a connection"),
        }
    }
}

/// The records directory: made 0700 if new; an existing one must be a real directory of this
/// user that nobody else may write to, since the records in it decide a verdict.
fn private_records_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(crate::error::usage(format!(
                "cannot create the records directory {}: {e}; give another with --records DIR",
                dir.display()
            )))
        }
    }
    let md = std::fs::symlink_metadata(dir)?;
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX);
    if !md.is_dir() || md.uid() != me || md.permissions().mode() & 0o022 != 0 {
        return Err(crate::error::usage(format!(
            "the records directory {} is not a directory of this user that only it may write to (a link, another user's, or writable by others); give another with --records DIR",
            dir.display()
        )));
    }
    Ok(())
}

fn serve(stream: TcpStream, dir: &Path) -> Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(HELLO_WAIT))?;
    let mut out = stream.try_clone()?;
    let mut input = BufReader::new(stream);
    let mut line = String::new();
    (&mut input).take(MAX_LINE).read_line(&mut line)?;
    if !line.ends_with('\n') {
        let _ = out.write_all(b"error the first line is too long or never ended\n");
        return Ok(());
    }
    let Some(rest) = line.trim_end().strip_prefix(HELLO) else {
        let _ = out.write_all(b"error not an iogauge fsync-check client of this version\n");
        return Ok(());
    };
    let rest = rest.trim_start();
    if let Some(run) = rest.strip_prefix("write ").and_then(Run::parse) {
        input.get_ref().set_read_timeout(Some(WRITER_SILENCE))?;
        record(&mut input, &mut out, dir, &run)
    } else if let Some(asked) = rest.strip_prefix("verify-id ") {
        let (id, name) = asked.split_once(' ').unwrap_or((asked, ""));
        match u64::from_str_radix(id, 16) {
            Ok(id) => replay(&mut out, dir, name, Some(id)),
            Err(_) => {
                let _ = out.write_all(b"error a run id is 16 hex digits\n");
                Ok(())
            }
        }
    } else if let Some(name) = rest.strip_prefix("verify ") {
        replay(&mut out, dir, name, None)
    } else {
        let _ = out.write_all(b"error unknown request\n");
        Ok(())
    }
}

/// A writer's session: a new record for its target, then every message appended as it comes.
/// Each batch read from the socket goes to the file before the next read, so a listener that
/// is killed keeps all but the last batch.
fn record(
    input: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
    dir: &Path,
    run: &Run,
) -> Result<()> {
    let path = protocol::record_file(dir, &run.name, run.key.id);
    // Never through a link, whoever could have put one there.
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut file = BufWriter::new(file);
    file.write_all(format!("{}\n", run.line()).as_bytes())?;
    file.flush()?;
    out.write_all(b"ok\n")?;
    say!(
        "fsync-check: {}: writer connected, recording to {}",
        run.name,
        path.display()
    );
    let (mut pre, mut acked) = (0u64, 0u64);
    let mut buf = vec![0u8; 64 * 1024];
    let mut carry = 0;
    loop {
        let n = match input.read(&mut buf[carry..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // The writer's machine lost power: the connection resets or times out.
            Err(_) => break,
        };
        let have = carry + n;
        let whole = have - have % MESSAGE;
        for m in buf[..whole].chunks_exact(MESSAGE) {
            if m[0] == ACK {
                acked += 1;
            } else {
                pre += 1;
            }
        }
        file.write_all(&buf[..whole])?;
        file.flush()?;
        buf.copy_within(whole..have, 0);
        carry = have - whole;
    }
    say!(
        "fsync-check: {}: writer gone after {} writes announced, {} syncs acknowledged",
        run.name,
        crate::units::count(pre as f64),
        crate::units::count(acked as f64)
    );
    Ok(())
}

/// A verifier's session: the target's run and every message recorded for it. With the run id
/// the verifier found stamped in the target, exactly that writer's record; without one (the
/// target is gone or unreadable), the only record of the target, if there is only one.
fn replay(out: &mut TcpStream, dir: &Path, name: &str, id: Option<u64>) -> Result<()> {
    let path: PathBuf = match id {
        Some(id) => protocol::record_file(dir, name, id),
        None => match protocol::records_of(dir, name).as_slice() {
            [one] => one.clone(),
            [] => protocol::record_file(dir, name, 0),
            many => {
                out.write_all(
                    format!(
                        "error {} writers recorded {name} and the target carries no run id to tell which is its own\n",
                        many.len()
                    )
                    .as_bytes(),
                )?;
                return Ok(());
            }
        },
    };
    let data = match read_record(&path) {
        Ok(d) => d,
        Err(_) => {
            out.write_all(
                format!(
                    "error no writer has written {name} while this listener recorded into {}\n",
                    dir.display()
                )
                .as_bytes(),
            )?;
            return Ok(());
        }
    };
    let head = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let messages = &data[(head + 1).min(data.len())..];
    // A message cut short by a killed listener is dropped.
    let messages = &messages[..messages.len() - messages.len() % MESSAGE];
    let run = std::str::from_utf8(&data[..head])
        .ok()
        .and_then(Run::parse)
        .with_context(|| format!("{} is not a record of this version", path.display()))?;
    out.write_all(format!("ok {} {}\n", messages.len(), run.line()).as_bytes())?;
    out.write_all(messages)?;
    out.flush()?;
    say!(
        "fsync-check: {}: sent {} messages to a verifier",
        name,
        crate::units::count((messages.len() / MESSAGE) as f64)
    );
    Ok(())
}

/// A record, read without following a link.
fn read_record(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut data = Vec::new();
    f.read_to_end(&mut data)?;
    Ok(data)
}
