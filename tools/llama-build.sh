#!/usr/bin/env bash
# Builds llama.cpp's llama-server for the CPU from the vendored source tarball
# (../shared/vendor/llama.cpp-*.tar.xz, MIT) once, into build-llama/: build-llama/bin/llama-server
# (static) and build-llama/src/gguf-py (the GGUF writer tests/e2e/llama_model.py uses). A second
# call finds the binary built from the same tarball (its SHA-256 in build-llama/stamp) and does
# nothing. About 10-13 minutes on 2 cores. Exit 77 (skipped) when the tarball is absent.
#   tools/llama-build.sh [TARBALL]
set -euo pipefail
cd "$(dirname "$0")/.."
TAR="${1:-$(ls ../shared/vendor/llama.cpp-*.tar.xz 2> /dev/null | head -1 || true)}"
[ -n "$TAR" ] && [ -f "$TAR" ] || { echo "llama-build: no ../shared/vendor/llama.cpp-*.tar.xz: skipped"; exit 77; }
OUT=build-llama
SUM=$(sha256sum "$TAR" | cut -d' ' -f1)
if [ -x "$OUT/bin/llama-server" ] && [ -d "$OUT/src/gguf-py" ] && [ "$(cat "$OUT/stamp" 2> /dev/null)" = "$SUM" ]; then
  echo "llama-build: $OUT/bin/llama-server is up to date"
  exit 0
fi
rm -rf "$OUT"
mkdir -p "$OUT/src" "$OUT/bin"
tar -xJf "$TAR" -C "$OUT/src" --strip-components=1
cmake -S "$OUT/src" -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DBUILD_SHARED_LIBS=OFF > "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; echo "llama-build: configure failed"; exit 1; }
cmake --build "$OUT/build" --target llama-server -j"$(nproc)" >> "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; echo "llama-build: build failed (log: $OUT/build.log)"; exit 1; }
cp "$OUT/build/bin/llama-server" "$OUT/bin/"
rm -rf "$OUT/build" # 300 MB of objects; the binary is static
echo "$SUM" > "$OUT/stamp"
echo "llama-build: built $OUT/bin/llama-server"
