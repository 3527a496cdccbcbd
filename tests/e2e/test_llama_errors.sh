#!/usr/bin/env bash
# Requests a real llama.cpp server refuses (llama-server, the tiny model of llama_model.py),
# SpatialEval generation on 11 demo items (one model, one seed):
#  1. context overflow: with --no-context-shift and 512 tokens of context, a prompt longer than
#     that is HTTP 400 "the request exceeds the available context size": each such unit is a
#     clear engine_error with the server's words, asked once (a 4xx is final), never a cut,
#     scored answer; the prompts that fit are answered;
#  2. a request llama-server can never serve (`"n": 2` in sampling: 500 "Only one completion
#     choice is allowed"): engine_error after 2 attempts (the same words twice are permanent),
#     the server's message kept; 2 requests per unit, not 7;
#     likewise an image part without a vision projector (500 "Unsupported content part type");
#  3. a wrong API key (--api-key on the server): 401 for every unit, each engine_error, the run
#     exits 1 naming the model; no request after the first 401s (2 in flight); the key's value is nowhere in the journal, stdout or stderr.
# Cases 2 and 3 read the kept journal. Last: a run that scored nothing says what is true (no
# output written, the journal kept for --resume), and no output is left.
# Skipped (77) where build-llama/ (tools/llama-build.sh) is absent.
. "$(dirname "$0")/common.sh"
need_python
. "$(dirname "$0")/llama_common.sh"
D="$TALLY_SRC/demo/spatialeval"
grep -E '"id": "[a-z]+\.tqa\.[^"]*\.0"' "$D/items.jsonl" > "$WORK/items.jsonl"
[ "$(wc -l < "$WORK/items.jsonl")" = 11 ] || fail "the demo items changed"
job() { # NAME PORT [SAMPLING] [ENGINE EXTRA]
  cat > "$WORK/$1.json" <<JOB
{"name": "llama-errors", "output": "$WORK/$1.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$2/v1",
   "sampling": {"temperature": 0, "max_tokens": 24${3:-}},
   "extra": {"grammar": "root ::= \"Answer: \" [A-D] \"\\\\nReason: \" [a-z ]{0,20}"},
   "concurrency": {"initial": 2, "max": 2}, "retries": {"max": 6, "backoff_s": 0.05, "backoff_max_s": 0.2},
   "timeouts": {"connect_s": 2, "request_s": 30}, "health": {"wait_s": 10}${4:-}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$WORK/items.jsonl", "models": ["tiny-a"],
                 "parsers": ["strict", "pr3", "legacy"]}]}
