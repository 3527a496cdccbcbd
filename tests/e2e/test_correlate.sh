#!/usr/bin/env bash
# `tally correlate` end to end: full-data estimates equal scipy; --indices values equal scipy's
# per resample on the same index matrix; byte-identical /stats datasets on 1, 2 and 4 ranks
# (mpirun) and in a plain command, which does not initialise MPI (an Open MPI setting that makes
# MPI_Init fail does not stop it); bad cells reported with file:line and excluded; usage errors
# exit 2.
. "$(dirname "$0")/common.sh"
need_python
"$PY" -c "import scipy" 2>/dev/null || { echo "skipped: $PY lacks scipy"; exit 77; }
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
CHECK="$TALLY_SRC/tests/e2e/correlate_check.py"
"$PY" "$CHECK" make "$WORK" "$TALLY_SRC/tools"
ARGS=(--input "$WORK/table.csv" --human human --metrics vqa_acc,lave,score --group-by dataset
      --resamples 300 --seed 7 --method bca --permutation --quiet --device cpu)
OMPI_MCA_pml=no_such_pml "$TALLY_BIN" correlate "${ARGS[@]}" --out "$WORK/r1.h5" > "$WORK/out1.txt" 2> "$WORK/err1.txt" ||
  { cat "$WORK/err1.txt"; fail "a plain tally correlate initialised MPI (or failed)"; }
grep -q "table.csv:13: column 'vqa_acc' is not a number" "$WORK/err1.txt" || { cat "$WORK/err1.txt"; fail "bad cell not reported with file:line"; }
grep -q "1 rows excluded" "$WORK/out1.txt" || { cat "$WORK/out1.txt"; fail "excluded row not shown"; }
grep -q "p_boot" "$WORK/out1.txt" || fail "no comparisons printed"
"$PY" "$CHECK" check-full "$WORK" "$TALLY_SRC/tools"
for n in 1 2 4; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" correlate "${ARGS[@]}" --out "$WORK/m$n.h5" > "$WORK/m$n.txt" 2>/dev/null \
    || fail "mpirun -n $n failed"
  h5diff "$WORK/r1.h5" "$WORK/m$n.h5" /stats || fail "/stats differs between the plain command and $n ranks"
  cmp -s "$WORK/out1.txt" "$WORK/m$n.txt" || fail "printed table differs between the plain command and $n ranks"
done
# --indices: explicit index matrix, compared with scipy resample by resample
"$TALLY_BIN" correlate --input "$WORK/a.csv" --human human --metrics vqa_acc,lave,score \
  --indices "$WORK/idx.npy" --method percentile --quiet --out "$WORK/idx.h5" > /dev/null
"$PY" "$CHECK" check-indices "$WORK" "$TALLY_SRC/tools"
# --json is valid JSON with every group
"$TALLY_BIN" correlate "${ARGS[@]}" --json 2>/dev/null | "$PY" -c \
  "import json,sys; d=json.load(sys.stdin); assert [g['group'] for g in d['groups']]==['dataset=a','dataset=b']; assert d['method']=='bca'"
# errors
rc=0; "$TALLY_BIN" correlate --input "$WORK/table.csv" --human nope --metrics vqa_acc > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] || fail "unknown column: exit $rc, want 2"
grep -q "no column 'nope'" "$WORK/e.txt" || fail "unknown column not named"
rc=0; "$TALLY_BIN" correlate "${ARGS[@]}" --strict-input > /dev/null 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "--strict-input with a bad cell: exit $rc, want 3"
echo "e2e correlate: ok"
