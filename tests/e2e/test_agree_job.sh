#!/usr/bin/env bash
# A job study's "agreement" keys (src/core/run/job.c): each mistake is an invalid job (exit 2,
# nothing run) with a message naming the key; a valid one runs.
. "$(dirname "$0")/common.sh"
printf 'id,judge,human,metric\n1,1,1,0.1\n2,2,3,0.5\n3,3,3,0.9\n4,1,2,0.2\n5,2,2,0.4\n' > "$WORK/t.csv"
job() {
  printf '{"name": "j", "output": "o.h5", "studies": [{"name": "s", "input": "t.csv", "human": "human", "metrics": ["metric"], %s}]}\n' "$1" > "$WORK/job.json"
}
check_bad() { # KEYS MESSAGE
  job "$1"
  set +e
  (cd "$WORK" && "$TALLY_BIN" run job.json --quiet > /dev/null 2> err.txt)
  local rc=$?
  set -e
  [ $rc -eq 2 ] && grep -qF "$2" "$WORK/err.txt" || { cat "$WORK/err.txt"; fail "job with $1: rc $rc, want 2 and '$2'"; }
  [ ! -e "$WORK/o.h5" ] || fail "job with $1 wrote its output"
}
check_bad '"agreement": [["judge"]]' 'studies[0].agreement[0]: needs two columns or more'
check_bad '"agreement": "judge,human"' '"agreement" must be a non-empty list of column lists'
check_bad '"agreement": [["judge", 3]]' 'studies[0].agreement[0]: entries must be non-empty column names'
check_bad '"agreement": [["judge", "human"]], "agreement_scale": "ratio"' '"agreement_scale" must be "nominal", "ordinal" or "interval"'
check_bad '"agreement_cluster": "id"' '"agreement_scale" and "agreement_cluster" go with "agreement"'
check_bad '"agreement": [["judge", "human"]], "agreement_cluster": ""' '"agreement_cluster" must be a column name'
check_bad '"agreements": [["judge", "human"]]' 'agreements'
job '"agreement": [["judge", "human"]], "agreement_scale": "ordinal", "agreement_cluster": "id"'
(cd "$WORK" && "$TALLY_BIN" run job.json --quiet > out.txt 2> err.txt) || { cat "$WORK/err.txt"; fail "a valid agreement job failed"; }
echo "e2e agree job: ok"
