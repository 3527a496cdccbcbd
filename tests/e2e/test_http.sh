#!/usr/bin/env bash
# The openai engine against the project's test server (tools/testserver), on the SpatialEval demo
# items with the demo answers of toy-vlm-a (108 units) as the server's canned replies:
#  1. twin: the openai job gives the tables of its replay twin (every column but `source` and the
#     evidence columns), at 1 rank and at 2 ranks with one server per rank ({port});
#  1b. idle connections: a server that closes keep-alive connections idle for 100 ms (as uvicorn's
#     keep-alive timeout does), with replies spread over 2.5 s so that connections idle while
#     others wait: the tables are the twin's, every unit answered once, and tally, which keeps
#     its idle sockets in its epoll set, takes them out when they close instead of spinning on
#     them (its CPU time stays far below the ~2.5 s a busy loop over the wait would take);
#  1c. a small job fills the server: every request its concurrency allows is in flight at once;
#      without "key_header" the job sends no X-Tally-Key header;
#  1d. a larger job keeps the server full while holding few requests built and waiting;
#  2. faults: under 20% injected faults of every kind the job completes and the server answered
#     every unit exactly once (its count per unit key; a `content: null` reply is no answer: it is
#     retried, never scored as an empty one), and the tables are the twin's;
#  3. permanent failures: units the server always refuses end as engine_error (counted in
#     n_engine_error, in n with correct 0), exit 0; --resume of a kept journal asks them again;
#  4. kill -9 mid-run, then --resume: no unit journaled before the kill is sent again;
#  5. the cache: a second run with --cache sends nothing and gives the same tables;
#  6. --dry-run writes every request (fields as the job sets them) and sends none;
#  7. a server that never comes up, or a URL that does not parse, is a clear error naming it; an
#     unset API key variable is exit 2, and a set key never reaches the output or the journal;
#     <think> blocks are stripped; the proxy variables (http_proxy, no_proxy) are honoured.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
SRV="$(dirname "$TALLY_BIN")/tally-testserver"
[ -x "$SRV" ] || fail "no $SRV (built with tally)"
D="$TALLY_SRC/demo/spatialeval"
EVID="engine_error finish_reason prompt_tokens completion_tokens latency_ms attempts cached served_model request_id endpoint raw_response"
SKIP=(--skip source); for c in $EVID; do SKIP+=(--skip "$c"); done
same_as_twin() { # OUT LABEL
  "$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/twin.h5" "$1" /items /metrics /audit "${SKIP[@]}" ||
    fail "$2: the tables differ from the replay twin's"
}

PIDS=()
cleanup_servers() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap 'cleanup_servers; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
# start_server NAME ARGS...: a server on a free port; sets PORT_<NAME> and PID_<NAME>
start_server() {
  local name=$1; shift
  : > "$WORK/$name.out" # exists before the server opens it: the loop below may read it first
  "$SRV" --port 0 --stats "$WORK/$name.stats.json" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" &
  local pid=$! port=""
  PIDS+=("$pid")
  for _ in $(seq 400); do
    port=$(sed -n 's/^tally-testserver: listening on .*:\([0-9][0-9]*\)$/\1/p' "$WORK/$name.out")
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { cat "$WORK/$name.err"; fail "the test server $name did not start"; }
  eval "PORT_$name=$port PID_$name=$pid"
}
stop_server() { # NAME: SIGTERM, its stats written
  local pid; eval "pid=\$PID_$1"
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -s "$WORK/$1.stats.json" ] || fail "the test server $1 wrote no stats"
}

# the canned replies: the demo answers of toy-vlm-a, by unit key; and the replay twin
"$PY" - "$D/answers.jsonl" "$WORK/replies.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        d = json.loads(line)
        if d["model"] != "toy-vlm-a": continue
        key = "/".join(["spatialeval", d["id"], d["model"], d["prompt_variant"], str(d["seed"]), "0", "0"])
        out.write(json.dumps({"key": key, "response": d["response"]}) + "\n")
PY
cat > "$WORK/twin.json" <<JOB
{"name": "twin", "output": "$WORK/twin.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "answers": "$D/answers.jsonl",
                 "models": ["toy-vlm-a"], "parsers": ["strict", "pr3", "legacy"]}]}
