#!/usr/bin/env bash
# The cluster bootstrap and the system-level agreement (issue 32, items 2 and 3), end to end:
#  - the VQA demo (each question answered by two models) with its default study (clusters = the
#    question, "id") and the same study with "cluster": "none": the clustered percentile CIs are
#    wider for every metric and statistic; the header says "resamples of 30 questions";
#  - the clustered study's every resample value, estimate and CI equal scipy/numpy on the
#    weighted sample expanded, with tally's Philox draws rewritten in Python (cluster_check.py);
#  - system level: `tally correlate --cluster q --system model` on 5 systems x 40 questions
#    equals the Python reference (per-model means, spearmanr/kendalltau over the systems,
#    percentile CIs); the demo prints its 2-system table with the note;
#  - /stats is byte-identical on 1, 2 and 4 ranks (h5diff), the demo job and `tally correlate`;
#  - a --cluster or "cluster" column the table lacks is exit 2, naming it.
. "$(dirname "$0")/common.sh"
need_python
"$PY" -c "import scipy" 2>/dev/null || { echo "skipped: $PY lacks scipy"; exit 77; }
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
CHECK="$TALLY_SRC/tests/e2e/cluster_check.py"
D="$TALLY_SRC/demo/vqa"
"$PY" - "$WORK" "$D" <<'PY'
import json, sys
w, d = sys.argv[1], sys.argv[2]
met = ["vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave_score"]
def study(name, **kw):
    s = {"name": name, "from": "vqa", "human": "human", "metrics": met, "resamples": 400, "seed": 5,
         "method": "percentile", "ci": 0.9}
    s.update(kw)
    return s
job = {"name": "cl", "output": w + "/o.h5",
       "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": d + "/items.jsonl",
                       "answers": d + "/answers.jsonl", "judgments": d + "/judgments.jsonl",
                       "human": d + "/human.jsonl",
                       "lave": {"demos": d + "/lave_demos_general.json", "demos_binary": d + "/lave_demos_binary.json",
                                "num_shots": 3}}],
       "studies": [study("clustered"), study("items", cluster="none", system="none"),
                   study("bca", method="bca", permutation=True)]}
json.dump(job, open(w + "/job.json", "w"))
job["studies"] = [study("bad", cluster="no_such_column")]
json.dump(job, open(w + "/bad.json", "w"))
PY
"$TALLY_BIN" run "$WORK/job.json" --out "$WORK/o1.h5" > "$WORK/out.txt" 2> "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "run failed"; }
grep -q "B = 400 resamples of 30 questions (clusters by 'id')" "$WORK/out.txt" || { cat "$WORK/out.txt"; fail "no cluster header"; }
grep -q "system level (model means, 2 systems)" "$WORK/out.txt" || fail "no system-level table"
grep -q "note: 2 system(s): a correlation over fewer than 3 systems" "$WORK/out.txt" || fail "no 2-system note"
"$PY" - "$WORK/o1.h5" "$TALLY_SRC/tools" <<'PY'
import sys, numpy as np
sys.path.insert(0, sys.argv[2]); import tally_h5
c = tally_h5.read_table(sys.argv[1], "/stats/clustered/summary")
i = tally_h5.read_table(sys.argv[1], "/stats/items/summary")
assert len(c) == len(i) == 8
wc, wi = (c.ci_hi - c.ci_lo).to_numpy(), (i.ci_hi - i.ci_lo).to_numpy()
assert (c.estimate.to_numpy() == i.estimate.to_numpy()).all()
assert (wc > wi).all(), list(zip(c.metric, c.statistic, wc, wi))
p = tally_h5.read_table(sys.argv[1], "/stats/items/params")
assert p.cluster.iloc[0] == "" and int(p.clusters.iloc[0]) == 0 and p.system.iloc[0] == ""
print("clustered CIs wider than item CIs for all 8: mean width %.3f vs %.3f" % (wc.mean(), wi.mean()))
PY
(cd "$TALLY_SRC" && "$PY" "$CHECK" study "$WORK/o1.h5" clustered 5 0.9) || fail "cluster bootstrap differs from the reference"
(cd "$TALLY_SRC" && "$PY" "$CHECK" system "$WORK/o1.h5" clustered 5 0.9 model) || fail "demo system level differs from the reference"
for n in 2 4; do
  mpirun --allow-run-as-root -n $n --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --out "$WORK/o$n.h5" --quiet > /dev/null 2> "$WORK/e$n.txt" || { cat "$WORK/e$n.txt"; fail "the run on $n ranks failed"; }
  h5diff "$WORK/o1.h5" "$WORK/o$n.h5" /stats > /dev/null || fail "/stats differs between 1 and $n ranks"
done
# system level over 5 systems, `tally correlate`
"$PY" "$CHECK" make "$WORK"
for n in 1 2 4; do
  mpirun --allow-run-as-root -n $n --oversubscribe "$TALLY_BIN" correlate --input "$WORK/sys.csv" --human human --metrics m1,m2 \
    --cluster q --system model --resamples 300 --seed 9 --ci 0.9 --method percentile --out "$WORK/s$n.h5" > "$WORK/s$n.txt" 2> "$WORK/se$n.txt" ||
    { cat "$WORK/se$n.txt"; fail "correlate on $n ranks failed"; }
done
grep -q "B = 300 resamples of 40 clusters (by 'q')" "$WORK/s1.txt" || { cat "$WORK/s1.txt"; fail "no cluster header"; }
grep -q "system level (model means, 5 systems)" "$WORK/s1.txt" || fail "no 5-system table"
! grep -q "note:" "$WORK/s1.txt" || fail "a note with 5 systems"
(cd "$TALLY_SRC" && "$PY" "$CHECK" study "$WORK/s1.h5" correlate 9 0.9) || fail "correlate --cluster differs from the reference"
(cd "$TALLY_SRC" && "$PY" "$CHECK" system "$WORK/s1.h5" correlate 9 0.9 model) || fail "system level differs from the reference"
for n in 2 4; do h5diff "$WORK/s1.h5" "$WORK/s$n.h5" /stats > /dev/null || fail "correlate /stats differs between 1 and $n ranks"; done
# a cluster column that is not there
rc=0; "$TALLY_BIN" correlate --input "$WORK/sys.csv" --human human --metrics m1 --cluster qq > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "has no column 'qq' (the --cluster column)" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "--cluster qq: exit $rc"; }
rc=0; "$TALLY_BIN" run "$WORK/bad.json" --out "$WORK/x.h5" > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "no column 'no_such_column'" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "job cluster column: exit $rc"; }
echo "e2e cluster study: ok"
