#!/usr/bin/env bash
# scratch_compress.sh - a run's scratch (journal and spilled rows) and what compressing it would
# save and cost (issue 34 item 3), on two jobs: the 60,000-unit SpatialEval replay job
# (tools/se_scaling_job.py, K=40) and an MT-Bench-101 replay job (bench/mtb_gen.py, MODELS
# models x 1 seed, comparisons off). For each: the run's own "scratch ... bytes/unit" line and
# the input's bytes per unit, then bench/scratch_compress.py over the journal and the spill
# (kept during the run's write phase: TALLY_TEST_PAUSE=write holds it 5 s there).
# usage: bench/scratch_compress.sh [K=40] [MODELS=4]   (BUILD=build, PY=/usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/.."
K="${1:-40}"; MODELS="${2:-4}"
PY="${PY:-/usr/bin/python3}"
BUILD="${BUILD:-build}"
DATA="${TALLY_SHARED_DATA:-$PWD/../shared/data}"
DATA="$(cd "$DATA" && pwd)"
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
echo "machine: $(nproc) cores; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

measure() { # NAME JOB UNITS_FROM_LOG INPUT_FILES...
  local name="$1" job="$2"; shift 2
  local out="$T/$name.h5"
  rm -rf "$out" "$out.journal" "$T/keep"; mkdir -p "$T/keep"
  TALLY_TEST_PAUSE=write "$BUILD/tally" run "$job" --output "$out" --keep-journal > "$T/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do grep -q "test pause at write" "$T/$name.log" && break; sleep 0.1; done
  cp "$out".rows/r00000.bin "$T/keep/spill.bin"
  wait "$pid"
  cat "$out".journal/*.jsonl > "$T/keep/journal.jsonl"
  local line units inb
  line=$(grep -o '[0-9]* units, .*bytes/unit' "$T/$name.log")
  units=${line%% units*}
  inb=$(cat "$@" | wc -c)
  echo "== $name: $units units, input $(awk "BEGIN{printf \"%.1f\", $inb / $units}") B/unit"
  echo "   run: ${line#*; scratch }" | sed 's/gather+write [0-9.]* s; //'
  "$PY" bench/scratch_compress.py "$units" "$T/keep/journal.jsonl" "$T/keep/spill.bin"
}

"$PY" tools/se_scaling_job.py "$DATA" "$T/se" "$K" > /dev/null 2>&1 || { mkdir -p "$T/se"; "$PY" tools/se_scaling_job.py "$DATA" "$T/se" "$K" > /dev/null; }
measure spatialeval "$T/se/job.json" "$T/se/answers.jsonl"
mkdir -p "$T/mtb"
"$PY" bench/mtb_gen.py "$DATA/mtbench101/mtbench101.jsonl" "$T/mtb" "$MODELS" 1 > /dev/null
measure mtbench101 "$T/mtb/job_b.json" "$T/mtb/answers.jsonl" "$T/mtb/judgments.jsonl"
