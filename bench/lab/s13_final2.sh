#!/usr/bin/env bash
# Session 13, final call 2 (~590 s): build (sm_90a); the benchmark (bench/gpu_check.sh bench); the matmul test
# files (bench/gpu_check.sh test-matmul, no `large`); then the `large` tests of every file with the time left.
# Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-588}
l=$(left)
echo "=== bench (${l}s left)"
OUT=$OUT timeout -k 5 200 bash "$REPO/bench/gpu_check.sh" bench 2>&1 | grep -E "geomean|exit" | head -12
l=$(left)
echo "=== test-matmul (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 100 )) timeout -k 5 $(( l - 95 )) \
  bash "$REPO/bench/gpu_check.sh" test-matmul 2>&1 | grep -E "passed|failed|FAILED|ERROR|Timeout" | tail -8 | cut -c1-300
cp "$OUT/tests.log" "$OUT/tests_matmul.log" 2>/dev/null
l=$(left)
echo "=== large tests (${l}s left)"
JK_LARGE_TESTS=1 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) python3 -m pytest -q -p no:cacheprovider \
  -o addopts= -m large "$REPO/tests" >"$OUT/tests_large.log" 2>&1
echo "large rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_large.log" | tail -8 | cut -c1-300
