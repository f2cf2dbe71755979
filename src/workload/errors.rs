//! fio's continue_on_error with ignore_error: the IO errors a job counts and goes on after, in
//! a fixed set per direction, so the check costs nothing on the path of IOs that succeed and
//! allocates nothing on the one of IOs that fail.

/// Errors a job may meet and go on after, per direction (errno values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tolerate {
    pub read: Errnos,
    pub write: Errnos,
}

impl Tolerate {
    /// Whether `errno` from a read (or a write) lets the job go on.
    pub fn lets_go_on(&self, write: bool, errno: i32) -> bool {
        match write {
            true => self.write.contains(errno),
            false => self.read.contains(errno),
        }
    }
}

/// At most [`Errnos::MAX`] errno values (fio's lists are a handful).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Errnos {
    len: u8,
    list: [i32; Errnos::MAX],
}

impl Errnos {
    pub const MAX: usize = 16;

    /// fio's default list of errors a `continue_on_error` direction goes on after.
    pub fn fios_default() -> Errnos {
        Errnos::of(&[libc::EIO, libc::EILSEQ]).unwrap_or_default()
    }

    /// The set, or `None` when there are more than [`Errnos::MAX`].
    pub fn of(errnos: &[i32]) -> Option<Errnos> {
        let mut s = Errnos::default();
        for &e in errnos {
            if !s.contains(e) {
                *s.list.get_mut(usize::from(s.len))? = e;
                s.len += 1;
            }
        }
        Some(s)
    }

    pub fn contains(&self, errno: i32) -> bool {
        self.list[..usize::from(self.len)].contains(&errno)
    }
}

/// The name of an errno fio's ignore_error may give (and iogauge's reports print), or its
/// number.
pub fn errno_name(errno: i32) -> String {
    NAMES
        .iter()
        .find(|(_, e)| *e == errno)
        .map_or_else(|| errno.to_string(), |(n, _)| n.to_string())
}

/// An errno by name (`ENOSPC`) or number (`28`).
pub fn errno_of(s: &str) -> Option<i32> {
    match s.parse::<i32>() {
        Ok(n) if n > 0 => Some(n),
        Ok(_) => None,
        Err(_) => NAMES.iter().find(|(n, _)| *n == s).map(|(_, e)| *e),
    }
}

/// The errors storage gives back, by name.
const NAMES: [(&str, i32); 22] = [
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("EBADF", libc::EBADF),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("EBUSY", libc::EBUSY),
    ("EINVAL", libc::EINVAL),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("ENODATA", libc::ENODATA),
    ("EILSEQ", libc::EILSEQ),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("EDQUOT", libc::EDQUOT),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_what_it_was_given_and_no_more() {
        let s = Errnos::of(&[libc::ENOSPC, libc::EIO, libc::ENOSPC]).unwrap();
        assert!(s.contains(libc::ENOSPC) && s.contains(libc::EIO));
        assert!(!s.contains(libc::EINVAL));
        assert_eq!(s.len, 2);
        assert!(Errnos::of(&(1..=17).collect::<Vec<_>>()).is_none());
        let t = Tolerate {
            write: s,
            ..Tolerate::default()
        };
        assert!(t.lets_go_on(true, libc::ENOSPC) && !t.lets_go_on(false, libc::ENOSPC));
    }

    #[test]
    fn errnos_are_read_by_name_or_number() {
        assert_eq!(errno_of("ENOSPC"), Some(libc::ENOSPC));
        assert_eq!(errno_of("122"), Some(122));
        assert_eq!(errno_of("ENOTHING"), None);
        assert_eq!(errno_of("0"), None);
        assert_eq!(errno_name(libc::EILSEQ), "EILSEQ");
        assert_eq!(errno_name(4095), "4095");
    }
}
