#!/usr/bin/env bash
# Installs what tally needs (Debian 12, as root), builds with warnings as errors, and runs the
# whole test suite with ctest. Tests that read ../shared/data skip with a message when it is
# absent. Extra arguments go to ctest (e.g. -R legacy), in both stages.
#
# Stages, one line each in the log:
#   0. build-core/: the core tier alone (-DTALLY_CORE_ONLY=ON: no MPI, HDF5, curl or CUDA found
#      or linked) and its unit tests, after a check that no core source names their headers;
#   1. build/ with -Werror (gcc, with the CUDA kernels when nvcc is found), then ctest there;
#   llama: tools/llama-build.sh builds llama.cpp's llama-server (CPU) from
#      ../shared/vendor/llama.cpp-*.tar.xz into build-llama/ once (10-13 minutes on 2 cores; a
#      no-op when up to date) for the e2e_test_llama_* tests of both ctest stages; without the
#      tarball it says "skipped" and those tests skip (77);
#   2. build-sanitize/ with clang, ASan+UBSan (-fno-sanitize-recover: any report fails) and the
#      libFuzzer targets (tests/fuzz), then the whole ctest suite there, which adds the bounded
#      fuzz runs and the sanitizer_reports check. CPU-only: nvcc rejects -fsanitize.
# A failing ctest stage does not stop the next one; the script fails at the end if any did.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$SECONDS
stage() { printf 'test.sh: %-46s %s\n' "$1" "$2"; }
took() { echo "$(( SECONDS - $1 ))s"; }

t=$SECONDS
tools/install-deps.sh
stage "install-deps" "ok ($(took $t))"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=()

# ---- llama-server for the real-server tests (build-llama/; exit 77: no tarball, skipped) ----
t=$SECONDS
mkdir -p build
rc=0; tools/llama-build.sh > build/llama-build.log 2>&1 || rc=$?
case $rc in
  0) stage "llama-server build-llama/ (real-server tests)" "ok ($(tail -1 build/llama-build.log | sed 's/^llama-build: //'), $(took $t))" ;;
  77) stage "llama-server build-llama/ (real-server tests)" "skipped (no ../shared/vendor/llama.cpp-*.tar.xz: e2e_test_llama_* skip)" ;;
  *) cat build/llama-build.log
     stage "llama-server build-llama/ (real-server tests)" "FAILED ($(took $t); e2e_test_llama_* will skip)"
     failed+=("tools/llama-build.sh") ;;
esac

# ---- stage 0: core alone (build-core/) ----
t=$SECONDS
if grep -rnE '#include *[<"](mpi|hdf5|H5[A-Za-z]*|curl/|cuda|cuda_runtime)[^>"]*[>"]' src/core include/tally; then
  stage "0 core names an MPI/HDF5/curl/CUDA header" "FAILED"; exit 1
fi
mkdir -p build-core
cmake -S . -B build-core -DTALLY_CORE_ONLY=ON -DTALLY_WERROR=ON > build-core/build.log 2>&1 &&
  cmake --build build-core -j"$(nproc)" >> build-core/build.log 2>&1 ||
  { tail -80 build-core/build.log; stage "0 build build-core/ (core alone)" "FAILED"; exit 1; }
if (cd build-core && ctest --output-on-failure "$@" > ctest.log 2>&1); then
  stage "0 core alone: build and unit tests" "ok ($(took $t))"
else
  cat build-core/ctest.log
  stage "0 core alone: unit tests" "FAILED ($(took $t))"
  failed+=("ctest build-core/")
fi

# ---- stage 1: the -Werror build and its tests (build/) ----
t=$SECONDS
cmake -S . -B build -DTALLY_WERROR=ON > build.log 2>&1 ||
  { cat build.log; stage "1 configure build/ (-Werror)" "FAILED"; exit 1; }
grep -E "^-- tally:" build.log || true
cmake --build build -j"$(nproc)" >> build.log 2>&1 ||
  { tail -80 build.log; stage "1 build build/ (-Werror)" "FAILED (log: build.log)"; exit 1; }
stage "1 build build/ (-Werror)" "ok ($(took $t))"
t=$SECONDS
if (cd build && ctest --output-on-failure "$@"); then
  stage "1 ctest build/" "ok ($(took $t))"
else
  stage "1 ctest build/" "FAILED ($(took $t))"
  failed+=("ctest build/")
fi

# ---- stage 2: ASan+UBSan and the fuzz targets (build-sanitize/, clang) ----
S=build-sanitize
mkdir -p "$S"
t=$SECONDS
CC=clang cmake -S . -B "$S" -DTALLY_SANITIZE=ON -DTALLY_FUZZ=ON > "$S/build.log" 2>&1 ||
  { cat "$S/build.log"; stage "2 configure $S/ (clang, ASan+UBSan)" "FAILED"; exit 1; }
grep -E "^-- tally:" "$S/build.log" || true
cmake --build "$S" -j"$(nproc)" >> "$S/build.log" 2>&1 ||
  { tail -80 "$S/build.log"; stage "2 build $S/ (clang, ASan+UBSan)" "FAILED (log: $S/build.log)"; exit 1; }
stage "2 build $S/ (clang, ASan+UBSan)" "ok ($(took $t))"
# ASan needs its shadow memory where the kernel may have put a mapping (vm.mmap_rnd_bits > 28):
# then the sanitizer tests run without address-space randomisation.
RUN=()
printf 'int main(void) { return 0; }\n' > "$S/asan_probe.c"
clang -fsanitize=address "$S/asan_probe.c" -o "$S/asan_probe" 2> /dev/null
if ! "$S/asan_probe" > /dev/null 2>&1 && setarch "$(uname -m)" -R "$S/asan_probe" > /dev/null 2>&1; then
  RUN=(setarch "$(uname -m)" -R)
  stage "2 ASan" "needs ASLR off here: running under setarch -R"
fi
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && command -v llvm-symbolizer > /dev/null; then
  export ASAN_SYMBOLIZER_PATH="$(command -v llvm-symbolizer)" # file:line in the stacks
fi
t=$SECONDS
if (cd "$S" && "${RUN[@]}" ctest --output-on-failure "$@"); then
  stage "2 ctest $S/ (ASan+UBSan, fuzz)" "ok ($(took $t))"
else
  stage "2 ctest $S/ (ASan+UBSan, fuzz)" "FAILED ($(took $t))"
  failed+=("ctest $S/")
fi

if [ "${#failed[@]}" -gt 0 ]; then
  stage "total" "FAILED: ${failed[*]} ($(took $T0))"
  exit 1
fi
stage "total" "ok ($(took $T0))"
