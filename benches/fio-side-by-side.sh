#!/bin/sh
# The same fio job file run by fio and by `iogauge fio`, each writing fio's JSON, and the ratio
# of their IOPS per job: the check that a published job gives iogauge's numbers within reach
# of fio's where the device is the limit. A bench, not a test: it takes minutes and its numbers
# depend on the machine.
#
#   benches/fio-side-by-side.sh JOB.fio DIR     (DIR holds the test files; both tools' files
#                                                are removed afterwards)
#
# FIO_LIKE='ioengine=io_uring;iomem=mmaphuge' gives fio options that make its run like
# iogauge's, added at the end of every job of fio's copy of the job file (so they win): iogauge
# runs libaio jobs on io_uring and keeps its IO buffers on huge pages (mmaphuge needs reserved
# hugetlb pages: /proc/sys/vm/nr_hugepages). FIO_DROP='refill_buffers;end_fsync' removes options
# from fio's copy: refill_buffers makes fio generate fresh random data for every write (CPU per
# IO that iogauge does not spend), end_fsync times a flush iogauge does not make.
set -eu
job=$1
dir=$2
iogauge=${IOGAUGE:-target/release/iogauge}
out=$(mktemp -d)
python3 - "$job" "$out/fio-job.fio" "${FIO_LIKE:-}" "${FIO_DROP:-}" <<'PY'
import sys
src, dst, like, drop = sys.argv[1:5]
extra = [l for l in like.split(";") if l]
dropped = [d for d in drop.split(";") if d]
out = []
for line in open(src):
    if line.strip().split("=")[0].strip() in dropped:
        continue
    if line.strip().startswith("[") and not line.strip().startswith("[global]") and extra:
        out.append("\n".join(extra) + "\n")
    out.append(line)
out.append("\n" + "\n".join(extra) + "\n" if extra else "")
# The extras go at the end of each section: a section's last setting wins in fio.
text = "".join(out)
open(dst, "w").write(text)
PY
TARGET=$dir/fio-side.bin fio --output-format=json --output="$out/fio.json" "$out/fio-job.fio" >/dev/null
rm -f "$dir/fio-side.bin"
TARGET=$dir/iogauge-side.bin "$iogauge" fio "$job" --no-store -o "$out/iogauge.json" \
    --format fio-json >/dev/null 2>"$out/iogauge.err" || { cat "$out/iogauge.err"; exit 1; }
python3 - "$out/fio.json" "$out/iogauge.json" <<'PY'
import json, sys
fio, ig = (json.load(open(p)) for p in sys.argv[1:3])
def by_job(doc):
    out = {}
    for j in doc["jobs"]:
        r = out.setdefault(j["jobname"], [0.0, 0.0, 0.0])
        for d in ("read", "write"):
            r[0] += j[d]["iops"]
            r[1] += j[d]["bw_bytes"] / 2**20
        r[2] = max(r[2], j["read"]["clat_ns"]["mean"], j["write"]["clat_ns"]["mean"])
    return out
f, i = by_job(fio), by_job(ig)
print(f"{fio['fio version']} vs {ig['fio version']}")
print(f"{'job':<22}{'fio IOPS':>12}{'iogauge IOPS':>14}{'ratio':>7}{'fio MiB/s':>11}{'iogauge MiB/s':>15}")
for name in f:
    a, b = f[name], i.get(name, [0, 0, 0])
    print(f"{name:<22}{a[0]:>12,.0f}{b[0]:>14,.0f}{b[0] / a[0] if a[0] else 0:>7.2f}{a[1]:>11,.1f}{b[1]:>15,.1f}")
PY
rm -rf "$out"
