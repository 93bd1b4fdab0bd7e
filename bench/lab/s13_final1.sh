#!/usr/bin/env bash
# Session 13, final call 1 (~590 s): build (sm_90a); the test suite without the matmul files and without the
# `large` tests (bench/gpu_check.sh test-rest). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-588}
l=$(left)
echo "=== test-rest (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 12 )) timeout -k 5 $(( l - 6 )) \
  bash "$REPO/bench/gpu_check.sh" test-rest 2>&1 | grep -E "passed|failed|FAILED|ERROR|exit|Timeout" | tail -15 | cut -c1-300