JOB
"$TALLY_BIN" run "$WORK/twin.json" --quiet > /dev/null || fail "the replay twin failed"

# job NAME URLS [ENGINE EXTRA]: the openai job writing $WORK/NAME.h5
job() {
  cat > "$WORK/$1.json" <<JOB
{"name": "http", "output": "$WORK/$1.h5",
 "engines": {"model": {"type": "openai", $2, "key_header": true,
   "sampling": {"temperature": 0, "max_tokens": 256}, "extra": {"top_k": 1},
   "retries": {"max": 10, "backoff_s": 0.02, "backoff_max_s": 0.2},
   "timeouts": {"connect_s": 2, "request_s": 1}, "health": {"wait_s": 5}${3:-}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "models": ["toy-vlm-a"],
                 "seeds": [0, 1, 2], "parsers": ["strict", "pr3", "legacy"]}]}
JOB
}
keys_ok() { # STATS: distinct keys; every key's ok count (sorted, unique); most requests of a key
  "$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))
k = s["keys"]
print(len(k), sorted(set(v["ok"] for v in k.values())), max(v["requests"] for v in k.values()), s["requests"])' "$1"
}

# ---- 1. twin, 1 rank; 2 ranks with a server each ----
start_server a --replies "$WORK/replies.jsonl"
job t1 "\"url\": \"http://127.0.0.1:$PORT_a/v1\""
"$TALLY_BIN" run "$WORK/t1.json" --quiet > "$WORK/t1.txt" 2> "$WORK/t1.err" || { cat "$WORK/t1.err"; fail "openai run failed"; }
same_as_twin "$WORK/t1.h5" "1 rank"
start_server b --replies "$WORK/replies.jsonl"
# {port} = port_base + local rank: rank 0 asks server a, rank 1 server b (consecutive ports are
# not guaranteed here, so a list of two URLs, spread over the node's two ranks)
job t2 "\"urls\": [\"http://127.0.0.1:$PORT_a/v1\", \"http://127.0.0.1:$PORT_b/v1\"]"
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/t2.json" --quiet > /dev/null 2> "$WORK/t2.err" ||
  { cat "$WORK/t2.err"; fail "2-rank openai run failed"; }
same_as_twin "$WORK/t2.h5" "2 ranks"
stop_server a; stop_server b
read -r na _ <<< "$(keys_ok "$WORK/a.stats.json")"; read -r nb _ <<< "$(keys_ok "$WORK/b.stats.json")"
[ "$nb" -gt 0 ] || fail "the second rank's server got no request"
[ $((na)) -ge 108 ] || fail "server a saw $na keys"
"$PY" - "$WORK/t1.h5" <<PY || fail "evidence columns"
import sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
t = read_table(sys.argv[1], "/items/spatialeval")
def col(n): return list(t[n])
assert set(col("finish_reason")) == {"stop"}, set(col("finish_reason"))
assert set(col("attempts")) == {1} and set(col("cached")) == {0}
assert all(t > 0 for t in col("completion_tokens")) and all(x > 0 for x in col("latency_ms"))
assert all(r.startswith("req-") for r in col("request_id")) and col("source") == col("request_id")
assert set(col("served_model")) == {"toy-vlm-a"}
print("evidence columns: ok (%d rows)" % len(col("id")))
PY

# ---- 1b. idle keep-alive connections closed by the server ----
start_server i --replies "$WORK/replies.jsonl" --jitter-ms 2500 --idle-close-ms 100 --seed 3
cat > "$WORK/i1.json" <<JOB
{"name": "http", "output": "$WORK/i1.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$PORT_i/v1", "key_header": true,
   "sampling": {"temperature": 0, "max_tokens": 256}, "extra": {"top_k": 1},
   "concurrency": {"initial": 8, "min": 8, "max": 8}, "timeouts": {"connect_s": 2, "request_s": 10}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "models": ["toy-vlm-a"],
                 "seeds": [0, 1, 2], "parsers": ["strict", "pr3", "legacy"]}]}
