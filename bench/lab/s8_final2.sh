#!/usr/bin/env bash
# Session 8, fifth device call (~420 s): build (sm_90a); the benchmark (bench/gpu_check.sh bench); the matmul
# test files (bench/gpu_check.sh test-matmul, the exact-float32 swizzle) and the softmax/norm files (the
# cluster tiers) with the time left. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
l=$(left)
echo "=== bench (${l}s left)"
OUT=$OUT timeout -k 5 200 bash "$REPO/bench/gpu_check.sh" bench 2>&1 | grep -E "geomean|exit" | head -12
l=$(left)
echo "=== test-matmul (${l}s left)"
OUT=$OUT JK_TEST_TIMEOUT=150 JK_LARGE_TEST_TIMEOUT=40 timeout -k 5 200 bash "$REPO/bench/gpu_check.sh" test-matmul 2>&1 \
  | grep -E "passed|failed|FAILED|ERROR|exit" | tail -8 | cut -c1-300
cp "$OUT/tests.log" "$OUT/tests_matmul.log" 2>/dev/null
l=$(left)
echo "=== softmax/norm tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 10 )) python3 -m pytest -q -n 12 -p no:cacheprovider -o addopts= \
  -m "not large" "$REPO/tests/test_softmax.py" "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_norms.py" \
  >"$OUT/tests_softmax_norms.log" 2>&1
echo "rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_softmax_norms.log" | tail -8 | cut -c1-300
