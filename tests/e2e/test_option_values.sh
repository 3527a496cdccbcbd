#!/usr/bin/env bash
# Impossible option values are refused with exit 2, naming the option, before any work (issue 27):
# empty paths and names, empty or repeated entries of a name list, NaN and infinite levels, empty
# sbatch fields; tally merge takes --break-lock, --force and --partial (it used to refuse the
# --break-lock its own message asks for).
. "$(dirname "$0")/common.sh"
J="$TALLY_SRC/demo/stats/vqa_judgments.csv"
refused() { # OPT-IN-MESSAGE -- command...
  local pat="$1"; shift 2
  local rc=0; "$@" > "$WORK/o.txt" 2> "$WORK/e.txt" || rc=$?
  [ "$rc" = 2 ] || { cat "$WORK/e.txt"; fail "$*: exit $rc, want 2"; }
  grep -q -- "$pat" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "$*: the message does not name $pat"; }
}
C=("$TALLY_BIN" correlate --input "$J" --human human --resamples 10)
refused --metrics -- "${C[@]}" --metrics ""
refused --metrics -- "${C[@]}" --metrics "lave,,vqa_acc"
refused --metrics -- "${C[@]}" --metrics "lave,lave"
refused --group-by -- "${C[@]}" --metrics lave --group-by ""
refused --group-by -- "${C[@]}" --metrics lave --group-by "dataset,dataset"
refused --input -- "$TALLY_BIN" correlate --input "" --human human --metrics lave
refused --human -- "$TALLY_BIN" correlate --input "$J" --human "" --metrics lave
refused --ci -- "${C[@]}" --metrics lave --ci nan
refused --ci -- "${C[@]}" --metrics lave --ci inf
refused --ci -- "${C[@]}" --metrics lave --ci 0
refused --resamples -- "${C[@]}" --metrics lave --resamples 0
refused --input -- "$TALLY_BIN" parse --parser lave-rating --input ""
refused "output path is empty" -- "$TALLY_BIN" parse --parser lave-rating --output ""
refused --time -- "$TALLY_BIN" slurm "$TALLY_SRC/jobs/demo.json" --time ""
refused --name -- "$TALLY_BIN" slurm "$TALLY_SRC/jobs/demo.json" --name ""
refused --cell -- "$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --cell -1
refused --ntasks -- "$TALLY_BIN" slurm "$TALLY_SRC/jobs/demo.json" --ntasks 0
# tally merge knows --break-lock, --force and --partial (usage errors are about something else)
for opt in --break-lock --force --partial; do
  rc=0; "$TALLY_BIN" merge "$WORK/none.h5" -o "$WORK/m.h5" $opt > /dev/null 2> "$WORK/e.txt" || rc=$?
  ! grep -q "unknown option" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "tally merge does not know $opt"; }
  grep -q "cannot open '$WORK/none.h5': No such file" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "merge of a missing file ($opt)"; }
done
echo "e2e option values: impossible values refused (exit 2); merge takes --break-lock, --force, --partial"
