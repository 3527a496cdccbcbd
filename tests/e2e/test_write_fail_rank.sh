#!/usr/bin/env bash
# The collective error contract in `tally run`'s table write: a write failure on rank 1 (injected
# with TALLY_TEST_H5_FAIL=1, h5p_ds.c: rank 1's dataset writes report a failure after the
# collective transfer, as a full disk makes them) ends every rank with exit 1
# and the writer's agreed message ("rank 1: HDF5: cannot write dataset ...") printed once; no
# output, partial file or lock is left and the journal is kept, so --resume finishes with 0
# engine calls and the datasets of an uninterrupted run.
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
JOB="$TALLY_SRC/jobs/demo.json"
"$TALLY_BIN" run "$JOB" --out "$WORK/ref.h5" --quiet > /dev/null || fail "reference run failed"
cat > "$WORK/rank.sh" <<'SH'
#!/usr/bin/env bash
# one rank: its exit code and stderr into files named by its rank
r="${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}"
"$@" 2> "$W/err.$r"
echo $? > "$W/rc.$r"
SH
chmod +x "$WORK/rank.sh"
# A rank whose HDF5 holds a file it could not close ends without MPI_Finalize (main.c: HDF5 1.10
# would crash closing it again), every rank together after one reduction, so no rank is killed
# while it still reports. mpirun may still kill this wrapper before it writes the rank's exit code
# (it sees a process that did not finalize): a missing code is allowed, a wrong one is not, and
# mpirun's own status must be a failure.
for n in 2 4; do
  o="$WORK/o$n.h5"
  rm -f "$WORK"/err.* "$WORK"/rc.*
  rc=0
  W="$WORK" TALLY_TEST_H5_FAIL=1 timeout 300 mpirun -n $n --oversubscribe -x W -x TALLY_TEST_H5_FAIL \
    "$WORK/rank.sh" "$TALLY_BIN" run "$JOB" --out "$o" --quiet > /dev/null 2> "$WORK/mpirun.err" || rc=$?
  [ "$rc" != 124 ] || fail "$n ranks: the job did not end (a rank waits in a collective)"
  [ "$rc" != 0 ] || fail "$n ranks: mpirun says the failed run succeeded"
  for r in $(seq 0 $((n - 1))); do
    [ ! -s "$WORK/rc.$r" ] || [ "$(cat "$WORK/rc.$r")" = 1 ] || fail "$n ranks: rank $r exit $(cat "$WORK/rc.$r"), want 1"
  done
  said=$(cat "$WORK"/err.* | grep -c "rank 1: HDF5: cannot write dataset" || true)
  [ "$said" = 1 ] || { cat "$WORK"/err.*; fail "$n ranks: the write failure said $said times, want once"; }
  [ ! -e "$o" ] && [ ! -e "$o.part" ] && [ ! -e "$o.lock" ] || fail "$n ranks: output, partial file or lock left"
  ls "$o.journal"/*.jsonl > /dev/null 2>&1 || fail "$n ranks: the journal is lost"
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$JOB" --out "$o" --resume > /dev/null 2> "$WORK/e3.txt" ||
    { cat "$WORK/e3.txt"; fail "$n ranks: resume failed"; }
  grep -q "0 engine calls" "$WORK/e3.txt" || { cat "$WORK/e3.txt"; fail "$n ranks: resume asked the engine again"; }
  for obj in /items /metrics /audit /input_problems /stats; do
    h5diff "$WORK/ref.h5" "$o" "$obj" > /dev/null || fail "$n ranks: $obj differs after the resume"
  done
  echo "$n ranks: ok"
done
echo "e2e write_fail_rank: ok"
