#!/usr/bin/env bash
# Bootstrap correlation benchmark, every figure measured in ONE run on the machine at hand.
#
# The study: n = 22,050 items (the LAVE test set's size), 4 metrics (VQA accuracy with 5 levels,
# a soft score with ~100 levels, LAVE with 3 levels, a continuous score) against a 3-level human
# score, B = 5,000 paired resamples, Spearman + Kendall tau-b. Timed, each REPS times in turn:
#   - tally correlate, 1 rank (no launcher) and 2 ranks (mpirun -n 2), --method percentile and
#     --method bca (CPU; whole command, wall clock, plus tally's own resampling time);
#   - ../shared/bench/np_study.py, the vectorized numpy paired bootstrap (the strong-user
#     reference), on the same table, B_NP resamples scaled linearly to B (it works in chunks of
#     50 resamples, so its cost per resample is constant; its set-up is not scaled);
#   - a Python loop over scipy.stats.spearmanr / kendalltau, B_PY resamples scaled to B;
#   - build/bench/boot_floor: the hardware floor of the same shape (the n Philox index draws of
#     every resample plus one counting pass per metric, in C), in one process with tally's
#     tl_study_resamples on the same table, thread CPU time, median of REPS.
#   - start-up: a plain `tally correlate` on the table's first 100 rows (B = 5,000, BCa, the
#     issue's bound is 50 ms) against `tally --version` (the process alone: loading the
#     libraries), 11 runs each in turn, median wall;
# It prints every ratio: tally vs numpy, tally vs the scipy loop, tally vs the floor, BCa vs
# percentile, 2 ranks vs 1. The machine is usually shared: it prints the load average too, and
# medians of REPS runs (each pair of percentile/BCa runs back to back) are what it reports.
#
# usage: bench/correlate_bench.sh [B=5000] [B_NP=1000] [B_PY=30] [REPS=3]
# env: BUILD (build folder, default build), PY (python with numpy and scipy, default
#      /usr/bin/python3), NP_STUDY (default ../shared/bench/np_study.py)
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-5000}"; BNP="${2:-1000}"; BPY="${3:-30}"; REPS="${4:-3}"
PY="${PY:-/usr/bin/python3}"
BUILD="${BUILD:-build}"
NP_STUDY="${NP_STUDY:-../shared/bench/np_study.py}"
cmake -S . -B "$BUILD" > /dev/null
cmake --build "$BUILD" -j"$(nproc)" --target tally boot_floor > /dev/null
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
# np_study.py reads the metrics vqa_acc, soft_acc, lave, em: the same table, last column renamed
sed '1s/,score$/,em/' "$T/lave.csv" > "$T/lave_np.csv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ARGS=(correlate --input "$T/lave.csv" --human human --metrics vqa_acc,soft_acc,lave,score
      --resamples "$B" --seed 1 --device cpu)
now() { date +%s.%N; }
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mn() { printf '%s\n' "$@" | sort -g | head -1; }
div() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "study: n = 22,050, 4 metrics vs a 3-level human score, B = $B, spearman + kendall_b"

