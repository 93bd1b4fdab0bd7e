#!/usr/bin/env bash
# Session 12, device call 11 (~450 s): build (sm_90a); after the review (the cluster tiers' shape rule in one host
# helper, common/launch.h RowSpanFor; knob precedence of the softmax hybrid tier inside HybridRowsChoice; device
# code unchanged), the long-row and norm test files on the GPU. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== long-row / norm / softmax tests (${l}s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 8 )) python3 -m pytest -q -n 12 \
  -p no:cacheprovider -o addopts= -m "not large" "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_norms.py" \
  "$REPO/tests/test_softmax.py" >"$OUT/tests_check3.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Error" "$OUT/tests_check3.log" | tail -12 | cut -c1-300
true
