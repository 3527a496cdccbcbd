#!/usr/bin/env bash
# MT-Bench-101 "comparison": false / true (issue 34), on the demo:
#  1. false writes an empty comparison table and every other table equal to the demo's;
#  2. true is the default setting (1,000 resamples, seed 0, level 0.95): the same comparison
#     table as {"resamples": 1000, "seed": 0, "level": 0.95};
#  3. another value ("off", 0, null) is a job error naming the key (exit 2, nothing written).
. "$(dirname "$0")/common.sh"
need_python
job() { # job NAME COMPARISON-JSON
  sed "s#\"comparison\": {[^}]*}#\"comparison\": $2#; s#\"\\.\\./demo#\"$TALLY_SRC/demo#" \
    "$TALLY_SRC/jobs/mtbench101-demo.json" > "$WORK/$1.json"
  grep -q "\"comparison\": $2" "$WORK/$1.json" || fail "$1: the job was not rewritten"
}
job base '{"resamples": 2000, "seed": 0, "level": 0.95}'
job off false
job on true
job dflt '{"resamples": 1000, "seed": 0, "level": 0.95}'
for v in base off on dflt; do
  "$TALLY_BIN" run "$WORK/$v.json" --out "$WORK/$v.h5" --quiet > "$WORK/$v.txt" 2> "$WORK/$v.err" ||
    { cat "$WORK/$v.err"; fail "$v: the run failed"; }
done
"$PY" - "$WORK" <<'PY' || fail "the tables differ"
import os, sys
import h5py
w = sys.argv[1]
def rows(f):
    g = h5py.File(f)["/metrics/mtbench101/comparisons"]
    return {k: g[k].shape[0] for k in g.keys() if isinstance(g[k], h5py.Dataset)}
off, base = rows(w + "/off.h5"), rows(w + "/base.h5")
assert off and all(n == 0 for n in off.values()), "comparison false: rows %s" % off
assert base and all(n > 0 for n in base.values()), "the demo has no comparison rows: %s" % base
print("comparison false: 0 rows; the demo: %d" % max(base.values()))
PY
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/base.h5" "$WORK/off.h5" /items /audit /metrics/mtbench101/dialogues \
  /metrics/mtbench101/overall /metrics/mtbench101/tasks /metrics/mtbench101/across_seeds \
  /metrics/mtbench101/summary || fail "comparison false changed another table"
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/dflt.h5" "$WORK/on.h5" /metrics/mtbench101/comparisons ||
  fail "comparison true is not the default setting"
for bad in '"off"' 0 null; do
  job bad "$bad"
  rc=0
  "$TALLY_BIN" run "$WORK/bad.json" --out "$WORK/bad.h5" --quiet > "$WORK/bad.txt" 2>&1 || rc=$?
  [ "$rc" = 2 ] || { cat "$WORK/bad.txt"; fail "comparison $bad: exit $rc, not 2"; }
  grep -q "comparison" "$WORK/bad.txt" || { cat "$WORK/bad.txt"; fail "comparison $bad: the key is not named"; }
  [ ! -e "$WORK/bad.h5" ] || fail "comparison $bad: an output was written"
done
echo "ok"
