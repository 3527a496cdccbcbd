#!/usr/bin/env bash
# Disk full: a disk that fills up while the output is written gives a clear error and exit 1,
# keeps the journal, and `--resume` after space is freed finishes without asking the engine
# again, with the same datasets as an uninterrupted run. Needs a small tmpfs: skipped (exit 77)
# where mounting one is not allowed (not root, or a container without CAP_SYS_ADMIN).
. "$(dirname "$0")/common.sh"
mkdir -p "$WORK/small"
if ! mount -t tmpfs -o size=2m tmpfs "$WORK/small" 2>/dev/null; then
  echo "skipped: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)"
  exit 77
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
echo "e2e disk full: ok"
