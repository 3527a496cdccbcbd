#!/usr/bin/env bash
# Parse-and-score throughput per core for each SpatialEval mode, on the real answers in
# ../shared/data cycled to N units (default 1,000,000). Builds bench_parse if needed.
# usage: bench/parse_throughput.sh [N] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000000}"
BUILD="${2:-build}"
DATA="${TALLY_SHARED_DATA:-../shared/data}"
[ -d "$DATA/spatialeval" ] || { echo "bench: $DATA/spatialeval is absent"; exit 1; }
cmake -S . -B "$BUILD" > /dev/null
cmake --build "$BUILD" --target bench_parse -j"$(nproc)" > /dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$BUILD/bench/bench_parse" "$N" "$DATA"
