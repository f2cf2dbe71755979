//! fio's sprandom: its options read into the job, fio's defaults, and each rule fio or iogauge
//! has refused with its reason.

use super::*;
use crate::workload::Spr;

#[test]
fn sprandom_maps_with_fios_defaults() {
    // sprandom.fio: over-provisioning and regions given.
    let j = &jobs("[a]\nrw=randwrite\nsprandom=1\nspr_op=0.21\nspr_num_regions=400\n")[0];
    assert_eq!(
        j.spr,
        Some(Spr {
            op: 0.21,
            regions: 400
        })
    );
    // fio's defaults: 15% and 100 regions; norandommap and random_generator=lfsr as fio sets.
    let j = &jobs("[a]\nrw=randwrite\nsprandom=1\nnorandommap=1\nrandom_generator=lfsr\n")[0];
    assert_eq!(
        j.spr,
        Some(Spr {
            op: 0.15,
            regions: 100
        })
    );
    assert_eq!(jobs("[a]\nrw=randwrite\nsprandom=0\n")[0].spr, None);
}

#[test]
fn sprandom_rules_are_refused_with_their_reasons() {
    for (text, why) in [
        (
            "[a]\nrw=write\nsprandom=1\n",
            "random writes (rw=randwrite)",
        ),
        ("[a]\nrw=randwrite\nspr_op=0.2\n", "goes with sprandom=1"),
        (
            "[a]\nrw=randwrite\nsprandom=1\nrandom_generator=tausworthe\n",
            "requires random_generator=lfsr",
        ),
        (
            "[a]\nrw=randwrite\nsprandom=1\nnorandommap=0\n",
            "requires norandommap=1",
        ),
        (
            "[a]\nrw=randwrite\nsprandom=1\nnumjobs=2\n",
            "its own whole sequence",
        ),
        (
            "[a]\nrw=randwrite\nsprandom=1\nloops=2\n",
            "writes the sequence once",
        ),
        (
            "[a]\nrw=randwrite\nsprandom=1\nspr_cs=1m\n",
            "past a cache are not mapped",
        ),
        (
            "[a]\nrw=randwrite\nsprandom=1\nspr_op=1.5\n",
            "between 0 and 1",
        ),
        (
            "[a]\nrw=randwrite\nsprandom=1\nspr_num_regions=0\n",
            "at least 1",
        ),
        (
            "[a]\nrw=randwrite\nsprandom=1\nbssplit=4k/50:8k/50\n",
            "one block size",
        ),
    ] {
        let e = refusal(text);
        assert!(e.contains(why), "{text:?}: {e}");
    }
}
