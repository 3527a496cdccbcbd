#!/usr/bin/env bash
# What MPI costs a plain command (no mpirun or srun), measured inside tally:
#   - `tally run jobs/demo.json` (a singleton MPI world, with tally's singleton settings): the
#     wall time of MPI_Init_thread and of MPI_Finalize, from a small LD_PRELOAD library that
#     times the two calls around the real ones (built here with mpicc);
#   - the same with only the singleton settings tally had before it left out unused components
#     and hwloc's plugins (each of those variables set to a value that leaves nothing out, so
#     tally does not set it), for comparison;
#   - `tally correlate` on a 100-row table (no MPI at all) and `tally --version` (the process
#     alone), whole commands.
# Prints the median of RUNS runs of each. The issue's bounds: MPI_Init + MPI_Finalize at most
# 20 ms for a plain command, `tally correlate` on 100 rows under 50 ms.
# usage: bench/mpi_startup.sh [RUNS=11]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-11}"
BUILD="${BUILD:-build}"
cmake -S . -B "$BUILD" > /dev/null && cmake --build "$BUILD" -j"$(nproc)" --target tally > /dev/null
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
cat > "$T/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
int MPI_Init_thread(int *a, char ***b, int r, int *p) {
  int (*f)(int *, char ***, int, int *) = (int (*)(int *, char ***, int, int *))dlsym(RTLD_NEXT, "MPI_Init_thread");
  double t0 = now();
  int rc = f(a, b, r, p);
  fprintf(stderr, "mpi_startup: init %.3f\n", (now() - t0) * 1e3);
  return rc;
}
int MPI_Finalize(void) {
  int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
  double t0 = now();
  int rc = f();
  fprintf(stderr, "mpi_startup: finalize %.3f\n", (now() - t0) * 1e3);
  return rc;
}
C
mpicc -shared -fPIC -O2 "$T/shim.c" -o "$T/shim.so" -ldl
med() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# The component exclusions of src/cli/main.c set to exclude nothing (tally leaves a variable the
# user set alone), and no hwloc plugin blacklisted: the singleton settings as they were before.
BEFORE=(OMPI_MCA_coll=^no_such OMPI_MCA_osc=^no_such OMPI_MCA_errmgr=^no_such OMPI_MCA_state=^no_such
        OMPI_MCA_reachable=^no_such OMPI_MCA_shmem=^no_such OMPI_MCA_op=^no_such HWLOC_PLUGINS_BLACKLIST=no_such)
run_demo() { # label [env...]
  local label=$1; shift
  : > "$T/$label.log"
  for _ in $(seq "$RUNS"); do
    rm -f "$T/demo.h5"
    env "$@" LD_PRELOAD="$T/shim.so" "$BUILD/tally" run jobs/demo.json --out "$T/demo.h5" --quiet \
      > /dev/null 2>> "$T/$label.log"
  done
  local i f
  i=$(sed -n 's/^mpi_startup: init //p' "$T/$label.log" | med)
  f=$(sed -n 's/^mpi_startup: finalize //p' "$T/$label.log" | med)
  echo "tally run jobs/demo.json, $label: MPI_Init_thread $i ms, MPI_Finalize $f ms, together $(awk "BEGIN{print $i + $f}") ms (medians of $RUNS)"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
run_demo "tally's singleton settings" X=1
run_demo "without the component exclusions and the hwloc blacklist" "${BEFORE[@]}"
head -n 101 demo/stats/vqa_judgments.csv > "$T/small.csv"
C=""; V=""
for _ in $(seq "$RUNS"); do
  t0=$EPOCHREALTIME; "$BUILD/tally" correlate --input "$T/small.csv" --human human --metrics vqa_acc,soft_acc,lave > /dev/null 2>&1
  t1=$EPOCHREALTIME; "$BUILD/tally" --version > /dev/null; t2=$EPOCHREALTIME
  C+="$(awk "BEGIN{print 1000 * ($t1 - $t0)}")"$'\n'; V+="$(awk "BEGIN{print 1000 * ($t2 - $t1)}")"$'\n'
done
echo "tally correlate on 100 rows (no MPI): $(printf '%s' "$C" | med) ms; tally --version: $(printf '%s' "$V" | med) ms (medians of $RUNS)"
