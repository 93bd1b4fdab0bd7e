#!/usr/bin/env bash
# Session 31, call 12 (H200): build; tests/test_softmax_long.py + tests/test_norms.py on the final defaults; the
# benchmark (bench/gpu_check.sh bench). Logs and results under $OUT.
#   bash bench/lab/s31_call12.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
norm_long_tests 150
echo "=== bench ($(left)s left)"
cd "$REPO" && OUT=$OUT bash bench/gpu_check.sh bench 2>&1 | grep -E "timed|exit"
