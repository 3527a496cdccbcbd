#!/usr/bin/env bash
# The VQA demo's agreement table (jobs/vqa-demo.json: LAVE's score vs the human score, ordinal
# alpha, questions resampled as clusters): `tally run` prints it and writes
# /stats/vqa_metrics_vs_human/agreement and /confusion; the whole /stats group is byte-identical
# on 1, 2 and 4 ranks (mpirun), printed table included; the table's kappa equals scikit-learn's
# on the run's own item rows.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
JOB="$TALLY_SRC/jobs/vqa-demo.json"
S=/stats/vqa_metrics_vs_human
"$TALLY_BIN" run "$JOB" --out "$WORK/r0.h5" --quiet > "$WORK/r0.txt" 2> "$WORK/r0.err" || { cat "$WORK/r0.err"; fail "tally run failed"; }
grep -q "lave_score vs human: n = " "$WORK/r0.txt" || { cat "$WORK/r0.txt"; fail "the demo prints no agreement table"; }
grep -q "clusters: the values of column 'qid'" "$WORK/r0.txt" || fail "the demo does not resample questions"
h5ls "$WORK/r0.h5$S/agreement" > /dev/null || fail "no $S/agreement table"
h5ls "$WORK/r0.h5$S/confusion" > /dev/null || fail "no $S/confusion table"
for n in 1 2 4; do
  mpirun --allow-run-as-root -n $n --oversubscribe "$TALLY_BIN" run "$JOB" --out "$WORK/m$n.h5" --quiet \
    > "$WORK/m$n.txt" 2>/dev/null || fail "mpirun -n $n failed"
  h5diff "$WORK/r0.h5" "$WORK/m$n.h5" /stats || fail "/stats differs between 1 process and $n ranks"
  sed -n '/^agreement/,/^$/p' "$WORK/m$n.txt" > "$WORK/a$n.txt"
  sed -n '/^agreement/,/^$/p' "$WORK/r0.txt" | cmp -s - "$WORK/a$n.txt" || fail "the printed agreement differs on $n ranks"
done
if "$PY" -c "import sklearn" 2>/dev/null; then
  "$PY" - "$WORK/r0.h5" "$TALLY_SRC/tools" <<'PY' || fail "the demo's kappa differs from sklearn's"
import sys
import numpy as np
from sklearn.metrics import cohen_kappa_score
sys.path.insert(0, sys.argv[2])
import tally_h5
it = tally_h5.read_table(sys.argv[1], "/items/vqa")
ag = tally_h5.read_table(sys.argv[1], "/stats/vqa_metrics_vs_human/agreement").set_index("statistic")
ok = it.lave_score.notna() & it.human.notna()
x, y = it.lave_score[ok].to_numpy(), it.human[ok].to_numpy()
lab = np.unique(np.concatenate([x, y]))
xi, yi = np.searchsorted(lab, x), np.searchsorted(lab, y)
for st, w in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
    want = cohen_kappa_score(xi, yi, weights=w)
    if abs(ag.estimate[st] - want) > 1e-12:
        sys.exit(f"{st}: tally {ag.estimate[st]}, sklearn {want}")
print("demo agreement: kappa equals sklearn's, n =", int(ag.n["kappa"]))
PY
fi
echo "e2e agree demo: ok"
