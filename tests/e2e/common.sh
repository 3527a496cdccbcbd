# common.sh - sourced by the e2e tests. Needs TALLY_BIN, TALLY_SRC (set by ctest).
set -euo pipefail
: "${TALLY_BIN:?set by ctest}" "${TALLY_SRC:?set by ctest}"
# ../shared/data: TALLY_SHARED_DATA where ctest runs wins over the configured folder
export TALLY_SHARED_DATA="${TALLY_SHARED_DATA:-${TALLY_SHARED_DATA_DEFAULT:-$TALLY_SRC/../shared/data}}"
PY="${TALLY_PYTHON:-/usr/bin/python3}"
WORK="$(mktemp -d)"
TS_PIDS=() # test servers start_testserver started: stopped at exit
trap '[ ${#TS_PIDS[@]} -eq 0 ] || kill "${TS_PIDS[@]}" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
need_python() {
  "$PY" -c "import h5py, pandas" 2>/dev/null || { echo "skipped: $PY lacks h5py/pandas"; exit 77; }
}

# Kills a whole job started with `setsid mpirun ...` (its pid SID leads a session holding every
# rank; the ranks get process groups of their own, so the session id finds them, never a name).
kill_session() {
  kill -9 -- "-$1" 2>/dev/null || true
  for p in $(ps -o pid= -s "$1" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  sleep 0.5
}

# start_testserver ARGS...: tools/testserver (built beside tally) on a free port, in the
# background; sets TS_PORT and TS_PID. It is stopped when the test exits.
start_testserver() {
  local out="$WORK/testserver.$RANDOM.out"
  : > "$out" # exists before the server opens it: the loop below may read it first
  "$(dirname "$TALLY_BIN")/tally-testserver" --port 0 "$@" > "$out" 2> "$out.err" &
  TS_PID=$!
  TS_PIDS+=("$TS_PID")
  TS_PORT=""
  for _ in $(seq 400); do
    TS_PORT=$(sed -n 's/^tally-testserver: listening on .*:\([0-9][0-9]*\)$/\1/p' "$out")
    [ -n "$TS_PORT" ] && return 0
    sleep 0.05
  done
  cat "$out.err"
  fail "the test server did not start"
}
