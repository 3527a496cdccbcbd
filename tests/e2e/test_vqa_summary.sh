#!/usr/bin/env bash
# The VQA summary follows the one missing-answer policy (docs/VQA.md, "Summary"; issue 27):
# 1. replay answers with gaps (a long model name, two seeds, a missing answer in seed 1; a second
#    model with an unterminated reasoning block and two missing answers; LAVE judgments with a
#    reply that holds no rating): every summary row shows n, answered, missing, unparsed and
#    engine_error; each metric divides by n (a missing or unparsed unit scores 0: before, it was
#    left out); the mean over seeds with its std (ddof 1; nan for one seed); a 95% CI of VQA
#    accuracy that holds the estimate; LAVE as a number with its rated count (n - rated: unrated) and the kinds of the unrated;
#    columns that never run together; /metrics/vqa/summary equals a re-computation from
#    /items/vqa; the same summary and tables on 1 and 2 ranks;
# 2. engine errors (an openai model through the test server, one item refused with 422): counted
#    as engine_error and scoring 0; a judge engine error (an openai LAVE judge, one item refused):
#    counted beside LAVE.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/vqa"
LONG=a-model-with-a-rather-long-name-for-columns

cat > "$WORK/items.jsonl" <<'EOF'
{"id": 1, "question": "What color is the car?", "answers": ["red", "red", "red", "dark red"], "answer_type": "other"}
{"id": 2, "question": "Is it raining?", "answers": ["yes", "yes", "no"], "answer_type": "yes/no"}
{"id": 3, "question": "What animal is it?", "answers": ["dog", "dog", "puppy"], "answer_type": "other"}
{"id": 4, "question": "Is the door open?", "answers": ["no", "no", "no"], "answer_type": "yes/no"}
EOF
{
  for s in 0 1; do
    echo "{\"id\": \"t:1\", \"model\": \"$LONG\", \"seed\": $s, \"response\": \"red\"}"
    echo "{\"id\": \"t:2\", \"model\": \"$LONG\", \"seed\": $s, \"response\": \"no\"}"
    [ $s = 0 ] && echo "{\"id\": \"t:3\", \"model\": \"$LONG\", \"seed\": $s, \"response\": \"dog\"}"
    echo "{\"id\": \"t:4\", \"model\": \"$LONG\", \"seed\": $s, \"response\": \"$([ $s = 0 ] && echo no || echo yes)\"}"
  done
  echo '{"id": "t:1", "model": "b", "seed": 0, "response": "<think>it is red, or"}'
  echo '{"id": "t:2", "model": "b", "seed": 0, "response": "yes"}'
} > "$WORK/answers.jsonl"
{
  echo "{\"id\": \"t:1\", \"model\": \"$LONG\", \"seed\": 0, \"response\": \"So rating=3\"}"
  echo "{\"id\": \"t:2\", \"model\": \"$LONG\", \"seed\": 0, \"response\": \"So rating=2\"}"
  echo "{\"id\": \"t:3\", \"model\": \"$LONG\", \"seed\": 0, \"response\": \"I cannot tell.\"}"
  echo "{\"id\": \"t:4\", \"model\": \"$LONG\", \"seed\": 0, \"response\": \"So rating=1\"}"
  echo '{"id": "t:2", "model": "b", "seed": 0, "response": "So rating=3"}'
} > "$WORK/judgments.jsonl"
cat > "$WORK/s.json" <<JOB
{"name": "s", "output": "$WORK/s.h5",
 "benchmarks": [{"benchmark": "vqa", "dataset": "t", "items": "$WORK/items.jsonl", "answers": "$WORK/answers.jsonl",
   "judgments": "$WORK/judgments.jsonl",
   "lave": {"demos": "$D/lave_demos_general.json", "demos_binary": "$D/lave_demos_binary.json", "num_shots": 2}}]}
JOB
for n in 1 2; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$WORK/s.json" --out "$WORK/s$n.h5" --quiet > "$WORK/s$n.txt" 2> "$WORK/s$n.err" ||
    { cat "$WORK/s$n.err"; fail "1: the run failed on $n rank(s)"; }
  sed -i "s#$WORK/s$n.h5#OUT#" "$WORK/s$n.txt"
done
cmp -s "$WORK/s1.txt" "$WORK/s2.txt" || { diff "$WORK/s1.txt" "$WORK/s2.txt"; fail "1: the summary differs on 2 ranks"; }
for obj in /items /metrics /audit; do
  h5diff "$WORK/s1.h5" "$WORK/s2.h5" "$obj" > /dev/null || fail "1: $obj differs on 2 ranks"
