#!/usr/bin/env bash
# One code path for `tally run`'s summary and `tally report` (issue 33): for the MT-Bench-101,
# VQA and SpatialEval demos, the benchmark's part of the run's summary (after its first line about
# the run) holds the lines of the benchmark's section of `tally report RUN.h5 --format text`, in
# the same order (blank lines aside; SpatialEval's parse statuses, which stay the module's own,
# after them). Names are never cut there: test_report.c checks the renderer's widths.
source "$(dirname "$0")/common.sh"
cd "$TALLY_SRC" # the inputs' paths are relative to the working folder

for pair in mtbench101-demo:mtbench101 vqa-demo:vqa demo:spatialeval; do
  job=${pair%%:*} bench=${pair##*:}
  "$TALLY_BIN" run "jobs/$job.json" --out "$WORK/$job.h5" --quiet > "$WORK/$job.run" 2> "$WORK/$job.err" ||
    { cat "$WORK/$job.err"; fail "tally run jobs/$job.json failed"; }
  "$TALLY_BIN" report "$WORK/$job.h5" --format text > "$WORK/$job.rep" || fail "tally report of $job failed"
  # the report's section "benchmark NAME": from its underline to the next section heading
  awk -v h="benchmark $bench" '
    on && prev != "" && $0 ~ /^-+$/ { done = 1; exit } # the next heading: prev is its title
    on && prev != "" { print prev }
    on { prev = $0 }
    !on && $0 == h { on = 1; getline; prev = "" }
    END { if (!done && prev != "") print prev }' "$WORK/$job.rep" | grep -v '^$' > "$WORK/$job.sec"
  [ "$(wc -l < "$WORK/$job.sec")" -gt 10 ] || { cat "$WORK/$job.rep"; fail "$job: no section 'benchmark $bench' in the report"; }
  # the summary's part: from the line after the module's first line, as many non-blank lines
  awk -v b="$bench" 'on { print } index($0, b ":") == 1 { on = 1 }' "$WORK/$job.run" | grep -v '^$' |
    head -n "$(wc -l < "$WORK/$job.sec")" > "$WORK/$job.sum"
  diff -u "$WORK/$job.sec" "$WORK/$job.sum" > "$WORK/diff" ||
    { head -40 "$WORK/diff"; fail "$job: the summary and the report's section differ"; }
  echo "$job: the summary's $(wc -l < "$WORK/$job.sum") lines are the report's section"
done
