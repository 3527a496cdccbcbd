#!/usr/bin/env bash
# tally import and tally run on lm-evaluation-harness and lmms-eval saved samples: the real
# lm-eval pair of ../shared/data, the fixtures of tests/fixtures/import (make_fixtures.py), a
# SpatialEval job whose answers are an lm-eval samples file, and the refusals.
set -u
. "$(dirname "$0")/common.sh"
set +e # exit codes are checked one by one
T="$TALLY_BIN"; FX="$TALLY_SRC/tests/fixtures/import"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
said() { grep -qF -- "$1" "$2" || { cat "$2" >&2; fail "expected '$1' in $2"; }; }

# --list names both formats
"$T" import --list > "$W/list" || fail "--list"
said "lm-eval " "$W/list"; said "lmms-eval " "$W/list"

# fixtures: SpatialEval-like generation, two filters per doc (the first, strict-match, is read)
S=$(ls "$FX"/lm-eval/samples_spatialmap_tqa_*.jsonl)
"$T" import "$S" --items "$W/items.jsonl" > "$W/ans.jsonl" 2> "$W/err" || fail "import samples"
said "(lm-eval): 8 answers, 8 items, 8 harness verdicts; 0 records not mapped" "$W/err"
# the second filter's extraction and verdict ride on the first filter's record
grep -q '"extracted":"\[invalid\]".*"filter":"strict-match","filters":{"flexible-extract":{"extracted":"C","verdict":1' "$W/ans.jsonl" \
  || fail "the other filter in extra.filters"
# a doc met only under the second filter (a cut file): named, not imported
{ sed -n 2p "$S"; sed -n 9,10p "$S"; } > "$W/samples_part_2025-01-01T00-00-00.jsonl"
"$T" import "$W/samples_part_2025-01-01T00-00-00.jsonl" > /dev/null 2> "$W/err" || fail "part"
said "samples_part_2025-01-01T00-00-00.jsonl:2: doc 0 of task 'part': a line under filter 'flexible-extract' but none" "$W/err"
said "1 answers, 1 items, 1 harness verdicts; 1 records not mapped" "$W/err"
[ "$(wc -l < "$W/ans.jsonl")" = 8 ] || fail "8 answer lines"
[ "$(wc -l < "$W/items.jsonl")" = 8 ] || fail "8 items"
grep -q '"id":"spatialmap.tqa.2001.0","model":"toy-lm","seed":0' "$W/ans.jsonl" || fail "keyed by the doc's id, model from results"
grep -q '"metric":"exact_match","extracted":"\[invalid\]"' "$W/ans.jsonl" || fail "the filter's extraction kept"
grep -q '"filter":"strict-match"' "$W/ans.jsonl" || fail "filter in extra"
grep -q '"response":"The map is hard to read. I think it is' "$W/ans.jsonl" || fail "response = the raw text (resps[0][0])"
# an item given twice under one id, differently: the first kept, the second reported
{ head -1 "$S"; head -1 "$S" | sed 's/"doc_id": 0/"doc_id": 99/; s/Consider a map/Consider a MAP/'; } > "$W/samples_dup_2025-01-01T00-00-00.jsonl"
"$T" import "$W/samples_dup_2025-01-01T00-00-00.jsonl" --items "$W/dup_items.jsonl" > /dev/null 2> "$W/err" || fail "dup"
said "item 'spatialmap.tqa.2000.0' given again, different from the first" "$W/err"
said "2 answers, 1 items, 2 harness verdicts; 1 records not mapped" "$W/err"
grep -q "Consider a map" "$W/dup_items.jsonl" || fail "the first item kept"
# log-likelihood samples embedded in a results file
"$T" import "$FX/lm-eval/results_embedded_loglik.json" > "$W/ll.jsonl" 2> "$W/err" || fail "loglik"
said "3 answers, 3 items, 3 harness verdicts; 0 records not mapped" "$W/err"
# a log-likelihood answer line carries the numbers (the multiple-choice module scores them), not a
# response; extra keeps them with the choices and the most likely one's index
grep -q '"loglik":\[-4.5,-2.25,-3,-6\].*"extracted":"1".*"choices":\[" a cat"," a dog"," a bird"," a fish"\]' "$W/ll.jsonl" \
  || fail "loglik and choices in extra"
