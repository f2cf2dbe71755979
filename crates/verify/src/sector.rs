//! The sector format, [`stamp`] and [`check`].

/// The unit every header covers: a torn write shows at this granularity, and 4 KiB is what
/// drives and file systems write atomically at best.
pub const SECTOR: usize = 4096;
/// Bytes of header at the start of each sector; the rest is payload.
pub const HEADER: usize = 40;

const MAGIC: [u8; 8] = *b"iogVRFY1";
const CRC_AT: usize = 32;

/// What identifies one run's data: `id` tells its blocks from another run's, `seed` keys the
/// payload. Both are chosen at random when a run starts and kept with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunKey {
    pub id: u64,
    pub seed: u64,
}

/// What a block read back is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every sector is intact, in place and of this generation (at least the one expected).
    Ok { generation: u64 },
    /// A sector whose checksum does not match its contents (bit rot, a bad transfer), or a
    /// valid checksum over a payload this run never wrote.
    Corrupt { sector: u32 },
    /// A valid block of this run whose header names another offset: the data of the block
    /// written at `stored_offset` came back from here.
    Misdirected { stored_offset: u64 },
    /// A valid block of an older generation than the last one acknowledged: a write that
    /// never landed.
    Lost { found: u64, expected: u64 },
    /// Sectors of different writes inside one block (`None`: a sector never written); the
    /// first sector that differs from sector 0 is `sector`.
    Torn {
        sector: u32,
        first: Option<u64>,
        other: Option<u64>,
    },
    /// Zeros or data that is not this run's, where the run wrote.
    Unwritten,
}

/// Fills `buf` (a whole number of 4 KiB sectors) with generation `generation` of the block at
/// byte `offset`.
///
/// # Panics
/// When `buf.len()` is not a multiple of [`SECTOR`].
pub fn stamp(buf: &mut [u8], run: &RunKey, offset: u64, generation: u64) {
    assert!(
        buf.len().is_multiple_of(SECTOR),
        "a verified block is whole 4 KiB sectors"
    );
    for (i, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
        let at = offset + (i * SECTOR) as u64;
        s[0..8].copy_from_slice(&MAGIC);
        s[8..16].copy_from_slice(&run.id.to_le_bytes());
        s[16..24].copy_from_slice(&at.to_le_bytes());
        s[24..32].copy_from_slice(&generation.to_le_bytes());
        s[36..40].fill(0);
        let mut rng = Payload::new(run.seed, at, generation);
        for w in s[HEADER..].chunks_exact_mut(8) {
            w.copy_from_slice(&rng.next().to_le_bytes());
        }
        let crc = crc_of(s);
        s[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Classifies the block read back from byte `offset`. `expected_generation` is the last
/// generation whose write was acknowledged, if the caller knows it: an older one is
/// [`Verdict::Lost`], the same or a newer one (a write in flight that landed) is fine.
///
/// When several things are wrong the most specific damage wins: corrupt, then misdirected,
/// then torn, then lost, then unwritten.
///
/// # Panics
/// When `buf.len()` is not a positive multiple of [`SECTOR`].
pub fn check(buf: &[u8], run: &RunKey, offset: u64, expected_generation: Option<u64>) -> Verdict {
    assert!(
        !buf.is_empty() && buf.len().is_multiple_of(SECTOR),
        "a verified block is whole 4 KiB sectors"
    );
    let mut misdirected = None;
    let mut first: Option<Option<u64>> = None;
    let mut torn = None;
    for (i, s) in buf.chunks_exact(SECTOR).enumerate() {
        let at = offset + (i * SECTOR) as u64;
        let state = match sector(s, run, at) {
            Sector::Corrupt => return Verdict::Corrupt { sector: i as u32 },
            Sector::Elsewhere(stored) => {
                // Name the block the data belongs to, not the sector.
                misdirected.get_or_insert(stored.wrapping_sub((i * SECTOR) as u64));
                continue;
            }
            Sector::Foreign => None,
            Sector::Ours(g) => Some(g),
        };
        match first {
            None => first = Some(state),
            Some(f) if f != state && torn.is_none() => torn = Some((i as u32, f, state)),
            Some(_) => {}
        }
    }
    if let Some(stored_offset) = misdirected {
        return Verdict::Misdirected { stored_offset };
    }
    if let Some((sector, first, other)) = torn {
        return Verdict::Torn {
            sector,
            first,
            other,
        };
    }
    match first.flatten() {
        None => Verdict::Unwritten,
        Some(found) => match expected_generation {
            Some(expected) if found < expected => Verdict::Lost { found, expected },
            _ => Verdict::Ok { generation: found },
        },
    }
}

/// The run id a stamped sector carries, when it is an intact stamped sector (magic and
/// checksum hold): how a reader that kept nothing learns which run wrote a file.
pub fn run_id_of(s: &[u8]) -> Option<u64> {
    if s.len() < SECTOR || s[0..8] != MAGIC {
        return None;
    }
    let s = &s[..SECTOR];
    let crc = u32::from_le_bytes([s[32], s[33], s[34], s[35]]);
    (crc == crc_of(s)).then(|| u64_at(s, 8))
}

enum Sector {
    Ours(u64),
    Corrupt,
    Elsewhere(u64),
    Foreign,
}

fn sector(s: &[u8], run: &RunKey, at: u64) -> Sector {
    let magic = s[0..8] == MAGIC;
    let id = u64_at(s, 8);
    if !magic {
        // A damaged magic in a sector of this run is damage; anything else was never ours.
        return if id == run.id {
            Sector::Corrupt
        } else {
            Sector::Foreign
        };
    }
    let crc = u32::from_le_bytes([s[32], s[33], s[34], s[35]]);
    if crc != crc_of(s) {
        return Sector::Corrupt;
    }
    if id != run.id {
        return Sector::Foreign;
    }
    let stored = u64_at(s, 16);
    let generation = u64_at(s, 24);
    if stored != at {
        return Sector::Elsewhere(stored);
    }
    // The checksum says the sector is as written; the payload says it was written by this
    // run's key, so a header copied onto other data cannot pass.
    let mut rng = Payload::new(run.seed, at, generation);
    let same = s[HEADER..]
        .chunks_exact(8)
        .all(|w| u64::from_le_bytes(w.try_into().unwrap()) == rng.next());
    if same {
        Sector::Ours(generation)
    } else {
        Sector::Corrupt
    }
}

fn u64_at(s: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(s[at..at + 8].try_into().unwrap())
}

fn crc_of(s: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&s[..CRC_AT]), &s[CRC_AT + 4..])
}

/// wyrand (Wang Yi's generator, the one `fastrand` uses) seeded by a splitmix64 mix of the
/// key: fast, and its output does not compress.
struct Payload(u64);

impl Payload {
    fn new(seed: u64, offset: u64, generation: u64) -> Self {
        Payload(mix(seed ^ mix(offset ^ mix(generation))))
    }

    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        (t >> 64) as u64 ^ t as u64
    }
}

/// splitmix64's finaliser.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
