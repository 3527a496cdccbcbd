#!/usr/bin/env bash
# Signals during scoring (SIGTERM is in test_resume.sh): SIGUSR1 (sbatch --signal) and SIGINT
# (Ctrl-C) stop a run with exit 4, the journal flushed, no partial output and no lock left; a
# signal sent to rank 1 only stops both ranks; a journal left by another job is refused on
# --resume (exit 2) and nothing is lost; --resume then finishes with no unit asked twice.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/spatialeval"
cat > "$WORK/job.json" <<JOB
{"name": "signals", "engine": {"type": "replay", "latency_ms": 300}, "output": "$WORK/out.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "answers": ["$D/answers.jsonl"],
   "parsers": ["strict", "pr3"]}]}
JOB
journaled() { cat "$WORK"/out.h5.journal/*.jsonl 2>/dev/null | grep -c '"id"' || true; }
wait_journal() {
  for _ in $(seq 100); do [ "$(journaled)" -ge 10 ] && return 0; sleep 0.1; done
  fail "no units were journaled within 10 s"
}
stopped_cleanly() { # RC WHAT
  [ "$1" = 4 ] || { cat "$WORK/e.txt"; fail "$2: exit $1, want 4"; }
  grep -q "run again with --resume" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "$2: no resume hint"; }
  [ ! -e "$WORK/out.h5" ] && [ ! -e "$WORK/out.h5.part" ] || fail "$2: partial output left"
  [ ! -e "$WORK/out.h5.lock" ] || fail "$2: lock left"
  [ "$(journaled)" -ge 10 ] || fail "$2: journal lost"
}
resume() { # WHAT [mpirun args]
  local what="$1"; shift
  "$@" "$TALLY_BIN" run "$WORK/job.json" --resume > /dev/null 2> "$WORK/r.txt" || { cat "$WORK/r.txt"; fail "$what: resume failed"; }
  "$PY" - "$WORK/out.h5" "$what" <<'PY'
import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
assert int(a["units_resumed"]) > 0 and int(a["engine_calls"]) + int(a["units_resumed"]) == int(a["units"]), sys.argv[2]
PY
  rm -f "$WORK/out.h5"
}

for sig in USR1 INT; do
  "$TALLY_BIN" run "$WORK/job.json" --quiet > /dev/null 2> "$WORK/e.txt" &
  pid=$!
  wait_journal
  kill -s "$sig" "$pid"
  rc=0; wait "$pid" || rc=$?
  stopped_cleanly "$rc" "SIG$sig"
  resume "SIG$sig"
done

# SIGTERM to rank 1 only, 2 ranks
setsid mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --quiet > /dev/null 2> "$WORK/e.txt" &
mp=$! # leads its own session: its ranks are found by session id, never by name
wait_journal
r1=""
for p in $(pgrep -s "$mp"); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && r1=$p
done
[ -n "$r1" ] || fail "rank 1 not found"
kill -TERM "$r1"
rc=0; wait "$mp" || rc=$?
# mpirun may report its own code when a rank ends with 4; the ranks' message says what happened
grep -q "interrupted by signal 15" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "rank 1's signal did not stop the job"; }
[ "$rc" != 0 ] || fail "a signalled job exited 0"
[ ! -e "$WORK/out.h5" ] && [ ! -e "$WORK/out.h5.lock" ] || fail "rank 1's signal: output or lock left"

# a journal that belongs to another job is refused, and kept
sed 's/"parsers": \["strict", "pr3"\]/"parsers": ["strict"]/' "$WORK/job.json" > "$WORK/other.json"
n=$(journaled)
rc=0; "$TALLY_BIN" run "$WORK/other.json" --resume > /dev/null 2> "$WORK/o.txt" || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/o.txt"; fail "a journal of another job: exit $rc, want 2"; }
grep -q "another job\|different job\|other job" "$WORK/o.txt" || { cat "$WORK/o.txt"; fail "the foreign journal is not explained"; }
[ "$(journaled)" = "$n" ] || fail "the foreign journal was changed"
resume "2 ranks, rank 1 signalled" mpirun -n 2 --oversubscribe
echo "e2e signals: ok"
