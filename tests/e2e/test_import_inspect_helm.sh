#!/usr/bin/env bash
# `tally import` on inspect_ai logs (.json, .eval: stored/deflate/zstd entries, data descriptors,
# ZIP64; broken zips) and HELM run folders: the answer lines, the items, the harness's verdicts,
# and each bad case named with its file and entry. Fixtures: make_eval.py (inspect) and
# tests/fixtures/import/helm/; the real files of ../shared/data/harness-outputs when present.
source "$(dirname "$0")/common.sh"
"$TALLY_BIN" import --list > "$WORK/list" 2>&1 || { echo "skipped: this tally has no 'tally import'"; exit 77; }
grep -q '^inspect' "$WORK/list" && grep -q '^helm' "$WORK/list" || { cat "$WORK/list"; fail "--list lacks inspect or helm"; }
"$PY" "$TALLY_SRC/tests/fixtures/import/inspect/make_eval.py" "$WORK/fx" || fail "make_eval.py"
FX="$WORK/fx"

# imp FILE ARGS...: tally import into $WORK/out.jsonl (stderr in $WORK/err); sets rc
imp() {
  local f="$1"
  shift
  rc=0
  "$TALLY_BIN" import "$f" -o "$WORK/out.jsonl" "$@" 2> "$WORK/err" || rc=$?
}
# summary: "id seed verdict metric extracted response" per line, "where" left out
summary() {
  "$PY" -c '
import json, sys
for l in open(sys.argv[1]):
    a = json.loads(l); h = a["harness"]
    assert h["format"] == sys.argv[2], h
    v = h["verdict"]
    print(a["id"], a["seed"], None if v is None else float(v), h["metric"], h["extracted"], json.dumps(a["response"]), a["model"])
' "$1" "$2"
}

cat > "$WORK/want" <<'W'
1 0 1.0 choice B "ANSWER: B" provider/fixture-model
1 1 0.0 choice C "ANSWER: C" provider/fixture-model
q2 0 0.5 match A "ANSWER:\nA" provider/fixture-model
3 0 None None None null provider/fixture-model
4 0 1.0 model_graded_qa It is Paris. "It is Paris." provider/fixture-model
5 0 1.0 includes None "x" provider/fixture-model
W
for f in mixed.json mixed.eval dd.eval zip64.eval; do
  imp "$FX/$f" --items "$WORK/items.jsonl"
  [ "$rc" = 0 ] || { cat "$WORK/err"; fail "$f: exit $rc"; }
  summary "$WORK/out.jsonl" inspect > "$WORK/got" || fail "$f: bad answer lines"
  diff "$WORK/want" "$WORK/got" || fail "$f: answer lines differ"
  grep -q "$f: sample '5' epoch 1: 'attachment://deadbeef' is not in the sample's attachments" "$WORK/err" ||
    { cat "$WORK/err"; fail "$f: the missing attachment is not reported"; }
  [ "$(wc -l < "$WORK/items.jsonl")" = 5 ] || fail "$f: want 5 distinct items"
  grep -q '"answer":\["A","C"\]' "$WORK/items.jsonl" || fail "$f: the list target is not kept as a list"
done

# broken zips: the file, the entry, what is wrong; the other samples kept; --strict-input stops
imp "$FX/truncated.eval"
[ "$rc" = 3 ] && grep -q "truncated.eval' is not a file of a known format" "$WORK/err" || { cat "$WORK/err"; fail "truncated.eval: exit $rc"; }
imp "$FX/truncated.eval" --format inspect
[ "$rc" = 3 ] && grep -q "truncated.eval': no end of central directory record" "$WORK/err" || { cat "$WORK/err"; fail "truncated.eval --format inspect: exit $rc"; }
while read -r f entry what; do
  imp "$FX/$f"
  [ "$rc" = 0 ] || { cat "$WORK/err"; fail "$f: exit $rc"; }
  [ "$(wc -l < "$WORK/out.jsonl")" = 5 ] || fail "$f: want the 5 other samples"
  grep -q "$f': entry 'samples/$entry'.*$what" "$WORK/err" || { cat "$WORK/err"; fail "$f: '$entry' '$what' not reported"; }
  imp "$FX/$f" --strict-input
  [ "$rc" = 3 ] || fail "$f --strict-input: exit $rc"
done <<'L'
crc.eval q2_epoch_1.json CRC-32 mismatch
method.eval 3_epoch_1.json compression method 12 is not supported
encrypted.eval 4_epoch_1.json is encrypted
L
imp "$FX/bomb.eval"
[ "$rc" = 0 ] && [ "$(wc -l < "$WORK/out.jsonl")" = 1 ] || { cat "$WORK/err"; fail "bomb.eval: exit $rc"; }
grep -q "entry 'samples/1_epoch_1.json' inflates past its declared 1000 bytes" "$WORK/err" || fail "bomb.eval: the bomb is not named"
grep -q "entry 'samples/5_epoch_1.json' declares 1073741823 bytes" "$WORK/err" || fail "bomb.eval: the lying header is not named"

# HELM: a fixture run
RUN="$TALLY_SRC/tests/fixtures/import/helm/mmlu-subject=fixture,method=multiple_choice_joint,model=org_fixture-model"
imp "$RUN" --items "$WORK/items.jsonl"
[ "$rc" = 0 ] || { cat "$WORK/err"; fail "helm fixture: exit $rc"; }
summary "$WORK/out.jsonl" helm > "$WORK/got"
cat > "$WORK/want" <<'W'
id1 0 1.0 exact_match None " C" org/fixture-model
id1 1 0.0 exact_match None " B" org/fixture-model
id2 0 0.0 exact_match None " A" org/fixture-model
id3 0 1.0 exact_match None " B" org/fixture-model
id3 0 0.0 exact_match None " A" org/fixture-model
id4 0 None None None null org/fixture-model
W
diff "$WORK/want" "$WORK/got" || fail "helm fixture: answer lines differ"
grep -q "request state 7: no instance.id" "$WORK/err" || fail "helm fixture: the state without an id is not reported"

# the real files
H="$TALLY_SHARED_DATA/harness-outputs"
if [ ! -d "$H" ]; then
  echo "skipped: $H is absent (the fixture part passed)"
  exit 77
fi
mean() { "$PY" -c 'import json,sys; v=[json.loads(l)["harness"]["verdict"] for l in open(sys.argv[1])]; print(len(v), sum(v)/len(v))' "$1"; }
imp "$H/inspect/data_arc_sonnet.json"
[ "$rc" = 0 ] && [ "$(mean "$WORK/out.jsonl")" = "5 1.0" ] || { cat "$WORK/err"; fail "ARC: exit $rc, $(mean "$WORK/out.jsonl")"; }
! grep -q 'attachment://' "$WORK/out.jsonl" || fail "ARC: an attachment left unresolved"
imp "$H/inspect/data_pubmedqa_gpt4o_mini.json"
[ "$rc" = 0 ] && [ "$(mean "$WORK/out.jsonl")" = "2 1.0" ] || fail "PubMedQA: exit $rc"
imp "$H/inspect/data_with_llm_scoring.json"
[ "$rc" = 3 ] && grep -q "an inspect_ai log without samples (its results count 1000)" "$WORK/err" ||
  { cat "$WORK/err"; fail "the header-only log: exit $rc"; }
imp "$H/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
[ "$rc" = 0 ] && [ "$(mean "$WORK/out.jsonl")" = "10 0.1" ] || { cat "$WORK/err"; fail "HELM MMLU: exit $rc"; }
echo "ok: inspect and HELM imports"
