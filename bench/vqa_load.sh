#!/usr/bin/env bash
# A VQA v2-sized job: load, score, and 1 against 2 ranks (issue 34, item 4).
#
# bench/vqa_synth.py writes a synthetic VQA v2-shaped set of N questions (default 214,354, the
# val split's size) in the official format, its answers drawn from the real 589-question sample
# in ../shared/data/vqa (so normalization has punctuation, numbers, articles and contractions to
# do), a replay answers file of one model, the same predictions as an official results file, and
# a job. Then, for this build and (REF=DIR, optional) a reference tree's build DIR/build/tally:
#  1. the loader alone (bench/vqa_load_time.c, compiled against each tree): CPU and wall seconds
#     of tl_vqa_load_official and tl_vqa_load_results, and a digest of what they loaded;
#  2. `tally score vqa` on the same files: CPU, wall, peak RSS; its outputs compared byte for byte;
#  3. `tally run JOB` on 1 and on 2 ranks: CPU (user + system of every process mpirun started),
#     wall, and the phases of tally's log line (load, score, gather+write); /items and /metrics
#     compared across rank counts and against the reference (tools/h5_same.py).
# The figures are one run each: on a shared machine repeat it, or time single commands with a
# paired A/B tool. Prints the load average beside them.
# usage: [REF=/path/to/other/tree] [BUILD=build] bench/vqa_load.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-214354}"
BUILD="${BUILD:-build}"
DATA="${TALLY_SHARED_DATA:-$PWD/../shared/data}"
[ -f "$DATA/vqa/vqav2_smallval_annotations.json" ] || { echo "vqa_load: needs $DATA/vqa (../shared/data)"; exit 77; }
DATA="$(cd "$DATA" && pwd)"
cmake --build "$BUILD" -j1 --target tally vqa_load_time > /dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PMIX_MCA_psec="${PMIX_MCA_psec:-native}" # no munge round trips before each local launch
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 bench/vqa_synth.py "$DATA/vqa" "$T/set" "$N"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "set: $N questions; annotations $(du -h "$T/set/annotations.json" | cut -f1), questions $(du -h "$T/set/questions.json" | cut -f1), answers $(du -h "$T/set/answers.jsonl" | cut -f1)"

# the builds: this one (A) and the reference (R), when given
declare -A BIN LT
BIN[A]="$BUILD/tally"
LT[A]="$BUILD/bench/vqa_load_time"
SIDES="A"
if [ -n "${REF:-}" ]; then
  BIN[R]="$REF/build/tally"
  LT[R]="$T/vqa_load_time_ref"
  cc -O2 -I"$REF/include" -I"$REF/src/core/bench/vqa" -I"$REF/src/core" bench/vqa_load_time.c \
    "$REF/build/libtally_core.a" -lcjson -lpcre2-8 -lm -o "${LT[R]}"
  SIDES="A R"
fi
name() { [ "$1" = A ] && echo "this build" || echo "reference ($REF)"; }
Q="$T/set/questions.json" AN="$T/set/annotations.json" RS="$T/set/results.json"

echo "== 1. the loader alone (tl_vqa_load_official + tl_vqa_load_results)"
for s in $SIDES; do
  printf '%-28s %s\n' "$(name $s):" "$("${LT[$s]}" "$Q" "$AN" "$RS")"
done

echo "== 2. tally score vqa --questions --annotations --results"
for s in $SIDES; do
  /usr/bin/time -f "%U %S %e %M" -o "$T/t" "${BIN[$s]}" score vqa --questions "$Q" --annotations "$AN" --results "$RS" \
    > "$T/score_$s.json" 2> "$T/score_$s.err"
  read -r u sy e kb < "$T/t"
  printf '%-28s CPU %6.2f s  wall %6.2f s  peak %5.0f MiB\n' "$(name $s):" "$(awk -v a="$u" -v b="$sy" 'BEGIN{print a + b}')" "$e" "$(awk -v k="$kb" 'BEGIN{print k / 1024}')"
done
if [ -n "${REF:-}" ]; then
  cmp -s "$T/score_A.json" "$T/score_R.json" && cmp -s "$T/score_A.err" "$T/score_R.err" \
    && echo "score vqa: output and messages identical to the reference" || { echo "score vqa: DIFFERENT from the reference"; exit 1; }
fi

echo "== 3. tally run (replay, VQA accuracy, soft accuracy, exact match; the summary's CIs)"
for s in $SIDES; do
  for n in 1 2; do
    out="$T/o_${s}_$n.h5"
    /usr/bin/time -f "%U %S %e %M" -o "$T/t" mpirun -n "$n" --oversubscribe "${BIN[$s]}" run "$T/set/job.json" --out "$out" \
      > /dev/null 2> "$T/e_${s}_$n" || { cat "$T/e_${s}_$n"; exit 1; }
    read -r u sy e kb < "$T/t"
    line=$(grep "engine calls" "$T/e_${s}_$n" | sed 's/^tally: //; s/, 0 from the journal.*rank[s]*; / | /; s/; [0-9]* chunks.*//')
    printf '%-28s %d rank(s): CPU %6.2f s  wall %6.2f s  | %s\n' "$(name $s)" "$n" \
      "$(awk -v a="$u" -v b="$sy" 'BEGIN{print a + b}')" "$e" "$line"
    echo "$e" > "$T/wall_${s}_$n"
  done
  /usr/bin/python3 tools/h5_same.py "$T/o_${s}_1.h5" "$T/o_${s}_2.h5" /items /metrics \
    && echo "$(name $s): 1 and 2 ranks give identical /items and /metrics" || { echo "1 and 2 ranks DIFFER"; exit 1; }
  awk -v a="$(cat "$T/wall_${s}_1")" -v b="$(cat "$T/wall_${s}_2")" -v who="$(name $s)" \
    'BEGIN{printf "%s: wall 1 rank / 2 ranks = %.2fx\n", who, a / b}'
done
if [ -n "${REF:-}" ]; then
  /usr/bin/python3 tools/h5_same.py "$T/o_R_1.h5" "$T/o_A_1.h5" /items /metrics \
    && echo "run: /items and /metrics identical to the reference" || { echo "run: DIFFERENT from the reference"; exit 1; }
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
