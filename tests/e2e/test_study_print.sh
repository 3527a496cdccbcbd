#!/usr/bin/env bash
# The printed study tables (issue 33: "columns fit their contents; nothing is cut"; one code
# path for what `tally run` prints and what `tally report` shows), on the VQA demo whose metric
# names (soft_vqa_accuracy) are longer than the old fixed columns:
#  - every row of the comparisons, summary, system-level, by-group and agreement tables that
#    `tally run` prints splits into exactly its header's columns at runs of 2+ spaces (no two
#    cells run together, none cut), and the long names are printed whole;
#  - the rows `tally run` printed equal the rows `tally report` shows from the file it wrote
#    (the report's group column taken off): the same builders (src/report/study.c) print both.
. "$(dirname "$0")/common.sh"
JOB="$TALLY_SRC/jobs/vqa-demo.json"
"$TALLY_BIN" run "$JOB" --out "$WORK/r.h5" --quiet > "$WORK/run.txt" 2> "$WORK/run.err" || { cat "$WORK/run.err"; fail "tally run failed"; }
"$TALLY_BIN" report "$WORK/r.h5" > "$WORK/rep.txt" || fail "tally report failed"

# rows BLOCK FILE START: the rows of the first table after the line matching START (in the part
# of FILE from the line matching BLOCK): the lines after its dashed rule up to the first line
# that is not a row (blank, less indented, or the text or header that follows), leading
# spaces off, cells joined by '|'
rows() {
  awk -v blk="$2" -v start="$3" '
    !inblk && index($0, blk) == 1 { inblk = 1; next }
    inblk && !seen && index($0, start) { seen = 1; next }
    seen && !rule && $0 ~ /^ *-+(  -+)*$/ { rule = 1; match($0, /^ */); ind = RLENGTH; next }
    rule { match($0, /^ */); if ($0 == "" || RLENGTH < ind || $0 ~ /^ *(p_holm|note|COMPAT|comparisons|system level|metric  |confusion)/) exit
           s = $0; sub(/^ +/, "", s); gsub(/  +/, "|", s); print s }' "$1"
}
# header BLOCK FILE START: the header row of that table, the same way
header() {
  awk -v blk="$2" -v start="$3" '
    !inblk && index($0, blk) == 1 { inblk = 1; next }
    inblk && !seen && index($0, start) { seen = 1; next }
    seen && $0 ~ /^ *-+(  -+)*$/ { sub(/^ */, "", prev); gsub(/  +/, "|", prev); print prev; exit }
    { prev = $0 }' "$1"
}
# check_cols BLOCK START: the table has rows, each with as many cells as its header
check_cols() {
  local h n
  h=$(header "$WORK/run.txt" "$1" "$2")
  n=$(awk -F'|' '{print NF}' <<< "$h")
  [ -n "$h" ] && [ "$n" -ge 2 ] || { cat "$WORK/run.txt"; fail "no table after '$2' in $1"; }
  rows "$WORK/run.txt" "$1" "$2" > "$WORK/rows.txt"
  [ -s "$WORK/rows.txt" ] || fail "no rows after '$2'"
  awk -F'|' -v n="$n" 'NF != n { print "row with " NF " cells, want " n ": " $0; bad = 1 } END { exit bad }' "$WORK/rows.txt" ||
    fail "a row of the table after '$2' does not fit its $n columns"
}
A="study 'vqa_metrics_vs_human' "
M="study 'vqa_metrics_vs_human_by_model' "
check_cols "$A" "all: n = 56 items"              # the summary
check_cols "$A" "  comparisons (paired"          # p_boot ... mde80
check_cols "$A" "  system level (model means"    # the systems' means
check_cols "$A" "lave_score vs human: n = 56"    # the agreement
check_cols "$A" "confusion (rows lave_score"
check_cols "$M" "model=demo-vlm-b: n = 27 items"
check_cols "$M" "spearman x 100, by group:"
header "$WORK/run.txt" "$A" "  comparisons (paired" | grep -qx 'a|b|statistic|delta \[CI\]|p_boot|p_williams|p_perm|p_holm|p_bh|mde80' ||
  fail "the comparisons header is not a|b|statistic|delta [CI]|p_boot|p_williams|p_perm|p_holm|p_bh|mde80"
header "$WORK/run.txt" "$A" "  system level (model means" | grep -qx 'model|human|vqa_accuracy|soft_vqa_accuracy|exact_match|lave_score' ||
  fail "a metric name is cut in the system-level header"
rows "$WORK/run.txt" "$A" "  comparisons (paired" | grep -qx 'soft_vqa_accuracy|exact_match|spearman|0.3483 \[0.0817, 0.6955\]|0.017|0.0114|0.042|0.051|0.0255|0.4323' ||
  fail "the soft_vqa_accuracy - exact_match row is not printed whole"
rows "$WORK/run.txt" "$A" "  comparisons (paired" | grep -q '^exact_match|lave_score|spearman|-0.6780 \[-1.0150, -0.3120\]|<0.0005|' ||
  fail "a p_boot of 0 is not printed as <1/B (B = 2000)"

# same RUN_BLOCK RUN_START REP_BLOCK REP_START DROP: run's rows equal the report's (DROP: the
# report's leading group column taken off)
same() {
  rows "$WORK/run.txt" "$1" "$2" > "$WORK/a.txt"
  rows "$WORK/rep.txt" "$3" "$4" | cut -d'|' -f$(( $5 + 1 ))- > "$WORK/b.txt"
  [ -s "$WORK/a.txt" ] && diff "$WORK/a.txt" "$WORK/b.txt" || fail "'$2' printed by tally run differs from tally report's '$4'"
}
same "$A" "  comparisons (paired" "study vqa_metrics_vs_human" "comparisons (paired" 1
same "$A" "all: n = 56 items" "study vqa_metrics_vs_human" "summary" 2
same "$A" "lave_score vs human: n = 56" "study vqa_metrics_vs_human" "lave_score vs human: n = 56" 0
same "$A" "confusion (rows lave_score" "study vqa_metrics_vs_human" "confusion (rows lave_score" 0
same "$M" "kendall_b x 100, by group:" "study vqa_metrics_vs_human_by_model" "kendall_b x 100, by group" 0
echo "study tables: every row fits its columns; tally run prints the rows tally report shows"
