#!/usr/bin/env bash
# Peak resident memory PER RANK of `tally run` against the number of work units.
#
# What it measures: for SpatialEval jobs of K x 1,500 units (the 1,500 Spatial-Map items x K
# model configs, each unit answered by one of the real model answers in ../shared/data, made by
# tools/se_scaling_job.py, scored by all three parsers) and for each rank count N, the peak RSS
# (VmHWM: the most resident memory each process ever had, shared libraries and MPI shared-memory
# segments it touched included) of every rank of `mpirun -n N tally run JOB --quiet`.
#
# How: every rank is started through a small Python wrapper that forks tally, waits for it with
# os.wait4() and writes that child's ru_maxrss (KiB on Linux) to one file per rank, named by
# OMPI_COMM_WORLD_RANK (or PMIX_RANK / PMI_RANK). The wrapper's own memory is not counted, its
# exit status is tally's, and it passes SIGTERM/SIGINT/SIGUSR1 on to tally.
#
# How to read it: one line per (ranks, units) with the largest peak over the ranks (what a node
# must hold per rank) and every rank's peak. Then, per rank count, a least-squares line through
# (units, max peak RSS):
#   slope     = bytes each unit adds to the peak of the fullest rank: "bytes per unit per rank",
#               where units are the job's TOTAL units, so on N ranks a design that holds only
#               its 1/N share would show about (bytes per unit held) / N. A slope that does not
#               fall with N means every rank holds something per unit of the whole job;
#   intercept = fixed cost (MiB): binary, libraries, MPI, HDF5, items, parsers.
# Compare the slope with "answers B/unit" (the answers file's bytes per unit): a slope of a few
# times that means the response texts are held more than once. Peaks of a few runs differ by a
# few hundred KiB (allocator, MPI), so trust the slope only over a wide range of units.
#
# usage: bench/mem_per_unit.sh [K ...]     (default K list: 10 40 100 = 15k, 60k, 150k units)
# env:   BUILD   build folder (default build/), configured if needed, target `tally` built
#        RANKS   rank counts (default "1 2"; e.g. RANKS="1 2 4")
#        KS      K list when none is given as arguments (default "10 40 100")
#        JOBS    parallel build jobs (default: nproc)
#        GEN     the job generator (default tools/se_scaling_job.py; usage GEN DATA_DIR OUT_DIR K)
#        TALLY_SHARED_DATA  the data folder (default ../shared/data)
#        KEEP=1  keep the temporary folder (jobs, answers, outputs, per-rank files) and print it
set -euo pipefail
cd "$(dirname "$0")/.."
KS="${*:-${KS:-10 40 100}}"
RANKS="${RANKS:-1 2}"
BUILD="${BUILD:-build}"
GEN="${GEN:-tools/se_scaling_job.py}"
PY=/usr/bin/python3
DATA="${TALLY_SHARED_DATA:-../shared/data}"
[ -d "$DATA/spatialeval" ] || {
  echo "mem_per_unit: the data folder '$DATA/spatialeval' is absent (set TALLY_SHARED_DATA to the folder holding spatialeval/)" >&2
  exit 1
}
DATA="$(cd "$DATA" && pwd)"
[ -f "$GEN" ] || { echo "mem_per_unit: the job generator '$GEN' is absent (set GEN)" >&2; exit 1; }
[ -x "$PY" ] || { echo "mem_per_unit: $PY is absent" >&2; exit 1; }
for k in $KS; do [[ "$k" =~ ^[1-9][0-9]*$ ]] || { echo "mem_per_unit: K '$k' is not a positive integer" >&2; exit 1; }; done
for n in $RANKS; do [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "mem_per_unit: rank count '$n' is not a positive integer" >&2; exit 1; }; done

T="$(mktemp -d)"
if [ "${KEEP:-0}" = 1 ]; then trap 'echo "mem_per_unit: kept $T" >&2' EXIT; else trap 'rm -rf "$T"' EXIT; fi

if ! { cmake -S . -B "$BUILD" > "$T/build.log" 2>&1 &&
       cmake --build "$BUILD" -j"${JOBS:-$(nproc)}" --target tally >> "$T/build.log" 2>&1; }; then
  tail -n 30 "$T/build.log" >&2
  echo "mem_per_unit: building the tally target in '$BUILD' failed" >&2
  exit 1
fi
TALLY="$(cd "$BUILD" && pwd)/tally"

