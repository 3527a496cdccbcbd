#!/usr/bin/env bash
# `tally score vqa` never scores part of a file as the whole (docs/VQA.md, "Files"; issue 27):
# a results, annotations, questions or items file that is not valid JSON - cut mid-way, or
# broken by an edit - is fatal: exit 1, nothing on standard output, and the message names the
# file, says "not valid JSON" and where it breaks. Small fixtures written here (no shared data):
# 1. every proper prefix of an official results array (each byte length) exits 1 with no report;
#    the whole file scores (exit 0);
# 2. the annotations and questions files cut mid-way: exit 1, the message names the file and the byte;
# 3. JSONL results and items cut mid-line: exit 1, "not valid JSON: line N";
# 4. a broken element in the middle of an otherwise whole results array: exit 1.
. "$(dirname "$0")/common.sh"

cat > "$WORK/ann.json" <<'EOF'
{"annotations": [
 {"question_id": 1, "image_id": 7, "question_type": "what color", "answer_type": "other",
  "answers": [{"answer": "red"}, {"answer": "red"}, {"answer": "red"}, {"answer": "blue"}]},
 {"question_id": 2, "image_id": 7, "question_type": "is there", "answer_type": "yes/no",
  "answers": [{"answer": "yes"}, {"answer": "yes"}, {"answer": "no"}]},
 {"question_id": 3, "image_id": 8, "question_type": "how many", "answer_type": "number",
  "answers": [{"answer": "2"}, {"answer": "2"}, {"answer": "3"}]}
]}
EOF
cat > "$WORK/q.json" <<'EOF'
{"questions": [{"image_id": 7, "question": "What color is it?", "question_id": 1},
 {"image_id": 7, "question": "Is there a cat?", "question_id": 2},
 {"image_id": 8, "question": "How many dogs?", "question_id": 3}]}
EOF
printf '[{"question_id": 1, "answer": "red"}, {"question_id": 2, "answer": "yes"}, {"question_id": 3, "answer": "two"}]\n' > "$WORK/res.json"
A="$WORK/ann.json" Q="$WORK/q.json" R="$WORK/res.json"

# must_fail NAME FILE ARGS...: exit 1, empty stdout, "FILE: not valid JSON" on stderr
must_fail() {
  local name=$1 file=$2 rc=0
  shift 2
  "$TALLY_BIN" score vqa "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [ "$rc" = 1 ] || { cat "$WORK/err"; fail "$name: exit $rc, want 1"; }
  [ -s "$WORK/out" ] && { cat "$WORK/out"; fail "$name: a report was printed"; }
  grep -qF "$file: not valid JSON" "$WORK/err" || { cat "$WORK/err"; fail "$name: no 'not valid JSON' naming $file"; }
  grep -q "questions, .* scored" "$WORK/err" && { cat "$WORK/err"; fail "$name: a scoring summary was printed"; }
  return 0
}

# 0. the whole files score
"$TALLY_BIN" score vqa --annotations "$A" --questions "$Q" --results "$R" > "$WORK/whole" 2> "$WORK/whole.err" \
  || { cat "$WORK/whole.err"; fail "whole files: exit $?"; }
grep -q '"overall":' "$WORK/whole" || fail "whole files: no overall"

# 1. every proper prefix of the results array (the last byte is the newline: that prefix is whole)
len=$(wc -c < "$R")
n=0
for ((k = 1; k < len - 1; k++)); do
  head -c "$k" "$R" > "$WORK/cut.json"
  case "$(head -c "$k" "$R" | tr -d ' \n')" in "") continue ;; esac
  must_fail "results cut at $k bytes" "$WORK/cut.json" --annotations "$A" --results "$WORK/cut.json"
  n=$((n + 1))
done
head -c $((len / 2)) "$R" > "$WORK/cut.json"
must_fail "results cut" "$WORK/cut.json" --annotations "$A" --results "$WORK/cut.json"
grep -qE "cut.json: not valid JSON: .* at byte $((len / 2 + 1)) \(line 1\)" "$WORK/err" || { cat "$WORK/err"; fail "the byte where it breaks"; }
echo "1. $n cut results files: each exit 1, no report"

# 2. annotations and questions cut mid-way
head -c 300 "$A" > "$WORK/cut_ann.json"
must_fail "annotations cut" "$WORK/cut_ann.json" --annotations "$WORK/cut_ann.json" --results "$R"
head -c 120 "$Q" > "$WORK/cut_q.json"
must_fail "questions cut" "$WORK/cut_q.json" --annotations "$A" --questions "$WORK/cut_q.json" --results "$R"
echo "2. cut annotations and questions files: exit 1"

# 3. JSONL results and items cut mid-line
cat > "$WORK/items.jsonl" <<'EOF'
{"id": 1, "question": "What color is it?", "answers": ["red", "red", "red", "blue"], "answer_type": "other"}
{"id": 2, "question": "Is there a cat?", "answers": ["yes", "yes", "no"], "answer_type": "yes/no"}
{"id": 3, "question": "How many dogs?", "answers": ["2", "2", "3"], "answer_type": "number"}
EOF
printf '{"id": 1, "answer": "red"}\n{"id": 2, "answer": "yes"}\n{"id": 3, "answer": "two"}\n' > "$WORK/res.jsonl"
"$TALLY_BIN" score vqa --items "$WORK/items.jsonl" --results "$WORK/res.jsonl" > /dev/null 2> "$WORK/err" \
  || { cat "$WORK/err"; fail "whole JSONL: exit $?"; }
head -c 40 "$WORK/res.jsonl" > "$WORK/cut.jsonl"
must_fail "JSONL results cut" "$WORK/cut.jsonl" --items "$WORK/items.jsonl" --results "$WORK/cut.jsonl"
grep -qF "cut.jsonl: not valid JSON: line 2:" "$WORK/err" || { cat "$WORK/err"; fail "JSONL results: the line"; }
head -c 150 "$WORK/items.jsonl" > "$WORK/cut_items.jsonl"
must_fail "JSONL items cut" "$WORK/cut_items.jsonl" --items "$WORK/cut_items.jsonl" --results "$WORK/res.jsonl"
grep -qF "cut_items.jsonl: not valid JSON: line 2:" "$WORK/err" || { cat "$WORK/err"; fail "JSONL items: the line"; }
echo "3. cut JSONL results and items: exit 1, the line named"

# 4. a broken element in the middle of an otherwise whole array
printf '[{"question_id": 1, "answer": "red"}, {"question_id": 2 "answer": "yes"}, {"question_id": 3, "answer": "two"}]\n' > "$WORK/broken.json"
must_fail "broken element" "$WORK/broken.json" --annotations "$A" --results "$WORK/broken.json"
echo "4. a broken element: exit 1"
echo "ok"
