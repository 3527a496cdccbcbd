#!/usr/bin/env bash
# tally under a real single-node SLURM cluster (tools/slurm-up.sh starts or reuses munged,
# slurmctld and slurmd; skipped with its reason when SLURM cannot run here):
# - `srun --mpi=pmix -n 2 tally run jobs/demo.json` is one 2-rank MPI world (n_ranks = 2) and
#   gives the same datasets (h5diff) and summary as a plain 1-rank run;
# - slurm/tally-run.sbatch, submitted with `sbatch --wait` as written (4 tasks), finishes with
#   exit 0 and writes the same datasets.
# The daemons are left running for later tests; slurm-up.sh reuses them.
. "$(dirname "$0")/common.sh"
need_python # h5_same.py compares the merged sweep
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
# tally slurm puts the log beside the output before the output exists, not beside the job file
mkdir "$WORK/jd" && sed "s#\"$WORK/sb.h5\"#\"../sb.h5\"#" "$WORK/sb.json" > "$WORK/jd/sb.json"
(cd "$WORK" && "$TALLY_BIN" slurm jd/sb.json) | grep -qxF "#SBATCH --output=\"$WORK/tally-%x-%j.out\"" ||
  fail "tally slurm: the log of a job whose output does not exist yet is not beside the output"
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

# `tally slurm`: the script it prints, submitted as it is (--submit --wait), on a copy of the job
sed -e "s#\"$WORK/sb.h5\"#\"$WORK/ts.h5\"#" "$WORK/sb.json" > "$WORK/ts.json"
"$TALLY_BIN" slurm "$WORK/ts.json" --ntasks 2 --time 3 --name "$NAME" > "$WORK/ts.sbatch" || fail "tally slurm failed"
for want in "#SBATCH --ntasks=2" "#SBATCH --requeue" "#SBATCH --signal=B:USR1@120" "#SBATCH --output=\"$WORK/tally-%x-%j.out\"" \
            "srun --mpi=pmix \"\$TALLY\" run \"\$JOB\" --out \"\$OUT\" \${RESUME[@]+" "[ -d \"\$OUT.journal\" ] && RESUME=(--resume)"; do
  grep -qF -- "$want" "$WORK/ts.sbatch" || { cat "$WORK/ts.sbatch"; fail "the script lacks '$want'"; }
done
rc=0
(cd "$WORK" && timeout 120 "$TALLY_BIN" slurm "$WORK/ts.json" --ntasks 2 --time 3 --name "$NAME" --submit --wait \
  > "$WORK/ts.id" 2> "$WORK/ts.err") || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/ts.err" "$WORK"/tally-*.out 2>/dev/null; fail "tally slurm --submit --wait failed (exit $rc)"; }
[ -s "$WORK/ts.h5" ] || { cat "$WORK"/tally-*.out; fail "the submitted script wrote no output"; }
[ "$(n_ranks "$WORK/ts.h5")" = 2 ] || fail "the submitted script did not run 2 ranks"
same_as_r1 "$WORK/ts.h5" "the script tally slurm submitted"
ls "$WORK"/tally-"$NAME"-*.out > /dev/null 2>&1 || fail "no log named from the job name and id beside the output"
# the README's demo job itself, unchanged: `tally slurm jobs/demo.json --submit` from the source
# root writes out/demo.h5 (the folder the README's demo command uses)
mkdir -p "$TALLY_SRC/out"
# out/demo.h5 may exist from the README's demo: without --force tally slurm refuses to replace it
rc=0; (cd "$TALLY_SRC" && "$TALLY_BIN" slurm jobs/demo.json --ntasks 2 --time 3 > /dev/null 2> "$WORK/demo0.err") || rc=$?
if [ -e "$TALLY_SRC/out/demo.h5" ] && [ ! -d "$TALLY_SRC/out/demo.h5.journal" ]; then
  [ "$rc" = 2 ] && grep -q -- "--force" "$WORK/demo0.err" || { cat "$WORK/demo0.err"; fail "tally slurm over a finished output: exit $rc"; }
