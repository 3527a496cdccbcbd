#!/usr/bin/env bash
# The run path scores exactly as it did at commit 11380a1, before it was rewritten: the demo job
# at 1, 2 and 4 ranks gives the /items and /metrics of tests/fixtures/reference/demo.h5 (made by
# tools/make_reference.sh; see its README.md), compared dataset by dataset
# (tools/h5_same.py; the status column added since, n_engine_error, must hold only zeros). Run from the source root with
# a relative job path: /items `source` holds the answer file's path as the job resolves it.
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
PY="${TALLY_PYTHON:-/usr/bin/python3}"
"$PY" -c "import h5py, numpy" 2>/dev/null || { echo "skipped: no h5py/numpy for $PY"; exit 77; }
REF="$TALLY_SRC/tests/fixtures/reference/demo.h5"
[ -f "$REF" ] || fail "no $REF"
for n in 1 2 4; do
  (cd "$TALLY_SRC" && mpirun -n $n --oversubscribe "$TALLY_BIN" run jobs/demo.json --out "$WORK/r$n.h5" --quiet) \
    > /dev/null 2> "$WORK/e$n.txt" || { cat "$WORK/e$n.txt"; fail "mpirun -n $n failed"; }
  # every dataset of the reference, exactly; the one column added since (n_engine_error) all zeros
  "$PY" "$TALLY_SRC/tools/h5_same.py" "$REF" "$WORK/r$n.h5" /items /metrics --allow n_engine_error --skip se ||
    fail "/items or /metrics at $n ranks differs from the reference"
done
echo "e2e reference: /items and /metrics at 1, 2 and 4 ranks identical to commit 11380a1"
