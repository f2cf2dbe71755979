//! The terminals and their conductor. Each terminal is one thread with one connection, bound
//! to a home warehouse and district, drawing its transactions from a deck in the standard mix.
//! The conductor counts what completes second by second; the measurement begins when that
//! rate has settled (SNIA's steady-state test over the last five seconds) or the ramp's limit
//! is reached, and ends `time` later. Only what completes inside that window is measured; at
//! both edges the schema's new-order ids, the server's commit counter, the database's size and
//! the CPU are read.

use super::gen::Gen;
use super::sql::{Conn, SqlError};
use super::txn::{self, Deck, End, Home, Kind, KINDS};
use crate::db::backend::Endpoint;
use crate::measure::{self, Hist};
use anyhow::{anyhow, Result};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const RAMP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// Tries of one transaction before a conflict counts as a failure of the run.
const TRIES: u32 = 10;

/// What all terminals and the conductor share; counters only, no lock on a transaction's way.
#[derive(Default)]
struct Shared {
    phase: AtomicU8,
    /// Transactions completed per kind, from the start.
    done: [AtomicU64; 5],
    /// In the window: New-Orders committed, New-Orders rolled back on purpose.
    new_orders: AtomicU64,
    rollbacks: AtomicU64,
    retries: AtomicU64,
    /// The first error that is not a conflict; it stops the run.
    failed: Mutex<Option<String>>,
}

/// How the terminals run.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub warehouses: u32,
    pub terminals: u32,
    pub keying: bool,
    pub time: Duration,
    pub max_ramp: Duration,
}

/// The edges of the window, as read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Edge {
    pub at: Option<Instant>,
    /// sum(D_NEXT_O_ID) over all districts.
    pub next_o: f64,
    /// The server's commits and rollbacks.
    pub commits: f64,
    /// The statements the server has received from its clients, where it counts them.
    pub statements: Option<f64>,
    pub db_bytes: u64,
    /// The driver's own CPU seconds, and the server's (user, system).
    pub driver_cpu: f64,
    pub server_cpu: (f64, f64),
}

/// What the terminals did.
pub struct Driven {
    /// Per kind: the latencies of those completed in the window, in ns.
    pub hists: Vec<Hist>,
    pub counts: [u64; 5],
    pub new_orders: u64,
    pub rollbacks: u64,
    pub retries: u64,
    /// Per second from the start: completions per kind.
    pub seconds: Vec<[u64; 5]>,
    /// Per second from the start: the latencies of the transactions that completed in it,
    /// every kind and every terminal merged (the ramp's seconds too, as the timeline shows
    /// them).
    pub second_hists: Vec<Hist>,
    pub ramp_s: f64,
    pub settled: bool,
    pub begin: Edge,
    pub end: Edge,
    /// A Ctrl-C ended the window early: `end` was read then, and the window is what ran.
    pub cut_short: bool,
}

/// The database's size in bytes and the server's CPU seconds (user, system), read at an edge.
pub type Probe<'a> = &'a (dyn Fn() -> (u64, (f64, f64)) + Sync);

/// Reads one edge of the window, the moment after the terminals were told: the schema's next
/// order ids first, the server's commit counter (`commits`: its query) next, then what takes
/// longer — the database's size and the server's CPU (`probe`), and the driver's CPU.
fn edge(c: &mut Conn, commits: &str, probe: Probe) -> Result<Edge> {
    let next_o = c
        .number("SELECT SUM(d_next_o_id) FROM district")
        .map_err(|e| anyhow!("{e}"))?;
    let commits = c.number(commits).map_err(|e| anyhow!("{e}"))?;
    let statements = match c {
        // Questions counts what clients send, not the statements inside a procedure.
        Conn::My(_) => Some(
            c.number("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'")
                .map_err(|e| anyhow!("{e}"))?,
        ),
        // PostgreSQL counts statements only with pg_stat_statements loaded.
        Conn::Pg(_) => None,
    };
    let (db_bytes, server_cpu) = probe();
    Ok(Edge {
        at: Some(Instant::now()),
        next_o,
        commits,
        statements,
        db_bytes,
        driver_cpu: own_cpu(),
        server_cpu,
    })
}

/// This process's own CPU seconds, user and system, without its children (the server may be
/// one of them).
pub fn own_cpu() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let f: Vec<&str> = s
        .rsplit_once(')')
        .map_or(vec![], |r| r.1.split_whitespace().collect());
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (n(11) + n(12)) / 100.0
}

/// The server's commit counter as a query on the load's own connection.
pub fn commits_query(ep: &Endpoint) -> (String, String) {
    match ep {
        Endpoint::Postgres { database, .. } => (
            format!("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '{database}'"),
            format!("pg_stat_database ({database}): xact_commit + xact_rollback"),
        ),
        Endpoint::Mariadb { .. } => (
            "SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('COM_COMMIT', 'COM_ROLLBACK')".into(),
            "SHOW GLOBAL STATUS: Com_commit + Com_rollback".into(),
        ),
    }
}

