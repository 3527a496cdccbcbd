#!/usr/bin/env bash
# tally compare: a paired comparison of two models in a run's item table.
#  1. on the SpatialEval demo (binary metric, three seeds per item) the item counts, means and
#     differences equal a re-computation from /items/spatialeval (seeds of an item averaged; a
#     unit without a score - missing, engine_error - counts 0, the summaries' policy), the
#     flip counts and McNemar's exact p-value equal scipy's binomtest on the (item, seed) pairs,
#     the CI holds the difference, each model's missing units are printed, and toy-vlm-c's
#     spatialmap mean equals the summary's accuracy (0.250: its tqa and vqa rows pooled);
#  2. a file written by the parallel writer (2 ranks: strings as bytes + offsets) gives the same
#     output as the serial writer's, and two runs print the same bytes;
#  3. MT-Bench-101 compares dialogue scores (the least rating over a dialogue's turns) under both
#     policies (exclude, fail), re-computed from /items/mtbench101, with examples naming dialogue
#     and turn; no McNemar; and VQA;
#  4. a model or metric not in the file, --resamples 0 or 1: exit 2, naming what is wrong.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/s.h5" --quiet > "$WORK/sum.txt" || fail "the demo failed"
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/p.h5" --quiet > /dev/null ||
  fail "the 2-rank demo failed"
"$TALLY_BIN" compare "$WORK/s.h5" --models toy-vlm-a,toy-vlm-c --resamples 500 > "$WORK/s.txt" 2> "$WORK/s.err" ||
  { cat "$WORK/s.err"; fail "compare failed"; }
"$TALLY_BIN" compare "$WORK/p.h5" --models toy-vlm-a,toy-vlm-c --resamples 500 > "$WORK/p.txt" || fail "compare on the parallel file failed"
sed -i "s#$WORK/[sp].h5#RUN#" "$WORK/s.txt" "$WORK/p.txt"
cmp -s "$WORK/s.txt" "$WORK/p.txt" || { diff "$WORK/s.txt" "$WORK/p.txt"; fail "the parallel writer's file compares differently"; }
"$TALLY_BIN" compare "$WORK/s.h5" --models toy-vlm-a,toy-vlm-c --resamples 500 | sed "s#$WORK/s.h5#RUN#" | cmp -s - "$WORK/s.txt" ||
  fail "two runs of compare differ"
"$PY" - "$WORK/s.h5" "$WORK/s.txt" "$WORK/sum.txt" <<'PY' || fail "compare disagrees with the re-computation"
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
miss = defaultdict(int)
for r in t.itertuples():
    if r.model not in (A, B):
        continue
    v = r.correct_strict
    if r.status_strict in ("missing", "engine_error") or v != v:
        v = 0.0  # the summaries' policy: a unit without a score counts 0
        miss[r.model] += r.status_strict == "missing"
    vals[r.id].setdefault(r.model, []).append(v)
    pairs[(r.id, r.seed)][r.model] = v
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
out = open(sys.argv[2]).read()
for m in (A, B):
    assert (" %s: n " % m) in out and ("missing %d," % miss[m]) in out, (m, miss[m])
# toy-vlm-c on spatialmap: the summary's accuracy (a missing answer counts 0), 0.250 of 12; the
# summary gives it per mode (tqa 9 units, vqa 3; one seed: correct = mean x n), pooled here
sm = [l.split() for l in open(sys.argv[3])
      if l.split()[:3] == ["toy-vlm-c", "reason", "spatialmap"] and len(l.split()) > 10]
