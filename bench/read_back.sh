#!/usr/bin/env bash
# Reading an item table back: tools/tally_h5.read_table (vectorized decoding of the parallel
# writer's string columns: fixed-length short strings and bytes + offsets texts) against a
# decoding of every value on its own (one bytes.decode per row), on the SpatialEval scaling
# job (bench/run_scaling.sh's data: K x 1,500 units, every unit a real model answer) written by
# `tally run` on 2 ranks (the parallel writer's layout). Prints the write phase tally logs, each
# reader's median of 3 reads, and the ratios; both readers must give identical tables.
# usage: bench/read_back.sh [K]     (K = 200 -> 300,000 units)
set -euo pipefail
cd "$(dirname "$0")/.."
K="${1:-200}"
DATA="${TALLY_SHARED_DATA:-../shared/data}"
[ -d "$DATA/spatialeval" ] || { echo "bench: $DATA/spatialeval is absent"; exit 1; }
DATA="$(cd "$DATA" && pwd)"
BUILD="${BUILD:-build}"
cmake -S . -B "$BUILD" > /dev/null && cmake --build "$BUILD" -j"$(nproc)" --target tally > /dev/null
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
/usr/bin/python3 tools/se_scaling_job.py "$DATA" "$T" "$K"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -n 2 --oversubscribe "$BUILD/tally" run "$T/job.json" --out "$T/o.h5" > /dev/null 2> "$T/e.txt" || { cat "$T/e.txt"; exit 1; }
W=$(sed -n 's/.*gather+write \([0-9.]*\) s.*/\1/p' "$T/e.txt")
echo "tally run, 2 ranks: $((K * 1500)) units, file $(du -h "$T/o.h5" | cut -f1), gather+write ${W} s"
/usr/bin/python3 - "$T/o.h5" "$W" <<'PY'
import statistics, sys, time
import numpy as np, h5py
sys.path.insert(0, "tools")
import tally_h5

def per_row(path, table):  # the decoding tally_h5 used before: one bytes.decode per row
    with h5py.File(path, "r") as f:
        g, cols = f[table], {}
        for name in g:
            base, dot, part = name.rpartition(".")
            if dot and part in ("bytes", "offsets"):
                if base in cols: continue
                blob = g[base + ".bytes"][()].tobytes(); offs = g[base + ".offsets"][()].astype(np.int64)
                ends = np.append(offs[1:], len(blob)).tolist()
                out = np.empty(len(offs), dtype=object)
                for k, (s, e) in enumerate(zip(offs.tolist(), ends)): out[k] = blob[s:e].decode("utf-8")
                cols[base] = out
            elif g[name].dtype.kind == "S":  # a fixed-length short-string column, decoded per row
                cols[name] = np.array([v.decode("utf-8") for v in g[name][()]], dtype=object)
            else:
                cols[name] = g[name][()]
        return cols

def timed(fn):
    ts = []
    for _ in range(3):
        t0 = time.perf_counter(); r = fn(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts), r

path, write_s = sys.argv[1], float(sys.argv[2])
tn, new = timed(lambda: tally_h5.read_table(path, "/items/spatialeval"))
to, old = timed(lambda: per_row(path, "/items/spatialeval"))
for c in old:
    assert list(new[c]) == list(old[c]), c
print("read /items/spatialeval (%d rows): tally_h5.read_table %.2f s, per-row decoding %.2f s (%.1fx); "
      "read / tally's gather+write: %.2f" % (len(new), tn, to, to / tn, tn / write_s))
PY
