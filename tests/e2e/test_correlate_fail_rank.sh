#!/usr/bin/env bash
# The collective error contract in `tally correlate` (docs/ARCHITECTURE.md "Failures"): a failure
# on one rank ends every rank, with the lowest failing rank's message printed once (by rank 0)
# and exit 1 on every rank; no rank is left waiting in a collective. The failure is injected with
# TALLY_TEST_CORR_FAIL=R (correlate_compute.c: rank R's allocation of its resample block fails), on rank
# 1 and on rank 0 of 2 ranks, and a write failure on rank 1 (TALLY_TEST_H5_FAIL=1, h5p_ds.c);
# each rank's exit code and stderr are kept apart by a wrapper.
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
printf 'dataset,human,m1,m2\n' > "$WORK/t.csv"
for i in $(seq 1 24); do printf 'd%d,%d,%d,%d\n' $((i % 2)) $i $(((i * 7) % 24)) $(((i * 5) % 24)) >> "$WORK/t.csv"; done
cat > "$WORK/rank.sh" <<'SH'
#!/usr/bin/env bash
# one rank: its exit code and stderr into files named by its rank
r="${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}"
"$@" 2> "$W/err.$r"
echo $? > "$W/rc.$r"
SH
chmod +x "$WORK/rank.sh"
run2() { # run2 FAILING_RANK [VAR]: tally correlate on 2 ranks, VAR=FAILING_RANK (default
         # TALLY_TEST_CORR_FAIL: that rank's allocation fails; TALLY_TEST_H5_FAIL: its writes)
  rm -f "$WORK"/err.* "$WORK"/rc.* "$WORK/o.h5"
  local rc=0 var="${2:-TALLY_TEST_CORR_FAIL}"
  env W="$WORK" "$var=$1" timeout 120 mpirun -n 2 --oversubscribe -x W -x "$var" \
    "$WORK/rank.sh" "$TALLY_BIN" correlate --input "$WORK/t.csv" --human human --metrics m1,m2 \
    --group-by dataset --resamples 50 --device cpu --quiet --out "$WORK/o.h5" > "$WORK/out.txt" 2> "$WORK/mpirun.err" || rc=$?
  [ "$rc" != 124 ] || fail "failing rank $1: the job did not end (a rank waits in a collective)"
  for r in 0 1; do
    [ -f "$WORK/rc.$r" ] || { cat "$WORK/mpirun.err"; fail "failing rank $1: rank $r did not finish"; }
    [ "$(cat "$WORK/rc.$r")" = 1 ] || fail "failing rank $1: rank $r exit $(cat "$WORK/rc.$r"), want 1"
  done
  [ ! -s "$WORK/err.1" ] || { cat "$WORK/err.1"; fail "failing rank $1: rank 1 printed (rank 0 prints the agreed message)"; }
  [ ! -e "$WORK/o.h5" ] && [ ! -e "$WORK/o.h5.part" ] || fail "failing rank $1: an output file was left"
}
run2 1
want="tally correlate: rank 1, group '?': out of memory"
[ "$(cat "$WORK/err.0")" = "$want" ] || { cat "$WORK/err.0"; fail "rank 0's stderr is not the one agreed message: $want"; }
run2 0
want="tally correlate: rank 0, group 'dataset=d0': out of memory"
[ "$(cat "$WORK/err.0")" = "$want" ] || { cat "$WORK/err.0"; fail "rank 0's stderr is not: $want"; }
# a write failure on rank 1 (h5p_ds.c's TALLY_TEST_H5_FAIL): the writer's agreed message
run2 1 TALLY_TEST_H5_FAIL
grep -q "^tally: rank 1: HDF5: cannot write dataset '/stats/correlate/summary/group' of '.*o.h5.part'" "$WORK/err.0" &&
  [ "$(wc -l < "$WORK/err.0")" = 1 ] || { cat "$WORK/err.0"; fail "write failure on rank 1: not the one agreed message"; }
# the same input without the injected failure succeeds on 2 ranks
run_ok=0
W="$WORK" timeout 120 mpirun -n 2 --oversubscribe "$TALLY_BIN" correlate --input "$WORK/t.csv" --human human \
  --metrics m1,m2 --group-by dataset --resamples 50 --device cpu --quiet > /dev/null || run_ok=$?
[ "$run_ok" = 0 ] || fail "the study fails without an injected failure (exit $run_ok)"
echo "e2e correlate_fail_rank: ok"
