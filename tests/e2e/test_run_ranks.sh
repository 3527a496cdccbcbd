#!/usr/bin/env bash
# `mpirun -n 1|2|4 tally run jobs/demo.json` give byte-identical datasets (h5diff), including the
# demo's correlation study, whose resamples, permutation test and BCa jackknife are split over
# the ranks; the printed summaries are identical too.
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
for n in 1 2 4; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/r$n.h5" --quiet \
    > "$WORK/o$n.txt" 2> "$WORK/e$n.txt" || { cat "$WORK/e$n.txt"; fail "mpirun -n $n failed"; }
  sed -i "s#$WORK/r$n.h5#OUT#" "$WORK/o$n.txt"
done
for n in 2 4; do
  for obj in /items /metrics /audit /input_problems /stats; do
    h5diff "$WORK/r1.h5" "$WORK/r$n.h5" "$obj" || fail "$obj differs between 1 and $n ranks"
  done
  cmp "$WORK/o1.txt" "$WORK/o$n.txt" || fail "summary differs between 1 and $n ranks"
done
grep -q "study 'vqa_metrics_vs_human'" "$WORK/o1.txt" || fail "the demo study did not run"
echo "e2e ranks: 1, 2 and 4 ranks identical"
