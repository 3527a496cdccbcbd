# mtb_common.sh - sourced by bench/mtb_compare_bench.sh and bench/mtb_score_bench.sh: the
# arguments [REPS=3] [MODELS=20] [SEEDS=3], the environment (BUILD, PY, TALLY_SHARED_DATA, KEEP),
# the build of tally, the generated job in $T (bench/mtb_gen.py) and the helpers med, div and
# timed. The caller sets NAME (for messages) and PY_MODULES (what its Python needs) first.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"; MODELS="${2:-20}"; SEEDS="${3:-3}"
PY="${PY:-/usr/bin/python3}"
BUILD="${BUILD:-build}"
DATA="${TALLY_SHARED_DATA:-$PWD/../shared/data}"
[ -f "$DATA/mtbench101/mtbench101.jsonl" ] || { echo "$NAME: needs $DATA/mtbench101/mtbench101.jsonl"; exit 77; }
"$PY" -c "import $PY_MODULES" 2> /dev/null || { echo "$NAME: needs $PY_MODULES ($PY)"; exit 77; }
cmake -S . -B "$BUILD" > /dev/null
cmake --build "$BUILD" -j1 --target tally > /dev/null
if [ -n "${KEEP:-}" ]; then T="$KEEP"; mkdir -p "$T"; else T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT; fi
"$PY" bench/mtb_gen.py "$DATA/mtbench101/mtbench101.jsonl" "$T" "$MODELS" "$SEEDS"

med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
div() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
timed() { # TAG CMD...: runs CMD, prints its wall and CPU (user + sys) seconds
  local tag="$1"; shift
  /usr/bin/time -f '%e %U %S' -o "$T/$tag.time" "$@" > "$T/$tag.log" 2>&1 || { cat "$T/$tag.log" >&2; exit 1; }
  awk '{printf "%.3f %.3f", $1, $2 + $3}' "$T/$tag.time"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
