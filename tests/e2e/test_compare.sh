#!/usr/bin/env bash
# tally compare: a paired comparison of two models in a run's item table.
#  1. on the SpatialEval demo (binary metric, three seeds per item) the item counts, means and
#     differences equal a re-computation from /items/spatialeval (seeds of an item averaged), the
#     flip counts and McNemar's exact p-value equal scipy's binomtest on the (item, seed) pairs,
#     and the CI holds the difference;
#  2. a file written by the parallel writer (2 ranks: strings as bytes + offsets) gives the same
#     output as the serial writer's, and two runs print the same bytes;
#  3. MT-Bench-101 (items are (dialogue, turn); a 1-10 rating, no McNemar) and VQA;
#  4. a model or metric not in the file: exit 2, naming what the file has.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/s.h5" --quiet > /dev/null || fail "the demo failed"
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/p.h5" --quiet > /dev/null ||
  fail "the 2-rank demo failed"
"$TALLY_BIN" compare "$WORK/s.h5" --models toy-vlm-a,toy-vlm-c --resamples 500 > "$WORK/s.txt" 2> "$WORK/s.err" ||
  { cat "$WORK/s.err"; fail "compare failed"; }
"$TALLY_BIN" compare "$WORK/p.h5" --models toy-vlm-a,toy-vlm-c --resamples 500 > "$WORK/p.txt" || fail "compare on the parallel file failed"
sed -i "s#$WORK/[sp].h5#RUN#" "$WORK/s.txt" "$WORK/p.txt"
cmp -s "$WORK/s.txt" "$WORK/p.txt" || { diff "$WORK/s.txt" "$WORK/p.txt"; fail "the parallel writer's file compares differently"; }
"$TALLY_BIN" compare "$WORK/s.h5" --models toy-vlm-a,toy-vlm-c --resamples 500 | sed "s#$WORK/s.h5#RUN#" | cmp -s - "$WORK/s.txt" ||
  fail "two runs of compare differ"
"$PY" - "$WORK/s.h5" "$WORK/s.txt" <<'PY' || fail "compare disagrees with the re-computation"
import math, sys
from collections import defaultdict
from scipy.stats import binomtest
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
t = tally_h5.read_table(sys.argv[1], "/items/spatialeval")
A, B = "toy-vlm-a", "toy-vlm-c"
vals = defaultdict(dict)   # item -> model -> [values]
pairs = defaultdict(dict)  # (item, seed) -> model -> value
task = {}
for r in t.itertuples():
    if r.model not in (A, B) or r.status_strict in ("missing", "engine_error"):
        continue
    vals[r.id].setdefault(r.model, []).append(r.correct_strict)
    pairs[(r.id, r.seed)][r.model] = r.correct_strict
    task[r.id] = r.task
rows = {l.split()[0]: l.split() for l in open(sys.argv[2]) if l.split() and l.split()[0] in set(task.values()) | {"all"}}
for g in ["all"] + sorted(set(task.values())):
    its = [i for i in vals if A in vals[i] and B in vals[i] and (g == "all" or task[i] == g)]
    if not its:
        assert rows[g][2] == "(no", rows[g]
        continue
    a = [sum(vals[i][A]) / len(vals[i][A]) for i in its]
    b = [sum(vals[i][B]) / len(vals[i][B]) for i in its]
    d = sum(a) / len(a) - sum(b) / len(b)
    x = rows[g]
    assert int(x[1]) == len(its), (g, x, len(its))
    assert abs(float(x[2]) - sum(a) / len(a)) < 6e-5 and abs(float(x[4]) - d) < 6e-5, (g, x, d)
    lo, hi = float(x[5].strip("[,")), float(x[6].strip("]"))
    assert lo <= d + 6e-5 and d <= hi + 6e-5, (g, x)   # printed to 4 decimals
    pp = [p for (i, s), p in pairs.items() if A in p and B in p and (g == "all" or task[i] == g)]
    fab = sum(1 for p in pp if p[A] > p[B]); fba = sum(1 for p in pp if p[A] < p[B])
    assert int(x[8]) == fab and int(x[9]) == fba, (g, x, fab, fba)
    want = binomtest(min(fab, fba), fab + fba, 0.5).pvalue if fab + fba else 1.0
    assert abs(float(x[10]) - want) < 5e-4 * max(1, want), (g, x, want)
print("compare (spatialeval): every group re-computed")
PY
# 3. MT-Bench-101 and VQA
"$TALLY_BIN" run "$TALLY_SRC/jobs/mtbench101-demo.json" --out "$WORK/m.h5" --quiet > /dev/null || fail "the MT-Bench-101 demo failed"
"$TALLY_BIN" compare "$WORK/m.h5" --models demo-chat-a,demo-chat-b --resamples 200 > "$WORK/m.txt" || fail "compare on MT-Bench-101 failed"
"$PY" - "$WORK/m.h5" "$WORK/m.txt" <<'PY' || fail "compare on MT-Bench-101 disagrees"
import sys
from collections import defaultdict
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
t = tally_h5.read_table(sys.argv[1], "/items/mtbench101")
v = defaultdict(dict)
for r in t.itertuples():
    if r.status == "ok":
        v[(r.id, r.turn)].setdefault(r.model, []).append(r.rating)
its = [k for k in v if len(v[k]) == 2]
a = sum(sum(v[k]["demo-chat-a"]) / len(v[k]["demo-chat-a"]) for k in its) / len(its)
x = [l.split() for l in open(sys.argv[2]) if l.startswith("all ")][0]
assert int(x[1]) == len(its) and abs(float(x[2]) - a) < 6e-5, (x, len(its), a)
assert "McNemar" not in open(sys.argv[2]).read()
print("compare (mtbench101): %d (dialogue, turn) items" % len(its))
PY
"$TALLY_BIN" run "$TALLY_SRC/jobs/vqa-demo.json" --out "$WORK/v.h5" --quiet > /dev/null || fail "the VQA demo failed"
"$TALLY_BIN" compare "$WORK/v.h5" --models demo-vlm-a,demo-vlm-b --metric lave_score --by answer_type > "$WORK/v.txt" ||
  fail "compare on VQA failed"
grep -q "^yes/no " "$WORK/v.txt" || { cat "$WORK/v.txt"; fail "no answer-type group"; }
# 4. typos
rc=0; "$TALLY_BIN" compare "$WORK/s.h5" --models toy-vlm-a,toy-vlm-z > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "no model 'toy-vlm-z'; its models: toy-llm-b toy-vlm-a toy-vlm-c" "$WORK/e.txt" ||
  { cat "$WORK/e.txt"; fail "an unknown model: exit $rc"; }
rc=0; "$TALLY_BIN" compare "$WORK/s.h5" --models toy-vlm-a,toy-vlm-c --metric corect > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "no column 'corect'" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "an unknown metric: exit $rc"; }
echo "e2e compare: ok"
