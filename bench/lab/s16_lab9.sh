#!/usr/bin/env bash
# Session 16, device call 9 (H200): build (sm_90a); split-K ranks and groups no longer read the k-tile after their
# last: the small float32 lab, the benchmark (bench/gpu_check.sh bench), the matmul test files (no `large`).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== f32 lab ($(left)s left)"
timeout -k 5 120 python3 "$REPO/bench/lab/matmul_small_s4_lab.py" "f32w" 2>&1 | tee "$OUT/f32.log" \
  | grep -E "^\||Error|FAILED" | grep -vE "\| (w4|w8|g2|w1g2|w4g2|w8g2) \|"
l=$(left)
echo "=== bench (${l}s left)"
OUT=$OUT timeout -k 5 200 bash "$REPO/bench/gpu_check.sh" bench 2>&1 | grep -E "geomean|exit" | head -12
l=$(left)
echo "=== test-matmul (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 12 )) timeout -k 5 $(( l - 6 )) \
  bash "$REPO/bench/gpu_check.sh" test-matmul 2>&1 | grep -E "passed|failed|FAILED|ERROR|Timeout" | tail -8 | cut -c1-300
