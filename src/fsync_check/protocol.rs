//! What the writer, the listener and the verifier say to each other, and the listener's files.
//!
//! A connection opens with one text line from the client:
//! `iogauge-fsync-check 1 write RUN_ID SEED BLOCK NAME` (ids in hex) or
//! `iogauge-fsync-check 1 verify NAME`, and the listener answers `ok` or `error MESSAGE`. A
//! writer then sends fixed 17-byte messages: `P` (about to write) or `A` (the sync returned),
//! the block's offset and its generation, both u64 little endian. For a verifier the listener
//! answers `ok BYTES RUN_ID SEED BLOCK NAME` and then the messages it recorded.
//!
//! The listener's record of a target is the writer's first line followed by the messages as
//! they arrived, so a restarted listener still knows everything it was told.

use anyhow::{bail, Context, Result};
use iogauge_verify::RunKey;
use std::io::{BufRead, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const HELLO: &str = "iogauge-fsync-check 1";
pub const MESSAGE: usize = 17;
pub const PRE: u8 = b'P';
pub const ACK: u8 = b'A';

pub fn message(kind: u8, offset: u64, generation: u64) -> [u8; MESSAGE] {
    let mut m = [0u8; MESSAGE];
    m[0] = kind;
    m[1..9].copy_from_slice(&offset.to_le_bytes());
    m[9..17].copy_from_slice(&generation.to_le_bytes());
    m
}

/// A message's kind, offset and generation.
pub fn parse(m: &[u8]) -> (u8, u64, u64) {
    (
        m[0],
        u64::from_le_bytes(m[1..9].try_into().unwrap()),
        u64::from_le_bytes(m[9..17].try_into().unwrap()),
    )
}

/// A writer's run: what the listener keeps at the head of its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub key: RunKey,
    pub block: u64,
    pub name: String,
}

impl Run {
    /// `RUN_ID SEED BLOCK NAME`.
    pub fn line(&self) -> String {
        format!(
            "{:x} {:x} {} {}",
            self.key.id, self.key.seed, self.block, self.name
        )
    }

    pub fn parse(line: &str) -> Option<Run> {
        let mut it = line.splitn(4, ' ');
        let id = u64::from_str_radix(it.next()?, 16).ok()?;
        let seed = u64::from_str_radix(it.next()?, 16).ok()?;
        let block = it.next()?.parse().ok()?;
        let name = it.next()?.to_string();
        Some(Run {
            key: RunKey { id, seed },
            block,
            name,
        })
    }
}

/// How the listener knows a target: the writing machine's host name and the file's absolute
/// path, so one listener can serve several machines and files.
pub fn target_name(target: &Path) -> Result<String> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let path = absolute(target)?;
    let name = format!("{host}:{}", path.display());
    if name.contains('\n') {
        bail!(crate::error::usage(format!(
            "{}: a file name with a newline cannot be sent to the listener; rename it",
            target.display()
        )));
    }
    Ok(name)
}

/// The absolute path of `target` with its directory resolved, whether or not it exists yet
/// (after a power cut it may be gone).
fn absolute(target: &Path) -> Result<PathBuf> {
    if let Ok(p) = target.canonicalize() {
        return Ok(p);
    }
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = parent
        .canonicalize()
        .with_context(|| format!("{}: its directory does not exist", target.display()))?;
    match target.file_name() {
        Some(f) => Ok(dir.join(f)),
        None => bail!(crate::error::usage(format!(
            "{}: name a file, not a directory",
            target.display()
        ))),
    }
}

/// Connects to the listener and says hello; the stream and the rest of the listener's answer
/// after `ok`.
pub fn connect(addr: &str, hello: &str) -> Result<(std::io::BufReader<TcpStream>, String)> {
    let sock = addr
        .to_socket_addrs()
        .map_err(|e| {
            crate::error::usage(format!(
                "--to {addr}: not an address ({e}); write HOST:PORT, e.g. 192.0.2.7:5400"
            ))
        })?
        .next()
        .ok_or_else(|| crate::error::usage(format!("--to {addr}: the name has no address")))?;
    let mut stream = TcpStream::connect_timeout(&sock, Duration::from_secs(10)).with_context(|| {
        format!("cannot reach the listener at {addr}; start `iogauge fsync-check listen` there first")
    })?;
    stream.set_nodelay(true)?;
    stream.write_all(format!("{HELLO} {hello}\n").as_bytes())?;
    let mut reader = std::io::BufReader::new(stream);
    let mut answer = String::new();
    reader
        .read_line(&mut answer)
        .with_context(|| format!("the listener at {addr} did not answer"))?;
    let answer = answer.trim_end();
    if let Some(rest) = answer.strip_prefix("ok") {
        Ok((reader, rest.trim_start().to_string()))
    } else if let Some(msg) = answer.strip_prefix("error ") {
        let e = anyhow::anyhow!("the listener at {addr} says: {msg}");
        // A target the listener never heard of is a wrong name or address, not a failure.
        if msg.starts_with("no writer") {
            bail!(crate::error::usage(format!("{e}; check TARGET and --to")))
        }
        bail!(e)
    } else {
        bail!("{addr} is not an iogauge fsync-check listener (it answered {answer:?})")
    }
}

/// The listener's file for one writer's run of a target: a hash of the target's name (so any
/// name makes a file name) and the writer's run id, a secret the writer chose at random. A
/// client that does not know it cannot replace or forge the record a verifier will read: the
/// verifier asks for the id it finds stamped in the target itself.
pub fn record_file(dir: &Path, name: &str, id: u64) -> PathBuf {
    dir.join(format!("{}-{id:016x}.rec", name_hash(name)))
}

/// Every record kept for `name`, whoever wrote it.
pub fn records_of(dir: &Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!("{}-", name_hash(name));
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".rec"))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn name_hash(name: &str) -> String {
    // FNV-1a, 64 bits: stable across versions and platforms, unlike std's hasher.
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_line_round_trips_with_spaces_in_the_name() {
        let r = Run {
            key: RunKey {
                id: u64::MAX,
                seed: 3,
            },
            block: 16384,
            name: "host:/mnt/a b/c".into(),
        };
        assert_eq!(Run::parse(&r.line()), Some(r));
    }

    #[test]
    fn message_round_trips() {
        let m = message(ACK, 1 << 40, 77);
        assert_eq!(parse(&m), (ACK, 1 << 40, 77));
    }
}
