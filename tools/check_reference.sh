#!/usr/bin/env bash
# Checks that a build of the current tree scores exactly as the pinned commit did: runs BUILD's
# tally on the jobs of tools/make_reference.sh (jobs/demo.json, and the 150,000-unit job of
# tools/se_scaling_job.py, regenerated into a temp folder) at 1, 2 and 4 ranks, and compares
# /items of each output with REFDIR's file dataset by dataset (tools/h5_same.py; a status column
# added since, n_engine_error, must hold only zeros; SpatialEval's mode and image left out) and
# /metrics by its SpatialEval rows summed over the question modes (tools/se_metrics_same.py). Prints one line per
# comparison; exits 1 when any differs, or when nothing could be compared.
# Jobs run from their own folder with relative paths, as in make_reference.sh (/items `source`).
# usage: tools/check_reference.sh [REFDIR] [BUILD]     (defaults: reference/ and build/)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
REF="${1:-$ROOT/reference}"
[ -d "$REF" ] || { echo "check_reference: no $REF (make it with tools/make_reference.sh)" >&2; exit 1; }
REF="$(cd "$REF" && pwd)"
TALLY="$(cd "${2:-$ROOT/build}" && pwd)/tally"
DATA="${TALLY_SHARED_DATA:-$ROOT/../shared/data}"
PY="${TALLY_PYTHON:-/usr/bin/python3}"
[ -x "$TALLY" ] || { echo "check_reference: no $TALLY (build it first)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
same=0; differ=0
check() {  # NAME DIR JOB: run JOB from DIR at 1, 2, 4 ranks and compare with $REF/NAME.h5
  local name=$1 dir=$2 job=$3 n obj out
  for n in 1 2 4; do
    out="$T/$name.$n.h5"
    (cd "$dir" && mpirun -n $n --oversubscribe "$TALLY" run "$job" --out "$out" --quiet) \
      > /dev/null 2> "$T/err" || { cat "$T/err" >&2; echo "check_reference: $name at $n ranks failed" >&2; exit 1; }
    for obj in /items /metrics; do
      # /metrics/spatialeval is grouped by question mode now: its rows summed over the modes
      # must give the reference's (tools/se_metrics_same.py); /items: the columns added since
      # (mode, image) left out
      if { [ "$obj" = /items ] && "$PY" "$ROOT/tools/h5_same.py" "$REF/$name.h5" "$out" "$obj" --allow n_engine_error \
             --skip se --skip mode --skip image 2> "$T/same"; } ||
         { [ "$obj" = /metrics ] && "$PY" "$ROOT/tools/se_metrics_same.py" "$REF/$name.h5" "$out" > /dev/null 2> "$T/same"; }; then
        echo "$name, $n rank(s), $obj: identical"; same=$((same + 1))
      else
        echo "$name, $n rank(s), $obj: DIFFERENT"; head -n 20 "$T/same" | sed 's/^/    /'; differ=$((differ + 1))
      fi
    done
    rm -f "$out"
  done
}
check demo "$ROOT" jobs/demo.json
if [ ! -f "$REF/se150k.h5" ]; then
  echo "check_reference: $REF/se150k.h5 absent: the 150k job skipped"
elif [ ! -d "$DATA/spatialeval" ]; then
  echo "check_reference: $DATA/spatialeval absent (set TALLY_SHARED_DATA): the 150k job skipped"
else
  DATA="$(cd "$DATA" && pwd)"; mkdir "$T/se"
  (cd "$T/se" && "$PY" "$ROOT/tools/se_scaling_job.py" "$DATA" . 100)
  check se150k "$T/se" job.json
fi
echo "check_reference: $same identical, $differ different (reference: $REF; tally: $TALLY)"
[ "$differ" -eq 0 ] && [ "$same" -gt 0 ]
