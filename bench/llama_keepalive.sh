#!/usr/bin/env bash
# Keep-alive starvation against llama.cpp's llama-server (issue 28): the same 174-unit job
# (SpatialEval's 29 text-mode demo items x 6 seeds, one model, temperature 0, a grammar-shaped reply of at
# most 24 tokens) against llama-server with SLOTS slots (-np, default 4) and its default HTTP
# thread pool (max(slots + 2, cores - 1) threads, one kept-alive connection each), then the same
# with --threads-http 32. tally's engine keeps 16 requests in flight by default: requests sent on
# connections no HTTP thread holds wait until a thread's connection has idled for 5 s.
# Prints each run's wall time, tally's longest unit latency and the ratio (issue 28's target:
# default threads at most 1.5x --threads-http 32).
#   bench/llama_keepalive.sh [SLOTS [default|http32]]   (TALLY_BIN: default build/tally; needs
#   build-llama/). With a second argument only that run is made (for paired whole-process
#   timings of the two, A B A B, with a timing tool).
set -euo pipefail
cd "$(dirname "$0")/.."
export TALLY_SRC="$PWD" TALLY_BIN="${TALLY_BIN:-$PWD/build/tally}"
. tests/e2e/common.sh
. tests/e2e/llama_common.sh
SLOTS=${1:-4}
ONLY=${2:-}
D="$TALLY_SRC/demo/spatialeval"
run() { # NAME SERVER-ARGS...
  local name=$1; shift
  start_llama "$name" -np "$SLOTS" "$@"
  local port; eval "port=\$LL_PORT_$name"
  cat > "$WORK/$name.json" <<JOB
{"name": "keepalive", "output": "$WORK/$name.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$port/v1",
   "sampling": {"temperature": 0, "max_tokens": 24},
   "extra": {"grammar": "root ::= \"Answer: \" [A-D] \"\\\\nReason: \" [a-z ]{0,20}"}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "models": ["tiny-a"], "seeds": [0, 1, 2, 3, 4, 5],
                 "modes": ["tqa"]}]}
JOB
  local t0 t1
  t0=$(date +%s.%N)
  "$TALLY_BIN" run "$WORK/$name.json" --quiet > /dev/null 2> "$WORK/$name.err" || { cat "$WORK/$name.err"; fail "$name: the run failed"; }
  t1=$(date +%s.%N)
  stop_llama "$name"
  "$PY" - "$WORK/$name.h5" "$t0" "$t1" "$name" "$(grep -o 'http threads: [0-9]*' "$WORK/$name.log" | head -1)" <<'PY'
import sys
sys.path.insert(0, "tools")
from tally_h5 import read_table
t = read_table(sys.argv[1], "/items/spatialeval")
lat = sorted(t["latency_ms"])
wall = float(sys.argv[3]) - float(sys.argv[2])
assert len(lat) == 174 and all(e == "" for e in t["engine_error"])
print("%-8s %-17s wall %6.1f s; unit latency median %6.0f ms, max %6.0f ms" % (sys.argv[4], sys.argv[5], wall, lat[len(lat) // 2], lat[-1]))
open(sys.argv[1] + ".wall", "w").write("%.3f" % wall)
PY
}
echo "llama-server -np $SLOTS, 174 units, tally's default concurrency (16 in flight), $(nproc) cores"
case "$ONLY" in
  default) run default; exit 0 ;;
  http32) run http32 --threads-http 32; exit 0 ;;
  "") ;;
  *) echo "llama_keepalive.sh: the second argument is default or http32" >&2; exit 2 ;;
esac
run default
run http32 --threads-http 32
awk -v a="$(cat "$WORK/default.h5.wall")" -v b="$(cat "$WORK/http32.h5.wall")" \
  'BEGIN { printf "default / --threads-http 32: %.2fx (target: at most 1.5x)\n", a / b }'
