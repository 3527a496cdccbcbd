#!/usr/bin/env bash
# `tally slurm`'s scripts are safe by construction and carry the site's options (issues 28, 30):
#  1. hostile folder names (a space, quotes, #, %, $(...), backquotes, a backslash): every
#     #SBATCH value reads back, as sbatch parses it (backslash escapes, quotes group, an unquoted
#     # starts a comment; %% in a file pattern), as the value meant; the script runs under stub
#     srun/scontrol/scancel commands with the paths intact and no injected command runs;
#  2. a folder or job path with a newline (a control character) is refused, exit 2;
#  3. --account, --qos, --mem, --cpus-per-task, --constraint, repeated --sbatch-arg, --prologue
#     (its lines before the run), --mpi pmi2 and none (mpirun); bad values exit 2;
#  4. --array writes OUTPUT.array.sbatch and OUTPUT.merge.sbatch beside the output (never one
#     stream) and prints how to submit them; with --serve the array has one task per model, each
#     running its seeds' cells on one server.
. "$(dirname "$0")/common.sh"
D="$TALLY_SRC/demo/spatialeval"
# sbatch's reading of an #SBATCH line's arguments (src/sbatch/opt.c, _get_argument): the facts
# the quoting must meet, written in Python for the test
SBPARSE='
import sys
def args(line):
    out, i, n = [], 0, len(line)
    while True:
        while i < n and line[i].isspace(): i += 1
        if i >= n: return out
        a, q, esc = "", None, False
        while i < n and (q or not line[i].isspace()):
            c = line[i]
            if esc: a += c; esc = False
            elif c == "\\": esc = True
            elif q:
                if c == q: q = None
                else: a += c
            elif c in "\"'"'"'": q = c
            elif c == "#": return out + ([a] if a else [])
            else: a += c
            i += 1
        out.append(a)
for line in open(sys.argv[1]):
    if line.startswith("#SBATCH"):
        for a in args(line[len("#SBATCH"):]): print(a)
'
sbatch_args() { "$PY" -c "$SBPARSE" "$1"; }

