#!/usr/bin/env bash
# `tally score vqa` (docs/VQA.md): the drop-in for the official VQA evaluator.
# 1. The four smallval prediction sets of ../shared/data/vqa/vqa_eval_smallval_results.json
#    (results files written here from the annotations): overall, perAnswerType and the first
#    ten perQuestion values equal the official script's.
# 2. Every set (and a mixed one of ours) under each --version equals, key order included, a
#    Python model of the three versions (score_vqa_check.py); --items (the JSONL form of the
#    same questions) gives the same output; --output writes the same bytes.
# 3. Bad input: a result for an unknown question, a duplicate, a question with no result, an
#    annotation with 0 answers (reported with file:line, exit 0; exit 3 with --strict-input);
#    a typo'd --version (exit 2, naming the valid ones); --output equal to an input (refused,
#    exit 2, the input untouched); usage errors.
. "$(dirname "$0")/common.sh"
D="$TALLY_SHARED_DATA/vqa"
[ -f "$D/vqav2_smallval_annotations.json" ] || { echo "skipped: $D is absent (set TALLY_SHARED_DATA)"; exit 77; }
CHECK="$TALLY_SRC/tests/e2e/score_vqa_check.py"
Q="$D/vqav2_smallval_questions.json" A="$D/vqav2_smallval_annotations.json"
"$PY" "$CHECK" make "$D" "$WORK"

score() { # OUT ARGS...: runs tally score vqa ARGS > OUT, fails on a non-zero exit
  local out=$1
  shift
  "$TALLY_BIN" score vqa "$@" > "$out" 2> "$out.err" || { cat "$out.err"; fail "score vqa $*: exit $?"; }
}

# 1. the reference numbers
for pair in first:pred_first_annotator_answer majority:pred_majority_raw_answer_first_max \
            yes:pred_constant_yes upper:pred_first_answer_uppercased_with_period; do
  set_=${pair%%:*} ref=${pair#*:}
  score "$WORK/$set_.out" --questions "$Q" --annotations "$A" --results "$WORK/$set_.json"
  "$PY" "$CHECK" reference "$WORK/$set_.out" "$D/vqa_eval_smallval_results.json" "$ref"
  grep -q "589 questions, 589 scored, 0 without a result (version official)" "$WORK/$set_.out.err" \
    || { cat "$WORK/$set_.out.err"; fail "$set_: summary line"; }
  grep -q "bad input" "$WORK/$set_.out.err" && fail "$set_: input problems reported on clean files"
done
echo "reference: the 4 smallval sets match"

# 2. the model, the three versions, --items, --output
for set_ in first majority yes upper mixed; do
  for v in official 2017 normalized; do
    score "$WORK/$set_.$v.out" --annotations "$A" --results "$WORK/$set_.json" --version "$v"
    "$PY" "$CHECK" model "$A" "$WORK/$set_.json" "$v" "$WORK/$set_.$v.out"
    score "$WORK/i.out" --items "$WORK/items.jsonl" --results "$WORK/$set_.json" --version "$v"
    cmp -s "$WORK/$set_.$v.out" "$WORK/i.out" || fail "$set_ $v: --items differs from --annotations"
  done
done
score "$WORK/o.stdout" --annotations "$A" --results "$WORK/mixed.json" --output "$WORK/o.json"
[ -s "$WORK/o.stdout" ] && fail "--output: standard output is not empty"
cmp -s "$WORK/o.json" "$WORK/mixed.official.out" || fail "--output differs from standard output"
cmp -s "$WORK/upper.official.out" "$WORK/upper.normalized.out" && fail "official and normalized agree on the upper-cased set"
echo "model: 5 sets x 3 versions agree; --items and --output give the same bytes"

# 3. bad input
cat > "$WORK/ann.json" <<'EOF'
{"annotations": [
 {"question_id": 1, "question_type": "what", "answer_type": "other",
  "answers": [{"answer": "cat"}, {"answer": "cat"}, {"answer": "dog"}]},
 {"question_id": 2, "question_type": "is", "answer_type": "yes/no", "answers": []},
 {"question_id": 3, "question_type": "is", "answer_type": "yes/no",
  "answers": [{"answer": "yes"}, {"answer": "yes"}, {"answer": "yes"}, {"answer": "no"}]},
 {"question_id": 4, "question_type": "is", "answer_type": "yes/no",
  "answers": [{"answer": "no"}, {"answer": "no"}, {"answer": "no"}, {"answer": "no"}]}
]}
EOF
cat > "$WORK/res.json" <<'EOF'
[{"question_id": 1, "answer": "Cat."},
 {"question_id": 99, "answer": "x"},
 {"question_id": 3, "answer": "Yes"},
 {"question_id": 3, "answer": "no"}]
EOF
rc=0
"$TALLY_BIN" score vqa --annotations "$WORK/ann.json" --results "$WORK/res.json" > "$WORK/bad.out" 2> "$WORK/bad.err" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/bad.err"; fail "bad input: exit $rc, want 0"; }
for want in "ann.json:4: question 2: no answers" \
            "res.json:2: a result for question 99, which the questions do not have" \
            "res.json:4: a second result for question 3 (first at line 3; the first is kept)" \
            "res.json: no result for 1 of 3 questions (4)" \
            "3 questions, 2 scored, 1 without a result" \
            "note: 2 scored questions have a number of reference answers other than 10" \
            "4 input problems"; do
  grep -qF "$want" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "bad input: no '$want' on stderr"; }
