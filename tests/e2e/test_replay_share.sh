#!/usr/bin/env bash
# The replay files' load shared by the ranks (issue 34 item 4, src/par/run/share.c): on 2, 3 and
# 4 ranks each rank reads a share of each file's bytes, and the run must be the one rank's, which
# reads every line (tl_replay_open_subs): the same problems echoed in the same order with the
# same file:line (bad lines, a bad field, unknown items, duplicates within a file and across
# files, the duplicate of an unknown item's line, an empty file, a file of blank lines, "\r\n"
# ends, a last line without "\n"), the same per-file counts, the same output file
# (tools/h5_same.py), the same single problem and exit under --strict-input, and the same
# models, in the same order, named by a filter that matches no answer; a rank failing in a step
# of the shared load (TALLY_TEST_FAIL) ends every rank with one message.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/spatialeval"
M="$TALLY_SRC/demo/mtbench101"
cd "$WORK"
{ # a1: answers with problems throughout (the shares of 2 to 4 ranks split it in different places)
  head -40 "$D/answers.jsonl"; echo
  echo '{"id": "spatialmap.tqa.2000.0", "model": "toy-vlm-a"'                     # malformed
  sed -n 2p "$D/answers.jsonl"                                                      # duplicate of line 2
  printf '%s\r\n' "$(sed -n 41p "$D/answers.jsonl")"
  echo '{"id": "spatialmap.tqa.2999.0", "model": "toy-vlm-a", "seed": 0, "prompt_variant": "reason", "response": "u"}'
  echo '{"id": "spatialmap.tqa.2000.1", "model": "toy-vlm-a", "seed": 0, "prompt_variant": "nope", "response": "v"}'
  echo '{"id": "spatialmap.tqa.2000.1", "id": "x", "model": "toy-vlm-a", "response": "dup key"}'
  sed -n 42,150p "$D/answers.jsonl"
  echo '{"id": "spatialmap.tqa.2999.0", "model": "toy-vlm-a", "seed": 0, "prompt_variant": "reason", "response": "w"}'
  sed -n 5p "$D/answers.jsonl"; echo; echo                                         # far from its twin
  sed -n 151,215p "$D/answers.jsonl"
  printf '%s' "$(sed -n 216p "$D/answers.jsonl")"                                   # no "\n" at the end
} > a1.jsonl
# a2: other models first seen here (their order in r->found is the one-rank order), and two
# duplicates of a1's lines
sed 's/toy-vlm-a/zeta-model/; s/toy-llm-b/alpha-model/' "$D/answers.jsonl" | sed -n 1,60p > a2.jsonl
sed 's/toy-vlm-a/beta-model/' "$D/answers.jsonl" | sed -n 61,100p >> a2.jsonl
sed -n 3p "$D/answers.jsonl" >> a2.jsonl; sed -n 60p "$D/answers.jsonl" >> a2.jsonl
: > a3.jsonl; printf '\n\n' > a4.jsonl
{ head -100 "$M/answers.jsonl"; sed -n 3p "$M/answers.jsonl"
  echo '{"id": "1", "model": "demo-chat-a", "seed": 0, "turn": 9, "response": "bad turn"}'
  sed -n 101,188p "$M/answers.jsonl"; } > m1.jsonl
{ cat "$M/judgments.jsonl"; sed -n 7p "$M/judgments.jsonl"
  echo '{"id": "999", "model": "demo-chat-a", "seed": 0, "turn": 0, "response": "Rating: [[3]]"}'
  echo '{"id": "1", "model": "nobody", "seed": 0, "turn": 0, "response": "Rating: [[3]]"}'; } > j1.jsonl
cat > job.json <<JOB
{"name": "share", "output": "o.h5", "limits": {"max_rejected": 1},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl",
   "answers": ["a1.jsonl", "a2.jsonl", "a3.jsonl", "a4.jsonl"], "parsers": ["strict", "legacy"]},
  {"benchmark": "mtbench101", "items": "$M/dialogues.jsonl", "answers": "m1.jsonl", "judgments": "j1.jsonl",
   "parsers": ["mtbench101", "fastchat"]}]}
JOB
sed 's/"parsers": \["strict", "legacy"\]/"parsers": ["strict", "legacy"], "models": ["nope", "toy-vlm-a"]/' job.json > filter.json

