#!/usr/bin/env bash
# slurm/serve.sh with the project's test server standing in for vLLM (--kind test, --gpus 2): it
# starts two servers on consecutive ports, waits until both are healthy, runs a 2-rank tally job
# whose engine URL is the template http://127.0.0.1:{port}/v1 (port = port_base + local rank, so
# each rank asks its own server), and stops both servers afterwards; the tables equal a 1-rank
# run's. A server that never becomes healthy is exit 3 within --wait, naming its port.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
command -v curl >/dev/null || { echo "skipped: no curl"; exit 77; }
export TALLY_TESTSERVER="$(dirname "$TALLY_BIN")/tally-testserver"
[ -x "$TALLY_TESTSERVER" ] || fail "no $TALLY_TESTSERVER"
free_base() { # two consecutive free ports
  "$PY" -c '
import socket
for base in range(21000, 60000, 97):
    ok = True
    for p in (base, base + 1):
        s = socket.socket()
        try: s.bind(("127.0.0.1", p))
        except OSError: ok = False
        finally: s.close()
    if ok: print(base); break'
}
P=$(free_base)
D="$TALLY_SRC/demo/spatialeval"
job() { # OUT
  cat <<JOB
{"name": "serve", "output": "$1",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:{port}/v1", "port_base": $P,
                       "sampling": {"temperature": 0}, "health": {"wait_s": 5}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "models": ["m"], "seeds": [0, 1]}]}
JOB
}
job "$WORK/s2.h5" > "$WORK/s2.json"
job "$WORK/s1.h5" > "$WORK/s1.json"
rc=0
bash "$TALLY_SRC/slurm/serve.sh" --kind test --gpus 2 --port-base "$P" --wait 20 --log-dir "$WORK/logs" -- \
  bash -c "mpirun -n 2 --oversubscribe '$TALLY_BIN' run '$WORK/s2.json' --quiet && '$TALLY_BIN' run '$WORK/s1.json' --quiet" \
  > "$WORK/serve.out" 2> "$WORK/serve.err" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/serve.out" "$WORK/serve.err"; fail "serve.sh -- tally: exit $rc"; }
grep -q "2 server(s) healthy" "$WORK/serve.out" || fail "serve.sh did not report the servers healthy"
for p in "$P" $((P + 1)); do
  ! curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$p/health" || fail "the server on port $p is still up after serve.sh"
done
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/s1.h5" "$WORK/s2.h5" /items /metrics --skip endpoint --skip latency_ms \
  --skip request_id --skip source || fail "2 ranks with a server each differ from 1 rank"
"$PY" - "$WORK/s2.h5" "$P" <<PY || fail "each rank should ask its own server"
import sys
sys.path.insert(0, "$TALLY_SRC/tools")
from tally_h5 import read_table
e = set(read_table(sys.argv[1], "/items/spatialeval")["endpoint"])
p = int(sys.argv[2])
assert e == {"http://127.0.0.1:%d/v1" % p, "http://127.0.0.1:%d/v1" % (p + 1)}, e
PY
# a server that never becomes healthy
rc=0
bash "$TALLY_SRC/slurm/serve.sh" --kind test --gpus 1 --port-base "$P" --wait 2 --log-dir "$WORK/logs2" \
  --server-args "--ready-after-ms 600000" -- true > "$WORK/bad.out" 2> "$WORK/bad.err" || rc=$?
[ "$rc" = 3 ] || { cat "$WORK/bad.out" "$WORK/bad.err"; fail "a server that never came up: exit $rc, want 3"; }
grep -q "port $P) did not come up within 2 s" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "no message naming the port"; }
! curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$P/health" || fail "the unhealthy server was left running"
echo "e2e serve.sh: two servers, a rank each via {port}, stopped after; a server never healthy: exit 3"
