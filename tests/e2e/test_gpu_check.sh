#!/usr/bin/env bash
# The CPU part of tools/gpu-check.sh (and the CUDA build when nvcc is present): the kernels'
# shared sweep checked on the host against the literal reference, and the quick benchmark. On a
# machine with a GPU the same script also compares every kernel with its CPU reference.
. "$(dirname "$0")/common.sh"
BUILD_DIR="$WORK/gpucheck" bash "$TALLY_SRC/tools/gpu-check.sh" --quick
