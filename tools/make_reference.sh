#!/usr/bin/env bash
# Reference outputs of `tally run` made by the code as it was at the pinned commit below, before
# the run path was rewritten, so that any later build can be checked against them with h5diff on
# /items and /metrics (tools/check_reference.sh). Extracts the commit with git archive, builds it
# in a temp folder, and writes OUTDIR/demo.h5 (jobs/demo.json), OUTDIR/se150k.h5 (the 150,000-unit
# job of tools/se_scaling_job.py, K=100; skipped when ../shared/data is absent) and
# OUTDIR/README.txt. The generator is the current tree's, so both sides score the same inputs.
# Jobs run from their own folder with relative paths: /items `source` holds the answer file's
# path as the job resolves it, which must not depend on where the tree or the temp folder is.
# usage: tools/make_reference.sh [OUTDIR]     (default: reference/ at the repo root)
set -euo pipefail
COMMIT=11380a16900f0b3df8a19ed4e7ba577c84b695a2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/reference}"
DATA="${TALLY_SHARED_DATA:-$ROOT/../shared/data}"
PY="${TALLY_PYTHON:-/usr/bin/python3}"
git -C "$ROOT" cat-file -e "$COMMIT^{commit}" 2>/dev/null || {
  echo "make_reference: commit $COMMIT is not in this clone (shallow? try: git fetch --unshallow)" >&2
  exit 1
}
mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd)"
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
t0=$SECONDS
mkdir "$T/src"; git -C "$ROOT" archive "$COMMIT" | tar -x -C "$T/src"
{ cmake -S "$T/src" -B "$T/build" -DTALLY_CUDA=OFF -DTALLY_TESTS=OFF &&
  cmake --build "$T/build" -j"$(nproc)" --target tally; } > "$T/build.log" 2>&1 ||
  { tail -n 40 "$T/build.log" >&2; echo "make_reference: building $COMMIT failed (log above)" >&2; exit 1; }
TALLY="$T/build/tally"
echo "make_reference: built ${COMMIT:0:12} in $((SECONDS - t0)) s"
t1=$SECONDS
rm -f "$OUT/demo.h5" "$OUT/se150k.h5"
(cd "$T/src" && "$TALLY" run jobs/demo.json --out "$OUT/demo.h5" --quiet > /dev/null)
echo "make_reference: demo.h5 in $((SECONDS - t1)) s"
SE="se150k.h5: tools/se_scaling_job.py DATA . 100 in a temp folder, then from there: tally run job.json --out se150k.h5 --quiet"
if [ -d "$DATA/spatialeval" ]; then
  DATA="$(cd "$DATA" && pwd)"; t1=$SECONDS
  mkdir "$T/se"
  (cd "$T/se" && "$PY" "$ROOT/tools/se_scaling_job.py" "$DATA" . 100 &&
    "$TALLY" run job.json --out "$OUT/se150k.h5" --quiet > /dev/null)
  SE="$SE"$'\n'"  DATA = $DATA; answers.jsonl sha256 $(sha256sum "$T/se/answers.jsonl" | cut -c1-64)"
  echo "make_reference: se150k.h5 in $((SECONDS - t1)) s"
else
  SE="se150k.h5: not made, $DATA/spatialeval was absent"
  echo "make_reference: $DATA/spatialeval is absent (set TALLY_SHARED_DATA): se150k.h5 skipped"
fi
cat > "$OUT/README.txt" <<EOF
Reference outputs of tally, made by: tools/make_reference.sh $OUT
on $(date -u +%Y-%m-%dT%H:%M:%SZ), $(hostname), $(nproc) cores, in $((SECONDS - t0)) s.
commit: $COMMIT (git archive, built with cmake -DTALLY_CUDA=OFF -DTALLY_TESTS=OFF); 1 process.
demo.h5: from the extracted tree: tally run jobs/demo.json --out demo.h5 --quiet
$SE
Check a build against them (h5diff of /items and /metrics): tools/check_reference.sh $OUT BUILD
EOF
echo "make_reference: wrote $OUT ($(cd "$OUT" && echo *)) in $((SECONDS - t0)) s total"
