#!/usr/bin/env bash
# `tally compare --help` lists each registered module's compare defaults (its tl_bench_vt's
# `compare` hook: metric, by, status), generated from the registry (usage.c,
# tl_usage_compare_text), not written by hand (issue 29):
#  1. the built-in benchmarks' lines (one per module with a compare hook), with the defaults their modules declare;
#  2. with TALLY_TEST_MODULES=1 the test module test_judged registers, and its line appears
#     (without it, it does not): a module's defaults need no edit outside its folder;
#  3. the usage-error text (an unknown option) is the same generated text, in both cases.
. "$(dirname "$0")/common.sh"
T="$TALLY_BIN"

defaults() { sed -n '/^defaults of each benchmark: metric, by, status$/,/^exit codes:/p' "$1" | sed '1d;$d'; }

# ---- 1. the built-in modules ----
env -u TALLY_TEST_MODULES "$T" compare --help > "$WORK/h.txt" || fail "tally compare --help failed"
defaults "$WORK/h.txt" > "$WORK/d.txt"
[ -s "$WORK/d.txt" ] || { cat "$WORK/h.txt"; fail "1: --help has no defaults block"; }
for want in '^  spatialeval +correct_strict, task, status_strict$' \
            '^  vqa +vqa_accuracy, dataset, vqa_status$' \
            '^  mtbench101 +rating \(dialogues: the least over their turns\), task, status$' \
            '^  mcq +correct_strict, task, status_strict$' \
            '^  gen +correct_strict, task, status_strict$'; do
  grep -qE "$want" "$WORK/d.txt" || { cat "$WORK/d.txt"; fail "1: no line matching '$want'"; }
done
! grep -q "test_judged" "$WORK/d.txt" || fail "1: test_judged listed without TALLY_TEST_MODULES"
[ "$(wc -l < "$WORK/d.txt")" = 5 ] || { cat "$WORK/d.txt"; fail "1: not one line per built-in module"; }
echo "1: the five built-in modules' defaults are listed"

# ---- 2. the test module ----
TALLY_TEST_MODULES=1 "$T" compare --help > "$WORK/ht.txt" || fail "TALLY_TEST_MODULES=1 tally compare --help failed"
defaults "$WORK/ht.txt" > "$WORK/dt.txt"
grep -qE '^  test_judged +rating \(dialogues: the least over their turns\), none, status$' "$WORK/dt.txt" ||
  { cat "$WORK/dt.txt"; fail "2: test_judged's defaults are not listed with TALLY_TEST_MODULES=1"; }
[ "$(wc -l < "$WORK/dt.txt")" = 6 ] || { cat "$WORK/dt.txt"; fail "2: not one line per module"; }
echo "2: with TALLY_TEST_MODULES=1 the test module's defaults are listed too"

# ---- 3. the usage error prints the same text ----
for m in "" 1; do
  rc=0; TALLY_TEST_MODULES=$m "$T" compare --no-such-option > /dev/null 2> "$WORK/e.txt" || rc=$?
  [ "$rc" = 2 ] || fail "3: exit $rc for an unknown option"
  h="$WORK/h.txt"; [ -z "$m" ] || h="$WORK/ht.txt"
  tail -n +2 "$WORK/e.txt" | cmp -s - "$h" || fail "3: the usage error's text differs from --help (TALLY_TEST_MODULES=$m)"
done
echo "3: the usage error prints the same generated text"
echo PASS