JOB
TIMEFORMAT='%U %S'
{ time "$TALLY_BIN" run "$WORK/i1.json" --quiet > /dev/null 2> "$WORK/i1.err"; } 2> "$WORK/i1.time" ||
  { cat "$WORK/i1.err"; fail "run against a server closing idle connections failed"; }
unset TIMEFORMAT
stop_server i
same_as_twin "$WORK/i1.h5" "idle connections closed"
read -r nk oks _ <<< "$(keys_ok "$WORK/i.stats.json")"
[ "$nk" = 108 ] && [ "$oks" = "[1]" ] || fail "idle closes: not every unit answered exactly once ($nk keys, ok counts $oks)"
closed=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["idle_closed"])' "$WORK/i.stats.json")
cpu=$(awk '{print $1 + $2}' "$WORK/i1.time")
echo "idle closes: $closed connections closed idle by the server; tally used $cpu s of CPU"
[ "$closed" -gt 0 ] || fail "the server closed no idle connection: the case was not exercised"
awk -v c="$cpu" 'BEGIN{exit !(c < 1.2)}' || fail "tally used $cpu s of CPU over ~2.5 s of waiting (spinning on closed sockets?)"

# ---- 1c. a small job fills the server: its 108 units make chunks of 13, and the rank takes
# chunks while its engine has room, so all 64 requests the job allows are in flight at once ----
start_server c --replies "$WORK/replies.jsonl" --latency-ms 100
job c1 "\"url\": \"http://127.0.0.1:$PORT_c/v1\"" ', "concurrency": {"initial": 64, "min": 64, "max": 64}'
"$TALLY_BIN" run "$WORK/c1.json" --quiet > /dev/null 2> "$WORK/c1.err" || { cat "$WORK/c1.err"; fail "the 64-in-flight run failed"; }
stop_server c
mx=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["max_in_flight"])' "$WORK/c.stats.json")
[ "$mx" = 64 ] || fail "a 108-unit job with 64 requests allowed held at most $mx in flight"
same_as_twin "$WORK/c1.h5" "64 in flight"
# without "key_header" tally sends no X-Tally-Key header: the server keys every request by its body
start_server nokey
job nk1 "\"url\": \"http://127.0.0.1:$PORT_nokey/v1\""
sed -i 's/ "key_header": true,//' "$WORK/nk1.json"
"$TALLY_BIN" run "$WORK/nk1.json" --quiet > /dev/null 2> "$WORK/nk1.err" || { cat "$WORK/nk1.err"; fail "the run without key_header failed"; }
stop_server nokey
"$PY" -c 'import json, sys; k = json.load(open(sys.argv[1]))["keys"]; assert len(k) == 108 and all(x.startswith("body:") for x in k), list(k)[:3]' \
  "$WORK/nokey.stats.json" || fail "a job without key_header sent its unit keys"

# ---- 1d. a larger job (1,080 units: chunks of 135) starts its units in step with the replies:
# the engine keeps 64 requests in flight, and tally holds at most 64 + 64/4 + 16 = 96 units
# started, so at most 96 request bodies built and waiting (all of them at the start, before the
# first is sent); starting whole chunks at once, it held 202 (a VQA image each) ----
start_server w --latency-ms 20
cat > "$WORK/w1.json" <<JOB
{"name": "w", "output": "$WORK/w1.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$PORT_w/v1", "sampling": {"temperature": 0},
   "concurrency": {"initial": 64, "min": 64, "max": 64}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "models": ["toy-vlm-a"],
                 "seeds": [$(seq -s, 0 29)]}]}
JOB
"$TALLY_BIN" run "$WORK/w1.json" --quiet > /dev/null 2> "$WORK/w1.err" || { cat "$WORK/w1.err"; fail "the 1,080-unit run failed"; }
stop_server w
"$PY" - "$WORK/w1.h5" "$WORK/w.stats.json" <<'PY' || fail "the 1,080-unit run did not keep its waiting requests bounded"
import h5py, json, sys
with h5py.File(sys.argv[1], "r") as f:
    a = f.attrs["model_http"]
    s = json.loads(a.decode() if isinstance(a, bytes) else a)
held = json.load(open(sys.argv[2]))["max_in_flight"]
print("1,080 units at 64 in flight: the server held at most %d, tally had at most %d waiting" % (held, s["max_waiting"]))
assert s["replies"] == 1080, s
assert held == 64, held
assert 1 <= s["max_waiting"] <= 64 + 64 // 4 + 16, s
PY