# ---- 1. hostile folder names ----
HOST='dir with space "dq" '"'sq'"' #hash 100% $(touch PWNED) `touch PWNED2` back\slash'
mkdir -p "$WORK/$HOST"
cat > "$WORK/$HOST/job.json" <<JOB
{"name": "hostile", "output": "out.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "answers": "$D/answers.jsonl"}]}
JOB
"$TALLY_BIN" slurm "$WORK/$HOST/job.json" --ntasks 2 --name 'n "#x" %j' --account 'acc #1' > "$WORK/h.sbatch" ||
  fail "1: tally slurm on a hostile folder failed"
sbatch_args "$WORK/h.sbatch" > "$WORK/h.args"
grep -qxF -- "--output=$WORK/${HOST//%/%%}/tally-%x-%j.out" "$WORK/h.args" ||
  { cat "$WORK/h.args"; fail "1: --output does not read back as the folder (with % as %%)"; }
grep -qxF -- '--job-name=n "#x" %j' "$WORK/h.args" || { cat "$WORK/h.args"; fail "1: --job-name does not read back"; }
grep -qxF -- '--account=acc #1' "$WORK/h.args" || { cat "$WORK/h.args"; fail "1: --account does not read back"; }
# run it under stub commands: srun records its arguments, one per line
mkdir -p "$WORK/stub"
for c in srun scontrol scancel mpirun; do
  printf '#!/bin/bash\nprintf "%%s\\n" "$(basename "$0")" "$@" > "%s/%s.args"\n' "$WORK" "$c" > "$WORK/stub/$c"
  chmod +x "$WORK/stub/$c"
done
(cd "$WORK" && PATH="$WORK/stub:$PATH" SLURM_JOB_ID=7 bash "$WORK/h.sbatch") > "$WORK/h.run" 2>&1 ||
  { cat "$WORK/h.run"; fail "1: the script failed under the stubs"; }
grep -qxF "$WORK/$HOST/job.json" "$WORK/srun.args" || { cat "$WORK/srun.args"; fail "1: srun did not get the job path intact"; }
grep -qxF "$WORK/$HOST/out.h5" "$WORK/srun.args" || { cat "$WORK/srun.args"; fail "1: srun did not get the output path intact"; }
[ ! -e "$WORK/PWNED" ] && [ ! -e "$WORK/PWNED2" ] && [ ! -e "$WORK/$HOST/PWNED" ] || fail "1: a command in a folder name ran"
echo "1: a hostile folder: every #SBATCH value reads back; the script runs with the paths intact, nothing injected"

# ---- 2. control characters ----
NL="$WORK/new
line"
mkdir -p "$NL"
cp "$WORK/$HOST/job.json" "$NL/job.json"
set +e
"$TALLY_BIN" slurm "$NL/job.json" > /dev/null 2> "$WORK/nl.err"; rc=$?
"$TALLY_BIN" slurm "$WORK/$HOST/job.json" --account "$(printf 'a\nb')" > /dev/null 2> "$WORK/nl2.err"; rc2=$?
set -e
[ "$rc" = 2 ] && grep -q "control character" "$WORK/nl.err" || { cat "$WORK/nl.err"; fail "2: a newline in the path: exit $rc"; }
[ "$rc2" = 2 ] || { cat "$WORK/nl2.err"; fail "2: a newline in --account: exit $rc2"; }
echo "2: control characters in paths and values: exit 2"

# ---- 3. the site's options ----
printf 'module load gcc/12 openmpi\nexport OMP_NUM_THREADS=1\n' > "$WORK/pro.sh"
J="$WORK/$HOST/job.json"
"$TALLY_BIN" slurm "$J" --account proj1 --qos high --mem 64G --cpus-per-task 8 --constraint 'a100&ib' \
  --sbatch-arg=--mail-type=END --sbatch-arg --exclusive --prologue "$WORK/pro.sh" --mpi pmi2 > "$WORK/s.sbatch" ||
  fail "3: tally slurm with the site's options failed"
sbatch_args "$WORK/s.sbatch" > "$WORK/s.args"
for want in --account=proj1 --qos=high --mem=64G --cpus-per-task=8 '--constraint=a100&ib' --mail-type=END --exclusive; do
  grep -qxF -- "$want" "$WORK/s.args" || { cat "$WORK/s.args"; fail "3: no #SBATCH $want"; }
done
grep -q "^module load gcc/12 openmpi$" "$WORK/s.sbatch" || fail "3: the prologue is not in the script"
[ "$(grep -n "^module load" "$WORK/s.sbatch" | cut -d: -f1)" -lt "$(grep -n "run \"\$JOB\"" "$WORK/s.sbatch" | cut -d: -f1)" ] ||
  fail "3: the prologue does not come before the run"
grep -q 'srun --mpi=pmi2 "$TALLY" run' "$WORK/s.sbatch" || fail "3: --mpi pmi2 not used"
"$TALLY_BIN" slurm "$J" --mpi none | grep -q 'mpirun "$TALLY" run' || fail "3: --mpi none does not use mpirun"
for bad in "--mpi pmi3" "--cpus-per-task 0" "--sbatch-arg mail" "--sbatch-arg=--bad$(printf '\t')x" "--prologue $WORK/none.sh" "--qos ''"; do
  set +e
  eval "\"\$TALLY_BIN\" slurm \"\$J\" $bad" > /dev/null 2>&1; rc=$?
  set -e
  [ "$rc" = 2 ] || fail "3: '$bad' gave exit $rc, not 2"
done
echo "3: account, qos, mem, cpus, constraint, sbatch-arg, prologue, --mpi; bad values exit 2"

# ---- 4. --array: two files; with --serve one task per model ----
cat > "$WORK/sw.json" <<JOB
{"name": "sw", "output": "$WORK/sw.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:{port}/v1", "model": "served"}},
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl", "models": ["m1", "m2"], "seeds": [0, 1, 2]}]}
JOB
"$TALLY_BIN" slurm "$WORK/sw.json" --array > "$WORK/sw.out" || fail "4: tally slurm --array failed"
[ -f "$WORK/sw.h5.array.sbatch" ] && [ -f "$WORK/sw.h5.merge.sbatch" ] || fail "4: the two files were not written"
grep -q "sbatch --dependency=afterok" "$WORK/sw.out" || { cat "$WORK/sw.out"; fail "4: how to submit them is not printed"; }
! grep -q "^#!/bin/bash" "$WORK/sw.out" || fail "4: a script went to standard output"
grep -q "^#SBATCH --array=0-5$" "$WORK/sw.h5.array.sbatch" || fail "4: the array is not 6 cells"
"$TALLY_BIN" slurm "$WORK/sw.json" --array --serve llamacpp --serve-model /m.gguf > /dev/null || fail "4: --serve --array failed"
grep -q "^#SBATCH --array=0-1$" "$WORK/sw.h5.array.sbatch" || fail "4: with --serve the array is not one task per model"
grep -q 'K=$((SLURM_ARRAY_TASK_ID \* SEEDS + s))' "$WORK/sw.h5.array.sbatch" || fail "4: a task does not run its model's seeds"
grep -q -- "--port-base auto" "$WORK/sw.h5.array.sbatch" || fail "4: serve.sh does not pick its ports"
echo "4: --array writes two files and prints how to submit them; with --serve one task per model"
echo PASS
