#!/usr/bin/env bash
# Kill and resume: a 2-rank run of the demo benchmarks (with 300 ms of simulated engine latency,
# so it is still running when killed) is killed with SIGKILL midway, whole job; running again
# without --resume refuses to clobber the journal; --resume on 4 ranks finishes it. The final
# datasets equal an uninterrupted run's, and the engine call counter proves no finished unit was
# asked again (engine_calls + units_resumed == units). Then a 1-rank run stopped by SIGTERM exits
# with code 4, and --resume on 2 ranks finishes it.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/spatialeval"
cat > "$WORK/job.json" <<JOB
{"name": "resume-test", "engine": {"type": "replay", "latency_ms": 300}, "output": "$WORK/out.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl",
   "answers": ["$D/answers.jsonl", {"path": "$D/reference_eval_output.jsonl", "model": "toy-vlm-c"}],
   "parsers": ["strict", "pr3", "legacy"]}]}
JOB
sed -e 's/"latency_ms": 300/"latency_ms": 0/' -e "s#$WORK/out.h5#$WORK/ref.h5#" "$WORK/job.json" > "$WORK/ref.json"
"$TALLY_BIN" run "$WORK/ref.json" --quiet > /dev/null || fail "reference run failed"

journaled() { cat "$WORK"/out.h5.journal/*.jsonl 2>/dev/null | grep -c '"id"' || true; }
wait_journal() { # until at least 20 units are journaled (at most 20 s), so the kill lands midway
  for _ in $(seq 100); do [ "$(journaled)" -ge 20 ] && return 0; sleep 0.2; done
  fail "no units were journaled within 20 s"
}
check_resumed() { # FILE: same datasets as the reference; no unit asked twice
  for obj in /items /metrics /audit /input_problems; do
    h5diff "$WORK/ref.h5" "$1" "$obj" > /dev/null || fail "$obj differs from the uninterrupted run"
  done
  "$PY" - "$1" <<'PY'
import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
units, resumed, calls = int(a["units"]), int(a["units_resumed"]), int(a["engine_calls"])
print("units %d, from the journal %d, engine calls %d" % (units, resumed, calls))
assert resumed > 0, "nothing came from the journal"
assert calls + resumed == units, "a finished unit was asked again (or one was lost)"
PY
  [ ! -e "$WORK/out.h5.journal" ] || fail "journal left after a successful run"
}

# 1. SIGKILL the whole 2-rank job midway
setsid mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --quiet > /dev/null 2>&1 &
PG=$!
wait_journal
kill_session "$PG"
[ ! -e "$WORK/out.h5" ] || fail "the killed run left a final output"
n=$(journaled)
[ "$n" -lt 252 ] || fail "the run finished before the kill: nothing to resume"
echo "killed with $n units journaled"
rc=0; "$TALLY_BIN" run "$WORK/job.json" --quiet > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] || fail "a run without --resume over a journal exited $rc, want 2"
grep -q -- "--resume" "$WORK/e.txt" || fail "no hint to use --resume"
# the killed run's lock is stale (its pid is gone on this host): taken over with a notice, no
# --break-lock needed
grep -q "took over the stale lock" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "the stale lock is not taken over with a notice"; }
mpirun -n 4 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --resume --quiet > /dev/null || fail "resume on 4 ranks failed"
[ ! -e "$WORK/out.h5.lock" ] || fail "lock left after a successful run"
check_resumed "$WORK/out.h5"

# 2. SIGTERM a 1-rank run: exit code 4, journal flushed; resume on 2 ranks
rm -f "$WORK/out.h5"
"$TALLY_BIN" run "$WORK/job.json" --quiet > /dev/null 2> "$WORK/e2.txt" &
PID=$!
wait_journal
kill -TERM "$PID"
rc=0; wait "$PID" || rc=$?
[ "$rc" = 4 ] || { cat "$WORK/e2.txt"; fail "SIGTERM: exit $rc, want 4"; }
grep -q "interrupted by signal 15" "$WORK/e2.txt" || fail "no interruption message"
[ ! -e "$WORK/out.h5.part" ] || fail "partial output left behind"
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --resume --quiet > /dev/null || fail "resume on 2 ranks failed"
check_resumed "$WORK/out.h5"
echo "e2e resume: ok"
