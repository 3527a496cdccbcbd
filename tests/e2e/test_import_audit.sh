#!/usr/bin/env bash
# Bring your own outputs, audited (issue 31 items 1 and 4): another harness's saved results
# re-score in ONE `tally run` (the job names the foreign file as {"format", "path"}), and the
# harness's own per-item verdict is set beside tally's: /audit/harness/<benchmark> and a summary
# line per model (each side's accuracy, flips each way, McNemar's exact p).
#  1. an lmms-eval 0.4 VQA samples file (no doc saved: the question id comes from its
#     "submission", the dataset prefix from the entry's "id_prefix") against the demo's VQA
#     items: lmms-eval said every answer is right; tally's exact_match finds 4 are not;
#     the same audit on 2 ranks;
#  1b. lm-eval log-likelihood samples (ARC-like docs with Hugging Face choices) re-scored by the
#     multiple-choice module from the saved log-likelihoods, against lm-eval's own acc;
#  2. the real inspect_ai ARC-Easy log (../shared/data/harness-outputs), items and answers from the
#     same file, scored by the generic multiple-choice module: inspect's C/I verdicts against
#     tally's strict letter extraction; the real HELM MMLU run folder the same way (exit 77
#     without the shared data, after part 1).
. "$(dirname "$0")/common.sh"
need_python
T="$TALLY_BIN"
W="$WORK"
# ---- 1. lmms-eval VQA ----
"$PY" - "$TALLY_SRC/demo/vqa/answers.jsonl" "$W" <<'PY'
import json, sys
src, w = sys.argv[1], sys.argv[2]
ans = [json.loads(l) for l in open(src) if l.strip()]
ans = [a for a in ans if a["model"] == "demo-vlm-a" and a["seed"] == 0]
with open(w + "/20250801_101010_samples_vqav2_demo.jsonl", "w") as f:
    for i, a in enumerate(ans):
        qid = int(a["id"].split(":")[1])
        f.write(json.dumps({"doc_id": i, "target": "x", "filtered_resps": a["response"], "input": "Q?",
                            "doc_hash": "0" * 64, "exact_match": 1.0,
                            "submission": {"question_id": qid, "answer": a["response"]}}) + "\n")
json.dump({"results": {}, "model_name": "demo-vlm-a", "config": {"model_args": "pretrained=demo-vlm-a"}},
          open(w + "/20250801_101010_results.json", "w"))
PY
cat > "$W/vqa.json" <<JOB
{"name": "lmms", "output": "$W/vqa.h5", "engines": {"model": {"type": "replay"}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$TALLY_SRC/demo/vqa/items.jsonl",
   "answers": {"format": "lmms-eval", "path": "$W/20250801_101010_samples_vqav2_demo.jsonl", "id_prefix": "demo:"}}]}
JOB
"$T" run "$W/vqa.json" > "$W/vqa.out" 2> "$W/vqa.err" || { cat "$W/vqa.err"; fail "1: the lmms-eval run failed"; }
grep -q "30 lines, 30 matched, 0 rejected" "$W/vqa.err" || { cat "$W/vqa.err"; fail "1: not every imported answer matched"; }
want="audit vqa: model 'demo-vlm-a': lmms-eval exact_match 1.000, tally exact_match 0.867 over 30 units: 0 flips up, 4 down"
grep -qF "$want" "$W/vqa.out" || { cat "$W/vqa.out"; fail "1: no audit line '$want'"; }
"$PY" - "$W/vqa.h5" <<'PY' || fail "1: /audit/harness/vqa"
import h5py, sys
t = h5py.File(sys.argv[1], "r")["/audit/harness/vqa"]
col = lambda c: [x.decode() if isinstance(x, bytes) else x for x in t[c][()]]
assert col("harness") == ["lmms-eval"] and col("tally_mode") == ["exact_match"], (col("harness"), col("tally_mode"))
assert list(col("n")) == [30] and list(col("flips_up")) == [0] and list(col("flips_down")) == [4]
assert abs(col("mcnemar_p")[0] - 0.125) < 1e-12, col("mcnemar_p")  # 4 flips one way: 2 * 0.5^4
PY
if command -v mpirun > /dev/null; then
  sed "s#$W/vqa.h5#$W/vqa2.h5#" "$W/vqa.json" > "$W/vqa2.json"
  mpirun -n 2 --oversubscribe "$T" run "$W/vqa2.json" --quiet > /dev/null 2> "$W/vqa2.err" ||
    { cat "$W/vqa2.err"; fail "1: the run on 2 ranks failed"; }
  h5diff "$W/vqa.h5" "$W/vqa2.h5" /audit > /dev/null || fail "1: /audit differs between 1 and 2 ranks"
