#!/usr/bin/env bash
# `tally score vqa` on real files cut mid-way (issue 27): the 589-question smallval set of
# ../shared/data/vqa. Before, a results file cut after 112 questions printed overall 85.98 with
# exit 0 (the whole file gives 84.33); now every cut is fatal: exit 1, no report, the message
# names the file and the byte. The annotations and questions cut mid-way likewise.
. "$(dirname "$0")/common.sh"
D="$TALLY_SHARED_DATA/vqa"
[ -f "$D/vqav2_smallval_annotations.json" ] || { echo "skipped: $D is absent (set TALLY_SHARED_DATA)"; exit 77; }
Q="$D/vqav2_smallval_questions.json" A="$D/vqav2_smallval_annotations.json"
"$PY" "$TALLY_SRC/tests/e2e/score_vqa_check.py" make "$D" "$WORK"
R="$WORK/first.json"

"$TALLY_BIN" score vqa --questions "$Q" --annotations "$A" --results "$R" > "$WORK/whole" 2> "$WORK/whole.err" \
  || { cat "$WORK/whole.err"; fail "whole: exit $?"; }
grep -q '"overall":' "$WORK/whole" || fail "whole: no overall"

# must_fail NAME FILE ARGS...
must_fail() {
  local name=$1 file=$2 rc=0
  shift 2
  "$TALLY_BIN" score vqa "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [ "$rc" = 1 ] || { cat "$WORK/err"; fail "$name: exit $rc, want 1"; }
  [ -s "$WORK/out" ] && { head -c 300 "$WORK/out"; fail "$name: a report was printed"; }
  grep -qF "$file: not valid JSON" "$WORK/err" || { cat "$WORK/err"; fail "$name: no 'not valid JSON' naming $file"; }
  return 0
}
len=$(wc -c < "$R")
for k in 1 100 4999 5000 $((len / 4)) $((len / 2)) $((len - 3)); do
  head -c "$k" "$R" > "$WORK/cut.json"
  must_fail "results cut at $k of $len bytes" "$WORK/cut.json" --questions "$Q" --annotations "$A" --results "$WORK/cut.json"
done
head -c $((len / 2)) "$R" > "$WORK/cut.json"
must_fail "results cut at half" "$WORK/cut.json" --annotations "$A" --results "$WORK/cut.json"
grep -q "at byte $((len / 2 + 1))" "$WORK/err" || { cat "$WORK/err"; fail "the byte where it breaks"; }
for f in "$A" "$Q"; do
  flen=$(wc -c < "$f")
  head -c $((flen / 3)) "$f" > "$WORK/cut_in.json"
  if [ "$f" = "$A" ]; then
    must_fail "annotations cut" "$WORK/cut_in.json" --annotations "$WORK/cut_in.json" --results "$R"
  else
    must_fail "questions cut" "$WORK/cut_in.json" --annotations "$A" --questions "$WORK/cut_in.json" --results "$R"
  fi
done
# the JSONL form of the items, cut mid-line
ilen=$(wc -c < "$WORK/items.jsonl")
head -c $((ilen / 2)) "$WORK/items.jsonl" > "$WORK/cut_items.jsonl"
tail -c 1 "$WORK/cut_items.jsonl" | grep -q . || head -c $((ilen / 2 + 7)) "$WORK/items.jsonl" > "$WORK/cut_items.jsonl"
must_fail "items cut" "$WORK/cut_items.jsonl" --items "$WORK/cut_items.jsonl" --results "$R"
echo "ok: every cut of the real files is refused"
