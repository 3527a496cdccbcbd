#!/usr/bin/env bash
# A benchmark brings its hooks from its own folder: the test-only module test_judged
# (src/core/bench/test_judged, TALLY_TEST_MODULES=1) declares an answer format, a named parser
# and compare defaults, and no file outside its folder and the registry line names them.
#  1. answer format "test_judged-qa": the same answers as {"question_id", "output",
#     "instruction"} lines score exactly as tally's own lines; a bad one is a bad line naming
#     file:line (exit 3 under --strict-input).
#  2. parser "test_judged-rating": `tally parse` lists it in --help and runs it.
#  3. compare defaults: `tally compare` on the run finds /items/test_judged, takes the metric
#     "rating" and compares dialogue scores (both policies) with no --metric given.
. "$(dirname "$0")/common.sh"
need_python
export TALLY_TEST_MODULES=1
"$PY" - "$WORK" <<'PY'
import json, random, sys
w = sys.argv[1]
rnd = random.Random(5)
items = [{"id": "q%02d" % i, "question": "question %d" % i, "turns": 1 + i % 2} for i in range(12)]
with open(w + "/items.jsonl", "w") as f:
    for it in items: f.write(json.dumps(it) + "\n")
with open(w + "/own.jsonl", "w") as a, open(w + "/qa.jsonl", "w") as q, open(w + "/judgments.jsonl", "w") as j:
    for m in ("model-a", "model-b"):
        for it in items:
            for t in range(it["turns"]):
                resp = None if rnd.random() < 0.1 else "answer %s/%s/%d" % (m, it["id"], t)
                a.write(json.dumps({"id": it["id"], "model": m, "turn": t, "response": resp}) + "\n")
                q.write(json.dumps({"question_id": it["id"], "model": m, "turn": t, "output": resp,
                                    "instruction": it["question"]}) + "\n")
                if resp is not None:
                    j.write(json.dumps({"id": it["id"], "model": m, "turn": t,
                                        "response": "Rating: [[%d]]" % rnd.randint(1, 10)}) + "\n")
PY
job() { # ANSWERS OUT
  cat <<JOB
{"name": "hooks", "output": "$2",
 "benchmarks": [{"benchmark": "test_judged", "items": "$WORK/items.jsonl",
                 "answers": "$1", "judgments": "$WORK/judgments.jsonl"}]}
JOB
}
job "$WORK/own.jsonl" "$WORK/own.h5" > "$WORK/own.json"
job "$WORK/qa.jsonl" "$WORK/qa.h5" > "$WORK/qa.json"
"$TALLY_BIN" run "$WORK/own.json" --quiet --strict-input > /dev/null || fail "the run on tally's own lines failed"
"$TALLY_BIN" run "$WORK/qa.json" --quiet --strict-input > /dev/null || fail "the run on test_judged-qa lines failed"
"$PY" - "$WORK/own.h5" "$WORK/qa.h5" <<'PY' || fail "the test_judged-qa lines did not score as tally's own"
import sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
a = tally_h5.read_table(sys.argv[1], "/items/test_judged")
b = tally_h5.read_table(sys.argv[2], "/items/test_judged")
cols = ["id", "turn", "model", "seed", "answer", "judgment", "status", "rule", "rating"]
assert len(a) == 36 and (a["status"] == "ok").sum() > 20, (len(a), (a["status"] == "ok").sum())
assert a[cols].equals(b[cols]), "item tables differ"
print("test_judged-qa: %d units, as tally's own lines" % len(b))
PY
# a bad line of the format: file:line, exit 3 under --strict-input
printf '{"question_id": 5, "model": "model-a", "output": "x"}\n' >> "$WORK/qa.jsonl"
rc=0; "$TALLY_BIN" run "$WORK/qa.json" --quiet --strict-input --out "$WORK/bad.h5" > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 3 ] && grep -q "qa.jsonl:37: .*a test_judged-qa line needs 'question_id', a non-empty string" "$WORK/e.txt" ||
  { cat "$WORK/e.txt"; fail "a bad test_judged-qa line was not reported (exit $rc)"; }

# 2. the named parser
"$TALLY_BIN" parse --help | grep -q "^      | test_judged-rating (test ratings)$" || fail "parse --help does not list test_judged-rating"
printf '{"response": "ok. Rating: [[7]]"}\n{"response": null}\n{"response": "Rating: [[12]]"}\n{"response": "none"}\n' |
  "$TALLY_BIN" parse --parser test_judged-rating > "$WORK/p.txt" || fail "parse --parser test_judged-rating failed"
cat > "$WORK/p.want" <<'OUT'
{"answer":"7","rating":7,"status":"ok","rule":"last_rating"}
{"answer":null,"rating":null,"status":"missing","rule":"no_judgment"}
{"answer":null,"rating":null,"status":"out_of_range","rule":"rating_range"}
{"answer":null,"rating":null,"status":"no_answer","rule":"no_rating"}
OUT
cmp -s "$WORK/p.txt" "$WORK/p.want" || { diff "$WORK/p.want" "$WORK/p.txt"; fail "test_judged-rating output"; }
rc=0; echo '{"response": "x"}' | TALLY_TEST_MODULES= "$TALLY_BIN" parse --parser test_judged-rating > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "test_judged-rating known without TALLY_TEST_MODULES (exit $rc)"

# 3. compare defaults: no --benchmark, no --metric
"$TALLY_BIN" compare "$WORK/own.h5" --models model-a,model-b --resamples 200 > "$WORK/c.txt" 2> "$WORK/c.err" ||
  { cat "$WORK/c.err"; fail "compare with the module's defaults failed"; }
grep -q "^paired comparison on /items/test_judged of .*dialogue scores" "$WORK/c.txt" ||
  { cat "$WORK/c.txt"; fail "compare did not take test_judged's defaults"; }
[ "$(grep -c "^policy " "$WORK/c.txt")" = 2 ] || { cat "$WORK/c.txt"; fail "compare did not score dialogues (two policies)"; }
rc=0; TALLY_TEST_MODULES= "$TALLY_BIN" compare "$WORK/own.h5" --models model-a,model-b > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 1 ] && grep -q "no known benchmark table" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "compare knew test_judged without TALLY_TEST_MODULES (exit $rc)"; }
echo "e2e module hooks: ok"
