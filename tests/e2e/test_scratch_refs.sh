#!/usr/bin/env bash
# No copy of every text (issue 34 item 3): a replay-served run's journal names each reply's
# answers line ("ref") instead of copying its text, and its spilled rows do too; what is read
# back gives the same output.
#  1. the journal of a replay run holds no reply text (a distinctive answer is grepped for) and
#     one "tally_replay_file" line; the output equals main's form (the uninterrupted reference
#     is the same job run without --keep-journal, on 1 and 2 ranks);
#  2. --resume from that journal (the output removed) takes every unit from it (no engine call)
#     and gives identical datasets; tally merge of the run gives identical items;
#  3. an answers file modified between the run and --resume (one reply's bytes at the same
#     length; then another reply's length, which moves every later line): the units whose
#     referenced line changed are done again from the file as it is now (the output equals a
#     fresh run over it: the new text, never the old one under the old checksum), the log says so
#     once, the rest come from the journal; a merge of that journal refuses, naming the answers
#     file, and writes nothing.
. "$(dirname "$0")/common.sh"
need_python
D="$TALLY_SRC/demo/spatialeval"
cp "$D/answers.jsonl" "$WORK/answers.jsonl"
job() { # OUTPUT
  cat <<JOB
{"name": "refs", "engine": {"type": "replay"}, "output": "$1",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl",
   "answers": ["$WORK/answers.jsonl", {"path": "$D/reference_eval_output.jsonl", "model": "toy-vlm-c"}],
   "parsers": ["strict", "pr3", "legacy"]}]}
JOB
}
job "$WORK/ref.h5" > "$WORK/ref.json"
job "$WORK/out.h5" > "$WORK/job.json"
"$TALLY_BIN" run "$WORK/ref.json" --quiet > /dev/null 2>&1 || fail "the reference run failed"
same() { # A B WHAT
  for obj in /items /metrics /audit /input_problems; do
    h5diff "$1" "$2" "$obj" > /dev/null || fail "$3: $obj differs"
  done
}
attrs() { # FILE -> "units resumed calls"
  "$PY" -c 'import sys, h5py; a = h5py.File(sys.argv[1], "r").attrs; print(int(a["units"]), int(a["units_resumed"]), int(a["engine_calls"]))' "$1"
}

