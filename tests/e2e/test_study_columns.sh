#!/usr/bin/env bash
# A study over the run's own columns: the demo's per-unit SpatialEval scores (/items/spatialeval,
# correct_strict and correct_legacy) against a human score joined from a CSV by item id, grouped
# by task. The estimates equal scipy's on the same join done with pandas; units with no human
# row are left out and said so; /stats is identical on 1, 2 and 4 ranks; a join column the
# table lacks is exit 2.
. "$(dirname "$0")/common.sh"
need_python
"$PY" -c "import scipy" 2>/dev/null || { echo "skipped: $PY lacks scipy"; exit 77; }
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/spatialeval"
"$PY" - "$WORK" "$D" <<'PY'
import json, random, sys
w, d = sys.argv[1], sys.argv[2]
rnd = random.Random(5)
ids = [json.loads(l)["id"] for l in open(d + "/items.jsonl")]
with open(w + "/human.csv", "w") as f:
    f.write("id,human\n")
    for i in ids[:-3]:  # three items have no human score
        f.write("%s,%d\n" % (i, rnd.randint(1, 5)))
def job(on):
    return {"name": "st", "output": w + "/o.h5",
            "benchmarks": [{"benchmark": "spatialeval", "items": d + "/items.jsonl",
                            "answers": [d + "/answers.jsonl", {"path": d + "/reference_eval_output.jsonl", "model": "toy-vlm-c"}],
                            "parsers": ["strict", "pr3", "legacy"]}],
            "studies": [{"name": "units_vs_human", "from": "spatialeval", "join": "human.csv", "on": on,
                         "human": "human", "metrics": ["correct_strict", "correct_legacy"], "group_by": ["task"],
                         "resamples": 400, "seed": 3, "permutation": True}]}
json.dump(job(["id"]), open(w + "/job.json", "w"))
json.dump(job(["item"]), open(w + "/bad.json", "w"))
PY
"$TALLY_BIN" run "$WORK/job.json" --out "$WORK/o1.h5" > "$WORK/out.txt" 2> "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "run failed"; }
grep -q "units of /items/spatialeval matched a row of .*; the others are left out" "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "left-out units not said"; }
grep -q "study 'units_vs_human' (/items/spatialeval joined with" "$WORK/out.txt" || fail "no study in the summary"
"$PY" - "$WORK/o1.h5" "$WORK/human.csv" "$TALLY_SRC/tools" <<'PY'
import sys, numpy as np, pandas as pd, scipy.stats as ss
sys.path.insert(0, sys.argv[3]); import tally_h5
items = tally_h5.read_table(sys.argv[1], "/items/spatialeval")
human = pd.read_csv(sys.argv[2])
j = items.merge(human, on="id", how="inner")
left_out = len(items) - len(j)
assert left_out == 3 * 7, left_out  # 3 items x 7 cfgs
summ = tally_h5.read_table(sys.argv[1], "/stats/units_vs_human/summary")
n_checked = 0
for task, g in j.groupby("task"):
    for m in ("correct_strict", "correct_legacy"):
        row = summ[(summ.group == "task=" + task) & (summ.metric == m) & (summ.statistic == "spearman")]
        assert len(row) == 1, (task, m)
        assert int(row.n.iloc[0]) == len(g), (task, m, int(row.n.iloc[0]), len(g))
        want = ss.spearmanr(g["human"], g[m]).statistic
        got = float(row.estimate.iloc[0])
        assert (np.isnan(want) and np.isnan(got)) or abs(want - got) < 1e-12, (task, m, want, got)
        n_checked += 1
print("study over the run's columns: %d estimates equal scipy's" % n_checked)
PY
for n in 2 4; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --out "$WORK/o$n.h5" --quiet > /dev/null 2> "$WORK/e$n.txt" || { cat "$WORK/e$n.txt"; fail "the run on $n ranks failed"; }
  h5diff "$WORK/o1.h5" "$WORK/o$n.h5" /stats > /dev/null || fail "/stats differs between 1 and $n ranks"
done
rc=0; "$TALLY_BIN" run "$WORK/bad.json" --out "$WORK/x.h5" > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "join column 'item' is not in" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "a bad join column: exit $rc"; }
[ ! -e "$WORK/x.h5" ] || fail "a failed study left an output"
echo "e2e study columns: ok"
