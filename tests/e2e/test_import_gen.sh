#!/usr/bin/env bash
# The generative exact-match module on an lm-eval generate_until samples file written for the
# project (tests/fixtures/import/lm-eval/samples_gen_fixture_*.jsonl: 5 documents; its results
# file beside it names the model and the task's exact_match options, gsm8k-style
# regexes_to_ignore). One `tally run` re-scores it with both modes and audits lm-eval's verdicts:
#  A. with the task's options (the job's "regexes_to_ignore"): exact reproduces lm-eval's 0.400
#     item by item (0 flips), strict gives 0.600: doc 2 answers \boxed{\dfrac{1}{2}} to
#     \frac{1}{2} (exact 0, strict 1: the one mismatch), doc 3 answers 0 to 90 (both 0, no
#     substring match), doc 4 gives no final answer (strict: no_answer, counted);
#  B. without the options, exact is lm-eval's default exact_match and the audit shows the two
#     items lm-eval counted that the defaults do not (0 up, 2 down): the audit can disagree;
#  the reader's items: the target is the answer (doc 1's own answer "x = 2" kept as doc_answer),
#  the question is the doc's problem, else the prompt (doc 4);
#  C. bad keys (a typo, an unknown mode, a bad pattern, a non-boolean) are named, nothing runs.
. "$(dirname "$0")/common.sh"
T="$TALLY_BIN"
W="$WORK"
F=$(ls "$TALLY_SRC"/tests/fixtures/import/lm-eval/samples_gen_fixture_*.jsonl)
job() { # job NAME EXTRA_KEYS
  cat > "$W/$1.json" <<JOB
{"output": "$W/$1.h5", "benchmarks": [{"benchmark": "gen", $2
  "answers": {"format": "lm-eval", "path": "$F"}, "items": {"format": "lm-eval", "path": "$F"}}]}
JOB
}
# ---- the items the reader makes: the target as the answer, a question ----
"$T" import "$F" --items "$W/items.jsonl" > /dev/null 2> "$W/imp.err" || { cat "$W/imp.err"; fail "import"; }
grep -qF '"doc_answer":"x = 2","answer":"2"' "$W/items.jsonl" ||
  { cat "$W/items.jsonl"; fail "doc 1: want the target 2 as the answer and the doc's own kept as doc_answer"; }
if "$PY" -c 1 2> /dev/null; then
  "$PY" - "$W/items.jsonl" <<'PY' || fail "the items"
import json, sys
it = {d["id"]: d for d in map(json.loads, open(sys.argv[1]))}
assert it["1"]["answer"] == "2" and it["1"]["doc_answer"] == "x = 2", it["1"]
assert it["0"]["question"] == "What is 2+3?" and "doc_answer" not in it["0"], it["0"]
assert it["4"]["question"] == "Problem: What is 3+4?\n\nSolution:", it["4"]
PY
fi
# ---- A. the task's options ----
job a '"regexes_to_ignore": ["(?s).*answer is ", "\\.$"],'
"$T" run "$W/a.json" > "$W/a.out" 2> "$W/a.err" || { cat "$W/a.err"; fail "A: the run failed"; }
grep -q "5 lines, 5 matched, 0 rejected" "$W/a.err" || { cat "$W/a.err"; fail "A: not every answer matched"; }
grep -Eq '^toy-gen +all +1 +5 +5 +0 +1 +0 +0\.600 \[[^]]*\] +0\.400 ' "$W/a.out" ||
  { cat "$W/a.out"; fail "A: want strict 0.600 and exact 0.400 over 5 answered units, 1 unparsed"; }
