#!/usr/bin/env bash
# slurm/serve.sh with the project's test server standing in for vLLM (--kind test, --gpus 2): it
# starts two servers on consecutive ports, waits until both are healthy, runs a 2-rank tally job
# whose engine URL is the template http://127.0.0.1:{port}/v1 (port = port_base + local rank, so
# each rank asks its own server), and stops both servers afterwards; the tables equal a 1-rank
# run's. A server that never becomes healthy is exit 3 within --wait, naming its port.
# Ports per job: --port-base auto (the default) moves past a block of which a port is taken (as
# another job's server on a shared node holds it) and tells tally through TALLY_PORT_BASE, which
# {port} follows over the job's port_base; a fixed --port-base with a port taken is exit 2. The
# llamacpp kind (a stub llama-server recording its arguments) gets -ngl 999 --no-context-shift and
# slots and HTTP threads sized by --slots; a server that exits (a port it could not bind) is
# named, never taken for the one answering its port.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
command -v curl >/dev/null || { echo "skipped: no curl"; exit 77; }
export TALLY_TESTSERVER="$(dirname "$TALLY_BIN")/tally-testserver"
[ -x "$TALLY_TESTSERVER" ] || fail "no $TALLY_TESTSERVER"
free_base() { # two consecutive free ports, at the start of one of serve.sh's blocks of 16
  "$PY" -c '
import socket
for base in range(20000 + 16 * 62, 60000 - 32, 16 * 7):
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
grep -q "port $P, pid [0-9]*) did not come up within 2 s" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "no message naming the port"; }
! curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$P/health" || fail "the unhealthy server was left running"

# ---- ports per job: a taken block is skipped, tally follows TALLY_PORT_BASE ----
"$TALLY_TESTSERVER" --host 127.0.0.1 --port "$P" > "$WORK/squat.out" 2>&1 &
SQUAT=$!
TS_PIDS+=("$SQUAT")
for _ in $(seq 100); do curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$P/health" && break; sleep 0.05; done
rc=0
bash "$TALLY_SRC/slurm/serve.sh" --kind test --gpus 1 --port-base "$P" --wait 5 --log-dir "$WORK/logs3" -- true   > "$WORK/fixed.out" 2> "$WORK/fixed.err" || rc=$?
[ "$rc" = 2 ] && grep -q "is taken" "$WORK/fixed.err" || { cat "$WORK/fixed.err"; fail "a taken fixed port: exit $rc, want 2"; }
# auto: the block the job id picks is the squatter's; serve.sh moves on and tally follows
blk=$(( (P - 20000) / 16 ))
jid=0; while [ $(( (jid * 7) % 2500 )) != "$blk" ]; do jid=$((jid + 1)); done
if [ $((20000 + 16 * blk)) = "$P" ]; then
  job "$WORK/a1.h5" > "$WORK/a1.json"
  sed -i "s/\"port_base\": $P/\"port_base\": 9/" "$WORK/a1.json"
  rc=0
  SLURM_JOB_ID=$jid SLURM_STEP_ID=0 bash "$TALLY_SRC/slurm/serve.sh" --kind test --gpus 1 --wait 20 \
    --log-dir "$WORK/logs4" -- "$TALLY_BIN" run "$WORK/a1.json" --quiet > "$WORK/auto.out" 2> "$WORK/auto.err" || rc=$?
  [ "$rc" = 0 ] || { cat "$WORK/auto.out" "$WORK/auto.err"; fail "auto ports: exit $rc"; }
  grep -q "TALLY_PORT_BASE=$((P + 16))" "$WORK/auto.out" || { cat "$WORK/auto.out"; fail "auto ports did not skip the taken block"; }
  echo "e2e serve.sh: a fixed taken port is exit 2; auto skips the taken block and tally follows TALLY_PORT_BASE"
else
  fail "the free base $P is not at a block start"
fi
kill "$SQUAT" 2> /dev/null || true; wait "$SQUAT" 2> /dev/null || true

# ---- llamacpp defaults, through a stub llama-server that records its arguments ----
mkdir -p "$WORK/bin"
cat > "$WORK/bin/llama-server" <<STUB
#!/usr/bin/env bash
echo "\$*" > "$WORK/llama-args"
port=""; while [ \$# -gt 0 ]; do [ "\$1" = --port ] && port=\$2; shift; done
exec "$TALLY_TESTSERVER" --host 127.0.0.1 --port "\$port"
STUB
chmod +x "$WORK/bin/llama-server"
rc=0
PATH="$WORK/bin:$PATH" bash "$TALLY_SRC/slurm/serve.sh" --kind llamacpp --model /m.gguf --gpus 1 --slots 6 --wait 20 \
  --log-dir "$WORK/logs5" -- true > "$WORK/llama.out" 2> "$WORK/llama.err" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/llama.out" "$WORK/llama.err"; fail "llamacpp kind: exit $rc"; }
for a in "-ngl 999" "--no-context-shift" "-np 6" "--threads-http 10"; do
  grep -q -- "$a" "$WORK/llama-args" || { cat "$WORK/llama-args"; fail "llama-server was not given $a"; }
done
echo "e2e serve.sh: two servers, a rank each via {port}, stopped after; a server never healthy: exit 3; llama-server: $(cat "$WORK/llama-args")"
