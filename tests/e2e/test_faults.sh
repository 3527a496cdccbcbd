#!/usr/bin/env bash
# Faults: an input that cannot be read stops a 2-rank job cleanly with the path named (no hang).
# The disk-full case is tests/e2e/test_disk_full.sh (skipped where a tmpfs cannot be mounted).
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/spatialeval"
# unreadable input, 2 ranks
cat > "$WORK/job.json" <<JOB
{"output": "$WORK/o.h5", "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl",
  "answers": ["$D/answers.jsonl", "$WORK/no_such_answers.jsonl"]}]}
JOB
rc=0; timeout 60 mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" != 124 ] || fail "the job hung on an unreadable input"
[ "$rc" != 0 ] || fail "an unreadable input did not fail the job"
grep -q "cannot open '$WORK/no_such_answers.jsonl'" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "the path is not named"; }
[ ! -e "$WORK/o.h5" ] || fail "output written despite the error"
echo "e2e faults: ok"
