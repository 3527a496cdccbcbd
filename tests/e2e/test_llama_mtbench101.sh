#!/usr/bin/env bash
# MT-Bench-101 generation and judging against a real llama.cpp server (llama-server, 2 slots of
# 4096 tokens, --no-context-shift so that a prompt over a slot is an error, never cut silently):
# the model and the judge are both the tiny model of llama_model.py behind one server, each with
# its own request-level `grammar` (engine "extra"): the model answers a few lowercase words, the
# judge `<words> Rating: [[n]]`. On the demo dialogues (one model, one seed):
#  1. the run succeeds; every judged turn has an answer and a judgment, none an engine_error;
#     every judgment is read by the primary parser, its rating the n of the judge's text;
#  2. the server got one request per answer and one per judgment (its log);
#  3. the tables are identical on 2 ranks (the judge samples at temperature 0.6 with the unit's
#     seed, which llama-server honours).
# Skipped (77) where build-llama/ (tools/llama-build.sh) is absent.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
. "$(dirname "$0")/llama_common.sh"
D="$TALLY_SRC/demo/mtbench101"
start_llama s -np 2 -c 8192 --no-context-shift
job() { # NAME
  cat > "$WORK/$1.json" <<JOB
{"name": "llama-mtbench101", "output": "$WORK/$1.h5",
 "engines": {
   "model": {"type": "openai", "url": "http://127.0.0.1:$LL_PORT_s/v1", "sampling": {"temperature": 0, "max_tokens": 16},
     "extra": {"grammar": "root ::= [a-z] [a-z ]{0,20}"},
     "concurrency": {"initial": 2, "max": 2}, "retries": {"max": 2, "backoff_s": 0.1}, "timeouts": {"request_s": 60}},
   "judge": {"type": "openai", "url": "http://127.0.0.1:$LL_PORT_s/v1", "model": "tiny-judge", "sampling": {"max_tokens": 24},
     "extra": {"grammar": "root ::= [a-z ]{0,12} \"Rating: [[\" (\"10\" | [1-9]) \"]]\""},
     "concurrency": {"initial": 2, "max": 2}, "retries": {"max": 2, "backoff_s": 0.1}, "timeouts": {"request_s": 60}}},
 "benchmarks": [{"benchmark": "mtbench101", "items": "$D/dialogues.jsonl", "models": ["tiny-chat"], "seeds": [0],
                 "parsers": ["mtbench101", "fastchat"]}]}
JOB
}
job r1
"$TALLY_BIN" run "$WORK/r1.json" > "$WORK/r1.txt" 2> "$WORK/r1.err" || { cat "$WORK/r1.err"; fail "the run failed"; }
"$PY" - "$WORK/r1.h5" "$(llama_requests s)" <<PY || { tail -5 "$WORK/r1.err"; fail "the answers and judgments of llama-server"; }
import re, sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
t = read_table(sys.argv[1], "/items/mtbench101")
n = len(t)
resp, judg, st, rat = list(t["response"]), list(t["judgment"]), list(t["status"]), list(t["rating"])
for c in ("engine_error", "judge_engine_error"):
    bad = [e for e in t[c] if e]
    assert not bad, (c, bad[:3])
assert n >= 20 and all(re.fullmatch(r"[a-z][a-z ]*", r) for r in resp), [r for r in resp if not re.fullmatch(r"[a-z][a-z ]*", r)][:3]
for j, s, r in zip(judg, st, rat):
    m = re.fullmatch(r"[a-z ]*Rating: \[\[(10|[1-9])\]\]", j)
    assert m and s == "ok", (j, s)
    assert abs(float(r) - int(m.group(1))) < 1e-9 or abs(float(r) / 1000 - int(m.group(1))) < 1e-9, (j, r)
req = int(sys.argv[2])
assert req == 2 * n, "the server got %d requests for %d answers and %d judgments" % (req, n, n)
print("llama-server answered %d turns and judged them (ratings %s); %d requests" % (n, sorted(set(int(re.search(r"\[\[(\d+)", j).group(1)) for j in judg)), req))
PY
job r2
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/r2.json" --quiet > /dev/null 2> "$WORK/r2.err" ||
  { cat "$WORK/r2.err"; fail "the 2-rank run failed"; }
SKIP=(); for c in source finish_reason latency_ms request_id endpoint; do SKIP+=(--skip "$c" --skip "judge_$c"); done
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/r1.h5" "$WORK/r2.h5" /items /metrics /audit "${SKIP[@]}" ||
  fail "1 rank vs 2 ranks: the tables differ"
echo "e2e llama mtbench101: generation and judging on llama-server, 1 and 2 ranks: ok"