done
cat "$WORK/s1.txt"
"$PY" - "$WORK/s1.h5" "$WORK/s1.txt" "$LONG" <<'PY' || fail "1: the summary disagrees with the re-computation"
import math, re, statistics, sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
h5, txt, long = sys.argv[1:4]
t = tally_h5.read_table(h5, "/items/vqa")
s = tally_h5.read_table(h5, "/metrics/vqa/summary")
a = tally_h5.read_table(h5, "/metrics/vqa/accuracy")
nan0 = lambda x: 0.0 if math.isnan(x) else x
rows = {(s["model"][k], s["level"][k], s["group"][k]): k for k in range(len(s["model"]))}
want_counts = {long: dict(n=8, n_answered=7, n_missing=1, n_unparsed=0, n_engine_error=0, n_lave_unparsed=1,
                          n_lave_unjudged=3, n_lave_rated=3, n_seeds=2),
               "b": dict(n=4, n_answered=2, n_missing=2, n_unparsed=1, n_engine_error=0, n_lave_unparsed=0,
                         n_lave_unjudged=1, n_lave_rated=1, n_seeds=1)}
for m, want in want_counts.items():
    k = rows[(m, "all", "all")]
    got = {c: int(s[c][k]) for c in want}
    assert got == want, (m, got, want)
    seeds = sorted(set(t["seed"][i] for i in range(len(t["id"])) if t["model"][i] == m))
    for col in ("vqa_accuracy", "soft_vqa_accuracy", "exact_match"):
        per = [sum(nan0(t[col][i]) for i in range(len(t["id"])) if t["model"][i] == m and t["seed"][i] == sd) / 4 for sd in seeds]
        mean = sum(per) / len(per)
        assert abs(s[col][k] - mean) < 1e-12, (m, col, s[col][k], per)
        if len(per) > 1:
            assert abs(s[col + "_std"][k] - statistics.stdev(per)) < 1e-12, (m, col)
        else:
            assert math.isnan(s[col + "_std"][k]), (m, col)
        # the per-seed table divides by n too
        for sd, v in zip(seeds, per):
            j = [j for j in range(len(a["model"])) if a["model"][j] == m and a["seed"][j] == sd and a["level"][j] == "all"][0]
            assert abs(a[col][j] - v) < 1e-12 and a["n_items"][j] == 4, (m, sd, col, a[col][j], v)
    lo, hi = s["vqa_accuracy_ci_lo"][k], s["vqa_accuracy_ci_hi"][k]
    assert lo <= s["vqa_accuracy"][k] <= hi, (m, lo, hi)
    # LAVE over n, seeds without any rating left out
    lv = [sum(nan0(t["lave_score"][i]) for i in range(len(t["id"])) if t["model"][i] == m and t["seed"][i] == sd) / 4
          for sd in seeds if any(t["model"][i] == m and t["seed"][i] == sd and t["lave_rating"][i] > 0 for i in range(len(t["id"])))]
    assert abs(s["lave_score"][k] - sum(lv) / len(lv)) < 1e-12, (m, s["lave_score"][k], lv)
# b: the unterminated answer and the missing ones score 0: 'yes' (4/9 against yes, yes, no) of 4 asked
# (before: of the 1 scored, 0.444)
kb = rows[("b", "all", "all")]
assert abs(s["vqa_accuracy"][kb] - 4 / 9 / 4) < 1e-12, s["vqa_accuracy"][kb]
# the printed table ("by all", the report's table as text): every row splits into the header's columns;
# the long name does not run into the next; the rule under the header as wide as the rows
lines = open(txt).read().split("\n")
h = [i for i, l in enumerate(lines) if l.startswith("model ")][0]
head = re.split(r"\s{2,}", lines[h].strip())
C = ["model", "prompt_variant", "group", "n_seeds", "n", "n_answered", "n_missing", "n_unparsed", "n_engine_error",
     "n_judge_engine_error", "n_lave_unparsed", "n_lave_unjudged", "n_lave_rated", "vqa_accuracy", "vqa_accuracy_std",
     "soft_vqa_accuracy", "soft_vqa_accuracy_std", "exact_match", "exact_match_std", "lave_score", "lave_score_std"]
assert head == C, head
assert set(lines[h + 1]) == {"-", " "}, lines[h + 1]
body = []
for l in lines[h + 2:]:
    if not l.strip() or l.startswith("every mean"):
        break
    body.append(l)
    assert len(re.split(r"\s{2,}", l.strip())) == len(head), (l, head)
