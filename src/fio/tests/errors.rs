//! fio's continue_on_error with ignore_error: the errors each direction goes on after, fio's
//! default list, and what would do nothing or cannot be kept refused.

use super::*;
use crate::workload::errors::Errnos;

#[test]
fn continue_on_error_picks_the_directions_and_ignore_error_their_errors() {
    let t = jobs("[a]\nrw=randrw\ncontinue_on_error=write\nignore_error=,ENOSPC:122\n")[0]
        .tolerate
        .unwrap();
    assert!(t.lets_go_on(true, libc::ENOSPC) && t.lets_go_on(true, 122));
    assert!(
        !t.lets_go_on(true, libc::EIO),
        "the list replaces fio's default"
    );
    assert!(!t.lets_go_on(false, libc::ENOSPC), "reads stop");
    // fio's default list (EIO, EILSEQ) for each direction continue_on_error names.
    let t = jobs("[a]\ncontinue_on_error=io\n")[0].tolerate.unwrap();
    assert_eq!(
        (t.read, t.write),
        (Errnos::fios_default(), Errnos::fios_default())
    );
    assert!(t.lets_go_on(false, libc::EIO) && !t.lets_go_on(false, libc::ENOSPC));
    // Near misses: none, verify (iogauge's verify never stops a job) and error_dump=0 keep
    // the job as it was.
    for off in [
        "continue_on_error=none",
        "continue_on_error=verify",
        "error_dump=0",
    ] {
        assert_eq!(jobs(&format!("[a]\n{off}\n"))[0].tolerate, None, "{off}");
    }
}

#[test]
fn ignore_error_without_its_direction_or_with_a_verify_list_is_refused() {
    for (text, why) in [
        (
            "ignore_error=,ENOSPC\n",
            "continue_on_error does not go on after write errors",
        ),
        (
            "continue_on_error=read\nignore_error=,ENOSPC\n",
            "add continue_on_error=write",
        ),
        (
            "continue_on_error=all\nignore_error=,,EILSEQ\n",
            "a verify list",
        ),
        (
            "continue_on_error=all\nignore_error=ENOTANERROR\n",
            "ENOTANERROR is not an error",
        ),
        (
            "rw=write\nverify=md5\ncontinue_on_error=write\n",
            "a write that failed",
        ),
    ] {
        let e = refusal(&format!("[a]\n{text}"));
        assert!(e.contains(why), "{text}: {e}");
    }
}
