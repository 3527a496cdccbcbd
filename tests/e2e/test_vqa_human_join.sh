#!/usr/bin/env bash
# VQA human scores are a counted join (docs/VQA.md, "Human scores"; issue 27):
# 1. a "human" file with no row for the run's models (the demo's rows renamed to other models):
#    exit 2 at load (the module's check_cfgs, before any engine is asked or a journal started),
#    the message names the file and the models of both sides; no output file, no journal;
# 2. the same with the entry's "models" listed: refused at load (exit 2, "nothing was run");
# 3. a human file whose rows all name items the items do not have (another dataset name):
#    refused at load, an example id of each side shown;
# 4. a partial match (20 rows of one model, 2 rows for unknown items, 1 of a model not in the
#    run): "vqa: human scores FILE: 23 rows, 20 of 60 units matched; ..." printed once (1 and 2
#    ranks), /metrics/vqa/human_join holds the counts, the summary shows them, and the 2 rows
#    for unknown items give one message, not one per row;
# 5. a "release" file whose rows' human scores are of another model than the answers: an error.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/vqa"

job() { # NAME HUMAN [EXTRA]: a replay job over the demo's items and answers with this human file
  cat > "$WORK/$1.json" <<JOB
{"name": "$1", "output": "$WORK/$1.h5",
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$D/items.jsonl", "answers": "$D/answers.jsonl",
                 "human": "$2"${3:-}}]}
JOB
}

# 1. no row for the run's models
sed 's/demo-vlm-a/other-x/; s/demo-vlm-b/other-y/' "$D/human.jsonl" > "$WORK/h_other.jsonl"
job other "$WORK/h_other.jsonl"
rc=0
"$TALLY_BIN" run "$WORK/other.json" --quiet > "$WORK/other.out" 2> "$WORK/other.err" || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/other.err"; fail "1: a human file matching no unit: exit $rc, want 2"; }
[ ! -e "$WORK/other.h5.journal" ] || fail "1: a journal was started"
grep -qF "no row of $WORK/h_other.jsonl matches a unit of this run: its models are [other-x, other-y], the run's are [demo-vlm-a, demo-vlm-b]" "$WORK/other.err" ||
  { cat "$WORK/other.err"; fail "1: the message does not name the file and both sides' models"; }
[ -e "$WORK/other.h5" ] && fail "1: an output was written"
grep -q "^vqa:" "$WORK/other.out" && fail "1: a summary was printed"
echo "1. no row for the run's models: exit $rc, file and models named"

# 2. the entry lists its models: refused at load
job listed "$WORK/h_other.jsonl" ', "models": ["demo-vlm-a"]'
rc=0
"$TALLY_BIN" run "$WORK/listed.json" --quiet > /dev/null 2> "$WORK/listed.err" || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/listed.err"; fail "2: exit $rc, want 2 (refused at load)"; }
grep -qF "no row of $WORK/h_other.jsonl matches a unit of this run: its models are [other-x, other-y], the run's are [demo-vlm-a]" "$WORK/listed.err" ||
  { cat "$WORK/listed.err"; fail "2: message"; }
[ -e "$WORK/listed.h5.journal" ] && fail "2: a journal was started"
echo "2. with \"models\": refused at load (exit 2)"

# 3. no row for an item of the run (the rows' dataset is another)
sed 's/"dataset": "demo"/"dataset": "vqav2"/' "$D/human.jsonl" > "$WORK/h_items.jsonl"
job items "$WORK/h_items.jsonl"
rc=0
"$TALLY_BIN" run "$WORK/items.json" --quiet > /dev/null 2> "$WORK/items.err" || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/items.err"; fail "3: exit $rc, want 2"; }
grep -qF "no row of $WORK/h_items.jsonl matches an item of this run: its 60 rows name items such as 'vqav2:101', the run's items are 'demo:101', 'demo:102'" "$WORK/items.err" ||
  { cat "$WORK/items.err"; fail "3: message"; }
[ "$(grep -c "which the items do not have" "$WORK/items.err")" = 1 ] || { cat "$WORK/items.err"; fail "3: the 60 unknown-item rows are not reported once"; }
echo "3. no row for an item of the run: refused at load, one message for 60 rows"

# 4. a partial match, on 1 and 2 ranks
grep demo-vlm-a "$D/human.jsonl" | head -20 > "$WORK/h_part.jsonl"
printf '%s\n' '{"dataset": "demo", "qid": 999, "model": "demo-vlm-a", "votes": [1,1,1,1,1]}' \
  '{"dataset": "demo", "qid": 998, "model": "demo-vlm-a", "votes": [1,1,1,1,1]}' \
  '{"dataset": "demo", "qid": 101, "model": "demo-vlm-z", "votes": [1,1,1,1,1]}' >> "$WORK/h_part.jsonl"
