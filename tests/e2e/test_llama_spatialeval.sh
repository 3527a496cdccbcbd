#!/usr/bin/env bash
# SpatialEval generation against a real llama.cpp server (llama-server, 4 slots, the tiny model of
# llama_model.py; replies shaped by the request-level `grammar` sent through the engine's "extra"):
# 11 of the demo items (the text ones of variant .0, every task) x 2 models x 2 seeds (44 units,
# temperature 0):
#  1. the run succeeds, every unit answered (no engine_error), most read by the strict parser;
#  2. the tables are identical on 1 and 2 ranks; a second 1-rank run gives the same answers:
#     temperature 0 is deterministic across slots and batches; that run asks for 16 requests in
#     flight and the engine caps them at the server's 4 slots (GET /props total_slots);
#  3. the server got exactly one request per unit (its log), each a body `--dry-run` lists;
#  4. a rerun with --cache sends 0 requests (the server's log and the run's own count) and gives
#     the same tables.
# Skipped (77) where build-llama/ (tools/llama-build.sh) is absent.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
. "$(dirname "$0")/llama_common.sh"
D="$TALLY_SRC/demo/spatialeval"
grep -E '"id": "[a-z]+\.tqa\.[^"]*\.0"' "$D/items.jsonl" > "$WORK/items.jsonl"
[ "$(wc -l < "$WORK/items.jsonl")" = 11 ] || fail "the demo items changed: $(wc -l < "$WORK/items.jsonl") selected, want 11"
EVID="source finish_reason latency_ms request_id endpoint"
SKIP=(); for c in $EVID; do SKIP+=(--skip "$c"); done
same() { # A B LABEL [SKIP...]
  local a=$1 b=$2 l=$3; shift 3
  "$PY" "$TALLY_SRC/tools/h5_same.py" "$a" "$b" /items /metrics /audit "$@" || fail "$l: the tables differ"
}
start_llama s -np 4 --log-verbose
job() { # NAME [CONCURRENCY: default {"initial": 4, "max": 4}]
  local conc=${2:-}; [ -n "$conc" ] || conc='{"initial": 4, "max": 4}'
  cat > "$WORK/$1.json" <<JOB
{"name": "llama-spatialeval", "output": "$WORK/$1.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$LL_PORT_s/v1",
   "sampling": {"temperature": 0, "max_tokens": 24},
   "extra": {"grammar": "root ::= \"Answer: \" [A-D] \"\\\\nReason: \" [a-z ]{0,20}"},
   "concurrency": $conc, "retries": {"max": 3, "backoff_s": 0.1},
   "timeouts": {"connect_s": 2, "request_s": 30}, "health": {"wait_s": 10}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$WORK/items.jsonl", "models": ["tiny-a", "tiny-b"],
                 "seeds": [0, 1], "parsers": ["strict", "pr3", "legacy"]}]}
JOB
}

# ---- 1. one rank ----
job r1
"$TALLY_BIN" run "$WORK/r1.json" > "$WORK/r1.txt" 2> "$WORK/r1.err" || { cat "$WORK/r1.err"; fail "the 1-rank run failed"; }
n1=$(llama_requests s)
[ "$n1" = 44 ] || { tail -5 "$WORK/r1.err"; fail "the server got $n1 requests for 44 units"; }
"$PY" - "$WORK/r1.h5" <<PY || fail "the answers of llama-server"
import sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
t = read_table(sys.argv[1], "/items/spatialeval")
err, st, txt = list(t["engine_error"]), list(t["status_strict"]), list(t["response"])
assert len(err) == 44 and all(e == "" for e in err), [e for e in err if e][:3]
assert all(x.startswith("Answer: ") and "\nReason: " in x for x in txt), [x for x in txt if not x.startswith("Answer: ")][:3]
ok = sum(s == "ok" for s in st)
assert ok >= 20, (ok, txt[:3])
assert set(t["served_model"]) <= {"tiny-a", "tiny-b"}, set(t["served_model"])
print("llama-server answered 44 units; the strict parser read %d; e.g. %r" % (ok, txt[0]))
PY

