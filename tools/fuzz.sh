#!/usr/bin/env bash
# Runs one libFuzzer target for a long time (default 600 s):
#   tools/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]
#   tools/fuzz.sh fuzz_se_strict 1800 -max_len=65536     # long responses (quadratic cases)
#   tools/fuzz.sh fuzz_jsonl 0 tests/fuzz/regress/fuzz_jsonl/crash-1234   # replay one input
#   tools/fuzz.sh --list                                 # the targets, one a line
# The targets are those of tests/fuzz/targets.txt (TARGET SOURCE CORPUS [DEFINITION...] a line),
# the list tests/fuzz/CMakeLists.txt builds them from. Builds the target first in build-sanitize
# (clang, ASan+UBSan: the build dir of the sanitizer stage of tools/test.sh; FUZZ_BUILD_DIR=DIR
# for another; FUZZ_MAKE_JOBS=N compiles with N jobs, default all cores). The corpus grows in
# BUILD/fuzz/TARGET/corpus, seeded from tests/fuzz/corpus/CORPUS (the tree is never written);
# crashes, leaks and slow inputs (over 5 s) land in BUILD/fuzz/TARGET/artifacts/: copy each
# into tests/fuzz/regress/TARGET/, where the ctest entry replays it. With SECONDS = 0 the
# remaining arguments are input files to replay once. FUZZ_JOBS=N runs N processes at once.
set -euo pipefail
cd "$(dirname "$0")/.."
LIST=tests/fuzz/targets.txt
# targets.txt, its blank and comment lines left out: "TARGET SOURCE CORPUS [DEFINITION...]"
fuzz_targets() {
  local name src corpus rest
  while read -r name src corpus rest; do
    case "$name" in '' | '#'*) continue ;; esac
    [ -n "$corpus" ] || { echo "tools/fuzz.sh: $LIST: '$name $src': want TARGET SOURCE CORPUS" >&2; return 1; }
    echo "$name $corpus"
  done < "$LIST"
}
usage="usage: tools/fuzz.sh TARGET [SECONDS] [libFuzzer flags...] | tools/fuzz.sh --list"
target="${1:?$usage}"
if [ "$target" = --list ]; then
  fuzz_targets | cut -d' ' -f1
  exit 0
fi
secs="${2:-600}"
shift $(( $# >= 2 ? 2 : 1 ))
corpus="$(fuzz_targets | awk -v t="$target" '$1 == t { print $2 }')"
[ -n "$corpus" ] || { echo "tools/fuzz.sh: unknown target '$target' (tools/fuzz.sh --list: $(fuzz_targets | cut -d' ' -f1 | tr '\n' ' '))" >&2; exit 2; }
B="${FUZZ_BUILD_DIR:-build-sanitize}"
command -v clang > /dev/null || tools/install-deps.sh
mkdir -p "$B"
CC=clang cmake -S . -B "$B" -DTALLY_SANITIZE=ON -DTALLY_FUZZ=ON > "$B/fuzz-build.log" 2>&1 ||
  { cat "$B/fuzz-build.log"; exit 1; }
cmake --build "$B" -j"${FUZZ_MAKE_JOBS:-$(nproc)}" --target "$target" >> "$B/fuzz-build.log" 2>&1 ||
  { tail -60 "$B/fuzz-build.log"; exit 1; }
bin="$B/tests/fuzz/$target"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1"
FLAGS=(-timeout=5 -rss_limit_mb=2048 -print_final_stats=1)
if [ "$secs" = 0 ]; then
  exec "$bin" "${FLAGS[@]}" "$@"
fi
W="$B/fuzz/$target"
mkdir -p "$W/corpus" "$W/artifacts"
cp -rn "tests/fuzz/corpus/$corpus"/. "$W/corpus/"
jobs=()
[ "${FUZZ_JOBS:-1}" -gt 1 ] && jobs=(-fork="$FUZZ_JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
echo "fuzz: $target for ${secs}s; corpus $W/corpus, findings in $W/artifacts/"
rc=0
"$bin" "${FLAGS[@]}" "${jobs[@]}" -max_total_time="$secs" -artifact_prefix="$W/artifacts/" "$@" "$W/corpus" || rc=$?
n=$(ls -A "$W/artifacts" | wc -l)
echo "fuzz: $target exit $rc; $n finding(s) in $W/artifacts/"
[ "$n" = 0 ] && [ "$rc" = 0 ]
