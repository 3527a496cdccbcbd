#!/usr/bin/env bash
# The GPU part of tools/gpu-check.sh: built with nvcc, every CUDA kernel is compared with its
# CPU reference on random and tie-heavy studies ("gpu vs cpu: N values compared, 0 differ"), and
# the benchmark's GPU values equal the CPU's. Skipped (77) where it cannot check that: no nvcc,
# no Random123 headers, or no usable CUDA device. The CPU part is e2e_test_gpu_check.
. "$(dirname "$0")/common.sh"
command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "skipped: no nvcc (the CUDA kernels cannot be built here)"; exit 77; }
command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q '^GPU ' ||
  { echo "skipped: no GPU (nvidia-smi lists none)"; exit 77; }
rc=0
BUILD_DIR="$WORK/gpucheck" bash "$TALLY_SRC/tools/gpu-check.sh" --quick > "$WORK/out.txt" 2>&1 || rc=$?
cat "$WORK/out.txt"
if grep -q "^gpu-check: Random123 headers not found" "$WORK/out.txt"; then
  echo "skipped: no Random123 headers (set R123_INCLUDE)"; exit 77
fi
if grep -q "^cuda: built, but no usable device here" "$WORK/out.txt"; then
  echo "skipped: the CUDA build found no usable device"; exit 77
fi
[ "$rc" = 0 ] || fail "tools/gpu-check.sh --quick: exit $rc"
grep -q "^cuda: not built" "$WORK/out.txt" && fail "nvcc is here but the kernels were not built"
grep -Eq "^gpu vs cpu: [1-9][0-9]* values compared, 0 differ$" "$WORK/out.txt" ||
  fail "the kernels were not compared with their CPU reference, or some differ"
grep -Eq "^bench: gpu .* values bit-identical$" "$WORK/out.txt" || fail "the benchmark's GPU values were not checked"
echo "e2e gpu_check_device: every kernel equals its CPU reference"