JOB
}
journal() { # OUT.h5 PYTHON-BODY (err: the error of each unit's journal line): a run that scored
  # nothing writes no output; its journal keeps every unit with the engine's words
  cat "$1".journal/*.jsonl | "$PY" -c "
import json, sys
err = [r.get('error', '') for r in map(json.loads, list(sys.stdin)[1:]) if r.get('st') == 0]
$2"
}
table() { # H5 PYTHON-BODY (t: the item table)
  "$PY" - "$1" <<PY
import re, sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
t = read_table(sys.argv[1], "/items/spatialeval")
$2
PY
}

# ---- 1. context overflow ----
start_llama c -np 1 -c 512 --no-context-shift
job o1 "$LL_PORT_c"
"$TALLY_BIN" run "$WORK/o1.json" > "$WORK/o1.txt" 2> "$WORK/o1.err" || { cat "$WORK/o1.err"; fail "the run with over-long prompts failed"; }
table "$WORK/o1.h5" '
err, resp, pt = list(t["engine_error"]), list(t["response"]), list(t["prompt_tokens"])
over = [i for i, e in enumerate(err) if e]
fit = [i for i, e in enumerate(err) if not e]
assert over and fit, (len(over), len(fit))
for i in over:
    assert "HTTP 400" in err[i] and "exceeds the available context size" in err[i], err[i]
    assert resp[i] == "" and t["status_strict"][i] == "engine_error", (resp[i], t["status_strict"][i])
for i in fit:
    assert resp[i].startswith("Answer: ") and 0 < pt[i] <= 512, (resp[i], pt[i])
print("context overflow: %d prompts over 512 tokens are engine_error (%r), %d answered" % (len(over), err[over[0]][:120], len(fit)))
open(sys.argv[1] + ".over", "w").write(str(len(over)))
' || fail "context overflow: not a clear engine_error"
[ "$(llama_requests c)" = 11 ] || fail "context overflow: $(llama_requests c) requests for 11 units (a 400 is final: one each)"
grep -q "engine_error=$(cat "$WORK/o1.h5.over")\|engine_error *$(cat "$WORK/o1.h5.over")" "$WORK/o1.txt" ||
  echo "note: the summary does not show engine_error=$(cat "$WORK/o1.h5.over")"
stop_llama c

# ---- 2. n = 2: never served ----
start_llama p -np 2
job n1 "$LL_PORT_p" ', "n": 2'
rc=0; "$TALLY_BIN" run "$WORK/n1.json" > "$WORK/n1.txt" 2> "$WORK/n1.err" || rc=$?
journal "$WORK/n1.h5" '
assert len(err) == 11 and all("HTTP 500" in e and "Only one completion choice is allowed" in e and "2 attempts" in e for e in err), err[:2]
print("n = 2: every unit engine_error: %r" % err[0][:160])
' || { cat "$WORK/n1.err"; fail "n = 2: not engine_error after 2 attempts with the server's words"; }
[ "$(llama_requests p)" = 22 ] || fail "n = 2: $(llama_requests p) requests for 11 units, want 22 (2 attempts each)"
[ "$rc" = 1 ] || fail "n = 2: a run whose model answered nothing exits $rc, want 1"
# an image part without a vision projector: 500 "Unsupported content part type" (3 VQA items with
# a PNG each): engine_error after 2 attempts with the server's words (it was 7 attempts, 54 s for
# 30 units, with only "HTTP 500" kept)
"$PY" - "$WORK" <<'PY'
import json, struct, sys, zlib
w = sys.argv[1]
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + \
      chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
open(w + "/px.png", "wb").write(png)
with open(w + "/vqa.jsonl", "w") as f:
    for i in range(3):
        f.write(json.dumps({"question_id": 100 + i, "question": "What color is it?", "answers": ["red"] * 10,
                            "image": "px.png", "answer_type": "other"}) + "\n")
PY
before=$(llama_requests p)
cat > "$WORK/v1.json" <<JOB
{"name": "llama-image", "output": "$WORK/v1.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$LL_PORT_p/v1", "sampling": {"temperature": 0, "max_tokens": 8},
   "retries": {"max": 6, "backoff_s": 0.05, "backoff_max_s": 0.2}, "health": {"wait_s": 10}}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$WORK/vqa.jsonl", "models": ["tiny-vlm"]}]}
JOB
rc=0; "$TALLY_BIN" run "$WORK/v1.json" > "$WORK/v1.txt" 2> "$WORK/v1.err" || rc=$?
journal "$WORK/v1.h5" '
assert len(err) == 3 and all("HTTP 500" in e and "Unsupported content part type" in e and "2 attempts" in e for e in err), err
print("image part without a projector: every unit engine_error: %r" % err[0][:160])
' || { cat "$WORK/v1.err"; fail "an image part llama-server cannot serve: not engine_error after 2 attempts with the server's words"; }
[ $(( $(llama_requests p) - before )) = 6 ] || fail "image parts: $(( $(llama_requests p) - before )) requests for 3 units, want 6"

# ---- 3. a wrong API key ----
start_llama k -np 2 --api-key sk-llama-server-side-2718
job k1 "$LL_PORT_k" "" ', "api_key_env": "TALLY_LLAMA_KEY"'
rc=0; TALLY_LLAMA_KEY=sk-wrong-client-key-3141 "$TALLY_BIN" run "$WORK/k1.json" --keep-journal > "$WORK/k1.txt" 2> "$WORK/k1.err" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/k1.err"; fail "401 for every unit: exit $rc, want 1"; }
grep -q "tiny-a" "$WORK/k1.err" || { cat "$WORK/k1.err"; fail "401 for every unit: the message does not name the model"; }
journal "$WORK/k1.h5" '
assert len(err) == 11 and all("401" in e for e in err), err[:2]
print("401: every unit engine_error: %r" % err[0][:160])
' || fail "401: not every unit engine_error"
[ "$(llama_requests k)" -le 2 ] || fail "401: llama-server got $(llama_requests k) requests: the endpoint was not given up after the first 401s (2 in flight)"
! grep -rq "sk-wrong-client-key-3141" "$WORK"/k1.h5* "$WORK/k1.err" "$WORK/k1.txt" ||
  fail "the API key's value reached the output, the journal or the log"
# A run that scored nothing: no output, and it says so (it once claimed the output held the
# evidence while the writer was aborted).
for o in n1 k1; do
  grep -q "failed, no output written (the journal keeps every reply and failure" "$WORK/$o.err" ||
    { cat "$WORK/$o.err"; fail "$o: the run that scored nothing does not say that no output was written"; }
  [ ! -e "$WORK/$o.h5" ] || fail "$o: an output was written"
done
echo "e2e llama errors: context overflow, n = 2, 401: ok"
