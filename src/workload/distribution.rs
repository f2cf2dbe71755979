//! Where random IOs land: uniform (the default), or skewed like a database's hot pages, as
//! fio's `random_distribution` offers. Every draw is O(1) with no table, so a terabyte device
//! costs what a gigabyte file does, and the same seed gives the same offsets.
//!
//! - `zipf:θ` — block of rank k is hit with probability ∝ 1/k^θ, drawn by rejection-inversion
//!   (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates from monotone
//!   discrete distributions", ACM TOMACS 6(3), 1996), the method Apache Commons Math uses.
//! - `pareto:h` — a power law: rank = ⌊n·u^(1/(1−h))⌋ for uniform u, more skewed as h nears 1.
//! - `normal:S%` — a normal distribution around the middle of the range with a standard
//!   deviation of S% of it, wrapped into the range.
//! - `hot:D%/I%` — I% of the IOs go to a hot D% of the blocks, the rest to the others.
//!
//! Ranks are scattered over the range by a fixed permutation (k·P mod n with P coprime to n), so
//! the hot blocks are spread over the device like a database's hot pages, not packed at its
//! start where a controller's read-ahead would favour them.

use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Distribution {
    #[default]
    Uniform,
    Zipf(f64),
    Pareto(f64),
    /// Standard deviation as a fraction of the range.
    Normal(f64),
    /// (fraction of the blocks, fraction of the IOs)
    Hot(f64, f64),
    /// fio's `zoned`: consecutive zones of the range, in order from its start, each taking a
    /// share of the IOs — (cumulative share of the IOs, cumulative share of the range) at each
    /// zone's end, the last `len` entries used. Not scattered: the zones are places in the file.
    Zoned(Zones),
    /// fio's `sequence`: a fixed order of block indices, repeated (see [`Sequence`]).
    Sequence(Sequence),
}

/// At most this many blocks in a sequence (fio's limit).
pub const MAX_SEQUENCE: usize = 64;

/// fio's `random_distribution=sequence:2,0,1`: the IOs of each direction go to these blocks of
/// the range in this order, over and over; with `stride` (fio's random_sequence_stride) each
/// pass is one group of `len` blocks further on (2, 0, 1, then 5, 3, 4, …), back to the first
/// group past the range's last whole one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sequence {
    pub len: u8,
    pub stride: bool,
    pub blocks: [u32; MAX_SEQUENCE],
}

impl Sequence {
    pub fn new(blocks: &[u32], stride: bool) -> Result<Sequence, String> {
        if blocks.is_empty() || blocks.len() > MAX_SEQUENCE {
            return Err(format!("give from 1 to {MAX_SEQUENCE} block indices"));
        }
        let mut all = [0; MAX_SEQUENCE];
        all[..blocks.len()].copy_from_slice(blocks);
        Ok(Sequence {
            len: blocks.len() as u8,
            stride,
            blocks: all,
        })
    }

    pub fn blocks(&self) -> &[u32] {
        &self.blocks[..usize::from(self.len)]
    }

    /// The blocks a range needs: one past the largest index (a whole group with a stride).
    pub fn needs(&self) -> u64 {
        let top = self.blocks().iter().max().map_or(0, |b| u64::from(*b) + 1);
        match self.stride {
            true => top.max(u64::from(self.len)),
            false => top,
        }
    }

    /// The block of the `count`th IO of a direction in a range of `n` blocks (at least
    /// [`Sequence::needs`], checked before the run).
    #[inline]
    pub fn block(&self, count: u64, n: u64) -> u64 {
        let len = u64::from(self.len.max(1));
        let b = u64::from(self.blocks[(count % len) as usize]);
        let b = match self.stride {
            true => (count / len) % (n / len).max(1) * len + b,
            false => b,
        };
        b % n.max(1)
    }
}

/// At most this many zones (fio's examples use two to five).
pub const MAX_ZONES: usize = 16;

/// Zones as cumulative shares, so the sampler finds one with a single comparison pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zones {
    pub len: u8,
    /// (cumulative share of the IOs, cumulative share of the range) at each zone's end; f32 is
    /// ample for shares and keeps the distribution small enough to copy into every worker.
    pub ends: [(f32, f32); MAX_ZONES],
}

