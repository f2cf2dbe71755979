//! What each write carries: iogauge's unique, incompressible bytes, or the compressible and
//! repeated ones fio's buffer_compress_* and dedupe_* ask for.

/// What each write carries when it is asked to be compressible or to repeat earlier writes
/// (fio's buffer_compress_percentage and buffer_compress_chunk, dedupe_percentage, dedupe_mode,
/// dedupe_working_set_percentage and dedupe_global). The default, all zero, is iogauge's own:
/// unique, incompressible bytes with every sector's place stamped in it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Content {
    /// Share (0–100) of each chunk that is zeros, after its random bytes.
    pub compress: u8,
    /// Bytes in a chunk (0: fio's default, 512).
    pub chunk: u32,
    /// Share (0–100) of writes that repeat an earlier write's bytes exactly.
    pub dedupe: u8,
    /// What a repeat repeats.
    pub repeats: Repeats,
}

/// What a deduplicated write repeats (fio's dedupe_mode).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Repeats {
    /// The thread's last unique write (fio's `repeat`).
    #[default]
    Last,
    /// One of the first unique writes, drawn uniformly: `pct` of the thread's range in blocks
    /// (fio's `working_set` with dedupe_working_set_percentage); `global`, of the unique writes
    /// of every thread running at once that sets it (fio's dedupe_global).
    WorkingSet { pct: u8, global: bool },
}

impl Content {
    /// iogauge's own: unique, incompressible, stamped.
    pub fn is_plain(&self) -> bool {
        self.compress == 0 && self.dedupe == 0
    }

    /// The chunk fio's buffer_compress_chunk names, 512 bytes by default.
    pub fn chunk_bytes(&self) -> usize {
        match self.chunk {
            0 => 512,
            c => c as usize,
        }
    }
}

impl std::fmt::Display for Content {
    /// How a cell's name says it: "compress 50%/4 KiB chunks · dedupe 30% of 5% (global)".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if self.compress > 0 {
            let mut p = format!("compress {}%", self.compress);
            if self.chunk_bytes() != 512 {
                p.push_str(&format!(
                    "/{} chunks",
                    crate::units::iec(self.chunk_bytes() as u64)
                ));
            }
            parts.push(p);
        }
        if self.dedupe > 0 {
            parts.push(match self.repeats {
                Repeats::Last => format!("dedupe {}% repeating the last", self.dedupe),
                Repeats::WorkingSet { pct, global } => format!(
                    "dedupe {}% of a {pct}% working set{}",
                    self.dedupe,
                    if global { " (global)" } else { "" }
                ),
            });
        }
        f.write_str(&parts.join(" · "))
    }
}
