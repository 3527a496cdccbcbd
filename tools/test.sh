#!/usr/bin/env bash
# Installs what tally needs (Debian 12, as root), builds with warnings as errors, and runs the
# whole test suite with ctest. Tests that read ../shared/data skip with a message when it is
# absent. Extra arguments go to ctest (e.g. -R legacy).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -S . -B build -DTALLY_WERROR=ON > build.log 2>&1 || { cat build.log; exit 1; }
grep -E "^-- tally:" build.log || true
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -80 build.log; exit 1; }
cd build
ctest --output-on-failure "$@"
