#!/usr/bin/env bash
# Bootstrap correlation benchmark on several SHAPES of data, every figure measured in ONE run on
# the machine at hand (a benchmark that cannot be lucky: issue 34).
#
# The shapes (bench/correlate_shapes.py; n = 22,050 items, 4 metrics, B = 5,000 paired resamples,
# Spearman + Kendall tau-b): lucky (the original table: every value of the continuous metric
# held by one human level), clipped (a soft accuracy clipped to [0, 1]: heavy ties at 0 and 1
# across every human level), discrete (every metric discrete), sparse (a continuous metric with
# 1% of its values tied across human levels), h5 and h8 (5 and 8 human levels, clipped soft
# score). For each shape, REPS times in turn where it says so:
#   - tally correlate, 1 rank, --method percentile (whole command, wall clock, plus tally's own
#     resampling time), median of REPS;
#   - tools/np_study.py, the vectorized numpy paired bootstrap (the strong-user reference), at the
#     full B (B_NP = B unless given), once;
#   - build/bench/boot_floor: the floor of the same shape (the n Philox index draws of every
#     resample plus one counting pass per metric) against tally's tl_study_resamples in the same
#     process, thread CPU time, the least disturbed of REPS runs; it also checks that the fast
#     paths give the same B x K values, bit for bit, as the scalar Fenwick sweep (the reference
#     path of the engine) and prints "values: identical".
#   - with OLD_BUILD=folder (a build of the previous version): its tally on the same shape, and
#     the outputs compared byte for byte.
# It prints every ratio per shape. With EXTRAS=1 it also times, on the lucky shape, 2 ranks, BCa,
# a Python loop over scipy.stats and the start-up of a small study (as the benchmark did before).
# The machine is usually shared: it prints the load average at the start and the end.
#
# usage: bench/correlate_bench.sh [B=5000] [B_NP=B] [B_PY=30] [REPS=3]
# env: BUILD (build folder, default build), PY (python with numpy and scipy, default
#      /usr/bin/python3), SHAPES (default "lucky clipped discrete sparse h5 h8"), OLD_BUILD,
#      EXTRAS (1: the extra timings on the lucky shape)
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-5000}"; BNP="${2:-$B}"; BPY="${3:-30}"; REPS="${4:-3}"
PY="${PY:-/usr/bin/python3}"
BUILD="${BUILD:-build}"
NP_STUDY="${NP_STUDY:-tools/np_study.py}"
SHAPES="${SHAPES:-lucky clipped discrete sparse h5 h8}"
EXTRAS="${EXTRAS:-0}"
cmake -S . -B "$BUILD" > /dev/null
cmake --build "$BUILD" -j"$(nproc)" --target tally boot_floor > /dev/null
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
"$PY" bench/correlate_shapes.py "$T"
cp "$T/lucky.csv" "$T/lave.csv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ARGS=(correlate --input "$T/lave.csv" --human human --metrics m1,m2,m3,m4
      --resamples "$B" --seed 1 --device cpu)