# 1. the journal names, it does not copy
TEXT="D. Southeast. Explanation: Kestrel Kites is to the Southeast of Violet Vases." # one reply, in no item
[ "$(grep -cF "\"$TEXT\"" "$WORK/answers.jsonl")" = 1 ] || fail "the test's answer is not once in the demo answers"
grep -qF "$TEXT" "$D/items.jsonl" && fail "the test's answer is in the items too: pick another"
"$TALLY_BIN" run "$WORK/job.json" --keep-journal --quiet > /dev/null 2> "$WORK/run.err" || { cat "$WORK/run.err"; fail "the run failed"; }
same "$WORK/ref.h5" "$WORK/out.h5" "a run that keeps its journal"
J=$(ls "$WORK"/out.h5.journal/*.jsonl)
grep -qF "$TEXT" $J && fail "the journal copies a reply text the answers file holds"
grep -q '"ref":\[' $J || fail "the journal has no reference"
[ "$(grep -c '"tally_replay_file"' $J)" = 1 ] || fail "not one tally_replay_file line for the answers file"
if command -v mpirun > /dev/null; then
  mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --output "$WORK/two.h5" --quiet > /dev/null 2>&1 ||
    fail "the 2-rank run failed"
  same "$WORK/ref.h5" "$WORK/two.h5" "the 2-rank run"
fi

# 2. resume and merge read the references back
cp -r "$WORK/out.h5.journal" "$WORK/saved.journal"
cp "$WORK/out.h5" "$WORK/kept.h5"
rm "$WORK/out.h5"
"$TALLY_BIN" run "$WORK/job.json" --resume --keep-journal --quiet > /dev/null 2> "$WORK/resume.err" || { cat "$WORK/resume.err"; fail "--resume failed"; }
same "$WORK/ref.h5" "$WORK/out.h5" "the resumed run"
read -r units resumed calls <<< "$(attrs "$WORK/out.h5")"
[ "$resumed" = "$units" ] && [ "$calls" = 0 ] || fail "resume: $resumed of $units units from the journal, $calls engine calls"
"$TALLY_BIN" merge "$WORK/out.h5" -o "$WORK/merged.h5" --quiet > /dev/null 2> "$WORK/merge.err" || { cat "$WORK/merge.err"; fail "the merge failed"; }
h5diff "$WORK/ref.h5" "$WORK/merged.h5" /items > /dev/null || fail "the merge's items differ"

# 3. the answers file changed between the run and --resume: (a) one reply's bytes, the same
# length: that unit alone is done again; (b) another reply's length too: every line after it
# moved, so every reference past it is stale and those units are done again. Each time the
# output equals a fresh run over the file as it is now, the old texts nowhere.
change() { # MODE: same | length
  "$PY" - "$WORK/answers.jsonl" "$1" <<'PY'
import json, sys
p, mode = sys.argv[1], sys.argv[2]
lines = open(p).read().split("\n")
for i, l in enumerate(lines):
    if mode == "same" and "D. Southeast. Explanation: Kestrel Kites is to the Southeast of Violet Vases.\"" in l:
        lines[i] = l.replace("Violet Vases.", "Violet Vasez.")
    if mode == "length" and '"spatialmap.tqa.2001.0"' in l and '"toy-vlm-a"' in l and '"seed": 0,' in l:
        o = json.loads(l)
        o["response"] = "A. Northwest. Changed."
        lines[i] = json.dumps(o)
open(p, "w").write("\n".join(lines))
PY
}
for mode in same length; do
  rm -rf "$WORK/out.h5" "$WORK/out.h5.journal" "$WORK/fresh.h5"
  cp -r "$WORK/saved.journal" "$WORK/out.h5.journal"
  change $mode
  job "$WORK/fresh.h5" > "$WORK/fresh.json"
  "$TALLY_BIN" run "$WORK/fresh.json" --quiet > /dev/null 2>&1 || fail "$mode: the fresh run failed"
  "$TALLY_BIN" run "$WORK/job.json" --resume --keep-journal --quiet > /dev/null 2> "$WORK/changed.err" ||
    { cat "$WORK/changed.err"; fail "$mode: --resume over a changed answers file failed"; }
  [ "$(grep -c 'changed in the answers file' "$WORK/changed.err")" = 1 ] || { cat "$WORK/changed.err"; fail "$mode: the changed replies are not said once"; }
  same "$WORK/fresh.h5" "$WORK/out.h5" "$mode: the resumed run over the changed file"
  read -r units resumed calls <<< "$(attrs "$WORK/out.h5")"
  [ $((resumed + calls)) = "$units" ] || fail "$mode: $resumed from the journal + $calls engine calls != $units"
  if [ $mode = same ]; then
    grep -q "1 journaled reply changed" "$WORK/changed.err" || { cat "$WORK/changed.err"; fail "not 1 changed reply"; }
    [ "$calls" = 1 ] || fail "same length: $calls engine calls, want 1"
  else
    [ "$calls" -gt 1 ] && [ "$resumed" -gt 0 ] || fail "another length: $calls engine calls, $resumed from the journal"
  fi
done
"$PY" - "$WORK/out.h5" <<'PY' || fail "the changed replies"
import sys, h5py
g = h5py.File(sys.argv[1], "r")["items/spatialeval"]
b, o = g["response.bytes"][()].tobytes(), g["response.offsets"][()]
texts = [b[o[i]:o[i + 1]].decode() for i in range(len(o) - 1)]
old = "D. Southeast. Explanation: Kestrel Kites is to the Southeast of Violet Vases."
assert old not in texts, "the old text under the old checksum"
assert texts.count(old.replace("Vases.", "Vasez.")) == 1, "the new text is not there"
assert texts.count("A. Northwest. Changed.") == 1, "the other new text is not there"
PY
rm -f "$WORK/merged.h5"
cp "$WORK/kept.h5" "$WORK/old.h5"
rm -rf "$WORK/old.h5.journal" && cp -r "$WORK/saved.journal" "$WORK/old.h5.journal"
rc=0; "$TALLY_BIN" merge "$WORK/old.h5" -o "$WORK/merged.h5" --quiet > /dev/null 2> "$WORK/merge2.err" || rc=$?
[ "$rc" != 0 ] || fail "a merge whose answers file changed succeeded"
grep -q "answers.jsonl" "$WORK/merge2.err" || { cat "$WORK/merge2.err"; fail "the merge's refusal does not name the answers file"; }
[ ! -e "$WORK/merged.h5" ] || fail "a refused merge wrote an output"
echo "e2e scratch refs: ok"
