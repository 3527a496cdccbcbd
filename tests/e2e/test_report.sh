#!/usr/bin/env bash
# `tally report` (docs/REPORT.md): the report of each demo (jobs/demo.json: SpatialEval and a
# study; jobs/mtbench101-demo.json; jobs/vqa-demo.json) in every format equals its golden file
# in tests/golden/report/ (the build's commit, the HDF5 and libdeflate versions masked); the
# report of demo.json written on 4 ranks equals the one written on 1; a file that is not a run
# file of tally is refused with exit 3 naming it; the HTML report of each demo opens in headless
# Chromium with no console error and every chart drawn (a screenshot kept); -o never writes over the run file and writes
# the same bytes as standard output; a bad --format is exit 2; `tally run --json` prints the
# same JSON as `tally report --format json` of its output, `tally compare --json` the schema with
# its forest chart and the text's diff. The LaTeX compiles when pdflatex is present.
#
# TALLY_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing (then review the diff).
source "$(dirname "$0")/common.sh"
GOLD="$TALLY_SRC/tests/golden/report"
cd "$TALLY_SRC" # the inputs' paths in the report are relative to the working folder

run_demo() { # JOB OUT [mpirun ranks]
  if [ -n "${3:-}" ]; then
    mpirun -n "$3" --oversubscribe "$TALLY_BIN" run "$1" --out "$2" --quiet > "$WORK/run.out" 2> "$WORK/run.err" ||
      { cat "$WORK/run.err"; fail "mpirun -n $3 tally run $1 failed"; }
  else
    "$TALLY_BIN" run "$1" --out "$2" --quiet > "$WORK/run.out" 2> "$WORK/run.err" || { cat "$WORK/run.err"; fail "tally run $1 failed"; }
  fi
}

# The report of $1 in format $2 with what depends on the build machine masked.
masked() {
  "$TALLY_BIN" report "$1" --format text > "$WORK/m.txt" || fail "tally report $1 failed"
  local commit h5 defl
  commit=$(awk '$1 == "tally_commit" { print $2 }' "$WORK/m.txt")
  h5=$(awk '$1 == "hdf5_version" { print $2 }' "$WORK/m.txt")
  defl=$(awk '$1 == "deflate" { $1 = ""; sub(/^ +/, ""); print }' "$WORK/m.txt")
  [ -n "$commit" ] && [ -n "$h5" ] && [ -n "$defl" ] || fail "the report of $1 lacks the commit or versions"
  "$TALLY_BIN" report "$1" --format "$2" |
    sed -e "s|${commit}|COMMIT|g" -e "s|${h5//./\\.}|HDF5_VERSION|g" -e "s|${defl//./\\.}|DEFLATE|g"
}

commit_dirty=
for demo in demo mtbench101-demo vqa-demo; do
  run_demo "jobs/$demo.json" "$WORK/$demo.h5"
  if "$TALLY_BIN" report "$WORK/$demo.h5" --format text | grep -Eq '^tally_commit +[0-9a-f]+-dirty$'; then
    commit_dirty=1
    [ -z "${TALLY_UPDATE_GOLDEN:-}" ] || fail "TALLY_UPDATE_GOLDEN=1 from a -dirty build: commit first (the golden files come from a clean build)"
  fi
  for f in text md latex csv json html; do
    ext=$f
    [ "$f" = text ] && ext=txt
    [ "$f" = latex ] && ext=tex
    masked "$WORK/$demo.h5" "$f" > "$WORK/$demo.$ext"
    if [ -n "${TALLY_UPDATE_GOLDEN:-}" ]; then
      mkdir -p "$GOLD" && cp "$WORK/$demo.$ext" "$GOLD/$demo.$ext"
    else
      # The golden files come from a clean build (tally_commit: 40 hex digits). A build from a
      # tree with changes says "<commit>-dirty", 6 characters wider, which can widen the run
      # table's value column (text, md): then those two compare with runs of blanks and dashes
      # squeezed; every other byte, and every format of a clean build, compares exactly.
      if [ "${commit_dirty:-}" = 1 ] && { [ "$f" = text ] || [ "$f" = md ]; }; then
        squeeze() { sed -E 's/ +/ /g; s/-+/-/g' "$1"; }
        diff -u <(squeeze "$GOLD/$demo.$ext") <(squeeze "$WORK/$demo.$ext") > "$WORK/diff" ||
          { head -60 "$WORK/diff"; fail "$demo: --format $f differs from tests/golden/report/$demo.$ext (blanks squeezed: a -dirty build)"; }
      else
        diff -u "$GOLD/$demo.$ext" "$WORK/$demo.$ext" > "$WORK/diff" || { head -60 "$WORK/diff"; fail "$demo: --format $f differs from tests/golden/report/$demo.$ext"; }
      fi
    fi
  done
done
echo "the three demos' reports match their golden files in 6 formats"

# no column cut: the long names appear whole (test_report.c checks the widths)
for w in 'disagree_strict_legacy' 'spatialgrid' ; do grep -qw "$w" "$WORK/demo.txt" || fail "'$w' is cut"; done
for w in 'soft_vqa_accuracy_std' 'share_correct_metric_low' 'example_wrong_metric_high'; do
  grep -qw "$w" "$WORK/vqa-demo.txt" || fail "'$w' is cut"
done
grep -qw 'mtbench101-opencompass' "$WORK/mtbench101-demo.txt" || fail "a parser's name is cut"

