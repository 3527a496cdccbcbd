#!/usr/bin/env bash
# A VLMEvalKit SpatialEval prediction table (tests/fixtures/import/vlmevalkit/GPT4o/GPT4o_SpatialEval.tsv)
# through `tally import --items` into a SpatialEval replay run (src/import/imp_vlmevalkit.c,
# docs/IMPORT.md "VLMEvalKit"): the items are SpatialEval's own schema, so the SpatialEval module
# loads them and its parsers score the answers (ids: the row's own SpatialEval id, else
# <task>.<mode>.vlmevalkit-<index>.<qid>); the row that names no SpatialEval task is reported by
# the import with file, line and index, and its generic item and answer by the run. An xlsx
# workbook gives the answers of the same table as csv; one cut short is refused. A VQA table (no A..D) is re-scored by the VQA module in one
# `tally run`. Skipped (77) while `tally import` is absent.
. "$(dirname "$0")/common.sh"
"$TALLY_BIN" import --list > "$WORK/formats.txt" 2>&1 || { echo "skipped: no tally import"; exit 77; }
grep -q '^vlmevalkit ' "$WORK/formats.txt" || { echo "skipped: tally import has no vlmevalkit reader"; exit 77; }
F="$TALLY_SRC/tests/fixtures/import/vlmevalkit"
# A VQA table (demo-vlm/T20250301-101010/demo-vlm_DemoVQA.tsv: index, question, answer, category,
# prediction; no A..D) re-scored by the VQA module in one `tally run`: the job names the table as
# {"format": "vlmevalkit", "path", "id_prefix": "<dataset>:"} (VLMEvalKit keeps no dataset in the
# row, and its index is the question id of DemoVQA_items.jsonl); every answer matches, the VQA
# accuracy is the one of the 6 predictions, and the audit says a predictions table has no verdict.
cat > "$WORK/vqa.json" <<JOB
{"name": "vlmevalkit-vqa", "output": "$WORK/vqa.h5", "engines": {"model": {"type": "replay"}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "DemoVQA", "items": "$F/DemoVQA_items.jsonl",
   "answers": {"format": "vlmevalkit", "path": "$F/demo-vlm/T20250301-101010/demo-vlm_DemoVQA.tsv",
               "id_prefix": "DemoVQA:"}}]}
JOB
"$TALLY_BIN" run "$WORK/vqa.json" > "$WORK/vqa.out" 2> "$WORK/vqa.err" || { cat "$WORK/vqa.err"; fail "vqa: the run failed"; }
grep -q "6 lines, 6 matched, 0 rejected" "$WORK/vqa.err" || { cat "$WORK/vqa.err"; fail "vqa: not every answer matched"; }
grep -Eq "^demo-vlm +[^ ]+ +all +[0-9]+ +6 +6 +0 +0 +0 +0\.667 \[" "$WORK/vqa.out" || { cat "$WORK/vqa.out"; fail "vqa: not 0.667 over 6"; }
grep -qF "audit vqa: the imported answers (vlmevalkit) carry no per-item verdict of the harness: nothing to compare" \
  "$WORK/vqa.out" || { cat "$WORK/vqa.out"; fail "vqa: no audit line"; }
echo "vqa: a VLMEvalKit VQA table re-scored in one run"
command -v mpirun >/dev/null || { echo "skipped: no mpirun (the VQA part passed)"; exit 77; }
"$TALLY_BIN" import "$F/GPT4o/GPT4o_SpatialEval.tsv" -o "$WORK/a.jsonl" --items "$WORK/items.jsonl" 2> "$WORK/imp.err" ||
  { cat "$WORK/imp.err"; fail "the import failed"; }
grep -q "GPT4o_SpatialEval.tsv:5: row 4 (index '3'): SpatialEval row: cannot tell its SpatialEval item" "$WORK/imp.err" ||
  { cat "$WORK/imp.err"; fail "the row without a SpatialEval task is not named"; }
grep -q '"id":"mazenav.vqa.vlmevalkit-1.0"' "$WORK/items.jsonl" || fail "no built SpatialEval id"
cat > "$WORK/job.json" <<JOB
{"name": "vlmevalkit-spatialeval", "engine": {"type": "replay"}, "output": "$WORK/out.h5",
 "limits": {"max_rejected": 0.5},
 "benchmarks": [{"benchmark": "spatialeval", "items": ["$WORK/items.jsonl"], "answers": ["$WORK/a.jsonl"],
                 "parsers": ["strict", "pr3"]}]}
JOB
mpirun -n 1 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --quiet > "$WORK/run.txt" 2> "$WORK/run.err" ||
  { cat "$WORK/run.err" "$WORK/run.txt"; fail "the run failed"; }
grep -q "^spatialeval: 3 items (vqa 2, vtqa 1)" "$WORK/run.txt" || { cat "$WORK/run.txt"; fail "not the 3 SpatialEval items"; }
grep -Eq "^GPT4o +reason +all +all +1 +3 +3 +0 +0 +0 +1\.000" "$WORK/run.txt" || { cat "$WORK/run.txt"; fail "not 3 of 3 under strict"; }
grep -q "items.jsonl:4: item missing field 'text'" "$WORK/run.err" || { cat "$WORK/run.err"; fail "the generic item is not reported by the run"; }
# xlsx: the workbook of the AI2D csv's rows (make_xlsx.py) gives the csv's answers; one cut short
# is refused (exit 3), naming the file
"$TALLY_BIN" import "$F/llava_v1.5_7b/T20250102-090000/llava_v1.5_7b_AI2D_TEST.xlsx" 2> /dev/null |
  sed 's/"where":"[^"]*"//' > "$WORK/x.jsonl" || fail "xlsx: the import failed"
"$TALLY_BIN" import "$F/llava_v1.5_7b/llava_v1.5_7b_AI2D_TEST.csv" 2> /dev/null | sed 's/"where":"[^"]*"//' > "$WORK/c.jsonl"
[ -s "$WORK/x.jsonl" ] && cmp -s "$WORK/x.jsonl" "$WORK/c.jsonl" || { diff "$WORK/x.jsonl" "$WORK/c.jsonl"; fail "xlsx: not the csv's answers"; }
rc=0
"$TALLY_BIN" import "$F/Qwen2-VL-7B/Qwen2-VL-7B_MMBench_DEV_EN.xlsx" > /dev/null 2> "$WORK/x.err" || rc=$?
[ "$rc" = 3 ] || { cat "$WORK/x.err"; fail "xlsx cut short: exit $rc, want 3"; }
grep -q "MMBench_DEV_EN.xlsx': no end of central directory record" "$WORK/x.err" || { cat "$WORK/x.err"; fail "xlsx cut short: not named"; }
echo "ok: VLMEvalKit SpatialEval import"