assert len(sm) == 2, ("no toy-vlm-c spatialmap tqa and vqa rows in the summary", sm)
pooled = sum(float(r[10]) * int(r[5]) for r in sm) / sum(int(r[5]) for r in sm)
assert rows["spatialmap"][3] == "0.2500" and abs(pooled - 0.25) < 1e-3, (rows["spatialmap"], sm)
print("compare (spatialeval): every group re-computed; toy-vlm-c spatialmap 0.250 as in the summary")
PY
# 3. MT-Bench-101 and VQA
"$TALLY_BIN" run "$TALLY_SRC/jobs/mtbench101-demo.json" --out "$WORK/m.h5" --quiet > /dev/null || fail "the MT-Bench-101 demo failed"
"$TALLY_BIN" compare "$WORK/m.h5" --models demo-chat-a,demo-chat-b --resamples 200 > "$WORK/m.txt" || fail "compare on MT-Bench-101 failed"
"$PY" - "$WORK/m.h5" "$WORK/m.txt" <<'PY' || fail "compare on MT-Bench-101 disagrees"
import math, sys
from collections import defaultdict
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
t = tally_h5.read_table(sys.argv[1], "/items/mtbench101")
A, B = "demo-chat-a", "demo-chat-b"
turns = defaultdict(list)  # (model, seed, dialogue) -> [(rating or None, turn)]
task = {}
for r in t.itertuples():
    if r.model in (A, B):
        turns[(r.model, r.seed, r.id)].append((r.rating if r.status == "ok" else None, r.turn))
        task[r.id] = r.task
text = open(sys.argv[2]).read()
assert "McNemar" not in text
parts = text.split("\npolicy ")
assert len(parts) == 3 and parts[1].startswith("exclude") and parts[2].startswith("fail"), "two policies"
for pol, part in zip(("exclude", "fail"), parts[1:]):
    score = {}
    for k, ts in turns.items():
        rated = [v for v, _ in ts if v is not None]
        if rated and (pol == "exclude" or len(rated) == len(ts)):
            score[k] = min(rated)
    rows = {l.split()[0]: l.split() for l in part.splitlines()[2:] if l.split() and l.split()[0] in set(task.values()) | {"all"}}
    for g in ["all"] + sorted(set(task.values())):
        ids = sorted({d for (_, _, d) in turns if g == "all" or task[d] == g})
        a, b = [], []
        for d in ids:
            sa = [score[k] for k in score if k[0] == A and k[2] == d]
            sb = [score[k] for k in score if k[0] == B and k[2] == d]
            if sa and sb:
                a.append(sum(sa) / len(sa)); b.append(sum(sb) / len(sb))
        x = rows[g]
        assert int(x[1]) == len(a), (pol, g, x, len(a))
        assert abs(float(x[2]) - sum(a) / len(a)) < 6e-5 and abs(float(x[3]) - sum(b) / len(b)) < 6e-5, (pol, g, x)
        lo, hi = float(x[5].strip("[,")), float(x[6].strip("]"))
        d = sum(a) / len(a) - sum(b) / len(b)
        assert lo <= d + 6e-5 and d <= hi + 6e-5, (pol, g, x)
    # examples name dialogue and turn: the loser's least rating in that seed is at that turn
    ex = [l for l in part.splitlines() if l.startswith("all: A > B on ")][0]
    first = ex.split(" on ")[1].split(",")[0].split(";")[0].strip()   # "2 (turn 3)"
    d, tn = first.split(" (turn ")[0], int(first.split(" (turn ")[1].rstrip(")"))
    ok = any(k[0] == B and k[2] == d and (v, tn) in [(vv, tt) for vv, tt in turns[k]] and v == score.get(k)
             for k in turns for v, _ in turns[k])
    assert ok, (pol, ex)
print("compare (mtbench101): dialogue scores re-computed under exclude and fail")
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
for b in 0 1 -3 x; do
  rc=0; "$TALLY_BIN" compare "$WORK/s.h5" --models toy-vlm-a,toy-vlm-c --resamples $b > "$WORK/o.txt" 2> "$WORK/e.txt" || rc=$?
  [ "$rc" = 2 ] && grep -q -- "--resamples takes a whole number in \[2, " "$WORK/e.txt" && ! grep -q nan "$WORK/o.txt" ||
    { cat "$WORK/e.txt" "$WORK/o.txt"; fail "--resamples $b: exit $rc"; }
done
echo "e2e compare: ok"
