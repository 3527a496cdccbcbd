#!/usr/bin/env bash
# Bad input through `tally run`: each problem is reported with file and line, counted in the
# summary and in /input_problems, and the run goes on; --strict-input stops at once (exit 3,
# nothing written); an invalid job lists every problem (exit 2); an output in a missing folder is
# a clear error before any work (exit 2).
. "$(dirname "$0")/common.sh"
need_python
D="$TALLY_SRC/demo/spatialeval"
cat > "$WORK/job.json" <<JOB
{"name": "bad", "output": "$WORK/bad.h5", "limits": {"max_rejected": 1},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl",
   "answers": ["$D/answers.jsonl", "$D/answers_bad.jsonl"], "parsers": ["strict", "legacy"]}]}
JOB
rc=0; "$TALLY_BIN" run "$WORK/job.json" > "$WORK/out.txt" 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/err.txt"; fail "run with bad lines exited $rc"; }
for line in 1 2 3; do
  grep -q "answers_bad.jsonl:$line:" "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "no message for line $line"; }
done
grep -q "malformed JSON" "$WORK/err.txt" || fail "malformed JSON not named"
grep -q "missing field 'response'" "$WORK/err.txt" || fail "missing field not named"
grep -q "unknown item" "$WORK/err.txt" || fail "unknown item not named"
grep -q "bad input lines: 3" "$WORK/out.txt" || { cat "$WORK/out.txt"; fail "summary does not count 3"; }
"$PY" - "$WORK/bad.h5" "$TALLY_SRC" <<'PY'
import sys
sys.path.insert(0, sys.argv[2] + "/tools")
import tally_h5
p = tally_h5.read_table(sys.argv[1], "/input_problems")
assert sorted(p.kind) == ["malformed_json", "missing_field", "unknown_item"], list(p.kind)
assert sorted(p.line) == [1, 2, 3], list(p.line)
assert tally_h5.attrs(sys.argv[1])["n_bad_input"] == 3
items = tally_h5.read_table(sys.argv[1], "/items/spatialeval")
assert len(items) > 0
PY
# --strict-input: stop at the first problem, write nothing
rm -f "$WORK/bad.h5"
rc=0; "$TALLY_BIN" run "$WORK/job.json" --strict-input > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 3 ] || fail "--strict-input exited $rc, want 3"
[ "$(grep -c 'bad input:' "$WORK/err.txt")" = 1 ] || fail "--strict-input should report exactly one problem"
[ ! -e "$WORK/bad.h5" ] || fail "--strict-input wrote output"
# invalid job: every problem listed, exit 2, nothing run
echo '{"output": 5, "benchmarks": [{"benchmark": "spatialeval", "parsers": ["fuzzy"]}], "extra": 1}' > "$WORK/badjob.json"
rc=0; "$TALLY_BIN" run "$WORK/badjob.json" > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 2 ] || fail "invalid job exited $rc, want 2"
for w in "unknown key 'extra'" "output" "items" "answers" "fuzzy"; do
  grep -q "$w" "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "invalid job: '$w' not reported"; }
done
# missing input file: named, exit 1
sed "s#answers_bad.jsonl#no_such_file.jsonl#" "$WORK/job.json" > "$WORK/job2.json"
rc=0; "$TALLY_BIN" run "$WORK/job2.json" > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 1 ] || fail "missing input exited $rc, want 1"
grep -q "no_such_file.jsonl" "$WORK/err.txt" || fail "missing input not named"
# output in a missing folder: clear error before any work, exit 2
rc=0; "$TALLY_BIN" run "$WORK/job.json" --out /nonexistent-dir/x.h5 > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 2 ] || fail "output in a missing folder exited $rc, want 2"
grep -q "/nonexistent-dir/x.h5" "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "unwritable output not named"; }
# usage errors: exit 2
rc=0; "$TALLY_BIN" run > /dev/null 2>&1 || rc=$?; [ "$rc" = 2 ] || fail "no job: exit $rc"
rc=0; "$TALLY_BIN" frobnicate > /dev/null 2>&1 || rc=$?; [ "$rc" = 2 ] || fail "unknown command: exit $rc"
# tally parse: one output line per input line, errors in place
printf '%s\n' '{"item": {"id": "mazenav.tqa.1.2", "text": "Q? Available options:\nA. Yes\nB. No.", "oracle_answer": "No", "oracle_option": "B", "oracle_full_answer": "B. No"}, "response": "Answer: B", "model": "m"}' \
  'not json' '{"item": {"id": "nope"}, "response": "x"}' > "$WORK/p.jsonl"
"$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.jsonl" > "$WORK/p.out" 2> "$WORK/p.err"
[ "$(wc -l < "$WORK/p.out")" = 3 ] || fail "tally parse: not one line per input"
head -1 "$WORK/p.out" | grep -q '"answer":"B","correct":1,"status":"ok"' || { cat "$WORK/p.out"; fail "tally parse line 1"; }
sed -n 2p "$WORK/p.out" | grep -q '"error"' || fail "tally parse line 2 should be an error"
grep -q "p.jsonl:3:" "$WORK/p.err" || fail "tally parse: bad item not named with line"
echo "e2e bad input: ok"