# 4 ranks: the same report
if command -v mpirun > /dev/null; then
  run_demo jobs/demo.json "$WORK/demo4.h5" 4
  for f in text json html; do
    "$TALLY_BIN" report "$WORK/demo.h5" --format $f > "$WORK/r1.$f"
    "$TALLY_BIN" report "$WORK/demo4.h5" --format $f > "$WORK/r4.$f"
    cmp "$WORK/r1.$f" "$WORK/r4.$f" || { diff "$WORK/r1.$f" "$WORK/r4.$f" | head -20; fail "the report of 4 ranks' file differs (--format $f)"; }
  done
  echo "the report of a file written on 4 ranks equals the one of 1"
else
  echo "no mpirun: the 4-rank check skipped"
fi

# -o: the same bytes as stdout, whole; never over the run file
"$TALLY_BIN" report "$WORK/demo.h5" --format md -o "$WORK/out.md" || fail "-o failed"
"$TALLY_BIN" report "$WORK/demo.h5" --format md | cmp - "$WORK/out.md" || fail "-o wrote other bytes than stdout"
set +e
"$TALLY_BIN" report "$WORK/demo.h5" -o "$WORK/demo.h5" 2> "$WORK/err"
rc=$?
set -e
[ $rc = 2 ] || fail "-o over the run file: exit $rc, want 2"
"$TALLY_BIN" report "$WORK/demo.h5" --format text > /dev/null || fail "the run file was harmed by the refused -o"

# not a run file: exit 3 naming it
printf 'not hdf5\n' > "$WORK/junk.h5"
for bad in "$WORK/junk.h5" "$WORK/absent.h5" "$WORK"; do
  set +e
  "$TALLY_BIN" report "$bad" > "$WORK/out" 2> "$WORK/err"
  rc=$?
  set -e
  [ $rc = 3 ] || fail "report of $bad: exit $rc, want 3"
  grep -qF "$bad" "$WORK/err" || { cat "$WORK/err"; fail "the message does not name $bad"; }
  [ ! -s "$WORK/out" ] || fail "a refused file printed a report"
done
set +e
"$TALLY_BIN" report "$WORK/demo.h5" --format pdf > /dev/null 2> "$WORK/err"
rc=$?
set -e
[ $rc = 2 ] || fail "--format pdf: exit $rc, want 2"
echo "refusals: exit 3 naming a file that is not a run file; exit 2 for -o over the input and an unknown format"

# the HTML report of each demo as a person sees it: headless Chromium opens it with no console
# error, every chart drawn and non-empty (tools/chromium-check.sh), a screenshot kept in $WORK
for demo in demo mtbench101-demo vqa-demo; do
  "$TALLY_BIN" report "$WORK/$demo.h5" --format html -o "$WORK/$demo.html" || fail "the HTML report of $demo failed"
  n=$(grep -c '<svg' "$WORK/$demo.html" || true)
  [ "$n" -ge 1 ] || fail "the HTML report of $demo has no chart"
  set +e
  bash "$TALLY_SRC/tools/chromium-check.sh" "$WORK/$demo.html" "$WORK/$demo.png" > "$WORK/chk.out" 2>&1
  rc=$?
  set -e
  if [ $rc = 77 ]; then echo "no Chromium: the browser check of the HTML reports skipped"; break; fi
  [ $rc = 0 ] || { cat "$WORK/chk.out"; fail "the HTML report of $demo fails in Chromium"; }
  grep -q "^chromium-check: $n of $n svg drawn, 0 errors" "$WORK/chk.out" || { cat "$WORK/chk.out"; fail "$demo: not every chart drawn"; }
  [ -s "$WORK/$demo.png" ] || fail "no screenshot of $demo"
  cat "$WORK/chk.out"
done

# --json of run and compare: the report's schema; run's equals `tally report --format json`
"$TALLY_BIN" run jobs/vqa-demo.json --out "$WORK/vj.h5" --quiet --json > "$WORK/run.json" 2> /dev/null || fail "run --json failed"
"$TALLY_BIN" report "$WORK/vj.h5" --format json | cmp - "$WORK/run.json" || fail "run --json differs from report --format json"
"$TALLY_BIN" compare "$WORK/demo.h5" --models toy-llm-b,toy-vlm-a --json > "$WORK/cmp.json" || fail "compare --json failed"
grep -q '"schema":	"tally-report/1"' "$WORK/cmp.json" || fail "compare --json lacks the schema"
grep -q '"kind":	"forest"' "$WORK/cmp.json" || fail "compare --json lacks its forest chart"
"$TALLY_BIN" compare "$WORK/demo.h5" --models toy-llm-b,toy-vlm-a | grep '^all ' | awk '{print $5}' > "$WORK/diff.txt"
grep -qe "\"value\":	$(sed 's/^+//; s/0*$//' "$WORK/diff.txt")" "$WORK/cmp.json" || fail "compare --json's diff differs from the text's ($(cat "$WORK/diff.txt"))"
echo "run --json and compare --json give the report's JSON"

# LaTeX compiles
if command -v pdflatex > /dev/null; then
  for demo in demo mtbench101-demo vqa-demo; do # the reports as printed (the golden files are masked)
    "$TALLY_BIN" report "$WORK/$demo.h5" --format latex > "$WORK/tex-$demo.tex"
    (cd "$WORK" && pdflatex -interaction=nonstopmode -halt-on-error "tex-$demo.tex" > latex.log 2>&1) ||
      { grep -A5 '^!' "$WORK/latex.log" | head -30; fail "the LaTeX report of $demo does not compile"; }
    [ -s "$WORK/tex-$demo.pdf" ] || fail "pdflatex wrote no PDF of $demo"
  done
  echo "the LaTeX reports compile"
else
  echo "no pdflatex: the LaTeX compile check skipped"
fi
echo "ok"