now() { date +%s.%N; }
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mn() { printf '%s\n' "$@" | sort -g | head -1; }
div() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "shapes: n = 22,050, 4 metrics, B = $B, spearman + kendall_b; tally 1 rank, percentile; numpy at B = $BNP"
printf '%-9s %-24s %8s %8s %8s %8s %8s %8s %8s %8s %8s %s\n' shape cells tally_s t_res_s numpy_s np_res_s fused_s floor_s tl_res_s np/tally tl/fused values
SUMMARY=""
for sh in $SHAPES; do
  SA=(correlate --input "$T/$sh.csv" --human human --metrics m1,m2,m3,m4 --resamples "$B" --seed 1
      --device cpu --method percentile)
  TW=""; TR=""
  for rep in $(seq "$REPS"); do
    t0=$(now); "$BUILD/tally" "${SA[@]}" > "$T/$sh.out" 2> "$T/$sh.err"; t1=$(now)
    TW+="$(awk "BEGIN{print $t1 - $t0}") "
    TR+="$(sed -n 's/.*values in \([0-9.]*\) s.*/\1/p' "$T/$sh.err") "
  done
  TWM=$(med $TW); TRM=$(med $TR)
  "$PY" "$NP_STUDY" "$T/$sh.csv" "$BNP" 1 --human human --metrics m1,m2,m3,m4 > "$T/$sh.np"
  read -r setup res summ < <(sed -n 's/.*load+setup \([0-9.]*\) s, resampling \([0-9.]*\) s, summary \([0-9.]*\) s.*/\1 \2 \3/p' "$T/$sh.np")
  NPW=$(awk "BEGIN{print $setup + ($res + $summ) * $B / $BNP}"); NPRS=$(awk "BEGIN{print $res * $B / $BNP}")
  "$BUILD/bench/boot_floor" "$T/$sh.csv" human m1,m2,m3,m4 "$B" "$REPS" 1 > "$T/$sh.floor"
  read -r FL TRF FF < <(sed -n 's/^floor_s=\([0-9.]*\) tally_resample_s=\([0-9.]*\) .*fused_s=\([0-9.]*\).*/\1 \2 \3/p' "$T/$sh.floor")
  CELLS=$(sed -n 's/.*(cells: \([0-9 ]*\)), human levels \([0-9]*\).*/\1 h\2/p' "$T/$sh.floor" | tr ' ' /)
  VALS=$(sed -n 's/^values: \(.*\)/\1/p' "$T/$sh.floor")
  if [ -n "${OLD_BUILD:-}" ]; then
    "$OLD_BUILD/tally" "${SA[@]}" > "$T/$sh.old" 2> /dev/null
    cmp -s "$T/$sh.out" "$T/$sh.old" && VALS+=", output = old build's" || VALS+=", output DIFFERS from the old build's"
  fi
  printf '%-9s %-24s %8.3f %8.3f %8.2f %8.2f %8.3f %8.3f %8.3f %7.1fx %7.2fx %s\n' "$sh" "$CELLS" "$TWM" "$TRM" "$NPW" "$NPRS" "$FF" "$FL" "$TRF" \
    "$(div "$NPW" "$TWM")" "$(div "$TRF" "$FF")" "$VALS"
  SUMMARY+="  $sh: numpy / tally $(div "$NPW" "$TWM")x whole command, $(div "$NPRS" "$TRM")x resampling; tally / fused floor $(div "$TRF" "$FF")x, / per-metric floor $(div "$TRF" "$FL")x (same process, CPU time); values $VALS
"
done
echo "(tally_s: whole command, wall, median of $REPS; t_res_s: its resampling as it reports it; numpy_s / np_res_s: np_study.py whole / resampling;"
echo " fused_s: boot_floor's fused floor (draws + one counting pass for all metrics), floor_s: its per-metric floor (draws + one pass per metric),"
echo " tl_res_s: tally's tl_study_resamples in the same process; thread CPU, least disturbed of $REPS)"
echo "ratios per shape:"
printf '%s' "$SUMMARY"

if [ "$EXTRAS" = 1 ]; then
echo "study: n = 22,050, 4 metrics vs a 3-level human score (the lucky shape), B = $B, spearman + kendall_b"

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
  "$PY" "$NP_STUDY" "$T/lave.csv" "$BNP" 1 --human human --metrics m1,m2,m3,m4 > "$T/np.txt"
  # "numpy-vectorized: load+setup X s, resampling Y s, summary Z s, B=..., J=..."
  read -r setup res summ < <(sed -n 's/.*load+setup \([0-9.]*\) s, resampling \([0-9.]*\) s, summary \([0-9.]*\) s.*/\1 \2 \3/p' "$T/np.txt")
  NPR=$(awk "BEGIN{print $res * $B / $BNP}")
  NPX=$(awk "BEGIN{print $setup + ($res + $summ) * $B / $BNP}")
  echo "numpy reference (np_study.py, $BNP resamples scaled to $B; $(sed -n 's/.*\(cells=[0-9/]*\).*/\1/p' "$T/np.txt")): $(printf %.2f "$NPX") s whole, $(printf %.2f "$NPR") s resampling"
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
h = x["human"]; ms = [x[m] for m in ("m1", "m2", "m3", "m4")]
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
"$BUILD/bench/boot_floor" "$T/lave.csv" human m1,m2,m3,m4 "$B" "$REPS" 1 > "$T/floor.txt"
sed -n '1,/tally \/ floor/p' "$T/floor.txt"
read -r FL TR DR < <(sed -n 's/^floor_s=\([0-9.]*\) tally_resample_s=\([0-9.]*\) draws_s=\([0-9.]*\).*/\1 \2 \3/p' "$T/floor.txt")

# ---- start-up: a plain command on a small table ----
head -n 101 "$T/lave.csv" > "$T/small.csv"
SU=""; SV=""
for rep in $(seq 11); do
  # bash's clock: a `date` process inside the timed span adds ~10-20 ms here
  t0=$EPOCHREALTIME; "$BUILD/tally" correlate --input "$T/small.csv" --human human --metrics m1,m2,m3 > /dev/null 2>&1; t1=$EPOCHREALTIME
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
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