fi
rc=0
(cd "$TALLY_SRC" && timeout 120 "$TALLY_BIN" slurm jobs/demo.json --ntasks 2 --time 3 --name "$NAME" --force --submit --wait \
  > "$WORK/demo.id" 2> "$WORK/demo.err") || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/demo.err" "$TALLY_SRC"/out/tally-"$NAME"-*.out 2>/dev/null; fail "tally slurm jobs/demo.json --submit --wait failed (exit $rc)"; }
same_as_r1 "$TALLY_SRC/out/demo.h5" "tally slurm jobs/demo.json --submit, unchanged"
rm -f "$TALLY_SRC"/out/tally-"$NAME"-*.out
# a sweep: `tally slurm --array` submits one array task per (model, seed) cell and a merge job
# after them (afterok); the merged file equals one run of the whole sweep
"$PY" - "$WORK/sb.json" "$WORK/sw.json" "$WORK/sw.h5" <<'PY2'
import json, sys
j = json.load(open(sys.argv[1]))
j["output"] = sys.argv[3]
b = j["benchmarks"][0]
b["models"], b["seeds"] = ["toy-llm-b", "toy-vlm-a"], [0, 1, 2]
json.dump(j, open(sys.argv[2], "w"))
PY2
"$TALLY_BIN" run "$WORK/sw.json" --out "$WORK/sw_ref.h5" --quiet > /dev/null || fail "the whole sweep in one run failed"
"$TALLY_BIN" slurm "$WORK/sw.json" --array --array-throttle 2 --ntasks 2 --time 3 --name "$NAME" > "$WORK/sw.out" ||
  fail "tally slurm --array failed"
# the two scripts are files beside the output; standard output says how to submit them
cat "$WORK/sw.h5.array.sbatch" "$WORK/sw.h5.merge.sbatch" "$WORK/sw.out" > "$WORK/sw.sbatch"
for want in "#SBATCH --array=0-5%2" "--cell \"\$SLURM_ARRAY_TASK_ID\"" "--keep-journal" "sbatch --dependency=afterok" \
            "merge \"\${files[@]}\" -o \"\$OUT\" --force" "--partial --force"; do
  grep -qF -- "$want" "$WORK/sw.sbatch" || { cat "$WORK/sw.sbatch"; fail "the sweep scripts lack '$want'"; }
done
rc=0
(cd "$WORK" && timeout 300 "$TALLY_BIN" slurm "$WORK/sw.json" --array --array-throttle 2 --ntasks 2 --time 3 --name "$NAME" \
  --submit --wait > "$WORK/sw.id" 2> "$WORK/sw.err") || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/sw.id" "$WORK/sw.err" "$WORK"/tally-*.out 2>/dev/null; fail "the sweep (array + merge) failed (exit $rc)"; }
[ "$(ls "$WORK"/sw.h5.cells/cell-*.h5 | wc -l)" = 6 ] || fail "the array did not write 6 cells"
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/sw_ref.h5" "$WORK/sw.h5" / || fail "the merged sweep differs from one run of it"
# the same sweep through the static templates slurm/sweep.sbatch and slurm/merge.sbatch
a=$(cd "$WORK" && sbatch --parsable --array=0-5%2 -n 2 -t 3 -J "$NAME" -o "$WORK/tsw-%A_%a.out" \
  --export="ALL,JOB=$WORK/sw.json,CELLS=$WORK/tsw.cells,TALLY=$TALLY_BIN" "$TALLY_SRC/slurm/sweep.sbatch") ||
  fail "sbatch slurm/sweep.sbatch failed"
rc=0
(cd "$WORK" && timeout 300 sbatch --wait --parsable --dependency="afterok:${a%%;*}" -n 2 -t 3 -J "$NAME" -o "$WORK/tmg-%j.out" \
  --export="ALL,CELLS=$WORK/tsw.cells,N=6,OUT=$WORK/tsw.h5,TALLY=$TALLY_BIN" "$TALLY_SRC/slurm/merge.sbatch" > /dev/null) || rc=$?