done
# 1: Cat. -> cat, k = 2 of 3: 4/9; 3: Yes -> yes, k = 3 of 4: 3/4; 4 left out
want='{"overall":59.72,"perQuestionType":{"what":44.44,"is":75.0},"perAnswerType":{"other":44.44,"yes/no":75.0},"perQuestion":{"1":44.44,"3":75.0}}'
[ "$(cat "$WORK/bad.out")" = "$want" ] || fail "bad input: output $(cat "$WORK/bad.out")"
rc=0
"$TALLY_BIN" score vqa --annotations "$WORK/ann.json" --results "$WORK/res.json" --strict-input > "$WORK/s.out" 2> "$WORK/s.err" || rc=$?
[ "$rc" = 3 ] || { cat "$WORK/s.err"; fail "--strict-input: exit $rc, want 3"; }
grep -qF "ann.json:4: question 2: no answers (strict input)" "$WORK/s.err" || { cat "$WORK/s.err"; fail "--strict-input: message"; }
[ -s "$WORK/s.out" ] && fail "--strict-input: output written"
# with clean annotations, the unknown id alone stops a strict run
grep -v '"question_id": 2' "$WORK/ann.json" > "$WORK/ann2.json"
rc=0
"$TALLY_BIN" score vqa --annotations "$WORK/ann2.json" --results "$WORK/res.json" --strict-input > /dev/null 2> "$WORK/s2.err" || rc=$?
[ "$rc" = 3 ] || { cat "$WORK/s2.err"; fail "--strict-input (unknown id): exit $rc, want 3"; }
grep -qF "res.json:2: a result for question 99" "$WORK/s2.err" || { cat "$WORK/s2.err"; fail "strict unknown id: message"; }
echo "bad input: reported with file:line, counted; --strict-input exits 3"

# usage: a typo'd version, an unknown benchmark, missing options, an output that is an input
expect_usage() { # WANT_TEXT ARGS...
  local want=$1
  shift
  rc=0
  "$TALLY_BIN" "$@" > "$WORK/u.out" 2> "$WORK/u.err" || rc=$?
  [ "$rc" = 2 ] || { cat "$WORK/u.err"; fail "$*: exit $rc, want 2"; }
  grep -qF -- "$want" "$WORK/u.err" || { cat "$WORK/u.err"; fail "$*: no '$want'"; }
}
expect_usage "--version takes official, 2017, or normalized, not 'offical'" \
  score vqa --annotations "$A" --results "$WORK/first.json" --version offical
expect_usage "unknown benchmark 'vqa2'" score vqa2 --annotations "$A" --results "$WORK/first.json"
expect_usage "--results is required" score vqa --annotations "$A"
expect_usage "--annotations (or --items) is required" score vqa --results "$WORK/first.json"
expect_usage "--items replaces --annotations" score vqa --items "$WORK/items.jsonl" --annotations "$A" --results "$WORK/first.json"
cp "$WORK/first.json" "$WORK/keep.json"
expect_usage "the results file" score vqa --annotations "$A" --results "$WORK/keep.json" --output "$WORK/keep.json"
cmp -s "$WORK/keep.json" "$WORK/first.json" || fail "--output = --results: the input was changed"
cp "$WORK/ann.json" "$WORK/ann_keep.json"
expect_usage "the annotations file" score vqa --annotations "$WORK/ann.json" --results "$WORK/res.json" --output "$WORK/ann.json"
cmp -s "$WORK/ann.json" "$WORK/ann_keep.json" || fail "--output = --annotations: the input was changed"
rc=0
"$TALLY_BIN" score vqa --annotations "$WORK/ann.json" --results "$WORK/res.json" > "$WORK/res.json" 2> "$WORK/u.err" || rc=$?
[ "$rc" = 2 ] || fail "stdout redirected onto the results: exit $rc, want 2"
rc=0
"$TALLY_BIN" score vqa --annotations "$WORK/nonexistent.json" --results "$WORK/first.json" > /dev/null 2> "$WORK/u.err" || rc=$?
[ "$rc" = 1 ] || fail "unreadable annotations: exit $rc, want 1"
"$TALLY_BIN" score --help | grep -q "usage: tally score vqa" || fail "score --help"
echo "usage: exit 2 with the reason; an input is never an output"
echo "PASS"
