#!/usr/bin/env bash
# MT-Bench-101 model comparisons at scale, every figure measured in ONE run on the machine at hand.
#
# The job: the 1,388 dialogues of ../shared/data/mtbench101/mtbench101.jsonl (3,615 judged turns
# per model and seed), MODELS models x SEEDS seeds (default 20 x 3: 216,900 judged turns), every
# answer and judgment replayed from files that bench/mtb_gen.py writes (deterministic; both
# policies and the `missing` counts are exercised). The default parser set of the module
# (mtbench101 alone).
#
# Timed, REPS times in turn (A B A B ...), wall clock and CPU time (user + sys) of the whole
# `tally run`, one rank:
#   A: the job at its defaults: 190 model pairs x 3 seeds x 2 policies x 24 groups, each with
#      the paired bootstrap CIs (1,000 resamples);
#   B: the same job with "comparison": false (no comparison table: the alternative a user has
#      when the comparisons cost too much).
# It prints each run, the medians and the ratio median(A) / median(B) (the issue's target is at
# most 1.2x), and checks that A and B agree on every table but the comparisons
# (tools/h5_same.py, when h5py is there).
#
# usage: bench/mtb_compare_bench.sh [REPS=3] [MODELS=20] [SEEDS=3]
# env: BUILD (build folder, default build), PY (python with numpy, default /usr/bin/python3),
#      TALLY_SHARED_DATA (default ../shared/data), KEEP (a folder: keep the generated job there)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"; MODELS="${2:-20}"; SEEDS="${3:-3}"
PY="${PY:-/usr/bin/python3}"
BUILD="${BUILD:-build}"
DATA="${TALLY_SHARED_DATA:-$PWD/../shared/data}"
[ -f "$DATA/mtbench101/mtbench101.jsonl" ] || { echo "mtb_compare_bench: needs $DATA/mtbench101/mtbench101.jsonl"; exit 77; }
"$PY" -c 'import numpy' 2> /dev/null || { echo "mtb_compare_bench: needs numpy ($PY)"; exit 77; }
cmake -S . -B "$BUILD" > /dev/null
cmake --build "$BUILD" -j1 --target tally > /dev/null
if [ -n "${KEEP:-}" ]; then T="$KEEP"; mkdir -p "$T"; else T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT; fi

"$PY" bench/mtb_gen.py "$DATA/mtbench101/mtbench101.jsonl" "$T" "$MODELS" "$SEEDS"

med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
div() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
run() { # TAG: one timed run of job TAG; prints its wall and CPU (user + sys) seconds
  rm -f "$T/$1.h5"
  /usr/bin/time -f '%e %U %S' -o "$T/$1.time" "$BUILD/tally" run "$T/job_$1.json" --quiet > "$T/$1.log" 2>&1 ||
    { cat "$T/$1.log" >&2; exit 1; }
  awk '{printf "%.3f %.3f", $1, $2 + $3}' "$T/$1.time"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
A=(); B=(); AC=(); BC=()
for i in $(seq "$REPS"); do
  read -r a ac <<< "$(run a)"
  read -r b bc <<< "$(run b)"
  A+=("$a"); B+=("$b"); AC+=("$ac"); BC+=("$bc")
  printf 'rep %d: defaults (comparisons on) %8.3f s wall %8.3f s CPU   comparisons off %8.3f s wall %8.3f s CPU\n' \
    "$i" "$a" "$ac" "$b" "$bc"
done
ma=$(med "${A[@]}"); mb=$(med "${B[@]}"); mac=$(med "${AC[@]}"); mbc=$(med "${BC[@]}")
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'median wall: defaults %.3f s, comparisons off %.3f s, ratio %sx (target <= 1.2x)\n' "$ma" "$mb" "$(div "$ma" "$mb")"
printf 'median CPU:  defaults %.3f s, comparisons off %.3f s, ratio %sx\n' "$mac" "$mbc" "$(div "$mac" "$mbc")"
if "$PY" -c 'import h5py' 2> /dev/null; then
  rows=$("$PY" -c 'import h5py,sys; g=h5py.File(sys.argv[1])["/metrics/mtbench101/comparisons"]; print(g[list(g.keys())[0]].shape[0])' "$T/a.h5" 2> /dev/null || echo '?')
  echo "comparison rows in A: $rows"
  "$PY" tools/h5_same.py "$T/a.h5" "$T/b.h5" /items /metrics/mtbench101/summary /metrics/mtbench101/across_seeds \
    /metrics/mtbench101/dialogues /audit && echo "A and B agree on every table but the comparisons"
fi
