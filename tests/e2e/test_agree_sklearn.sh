#!/usr/bin/env bash
# `tally correlate --agreement` end to end: random rating pairs made by numpy at run time; each
# pair's kappa (unweighted, linear, quadratic) and confusion matrix equal scikit-learn's
# (Debian's python3-sklearn), raw agreement, MT-Bench's without-ties share, Scott's pi, alpha
# (nominal, ordinal, interval; two raters and three) and the Wilson/Jeffreys intervals equal
# their formulas in numpy/scipy (agree_check.py); the agreement tables are byte-identical on 1
# and 2 ranks (mpirun); --agreement-cluster runs and says so; an unknown column
# is an error naming it; the usage errors exit 2. Also the comparison table's Holm and
# Benjamini-Hochberg columns against their definitions (numpy).
. "$(dirname "$0")/common.sh"
need_python
"$PY" -c "import sklearn, scipy" 2>/dev/null || { echo "skipped: $PY lacks sklearn/scipy (apt-get install python3-sklearn)"; exit 77; }
CHECK="$TALLY_SRC/tests/e2e/agree_check.py"
"$PY" "$CHECK" make "$WORK" "$TALLY_SRC/tools"
AG=(--agreement j3,h3 --agreement j10,h10 --agreement pa,pb --agreement jh,hh --agreement r1,r2,r3)
BASE=(--input "$WORK/ratings.csv" --human h3 --metrics metric --resamples 200 --seed 5 --quiet --device cpu)
for scale in nominal ordinal interval; do
  rm -f "$WORK/a.h5"
  "$TALLY_BIN" correlate "${BASE[@]}" "${AG[@]}" --agreement-scale $scale --out "$WORK/a.h5" > "$WORK/out_$scale.txt" \
    2> "$WORK/err_$scale.txt" || { cat "$WORK/err_$scale.txt"; fail "tally correlate --agreement ($scale) failed"; }
  "$PY" "$CHECK" check "$WORK" "$TALLY_SRC/tools" $scale
done
grep -q "pa vs pb: n = 400 items" "$WORK/out_interval.txt" || { cat "$WORK/out_interval.txt"; fail "pair header not printed"; }
grep -q "confusion (rows j3, columns h3)" "$WORK/out_interval.txt" || fail "confusion matrix not printed"
grep -q "all of r1,r2,r3" "$WORK/out_interval.txt" || fail "multi-rater alpha not printed"
# rank invariance of the agreement tables (the statistics are computed on rank 0 from Philox draws)
if command -v mpirun >/dev/null; then
  for n in 1 2; do
    mpirun --allow-run-as-root -n $n --oversubscribe "$TALLY_BIN" correlate "${BASE[@]}" "${AG[@]}" \
      --agreement-scale interval --out "$WORK/m$n.h5" > "$WORK/m$n.txt" 2>/dev/null || fail "mpirun -n $n failed"
    h5diff "$WORK/a.h5" "$WORK/m$n.h5" /stats/correlate/agreement || fail "agreement differs on $n ranks"
    h5diff "$WORK/a.h5" "$WORK/m$n.h5" /stats/correlate/confusion || fail "confusion differs on $n ranks"
    cmp -s "$WORK/out_interval.txt" "$WORK/m$n.txt" || fail "printed table differs on $n ranks"
  done
fi
# clusters: four rows per value of q (the unit test checks what cluster resampling computes);
# here only that the option runs and says so
"$TALLY_BIN" correlate "${BASE[@]}" --agreement j3,h3 --agreement-cluster q > "$WORK/cl.txt" 2>&1 ||
  { cat "$WORK/cl.txt"; fail "--agreement-cluster failed"; }
grep -q "clusters: the values of column 'q'" "$WORK/cl.txt" || fail "cluster resampling not stated"
# the comparison table's Holm / BH adjusted p-values and the MDE (correlate_write.c)
"$TALLY_BIN" correlate "${BASE[@]}" --metrics metric,j10,r1,hh --method percentile --out "$WORK/c.h5" > "$WORK/c.txt" 2>&1 ||
  { cat "$WORK/c.txt"; fail "tally correlate with 4 metrics failed"; }
grep -q "p_holm" "$WORK/c.txt" || fail "no p_holm column printed"
"$PY" "$CHECK" check-compare "$WORK" "$TALLY_SRC/tools"
# errors: an unknown column names it (exit 2, nothing written); usage errors exit 2
set +e
"$TALLY_BIN" correlate "${BASE[@]}" --agreement j3,nosuch > /dev/null 2> "$WORK/e1.txt"; rc=$?
"$TALLY_BIN" correlate "${BASE[@]}" --agreement j3 > /dev/null 2> "$WORK/e2.txt"; rc2=$?
"$TALLY_BIN" correlate "${BASE[@]}" --agreement j3,h3 --agreement-scale ratio > /dev/null 2> "$WORK/e3.txt"; rc3=$?
"$TALLY_BIN" correlate "${BASE[@]}" --agreement-cluster q > /dev/null 2> "$WORK/e4.txt"; rc4=$?
"$TALLY_BIN" correlate "${BASE[@]}" --agreement metric,h3 > /dev/null 2> "$WORK/e5.txt"; rc5=$?
set -e
[ $rc -eq 2 ] && grep -q "has no column 'nosuch' (in the agreement columns)" "$WORK/e1.txt" ||
  { cat "$WORK/e1.txt"; fail "unknown agreement column: rc $rc"; }
[ $rc2 -eq 2 ] && grep -q "needs two columns or more" "$WORK/e2.txt" || { cat "$WORK/e2.txt"; fail "one column: rc $rc2"; }
[ $rc3 -eq 2 ] || fail "bad --agreement-scale: rc $rc3"
[ $rc4 -eq 2 ] || fail "--agreement-cluster without --agreement: rc $rc4"
[ $rc5 -ne 0 ] && grep -q "more than 64 distinct values" "$WORK/e5.txt" || { cat "$WORK/e5.txt"; fail "a continuous column: rc $rc5"; }
echo "ok"
