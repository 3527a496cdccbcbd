#!/usr/bin/env bash
# SIGTERM and SIGKILL after scoring: while the output is being written, and while a study runs
# (kills during scoring are in test_resume.sh). The process ends at once; no final output appears;
# the journal holds every unit, so `--resume` finishes with 0 engine calls and the same datasets
# as an uninterrupted run. SIGTERM removes the partial file and the output lock on its way out; a SIGKILL leaves a
# stale lock, which the resume on the same host takes over with a notice (its pid is gone). Phases are reached through the driver's
# test-only pause (TALLY_TEST_PAUSE, driver.c).
. "$(dirname "$0")/common.sh"
need_python
JOB="$TALLY_SRC/jobs/demo.json"
"$TALLY_BIN" run "$JOB" --out "$WORK/ref.h5" --quiet > /dev/null || fail "reference run failed"
for phase in write study; do
  for sig in TERM KILL; do
    o="$WORK/$phase-$sig.h5"
    TALLY_TEST_PAUSE=$phase "$TALLY_BIN" run "$JOB" --out "$o" --quiet > /dev/null 2> "$WORK/e.txt" &
    pid=$!
    for _ in $(seq 200); do grep -q "test pause at $phase" "$WORK/e.txt" && break; sleep 0.05; done
    grep -q "test pause at $phase" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "$phase: the pause was not reached"; }
    kill -s "$sig" "$pid"
    rc=0; wait "$pid" || rc=$?
    [ "$rc" -ge 128 ] || fail "$phase/$sig: exit $rc, want death by the signal"
    [ ! -e "$o" ] || fail "$phase/$sig: a final output after the kill"
    ls "$o.journal"/*.jsonl > /dev/null 2>&1 || fail "$phase/$sig: the journal is lost"
    extra=()
    if [ "$sig" = KILL ]; then
      [ -e "$o.lock" ] || fail "$phase/KILL: no lock left (want a stale one)"
      extra=() # its holder is gone on this host: the resume takes it over, saying so
    else
      [ ! -e "$o.lock" ] || fail "$phase/TERM: the lock was left behind"
      [ ! -e "$o.part" ] || fail "$phase/TERM: the partial output was left behind"
      [ ! -e "$o.rows" ] || fail "$phase/TERM: the spilled item rows ($o.rows) were left behind"
    fi
    "$TALLY_BIN" run "$JOB" --out "$o" --resume ${extra[@]+"${extra[@]}"} > /dev/null 2> "$WORK/e3.txt" \
      || { cat "$WORK/e3.txt"; fail "$phase/$sig: resume failed"; }
    [ "$sig" != KILL ] || grep -q "took over the stale lock" "$WORK/e3.txt" ||
      { cat "$WORK/e3.txt"; fail "$phase/KILL: the stale lock was not taken over with a notice"; }
    grep -q "0 engine calls" "$WORK/e3.txt" || { cat "$WORK/e3.txt"; fail "$phase/$sig: resume asked the engine again"; }
    for obj in /items /metrics /audit /input_problems /stats; do
      h5diff "$WORK/ref.h5" "$o" "$obj" > /dev/null || fail "$phase/$sig: $obj differs after the resume"
    done
    [ ! -e "$o.lock" ] && [ ! -e "$o.journal" ] && [ ! -e "$o.rows" ] ||
      fail "$phase/$sig: lock, journal or spilled rows left after the resume"
    echo "$phase/$sig: ok"
  done
done
echo "e2e kill phases: ok"
