#!/usr/bin/env bash
# End to end: `tally run` on the bundled demo, then read the HDF5 file with h5py/pandas the way a
# user would and check it against the summary and against a recount from the item rows.
. "$(dirname "$0")/common.sh"
need_python
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/demo.h5" > "$WORK/summary.txt"
grep -q "parser audit" "$WORK/summary.txt" || fail "no parser audit in the summary"
grep -q "bad input lines: 0" "$WORK/summary.txt" || fail "demo should have no bad input"
[ ! -e "$WORK/demo.h5.part" ] || fail "partial file left behind"
"$PY" "$TALLY_SRC/tests/e2e/check_demo_h5.py" "$WORK/demo.h5" "$TALLY_SRC" || fail "HDF5 checks"
# Same job twice -> byte-identical datasets (determinism), compared with h5diff.
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/demo2.h5" --quiet > /dev/null
h5diff "$WORK/demo.h5" "$WORK/demo2.h5" || fail "two runs of the same job differ"
echo "e2e run demo: ok"