job part "$WORK/h_part.jsonl"
for n in 1 2; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$WORK/part.json" --out "$WORK/part$n.h5" --quiet > "$WORK/part$n.out" 2> "$WORK/part$n.err" ||
    { cat "$WORK/part$n.err"; fail "4: the partial join failed on $n rank(s)"; }
  want="vqa: human scores $WORK/h_part.jsonl: 23 rows, 20 of 60 units matched; rows not joined: 2 (2 for unknown items); 1 row of models the run does not have"
  [ "$(grep -cF "$want" "$WORK/part$n.err")" = 1 ] || { cat "$WORK/part$n.err"; fail "4: the count line is not printed once on $n rank(s)"; }
  [ "$(grep -c "which the items do not have" "$WORK/part$n.err")" = 1 ] || { cat "$WORK/part$n.err"; fail "4: unknown-item rows not collapsed"; }
  grep -qF "human scores $WORK/h_part.jsonl: 20 of 60 units matched" "$WORK/part$n.out" || { cat "$WORK/part$n.out"; fail "4: the summary does not show the match"; }
done
sed -i "s#$WORK/part[12].h5#OUT#" "$WORK/part1.out" "$WORK/part2.out"
cmp -s "$WORK/part1.out" "$WORK/part2.out" || { diff "$WORK/part1.out" "$WORK/part2.out"; fail "4: the summary differs on 2 ranks"; }
h5diff "$WORK/part1.h5" "$WORK/part2.h5" /metrics > /dev/null || fail "4: /metrics differs on 2 ranks"
"$PY" - "$WORK/part1.h5" "$WORK/h_part.jsonl" <<'PY' || fail "4: /metrics/vqa/human_join"
import sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
j = tally_h5.read_table(sys.argv[1], "/metrics/vqa/human_join")
assert len(j["file"]) == 1 and j["file"][0] == sys.argv[2], j
got = {c: int(j[c][0]) for c in ("n_rows", "n_rows_joined", "n_rows_unknown_item", "n_rows_duplicate", "n_rows_bad",
                                  "n_rows_other_model", "n_units", "n_units_matched")}
want = dict(n_rows=23, n_rows_joined=21, n_rows_unknown_item=2, n_rows_duplicate=0, n_rows_bad=0, n_rows_other_model=1,
            n_units=60, n_units_matched=20)
assert got == want, (got, want)
assert j["models"][0] == "demo-vlm-a,demo-vlm-z", j["models"][0]
t = tally_h5.read_table(sys.argv[1], "/items/vqa")
assert sum(1 for h in t["human"] if h == h) == 20
print("human_join: 20 of 60 units, every row accounted for")
PY
echo "4. a partial match: counted once on 1 and 2 ranks, in the output and the summary"

# 5. a release file (items and human scores in the LAVE release's columns) whose rows are of
#    another model than the answers scored: the same error, naming the release file
"$PY" - "$D/items.jsonl" "$D/human.jsonl" "$WORK/rel.jsonl" <<'PY'
import json, sys
items = {json.loads(l)["question_id"]: json.loads(l) for l in open(sys.argv[1])}
with open(sys.argv[3], "w") as out:
    for h in map(json.loads, open(sys.argv[2])):
        if h["model"] != "demo-vlm-a":
            continue
        it = items[h["qid"]]
        out.write(json.dumps({"dataset": "demo", "model": "rel-model", "qid": h["qid"], "question": it["question"],
                              "references": it["answers"], "prediction": "x", "human_score": 1.0}) + "\n")
PY
cat > "$WORK/rel.json" <<JOB
{"name": "rel", "output": "$WORK/rel.h5",
 "benchmarks": [{"benchmark": "vqa", "release": "$WORK/rel.jsonl", "answers": "$D/answers.jsonl"}]}
JOB
rc=0
"$TALLY_BIN" run "$WORK/rel.json" --quiet > /dev/null 2> "$WORK/rel.err" || rc=$?
[ "$rc" != 0 ] || { cat "$WORK/rel.err"; fail "5: a release file matching no unit: exit 0"; }
grep -qF "no row of $WORK/rel.jsonl matches a unit of this run: its models are [rel-model], the run's are [demo-vlm-a, demo-vlm-b]" "$WORK/rel.err" ||
  { cat "$WORK/rel.err"; fail "5: message"; }
echo "5. a release file of another model: exit $rc, named"
echo "ok"