run() { # N OUT JOB ARGS...: tally run on N ranks; its stderr's tally lines, but the timings, in OUT.err
  local n=$1 out=$2 job=$3; shift 3
  local rc=0
  if [ "$n" = 1 ]; then "$TALLY_BIN" run "$job" --out "$out.h5" "$@" > "$out.out" 2> "$out.raw" || rc=$?
  else timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -np "$n" "$TALLY_BIN" run "$job" --out "$out.h5" "$@" \
         > "$out.out" 2> "$out.raw" || rc=$?; fi
  grep '^tally: ' "$out.raw" | grep -v '^tally: progress \|^tally: [0-9]* units, ' > "$out.err" || true
  echo "$rc" > "$out.rc"
}
run 1 one job.json
[ "$(cat one.rc)" = 0 ] || { cat one.raw; fail "the one-rank run failed"; }
# the case holds what it says
for want in "a1.jsonl:42: malformed" "a1.jsonl:43: duplicate answer" "a1.jsonl:157: duplicate answer.*a1.jsonl:45 is kept" \
            "a1.jsonl:158: duplicate.*a1.jsonl:5 is kept" "a2.jsonl:101: duplicate.*a1.jsonl:3 is kept" \
            "a3.jsonl: no answers" "a4.jsonl: no answers" "j1.jsonl:187: duplicate judgment" \
            "j1.jsonl:188: judgment for unknown item" "input a1.jsonl (answers): 223 lines, 216 matched, 7 rejected"; do
  grep -q "$want" one.err || { cat one.err; fail "the one-rank run does not say '$want'"; }
done
run 1 strict1 job.json --strict-input
run 1 filter1 filter.json
[ "$(cat strict1.rc)" = 3 ] && [ "$(grep -c 'bad input:' strict1.err)" = 1 ] || { cat strict1.raw; fail "strict, one rank"; }
[ "$(cat filter1.rc)" = 2 ] && grep -q "models 'toy-vlm-a', 'toy-llm-b', 'zeta-model', 'beta-model'" filter1.err ||
  { cat filter1.raw; fail "filter, one rank"; }
for n in 2 3 4; do
  run "$n" "n$n" job.json
  [ "$(cat n$n.rc)" = 0 ] || { cat "n$n.raw"; fail "the run on $n ranks failed"; }
  diff one.err "n$n.err" || fail "$n ranks: the messages differ from one rank's"
  "$PY" "$TALLY_SRC/tools/h5_same.py" one.h5 "n$n.h5" audit input_problems items metrics ||
    fail "$n ranks: the output differs from one rank's"
  run "$n" "strict$n" job.json --strict-input
  [ "$(cat strict$n.rc)" = 3 ] || { cat "strict$n.raw"; fail "$n ranks, strict: exit $(cat strict$n.rc)"; }
  diff strict1.err "strict$n.err" || fail "$n ranks, strict: the messages differ from one rank's"
  [ ! -e "strict$n.h5" ] || fail "$n ranks, strict: an output was written"
  run "$n" "filter$n" filter.json
  [ "$(cat filter$n.rc)" = 2 ] || { cat "filter$n.raw"; fail "$n ranks, filter: exit $(cat filter$n.rc)"; }
  diff filter1.err "filter$n.err" || fail "$n ranks, filter: the messages differ from one rank's"
done
# a rank that fails in a step of the shared load ends every rank at once (no rank waits in a
# collective for it), with one message naming it, and nothing written
for fault in share-read:1 share-index:0 share-report:2; do
  rc=0
  TALLY_TEST_FAIL=$fault timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -np 3 "$TALLY_BIN" run job.json \
    --out fault.h5 > /dev/null 2> fault.err || rc=$?
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "$fault: a rank hung (killed by timeout)"
  [ "$rc" = 1 ] || { cat fault.err; fail "$fault: exit $rc, expected 1"; }
  [ "$(grep -c 'TALLY_TEST_FAIL' fault.err)" = 1 ] || { cat fault.err; fail "$fault: the failure is not said once"; }
  [ "${fault#*:}" = 0 ] || grep -q "rank ${fault#*:}: " fault.err || { cat fault.err; fail "$fault: the rank is not named"; }
  [ ! -e fault.h5 ] || fail "$fault: an output was written"
done
echo "ok: 2, 3 and 4 ranks sharing the load give the one rank's messages and output"
