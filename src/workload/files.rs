//! Which file each IO goes to when a job spreads its IO over several (fio's `nrfiles` and
//! `file_service_type`). The offsets within a file are `offsets`' business: one stream per file.

use super::offsets::thread_seed;
use super::FileService;

/// Picks the file of each IO of a target of several files, as fio's `file_service_type` does:
/// an index computation, no allocation. Only built when there is more than one file.
pub struct FilePicker {
    files: u32,
    /// IOs per turn: roundrobin's and random's `:K`, sequential's pass.
    turn: u64,
    random: bool,
    current: u32,
    left: u64,
    rng: fastrand::Rng,
}

impl FilePicker {
    /// Over `files` files; `pass` is the IOs of one pass over a file (for `sequential`).
    pub fn new(kind: FileService, files: u32, pass: u64, seed: u64, thread: u32) -> FilePicker {
        let (turn, random) = match kind {
            FileService::RoundRobin(k) => (u64::from(k.max(1)), false),
            FileService::Sequential => (pass.max(1), false),
            FileService::Random(k) => (u64::from(k.max(1)), true),
        };
        let mut rng = fastrand::Rng::with_seed(thread_seed(seed ^ 0x6A09_E667_F3BC_C909, thread));
        // Round robin and sequential start at the first file, as fio's do; random draws the
        // first file too, from the thread's own sequence.
        let current = match random {
            true => rng.u32(0..files.max(1)),
            false => 0,
        };
        FilePicker {
            files: files.max(1),
            turn,
            random,
            current,
            left: turn,
            rng,
        }
    }

    /// The file of the next IO.
    #[inline]
    pub fn next(&mut self) -> usize {
        if self.left == 0 {
            self.left = self.turn;
            self.current = match self.random {
                true => self.rng.u32(0..self.files),
                false => (self.current + 1) % self.files,
            };
        }
        self.left -= 1;
        self.current as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_picked_as_fios_file_service_type_says() {
        let picks = |kind, n| {
            let mut p = FilePicker::new(kind, 3, 4, 1, 0);
            (0..n).map(|_| p.next()).collect::<Vec<usize>>()
        };
        assert_eq!(
            picks(FileService::RoundRobin(1), 7),
            [0, 1, 2, 0, 1, 2, 0],
            "fio's default: the next file every IO"
        );
        assert_eq!(picks(FileService::RoundRobin(2), 7), [0, 0, 1, 1, 2, 2, 0]);
        assert_eq!(
            picks(FileService::Sequential, 9),
            [0, 0, 0, 0, 1, 1, 1, 1, 2],
            "a pass of 4 IOs, then the next file"
        );
        let random = picks(FileService::Random(1), 3000);
        for f in 0..3 {
            let n = random.iter().filter(|&&x| x == f).count();
            assert!((800..1200).contains(&n), "file {f} drawn {n} times of 3000");
        }
        let runs = picks(FileService::Random(5), 50);
        assert!(
            runs.chunks(5).all(|c| c.iter().all(|&x| x == c[0])),
            "random:5 keeps a file for 5 IOs: {runs:?}"
        );
    }
}
