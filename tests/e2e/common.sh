# common.sh - sourced by the e2e tests. Needs TALLY_BIN, TALLY_SRC (set by ctest).
set -euo pipefail
: "${TALLY_BIN:?set by ctest}" "${TALLY_SRC:?set by ctest}"
# ../shared/data: TALLY_SHARED_DATA where ctest runs wins over the configured folder
export TALLY_SHARED_DATA="${TALLY_SHARED_DATA:-${TALLY_SHARED_DATA_DEFAULT:-$TALLY_SRC/../shared/data}}"
PY="${TALLY_PYTHON:-/usr/bin/python3}"
WORK="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
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