[ "$rc" = 0 ] || { cat "$WORK"/tsw-*.out "$WORK"/tmg-*.out 2>/dev/null; fail "slurm/merge.sbatch after slurm/sweep.sbatch failed (exit $rc)"; }
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/sw_ref.h5" "$WORK/tsw.h5" / || fail "the templates' merged sweep differs from one run of it"
# --serve: the job's openai engine asks per-GPU servers that slurm/serve.sh starts inside the
# job (the test server standing in for vLLM, two "GPUs", a rank each through {port})
P=$("$PY" -c '
import socket
for base in range(23000, 60000, 89):
    ok = True
    for p in (base, base + 1):
        s = socket.socket()
        try: s.bind(("127.0.0.1", p))
        except OSError: ok = False
        finally: s.close()
    if ok: print(base); break')
for n in 1 2; do
  cat > "$WORK/srv$n.json" <<JOB
{"name": "served", "output": "$WORK/srv$n.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:{port}/v1", "port_base": $P,
                       "sampling": {"temperature": 0}, "health": {"wait_s": 10}}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$TALLY_SRC/demo/spatialeval/items.jsonl", "models": ["m"], "seeds": [0, 1]}]}
JOB
done
export TALLY_TESTSERVER="$(dirname "$TALLY_BIN")/tally-testserver"
bash "$TALLY_SRC/slurm/serve.sh" --kind test --gpus 1 --port-base "$P" --wait 20 --log-dir "$WORK/srvlogs" -- \
  "$TALLY_BIN" run "$WORK/srv1.json" --quiet > "$WORK/srv1.out" 2>&1 || { cat "$WORK/srv1.out"; fail "the served 1-rank run failed"; }
rc=0
(cd "$WORK" && timeout 180 "$TALLY_BIN" slurm "$WORK/srv2.json" --serve test --serve-gpus 2 --serve-wait 30 --ntasks 2 --time 3 \
  --name "$NAME" --submit --wait > "$WORK/srv.id" 2> "$WORK/srv.err") || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/srv.err" "$WORK"/tally-"$NAME"-*.out 2>/dev/null; fail "tally slurm --serve test failed (exit $rc)"; }
"$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/srv1.h5" "$WORK/srv2.h5" /items /metrics --skip endpoint --skip latency_ms \
  --skip request_id --skip source || fail "the job with its servers started by tally slurm --serve differs from 1 rank"
"$PY" - "$WORK/srv2.h5" "$P" "$TALLY_SRC/tools" <<'PY2' || fail "each rank should ask its own server"
import sys
sys.path.insert(0, sys.argv[3])
from tally_h5 import read_table
# serve.sh picked the job's ports (--port-base auto, told to tally as TALLY_PORT_BASE): two
# consecutive ones, a rank each
e = sorted(set(read_table(sys.argv[1], "/items/spatialeval")["endpoint"]))
ports = [int(x.split(":")[2].split("/")[0]) for x in e]
assert len(ports) == 2 and ports[1] == ports[0] + 1, e
PY2
# a job tally would refuse is never submitted
sed 's/"benchmark": "spatialeval"/"benchmark": "spatialevl"/' "$WORK/ts.json" > "$WORK/bad.json"
rc=0; "$TALLY_BIN" slurm "$WORK/bad.json" --submit > /dev/null 2> "$WORK/bad.err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown benchmark 'spatialevl'" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "an invalid job: exit $rc"; }
echo "e2e slurm: srun --mpi=pmix -n 2, sbatch tally-run.sbatch (4 tasks) and tally slurm --submit (2 tasks) match the 1-rank run;"
echo "e2e slurm: tally slurm jobs/demo.json --submit (unchanged) matches too; tally slurm --array (6 cells, throttle 2) and"
echo "e2e slurm: its merge job equal one run of the sweep, as do slurm/sweep.sbatch + slurm/merge.sbatch; tally slurm"
echo "e2e slurm: --serve starts a server per GPU inside the job and each rank asks its own"
