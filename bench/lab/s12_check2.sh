#!/usr/bin/env bash
# Session 12, device call 10 (~400 s): build (sm_90a); after RMSNorm's 16-bit cluster-kernel spill fix (commit
# 1bfc9b8), tests/test_norms.py (not `large`) on the GPU, then the long_rows sanitizer cases under memcheck.
# Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== norm tests (${l}s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 120 )) python3 -m pytest -q -n 12 \
  -p no:cacheprovider -o addopts= -m "not large" "$REPO/tests/test_norms.py" >"$OUT/tests_norms.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Error" "$OUT/tests_norms.log" | tail -8 | cut -c1-300
l=$(left)
echo "=== memcheck, long rows (${l}s left)"
JK_SANITIZE_PARTS=long_rows JK_SANITIZE_TOOLS="memcheck" JK_SANITIZE_TIMEOUT=$(( l - 110 )) \
  timeout -k 5 $(( l - 5 )) bash "$REPO/bench/gpu_check.sh" sanitize 2>&1 | tail -4
true
