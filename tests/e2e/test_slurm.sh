#!/usr/bin/env bash
# tally under a real single-node SLURM cluster (tools/slurm-up.sh starts or reuses munged,
# slurmctld and slurmd; skipped with its reason when SLURM cannot run here):
# - `srun --mpi=pmix -n 2 tally run jobs/demo.json` is one 2-rank MPI world (n_ranks = 2) and
#   gives the same datasets (h5diff) and summary as a plain 1-rank run;
# - slurm/tally-run.sbatch, submitted with `sbatch --wait` as written (4 tasks), finishes with
#   exit 0 and writes the same datasets.
# The daemons are left running for later tests; slurm-up.sh reuses them.
. "$(dirname "$0")/common.sh"
# Not part of any outer allocation (a CI runner inside a SLURM job): this cluster only.
for v in $(env | grep -o '^\(SLURM\|SBATCH\|SRUN\|SALLOC\|PMIX\|PMI\)_[A-Za-z0-9_]*' || true); do unset "$v"; done

rc=0
timeout 90 bash "$TALLY_SRC/tools/slurm-up.sh" > "$WORK/up.txt" 2> "$WORK/up.err" || rc=$?
if [ "$rc" = 77 ]; then echo "skipped: $(tail -n1 "$WORK/up.err")"; exit 77; fi
[ "$rc" = 0 ] || { cat "$WORK/up.txt" "$WORK/up.err"; fail "tools/slurm-up.sh failed (exit $rc)"; }
cat "$WORK/up.txt"
SLURM_CONF="$(sed -n 's/^SLURM_CONF=//p' "$WORK/up.txt" | tail -n1)"; export SLURM_CONF
[ -n "$SLURM_CONF" ] || fail "tools/slurm-up.sh printed no SLURM_CONF"
# Jobs left by an earlier run of this test that was killed would hold the node.
NAME=tally-e2e-slurm
scancel --name="$NAME" 2>/dev/null || true

n_ranks() { h5dump -a /n_ranks "$1" | awk '/\(0\):/ {print $2}'; }
same_as_r1() {  # FILE LABEL: same datasets as the 1-rank run
  for obj in /items /metrics /audit /input_problems /stats; do
    h5diff "$WORK/r1.h5" "$1" "$obj" > "$WORK/diff.txt" ||
      { cat "$WORK/diff.txt"; fail "$obj differs between 1 rank and $2"; }
  done
}
# The node has at least 4 CPUs configured (slurm-up.sh), maybe more than the cores: ranks that
# busy-poll on shared cores are ~30x slower, so let them yield (mpirun --oversubscribe does too).
[ "$(nproc)" -ge 4 ] || export OMPI_MCA_mpi_yield_when_idle=1

"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/r1.h5" --quiet > "$WORK/o1.txt" 2> "$WORK/e1.txt" ||
  { cat "$WORK/e1.txt"; fail "1-rank run failed"; }
sed -i "s#$WORK/r1.h5#OUT#" "$WORK/o1.txt"

# srun with PMIx: one 2-rank world.
rc=0
timeout 90 srun --mpi=pmix -n 2 -t 2 -J "$NAME" "$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/s2.h5" --quiet \
  > "$WORK/o2.txt" 2> "$WORK/e2.txt" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/e2.txt"; fail "srun --mpi=pmix -n 2 failed (exit $rc)"; }
[ "$(n_ranks "$WORK/s2.h5")" = 2 ] || fail "srun -n 2 did not make one 2-rank world (n_ranks $(n_ranks "$WORK/s2.h5"))"
same_as_r1 "$WORK/s2.h5" "srun -n 2"
sed -i "s#$WORK/s2.h5#OUT#" "$WORK/o2.txt"
cmp "$WORK/o1.txt" "$WORK/o2.txt" || fail "summary differs between 1 rank and srun -n 2"

# The sbatch template, as written, on the demo job writing into $WORK.
sed -e "s#\"\.\./out/demo\.h5\"#\"$WORK/sb.h5\"#" -e "s#\"\.\./#\"$TALLY_SRC/#g" \
  "$TALLY_SRC/jobs/demo.json" > "$WORK/sb.json"
grep -q "\"$WORK/sb.h5\"" "$WORK/sb.json" || fail "could not point the demo job at $WORK/sb.h5"
rc=0
timeout 120 sbatch --wait --parsable -t 3 -J "$NAME" --chdir="$WORK" -o "$WORK/sb-%j.out" \
  --export="ALL,JOB=$WORK/sb.json,TALLY=$TALLY_BIN" "$TALLY_SRC/slurm/tally-run.sbatch" \
  > "$WORK/sb.id" 2> "$WORK/sb.err" || rc=$?
id="$(head -n1 "$WORK/sb.id" | cut -d';' -f1)"
if [ "$rc" != 0 ]; then
  cat "$WORK/sb.err" "$WORK"/sb-*.out 2>/dev/null
  [ -n "$id" ] && { scontrol show job "$id" 2>/dev/null; scancel "$id" 2>/dev/null || true; }
  fail "sbatch slurm/tally-run.sbatch failed (exit $rc)"
fi
state="$(scontrol show job -o "$id" 2>/dev/null | tr ' ' '\n' | grep -E '^(JobState|ExitCode)=' | tr '\n' ' ' || true)"
case "$state" in
  "" | "JobState=COMPLETED ExitCode=0:0 ") ;;   # "" when the record has already aged out
  *) cat "$WORK"/sb-*.out; fail "batch job $id: $state" ;;
esac
[ -s "$WORK/sb.h5" ] || { cat "$WORK"/sb-*.out; fail "batch job $id wrote no $WORK/sb.h5"; }
[ "$(n_ranks "$WORK/sb.h5")" = 4 ] || fail "batch job did not run 4 ranks (n_ranks $(n_ranks "$WORK/sb.h5"))"
same_as_r1 "$WORK/sb.h5" "the 4-task batch job"
echo "e2e slurm: srun --mpi=pmix -n 2 and sbatch tally-run.sbatch (4 tasks) match the 1-rank run"