# ---- 2. 20% faults of every kind: exactly once, and the twin's tables (null content retried) ----
start_server f --replies "$WORK/replies.jsonl" --faults 0.2 --stall-ms 3000 --retry-after 1 --seed 7
job f1 "\"url\": \"http://127.0.0.1:$PORT_f/v1\""
"$TALLY_BIN" run "$WORK/f1.json" --quiet > /dev/null 2> "$WORK/f1.err" || { cat "$WORK/f1.err"; fail "run under faults failed"; }
stop_server f
read -r nk oks maxreq total <<< "$(keys_ok "$WORK/f.stats.json")"
echo "20% faults: $total requests for $nk units; ok per unit: $oks; most requests for one unit: $maxreq"
[ "$nk" = 108 ] && [ "$oks" = "[1]" ] || fail "not every unit answered exactly once ($nk keys, ok counts $oks)"
[ "$total" -gt 108 ] || fail "no fault was injected"
same_as_twin "$WORK/f1.h5" "20% faults of every kind, content null among them"
start_server g --replies "$WORK/replies.jsonl" --faults 0.2 --fault-kinds 429,500,stall,malformed,drop,truncate \
  --stall-ms 3000 --retry-after 1 --seed 8
job f2 "\"url\": \"http://127.0.0.1:$PORT_g/v1\""
"$TALLY_BIN" run "$WORK/f2.json" --quiet > /dev/null 2> "$WORK/f2.err" || { cat "$WORK/f2.err"; fail "run under faults failed"; }
same_as_twin "$WORK/f2.h5" "20% faults"
stop_server g

# ---- 3. permanent failures ----
start_server p --replies "$WORK/replies.jsonl" --fail-match "spatialmap.tqa.2000" --fail-status 500
job p1 "\"url\": \"http://127.0.0.1:$PORT_p/v1\""
sed -i 's/"max": 10,/"max": 2,/' "$WORK/p1.json"
"$TALLY_BIN" run "$WORK/p1.json" --quiet --keep-journal > "$WORK/p1.txt" 2> "$WORK/p1.err" ||
  { cat "$WORK/p1.err"; fail "a run with permanent failures must still finish"; }
grep -q "engine_error=9" "$WORK/p1.txt" || { cat "$WORK/p1.txt"; fail "the summary does not count 9 engine errors"; }
"$PY" - "$WORK/p1.h5" <<PY || fail "engine_error rows"
import sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
def col(g, n): return list(g[n])
g = read_table(sys.argv[1], "/items/spatialeval")
assert len(g) == 108
ids, st, err, ok = col(g, "id"), col(g, "status_strict"), col(g, "engine_error"), col(g, "has_response")
bad = [i for i, x in enumerate(ids) if x.startswith("spatialmap.tqa.2000.")]
assert len(bad) == 9, len(bad)
for i in range(len(ids)):
    if i in bad:
        # the server's words kept; the same words twice: a request it can never serve, not
        # retried to the end of "max"
        assert st[i] == "engine_error" and "HTTP 500: request matched --fail-match" in err[i] and \
            "2 attempts" in err[i] and ok[i] == 0, (st[i], err[i])
    else:
        assert st[i] != "engine_error" and err[i] == ""
m = read_table(sys.argv[1], "/metrics/spatialeval/strict")
n, c, a, ne = col(m, "n"), col(m, "correct"), col(m, "accuracy"), col(m, "n_engine_error")
assert sum(ne) == 3 * 9  # each unit is in its task x mode row, its qid row and its model's overall row
for i in range(len(n)):
    assert abs(a[i] - c[i] / n[i]) < 1e-15  # one policy (docs/OUTPUT.md): an engine error is in n and scores 0