grep -q '"response"' "$W/ll.jsonl" && fail "a log-likelihood line with a response (the mcq module would not score its numbers)"
# lmms-eval: 0.4 lines (one cut short: named), the 2024-09 lines, the older logs file
"$T" import "$FX/lmms-eval/20250801_101010_samples_vqav2_val_lite.jsonl" > "$W/m.jsonl" 2> "$W/err" || fail "lmms 0.4"
said "20250801_101010_samples_vqav2_val_lite.jsonl:4: malformed JSON" "$W/err"
said "(lmms-eval): 3 answers, 3 items, 3 harness verdicts; 1 records not mapped" "$W/err"
"$T" import --strict-input "$FX/lmms-eval/20250801_101010_samples_vqav2_val_lite.jsonl" -o "$W/strict.jsonl" 2> "$W/err"
[ $? = 3 ] || fail "strict input: exit 3"; [ ! -e "$W/strict.jsonl" ] || fail "strict: nothing written"
"$T" import "$FX/lmms-eval/20241010_090000_samples_mme.jsonl" > "$W/m.jsonl" 2> "$W/err" || fail "lmms 2024"
said "2 answers, 2 items, 0 harness verdicts" "$W/err"; grep -q '"id":"mme_1"' "$W/m.jsonl" || fail "question_id"
"$T" import "$FX/lmms-eval/scienceqa_img.json" > "$W/m.jsonl" 2> "$W/err" || fail "lmms logs"
said "2 answers, 2 items, 2 harness verdicts" "$W/err"; grep -q '"model":"liuhaotian/llava-v1.5-7b"' "$W/m.jsonl" || fail "model_configs"

# refusals: unknown format, wrong format, unknown file, output over the input
"$T" import --format nope "$S" 2> "$W/err"; [ $? = 2 ] || fail "unknown format: 2"; said "known: lm-eval, lmms-eval" "$W/err"
"$T" import --format lmms-eval "$S" 2> "$W/err"; [ $? = 3 ] || fail "wrong format: 3"; said "of format 'lm-eval', not 'lmms-eval'" "$W/err"
echo '{"a": 1}' > "$W/x.jsonl"
"$T" import "$W/x.jsonl" 2> "$W/err"; [ $? = 3 ] || fail "unknown file: 3"; said "known: lm-eval, lmms-eval" "$W/err"
cp "$S" "$W/samples_t_2025-01-01T00-00-00.jsonl"
"$T" import "$W/samples_t_2025-01-01T00-00-00.jsonl" -o "$W/samples_t_2025-01-01T00-00-00.jsonl" 2> "$W/err"; [ $? = 2 ] || fail "output over input"

# a SpatialEval job whose answers are the lm-eval file: one tally run, the same summary as the
# hand-converted answers
for k in hand lm; do
  if [ $k = hand ]; then A="{\"path\": \"$FX/lm-eval/hand_converted_answers.jsonl\", \"prompt_variant\": \"reason\"}"
  else A="{\"format\": \"lm-eval\", \"path\": \"$S\", \"prompt_variant\": \"reason\"}"; fi
  cat > "$W/$k.json" <<J
{"name": "imp", "engine": {"type": "replay"}, "output": "$W/out.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": ["$TALLY_SRC/demo/spatialeval/items.jsonl"], "answers": [$A], "parsers": ["strict", "pr3"]}]}
J
  TMPDIR="$W" "$T" run "$W/$k.json" --force > "$W/$k.out" 2> "$W/$k.err" || { cat "$W/$k.err"; fail "run $k"; }
