#!/usr/bin/env bash
# tally merge benchmark: FILES outputs of MODELS_PER_FILE x 1,500 SpatialEval units each (the
# scaling job's generator, tools/se_scaling_job.py: real model answers, three parsers), each
# run with --keep-journal, then merged on 1 and on 2 ranks. The reference, measured in the same
# run, is one `tally run` of the whole job (the same units replayed, scored and written): a merge
# does the same work minus the engine, plus reading the journals. Prints wall time and peak RSS
# (GNU time) of each, units per second, and the merge's time as a multiple of the run's; checks
# that the merged file equals the run's output (tools/h5_same.py).
# usage: bench/merge_bench.sh [FILES] [MODELS_PER_FILE]     (default 8 files x 7 models = 84,000 units)
set -euo pipefail
cd "$(dirname "$0")/.."
F="${1:-8}"; M="${2:-7}"
BUILD="${BUILD:-build}"
DATA="${TALLY_SHARED_DATA:-$PWD/../shared/data}"
[ -f "$DATA/spatialeval/spatialmap_tqa.jsonl" ] || { echo "merge_bench: needs $DATA (../shared/data)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake --build "$BUILD" -j"$(nproc)" --target tally > /dev/null
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 tools/se_scaling_job.py "$DATA" "$T" $((F * M))
/usr/bin/python3 - "$T" "$F" "$M" <<'PY'
import json, sys
t, F, M = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
j = json.load(open(t + "/job.json"))
for f in range(F):
    k = json.loads(json.dumps(j))
    k["output"] = "%s/f%04d.h5" % (t, f)
    k["benchmarks"][0]["models"] = ["m%03d" % (f * M + i) for i in range(M)]
    json.dump(k, open("%s/f%04d.json" % (t, f), "w"))
PY
for f in "$T"/f*.json; do "$BUILD/tally" run "$f" --keep-journal --quiet > /dev/null; done
U=$((F * M * 1500))
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $F files x $((M * 1500)) units = $U units"
timed() { # LABEL CMD...: wall seconds and peak RSS (MiB) of the command
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$T/time" "$@" > /dev/null 2> "$T/err" || { cat "$T/err"; exit 1; }
  read -r s kb < "$T/time"
  printf '%-34s %8.2f s %9.0f units/s %7.0f MiB\n' "$label" "$s" "$(awk -v u="$U" -v s="$s" 'BEGIN{print u / s}')" "$(awk -v k="$kb" 'BEGIN{print k / 1024}')"
  echo "$s" > "$T/last"
}
timed "tally run, the whole job (1 rank)" "$BUILD/tally" run "$T/job.json" --quiet
run1=$(cat "$T/last")
timed "tally merge (1 rank)" "$BUILD/tally" merge "$T"/f*.h5 -o "$T/m1.h5" --quiet
m1=$(cat "$T/last")
timed "tally merge (2 ranks)" mpirun --oversubscribe -n 2 "$BUILD/tally" merge "$T"/f*.h5 -o "$T/m2.h5" --quiet
m2=$(cat "$T/last")
/usr/bin/python3 tools/h5_same.py "$T/o.h5" "$T/m1.h5" / && /usr/bin/python3 tools/h5_same.py "$T/o.h5" "$T/m2.h5" / ||
  { echo "merge_bench: the merged file differs from the run's"; exit 1; }
printf 'merge / run (1 rank): %.2f; 2 ranks / 1 rank: %.2f; the merged files equal the run'"'"'s output\n' \
  "$(awk -v a="$m1" -v b="$run1" 'BEGIN{print a / b}')" "$(awk -v a="$m2" -v b="$m1" 'BEGIN{print a / b}')"
printf 'at the 1-rank rate, 1,000 files x 10,000 units would take %.0f s on one rank\n' "$(awk -v a="$m1" -v u="$U" 'BEGIN{print a / u * 1e7}')"
