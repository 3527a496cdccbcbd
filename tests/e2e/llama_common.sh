# llama_common.sh - sourced after common.sh by the tests/e2e/test_llama_*.sh: a real llama.cpp
# server (llama-server, built by tools/llama-build.sh into <repo>/build-llama) serving a tiny
# random-weight model (tests/e2e/llama_model.py). Where the server or its gguf-py is absent (no
# vendored tarball, not built) or numpy is missing, the test exits 77: skipped, never failed.
#   TALLY_LLAMA_DIR  the build-llama folder (default $TALLY_SRC/build-llama)
LLAMA_DIR="${TALLY_LLAMA_DIR:-$TALLY_SRC/build-llama}"
LLAMA_SERVER="$LLAMA_DIR/bin/llama-server"
LLAMA_PY=/usr/bin/python3 # Debian's python3: numpy and yaml for gguf-py
[ -x "$LLAMA_SERVER" ] || { echo "skipped: no $LLAMA_SERVER (tools/llama-build.sh builds it from ../shared/vendor/llama.cpp-*.tar.xz)"; exit 77; }
[ -d "$LLAMA_DIR/src/gguf-py/gguf" ] || { echo "skipped: no $LLAMA_DIR/src/gguf-py (tools/llama-build.sh)"; exit 77; }
"$LLAMA_PY" -c "import numpy, yaml" 2> /dev/null || { echo "skipped: $LLAMA_PY lacks numpy or yaml (python3-numpy, python3-yaml)"; exit 77; }
command -v curl > /dev/null || { echo "skipped: no curl"; exit 77; }

LL_PIDS=() # every llama-server started here: killed (-9) at exit. SIGTERM makes this snapshot
           # abort ("terminate called without an active exception", exit 134): -9 is as clean
trap '[ ${#LL_PIDS[@]} -eq 0 ] || kill -9 "${LL_PIDS[@]}" 2>/dev/null || true
      [ ${#TS_PIDS[@]} -eq 0 ] || kill "${TS_PIDS[@]}" 2>/dev/null || true
      [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

# The model, made once per test: $LL_MODEL
LL_MODEL="$WORK/tiny.gguf"
"$LLAMA_PY" "$TALLY_SRC/tests/e2e/llama_model.py" "$LL_MODEL" "$LLAMA_DIR/src/gguf-py" > "$WORK/model.log" 2>&1 ||
  { cat "$WORK/model.log"; fail "tests/e2e/llama_model.py could not write the model"; }

free_port() { # a port nothing listens on now (some builds do not take --port 0)
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_llama NAME [--port P] ARGS...: llama-server on 127.0.0.1 (a free port unless --port is
# first) serving the tiny model as alias "tiny", log in $WORK/NAME.log (appended: a restart keeps
# the earlier lines); waits until /health answers 200 (it answers 503 while loading). Sets
# LL_PORT_<NAME>, LL_PID_<NAME>. One compute thread (-t 1; ARGS may override): on a loaded
# 2-core machine ggml's OpenMP threads spin against each other, 4x slower than one thread.
start_llama() {
  local name=$1 fixed="" port pid; shift
  if [ "${1:-}" = --port ]; then fixed=$2; shift 2; fi
  for _ in 1 2 3; do # a free port may be taken before the server binds it: try another
    port=${fixed:-$(free_port)}
    "$LLAMA_SERVER" -m "$LL_MODEL" --alias tiny --host 127.0.0.1 --port "$port" -t 1 "$@" >> "$WORK/$name.log" 2>&1 &
    pid=$!
    disown "$pid" # no "Killed" notice when it is stopped
    LL_PIDS+=("$pid")
    for _ in $(seq 300); do
      kill -0 "$pid" 2> /dev/null || break
      if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ]; then
        eval "LL_PORT_$name=$port LL_PID_$name=$pid"
        return 0
      fi
      sleep 0.1
    done
    kill -9 "$pid" 2> /dev/null || true
  done
  tail -20 "$WORK/$name.log"
  fail "llama-server $name did not come up"
}
stop_llama() { # NAME: kill -9 (see LL_PIDS); returns once its port is closed
  local pid port; eval "pid=\$LL_PID_$1 port=\$LL_PORT_$1"
  kill -9 "$pid" 2> /dev/null || true
  for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/health" || return 0
    sleep 0.1
  done
  fail "llama-server $1 (pid $pid) still answers after kill -9"
}
# llama_requests NAME: how many chat completions the server's log shows (one
# `log_server_r: request: POST /v1/chat/completions` line each, whatever the status)
llama_requests() {
  grep -c 'log_server_r: request: POST /v1/chat/completions' "$WORK/$1.log" || true
}
# llama_bodies NAME: the request bodies a server started with --log-verbose received, one JSON
# line each, keys sorted (compare with the `body` of `tally run --dry-run`'s lines)
llama_bodies() {
  sed -n 's/^srv  log_server_r: request:  //p' "$WORK/$1.log" |
    "$PY" -c 'import json, sys
for l in sys.stdin:
    if l.strip():  # GET requests log an empty body
        print(json.dumps(json.loads(l), sort_keys=True))'
}
