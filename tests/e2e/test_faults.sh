#!/usr/bin/env bash
# Faults: an input that cannot be read stops a 2-rank job cleanly with the path named (no hang);
# a disk that fills up while the output is written gives a clear error and exit 1, keeps the
# journal, and `--resume` after space is freed finishes without asking the engine again.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/spatialeval"
# 1. unreadable input, 2 ranks
cat > "$WORK/job.json" <<JOB
{"output": "$WORK/o.h5", "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl",
  "answers": ["$D/answers.jsonl", "$WORK/no_such_answers.jsonl"]}]}
JOB
rc=0; timeout 60 mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" != 124 ] || fail "the job hung on an unreadable input"
[ "$rc" != 0 ] || fail "an unreadable input did not fail the job"
grep -q "cannot open '$WORK/no_such_answers.jsonl'" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "the path is not named"; }
[ ! -e "$WORK/o.h5" ] || fail "output written despite the error"

# 2. disk full during the write (a small tmpfs; skipped where mounting is not allowed)
mkdir -p "$WORK/small"
if ! mount -t tmpfs -o size=2m tmpfs "$WORK/small" 2>/dev/null; then
  echo "disk-full part skipped: cannot mount a tmpfs here"
  echo "e2e faults: ok"
  exit 0
fi
trap 'umount -l "$WORK/small" 2>/dev/null; rm -rf "$WORK"' EXIT
head -c 1700000 /dev/zero > "$WORK/small/filler"
rc=0; "$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/small/o.h5" --quiet > /dev/null 2> "$WORK/e2.txt" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/e2.txt"; fail "disk full: exit $rc, want 1"; }
grep -q "No space left on device\|disk full" "$WORK/e2.txt" || { cat "$WORK/e2.txt"; fail "disk full not explained"; }
grep -q -- "--resume" "$WORK/e2.txt" || fail "no hint to resume"
ls "$WORK"/small/o.h5.journal/*.jsonl > /dev/null || fail "journal lost"
[ ! -e "$WORK/small/o.h5" ] || fail "a final output after a failed write"
rm -f "$WORK/small/filler"
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/small/o.h5" --resume > /dev/null 2> "$WORK/e3.txt" \
  || { cat "$WORK/e3.txt"; fail "resume after freeing space failed"; }
grep -q "0 engine calls" "$WORK/e3.txt" || { cat "$WORK/e3.txt"; fail "resume asked the engine again"; }
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/ref.h5" --quiet > /dev/null
for obj in /items /metrics /audit /stats; do
  h5diff "$WORK/ref.h5" "$WORK/small/o.h5" "$obj" > /dev/null || fail "$obj differs after the resume"
done
echo "e2e faults: ok"
