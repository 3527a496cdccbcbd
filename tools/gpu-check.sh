#!/usr/bin/env bash
# gpu-check.sh - checks every CUDA kernel against its core (CPU) reference and runs the
# bootstrap benchmark; finishes in well under 5 minutes on an accelerator machine.
#
# It builds tools/gpu_check.c with the core sources it needs (plain gcc; no MPI/HDF5/cJSON, so it
# also builds on a bare CUDA image) and, when nvcc is found, src/cuda/*.cu. Without a GPU or
# without nvcc it runs the CPU part (fast exact sweep vs literal reference, CPU benchmark) and
# says so. Usage: tools/gpu-check.sh [--quick]   (--quick: B = 200 in the benchmark; CI uses it)
# Environment: R123_INCLUDE (folder holding Random123/), CUDA_ARCH (default "80;90"), BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
B="${BUILD_DIR:-build-gpucheck}"
mkdir -p "$B"
R123=""
for d in "${R123_INCLUDE:-}" /usr/include .gpu/include; do
  if [ -n "$d" ] && [ -f "$d/Random123/philox.h" ]; then R123="$d"; break; fi
done
[ -n "$R123" ] || { echo "gpu-check: Random123 headers not found (set R123_INCLUDE)"; exit 2; }
CFLAGS=(-std=c11 -O2 -Wall -Wextra -Iinclude -Isrc/core/stats "-I$R123")
CORE=(src/core/base/err.c src/core/base/str.c src/core/stats/stats.c src/core/stats/boot.c src/core/run/workshare.c)
NVCC="$(command -v nvcc || true)"
[ -n "$NVCC" ] || { [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc; } || true
if [ -n "$NVCC" ]; then
  GENCODE=()
  IFS=';' read -ra archs <<< "${CUDA_ARCH:-80;90}"
  for a in "${archs[@]}"; do GENCODE+=(-gencode "arch=compute_$a,code=sm_$a"); done
  echo "gpu-check: building with $($NVCC --version | tail -1)"
  "$NVCC" -O2 -fmad=false "${GENCODE[@]}" -Iinclude "-I$R123" -c src/cuda/boot_kernels.cu -o "$B/boot_kernels.o"
  objs=()
  for f in "${CORE[@]}"; do
    gcc "${CFLAGS[@]}" -DTALLY_HAVE_CUDA=1 -c "$f" -o "$B/$(basename "$f" .c).o"; objs+=("$B/$(basename "$f" .c).o")
  done
  gcc "${CFLAGS[@]}" -DTALLY_HAVE_CUDA=1 -c tools/gpu_check.c -o "$B/gpu_check.o"
  "$NVCC" "${GENCODE[@]}" -o "$B/gpu_check" "$B/gpu_check.o" "${objs[@]}" "$B/boot_kernels.o" -lm
else
  echo "gpu-check: nvcc not found: CPU part only"
  gcc "${CFLAGS[@]}" -o "$B/gpu_check" tools/gpu_check.c "${CORE[@]}" -lm
fi
"$B/gpu_check" "$@"
