#!/usr/bin/env bash
# Preemption on a real SLURM cluster (tools/slurm-up.sh), on the script `tally slurm` submits:
#  1. requeued midway (`scontrol requeue`, what preemption and a node failure do): SLURM stops
#     the job with SIGTERM, tally flushes its journals and exits 4, SLURM requeues it (the script
#     must not requeue it a second time) and the new attempt resumes from the journals;
#  2. the time-limit notice (USR1 to the batch shell, as --signal=B:USR1@120 sends it): the script
#     forwards it to the ranks, tally exits 4, the script requeues the job, which resumes.
# Each time the final file equals an uninterrupted run's, no unit was asked twice
# (engine_calls + units_resumed == units, units_resumed > 0), and the log (appended, not
# replaced) holds both attempts.
. "$(dirname "$0")/common.sh"
need_python
for v in $(env | grep -o '^\(SLURM\|SBATCH\|SRUN\|SALLOC\|PMIX\|PMI\)_[A-Za-z0-9_]*' || true); do unset "$v"; done
rc=0
timeout 90 bash "$TALLY_SRC/tools/slurm-up.sh" > "$WORK/up.txt" 2> "$WORK/up.err" || rc=$?
if [ "$rc" = 77 ]; then echo "skipped: $(tail -n1 "$WORK/up.err")"; exit 77; fi
[ "$rc" = 0 ] || { cat "$WORK/up.txt" "$WORK/up.err"; fail "tools/slurm-up.sh failed (exit $rc)"; }
SLURM_CONF="$(sed -n 's/^SLURM_CONF=//p' "$WORK/up.txt" | tail -n1)"; export SLURM_CONF
NAME=tally-e2e-requeue
scancel --name="$NAME" 2>/dev/null || true
[ "$(nproc)" -ge 4 ] || export OMPI_MCA_mpi_yield_when_idle=1
# the demo job with 3 s of simulated engine latency per answer: about 25 s on 2 ranks
sed -e "s#\"\.\./out/demo\.h5\"#\"$WORK/pre.h5\"#" -e "s#\"\.\./#\"$TALLY_SRC/#g" "$TALLY_SRC/jobs/demo.json" > "$WORK/src.json"
"$PY" - "$WORK/src.json" "$WORK/pre.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["engine"] = {"type": "replay", "latency_ms": 3000}
j.pop("studies", None)
json.dump(j, open(sys.argv[2], "w"))
PY
"$TALLY_BIN" run "$WORK/pre.json" --out "$WORK/ref.h5" --quiet > /dev/null 2>&1 &
REF=$!
# scenario LABEL OUT ACTION: submits the job writing OUT, runs ACTION (a command using $id) once
# 40 units are journaled, lets the requeued job start at once, and checks the final file
scenario() {
  local label=$1 out=$2 action=$3 n st
  sed "s#$WORK/pre.h5#$out#" "$WORK/pre.json" > "$WORK/$label.json"
  id=$(cd "$WORK" && "$TALLY_BIN" slurm "$WORK/$label.json" --ntasks 2 --time 5 --name "$NAME" --submit) ||
    fail "$label: tally slurm --submit failed"
  id=${id%%;*}
  journaled() { cat "$out".journal/*.jsonl 2>/dev/null | grep -c '"id"' || true; }
  for _ in $(seq 720); do [ "$(journaled)" -ge 40 ] && break; sleep 0.25; done # (it may wait for the node)
  n=$(journaled)
  [ "$n" -ge 40 ] || { cat "$WORK"/tally-*.out 2>/dev/null; scancel "$id"; fail "$label: the job journaled $n units in 180 s"; }
  [ ! -e "$out" ] || fail "$label: the job finished before the stop (make it slower)"
  eval "$action" || { scancel "$id"; fail "$label: '$action' failed"; }
  # A requeued job waits (Reason=BeginTime, about 2 minutes) before it may start again: start
  # it sooner, 3 s after it is first seen pending (started at once, slurmctld can still hold the
  # old incarnation's credential and kill it: "Job credential revoked"). Done: out of the queue
  # with the output written (squeue can show nothing for a moment while the job is requeued).
  local seen=0
  for _ in $(seq 480); do
    st=$(squeue -h -j "$id" -o %T 2>/dev/null || true)
    if [ "$st" = PENDING ]; then
      seen=$((seen + 1))
      [ "$seen" = 6 ] && { scontrol update jobid="$id" StartTime=now 2> /dev/null || true; }
    fi
    [ -z "$st" ] && [ -s "$out" ] && break
    sleep 0.5
  done
  [ -z "$(squeue -h -j "$id" 2>/dev/null)" ] || { scancel "$id"; fail "$label: the requeued job did not finish in 240 s"; }
  log=$(ls "$WORK"/tally-"$NAME"-"$id".out 2>/dev/null) || fail "$label: no log tally-$NAME-$id.out"
  [ -s "$out" ] || { cat "$log"; fail "$label: the requeued job wrote no output"; }
  grep -q "interrupted by signal" "$log" || { cat "$log"; fail "$label: the log lacks the first attempt's stop (was it replaced?)"; }
  grep -q "resume: [1-9][0-9]* of 252 units already done" "$log" || { cat "$log"; fail "$label: the second attempt did not resume"; }
  "$PY" "$TALLY_SRC/tools/h5_same.py" "$WORK/ref.h5" "$out" /items /metrics /audit /input_problems ||
    fail "$label: the file differs from an uninterrupted run's"
  "$PY" -c '
import h5py, sys
a = h5py.File(sys.argv[1], "r").attrs
u, r, c = int(a["units"]), int(a["units_resumed"]), int(a["engine_calls"])
print("%s: units %d = %d from the journal + %d engine calls" % (sys.argv[2], u, r, c))
assert r > 0 and r + c == u, (u, r, c)' "$out" "$label" || fail "$label: a unit was asked twice"
}
wait "$REF" || fail "the uninterrupted run failed"
# 1. SLURM requeues the running job (preemption, a node failure)
scenario requeue "$WORK/pre.h5" 'scontrol requeue "$id"'
if grep -q "requeueing to resume" "$log"; then cat "$log"; fail "requeue: the script requeued the job a second time"; fi
# 2. the time-limit notice, sent at once: the script forwards it, then requeues the job itself
scenario notice "$WORK/pre2.h5" 'scancel --signal=USR1 --batch "$id"'
grep -q "stopped before the time limit; requeueing to resume" "$log" || { cat "$log"; fail "notice: the script did not requeue"; }
echo "e2e slurm requeue: scontrol requeue, and the time-limit notice, midway: resumed, no unit asked twice, the"
echo "e2e slurm requeue: same file as an uninterrupted run"