# ---- tally: 1 and 2 ranks, percentile and BCa, REPS times in turn ----
declare -A W RS JK
for cfg in p1 b1 p2 b2; do W[$cfg]=""; RS[$cfg]=""; JK[$cfg]=""; done
run_tally() { # cfg ranks method
  local t0 t1 out="$T/$1.txt" err="$T/$1.err"
  if [ "$2" = 1 ]; then
    t0=$(now); "$BUILD/tally" "${ARGS[@]}" --method "$3" > "$out" 2> "$err"; t1=$(now)
  else
    t0=$(now); mpirun -n "$2" "$BUILD/tally" "${ARGS[@]}" --method "$3" > "$out" 2> "$err"; t1=$(now)
  fi
  W[$1]+="$(awk "BEGIN{print $t1 - $t0}") "
  RS[$1]+="$(sed -n 's/.*values in \([0-9.]*\) s.*/\1/p' "$err") "
  JK[$1]+="$(sed -n 's/.*BCa jackknife in \([0-9.]*\) s.*/\1/p' "$err") "
}
BR1=""; BR2=""
for rep in $(seq "$REPS"); do
  run_tally p1 1 percentile; run_tally b1 1 bca
  run_tally p2 2 percentile; run_tally b2 2 bca
  set -- ${W[p1]}; p=${!#}; set -- ${W[b1]}; b=${!#}; BR1+="$(div "$b" "$p") "
  set -- ${W[p2]}; p=${!#}; set -- ${W[b2]}; b=${!#}; BR2+="$(div "$b" "$p") "
done
cmp -s "$T/p1.txt" "$T/p2.txt" && cmp -s "$T/b1.txt" "$T/b2.txt" && same="identical" || same="DIFFERENT"
P1=$(med ${W[p1]}); B1=$(med ${W[b1]}); P2=$(med ${W[p2]}); B2=$(med ${W[b2]})
echo "tally correlate (whole command, wall, median of $REPS; resampling as tally reports it):"
echo "  1 rank,  percentile: $(printf %.3f "$P1") s (resampling $(med ${RS[p1]}) s)"
echo "  1 rank,  BCa:        $(printf %.3f "$B1") s (resampling $(med ${RS[b1]}) s, jackknife $(med ${JK[b1]}) s)"
echo "  2 ranks, percentile: $(printf %.3f "$P2") s (resampling $(med ${RS[p2]}) s)"
echo "  2 ranks, BCa:        $(printf %.3f "$B2") s (resampling $(med ${RS[b2]}) s); 2-rank output $same to 1-rank"

# ---- the numpy reference ----
NPX=""; NPR=""
if [ -f "$NP_STUDY" ]; then
  "$PY" "$NP_STUDY" "$T/lave_np.csv" "$BNP" 1 > "$T/np.txt"
  # "numpy-vectorized: load+setup X s, resampling Y s, summary Z s, B=..., J=..."
  read -r setup res summ < <(sed -n 's/.*load+setup \([0-9.]*\) s, resampling \([0-9.]*\) s, summary \([0-9.]*\) s.*/\1 \2 \3/p' "$T/np.txt")
  NPR=$(awk "BEGIN{print $res * $B / $BNP}")
  NPX=$(awk "BEGIN{print $setup + ($res + $summ) * $B / $BNP}")
  echo "numpy reference (np_study.py, $BNP resamples scaled to $B; $(sed -n 's/.*\(J=[0-9]*\).*/\1 joint cells/p' "$T/np.txt")): $(printf %.2f "$NPX") s whole, $(printf %.2f "$NPR") s resampling"
else
  echo "numpy reference: $NP_STUDY not found, skipped"
fi

# ---- the scipy loop ----
SCI=$("$PY" - "$T/lave.csv" "$B" "$BPY" <<'PY'
import sys, time
import numpy as np
from scipy import stats
path, B, BPY = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
print(f"{(time.perf_counter() - t0) * B / BPY:.3f}")
PY
)
echo "scipy loop ($BPY resamples scaled to $B): $SCI s"

# ---- the floor ----
"$BUILD/bench/boot_floor" "$T/lave.csv" human vqa_acc,soft_acc,lave,score "$B" "$REPS" 1 > "$T/floor.txt"
sed -n '1,/tally \/ floor/p' "$T/floor.txt"
read -r FL TR DR < <(sed -n 's/^floor_s=\([0-9.]*\) tally_resample_s=\([0-9.]*\) draws_s=\([0-9.]*\).*/\1 \2 \3/p' "$T/floor.txt")

# ---- start-up: a plain command on a small table ----
head -n 101 "$T/lave.csv" > "$T/small.csv"
SU=""; SV=""
for rep in $(seq 11); do
  # bash's clock: a `date` process inside the timed span adds ~10-20 ms here
  t0=$EPOCHREALTIME; "$BUILD/tally" correlate --input "$T/small.csv" --human human --metrics vqa_acc,soft_acc,lave > /dev/null 2>&1; t1=$EPOCHREALTIME
  "$BUILD/tally" --version > /dev/null; t2=$EPOCHREALTIME
  SU+="$(awk "BEGIN{print $t1 - $t0}") "; SV+="$(awk "BEGIN{print $t2 - $t1}") "
done
echo "start-up: tally correlate on 100 rows (B = 5000, BCa) $(awk "BEGIN{printf \"%.1f\", 1000 * $(med $SU)}") ms; tally --version $(awk "BEGIN{printf \"%.1f\", 1000 * $(med $SV)}") ms (medians of 11)"

echo "ratios (medians):"
[ -n "$NPX" ] && echo "  numpy / tally, whole command (1 rank, percentile): $(div "$NPX" "$P1")x; resampling only: $(div "$NPR" "$(med ${RS[p1]})")x"
echo "  scipy loop / tally (1 rank, percentile): $(div "$SCI" "$P1")x"
echo "  tally resampling / floor (same process, CPU time): $(div "$TR" "$FL")x; / the draws alone: $(div "$TR" "$DR")x"
echo "  BCa / percentile, whole command: 1 rank $(med $BR1)x (fastest runs: $(div "$(mn ${W[b1]})" "$(mn ${W[p1]})")x), 2 ranks $(med $BR2)x (fastest: $(div "$(mn ${W[b2]})" "$(mn ${W[p2]})")x)"
echo "  1 rank / 2 ranks, whole command (percentile): $(div "$P1" "$P2")x"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