fi
echo "1: lmms-eval VQA re-scored and audited in one run"

# ---- 1b. lm-eval log-likelihood multiple choice (an embedded-samples results file) ----
cat > "$W/ll.json" <<JOB
{"name": "ll", "output": "$W/ll.h5", "engines": {"model": {"type": "replay"}},
 "benchmarks": [{"benchmark": "mcq",
   "answers": {"format": "lm-eval", "path": "$TALLY_SRC/tests/fixtures/import/lm-eval/results_embedded_loglik.json"}}]}
JOB
"$T" run "$W/ll.json" > "$W/ll.out" 2> "$W/ll.err" || { cat "$W/ll.err"; fail "1b: the lm-eval log-likelihood run failed"; }
want="audit mcq: model 'toy-ll': lm-eval acc 0.667, tally strict 0.667 over 3 units: 0 flips up, 0 down"
grep -qF "$want" "$W/ll.out" || { cat "$W/ll.out" "$W/ll.err"; fail "1b: no audit line '$want'"; }
echo "1b: lm-eval's saved log-likelihoods re-scored (the items from its docs, HF choices) and audited"

# ---- 2. the real inspect_ai and HELM outputs ----
S="$TALLY_SHARED_DATA/harness-outputs"
[ -d "$S" ] || { echo "skipped: part 2 needs $S (part 1 passed)"; exit 77; }
cat > "$W/arc.json" <<JOB
{"name": "arc", "output": "$W/arc.h5", "engines": {"model": {"type": "replay"}},
 "benchmarks": [{"benchmark": "mcq", "items": {"format": "inspect", "path": "$S/inspect/data_arc_sonnet.json"},
                 "answers": {"format": "inspect", "path": "$S/inspect/data_arc_sonnet.json"}}]}
JOB
"$T" run "$W/arc.json" > "$W/arc.out" 2> "$W/arc.err" || { cat "$W/arc.err"; fail "2: the inspect ARC run failed"; }
want="inspect choice 1.000, tally strict 1.000 over 5 units: 0 flips up, 0 down"
grep -qF "$want" "$W/arc.out" || { cat "$W/arc.out"; fail "2: no audit line '$want'"; }
H=$(ls -d "$S"/helm/*/ | head -1)
cat > "$W/helm.json" <<JOB
{"name": "helm", "output": "$W/helm.h5", "engines": {"model": {"type": "replay"}},
 "benchmarks": [{"benchmark": "mcq", "items": {"format": "helm", "path": "$H"},
                 "answers": {"format": "helm", "path": "$H"}}]}
JOB
"$T" run "$W/helm.json" > "$W/helm.out" 2> "$W/helm.err" || { cat "$W/helm.err"; fail "2: the HELM run failed"; }
grep -E "^audit mcq: .*helm exact_match 0.100, tally strict [0-9.]+ over 10 units" "$W/helm.out" ||
  { cat "$W/helm.out"; fail "2: no HELM audit line"; }
echo "2: the real inspect ARC log and HELM run re-scored and audited in one run each"
echo "e2e import audit: ok"
