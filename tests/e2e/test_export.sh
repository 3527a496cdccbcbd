#!/usr/bin/env bash
# `tally export RUN.h5 --format eee` (issue 31 item 5): a run's per-item results as Every Eval
# Ever instance lines. On the SpatialEval demo: one line per unit of /items/spatialeval, every
# line holding exactly the members the instance schema allows (required ones present, types
# right, metadata values strings), is_correct equal to the item table's correct_strict, the
# rule that fired as the extraction method; --mode pr3 exports pr3's verdicts; a run written on
# 2 ranks exports the same bytes. Refused: no --format, an unknown one, a benchmark the file lacks,
# a mode it lacks, MT-Bench-101's dialogue turns, an output over the run file.
. "$(dirname "$0")/common.sh"
need_python
T="$TALLY_BIN"
cd "$TALLY_SRC/jobs"
"$T" run demo.json --output "$WORK/demo.h5" --quiet > /dev/null || fail "the demo run failed"
"$T" export "$WORK/demo.h5" --format eee -o "$WORK/demo.jsonl" 2> "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "export failed"; }
grep -q "252 Every Eval Ever instance lines (schema 0.3.0) of spatialeval, mode strict" "$WORK/e.txt" ||
  { cat "$WORK/e.txt"; fail "export did not say what it wrote"; }
"$T" export "$WORK/demo.h5" --format eee --mode pr3 -o "$WORK/pr3.jsonl" 2> /dev/null || fail "export --mode pr3 failed"
"$PY" - "$WORK/demo.h5" "$WORK/demo.jsonl" "$WORK/pr3.jsonl" <<'PY' || fail "the lines do not follow the schema or the item table"
import h5py, json, sys
h5, lines, pr3 = sys.argv[1], sys.argv[2], sys.argv[3]
t = h5py.File(h5, "r")["/items/spatialeval"]
def col(c):
    if c in t: return [x.decode() if isinstance(x, bytes) else x for x in t[c][()]]
    raise KeyError(c)
ids, cor, rule, cor3 = col("id"), col("correct_strict"), col("rule_strict"), col("correct_pr3")
TOP = {"schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id", "sample_hash",
       "interaction_type", "input", "output", "messages", "answer_attribution", "evaluation", "token_usage",
       "performance", "error", "metadata"}
REQ = {"schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id", "interaction_type", "input",
       "answer_attribution", "evaluation"}
L = [json.loads(l) for l in open(lines)]
assert len(L) == len(ids) == 252, (len(L), len(ids))
for i, o in enumerate(L):
    assert set(o) <= TOP and REQ <= set(o), sorted(set(o) ^ TOP)
    assert o["schema_version"] == "0.3.0" and o["interaction_type"] == "single_turn" and o["messages"] is None
    assert isinstance(o["input"]["raw"], str) and all(isinstance(x, str) for x in o["input"]["reference"])
    assert isinstance(o["output"]["raw"], list) and all(isinstance(x, str) for x in o["output"]["raw"])
    a = o["answer_attribution"]
    assert len(a) == 1 and set(a[0]) == {"turn_idx", "source", "extracted_value", "extraction_method", "is_terminal"}
    assert a[0]["extraction_method"] == "tally/strict/" + (rule[i] or "none"), (a[0], rule[i])
    assert o["sample_id"] == ids[i]
    assert o["evaluation"]["is_correct"] == bool(cor[i]) and o["evaluation"]["score"] == cor[i]
    assert all(isinstance(v, str) for v in o["metadata"].values())
    assert o["evaluation_id"] == L[0]["evaluation_id"]
P = [json.loads(l) for l in open(pr3)]
assert [o["evaluation"]["is_correct"] for o in P] == [bool(x) for x in cor3]
assert sum(o["evaluation"]["is_correct"] for o in P) != sum(o["evaluation"]["is_correct"] for o in L)  # the modes differ
PY
if command -v mpirun > /dev/null; then
  mpirun -n 2 --oversubscribe "$T" run demo.json --output "$WORK/demo2.h5" --quiet > /dev/null || fail "the 2-rank run failed"
  "$T" export "$WORK/demo2.h5" --format eee -o "$WORK/demo2.jsonl" 2> /dev/null || fail "export of the 2-rank run failed"
  cmp -s "$WORK/demo.jsonl" "$WORK/demo2.jsonl" || fail "the 2-rank run exports other bytes"
fi
refused() { # CODE MESSAGE ARGS...: exit CODE naming MESSAGE
  local code=$1 msg=$2 rc=0; shift 2
  "$T" export "$@" > /dev/null 2> "$WORK/r.txt" || rc=$?
  [ "$rc" = "$code" ] || { cat "$WORK/r.txt"; fail "export $*: exit $rc, expected $code"; }
  grep -qF -- "$msg" "$WORK/r.txt" || { cat "$WORK/r.txt"; fail "export $*: no '$msg'"; }
}
refused 2 "--format is required" "$WORK/demo.h5"
refused 2 "'csv'" "$WORK/demo.h5" --format csv
refused 2 "no item table of benchmark 'vqa'" "$WORK/demo.h5" --format eee --benchmark vqa
refused 2 "has no mode 'nope'" "$WORK/demo.h5" --format eee --mode nope
refused 2 "the output" "$WORK/demo.h5" --format eee -o "$WORK/demo.h5"
"$T" run mtbench101-demo.json --output "$WORK/mtb.h5" --quiet > /dev/null || fail "the MT-Bench-101 demo failed"
refused 2 "turns of dialogues" "$WORK/mtb.h5" --format eee
echo "e2e export: ok"
