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

# Wherever the space runs out (the journal, the spilled rows, any HDF5 dataset, attribute or the
# close, on 1 and 2 ranks, and for tally correlate --out and tally parse --output), tally's own
# message names the file and "No space left on device" (Open MPI's lines do not count), exits 1,
# never hangs and leaves no final output. The free space is set from a measured run, so the
# points move with the output's size.
umount -l "$WORK/small"
mount -t tmpfs -o size=8m tmpfs "$WORK/small"
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/small/m.h5" --quiet --keep-journal > /dev/null
need=$(du -sb "$WORK/small" | cut -f1)
rm -rf "$WORK"/small/*
total=$(df -B1 --output=avail "$WORK/small" | tail -1)
for ranks in 1 2; do
  # 97-100%: the space that the final H5Fclose needs runs out (2 ranks hung there until the close
  # reserved its space first: src/par/h5p_open.c, reserve_close)
  for pct in 2 20 40 55 70 80 90 95 97 98 99 100 101; do
    rm -rf "$WORK"/small/*
    free=$((need * pct / 100))
    head -c $((total - free)) /dev/zero > "$WORK/small/filler" 2> /dev/null || true
    cmd=("$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/small/o.h5" --quiet)
    [ $ranks = 1 ] || cmd=(mpirun -n 2 --oversubscribe "${cmd[@]}")
    rc=0; timeout 60 "${cmd[@]}" > /dev/null 2> "$WORK/e.txt" || rc=$?
    [ "$rc" != 124 ] || fail "$ranks rank(s), $pct% of the space: the run hung on a full disk"
    [ "$rc" != 0 ] || continue # it fitted (the rows spill and the part file are not both kept)
    [ "$rc" = 1 ] || { cat "$WORK/e.txt"; fail "$ranks rank(s), $pct%: exit $rc, want 1"; }
    grep -q "^tally: .*$WORK/small/o\.h5.*: No space left on device" "$WORK/e.txt" ||
      { cat "$WORK/e.txt"; fail "$ranks rank(s), $pct% of the space: tally's message does not name the file and 'No space left on device'"; }
    [ ! -e "$WORK/small/o.h5" ] || fail "$ranks rank(s), $pct%: a final output after a failed write"
  done
done
rm -rf "$WORK"/small/*
"$TALLY_BIN" correlate --input "$TALLY_SRC/demo/stats/vqa_judgments.csv" --human human --metrics lave,vqa_acc \
  --resamples 2000 --out "$WORK/small/c.h5" --quiet > /dev/null
need=$(du -sb "$WORK/small" | cut -f1)
rm -rf "$WORK"/small/*
head -c $((total - need / 2)) /dev/zero > "$WORK/small/filler" 2> /dev/null || true
rc=0; "$TALLY_BIN" correlate --input "$TALLY_SRC/demo/stats/vqa_judgments.csv" --human human --metrics lave,vqa_acc \
  --resamples 2000 --out "$WORK/small/c.h5" --quiet > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 1 ] && grep -q "^tally: .*small/c\.h5.*: No space left on device" "$WORK/e.txt" ||
  { cat "$WORK/e.txt"; fail "correlate --out on a full disk: exit $rc"; }
rm -rf "$WORK"/small/*
head -c "$total" /dev/zero > "$WORK/small/filler" 2> /dev/null || true
printf '{"response": "rating=3"}\n%.0s' $(seq 3000) > "$WORK/lave.jsonl"
rc=0; "$TALLY_BIN" parse --parser lave-rating --input "$WORK/lave.jsonl" --output "$WORK/small/p.jsonl" 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 1 ] && grep -q "small/p.jsonl.*No space left on device" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "parse --output on a full disk: exit $rc"; }
[ ! -e "$WORK/small/p.jsonl" ] || fail "parse left a half output on a full disk"
echo "e2e disk full: the cause and the file named wherever the space runs out"