/// Runs the terminals to the window's end (or a Ctrl-C, or a failure).
pub fn drive(ep: &Endpoint, shape: Shape, probe: Probe) -> Result<Driven> {
    let shared = Shared::default();
    let (commits, _) = commits_query(ep);
    // Every connection opened before the clock starts: the ramp measures the database, not
    // the connecting.
    let mut conns = Vec::new();
    for _ in 0..shape.terminals {
        conns.push(Conn::open(ep)?);
    }
    let mut own = Conn::open(ep)?;
    let start = Instant::now();
    let mut seconds: Vec<[u64; 5]> = Vec::new();
    let mut ramp_s = 0.0;
    let mut settled = false;
    let mut begin = Edge::default();
    let mut end = Edge::default();
    let mut cut_short = false;
    let outs: Vec<Terminal> = std::thread::scope(|scope| -> Result<_> {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| {
                let home = Home {
                    w: i as u64 % u64::from(shape.warehouses) + 1,
                    d: (i as u64 / u64::from(shape.warehouses)) % 10 + 1,
                    warehouses: u64::from(shape.warehouses),
                };
                let shared = &shared;
                scope.spawn(move || {
                    terminal(
                        conn,
                        home,
                        shape.keying,
                        7919 * (i as u64 + 1),
                        shared,
                        start,
                    )
                })
            })
            .collect();
        let mut last = [0u64; 5];
        let mut tick = start + Duration::from_secs(1);
        let progress = crate::db::progress::Progress::start(shape.time);
        let conduct = (|| -> Result<()> {
            loop {
                // The conductor keeps time; it naps in short steps to see a Ctrl-C or a failure.
                while Instant::now() < tick {
                    if crate::interrupt::requested().is_some() {
                        // In the window, what ran of it is kept: its far edge read now, as
                        // at its planned end. In the ramp, nothing was measured yet.
                        if shared.phase.load(Ordering::SeqCst) == MEASURE {
                            shared.phase.store(STOP, Ordering::SeqCst);
                            end = edge(&mut own, &commits, probe)?;
                            cut_short = true;
                        }
                        return Ok(());
                    }
                    if shared.failed.lock().map_or(true, |f| f.is_some()) {
                        return Ok(());
                    }
                    std::thread::sleep((tick - Instant::now()).min(Duration::from_millis(50)));
                }
                tick += Duration::from_secs(1);
                let now: [u64; 5] = std::array::from_fn(|k| shared.done[k].load(Ordering::Relaxed));
                seconds.push(std::array::from_fn(|k| now[k] - last[k]));
                last = now;
                let tps = seconds.last().map_or(0, |s| s.iter().sum::<u64>()) as f64;
                let elapsed = start.elapsed();
                match shared.phase.load(Ordering::SeqCst) {
                    RAMP => {
                        progress.ramp(elapsed, shape.max_ramp, tps);
                        settled = steady(&seconds);
                        if settled || elapsed >= shape.max_ramp {
                            // The phase first, the schema's count at once after: only a
                            // query's time lies between what the terminals and the schema
                            // count from.
                            shared.phase.store(MEASURE, Ordering::SeqCst);
                            begin = edge(&mut own, &commits, probe)?;
                            ramp_s = seconds.len() as f64;
                            say!(
                                "the window of {} begins after a ramp of {} ({})",
                                crate::units::duration(shape.time),
                                crate::units::duration(Duration::from_secs_f64(ramp_s)),
                                match settled {
                                    true => "the rate settled",
                                    false => "the ramp's limit; the rate had not settled",
                                }
                            );
                        }
                    }
                    _ => {
                        let done = seconds.len() as f64 - ramp_s;
                        progress.at(Duration::from_secs_f64(done), Some(tps));
                        if done >= shape.time.as_secs_f64() {
                            shared.phase.store(STOP, Ordering::SeqCst);
                            end = edge(&mut own, &commits, probe)?;
                            return Ok(());
                        }
                    }
                }
            }
        })();
        shared.phase.store(STOP, Ordering::SeqCst);
        let outs = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        conduct?;
        Ok(outs)
    })?;
    if let Some(f) = shared.failed.lock().ok().and_then(|f| f.clone()) {
        return Err(anyhow!("a terminal failed: {f}"));
    }
    let mut hists: Vec<Hist> = KINDS.iter().map(|_| measure::run_hist()).collect();
    let mut counts = [0u64; 5];
    let mut second_hists: Vec<Hist> = Vec::new();
    for t in &outs {
        for (k, h) in t.hists.iter().enumerate() {
            // Merged bucket by bucket: percentiles of all terminals together, not an average
            // of each terminal's.
            let _ = hists[k].add(h);
            counts[k] += t.counts[k];
        }
        for (i, h) in t.seconds.iter().enumerate() {
            if second_hists.len() <= i {
                second_hists.resize_with(i + 1, measure::interval_hist);
            }
            let _ = second_hists[i].add(h);
        }
    }
    Ok(Driven {
        hists,
        counts,
        new_orders: shared.new_orders.load(Ordering::Relaxed),
        rollbacks: shared.rollbacks.load(Ordering::Relaxed),
        retries: shared.retries.load(Ordering::Relaxed),
        seconds,
        second_hists,
        ramp_s,
        settled,
        begin,
        end,
        cut_short,
    })
}