# ---- 2. two ranks; a second run ----
job r2
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/r2.json" --quiet > /dev/null 2> "$WORK/r2.err" ||
  { cat "$WORK/r2.err"; fail "the 2-rank run failed"; }
same "$WORK/r1.h5" "$WORK/r2.h5" "1 rank vs 2 ranks" "${SKIP[@]}"
# the second run asks for 16 in flight: llama-server's /props (total_slots 4) caps it at 4 (more
# connections than its 6 HTTP threads would starve)
job r3 '{"initial": 16, "max": 64}'
"$TALLY_BIN" run "$WORK/r3.json" --quiet > /dev/null 2> "$WORK/r3.err" || { cat "$WORK/r3.err"; fail "the second 1-rank run failed"; }
same "$WORK/r1.h5" "$WORK/r3.h5" "temperature 0 twice" "${SKIP[@]}"
"$PY" - "$WORK/r3.h5" <<'PY' || fail "the requests in flight were not capped by llama-server's slots (/props total_slots)"
import sys, h5py
g = h5py.File(sys.argv[1], "r")["/engine/model/concurrency"]
lim, why = list(g["limit"][()]), [w.decode() if isinstance(w, bytes) else w for w in g["why"][()]]
print("concurrency asked 16, history: %s" % list(zip(lim, why)))
assert max(lim[1:] or [0]) <= 4 and lim[-1] <= 4 and "slots" in why, (lim, why)
# llama-server's own timings of every reply, summed against the latency tally saw
import json
a = h5py.File(sys.argv[1], "r").attrs["model_http"]
h = json.loads(a.decode() if isinstance(a, bytes) else a)
assert h["server_timed"] == 44 and 0 < h["server_us"] <= h["latency_timed_us"], h
print("server timings: %d replies, the server worked %.0f%% of their latency" %
      (h["server_timed"], 100.0 * h["server_us"] / h["latency_timed_us"]))
PY

# ---- 3. one request per unit, each a body the job defines ----
job d1
"$TALLY_BIN" run "$WORK/d1.json" --dry-run > /dev/null 2> "$WORK/d1.err" || { cat "$WORK/d1.err"; fail "--dry-run failed"; }
llama_bodies s > "$WORK/bodies.jsonl"
"$PY" - "$WORK/d1.h5.requests.jsonl" "$WORK/bodies.jsonl" <<'PY' || fail "the requests the server got are not the job's, once per unit and run"
import collections, json, sys
want = {json.dumps(json.loads(l)["body"], sort_keys=True) for l in open(sys.argv[1])}
got = collections.Counter(l.strip() for l in open(sys.argv[2]))
assert len(want) == 44, len(want)
assert set(got) == want, (len(set(got) - want), len(want - set(got)))
assert set(got.values()) == {3}, collections.Counter(got.values())  # runs 1, 2 and 3
print("the server got each of the 44 request bodies once per run")
PY

# ---- 4. the cache ----
job c1
"$TALLY_BIN" run "$WORK/c1.json" --cache "$WORK/cache" --quiet > /dev/null 2> "$WORK/c1.err" || { cat "$WORK/c1.err"; fail "cached run 1 failed"; }
before=$(llama_requests s)
sed -i "s#$WORK/c1.h5#$WORK/c2.h5#" "$WORK/c1.json"
"$TALLY_BIN" run "$WORK/c1.json" --cache "$WORK/cache" > /dev/null 2> "$WORK/c2.err" || { cat "$WORK/c2.err"; fail "cached run 2 failed"; }
after=$(llama_requests s)
[ "$after" = "$before" ] || fail "the rerun with --cache sent $((after - before)) requests to llama-server"
grep -q "model engine: 0 requests sent, 0 replies, 44 from the cache" "$WORK/c2.err" || { cat "$WORK/c2.err"; fail "no 0-requests line"; }
same "$WORK/r1.h5" "$WORK/c2.h5" "from the cache" "${SKIP[@]}" --skip attempts --skip cached
echo "e2e llama spatialeval: 1 and 2 ranks, temperature 0 twice, one request per unit, cache: ok"
