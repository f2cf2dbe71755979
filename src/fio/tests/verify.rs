//! fio's verify options as iogauge's --verify: which jobs stamp, which check, and which read
//! back after themselves (fio's surface scan: a writer with do_verify=0, then a reader).

use super::*;

#[test]
fn a_reader_after_an_unread_writer_checks_its_stamps() {
    let scan = "[global]\nverify=meta\n[w]\nrw=write\ndo_verify=0\n[r]\nstonewall\nrw=read\n";
    let j = jobs(scan);
    assert!(j.iter().all(|j| j.verify), "both stamp and check");
    assert!(!j[0].readback && !j[0].checks());
    // A job that only reads checks every read, whatever do_verify says (fio's rule).
    assert!(j[1].checks());
    let j = jobs("[r]\nrw=read\nverify=md5\ndo_verify=0\n");
    assert!(j[0].verify && j[0].checks());
    // Near miss: a writer alone with do_verify=0: nothing checks, nothing is stamped.
    let j = jobs("[w]\nrw=randwrite\nverify=md5\ndo_verify=0\n");
    assert!(!j[0].verify);
}

#[test]
fn a_verify_pattern_verifies_and_its_pieces_are_read() {
    // Without verify= a pattern selects fio's pattern_hdr: a verifying job.
    for p in [
        "0xaa555aa5",
        "0xff0x14",
        "-1024",
        "\"abc\"",
        "0xff%o\"abcd\"-12",
        "%o",
    ] {
        let j = &jobs(&format!("[a]\nverify_pattern={p}\n"))[0];
        assert!(j.verify, "{p}");
    }
    // verify=0 said: the pattern does not turn it back on.
    assert!(!jobs("[a]\nverify=0\nverify_pattern=0xaa\n")[0].verify);
    for (p, why) in [
        ("", "give hex bytes"),
        ("0xzz", "\"0xzz\""),
        ("\"open", "\"\\\"open\""),
        ("'file'", "give hex bytes"),
    ] {
        let e = refusal(&format!("[a]\nverify_pattern={p}\n"));
        assert!(e.contains("verify_pattern") && e.contains(why), "{p}: {e}");
    }
    assert!(refusal("[a]\nverify=crc32c\nverify_interval=64\n").contains("give 96 or more"));
    assert!(jobs("[a]\nverify=crc32c\nverify_interval=512\n")[0].verify);
}

#[test]
fn fio_verify_options_that_change_the_run_stay_refused() {
    for opt in ["verify_backlog=1", "verify_dump=1", "verify_async=4"] {
        let e = refusal(&format!("[a]\nrw=write\nverify=crc32c\n{opt}\n"));
        assert!(
            e.contains("fio's verify options are not mapped"),
            "{opt}: {e}"
        );
    }
}

#[test]
fn verify_fatal_is_read_and_agreed_by_every_job() {
    assert!(jobs("[a]\nverify=md5\nverify_fatal=1\n")[0].verify_fatal);
    assert!(!jobs("[a]\nverify=md5\n")[0].verify_fatal);
    assert!(refusal("[a]\nverify_fatal=maybe\n").contains("give 1 or 0"));
}
