//! What a job's writes carry (fio's buffer_compress_* and dedupe_*).

use super::*;

/// What the writes carry: dedupe-global.fio's options as fio reads them, zero_buffers as all
/// zeros, fio's defaults (512-byte chunks, repeat, a 5% working set).
#[test]
fn compress_and_dedupe_options_shape_what_writes_carry() {
    use crate::workload::{Content, Repeats};
    let j = &jobs("[global]\nrw=write\nbs=4k\nsize=100m\ndedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=50\nbuffer_compress_percentage=50\ndedupe_working_set_percentage=50\n[a]\n[b]\n")[1];
    assert_eq!(
        j.content,
        Content {
            compress: 50,
            chunk: 0,
            dedupe: 50,
            repeats: Repeats::WorkingSet {
                pct: 50,
                global: true
            }
        }
    );
    assert_eq!(j.content.chunk_bytes(), 512);
    let j = &jobs("[a]\nrw=randwrite\nzero_buffers=1\n")[0];
    assert_eq!(j.content.compress, 100);
    let j = &jobs("[a]\nrw=randrw\nbuffer_compress_percentage=30\nbuffer_compress_chunk=4k\ndedupe_percentage=10\n")[0];
    assert_eq!(
        (j.content.compress, j.content.chunk, j.content.dedupe),
        (30, 4096, 10)
    );
    assert_eq!(j.content.repeats, Repeats::Last);
    let j = &jobs("[a]\nrw=write\ndedupe_percentage=10\ndedupe_mode=working_set\n")[0];
    assert_eq!(
        j.content.repeats,
        Repeats::WorkingSet {
            pct: 5,
            global: false
        }
    );
    // fio's zeros are iogauge's default: nothing changes.
    let j =
        &jobs("[a]\nrw=write\nzero_buffers=0\nbuffer_compress_percentage=0\ndedupe_percentage=0\n")
            [0];
    assert!(j.content.is_plain());
}

#[test]
fn content_rules_are_refused_at_their_lines() {
    super::refusals::refused_at(&[
        (
            "[a]\nrw=write\ndedupe_mode=working_set\n",
            3,
            "which is not set",
        ),
        (
            "[a]\nrw=write\ndedupe_percentage=10\ndedupe_global=1\n",
            4,
            "goes with dedupe_mode=working_set",
        ),
        (
            "[a]\nrw=write\ndedupe_percentage=5\ndedupe_mode=lots\n",
            4,
            "repeat or working_set",
        ),
        ("[a]\nbuffer_compress_percentage=50\n", 2, "writes nothing"),
        (
            "[a]\nrw=write\nverify=crc32c\nbuffer_compress_percentage=50\n",
            4,
            "stamps every sector",
        ),
        (
            "[a]\nrw=write\nbuffer_compress_percentage=101\n",
            3,
            "0 to 100",
        ),
        (
            "[a]\nrw=write\nbuffer_compress_chunk=4k\n",
            3,
            "which is not set",
        ),
        (
            "[a]\nrw=write\nzero_buffers\nbuffer_compress_percentage=20\n",
            3,
            "give one",
        ),
    ]);
}