impl Zones {
    /// From (share of the IOs, share of the range) per zone, in order: the IO shares must add
    /// up to 100%, the range shares to at most 100% (a last zone of no size takes the rest).
    pub fn new(zones: &[(f64, Option<f64>)]) -> Result<Zones, String> {
        if zones.is_empty() || zones.len() > MAX_ZONES {
            return Err(format!("give from 1 to {MAX_ZONES} zones"));
        }
        let mut ends = [(0.0f32, 0.0f32); MAX_ZONES];
        let (mut io, mut range) = (0.0, 0.0);
        for (k, (i, r)) in zones.iter().enumerate() {
            let r = match r {
                Some(r) => *r,
                None if k + 1 == zones.len() => 1.0 - range,
                None => return Err("only the last zone may leave its size out".into()),
            };
            if !(*i >= 0.0 && r > 0.0) {
                return Err("each zone needs a share of the IOs and a size above 0".into());
            }
            io += i;
            range += r;
            ends[k] = (io as f32, range as f32);
        }
        if (io - 1.0).abs() > 1e-6 {
            return Err(format!(
                "the zones' shares of the IOs add up to {:.0}%, not 100%",
                io * 100.0
            ));
        }
        if range > 1.0 + 1e-6 {
            return Err(format!(
                "the zones' sizes add up to {:.0}% of the range, more than all of it",
                range * 100.0
            ));
        }
        Ok(Zones {
            len: zones.len() as u8,
            ends,
        })
    }

    pub fn ends(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.ends[..self.len as usize]
            .iter()
            .map(|&(i, r)| (f64::from(i), f64::from(r)))
    }