ends = {len(l.rstrip()) for l in [lines[h], lines[h + 1]] + body}
assert len(ends) == 1, "rows of unequal width: %s" % ends
col = lambda f, name: f[C.index(name)]
row = [l for l in body if l.startswith(long + " ")][0]
f = re.split(r"\s{2,}", row.strip())
assert f[4:9] == ["8", "7", "1", "0", "0"], f
assert re.fullmatch(r"0\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", col(f, "vqa_accuracy")), f
assert re.fullmatch(r"0\.\d{3}", col(f, "vqa_accuracy_std")), f
# LAVE: a number (seed 1 has no judgment: left out, so no std), 5 unrated (n - n_lave_rated)
assert (col(f, "lave_score"), col(f, "lave_score_std")) == ("0.375", "nan"), f
assert int(col(f, "n")) - int(col(f, "n_lave_rated")) == 5, f
rb = re.split(r"\s{2,}", [l for l in body if l.startswith("b ")][0].strip())
assert rb[4:9] == ["4", "2", "2", "1", "0"], rb
assert col(rb, "vqa_accuracy").startswith("0.111 [") and col(rb, "vqa_accuracy_std") == "nan", rb
assert (col(rb, "lave_score"), col(rb, "lave_score_std")) == ("0.250", "nan"), rb  # one rating 3 (score 1) over n = 4
assert int(col(rb, "n")) - int(col(rb, "n_lave_rated")) == 3, rb
t2 = open(txt).read()
assert "  b: 3 unrated = 2 missing + 0 engine_error + 0 judge engine errors + 0 no rating + 1 not judged" in t2, t2
assert "  %s: 5 unrated = 1 missing + 0 engine_error + 0 judge engine errors + 1 no rating + 3 not judged" % long in t2
print("summary: counts, means over n, std, CI, LAVE and alignment checked")
PY
echo "1. replay with gaps: counts, means over n, CI, LAVE; the same on 2 ranks"

# 2. engine errors: the model's (item t:2 refused) and the judge's (item t:3 refused)
start_testserver --fail-match "t:2/" --fail-status 422
MPORT=$TS_PORT
cat > "$WORK/e.json" <<JOB
{"name": "e", "output": "$WORK/e.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$MPORT/v1", "model": "m", "key_header": true,
                       "health": {"wait_s": 5}}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "t", "items": "$WORK/items.jsonl", "models": ["m"], "prompt_suffix": ""}]}
JOB
"$TALLY_BIN" run "$WORK/e.json" --quiet > "$WORK/e.txt" 2> "$WORK/e.err" || { cat "$WORK/e.err"; fail "2: the run failed"; }
# (no LAVE: model variant group seeds n answered missing unparsed engine_error vqa_accuracy [CI] ...)
grep -qE "^m +[^ ]+ +all +1 +4 +3 +0 +0 +1 +[0-9.]+ \[" "$WORK/e.txt" || { cat "$WORK/e.txt" "$WORK/e.err"; fail "2: the model's engine error is not counted in the summary"; }
start_testserver --fail-match "t:3/" --fail-status 422
JPORT=$TS_PORT
cat > "$WORK/j.json" <<JOB
{"name": "j", "output": "$WORK/j.h5",
 "engines": {"judge": {"type": "openai", "url": "http://127.0.0.1:$JPORT/v1", "model": "judge", "key_header": true,
                       "health": {"wait_s": 5}}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "t", "items": "$WORK/items.jsonl", "answers": "$WORK/answers.jsonl",
   "models": ["$LONG"], "seeds": [0],
   "lave": {"demos": "$D/lave_demos_general.json", "demos_binary": "$D/lave_demos_binary.json", "num_shots": 2}}]}
JOB
"$TALLY_BIN" run "$WORK/j.json" --quiet > "$WORK/j.txt" 2> "$WORK/j.err" || { cat "$WORK/j.err"; fail "2: the judged run failed"; }
grep -qF "  $LONG: 4 unrated = 0 missing + 0 engine_error + 1 judge engine errors + 3 no rating + 0 not judged" "$WORK/j.txt" ||
  { cat "$WORK/j.txt" "$WORK/j.err"; fail "2: the judge's engine error is not counted beside LAVE"; }
# n 4, answered 4, judge engine errors 1, no rating 3, rated 0 (4 unrated); lave_score and its std undefined: nan
grep -qE "^$LONG +[^ ]+ +all +1 +4 +4 +0 +0 +0 +1 +3 +0 +0 .* nan +nan$" "$WORK/j.txt" || { cat "$WORK/j.txt"; fail "2: LAVE with no rating: nan and the unrated count"; }
"$PY" - "$WORK/e.h5" "$WORK/j.h5" <<'PY' || fail "2: the tables"
import math, sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
s = tally_h5.read_table(sys.argv[1], "/metrics/vqa/summary")
k = list(s["level"]).index("all")
assert (s["n"][k], s["n_answered"][k], s["n_engine_error"][k]) == (4, 3, 1), s
t = tally_h5.read_table(sys.argv[1], "/items/vqa")
assert abs(s["vqa_accuracy"][k] - sum(0 if math.isnan(x) else x for x in t["vqa_accuracy"]) / 4) < 1e-12
s = tally_h5.read_table(sys.argv[2], "/metrics/vqa/summary")
k = list(s["level"]).index("all")
assert (s["n_judge_engine_error"][k], s["n_lave_unparsed"][k], s["n_lave_rated"][k]) == (1, 3, 0), s
assert math.isnan(s["lave_score"][k])
print("engine errors counted")
PY
echo "2. engine errors of the model and of the judge: counted"
echo "ok"