/// What one terminal did: the window's latencies and counts per kind, and every second's
/// latencies from the start.
#[derive(Default)]
struct Terminal {
    hists: Vec<Hist>,
    counts: [u64; 5],
    seconds: Vec<Hist>,
}

/// Whether the completions per second have settled: SNIA's steady-state test over the last
/// five seconds, the first second (connections warming) never among them.
fn steady(seconds: &[[u64; 5]]) -> bool {
    const WINDOW: usize = iogauge_analyze::STEADY_WINDOW;
    if seconds.len() < WINDOW + 1 {
        return false;
    }
    let ys: Vec<f64> = seconds[seconds.len() - WINDOW..]
        .iter()
        .map(|s| s.iter().sum::<u64>() as f64)
        .collect();
    ys.iter().all(|&y| y > 0.0)
        && iogauge_analyze::snia_window(&ys).steady(&iogauge_analyze::Thresholds::default())
}

/// Waits `s` seconds as a person would, or until the run stops.
fn pause(s: f64, shared: &Shared) {
    let until = Instant::now() + Duration::from_secs_f64(s);
    while shared.phase.load(Ordering::Relaxed) != STOP {
        let now = Instant::now();
        if now >= until {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(100)));
    }
}

/// One terminal: transactions until the run stops; the window's latencies and counts per kind,
/// and each second's latencies counted from `start`, the conductor's clock.
fn terminal(
    mut c: Conn,
    home: Home,
    keying: bool,
    seed: u64,
    shared: &Shared,
    start: Instant,
) -> Terminal {
    let mut g = Gen::new(seed);
    let mut deck = Deck::new();
    let mut hists: Vec<Hist> = KINDS.iter().map(|_| measure::run_hist()).collect();
    let mut counts = [0u64; 5];
    // One histogram a second, made as each second begins: never one a transaction.
    let mut seconds: Vec<Hist> = Vec::new();
    while shared.phase.load(Ordering::Relaxed) != STOP {
        let kind = deck.draw(&mut g);
        let (key, think) = kind.keying_think();
        if keying {
            pause(key, shared);
        }
        let began = Instant::now();
        let mut tries = 0;
        let end = loop {
            tries += 1;
            match txn::run(&mut c, &mut g, home, kind) {
                Ok(e) => break Some(e),
                Err(SqlError::Retry(_)) if tries < TRIES => {
                    shared.retries.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    if shared.phase.load(Ordering::Relaxed) != STOP {
                        if let Ok(mut f) = shared.failed.lock() {
                            f.get_or_insert(format!("{}: {e}", kind.name()));
                        }
                    }
                    break None;
                }
            }
        };
        let Some(end) = end else {
            return Terminal {
                hists,
                counts,
                seconds,
            };
        };
        let done = Instant::now();
        let ns = done.duration_since(began).as_nanos() as u64;
        // The second it completed in, as the conductor counts completions: second i holds
        // (i, i + 1] s after the start.
        let second = done.duration_since(start).as_secs() as usize;
        if seconds.len() <= second {
            seconds.resize_with(second + 1, measure::interval_hist);
        }
        let _ = seconds[second].record(ns.max(1));
        shared.done[kind as usize].fetch_add(1, Ordering::Relaxed);
        if shared.phase.load(Ordering::Relaxed) == MEASURE {
            let _ = hists[kind as usize].record(ns.max(1));
            counts[kind as usize] += 1;
            match (kind, end) {
                (Kind::NewOrder, End::Committed) => {
                    shared.new_orders.fetch_add(1, Ordering::Relaxed);
                }
                (Kind::NewOrder, End::RolledBack) => {
                    shared.rollbacks.fetch_add(1, Ordering::Relaxed);
                }
                _ => {}
            }
        }
        if keying {
            // Negative exponential with the kind's mean, cut at ten times it (clause 5.2.5.4).
            let t = (-(1.0 - g.0.f64()).ln() * think).min(10.0 * think);
            pause(t, shared);
        }
    }
    Terminal {
        hists,
        counts,
        seconds,
    }
}