grep -Eq '^all +exact +5 +0\.400 1 \(0/1\)$' "$W/a.out" || { cat "$W/a.out"; fail "A: want 1 unit exact and strict disagree on"; }
grep -q "^strict parse statuses: ok=4 no_answer=1$" "$W/a.out" || { cat "$W/a.out"; fail "A: strict statuses"; }
want="audit gen: model 'toy-gen': lm-eval exact_match 0.400, tally exact 0.400 over 5 units: 0 flips up, 0 down; agree 1.000"
grep -qF "$want" "$W/a.out" || { cat "$W/a.out"; fail "A: no audit line '$want'"; }
# the per-item results as Every Eval Ever lines: strict's rule as the extraction method
"$T" export "$W/a.h5" --format eee > "$W/a.eee" 2> "$W/a.eee.err" || { cat "$W/a.eee.err"; fail "A: export"; }
[ "$(wc -l < "$W/a.eee")" = 5 ] || fail "A: export: want 5 lines"
grep -q '"sample_id":"2".*"extraction_method":"tally/strict/boxed".*"is_correct":true' "$W/a.eee" ||
  { cat "$W/a.eee"; fail "A: export: doc 2 under strict"; }
# ---- B. lm-eval's defaults ----
job b ''
"$T" run "$W/b.json" > "$W/b.out" 2> "$W/b.err" || { cat "$W/b.err"; fail "B: the run failed"; }
want="audit gen: model 'toy-gen': lm-eval exact_match 0.400, tally exact 0.000 over 5 units: 0 flips up, 2 down"
grep -qF "$want" "$W/b.out" || { cat "$W/b.out"; fail "B: no audit line '$want'"; }
# ---- C. a job's typo is an error naming the key, never an empty result ----
job c '"regexes_to_ignore": ["(", 3], "ignore_case": "yes", "modes": ["exact", "fuzzy"], "typo_key": 1,'
rc=0
"$T" run "$W/c.json" > "$W/c.out" 2> "$W/c.err" || rc=$?
[ "$rc" = 2 ] || { cat "$W/c.err"; fail "C: want exit 2, got $rc"; }
for m in "unknown key 'typo_key'" "unknown mode fuzzy (want strict or exact)" "ignore_case: must be true or false" \
         "regexes_to_ignore: element 0 must be a regular expression (Python re syntax): " \
         "regexes_to_ignore: element 1 must be a regular expression"; do
  grep -qF "$m" "$W/c.err" || { cat "$W/c.err"; fail "C: no '$m'"; }
done
[ ! -e "$W/c.h5" ] || fail "C: an output was written"
# ---- the tables, item by item (when h5py is there) ----
if "$PY" -c "import h5py" 2> /dev/null; then
  "$PY" - "$W/a.h5" <<'PY' || fail "A: the HDF5 tables"
import h5py, sys
f = h5py.File(sys.argv[1], "r")
def col(t, c):
    return [x.decode() if isinstance(x, bytes) else x for x in f[t][c][()]]
it = "/items/gen"
assert col(it, "id") == ["0", "1", "2", "3", "4"], col(it, "id")
assert col(it, "rule_strict") == ["answer_is", "answer_is", "boxed", "answer_is", "none"], col(it, "rule_strict")
assert col(it, "status_strict") == ["ok", "ok", "ok", "ok", "no_answer"], col(it, "status_strict")
assert col(it, "answer_strict") == ["5.", "2", "\\dfrac{1}{2}", "0.", ""], col(it, "answer_strict")
assert list(col(it, "correct_strict")) == [1, 1, 1, 0, 0], col(it, "correct_strict")
assert list(col(it, "correct_exact")) == [1, 1, 0, 0, 0], col(it, "correct_exact")
h = "/audit/harness/gen"
assert col(h, "tally_mode") == ["exact"] and col(h, "metric") == ["exact_match"], (col(h, "tally_mode"), col(h, "metric"))
assert list(col(h, "n")) == [5] and list(col(h, "flips_up")) == [0] and list(col(h, "flips_down")) == [0]
assert abs(col(h, "harness_accuracy")[0] - 0.4) < 1e-12 and abs(col(h, "tally_accuracy")[0] - 0.4) < 1e-12
m = "/metrics/gen/strict"
rows = [i for i, t in enumerate(col(m, "task")) if t == "all"]
assert [col(m, "n_no_answer")[i] for i in rows] == [1], col(m, "n_no_answer")
PY
fi
echo "gen: the fixture re-scored and audited (exact = lm-eval's 0.400, strict 0.600)"
