#!/usr/bin/env bash
# The run path scores exactly as it did at commit 11380a1, before it was rewritten: the demo job
# at 1, 2 and 4 ranks gives the /items and /metrics of tests/fixtures/reference/demo.h5 (made by
# tools/make_reference.sh; see its README.md). Run from the source root with a relative job path:
# /items `source` holds the answer file's path as the job resolves it.
#  - /items: every dataset of the reference, exactly (tools/h5_same.py); the columns added since
#    are allowed: n_engine_error (only zeros), mode and image (SpatialEval's question mode and
#    image, checked by e2e_test_se_vision).
#  - /metrics/spatialeval: the tables are grouped by question mode now (tqa, vqa), their
#    accuracies divide by n and their std has ddof 1 (issue 27), so their datasets differ from
#    the reference's; their per-seed rows summed over the modes must give the reference's
#    integers (n, correct, every n_<status>) and its accuracy, bit for bit, and the means over
#    seeds of those accuracies its mean (to 1e-12: the order of the sums differs).
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
PY="${TALLY_PYTHON:-/usr/bin/python3}"
"$PY" -c "import h5py, numpy" 2>/dev/null || { echo "skipped: no h5py/numpy for $PY"; exit 77; }
REF="$TALLY_SRC/tests/fixtures/reference/demo.h5"
[ -f "$REF" ] || fail "no $REF"
for n in 1 2 4; do
  (cd "$TALLY_SRC" && mpirun -n $n --oversubscribe "$TALLY_BIN" run jobs/demo.json --out "$WORK/r$n.h5" --quiet) \
    > /dev/null 2> "$WORK/e$n.txt" || { cat "$WORK/e$n.txt"; fail "mpirun -n $n failed"; }
  "$PY" "$TALLY_SRC/tools/h5_same.py" "$REF" "$WORK/r$n.h5" /items --allow n_engine_error --skip se --skip mode --skip image ||
    fail "/items at $n ranks differs from the reference"
  "$PY" "$TALLY_SRC/tools/se_metrics_same.py" "$REF" "$WORK/r$n.h5" || fail "/metrics at $n ranks differs from the reference"
done
echo "e2e reference: /items and the /metrics counts at 1, 2 and 4 ranks identical to commit 11380a1"