# The per-rank wrapper: RSSDIR/rss.RANK gets the child's peak RSS in KiB.
cat > "$T/peak_rss.py" <<'PY'
import os, signal, sys
outdir, argv = sys.argv[1], sys.argv[2:]
rank = next((os.environ[v] for v in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK") if v in os.environ), "0")
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    except OSError as e:
        sys.stderr.write("peak_rss: cannot run %s: %s\n" % (argv[0], e))
    os._exit(127)
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
    signal.signal(s, lambda n, f: os.kill(pid, n))
_, status, ru = os.wait4(pid, 0)  # retried by Python on EINTR
with open(os.path.join(outdir, "rss.%s" % rank), "w") as f:
    f.write("%d\n" % ru.ru_maxrss)  # KiB on Linux
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
PY

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); tally: $TALLY"
printf '%-5s %8s %10s %9s %8s %13s  %s\n' ranks units "answers" "answ B/u" "wall s" "max RSS MiB" "per-rank peak RSS MiB"
: > "$T/points"
for k in $KS; do
  J="$T/k$k"
  mkdir -p "$J"
  "$PY" "$GEN" "$DATA" "$J" "$k" || { echo "mem_per_unit: the job generator failed for K=$k" >&2; exit 1; }
  [ -f "$J/job.json" ] && [ -f "$J/answers.jsonl" ] || { echo "mem_per_unit: $GEN wrote no job.json/answers.jsonl" >&2; exit 1; }
  units=$((k * 1500))
  abytes=$(stat -c %s "$J/answers.jsonl")
  for n in $RANKS; do
    R="$J/rss-n$n"
    rm -rf "$R" "$J/o-n$n.h5" "$J/o-n$n.h5.journal"
    mkdir -p "$R"
    t0=$(date +%s.%N)
    if ! mpirun -n "$n" --oversubscribe "$PY" "$T/peak_rss.py" "$R" "$TALLY" run "$J/job.json" \
         --out "$J/o-n$n.h5" --quiet > "$J/out-n$n.txt" 2> "$J/err-n$n.txt"; then
      cat "$J/err-n$n.txt" >&2
      echo "mem_per_unit: tally run failed (K=$k, $n ranks)" >&2
      exit 1
    fi
    t1=$(date +%s.%N)
    got=$(find "$R" -name 'rss.*' | wc -l)
    [ "$got" -eq "$n" ] || { echo "mem_per_unit: $got of $n ranks reported a peak RSS (K=$k)" >&2; exit 1; }
    per=$(for q in $(seq 0 $((n - 1))); do cat "$R/rss.$q"; done | tr '\n' ' ')
    max=$(echo "$per" | tr ' ' '\n' | sort -n | tail -n 1)
    echo "$n $units $max" >> "$T/points"
    printf '%-5s %8d %9.1fM %9.0f %8.1f %13.1f  %s\n' "$n" "$units" "$(awk -v b="$abytes" 'BEGIN{print b/1048576}')" \
      "$(awk -v b="$abytes" -v u="$units" 'BEGIN{print b/u}')" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" \
      "$(awk -v m="$max" 'BEGIN{print m/1024}')" "$(for v in $per; do awk -v m="$v" 'BEGIN{printf "%.1f ", m/1024}'; done)"
    rm -rf "$J/o-n$n.h5" "$J/o-n$n.h5.journal"
  done
  [ "${KEEP:-0}" = 1 ] || rm -f "$J/answers.jsonl"
done

echo
echo "least-squares fit of the max peak RSS over ranks vs total units, per rank count:"
printf '%-5s %7s %16s %15s %10s\n' ranks points "slope B/unit" "intercept MiB" "max resid"
for n in $RANKS; do
  awk -v n="$n" '$1 == n { x[++m] = $2; y[m] = $3 * 1024 }
    END {
      if (m < 2) { printf "%-5s %7d %16s %15s %10s\n", n, m, "(need 2 K)", "-", "-"; exit }
      for (i = 1; i <= m; i++) { sx += x[i]; sy += y[i] }
      mx = sx / m; my = sy / m
      for (i = 1; i <= m; i++) { sxx += (x[i] - mx) ^ 2; sxy += (x[i] - mx) * (y[i] - my) }
      b = sxx > 0 ? sxy / sxx : 0; a = my - b * mx
      for (i = 1; i <= m; i++) { r = y[i] - (a + b * x[i]); if (r < 0) r = -r; if (r > rm) rm = r }
      printf "%-5s %7d %16.0f %15.1f %9.2fM\n", n, m, b, a / 1048576, rm / 1048576
    }' "$T/points"
done
echo "(slope: bytes of peak RSS per unit of the whole job on the fullest rank; intercept: fixed cost; max resid: worst distance of a point from the line)"
