#!/usr/bin/env bash
# Session 16, device call 7 (H200): build (sm_90a); the exact-float32 split-K: 32x64 tiles in two 256-thread k groups
# a CTA without a cluster (JK_MATMUL_SIMT_TILE=32 JK_MATMUL_SIMT_GROUPS=2): the split tests, the small float32 lab.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_matmul.py" \
  -k "split or simt or float32" -m "not large" >"$OUT/tests_matmul.log" 2>&1; tail -3 "$OUT/tests_matmul.log"
echo "=== f32 lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/matmul_small_s4_lab.py" "f32w" 2>&1 | tee "$OUT/f32.log" \
  | grep -E "^\||Error|FAILED"
