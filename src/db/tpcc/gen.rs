//! The TPC-C specification's random values (clause 2.1.6 and 4.3.2): NURand, customers' last
//! names from syllables, strings of letters and digits, the zip codes.

/// The constants C of NURand (clause 2.1.6): chosen once. The run's C for last names differs
/// from the load's by 65 to 119 and not 96 or 112 (clause 2.1.6.1): here by 66.
pub const C_LAST_LOAD: u64 = 157;
pub const C_LAST_RUN: u64 = 223;
pub const C_ID: u64 = 259;
pub const C_OL_I_ID: u64 = 7911;

/// Items in the catalogue, customers and orders per district at the load (clause 4.3.3.1).
pub const ITEMS: u64 = 100_000;
pub const CUSTOMERS: u64 = 3000;
pub const DISTRICTS: u64 = 10;
/// Orders loaded per district whose new-order row remains undelivered: the last 900.
pub const UNDELIVERED_FROM: u64 = 2101;

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// A last name from a number 0..=999: its three digits' syllables.
pub fn last_name(n: u64) -> String {
    let n = n % 1000;
    format!(
        "{}{}{}",
        SYLLABLES[(n / 100) as usize],
        SYLLABLES[(n / 10 % 10) as usize],
        SYLLABLES[(n % 10) as usize]
    )
}

/// The generator of one loader or terminal.
pub struct Gen(pub fastrand::Rng);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(fastrand::Rng::with_seed(seed))
    }

    /// A uniform integer in x..=y.
    pub fn int(&mut self, x: u64, y: u64) -> u64 {
        self.0.u64(x..=y)
    }

    /// NURand(A, x, y) with constant `c` (clause 2.1.6).
    pub fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> u64 {
        (((self.int(0, a) | self.int(x, y)) + c) % (y - x + 1)) + x
    }

    /// A string of letters and digits, `min..=max` long (the specification's a-string).
    pub fn astring(&mut self, min: usize, max: usize) -> String {
        let n = self.0.usize(min..=max);
        (0..n).map(|_| self.0.alphanumeric()).collect()
    }

    /// A string of digits, `n` long (n-string).
    pub fn nstring(&mut self, n: usize) -> String {
        (0..n).map(|_| self.0.digit(10)).collect()
    }

    /// A zip code: four random digits and "11111" (clause 4.3.2.7).
    pub fn zip(&mut self) -> String {
        format!("{}11111", self.nstring(4))
    }

    /// Data with "ORIGINAL" somewhere in 10% of cases (items, stock: clause 4.3.3.1).
    pub fn data(&mut self, min: usize, max: usize) -> String {
        let mut s = self.astring(min, max);
        if self.0.u8(0..10) == 0 {
            let at = self.0.usize(0..=s.len() - 8);
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }

    /// A decimal with `scale` digits after the point, uniform in lo..=hi (in those units).
    pub fn money(&mut self, lo: u64, hi: u64, scale: u32) -> String {
        let v = self.int(lo, hi);
        let d = 10u64.pow(scale);
        format!("{}.{:0width$}", v / d, v % d, width = scale as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_are_the_specifications_syllables() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_not_uniform() {
        let mut g = Gen::new(7);
        let mut hits = vec![0u32; 1000];
        for _ in 0..100_000 {
            let v = g.nurand(255, 0, 999, C_LAST_RUN);
            assert!(v <= 999);
            hits[v as usize] += 1;
        }
        let max = *hits.iter().max().unwrap();
        let min = *hits.iter().min().unwrap();
        // Uniform draws would give about 100 each; NURand's OR skews some names far above.
        assert!(max > 3 * min.max(1), "max {max} min {min}");
    }

    #[test]
    fn data_and_money_have_the_asked_shape() {
        let mut g = Gen::new(1);
        let with = (0..1000)
            .filter(|_| g.data(26, 50).contains("ORIGINAL"))
            .count();
        assert!((50..=150).contains(&with), "{with}");
        assert_eq!(g.money(1, 1, 2), "0.01");
        assert_eq!(g.money(500000, 500000, 2), "5000.00");
        assert_eq!(g.zip().len(), 9);
    }
}