    /// fio's own spelling: `zoned:IO%/SIZE%:…`.
    fn parse(arg: &str) -> Result<Zones, String> {
        let zones = arg
            .split(':')
            .map(|z| {
                let (i, r) = z
                    .split_once('/')
                    .ok_or_else(|| format!("'{z}' is not IO%/SIZE%, e.g. 60/10"))?;
                let num = |v: &str| -> Result<f64, String> {
                    v.trim_end_matches('%')
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && (0.0..=100.0).contains(x))
                        .map(|x| x / 100.0)
                        .ok_or_else(|| format!("'{v}' is not a percentage"))
                };
                Ok((num(i)?, (!r.is_empty()).then(|| num(r)).transpose()?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Zones::new(&zones)
    }
}

impl Distribution {
    /// Parses what `--distribution` takes.
    pub fn parse(s: &str) -> Result<Distribution, String> {
        let pct = |v: &str| -> Result<f64, String> {
            let x: f64 = v
                .trim_end_matches('%')
                .parse()
                .map_err(|_| format!("'{v}' is not a percentage"))?;
            if x > 0.0 && x < 100.0 {
                Ok(x / 100.0)
            } else {
                Err(format!("{v} must be between 0% and 100%"))
            }
        };
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        let num = |v: &str| match v {
            "" => Err(format!(
                "'{s}' needs its parameter: zipf:THETA, pareto:H, e.g. zipf:1.2 or pareto:0.9"
            )),
            _ => v
                .parse::<f64>()
                .map_err(|_| format!("'{v}' is not a number")),
        };
        match kind {
            "uniform" if arg.is_empty() => Ok(Distribution::Uniform),
            "zipf" => match num(arg)? {
                t if t > 0.0 && t != 1.0 && t.is_finite() => Ok(Distribution::Zipf(t)),
                _ => Err("zipf:THETA needs THETA > 0 and not 1, e.g. zipf:1.2".into()),
            },
            "pareto" => match num(arg)? {
                h if h > 0.0 && h < 1.0 => Ok(Distribution::Pareto(h)),
                _ => Err("pareto:H needs 0 < H < 1, e.g. pareto:0.9".into()),
            },
            "normal" => Ok(Distribution::Normal(pct(arg)?)),
            "zoned" => Ok(Distribution::Zoned(Zones::parse(arg)?)),
            "hot" => {
                let (d, i) = arg
                    .split_once('/')
                    .ok_or("hot:DATA%/IO%, e.g. hot:10%/90%")?;
                Ok(Distribution::Hot(pct(d)?, pct(i)?))
            }
            _ => Err(format!(
                "'{s}': give uniform, zipf:THETA, pareto:H, normal:STDDEV%, hot:DATA%/IO% or zoned:IO%/SIZE%:…"
            )),
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Zipf(t) => write!(f, "zipf:{t}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Normal(s) => write!(f, "normal:{}%", s * 100.0),
            Distribution::Hot(d, i) => write!(f, "hot:{}%/{}%", d * 100.0, i * 100.0),
            Distribution::Sequence(s) => {
                let list: Vec<String> = s.blocks().iter().map(u32::to_string).collect();
                let stride = if s.stride { " strided" } else { "" };
                write!(f, "sequence:{}{stride}", list.join(","))
            }
            Distribution::Zoned(z) => {
                write!(f, "zoned")?;
                let (mut io, mut range) = (0.0, 0.0);
                for (i, r) in z.ends() {
                    write!(f, ":{}/{}", pct_text(i - io), pct_text(r - range))?;
                    (io, range) = (i, r);
                }
                Ok(())
            }
        }
    }
}

/// A share as a percentage without float noise: 0.3 → "30", 0.125 → "12.5".
fn pct_text(x: f64) -> String {
    let p = (x * 1e4).round() / 100.0;
    match p.fract() == 0.0 {
        true => format!("{p:.0}"),
        false => format!("{p}"),
    }
}

/// Draws block indices in `[0, n)` from a distribution with a generator's uniform numbers.
pub struct Sampler {
    dist: Distribution,
    n: u64,
    /// Multiplier of the scattering permutation, coprime to `n`.
    scatter: u64,
    zipf: Option<Zipf>,
}

impl Sampler {
    pub fn new(dist: Distribution, n: u64) -> Sampler {
        let n = n.max(1);
        let mut scatter = 0x9E37_79B9_7F4A_7C15 % n;
        while scatter == 0 || gcd(scatter, n) != 1 {
            scatter = (scatter + 1) % n.max(2);
            if n == 1 {
                scatter = 1;
                break;
            }
        }
        let zipf = match dist {
            Distribution::Zipf(t) => Some(Zipf::new(n, t)),
            _ => None,
        };
        Sampler {
            dist,
            n,
            scatter,
            zipf,
        }
    }

    /// The rank (0 = hottest) of the next IO, before scattering.
    #[inline]
    pub fn rank(&self, rng: &mut fastrand::Rng) -> u64 {
        let n = self.n;
        match self.dist {
            Distribution::Uniform => rng.u64(0..n),
            Distribution::Zipf(_) => match &self.zipf {
                Some(z) => z.sample(rng),
                None => rng.u64(0..n),
            },
            Distribution::Pareto(h) => {
                let u = rng.f64();
                ((n as f64 * u.powf(1.0 / (1.0 - h))) as u64).min(n - 1)
            }
            Distribution::Normal(sd) => {
                // Box–Muller; one of the pair is enough.
                let (u1, u2) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let x = 0.5 + z * sd;
                (x.rem_euclid(1.0) * n as f64) as u64 % n
            }
            Distribution::Hot(data, ios) => {
                let hot = ((n as f64 * data) as u64).clamp(1, n);
                if rng.f64() < ios || hot == n {
                    rng.u64(0..hot)
                } else {
                    rng.u64(hot..n)
                }
            }
            // Drawn by the stream's own count (`Offsets`), never here: uniform if it were.
            Distribution::Sequence(_) => rng.u64(0..n),
            Distribution::Zoned(z) => {
                // The zone by its cumulative share of the IOs, then a block inside it.
                let u = rng.f64();
                let mut from = 0.0;
                for (io, range) in z.ends() {
                    if u < io {
                        let lo = ((n as f64 * from) as u64).min(n - 1);
                        let hi = ((n as f64 * range) as u64).clamp(lo + 1, n);
                        return rng.u64(lo..hi);
                    }
                    from = range;
                }
                rng.u64(0..n)
            }
        }
    }

    /// fio's sequence, which the stream walks by its own count of IOs.
    #[inline]
    pub fn sequence(&self) -> Option<&Sequence> {
        match &self.dist {
            Distribution::Sequence(s) => Some(s),
            _ => None,
        }
    }

    /// The block of the next IO.
    #[inline]
    pub fn block(&self, rng: &mut fastrand::Rng) -> u64 {
        let r = self.rank(rng);
        match self.dist {
            // Zones are places in the file, as fio lays them out: never scattered.
            Distribution::Uniform | Distribution::Zoned(_) | Distribution::Sequence(_) => r,
            _ => ((r as u128 * self.scatter as u128) % self.n as u128) as u64,
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Rejection-inversion sampling of Zipf(n, θ) (Hörmann and Derflinger 1996).
struct Zipf {
    n: f64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            theta,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(z.n + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.theta) * lx) * lx
    }

    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.theta)).max(-1.0);
        (helper1(t) * x).exp()
    }

    /// A rank in [0, n).
    fn sample(&self, rng: &mut fastrand::Rng) -> u64 {
        loop {
            let u = self.h_n + rng.f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
}

/// ln(1 + x) / x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x − 1) / x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of draws that land on the hottest `share` of ranks.
    fn hot_share(dist: Distribution, n: u64, share: f64, draws: u32) -> f64 {
        let s = Sampler::new(dist, n);
        let mut rng = fastrand::Rng::with_seed(7);
        let top = (n as f64 * share) as u64;
        let hits = (0..draws).filter(|_| s.rank(&mut rng) < top).count();
        hits as f64 / f64::from(draws)
    }

    // Issue 16: for zipf:1.2 the share of IOs that hit the hottest 1% of blocks matches the
    // theory, H(n/100, θ) / H(n, θ) with H the generalized harmonic number.
    #[test]
    fn zipf_puts_the_theoretical_share_on_the_hottest_percent() {
        let n = 100_000u64;
        let theta = 1.2;
        let h = |m: u64| (1..=m).map(|k| (k as f64).powf(-theta)).sum::<f64>();
        let theory = h(n / 100) / h(n);
        let seen = hot_share(Distribution::Zipf(theta), n, 0.01, 400_000);
        assert!((seen - theory).abs() < 0.02, "{seen} against {theory}");
    }

    #[test]
    fn hot_uniform_and_blocks_in_range() {
        let seen = hot_share(Distribution::Hot(0.1, 0.9), 10_000, 0.1, 200_000);
        assert!((seen - 0.9).abs() < 0.01, "{seen}");
        let seen = hot_share(Distribution::Uniform, 10_000, 0.1, 200_000);
        assert!((seen - 0.1).abs() < 0.01, "{seen}");
        let mut rng = fastrand::Rng::with_seed(1);
        for d in [
            Distribution::Zipf(0.8),
            Distribution::Pareto(0.9),
            Distribution::Normal(0.2),
            Distribution::Hot(0.05, 0.95),
        ] {
            let s = Sampler::new(d, 1000);
            assert!((0..10_000).all(|_| s.block(&mut rng) < 1000), "{d}");
        }
    }

    #[test]
    fn the_scatter_is_a_permutation_and_the_flags_parse() {
        let s = Sampler::new(Distribution::Zipf(1.2), 4096);
        let mut seen = vec![false; 4096];
        for r in 0..4096u64 {
            seen[((r as u128 * s.scatter as u128) % 4096) as usize] = true;
        }
        assert!(seen.iter().all(|&b| b));
        assert_eq!(
            Distribution::parse("hot:10%/90%"),
            Ok(Distribution::Hot(0.1, 0.9))
        );
        assert_eq!(Distribution::parse("zipf:1.2"), Ok(Distribution::Zipf(1.2)));
        assert!(Distribution::parse("zipf:1").is_err());
        assert!(Distribution::parse("gauss").is_err());
    }

    /// fio's `zoned:60/10:30/20:8/30:2/40`: 60% of the IOs in the first 10% of the range, and
    /// so on; a last zone without a size takes the rest; shares that do not add up are refused.
    #[test]
    fn zoned_distributions_put_their_shares_in_their_places() {
        let d = Distribution::parse("zoned:60/10:30/20:8/30:2/40").unwrap();
        assert_eq!(d.to_string(), "zoned:60/10:30/20:8/30:2/40");
        let s = Sampler::new(d, 10_000);
        let mut rng = fastrand::Rng::with_seed(7);
        let n = 200_000;
        let first = (0..n).filter(|_| s.block(&mut rng) < 1_000).count() as f64 / n as f64;
        assert!((first - 0.6).abs() < 0.01, "{first}");
        let rest = Distribution::parse("zoned:50/5:30/15:20/").unwrap();
        assert_eq!(rest.to_string(), "zoned:50/5:30/15:20/80");
        for bad in [
            "zoned:50/5:30/15",
            "zoned:60/70:40/40",
            "zoned:50/:50/10",
            "zoned:x",
        ] {
            assert!(Distribution::parse(bad).is_err(), "{bad}");
        }
    }

    /// fio's sequence: the blocks in their order, over and over; with a stride each pass a
    /// group further on, back to the first past the last whole group of the range.
    #[test]
    fn a_sequence_repeats_and_a_strided_one_moves_on_by_its_length() {
        let plain = Sequence::new(&[2, 0, 1], false).unwrap();
        let walk = |s: &Sequence, n| (0..14).map(|c| s.block(c, n)).collect::<Vec<u64>>();
        assert_eq!(walk(&plain, 12), [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        let strided = Sequence::new(&[2, 0, 1], true).unwrap();
        // 13 blocks hold four whole groups of three.
        assert_eq!(
            walk(&strided, 13),
            [2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10, 2, 0]
        );
        assert_eq!(
            (plain.needs(), Sequence::new(&[0], true).unwrap().needs()),
            (3, 1)
        );
        assert!(Sequence::new(&[], false).is_err());
        assert!(Sequence::new(&[0; MAX_SEQUENCE + 1], false).is_err());
        let d = Distribution::Sequence(strided);
        assert_eq!(d.to_string(), "sequence:2,0,1 strided");
    }
}
