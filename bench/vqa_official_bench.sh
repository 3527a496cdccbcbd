#!/usr/bin/env bash
# `tally score vqa` against the official VQA evaluator's algorithm (issue 34, item 5).
#
# The set: bench/vqa_synth.py's VQA v2-shaped set of N questions (default 214,354, the val
# split's size) in the official format (annotations, questions, an official results file).
# The reference: bench/vqa_official.py, the official vqaEval.py's per-question Python loop as
# ../shared/spec/vqa-lave-statistics.md describes it (the official code is not in ../shared);
# it is first checked against the outputs of the official code kept in ../shared/data/vqa
# (vqa_official.py --check: 66 checks). Then, REPS times in turn (A B A B), each whole process:
#   A  tally score vqa --annotations --questions --results --output
#   B  /usr/bin/python3 bench/vqa_official.py ANNOTATIONS QUESTIONS RESULTS OUT
# with CPU seconds (user + system), wall seconds and peak RSS from /usr/bin/time; the medians and
# the ratios B / A; and every value of both outputs compared (overall, perQuestionType,
# perAnswerType, every perQuestion value): any difference fails the script.
# usage: [BUILD=build] bench/vqa_official_bench.sh [N] [REPS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-214354}"
REPS="${2:-3}"
BUILD="${BUILD:-build}"
DATA="${TALLY_SHARED_DATA:-$PWD/../shared/data}"
[ -f "$DATA/vqa/vqa_eval_vectors.json" ] || { echo "vqa_official_bench: needs $DATA/vqa (../shared/data)"; exit 77; }
DATA="$(cd "$DATA" && pwd)"
cmake --build "$BUILD" -j1 --target tally > /dev/null
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 bench/vqa_official.py --check "$DATA/vqa"
/usr/bin/python3 bench/vqa_synth.py "$DATA/vqa" "$T/set" "$N" > /dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "set: $N questions; annotations $(du -h "$T/set/annotations.json" | cut -f1), questions $(du -h "$T/set/questions.json" | cut -f1), results $(du -h "$T/set/results.json" | cut -f1)"
AN="$T/set/annotations.json" Q="$T/set/questions.json" RS="$T/set/results.json"

run() { # side rep: one timed run, its "cpu wall MiB" appended to $T/side
  local side="$1"
  if [ "$side" = A ]; then
    /usr/bin/time -f "%U %S %e %M" -o "$T/t" "$BUILD/tally" score vqa --annotations "$AN" --questions "$Q" \
      --results "$RS" --output "$T/out_A.json" 2> "$T/err_A"
  else
    /usr/bin/time -f "%U %S %e %M" -o "$T/t" /usr/bin/python3 bench/vqa_official.py "$AN" "$Q" "$RS" "$T/out_B.json"
  fi
  read -r u sy e kb < "$T/t"
  awk -v u="$u" -v s="$sy" -v e="$e" -v k="$kb" 'BEGIN{printf "%.3f %.3f %.1f\n", u + s, e, k / 1024}' >> "$T/$side"
}
for r in $(seq "$REPS"); do
  run A
  run B
  printf 'pair %d: tally %s | official %s (CPU s, wall s, peak MiB)\n' "$r" "$(tail -1 "$T/A")" "$(tail -1 "$T/B")"
done

/usr/bin/python3 - "$T/out_A.json" "$T/out_B.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
bad = 0
for key in ('overall', 'perQuestionType', 'perAnswerType', 'perQuestion'):
    x, y = a[key], b[key]
    if isinstance(x, dict):
        if list(x) != list(y):
            print('%s: different keys or key order' % key); bad += 1
        diff = [k for k in x if k in y and x[k] != y[k]]
        bad += len(diff)
        for k in diff[:5]:
            print('%s[%s]: tally %r, official %r' % (key, k, x[k], y[k]))
        n = len(x)
    else:
        n = 1
        if x != y:
            print('%s: tally %r, official %r' % (key, x, y)); bad += 1
    print('%-16s %7d values %s' % (key, n, 'equal' if not bad else ''))
if bad:
    print('tally and the official algorithm DIFFER on %d values' % bad); sys.exit(1)
print('every value equal')
EOF

med() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for i in 1 2 3; do
  eval "A$i=$(cut -d' ' -f$i "$T/A" | med)"
  eval "B$i=$(cut -d' ' -f$i "$T/B" | med)"
done
printf 'medians: tally CPU %.2f s, wall %.2f s, peak %.0f MiB | official CPU %.2f s, wall %.2f s, peak %.0f MiB\n' \
  "$A1" "$A2" "$A3" "$B1" "$B2" "$B3"
awk -v a1="$A1" -v a2="$A2" -v a3="$A3" -v b1="$B1" -v b2="$B2" -v b3="$B3" \
  'BEGIN{printf "official / tally: CPU %.1fx, wall %.1fx; tally / official peak memory %.2fx\n", b1 / a1, b2 / a2, a3 / b3}'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
