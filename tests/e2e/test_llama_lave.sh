#!/usr/bin/env bash
# LAVE with log-probabilities against a real llama.cpp server: the VQA demo's answers come from
# the replay file (llama-server has no vision projector here: an image part is a 500 it can never
# serve), and the LAVE judge is llama-server with the tiny model of llama_model.py, asked for
# `logprobs` and `top_logprobs` and shaped by the grammar `<words> So rating=[1-3]` (engine
# "extra"). llama-server computes log-probabilities before the grammar; the model's digit tokens
# are biased, so the rating position's alternatives hold 1, 2 and 3.
#  1. the run succeeds; every unit with an answer (but the one whose <think> never closes) has a judgment `... So rating=r`, its LAVE
#     rating r, and an expected rating (rule logprob_expectation) equal to E[r] recomputed here
#     from the reply's own top_logprobs (kept in the --cache entry);
#     the judge's model name 'tiny-judge' is not what the server lists at /v1/models ('tiny',
#     its --alias; llama-server answers to any name): a warning says so;
#  2. the same on 2 ranks: identical tables, but for the expected ratings (and the means over
#     seeds built on them), which move by ~1e-7 with llama-server's batching: within 1e-5;
#  3. "top_logprobs" without "logprobs" is refused when the job is read (llama-server would answer
#     500 to every request), exit 2 naming it.
# Skipped (77) where build-llama/ (tools/llama-build.sh) is absent.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
. "$(dirname "$0")/llama_common.sh"
D="$TALLY_SRC/demo/vqa"
start_llama s -np 2 -c 8192 --no-context-shift
job() { # NAME SAMPLING
  cat > "$WORK/$1.json" <<JOB
{"name": "llama-lave", "output": "$WORK/$1.h5",
 "engines": {"model": {"type": "replay"},
   "judge": {"type": "openai", "url": "http://127.0.0.1:$LL_PORT_s/v1", "model": "tiny-judge", "sampling": {$2},
     "extra": {"grammar": "root ::= [a-z ]{0,12} \"So rating=\" [1-3]"},
     "concurrency": {"initial": 2, "max": 2}, "retries": {"max": 2, "backoff_s": 0.1}, "timeouts": {"request_s": 60}}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$D/items.jsonl", "answers": "$D/answers.jsonl",
   "lave": {"demos": "$D/lave_demos_general.json", "demos_binary": "$D/lave_demos_binary.json", "num_shots": 3,
            "expected_rating": true, "max_tokens": 24}}]}
JOB
}
job r1 '"logprobs": true, "top_logprobs": 5'
"$TALLY_BIN" run "$WORK/r1.json" --cache "$WORK/cache" > "$WORK/r1.txt" 2> "$WORK/r1.err" || { cat "$WORK/r1.err"; fail "the run failed"; }
# llama-server answers to any model name (its replies echo it): what it serves is in /v1/models
grep -q "warning: the judge endpoint .* serves tiny, not the job's model 'tiny-judge'" "$WORK/r1.err" ||
  { cat "$WORK/r1.err"; fail "no warning that the judge's model 'tiny-judge' is not what llama-server serves (/v1/models: tiny)"; }
"$PY" - "$WORK/r1.h5" "$WORK/cache" <<PY || fail "the expected LAVE ratings from llama-server's log-probabilities"
import glob, json, math, re, sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
t = read_table(sys.argv[1], "/items/vqa")
by_id = {}
for f in glob.glob(sys.argv[2] + "/**/*.json", recursive=True):
    r = json.load(open(f))["reply"]
    by_id[r["request_id"]] = r
n = 0
for i in range(len(t)):
    if not t["response"][i] or t["lave_status"][i] == "unterminated_think":
        continue  # nothing to judge
    assert t["judge_engine_error"][i] == "", t["judge_engine_error"][i]
    j = t["judgment"][i]
    m = re.fullmatch(r"[a-z ]*So rating=([1-3])", j)
    assert m, j
    assert int(t["lave_rating"][i]) == int(m.group(1)), (j, t["lave_rating"][i])
    lp = by_id[t["judge_request_id"][i]]["logprobs"]
    text, pos = "", -1
    for k, e in enumerate(lp):
        if e["token"].strip() in ("1", "2", "3") and re.search(r"rating\s*=\s*$", text):
            pos = k
        text += e["token"]
    assert pos >= 0, j
    p = {1: 0.0, 2: 0.0, 3: 0.0}
    for a in lp[pos]["top_logprobs"]:
        if a["token"].strip() in ("1", "2", "3"):
            p[int(a["token"].strip())] += math.exp(a["logprob"])
    assert sum(p.values()) > 0.1, (j, lp[pos]["top_logprobs"])  # the digits are likely: the model's bias
    e = sum(r * q for r, q in p.items()) / sum(p.values())
    assert t["lave_expected_rule"][i] == "logprob_expectation", t["lave_expected_rule"][i]
    assert abs(t["lave_expected"][i] - (e - 1) / 2) < 1e-6, (j, t["lave_expected"][i], (e - 1) / 2)
    n += 1
assert n == 58, n
print("LAVE on llama-server: %d judgments, expected ratings from their top_logprobs, e.g. %.4f" % (n, t["lave_expected"][0]))
PY
job r2 '"logprobs": true, "top_logprobs": 5'
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/r2.json" --quiet > /dev/null 2> "$WORK/r2.err" ||
  { cat "$WORK/r2.err"; fail "the 2-rank run failed"; }
# llama-server's log-probabilities move in the 7th digit with the batch they were computed in
# (2 slots: which requests share a batch differs from run to run), so the expected ratings and
# what is computed from them are compared to 1e-5; every other dataset exactly
SKIP=(); for c in source finish_reason latency_ms request_id endpoint attempts cached; do SKIP+=(--skip "judge_$c"); done
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/r1.h5" "$WORK/r2.h5" /items /metrics /audit "${SKIP[@]}" \
  --skip lave_expected --skip mean --skip std --skip se > "$WORK/same.txt" 2>&1 || { cat "$WORK/same.txt"; fail "1 rank vs 2 ranks: the tables differ"; }
"$PY" - "$WORK/r1.h5" "$WORK/r2.h5" <<'PY' || fail "1 rank vs 2 ranks: the expected ratings differ by more than llama-server's noise"
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visit(lambda n: names.append(n) if isinstance(a[n], h5py.Dataset) and n.split("/")[-1] in ("lave_expected", "mean", "std", "se") else None)
assert any(n.endswith("lave_expected") for n in names), names
worst = 0.0
for n in names:
    x, y = a[n][()], b[n][()]
    assert x.shape == y.shape and (np.isnan(x) == np.isnan(y)).all(), n
    d = np.abs(x - y)[~np.isnan(x)]
    worst = max(worst, float(d.max()) if d.size else 0.0)
    assert (d <= 1e-5).all(), (n, float(d.max()))
print("1 rank vs 2 ranks: identical but for the expected ratings, within %.1e" % worst)
PY
# top_logprobs without logprobs: llama-server answers 500 to every such request; tally refuses the job
job r3 '"top_logprobs": 5'
rc=0; "$TALLY_BIN" run "$WORK/r3.json" --quiet > /dev/null 2> "$WORK/r3.err" || rc=$?
[ "$rc" = 2 ] && grep -q "top_logprobs" "$WORK/r3.err" || { cat "$WORK/r3.err"; fail "top_logprobs without logprobs: exit $rc, want 2 naming it"; }
[ ! -e "$WORK/r3.h5" ] || fail "an output was written for a job refused"
echo "e2e llama lave: expected ratings from llama-server's log-probabilities, 1 and 2 ranks: ok"