done
said "tally: import: $S (lm-eval): 8 answers, 8 items, 8 harness verdicts" "$W/lm.err"
grep -q "records not mapped" "$W/lm.err" && fail "nothing unmapped in the job's import"
# the same summary, and the audit of lm-eval's own verdicts beside tally's
said "audit spatialeval: model 'toy-lm': lm-eval exact_match 0.500, tally strict 0.500 over 8 units: 0 flips up, 0 down" "$W/lm.out"
grep -v '^audit ' "$W/lm.out" > "$W/lm.noaudit"
diff "$W/hand.out" "$W/lm.noaudit" > "$W/d" || { cat "$W/d"; fail "the imported run differs from the hand-converted one"; }
ls -d "$W"/tally-import-* 2>/dev/null && fail "the import folder was left behind"
# on 3 ranks: every rank loads the same rewritten job (the output names it), same summary
if command -v mpirun > /dev/null; then
  TMPDIR="$W" mpirun -n 3 --oversubscribe "$T" run "$W/lm.json" --force > "$W/lm3.out" 2> "$W/lm3.err" \
    || { cat "$W/lm3.err"; fail "mpirun -n 3 run"; }
  diff "$W/lm.out" "$W/lm3.out" > "$W/d" || { cat "$W/d"; fail "3 ranks differ from 1 rank"; }
  ls -d "$W"/tally-import-* 2>/dev/null && fail "the import folder was left behind (3 ranks)"
fi
# an unknown format in a job: refused naming the known ones; tally slurm (not tally run) refuses the object
sed 's/"format": "lm-eval"/"format": "lm-evil"/' "$W/lm.json" > "$W/bad.json"
"$T" run "$W/bad.json" --force 2> "$W/err"; [ $? = 2 ] || fail "bad format in a job: 2"
said "unknown format 'lm-evil' (known: lm-eval, lmms-eval, inspect, helm, opencompass, vlmevalkit)" "$W/err"
"$T" slurm "$W/lm.json" > /dev/null 2> "$W/err"; [ $? = 2 ] || fail "slurm: 2"
said 'is converted by `tally run` only' "$W/err"
# a file with no sample converts nothing: said, exit 3, nothing written
: > "$W/samples_empty_2025-01-01T00-00-00.jsonl"
rc=0; "$T" import "$W/samples_empty_2025-01-01T00-00-00.jsonl" --format lm-eval -o "$W/empty.jsonl" 2> "$W/err" || rc=$?
[ "$rc" = 3 ] || { cat "$W/err"; fail "an empty file: exit $rc, expected 3"; }
said "nothing in '$W/samples_empty_2025-01-01T00-00-00.jsonl' could be converted" "$W/err"
[ ! -e "$W/empty.jsonl" ] || fail "an empty conversion wrote its output"

# the real lm-eval pair: every record mapped (the results file names a second task whose samples
# file is absent: said, counted)
D="$TALLY_SHARED_DATA/harness-outputs/lm-eval"
[ -d "$D" ] || { echo "skipped: $D absent"; exit 77; }
"$T" import "$D"/samples_math_perturbed_full_*.jsonl > "$W/r.jsonl" 2> "$W/err" || fail "real samples"
said "(lm-eval): 10 answers, 10 items, 10 harness verdicts; 0 records not mapped" "$W/err"
grep -q '"model":"RylanSchaeffer/mem_Qwen3-93M' "$W/r.jsonl" || fail "model from the results beside it"
"$T" import "$D"/results_*.json > "$W/r2.jsonl" 2> "$W/err" || fail "real results"
said "10 answers, 10 items, 10 harness verdicts; 1 records not mapped" "$W/err"
said "task 'math_rephrased_full': no \"samples\"" "$W/err"
cmp -s "$W/r.jsonl" "$W/r2.jsonl" || fail "results file and samples file give the same lines"
echo ok
