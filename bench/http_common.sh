# http_common.sh - sourced by bench/http_engine.sh and bench/http_instr.sh: the test server and
# the jobs both measure.
#
# http_server T [ARGS...]: starts tools/testserver (50 ms latency) on a free port with ARGS,
#   under $SRV_PIN (e.g. "taskset -c 1"; empty: wherever the scheduler puts it); sets SRVPID and
#   PORT. The caller's EXIT trap kills SRVPID.
# http_jobs T IN S: writes T/http.json (the SpatialEval demo's 36 items x S seeds of one model
#   through the openai engine at PORT, concurrency pinned at IN), T/replay.json (its replay twin:
#   the same units answered from T/answers.jsonl) and T/body.json (the job's first request body,
#   from --dry-run, for bench/http_floor).
http_server() {
  local t=$1; shift
  ${SRV_PIN:-} "$BUILD/tally-testserver" --port 0 --latency-ms 50 "$@" > "$t/srv.out" 2> "$t/srv.err" &
  SRVPID=$!
  for _ in $(seq 100); do grep -q listening "$t/srv.out" && break; sleep 0.05; done
  PORT=$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$t/srv.out")
}

http_jobs() {
  local t=$1 in=$2 s=$3
  cat > "$t/http.json" <<JOB
{"name": "bench", "output": "$t/http.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$PORT/v1",
   "sampling": {"temperature": 0, "max_tokens": 64},
   "concurrency": {"initial": $in, "min": $in, "max": $in}, "timeouts": {"request_s": 60}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$PWD/demo/spatialeval/items.jsonl",
                 "models": ["toy-vlm-a"], "seeds": [$(seq -s, 0 $((s - 1)))]}]}
JOB
  # the replay twin: the server's deterministic answers are not needed, any answer per unit is
  /usr/bin/python3 - "$PWD/demo/spatialeval/items.jsonl" "$t/answers.jsonl" "$s" <<'PY'
import json, sys
ids = [json.loads(l)["id"] for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as f:
    for s in range(int(sys.argv[3])):
        for i in ids:
            f.write(json.dumps({"id": i, "model": "toy-vlm-a", "seed": s, "prompt_variant": "reason",
                                "response": "Answer: C."}) + "\n")
PY
  cat > "$t/replay.json" <<JOB
{"name": "bench", "output": "$t/replay.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$PWD/demo/spatialeval/items.jsonl",
                 "answers": "$t/answers.jsonl"}]}
JOB
  "$BUILD/tally" run "$t/http.json" --dry-run="$t/dry.jsonl" > /dev/null 2>&1
  /usr/bin/python3 -c 'import json,sys; l=open(sys.argv[1]).readline(); sys.stdout.write(json.dumps(json.loads(l)["body"], separators=(",", ":"), sort_keys=True))' \
    "$t/dry.jsonl" > "$t/body.json"
}
