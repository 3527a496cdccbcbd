#!/usr/bin/env bash
# The CPU part of tools/gpu-check.sh: the kernels' shared sweep checked on the host against the
# literal reference ("cpu: ... identical"), and the quick benchmark's CPU timing. It passes on
# any machine and claims nothing about a GPU: the GPU-vs-CPU comparison of every kernel is
# e2e_test_gpu_check_device (tests/e2e/test_gpu_check_device.sh), skipped (77) without one.
. "$(dirname "$0")/common.sh"
rc=0
BUILD_DIR="$WORK/gpucheck" bash "$TALLY_SRC/tools/gpu-check.sh" --quick > "$WORK/out.txt" 2>&1 || rc=$?
cat "$WORK/out.txt"
[ "$rc" = 0 ] || fail "tools/gpu-check.sh --quick: exit $rc"
grep -q "^cpu: fast path and kernel sweep (host) vs literal reference, .*: identical$" "$WORK/out.txt" ||
  fail "the host sweep was not checked against the literal reference"
grep -q "^bench: n=22050, .* cpu 1 core [0-9.]* s" "$WORK/out.txt" || fail "no CPU benchmark line"
if grep -q "^gpu vs cpu: [1-9][0-9]* values compared" "$WORK/out.txt"; then
  echo "e2e gpu_check: the CPU part passed (a GPU was found: its comparison also ran)"
else
  echo "e2e gpu_check: the CPU part passed (no GPU comparison here: see e2e_test_gpu_check_device)"
fi
