#!/usr/bin/env bash
# Installs what tally needs (Debian 12, as root), builds it, and runs the main job on the bundled
# demo: `tally run jobs/demo.json --force` -> out/demo.h5 (replaced when it exists) and a summary
# table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -50 build.log; exit 1; }
mkdir -p out
./build/tally run jobs/demo.json --force # the demo may be run again: it replaces its own out/demo.h5
