#!/usr/bin/env bash
# Session 8, fourth device call (~520 s): build (sm_90a); the test suite without the matmul files
# (bench/gpu_check.sh test-rest); the benchmark (bench/gpu_check.sh bench). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
l=$(left)
echo "=== test-rest (${l}s left)"
OUT=$OUT JK_TEST_TIMEOUT=$(( l - 175 )) JK_LARGE_TEST_TIMEOUT=45 timeout -k 5 $(( l - 120 )) \
  bash "$REPO/bench/gpu_check.sh" test-rest 2>&1 | grep -E "passed|failed|FAILED|ERROR|exit" | tail -12 | cut -c1-300
l=$(left)
echo "=== bench (${l}s left)"
OUT=$OUT timeout -k 5 $(( l - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | grep -E "geomean|exit" | head -12