print("permanent failures: 9 units engine_error, counted in n with correct 0")
PY
# --resume of the kept journal asks exactly the failed units again (the server now answers them),
# though the server came back on another port and the job's url, retries and timeouts changed
# with it: the journal's job hash leaves out where and how the server is reached
stop_server p
start_server q --replies "$WORK/replies.jsonl"
sed -i "s|127.0.0.1:$PORT_p/|127.0.0.1:$PORT_q/|; s/\"max\": 2,/\"max\": 10,/; s/\"request_s\": 1}/\"request_s\": 2}/" "$WORK/p1.json"
grep -q "127.0.0.1:$PORT_q/" "$WORK/p1.json" && grep -q '"request_s": 2}' "$WORK/p1.json" || fail "the job was not edited"
rm -f "$WORK/p1.h5"
"$TALLY_BIN" run "$WORK/p1.json" --resume --quiet > /dev/null 2> "$WORK/p2.err" || { cat "$WORK/p2.err"; fail "resume after engine errors failed"; }
stop_server q
read -r nk _ _ total <<< "$(keys_ok "$WORK/q.stats.json")"
[ "$nk" = 9 ] && [ "$total" = 9 ] || fail "--resume asked $total requests for $nk units, want the 9 that failed"
same_as_twin "$WORK/p1.h5" "resumed after engine errors"

