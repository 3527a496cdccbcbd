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
# `tally run`, on one rank (RANKS=N: on N ranks under mpirun, both jobs; CPU is then every
# process mpirun started):
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
#      TALLY_SHARED_DATA (default ../shared/data), KEEP (a folder: keep the generated job there),
#      RANKS (default 1)
NAME=mtb_compare_bench PY_MODULES="numpy"
source "$(dirname "$0")/mtb_common.sh" "$@"
RANKS="${RANKS:-1}"
LAUNCH=()
if [ "$RANKS" -gt 1 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export PMIX_MCA_psec="${PMIX_MCA_psec:-native}" # no munge round trips before each local launch
  LAUNCH=(mpirun --oversubscribe -n "$RANKS")
fi
echo "ranks: $RANKS"
A=(); B=(); AC=(); BC=()
for i in $(seq "$REPS"); do
  read -r a ac <<< "$(timed a "${LAUNCH[@]}" "$BUILD/tally" run "$T/job_a.json" --quiet --force)"
  read -r b bc <<< "$(timed b "${LAUNCH[@]}" "$BUILD/tally" run "$T/job_b.json" --quiet --force)"
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
