#!/usr/bin/env bash
# Session 16, device call 8 (H200): build (sm_90a); split-K ranks of at least 4 k-tiles (kSimtSplitMinKTiles):
# the matmul test files (bench/gpu_check.sh test-matmul, no `large`), then the small float32 lab at 256^3.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
l=$(left)
echo "=== test-matmul (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 60 )) timeout -k 5 $(( l - 55 )) \
  bash "$REPO/bench/gpu_check.sh" test-matmul 2>&1 | grep -E "passed|failed|FAILED|ERROR|Timeout" | tail -8 | cut -c1-300
echo "=== f32 lab ($(left)s left)"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout -k 5 $(( $(left) - 5 )) python3 "$REPO/bench/lab/matmul_small_s4_lab.py" "f32w HIGHEST 256^3" 2>&1 \
  | tee "$OUT/f32.log" | grep -E "^\||Error|FAILED"
