#!/usr/bin/env bash
# Session 31, call 7 (H200): build; the long-row norm tests (tests/test_softmax_long.py, tests/test_norms.py); then
# s31_lean_lab.py --more over the 65536-column rows and float32 32768 (default against JK_NORM_LEAN=0 and, for
# 16-bit rows, JK_NORM_SMEM_SCALE=1). Logs under $OUT.
#   JK_TOTAL_S=590 bash bench/lab/s31_call7.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
norm_long_tests 240
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s31_lean_lab.py" --more --out "$OUT/s31_full_lab.txt" \
  --dtypes bf16,f16,f32 2>"$OUT/lab.err" | cut -c1-300
echo "lab rc=$?"; grep -E "Error|error" "$OUT/lab.err" | head -5
