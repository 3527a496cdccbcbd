#!/usr/bin/env bash
# Interruptions against a real llama.cpp server (llama-server, the tiny model of llama_model.py,
# replies shaped by a request-level `grammar`), SpatialEval generation on 11 demo items x 2 models
# x 4 seeds (88 units, temperature 0):
#  1. tally killed with SIGKILL mid-run, then `--resume`: no unit whose reply was journaled is
#     asked again (each request body counted in llama-server's --log-verbose log, mapped to its
#     unit by `--dry-run`), and the tables equal an uninterrupted run's;
#  2. llama-server killed (-9) mid-run and started again on its port a second later: the job
#     completes, every unit answered (retried over the refused connections), the tables equal
#     the uninterrupted run's.
# Skipped (77) where build-llama/ (tools/llama-build.sh) is absent.
. "$(dirname "$0")/common.sh"
need_python
. "$(dirname "$0")/llama_common.sh"
D="$TALLY_SRC/demo/spatialeval"
grep -E '"id": "[a-z]+\.tqa\.[^"]*\.0"' "$D/items.jsonl" > "$WORK/items.jsonl"
[ "$(wc -l < "$WORK/items.jsonl")" = 11 ] || fail "the demo items changed"
SKIP=(); for c in source finish_reason latency_ms request_id endpoint attempts; do SKIP+=(--skip "$c"); done
same() { # OUT LABEL
  "$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/r0.h5" "$1" /items /metrics /audit "${SKIP[@]}" ||
    fail "$2: the tables differ from the uninterrupted run's"
}
start_llama s -np 2 --log-verbose
job() { # NAME PORT
  cat > "$WORK/$1.json" <<JOB
{"name": "llama-resume", "output": "$WORK/$1.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$2/v1",
   "sampling": {"temperature": 0, "max_tokens": 24},
   "extra": {"grammar": "root ::= \"Answer: \" [A-D] \"\\\\nReason: \" [a-z ]{0,20}"},
   "concurrency": {"initial": 2, "max": 2}, "retries": {"max": 10, "backoff_s": 0.2, "backoff_max_s": 1},
   "timeouts": {"connect_s": 2, "request_s": 30}, "health": {"wait_s": 10}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$WORK/items.jsonl", "models": ["tiny-a", "tiny-b"],
                 "seeds": [0, 1, 2, 3], "parsers": ["strict", "pr3", "legacy"]}]}
JOB
}
job r0 "$LL_PORT_s"
"$TALLY_BIN" run "$WORK/r0.json" --quiet > /dev/null 2> "$WORK/r0.err" || { cat "$WORK/r0.err"; fail "the uninterrupted run failed"; }
n0=$(llama_requests s)
[ "$n0" = 88 ] || fail "the uninterrupted run sent $n0 requests for 88 units"

# ---- 1. kill -9 mid-run, then --resume ----
job k1 "$LL_PORT_s"
"$TALLY_BIN" run "$WORK/k1.json" --dry-run > /dev/null 2> "$WORK/d.err" || { cat "$WORK/d.err"; fail "--dry-run failed"; }
lines() { cat "$WORK"/k1.h5.journal/*.jsonl 2> /dev/null | grep -c '"st":0' || true; }
setsid "$TALLY_BIN" run "$WORK/k1.json" --quiet > /dev/null 2>&1 &
PG=$!
for _ in $(seq 300); do [ "$(lines)" -ge 20 ] && break; sleep 0.05; done
kill_session "$PG"
cat "$WORK"/k1.h5.journal/*.jsonl | "$PY" -c '
import json, sys
for l in sys.stdin:
    try: r = json.loads(l)
    except ValueError: continue  # a line cut by the kill
    if r.get("st") == 0 and "id" in r: print("/".join([r["b"], r["id"], r["m"], r["v"], str(r["s"]), str(r["t"]), "0"]))' \
  | sort -u > "$WORK/journaled.txt"
nj=$(wc -l < "$WORK/journaled.txt")
[ "$nj" -ge 20 ] && [ "$nj" -lt 88 ] || fail "not killed mid-run ($nj units journaled)"
"$TALLY_BIN" run "$WORK/k1.json" --resume --break-lock --quiet > /dev/null 2> "$WORK/k2.err" || { cat "$WORK/k2.err"; fail "--resume after kill -9 failed"; }
llama_bodies s > "$WORK/bodies.jsonl"
"$PY" - "$WORK/k1.h5.requests.jsonl" "$WORK/bodies.jsonl" "$WORK/journaled.txt" <<'PY' || fail "a unit journaled before the kill was asked again"
import collections, json, sys
body = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    body[r["key"]] = json.dumps(r["body"], sort_keys=True)
got = collections.Counter(l.strip() for l in open(sys.argv[2]))
j = [l.strip() for l in open(sys.argv[3]) if l.strip()]
assert len(body) == 88 and all(k in body for k in j), (len(body), j[:2])
# every body was sent once by the uninterrupted run; a journaled unit once more (before the kill)
again = [k for k in j if got[body[k]] != 2]
assert not again, [(k, got[body[k]]) for k in again[:5]]
rest = [k for k in body if k not in j]
assert all(got[body[k]] >= 2 for k in rest), "a unit never asked"
resent = sum(got[body[k]] - 2 for k in rest)
print("kill -9 with %d of 88 units journaled: none asked again on --resume (%d in flight at the kill asked twice)" % (len(j), resent))
PY
same "$WORK/k1.h5" "resumed after kill -9"

# ---- 2. llama-server killed and started again mid-run ----
job x1 "$LL_PORT_s"
before=$(llama_requests s)
"$TALLY_BIN" run "$WORK/x1.json" > /dev/null 2> "$WORK/x1.err" &
TP=$!
for _ in $(seq 300); do [ $(( $(llama_requests s) - before )) -ge 20 ] && break; sleep 0.05; done
[ $(( $(llama_requests s) - before )) -ge 20 ] || fail "the run did not get going"
stop_llama s
sleep 1
start_llama s --port "$LL_PORT_s" -np 2 --log-verbose
rc=0; wait "$TP" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/x1.err"; fail "the run through a server restart: exit $rc"; }
grep -q ", 0 gave up" "$WORK/x1.err" || { cat "$WORK/x1.err"; fail "units gave up across the restart"; }
grep -Eq ", [1-9][0-9]* retries" "$WORK/x1.err" || { cat "$WORK/x1.err"; fail "no request was retried: the server was not restarted mid-run"; }
same "$WORK/x1.h5" "llama-server restarted mid-run"
grep "model engine:" "$WORK/x1.err" | sed 's/^tally: /restart: /'
echo "e2e llama resume: kill -9 and --resume, llama-server restarted mid-run: ok"
