#!/usr/bin/env bash
# The collective error contract (docs/ARCHITECTURE.md "Failures"): a failure injected on one
# rank (TALLY_TEST_FAIL=PHASE:RANK, src/par/run/signals.c) ends every rank, within a time limit,
# with the failing rank's message printed once, exit 1, no output and the journal kept; the
# resume that follows finishes the run. On 2 and 4 ranks:
#  - rank 0 fails while it finishes the partly restored units of a judge-stage resume (this
#    once left rank 1 waiting in the schedule while rank 0 waited in the next collective);
#  - rank 1 fails while it writes its block of the item table.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
export TALLY_TEST_MODULES=1
"$PY" - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
with open(w + "/items.jsonl", "w") as f:
    for i in range(24): f.write(json.dumps({"id": "d%02d" % i, "question": "q %d" % i, "turns": 1 + i % 2}) + "\n")
with open(w + "/answers.jsonl", "w") as a, open(w + "/judgments.jsonl", "w") as j:
    for m in ("model-a", "model-b"):
        for i in range(24):
            for t in range(1 + i % 2):
                k = {"id": "d%02d" % i, "model": m, "seed": 0, "turn": t}
                a.write(json.dumps(dict(k, response="answer %s %d %d" % (m, i, t))) + "\n")
                j.write(json.dumps(dict(k, response="Rating: [[%d]]" % (1 + (i + t) % 10))) + "\n")
PY
cat > "$WORK/job.json" <<JOB
{"name": "fail", "output": "$WORK/out.h5",
 "engines": {"model": {"type": "replay"}, "judge": {"type": "replay"}},
 "benchmarks": [{"benchmark": "test_judged", "items": "$WORK/items.jsonl",
                 "answers": "$WORK/answers.jsonl", "judgments": "$WORK/judgments.jsonl"}]}
JOB
J="$WORK/out.h5.journal"
run_n() { # RANKS ARGS...: the run under a time limit (a hang fails the test, not the CI)
  local n=$1; shift
  timeout -k 5 120 mpirun -n "$n" --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --quiet "$@"
}
check_failed() { # WHAT RC ERRFILE MESSAGE
  [ "$2" -ne 124 ] && [ "$2" -ne 137 ] || fail "$1: a rank hung (killed by timeout)"
  [ "$2" -eq 1 ] || { cat "$3" >&2; fail "$1: exit $2, expected 1"; }
  [ "$(grep -c -- "$4" "$3")" -eq 1 ] || { cat "$3" >&2; fail "$1: the message '$4' is not printed exactly once"; }
  [ ! -e "$WORK/out.h5" ] || fail "$1: an output was written"
  ls "$J"/*.jsonl > /dev/null 2>&1 || fail "$1: the journal is gone"
  grep -q "keeps every finished unit" "$3" || { cat "$3" >&2; fail "$1: the journal is not named"; }
}
for n in 2 4; do
  rm -rf "$WORK/out.h5" "$J" "$WORK/out.h5.lock"
  # a journal with every generation and no judgment: a run killed while judging, made exactly
  run_n "$n" --keep-journal > /dev/null 2> "$WORK/full.err" || { cat "$WORK/full.err"; fail "$n ranks: the first run failed"; }
  rm -f "$WORK/out.h5"
  for f in "$J"/*.jsonl; do grep -v '"st":1,' "$f" > "$f.tmp" || true; mv "$f.tmp" "$f"; done
  [ "$(cat "$J"/*.jsonl | grep -c '"st":0,')" -gt 0 ] || fail "no generation in the journal"
  rc=0
  TALLY_TEST_FAIL=restore:0 run_n "$n" --resume > /dev/null 2> "$WORK/r.err" || rc=$?
  check_failed "$n ranks, rank 0 fails in a judge-stage resume" "$rc" "$WORK/r.err" "cannot write the journal: test failure"
  # nothing lost: the resume after it finishes the run
  run_n "$n" --resume > "$WORK/ok.txt" 2> "$WORK/ok.err" || { cat "$WORK/ok.err"; fail "$n ranks: the resume after the failure failed"; }
  grep -q "wrote $WORK/out.h5" "$WORK/ok.txt" || fail "$n ranks: the resume wrote nothing"

  rm -rf "$WORK/out.h5" "$J"
  rc=0
  TALLY_TEST_FAIL=write:1 run_n "$n" > /dev/null 2> "$WORK/w.err" || rc=$?
  check_failed "$n ranks, rank 1 fails in the table write" "$rc" "$WORK/w.err" "rank 1: cannot read the rows of rank 1: test failure"
  run_n "$n" --resume > /dev/null 2> "$WORK/ok.err" || { cat "$WORK/ok.err"; fail "$n ranks: the resume after the write failure failed"; }
  [ -e "$WORK/out.h5" ] || fail "$n ranks: the resume after the write failure wrote nothing"
done
echo "e2e fail ranks: ok"
