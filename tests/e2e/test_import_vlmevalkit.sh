#!/usr/bin/env bash
# A VLMEvalKit SpatialEval prediction table (tests/fixtures/import/vlmevalkit/GPT4o/GPT4o_SpatialEval.tsv)
# through `tally import --items` into a SpatialEval replay run (src/import/imp_vlmevalkit.c,
# docs/IMPORT.md "VLMEvalKit"): the items are SpatialEval's own schema, so the SpatialEval module
# loads them and its parsers score the answers (ids: the row's own SpatialEval id, else
# <task>.<mode>.vlmevalkit-<index>.<qid>); the row that names no SpatialEval task is reported by
# the import with file, line and index, and its generic item and answer by the run. An xlsx is
# refused with the conversion. Skipped (77) while `tally import` is absent.
. "$(dirname "$0")/common.sh"
"$TALLY_BIN" import --list > "$WORK/formats.txt" 2>&1 || { echo "skipped: no tally import"; exit 77; }
grep -q '^vlmevalkit ' "$WORK/formats.txt" || { echo "skipped: tally import has no vlmevalkit reader"; exit 77; }
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
F="$TALLY_SRC/tests/fixtures/import/vlmevalkit"
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
# xlsx: refused (exit 3), naming the conversion
rc=0
"$TALLY_BIN" import "$F/Qwen2-VL-7B/Qwen2-VL-7B_MMBench_DEV_EN.xlsx" > /dev/null 2> "$WORK/x.err" || rc=$?
[ "$rc" = 3 ] || { cat "$WORK/x.err"; fail "xlsx: exit $rc, want 3"; }
grep -q "xlsx2csv" "$WORK/x.err" || { cat "$WORK/x.err"; fail "xlsx: no conversion named"; }
echo "ok: VLMEvalKit SpatialEval import"
