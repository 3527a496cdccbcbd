#!/usr/bin/env bash
# Bootstrap correlation benchmark: n = 22,050 items (the LAVE test set's size), 4 metrics (VQA
# accuracy with 5 levels, a soft score, LAVE with 3 levels, a continuous score) against a 3-level
# human score, B = 5,000 paired resamples, Spearman + Kendall tau-b.
# Times `tally correlate` on 1 rank and on 2 ranks (CPU), and the same study as a Python loop
# over scipy.stats.spearmanr / kendalltau (Debian's python3-scipy) in the same run; the scipy
# loop runs B_PY resamples (default 50) and is scaled to B linearly (its cost per resample is
# constant). The GPU figure comes from tools/gpu-check.sh on an accelerator machine.
# usage: bench/correlate_bench.sh [B] [B_PY]
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-5000}"; BPY="${2:-50}"
PY=/usr/bin/python3
BUILD="${BUILD:-build}"
cmake -S . -B "$BUILD" > /dev/null && cmake --build "$BUILD" -j"$(nproc)" --target tally > /dev/null
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
"$PY" - "$T/lave.csv" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(2024)
n = 22050
h = rng.integers(0, 3, n) / 2.0
vqa = np.choose(rng.integers(0, 5, n), [0, 0.3, 0.6, 0.9, 1.0])
soft = np.clip(h + rng.normal(0, 0.5, n), 0, 1).round(2)
lave = np.clip(np.round(h * 2 + rng.normal(0, 0.7, n)), 0, 2) / 2
cont = h + rng.normal(0, 0.6, n)
np.savetxt(sys.argv[1], np.column_stack([h, vqa, soft, lave, cont]), delimiter=",",
           header="human,vqa_acc,soft_acc,lave,score", comments="", fmt="%.17g")
PY
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ARGS=(correlate --input "$T/lave.csv" --human human --metrics vqa_acc,soft_acc,lave,score
      --resamples "$B" --seed 1 --method percentile --device cpu --out "$T/x.h5")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
t0=$(date +%s.%N); "$BUILD/tally" "${ARGS[@]}" > "$T/o1.txt" 2> "$T/e1.txt"; t1=$(date +%s.%N)
one=$(awk "BEGIN{print $t1 - $t0}")
t0=$(date +%s.%N); mpirun -n 2 "$BUILD/tally" "${ARGS[@]}" > "$T/o2.txt" 2> "$T/e2.txt"; t1=$(date +%s.%N)
two=$(awk "BEGIN{print $t1 - $t0}")
cmp -s "$T/o1.txt" "$T/o2.txt" && same="identical" || same="DIFFERENT"
echo "tally correlate, 1 rank : $(printf %.2f "$one") s wall; $(sed 's/^tally correlate: //' "$T/e1.txt")"
echo "tally correlate, 2 ranks: $(printf %.2f "$two") s wall; output $same; $(sed 's/^tally correlate: //' "$T/e2.txt")"
"$PY" - "$T/lave.csv" "$B" "$BPY" "$one" <<'PY'
import sys, time
import numpy as np
from scipy import stats
path, B, BPY, one = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
x = np.genfromtxt(path, delimiter=",", names=True)
h = x["human"]; ms = [x[m] for m in ("vqa_acc", "soft_acc", "lave", "score")]
n = len(h)
rng = np.random.default_rng(1)
t0 = time.perf_counter()
for r in range(BPY):
    idx = rng.integers(0, n, n)
    hh = h[idx]
    for m in ms:
        stats.spearmanr(m[idx], hh)
        stats.kendalltau(m[idx], hh)
dt = time.perf_counter() - t0
full = dt * B / BPY
print("scipy loop: %d resamples in %.2f s -> %.1f s for B=%d (scaled); tally 1 rank is %.0fx faster"
      % (BPY, dt, full, B, full / one))
PY