# ---- 4. kill -9 mid-run, then --resume: nothing journaled is sent again ----
start_server k --replies "$WORK/replies.jsonl" --latency-ms 150
job k1 "\"url\": \"http://127.0.0.1:$PORT_k/v1\"" ', "concurrency": {"initial": 4, "max": 4}'
setsid "$TALLY_BIN" run "$WORK/k1.json" --quiet > /dev/null 2>&1 &
PG=$!
lines() { cat "$WORK"/k1.h5.journal/*.jsonl 2>/dev/null | grep -c '"st":0' || true; }
for _ in $(seq 100); do [ "$(lines)" -ge 30 ] && break; sleep 0.1; done
kill_session "$PG"
cat "$WORK"/k1.h5.journal/*.jsonl | "$PY" -c '
import json, sys
for l in sys.stdin:
    try: r = json.loads(l)
    except ValueError: continue
    if r.get("st") == 0 and "id" in r: print("/".join([r["b"], r["id"], r["m"], r["v"], str(r["s"]), str(r["t"]), "0"]))' \
  | sort -u > "$WORK/journaled.txt"
nj=$(wc -l < "$WORK/journaled.txt")
[ "$nj" -ge 30 ] && [ "$nj" -lt 108 ] || fail "not killed mid-run ($nj units journaled)"
"$TALLY_BIN" run "$WORK/k1.json" --resume --break-lock --quiet > /dev/null 2> "$WORK/k2.err" || { cat "$WORK/k2.err"; fail "resume after kill -9 failed"; }
stop_server k
"$PY" - "$WORK/k.stats.json" "$WORK/journaled.txt" <<'PY' || fail "a request journaled before the kill was sent again"
import json, sys
k = json.load(open(sys.argv[1]))["keys"]
j = [l.strip() for l in open(sys.argv[2]) if l.strip()]
again = [x for x in j if k[x]["requests"] != 1]
assert not again, again[:5]
assert len(k) == 108 and all(v["ok"] >= 1 for v in k.values())
print("kill -9 with %d units journaled; on resume none of them was sent again" % len(j))
PY
same_as_twin "$WORK/k1.h5" "resumed after kill -9"

# ---- 5. the cache: a second run sends nothing ----
start_server c --replies "$WORK/replies.jsonl"
job c1 "\"url\": \"http://127.0.0.1:$PORT_c/v1\""
"$TALLY_BIN" run "$WORK/c1.json" --force --cache "$WORK/cache" --quiet > /dev/null 2> "$WORK/c1.err" || { cat "$WORK/c1.err"; fail "cached run 1 failed"; }
sed -i "s#$WORK/c1.h5#$WORK/c2.h5#" "$WORK/c1.json"
"$TALLY_BIN" run "$WORK/c1.json" --cache "$WORK/cache" > /dev/null 2> "$WORK/c2.err" || { cat "$WORK/c2.err"; fail "cached run 2 failed"; }
stop_server c
read -r nk _ _ total <<< "$(keys_ok "$WORK/c.stats.json")"
[ "$total" = 108 ] || fail "with the cache the server got $total requests over two runs, want 108"
grep -q "model engine: 0 requests sent, 0 replies, 108 from the cache" "$WORK/c2.err" || { cat "$WORK/c2.err"; fail "no cache hit count"; }
same_as_twin "$WORK/c2.h5" "from the cache"
[ "$(find "$WORK/cache" -name '*.json' | wc -l)" = 108 ] || fail "the cache does not hold 108 replies"
[ -z "$(find "$WORK/cache" -name '*.tmp')" ] || fail "temporary files left in the cache"

# ---- 6. --dry-run: every request, none sent ----
start_server d --replies "$WORK/replies.jsonl"
job d1 "\"url\": \"http://127.0.0.1:$PORT_d/v1\""
"$TALLY_BIN" run "$WORK/d1.json" --dry-run > "$WORK/d1.txt" 2> "$WORK/d1.err" || { cat "$WORK/d1.err"; fail "--dry-run failed"; }
stop_server d
[ ! -e "$WORK/d1.h5" ] && [ ! -e "$WORK/d1.h5.journal" ] || fail "--dry-run wrote an output or a journal"
read -r _ _ _ total <<< "$(keys_ok "$WORK/d.stats.json" 2>/dev/null || echo 0 0 0 0)"
"$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["requests"] == 0' "$WORK/d.stats.json" || fail "--dry-run sent a request"
grep -q "^wrote $WORK/d1.h5.requests.jsonl" "$WORK/d1.txt" || { cat "$WORK/d1.txt"; fail "no dry-run file named"; }
"$PY" - "$WORK/d1.h5.requests.jsonl" <<'PY' || fail "dry-run requests"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 108, len(rows)
keys = set(r["key"] for r in rows)
assert len(keys) == 108
for r in rows:
    b = r["body"]
    assert r["role"] == "model" and r["cached"] is False and r["url"].endswith("/v1/chat/completions")
    assert b["model"] == "toy-vlm-a" and b["temperature"] == 0 and b["max_tokens"] == 256 and b["top_k"] == 1
    assert b["seed"] == int(r["key"].split("/")[4])
    c = b["messages"][-1]["content"]  # a vqa item's is [text, its image] (demo/spatialeval/images)
    assert isinstance(c, list) == (".vqa." in r["key"]), r["key"]
    t = c if isinstance(c, str) else "".join(p.get("text", "") for p in c)
    assert b["messages"][-1]["role"] == "user" and "Answer" in t or len(t) > 20
    assert list(b) == sorted(b), "body keys not sorted"
print("dry run: 108 requests, fields as set, keys sorted, none sent")
PY
# its file never replaces an input
"$TALLY_BIN" run "$WORK/d1.json" --dry-run="$D/items.jsonl" > /dev/null 2> "$WORK/d2.err" && fail "--dry-run over an input was accepted"
grep -q "items" "$WORK/d2.err" || { cat "$WORK/d2.err"; fail "no clear message for --dry-run over an input"; }

# ---- 7. a server that never comes up; API keys; <think> ----
job h1 "\"url\": \"http://127.0.0.1:9/v1\""
sed -i 's/"wait_s": 5/"wait_s": 1/' "$WORK/h1.json"
rc=0; "$TALLY_BIN" run "$WORK/h1.json" --quiet > /dev/null 2> "$WORK/h1.err" || rc=$?
[ "$rc" = 1 ] || fail "an endpoint that never came up: exit $rc, want 1"
grep -q "endpoint http://127.0.0.1:9/v1 did not come up within 1 s" "$WORK/h1.err" || { cat "$WORK/h1.err"; fail "the message does not name the endpoint"; }
[ ! -e "$WORK/h1.h5" ] || fail "an output was written"
# a URL libcurl cannot parse is refused before any work, naming it
job bu1 "\"url\": \"http://127.0.0.1:99999/v1\""
rc=0; "$TALLY_BIN" run "$WORK/bu1.json" --quiet > /dev/null 2> "$WORK/bu1.err" || rc=$?
[ "$rc" = 2 ] || fail "a malformed endpoint URL: exit $rc, want 2"
grep -q "endpoint URL 'http://127.0.0.1:99999/v1/chat/completions'" "$WORK/bu1.err" || { cat "$WORK/bu1.err"; fail "the message does not name the URL"; }
[ ! -e "$WORK/bu1.h5" ] || fail "an output was written for a malformed URL"
start_server t --replies "$WORK/replies.jsonl" --reasoning think
job s1 "\"url\": \"http://127.0.0.1:$PORT_t/v1\", \"api_key_env\": \"TALLY_TEST_KEY\""
rc=0; env -u TALLY_TEST_KEY "$TALLY_BIN" run "$WORK/s1.json" --quiet > /dev/null 2> "$WORK/s1.err" || rc=$?
[ "$rc" = 2 ] && grep -q "TALLY_TEST_KEY" "$WORK/s1.err" || { cat "$WORK/s1.err"; fail "an unset key variable: exit $rc, want 2 naming it"; }
TALLY_TEST_KEY=sk-secret-4f2a9 "$TALLY_BIN" run "$WORK/s1.json" --quiet --keep-journal > /dev/null 2> "$WORK/s2.err" ||
  { cat "$WORK/s2.err"; fail "run with an API key failed"; }
# the evidence columns of a run resumed from that finished journal (read back from the journaled
# meta) are those of the run itself (the fields the engine handed over with each reply)
mv "$WORK/s1.h5" "$WORK/s1a.h5"
TALLY_TEST_KEY=sk-secret-4f2a9 "$TALLY_BIN" run "$WORK/s1.json" --quiet --resume --keep-journal > /dev/null 2> "$WORK/s3.err" ||
  { cat "$WORK/s3.err"; fail "--resume of a finished journal failed"; }
"$PY" - "$WORK/s1a.h5" "$WORK/s1.h5" <<PY || fail "the evidence read back from the journal differs from the engine's"
import math, sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
a, b = (read_table(p, "/items/spatialeval") for p in sys.argv[1:3])
cols = ["engine_error", "finish_reason", "prompt_tokens", "completion_tokens", "latency_ms", "attempts", "cached",
        "served_model", "request_id", "endpoint", "raw_response"]
for c in cols:
    x, y = list(a[c]), list(b[c])
    assert len(x) == 108 and all(p == q or (isinstance(p, float) and math.isnan(p) and math.isnan(q)) for p, q in zip(x, y)), (c, x[:3], y[:3])
assert all(v > 0 for v in a["latency_ms"]) and set(a["attempts"]) == {1} and set(a["finish_reason"]) == {"stop"}
PY
# the proxy variables are honoured for every request: with the server standing in as the proxy
# (it serves the absolute-form requests a proxy gets) and the job's URL a closed port, the run
# succeeds only through the proxy; no_proxy naming that host sends it to the closed port again
job p1 "\"url\": \"http://127.0.0.1:9/v1\""
sed -i 's/"wait_s": 5/"wait_s": 1/' "$WORK/p1.json"
http_proxy=http://127.0.0.1:$PORT_t "$TALLY_BIN" run "$WORK/p1.json" --force --quiet > /dev/null 2> "$WORK/p1.err" ||
  { cat "$WORK/p1.err"; fail "http_proxy naming a live proxy: the run failed"; }
same_as_twin "$WORK/p1.h5" "through a proxy"
rm -f "$WORK/p1.h5"
rc=0; http_proxy=http://127.0.0.1:$PORT_t no_proxy=127.0.0.1 "$TALLY_BIN" run "$WORK/p1.json" --quiet > /dev/null 2> "$WORK/p2.err" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/p2.err"; fail "no_proxy naming the host: exit $rc, want 1 (the closed port)"; }
stop_server t
! grep -rq "sk-secret-4f2a9" "$WORK/s1.h5" "$WORK/s1a.h5" "$WORK/s1.h5.journal" "$WORK/s2.err" || fail "the API key reached the output, journal or log"
same_as_twin "$WORK/s1.h5" "<think> stripped"
"$PY" - "$WORK/s1.h5" <<PY || fail "raw_response keeps the think block"
import sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
raw = list(read_table(sys.argv[1], "/items/spatialeval")["raw_response"])
assert len(raw) == 108 and all(r.startswith("<think>") for r in raw), raw[:2]
PY
echo "e2e http: twin, faults, permanent failures, kill/resume, cache, dry run, health, keys, think, proxy: ok"
