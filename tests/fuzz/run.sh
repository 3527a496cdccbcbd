#!/usr/bin/env bash
# run.sh FUZZER CORPUS REGRESS SECONDS [libFuzzer flags...] - the ctest entry of one fuzz target.
# 1. Replays every file in REGRESS (inputs that once failed: each must now pass).
# 2. Fuzzes a copy of CORPUS (the tree is never written) for SECONDS.
# Fails on a crash, a leak, a sanitizer report, or an input slower than 5 s, and prints the
# input (base64) and the report. Extra arguments go to libFuzzer in both steps.
set -uo pipefail
bin=$1 corpus=$2 regress=$3 secs=$4
shift 4
name="$(basename "$bin")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
FLAGS=(-timeout=5 -rss_limit_mb=2048 -print_final_stats=1 "$@")
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1"

show() { # LOG ARTIFACT_DIR
  tail -n 60 "$1"
  for a in "$2"/*; do
    [ -e "$a" ] || continue
    echo "---- $(basename "$a") ($(stat -c %s "$a") bytes), base64:"
    head -c 4096 "$a" | base64 -w 100
  done
}

if [ -d "$regress" ] && [ -n "$(ls -A "$regress" 2>/dev/null)" ]; then
  n=$(ls -A "$regress" | wc -l)
  rc=0
  "$bin" "${FLAGS[@]}" "$regress"/* > "$work/replay.log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    tail -n 80 "$work/replay.log"
    echo "FAIL: $name: a regression input of $regress fails again (exit $rc)"
    exit 1
  fi
  echo "$name: $n regression input(s) pass"
fi

mkdir -p "$work/corpus" "$work/artifacts"
cp -r "$corpus"/. "$work/corpus/"
rc=0
"$bin" "${FLAGS[@]}" -max_total_time="$secs" -artifact_prefix="$work/artifacts/" \
  "$work/corpus" > "$work/fuzz.log" 2>&1 || rc=$?
if [ "$rc" != 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  show "$work/fuzz.log" "$work/artifacts"
  echo "FAIL: $name found an input that crashes, leaks or is slow (exit $rc): save it under"
  echo "      tests/fuzz/regress/$name/ and run tools/fuzz.sh $name to reproduce"
  exit 1
fi
stats="$(grep -E '^stat::(number_of_executed_units|slowest_unit_time_sec|peak_rss_mb)' "$work/fuzz.log" |
  sed 's/^stat:://; s/: */=/' | tr '\n' ' ')"
echo "$name: ${secs}s of fuzzing found nothing ($stats)"
