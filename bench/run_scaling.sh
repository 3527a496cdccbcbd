#!/usr/bin/env bash
# Distributed scoring benchmark: a CPU-bound SpatialEval job built from the real data in
# ../shared/data - the 1,500 Spatial-Map items x K model configs, each unit answered by one of the
# 323 real model answers (drawn with a fixed seed; tools/se_scaling_job.py writes the job) -
# scored by all three parsers with `tally run` on 1 and on 2 ranks. Reports the phases tally logs
# (load, score, gather+write), the speedup of the score phase, and the scheduling overhead per
# unit that tally measures: the time all ranks spent sending chunk requests and waiting for /
# serving the replies, divided by the units; and the CPU (user + system, every process mpirun
# started, mpirun included) of 2 ranks against 1 rank for the same job (issue 34's target: at
# most 1.1x: a waiting rank sleeps instead of polling).
# usage: bench/run_scaling.sh [K]     (K = 100 -> 150,000 units)
set -euo pipefail
cd "$(dirname "$0")/.."
K="${1:-100}"
DATA="${TALLY_SHARED_DATA:-../shared/data}"
[ -d "$DATA/spatialeval" ] || { echo "bench: $DATA/spatialeval is absent"; exit 1; }
DATA="$(cd "$DATA" && pwd)"
BUILD="${BUILD:-build}"
cmake -S . -B "$BUILD" > /dev/null && cmake --build "$BUILD" -j"$(nproc)" --target tally > /dev/null
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
/usr/bin/python3 tools/se_scaling_job.py "$DATA" "$T" "$K"   # answers.jsonl, job.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# mpirun's PMIx authenticates its local processes with munge when it is installed: with munged
# not running it retries for about 2.3 s before every launch (this machine, outside SLURM). The
# processes here are all local, so the kernel's socket credentials do instead.
export PMIX_MCA_psec="${PMIX_MCA_psec:-native}"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); answers file $(du -h "$T/answers.jsonl" | cut -f1)"
declare -A SC CPU
for n in 1 2; do
  t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$T/cpu$n.txt" mpirun -n $n --oversubscribe "$BUILD/tally" run "$T/job.json" --out "$T/o$n.h5" > /dev/null 2> "$T/e$n.txt" || { cat "$T/e$n.txt"; exit 1; }
  t1=$(date +%s.%N)
  line=$(grep "engine calls" "$T/e$n.txt" | sed 's/^tally: //')
  SC[$n]=$(echo "$line" | sed -n 's/.*score \([0-9.]*\) s.*/\1/p')
  CPU[$n]=$(awk '{printf "%.2f", $1 + $2}' "$T/cpu$n.txt")
  echo "$n rank(s): CPU ${CPU[$n]} s; wall $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s; $line"
done
h5diff "$T/o1.h5" "$T/o2.h5" /items > /dev/null && h5diff "$T/o1.h5" "$T/o2.h5" /metrics > /dev/null \
  && echo "1 and 2 ranks: identical /items and /metrics" || echo "1 and 2 ranks: DIFFERENT"
U=$((K * 1500))
awk -v a="${SC[1]}" -v b="${SC[2]}" 'BEGIN{printf "score phase speedup 1 -> 2 ranks: %.2fx\n", a/b}'
awk -v a="${CPU[1]}" -v b="${CPU[2]}" 'BEGIN{printf "CPU of 2 ranks / CPU of 1 rank: %.2fx\n", b/a}'
