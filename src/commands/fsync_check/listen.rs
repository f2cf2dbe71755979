//! `iogauge fsync-check listen`: keeps, per target, every message a writer sent, in a file, so
//! the verifier can ask after the writer's machine lost power (and after this one restarted).

use super::protocol::{self, Run, ACK, HELLO, MESSAGE};
use crate::cli::FsyncListenArgs;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub fn run(args: &FsyncListenArgs) -> Result<()> {
    std::fs::create_dir_all(&args.records).with_context(|| {
        format!(
            "cannot create the records directory {}",
            args.records.display()
        )
    })?;
    let listener = TcpListener::bind(&args.addr).map_err(|e| {
        crate::error::usage(format!(
            "cannot listen on {}: {e}; name a free local address and port, e.g. 0.0.0.0:5400",
            args.addr
        ))
    })?;
    // Accept without blocking, so a signal stops the listener within a poll.
    listener.set_nonblocking(true)?;
    crate::say!(
        "fsync-check: listening on {}, records in {}",
        listener.local_addr()?,
        args.records.display()
    );
    loop {
        if let Some(sig) = crate::interrupt::requested() {
            return Err(crate::error::Interrupted(sig).into());
        }
        match listener.accept() {
            Ok((stream, peer)) => {
                let dir = args.records.clone();
                std::thread::spawn(move || {
                    if let Err(e) = serve(stream, &dir) {
                        crate::say!("fsync-check: {peer}: {e:#}");
                    }
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e).context("accepting a connection"),
        }
    }
}

fn serve(stream: TcpStream, dir: &Path) -> Result<()> {
    stream.set_nonblocking(false)?;
    let mut out = stream.try_clone()?;
    let mut input = BufReader::new(stream);
    let mut line = String::new();
    input.read_line(&mut line)?;
    let Some(rest) = line.trim_end().strip_prefix(HELLO) else {
        let _ = out.write_all(b"error not an iogauge fsync-check client of this version\n");
        return Ok(());
    };
    let rest = rest.trim_start();
    if let Some(run) = rest.strip_prefix("write ").and_then(Run::parse) {
        record(&mut input, &mut out, dir, &run)
    } else if let Some(name) = rest.strip_prefix("verify ") {
        replay(&mut out, dir, name)
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
    let path = protocol::record_file(dir, &run.name);
    let mut file = BufWriter::new(
        File::create(&path).with_context(|| format!("cannot create {}", path.display()))?,
    );
    file.write_all(format!("{}\n", run.line()).as_bytes())?;
    file.flush()?;
    out.write_all(b"ok\n")?;
    crate::say!(
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
    crate::say!(
        "fsync-check: {}: writer gone after {} writes announced, {} syncs acknowledged",
        run.name,
        crate::units::count(pre as f64),
        crate::units::count(acked as f64)
    );
    Ok(())
}

/// A verifier's session: the target's run and every message recorded for it.
fn replay(out: &mut TcpStream, dir: &Path, name: &str) -> Result<()> {
    let path: PathBuf = protocol::record_file(dir, name);
    let data = match std::fs::read(&path) {
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
    crate::say!(
        "fsync-check: {}: sent {} messages to a verifier",
        name,
        crate::units::count((messages.len() / MESSAGE) as f64)
    );
    Ok(())
}
