#!/usr/bin/env bash
# Session 31, call 12 (H200): build; tests/test_softmax_long.py + tests/test_norms.py on the final defaults; the
# benchmark (bench/gpu_check.sh bench). Logs and results under $OUT.
#   bash bench/lab/s31_call12.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider -o addopts= -x -n 16 \
  "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_norms.py" >"$OUT/tests_long_norms.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_long_norms.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_long_norms.log" | head
echo "=== bench ($(left)s left)"
cd "$REPO" && OUT=$OUT bash bench/gpu_check.sh bench 2>&1 | grep -E "timed|exit"
